r"""The xslit dataset format: one folder of images, cameras, ground truth and a manifest.

Layout (version 1, described in ``datasets/FORMAT.md``)::

    DIR/
      manifest.json               format name and version, views, pairs, metadata, and the
                                  size and SHA-256 of every other file
      images/<view>.png           (H, W, 3) uint8 colour images
      cameras/<view>.json         the camera (``Camera.to_dict``), image size, and, when known,
                                  intrinsics and cv2 pose (rvec, tvec)
      points/<view>.npz           optional: ``points`` (H, W, 3) world hit point per pixel,
                                  NaN where the pixel sees nothing
      matches/<a>__<b>.npz        optional: ``points1`` (N, 2), ``points2`` (N, 2), ``X`` (N, 3)
                                  exact correspondences between views ``a`` and ``b``
      points.ply                  optional: a coloured ground-truth point cloud

Writing goes to a hidden temporary folder next to ``DIR`` that is renamed into place when
complete (``os.replace``), so an interrupted run leaves no half-written dataset. Loading checks
the manifest version, every file's size and checksum, the JSON, the cameras and the shapes of
the arrays, and raises ValueError naming the damaged file.
"""

from __future__ import annotations

import io
import re
import shutil
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

import numpy as np

from .._checks import check_array, check_path, check_real
from ..cameras import (
    Camera,
    PinholeCamera,
    PushbroomIntrinsics,
    TwoSlitCamera,
    TwoSlitIntrinsics,
    camera_from_dict,
    compose_camera,
)
from .files import make_temporary_dir, sha256_of_file
from .jsonio import read_json, to_jsonable, write_json
from .ply import read_ply, write_ply
from .progress import ProgressBar
from .signals import TerminationGuard

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "Correspondences",
    "Dataset",
    "DatasetWriter",
    "View",
    "intrinsics_from_dict",
    "load_dataset",
    "verify_dataset",
    "write_dataset",
]

FORMAT_NAME = "xslit-dataset"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
#: Relative tolerance when checking that stored intrinsics and pose rebuild the stored camera.
CAMERA_CONSISTENCY_TOL = 1e-6


# -- records ---------------------------------------------------------------------------
@dataclass
class View:
    """One image of a dataset with its camera and optional ground truth.

    Attributes
    ----------
    name : str
        Identifier, also the file stem (letters, digits, ``_ . -``).
    camera : Camera
    image : (H, W, 3) uint8 ndarray
    points : (H, W, 3) float ndarray or None
        World point seen by each pixel centre, NaN where the pixel sees nothing.
    intrinsics : TwoSlitIntrinsics, PushbroomIntrinsics, (3, 3) ndarray or None
        Intrinsics when known (a (3, 3) matrix ``K`` for pinhole cameras).
    pose : dict or None
        ``{"rvec": (3,), "tvec": (3,)}``, the cv2 pose that composes ``camera`` from
        ``intrinsics``.
    meta : dict
        Free-form JSON-serialisable information (e.g. the rig position).
    """

    name: str
    camera: Camera
    image: np.ndarray
    points: np.ndarray | None = None
    intrinsics: object = None
    pose: dict | None = None
    meta: dict = field(default_factory=dict)

    @property
    def image_size(self) -> tuple[int, int]:
        """``(width, height)`` as in cv2."""
        return int(self.image.shape[1]), int(self.image.shape[0])

    @property
    def mask(self) -> np.ndarray | None:
        """(H, W) bool: pixels with a ground-truth point, or None without points."""
        return None if self.points is None else np.isfinite(self.points).all(axis=2)


@dataclass
class Correspondences:
    """Exact matches between two views: ``points1[i]`` in ``view1`` and ``points2[i]`` in
    ``view2`` both see the world point ``X[i]``. Shapes (N, 2), (N, 2), (N, 3)."""

    view1: str
    view2: str
    points1: np.ndarray
    points2: np.ndarray
    X: np.ndarray

    def __len__(self) -> int:
        return len(self.X)


@dataclass
class Dataset:
    """A loaded dataset: views, correspondences, optional point cloud and metadata."""

    views: list[View]
    correspondences: list[Correspondences] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)
    point_cloud: tuple[np.ndarray, np.ndarray | None] | None = None
    path: Path | None = None

    def view(self, name: str) -> View:
        for v in self.views:
            if v.name == name:
                return v
        raise ValueError(f"name must be a view of the dataset, got {name!r}; views are "
                         f"{[v.name for v in self.views]}")

    def pair(self, name1: str, name2: str) -> Correspondences:
        """Correspondences between two views (swapped if stored the other way round)."""
        for c in self.correspondences:
            if (c.view1, c.view2) == (name1, name2):
                return c
            if (c.view1, c.view2) == (name2, name1):
                return Correspondences(name1, name2, c.points2, c.points1, c.X)
        raise ValueError(f"no correspondences between {name1!r} and {name2!r} in the dataset")


# -- intrinsics and cameras in JSON ------------------------------------------------------
def _intrinsics_to_dict(intr) -> dict | None:
    if intr is None:
        return None
    if isinstance(intr, (TwoSlitIntrinsics, PushbroomIntrinsics)):
        return intr.to_dict()
    if isinstance(intr, dict):
        return to_jsonable(intr)
    K = check_array("intrinsics", intr)
    if K.shape != (3, 3):
        raise ValueError("intrinsics must be TwoSlitIntrinsics, PushbroomIntrinsics or a (3, 3) "
                         f"pinhole matrix K, got an array of shape {K.shape}")
    return {"model": "pinhole", "K": K.tolist()}


def intrinsics_from_dict(data: dict):
    """Inverse of the ``intrinsics`` entry of a camera file.

    Returns :class:`TwoSlitIntrinsics`, :class:`PushbroomIntrinsics` or a (3, 3) ndarray ``K``.
    """
    if not isinstance(data, dict) or "model" not in data:
        raise ValueError(f"data must be a dict with a 'model' key, got {type(data).__name__}")
    model = data["model"]
    try:
        if model == "two_slit":
            return TwoSlitIntrinsics(data["K1"], data["K2"], data["theta"], data["d"])
        if model == "pushbroom":
            return PushbroomIntrinsics(data["velocity"], data["f"], data["u"])
        if model == "pinhole":
            K = check_array("K", data["K"])
            if K.shape != (3, 3) or not np.isfinite(K).all():
                raise ValueError(f"K must be a finite (3, 3) matrix, got shape {K.shape}")
            return K
    except KeyError as exc:
        raise ValueError(f"{model} intrinsics lack the key {exc.args[0]!r}") from None
    raise ValueError(f"model must be two_slit, pushbroom or pinhole, got {model!r}")


def _matrices(camera) -> list[np.ndarray]:
    if isinstance(camera, TwoSlitCamera):
        return [camera.A1, camera.A2]
    if isinstance(camera, PinholeCamera):
        return [camera.P]
    return []


def _same_up_to_scale(A, B, tol) -> bool:
    a = A / np.linalg.norm(A)
    b = B / np.linalg.norm(B)
    return min(np.abs(a - b).max(), np.abs(a + b).max()) <= tol


def _check_camera_consistency(camera, intr, pose) -> None:
    """Raise ValueError when intrinsics and pose do not compose to the stored camera."""
    rvec, tvec = pose["rvec"], pose["tvec"]
    if isinstance(intr, (TwoSlitIntrinsics, PushbroomIntrinsics)):
        rebuilt = compose_camera(intr, rvec, tvec)
    else:
        rebuilt = PinholeCamera.from_intrinsics(intr, rvec, tvec)
    kind = TwoSlitCamera if isinstance(rebuilt, TwoSlitCamera) else PinholeCamera
    if not isinstance(camera, kind):
        raise ValueError(f"intrinsics are for a {rebuilt.model} camera but the camera is "
                         f"{camera.model}")
    for A, B in zip(_matrices(camera), _matrices(rebuilt), strict=True):
        if not _same_up_to_scale(A, B, CAMERA_CONSISTENCY_TOL):
            raise ValueError("intrinsics and pose do not rebuild the stored camera matrices "
                             f"(relative difference above {CAMERA_CONSISTENCY_TOL})")


def _camera_record(view: View) -> dict:
    rec = {"camera": view.camera.to_dict(), "image_size": list(view.image_size)}
    intr = _intrinsics_to_dict(view.intrinsics)
    if intr is not None:
        rec["intrinsics"] = intr
    if view.pose is not None:
        rec["pose"] = {"rvec": np.ravel(view.pose["rvec"]).tolist(),
                       "tvec": np.ravel(view.pose["tvec"]).tolist()}
    if view.meta:
        rec["meta"] = to_jsonable(view.meta)
    return rec


def _parse_camera_record(rec, label: str):
    """Camera, image size, intrinsics, pose and meta from a camera file's JSON."""
    if not isinstance(rec, dict):
        raise ValueError(f"{label}: expected a JSON object, got {type(rec).__name__}")
    for key in ("camera", "image_size"):
        if key not in rec:
            raise ValueError(f"{label}: missing key {key!r}")
    try:
        camera = camera_from_dict(rec["camera"])
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{label}: bad camera data: {exc}") from None
    size = rec["image_size"]
    if (not isinstance(size, list) or len(size) != 2
            or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in size)):
        raise ValueError(f"{label}: image_size must be [width, height] of positive integers, "
                         f"got {size!r}")
    intr = pose = None
    if rec.get("intrinsics") is not None:
        try:
            intr = intrinsics_from_dict(rec["intrinsics"])
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{label}: bad intrinsics: {exc}") from None
    if rec.get("pose") is not None:
        p = rec["pose"]
        try:
            pose = {k: check_array(k, p[k]).reshape(3) for k in ("rvec", "tvec")}
            if not all(np.isfinite(v).all() for v in pose.values()):
                raise ValueError("rvec and tvec must be finite")
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"{label}: bad pose (needs finite 3-vectors rvec and tvec): "
                             f"{exc}") from None
    if intr is not None and pose is not None:
        try:
            _check_camera_consistency(camera, intr, pose)
        except ValueError as exc:
            raise ValueError(f"{label}: bad camera data: {exc}") from None
    meta = rec.get("meta", {})
    if not isinstance(meta, dict):
        raise ValueError(f"{label}: meta must be a JSON object, got {type(meta).__name__}")
    return camera, (size[0], size[1]), intr, pose, meta


# -- image and array files ---------------------------------------------------------------
def _write_png(path: Path, image: np.ndarray) -> None:
    import imageio.v3 as iio

    iio.imwrite(path, image, extension=".png")


def _read_png(path: Path, label: str) -> np.ndarray:
    import imageio.v3 as iio

    try:
        img = iio.imread(path, extension=".png")
    except Exception as exc:  # the PNG decoder raises many types (OSError, SyntaxError, ...)
        raise ValueError(f"{label}: cannot be decoded as a PNG image ({type(exc).__name__}: "
                         f"{exc})") from None
    return np.asarray(img)


def _write_npz(path: Path, **arrays) -> None:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    path.write_bytes(buf.getvalue())


def _read_npz(path: Path, label: str, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    try:
        data = path.read_bytes()  # np.load on a path leaks the handle of a corrupt file
    except OSError as exc:
        raise ValueError(f"{label}: cannot be read ({exc})") from None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            missing = [k for k in keys if k not in z.files]
            if missing:
                raise ValueError(f"{label}: missing arrays {missing} (has {sorted(z.files)})")
            return {k: np.asarray(z[k]) for k in keys}
    except ValueError as exc:
        if str(exc).startswith(label):
            raise
        raise ValueError(f"{label}: cannot be read as .npz ({exc})") from None
    except Exception as exc:  # zipfile.BadZipFile, EOFError, OSError on truncated files
        raise ValueError(f"{label}: cannot be read as .npz ({type(exc).__name__}: {exc})") from None


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError("name must be 1-100 characters of letters, digits, '_', '.', '-' "
                         f"starting with a letter or digit, got {name!r}")
    return name


def _check_image(image) -> np.ndarray:
    img = np.asarray(image)
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"image must be an (H, W, 3) uint8 array, got {img.dtype} {img.shape}")
    return img


# -- writer ------------------------------------------------------------------------------
class DatasetWriter:
    """Write a dataset view by view into a temporary folder, published atomically on success.

    Use as a context manager: on a normal exit the manifest is written and the folder is
    renamed to ``path``; on an exception (or :meth:`abort`) the temporary folder is removed
    and ``path`` is left as it was. Ctrl-C, SIGTERM and SIGHUP take the same path: while the
    temporary folder exists the writer holds a :class:`~xslit.io.TerminationGuard`, so a
    termination signal raises :class:`~xslit.io.Terminated` (a ``KeyboardInterrupt``) in the
    main thread and the folder is removed before the process exits. Files get the modes the
    umask gives (0644 files, 0755 folders under umask 022).

    Parameters
    ----------
    path : str or Path
        Dataset folder to create.
    metadata : dict, optional
        JSON-serialisable description (recipe, seed, scene, ...), stored in the manifest.
    overwrite : bool
        Replace an existing dataset at ``path`` (only a folder holding a ``manifest.json``,
        or an empty folder, is ever replaced).
    progress : bool or None
        Progress bar while checksumming (``None``: only on a terminal).

    Examples
    --------
    >>> import tempfile, xslit
    >>> cam = xslit.PinholeCamera.from_intrinsics([[50, 0, 4], [0, 50, 3], [0, 0, 1]])
    >>> out = Path(tempfile.mkdtemp()) / "tiny"
    >>> with DatasetWriter(out, {"recipe": "doctest"}, progress=False) as w:
    ...     w.add_view("v0", cam, np.zeros((6, 8, 3), np.uint8))
    >>> load_dataset(out).views[0].image.shape
    (6, 8, 3)
    """

    def __init__(self, path, metadata: dict | None = None, *, overwrite: bool = False,
                 progress: bool | None = None):
        self.path = Path(path)
        self.metadata = to_jsonable(dict(metadata or {}))
        self.overwrite = bool(overwrite)
        self.progress = progress
        if self.path.exists():
            if not self.overwrite:
                raise ValueError(f"path {self.path} already exists; pass overwrite=True to "
                                 "replace it")
            if not self.path.is_dir() or not (
                    (self.path / MANIFEST).is_file() or not any(self.path.iterdir())):
                raise ValueError(f"path {self.path} exists and is not an xslit dataset (no "
                                 f"{MANIFEST}); refusing to replace it")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._guard = TerminationGuard().install()
        try:
            self._tmp = make_temporary_dir(self.path.parent, f".{self.path.name}.partial-")
        except BaseException:
            self._guard.restore()
            raise
        for sub in ("images", "cameras"):
            (self._tmp / sub).mkdir()
        self._views: list[dict] = []
        self._pairs: list[dict] = []
        self._point_cloud: str | None = None
        self._done = False

    # context manager
    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _require_open(self):
        if self._done:
            raise ValueError("the writer is closed")

    def add_view(self, name: str, camera: Camera, image, *, points=None, intrinsics=None,
                 pose: dict | None = None, meta: dict | None = None) -> None:
        """Write one view.

        Parameters
        ----------
        name : str
        camera : Camera
        image : (H, W, 3) uint8 array_like
        points : (H, W, 3) float array_like, optional
            Ground-truth world point per pixel (NaN where none); its dtype is kept.
        intrinsics : TwoSlitIntrinsics, PushbroomIntrinsics or (3, 3) array_like, optional
        pose : dict with ``rvec``, ``tvec`` (3,), optional
        meta : dict, optional
        """
        self._require_open()
        name = _check_name(name)
        if any(v["name"] == name for v in self._views):
            raise ValueError(f"name {name!r} is already a view of this dataset")
        if not isinstance(camera, Camera):
            raise ValueError(f"camera must be an xslit Camera, got {type(camera).__name__}")
        img = _check_image(image)
        view = View(name, camera, img, None, intrinsics, pose, dict(meta or {}))
        rec = _camera_record(view)  # validates intrinsics and pose types
        entry = {"name": name, "image": f"images/{name}.png", "camera": f"cameras/{name}.json"}
        if points is not None:
            P = np.asarray(points)
            if P.shape != (*img.shape[:2], 3) or P.dtype.kind != "f":
                raise ValueError(f"points must be a float array of shape {(*img.shape[:2], 3)} "
                                 f"(one 3D point per pixel), got {P.dtype} {P.shape}")
            (self._tmp / "points").mkdir(exist_ok=True)
            entry["points"] = f"points/{name}.npz"
            _write_npz(self._tmp / entry["points"], points=P)
        _write_png(self._tmp / entry["image"], img)
        write_json(self._tmp / entry["camera"], rec)
        self._views.append(entry)

    def add_correspondences(self, view1: str, view2: str, points1, points2, X) -> None:
        """Write exact matches between two views already added.

        Parameters
        ----------
        points1, points2 : (N, 2) array_like
        X : (N, 3) array_like
        """
        self._require_open()
        names = [v["name"] for v in self._views]
        for arg, n in (("view1", view1), ("view2", view2)):
            if n not in names:
                raise ValueError(f"{arg} must name a view added before, got {n!r}")
        p1, p2, X = (check_array(k, a) for k, a in
                     (("points1", points1), ("points2", points2), ("X", X)))
        n = len(X)
        if X.ndim != 2 or X.shape[1] != 3:
            raise ValueError(f"X must have shape (N, 3), got {X.shape}")
        for k, a in (("points1", p1), ("points2", p2)):
            if a.shape != (n, 2):
                raise ValueError(f"{k} must have shape ({n}, 2) like X, got {a.shape}")
        (self._tmp / "matches").mkdir(exist_ok=True)
        rel = f"matches/{view1}__{view2}.npz"
        _write_npz(self._tmp / rel, points1=p1, points2=p2, X=X)
        self._pairs.append({"views": [view1, view2], "file": rel, "count": int(n)})

    def set_point_cloud(self, points, colors=None) -> None:
        """Write ``points.ply``, a ground-truth point cloud ((N, 3) points, (N, 3) uint8)."""
        self._require_open()
        write_ply(self._tmp / "points.ply", points, colors)
        self._point_cloud = "points.ply"

    def close(self) -> Path:
        """Checksum every file, write the manifest and move the folder into place."""
        if self._done:
            return self.path
        try:
            files = sorted(p for p in self._tmp.rglob("*") if p.is_file())
            listing = {}
            with ProgressBar(len(files), "checksums", enabled=self.progress) as bar:
                for p in files:
                    rel = p.relative_to(self._tmp).as_posix()
                    listing[rel] = {"size": p.stat().st_size, "sha256": sha256_of_file(p)}
                    bar.update()
            manifest = {
                "format": FORMAT_NAME,
                "version": FORMAT_VERSION,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "generator": f"xslit {_version()}",
                "metadata": self.metadata,
                "views": self._views,
                "correspondences": self._pairs,
                "point_cloud": self._point_cloud,
                "files": listing,
            }
            write_json(self._tmp / MANIFEST, manifest)
            self._guard.defer()  # publishing is two renames: finish them
            self._publish()
        except BaseException:
            self.abort()
            raise
        self._done = True
        self._guard.restore()
        return self.path

    def _publish(self) -> None:
        old = None
        if self.path.exists():
            old = self.path.parent / f".{self.path.name}.old-{uuid.uuid4().hex[:8]}"
            self.path.replace(old)
        try:
            self._tmp.replace(self.path)
        except BaseException:
            if old is not None:
                old.replace(self.path)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        """Discard everything written so far."""
        self._guard.defer()  # a second SIGTERM must not interrupt the cleanup
        try:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._done = True
        finally:
            self._guard.restore()


def _version() -> str:
    from .. import __version__

    return __version__


def write_dataset(path, dataset: Dataset, *, overwrite: bool = False,
                  progress: bool | None = None) -> Path:
    """Write a :class:`Dataset` to ``path`` atomically (see :class:`DatasetWriter`)."""
    if not isinstance(dataset, Dataset):
        raise ValueError(f"dataset must be a Dataset, got {type(dataset).__name__}")
    with DatasetWriter(path, dataset.metadata, overwrite=overwrite, progress=progress) as w:
        bar = ProgressBar(len(dataset.views), "writing", enabled=progress)
        for v in dataset.views:
            w.add_view(v.name, v.camera, v.image, points=v.points, intrinsics=v.intrinsics,
                       pose=v.pose, meta=v.meta)
            bar.update()
        bar.close()
        for c in dataset.correspondences:
            w.add_correspondences(c.view1, c.view2, c.points1, c.points2, c.X)
        if dataset.point_cloud is not None:
            w.set_point_cloud(*dataset.point_cloud)
    return Path(path)


# -- loader ------------------------------------------------------------------------------
def _read_manifest(root: Path) -> dict:
    if not root.is_dir():
        raise ValueError(f"path {root} is not a dataset folder (it does not exist or is a file)")
    label = f"{root.name}/{MANIFEST}"
    if not (root / MANIFEST).is_file():
        raise ValueError(f"{label}: file is missing; {root} is not an xslit dataset")
    m = read_json(root / MANIFEST, label=label)
    if not isinstance(m, dict):
        raise ValueError(f"{label}: expected a JSON object, got {type(m).__name__}")
    if m.get("format") != FORMAT_NAME:
        raise ValueError(f"{label}: format must be {FORMAT_NAME!r}, got {m.get('format')!r}")
    ver = m.get("version")
    if not isinstance(ver, int) or isinstance(ver, bool):
        raise ValueError(f"{label}: version must be an integer, got {ver!r}")
    if ver != FORMAT_VERSION:
        newer = " (written by a newer xslit; upgrade xslit)" if ver > FORMAT_VERSION else ""
        raise ValueError(f"{label}: unsupported format version {ver}; this xslit reads version "
                         f"{FORMAT_VERSION}{newer}")
    for key, typ in (("files", dict), ("views", list), ("correspondences", list),
                     ("metadata", dict)):
        if not isinstance(m.get(key), typ):
            raise ValueError(f"{label}: {key!r} must be a JSON {typ.__name__}, got "
                             f"{type(m.get(key)).__name__}")
    return m


def _safe_rel(rel, label: str) -> str:
    p = PurePosixPath(rel) if isinstance(rel, str) else None
    if p is None or p.is_absolute() or ".." in p.parts or not p.parts or rel == MANIFEST:
        raise ValueError(f"{label}: bad file name {rel!r} (must be a relative path inside the "
                         "dataset)")
    return rel


def _check_files(root: Path, m: dict, checksums: bool, progress) -> None:
    label = f"{root.name}/{MANIFEST}"
    items = list(m["files"].items())
    with ProgressBar(len(items), "verifying", enabled=progress) as bar:
        for rel, info in items:
            _safe_rel(rel, label)
            if (not isinstance(info, dict) or not isinstance(info.get("size"), int)
                    or not isinstance(info.get("sha256"), str)):
                raise ValueError(f"{label}: the entry for {rel} must have an integer 'size' and "
                                 f"a 'sha256' string, got {info!r}")
            p = root / rel
            if not p.is_file():
                raise ValueError(f"{rel}: file is missing (listed in {MANIFEST})")
            size = p.stat().st_size
            if size != info["size"]:
                how = "truncated" if size < info["size"] else "larger than recorded"
                raise ValueError(f"{rel}: file is {how}: {size} bytes, manifest says "
                                 f"{info['size']}")
            if checksums and sha256_of_file(p) != info["sha256"]:
                raise ValueError(f"{rel}: checksum mismatch (sha256 differs from {MANIFEST}); "
                                 "the file is damaged or was edited")
            bar.update()


def _listed(m: dict, rel, what: str) -> str:
    _safe_rel(rel, f"{MANIFEST} ({what})")
    if rel not in m["files"]:
        raise ValueError(f"{MANIFEST}: {what} {rel!r} is not in the file listing")
    return rel


def load_dataset(path, *, checksums: bool = True, progress: bool | None = False) -> Dataset:
    """Load and validate a dataset folder.

    Parameters
    ----------
    path : str or Path
    checksums : bool
        Verify every file's SHA-256 against the manifest (sizes are always checked).
    progress : bool or None
        Progress bar while verifying.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        Naming the damaged file and what is wrong: unsupported version, missing file, size or
        checksum mismatch, malformed JSON, bad camera data, undecodable image, or arrays whose
        shapes disagree with the camera's image size.
    """
    root = Path(check_path("path", path))
    m = _read_manifest(root)
    _check_files(root, m, checksums, progress)
    views: list[View] = []
    for k, entry in enumerate(m["views"]):
        if not isinstance(entry, dict) or not {"name", "image", "camera"} <= entry.keys():
            raise ValueError(f"{MANIFEST}: views[{k}] must have name, image and camera, got "
                             f"{entry!r}")
        name = entry["name"]
        try:
            _check_name(name)
        except ValueError as exc:
            raise ValueError(f"{MANIFEST}: views[{k}]: {exc}") from None
        cam_rel = _listed(m, entry["camera"], f"camera of view {name}")
        camera, (w, h), intr, pose, meta = _parse_camera_record(
            read_json(root / cam_rel, label=cam_rel), cam_rel)
        img_rel = _listed(m, entry["image"], f"image of view {name}")
        img = _read_png(root / img_rel, img_rel)
        if img.dtype != np.uint8 or img.shape != (h, w, 3):
            raise ValueError(f"{img_rel}: image must be ({h}, {w}, 3) uint8 as {cam_rel} says "
                             f"(image_size {[w, h]}), got {img.dtype} {img.shape}")
        points = None
        if entry.get("points") is not None:
            pts_rel = _listed(m, entry["points"], f"points of view {name}")
            points = _read_npz(root / pts_rel, pts_rel, ("points",))["points"]
            if points.shape != (h, w, 3) or points.dtype.kind != "f":
                raise ValueError(f"{pts_rel}: points must be a float array of shape ({h}, {w}, "
                                 f"3), got {points.dtype} {points.shape}")
            # NaN marks a pixel without a hit; an infinite coordinate is no point at all (and
            # would silently drop the pixel from every check).
            if np.isinf(points).any():
                raise ValueError(f"{pts_rel}: points must be finite or NaN (no hit), got "
                                 f"{int(np.isinf(points).any(axis=2).sum())} pixels with an "
                                 "infinite coordinate")
        views.append(View(name, camera, img, points, intr, pose, meta))
    names = [v.name for v in views]
    if len(set(names)) != len(names):
        raise ValueError(f"{MANIFEST}: view names must be unique, got {names}")
    pairs = []
    for k, entry in enumerate(m["correspondences"]):
        if (not isinstance(entry, dict) or "file" not in entry
                or not isinstance(entry.get("views"), list) or len(entry["views"]) != 2):
            raise ValueError(f"{MANIFEST}: correspondences[{k}] must have 'views' (two names) "
                             f"and 'file', got {entry!r}")
        a, b = entry["views"]
        if a not in names or b not in names:
            raise ValueError(f"{MANIFEST}: correspondences[{k}] names unknown views {[a, b]}")
        rel = _listed(m, entry["file"], f"correspondences {a}-{b}")
        z = _read_npz(root / rel, rel, ("points1", "points2", "X"))
        for key in ("points1", "points2", "X"):
            if z[key].dtype.kind != "f":
                raise ValueError(f"{rel}: {key} must be a float array, got dtype {z[key].dtype}")
            if not np.isfinite(z[key]).all():
                raise ValueError(f"{rel}: {key} must be finite, got "
                                 f"{int(np.count_nonzero(~np.isfinite(z[key])))} NaN or inf "
                                 "entries")
        n = len(z["X"])
        if (z["X"].shape != (n, 3) or z["points1"].shape != (n, 2)
                or z["points2"].shape != (n, 2)):
            raise ValueError(f"{rel}: expected points1 (N, 2), points2 (N, 2), X (N, 3) with the "
                             f"same N, got {z['points1'].shape}, {z['points2'].shape}, "
                             f"{z['X'].shape}")
        if entry.get("count", n) != n:
            raise ValueError(f"{rel}: holds {n} correspondences, {MANIFEST} says "
                             f"{entry['count']}")
        pairs.append(Correspondences(a, b, z["points1"], z["points2"], z["X"]))
    cloud = None
    if m.get("point_cloud"):
        rel = _listed(m, m["point_cloud"], "point cloud")
        cloud = read_ply(root / rel, label=rel)
    return Dataset(views, pairs, m["metadata"], cloud, root)


def verify_dataset(path, *, reprojection_tol: float = 1e-3,
                   progress: bool | None = False) -> dict:
    """Load with every check, then check the ground truth against the cameras.

    Correspondences must reproject: ``project(X)`` within ``reprojection_tol`` pixels of
    ``points1`` and ``points2``; for a sample of pixels with ground-truth points, the point
    must project to the pixel centre.

    Returns
    -------
    report : dict
        ``views``, ``pairs``, and the largest reprojection errors found.

    Raises
    ------
    ValueError
        As :func:`load_dataset`, or when ground truth does not reproject.
    """
    reprojection_tol = check_real("reprojection_tol", reprojection_tol, low=0, low_open=True,
                                  what="a finite positive number of pixels")
    ds = load_dataset(path, checksums=True, progress=progress)
    worst_pair = 0.0
    for c in ds.correspondences:
        if not len(c):
            continue
        for name, pts in ((c.view1, c.points1), (c.view2, c.points2)):
            err = np.linalg.norm(ds.view(name).camera.project(c.X) - pts, axis=1)
            e = float(np.nanmax(err)) if np.isfinite(err).any() else np.inf
            if not np.isfinite(err).all() or e > reprojection_tol:
                raise ValueError(f"matches/{c.view1}__{c.view2}.npz: ground-truth points do not "
                                 f"reproject into {name} (max error {e:.3g} px > "
                                 f"{reprojection_tol} px)")
            worst_pair = max(worst_pair, e)
    worst_view = 0.0
    for v in ds.views:
        if v.points is None:
            continue
        ii, jj = np.nonzero(v.mask)
        step = max(1, len(ii) // 2000)
        ii, jj = ii[::step], jj[::step]
        px = v.camera.project(v.points[ii, jj].astype(np.float64))
        err = np.linalg.norm(px - np.stack([jj, ii], axis=1), axis=1)
        # Points are stored with their own dtype: allow float32 rounding.
        tol = reprojection_tol if v.points.dtype == np.float64 else max(reprojection_tol, 0.05)
        e = float(np.max(err)) if len(err) else 0.0
        if not np.isfinite(err).all() or e > tol:
            raise ValueError(f"points/{v.name}.npz: ground-truth points do not project to their "
                             f"pixel centres (max error {e:.3g} px > {tol} px)")
        worst_view = max(worst_view, e)
    return {"views": len(ds.views), "pairs": len(ds.correspondences),
            "max_pair_reprojection_px": worst_pair, "max_point_reprojection_px": worst_view}
