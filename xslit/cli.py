"""The ``xslit`` command (also ``python -m xslit``): datasets, mosaics, matching,
reconstruction, calibration and viewing from the shell.

Every subcommand checks all of its arguments and input files before any long work. A mistake
is reported on one line of stderr that names the flag as typed (``--max-matches``), without a
traceback. Exit status: 0 success, 1 failure of the work itself (no tensor fits the matches, a
calibration that does not converge, a frame that stops decoding), 2 bad usage (argparse's
convention: unknown flags, bad values, missing or unreadable input files), 130 interrupted
(Ctrl-C; 143 for SIGTERM, 129 for SIGHUP, which unwind the same way so that no partial
output is left). Progress bars are drawn on stderr only when it is a terminal, never into logs.

Vector-valued flags take comma-separated numbers, negative ones included:
``--tvec -1,0,4.5`` and ``--tvec=-1,0,4.5`` are the same.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import logging
import os
import re
import sys
from pathlib import Path

import numpy as np

__all__ = ["EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "CommandError",
           "UsageError", "build_parser", "main", "read_matches", "reconstruction_metrics",
           "write_matches"]

EXIT_OK = 0
#: The work failed (bad data, no solution); the arguments were fine.
EXIT_FAILURE = 1
#: Bad usage: unknown or malformed flags, missing or unreadable input files (as argparse).
EXIT_USAGE = 2
#: Interrupted by Ctrl-C (128 + SIGINT, as shells report it; SIGTERM gives 143).
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A mistake in the command line or its input files: one line, exit status 2."""


class CommandError(Exception):
    """The work failed although the arguments were valid: one line, exit status 1."""


# -- argument types ------------------------------------------------------------------------
#: A number as the user may type it, sign and exponent included.
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_LIST = re.compile(rf"^{_NUMBER}(?:,{_NUMBER})*$")


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--tvec -1,0,4.5`` -> ``--tvec=-1,0,4.5``: argparse takes a token that starts with
    ``-`` and is not a plain number for an option, so it refuses negative vectors (and
    ``-1e-3``). Joined here, every flag accepts them both ways."""
    out: list[str] = []
    k = 0
    while k < len(argv):
        tok = argv[k]
        if (tok.startswith("--") and "=" not in tok and len(tok) > 2 and k + 1 < len(argv)
                and argv[k + 1].startswith("-") and _NUMBER_LIST.match(argv[k + 1])):
            out.append(f"{tok}={argv[k + 1]}")
            k += 2
            continue
        out.append(tok)
        k += 1
    return out


def _numbers(n: int | None = None, *, label: str = "numbers"):
    """argparse type: ``n`` comma-separated numbers (any count when ``n`` is None)."""
    def parse(text: str) -> np.ndarray:
        try:
            vals = np.array([float(x) for x in text.split(",")])
        except ValueError:
            count = "" if n is None else f"{n} "
            raise argparse.ArgumentTypeError(
                f"must be {count}comma-separated {label}, got {text!r}") from None
        if n is not None and len(vals) != n:
            raise argparse.ArgumentTypeError(f"must be {n} comma-separated {label}, got "
                                             f"{len(vals)} in {text!r}")
        if not np.isfinite(vals).all():
            raise argparse.ArgumentTypeError(f"must be finite {label}, got {text!r}")
        return vals
    parse.__name__ = "numbers"
    return parse


def _int_at_least(minimum: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if v < minimum:
            what = "positive" if minimum == 1 else f">= {minimum}"
            raise argparse.ArgumentTypeError(f"must be a {what} integer, got {v}")
        return v
    parse.__name__ = "integer"
    return parse


def _real(*, positive: bool = False, nonnegative: bool = False, unit_interval: bool = False):
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        if not np.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be finite, got {text!r}")
        if positive and v <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
        if nonnegative and v < 0:
            raise argparse.ArgumentTypeError(f"must be zero or positive, got {text!r}")
        if unit_interval and not 0 < v < 1:
            raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text!r}")
        return v
    parse.__name__ = "number"
    return parse


def _size(text: str) -> tuple[int, int]:
    from .datasets.generate import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("size ")) from None


def _existing_file(text: str) -> Path:
    p = Path(text)
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}" if not p.exists()
                                         else f"not a file: {text}")
    return p


def _existing_path(text: str) -> Path:
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"no such file or folder: {text}")
    return p


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (prog: error: ...) and exceptions."""

    def error(self, message: str):
        raise UsageError(f"{self.prog}: error: {message}")


def _usage(args, message: str):
    """A UsageError for the subcommand in ``args``."""
    return UsageError(f"{args.prog}: error: {message}")


# -- files ---------------------------------------------------------------------------------
def read_matches(path) -> tuple[np.ndarray, np.ndarray]:
    """Read correspondences written by ``xslit match`` (or a dataset's ``matches/*.npz``).

    Parameters
    ----------
    path : str or Path
        ``.npz`` with arrays ``points1`` and ``points2`` (N, 2), or ``.csv`` with the header
        ``x1,y1,x2,y2`` and one correspondence per row.

    Returns
    -------
    points1, points2 : (N, 2) float64 ndarray

    Raises
    ------
    ValueError
        Naming the file and what is wrong with it.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".npz":
        try:
            with np.load(p, allow_pickle=False) as z:
                missing = {"points1", "points2"} - set(z.files)
                if missing:
                    raise ValueError(f"{p}: lacks the arrays {sorted(missing)} (has "
                                     f"{sorted(z.files)})")
                p1, p2 = np.asarray(z["points1"], float), np.asarray(z["points2"], float)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{p}: cannot be read as .npz ({exc})") from None
    elif suffix == ".csv":
        try:
            with open(p, newline="") as fh:
                rows = list(csv.reader(fh))
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{p}: cannot be read ({exc})") from None
        if not rows or [c.strip() for c in rows[0]] != ["x1", "y1", "x2", "y2"]:
            raise ValueError(f"{p}: the first line must be the header x1,y1,x2,y2")
        try:
            data = np.array([[float(c) for c in r] for r in rows[1:] if r], float)
        except ValueError:
            raise ValueError(f"{p}: every row after the header must hold 4 numbers") from None
        if data.size == 0:
            data = np.zeros((0, 4))
        if data.ndim != 2 or data.shape[1] != 4:
            raise ValueError(f"{p}: every row after the header must hold 4 numbers")
        p1, p2 = data[:, :2], data[:, 2:]
    else:
        raise ValueError(f"{p}: matches must be a .npz or .csv file, got {suffix or 'no suffix'}")
    for name, a in (("points1", p1), ("points2", p2)):
        if a.ndim == 3 and a.shape[1] == 1:
            a = a[:, 0]
        if a.ndim != 2 or a.shape[1] != 2 or not np.isfinite(a).all():
            raise ValueError(f"{p}: {name} must be finite with shape (N, 2), got {a.shape}")
    if len(p1) != len(p2):
        raise ValueError(f"{p}: points1 and points2 must have the same length, got {len(p1)} "
                         f"and {len(p2)}")
    return p1.reshape(-1, 2), p2.reshape(-1, 2)


def write_matches(path, points1, points2) -> None:
    """Write correspondences as ``.npz`` (``points1``, ``points2``) or ``.csv``
    (``x1,y1,x2,y2``), atomically; see :func:`read_matches`."""
    import io

    from .io.files import atomic_write_bytes

    p = Path(path)
    p1 = np.asarray(points1, float).reshape(-1, 2)
    p2 = np.asarray(points2, float).reshape(-1, 2)
    if p.suffix.lower() == ".csv":
        rows = np.hstack([p1, p2])
        lines = ["x1,y1,x2,y2"] + [",".join(f"{v:.17g}" for v in row) for row in rows]
        atomic_write_bytes(p, ("\n".join(lines) + "\n").encode())
        return
    buf = io.BytesIO()
    np.savez(buf, points1=p1, points2=p2)
    atomic_write_bytes(p, buf.getvalue())


def _matches_suffix(args, flag: str, path: Path) -> None:
    if path.suffix.lower() not in (".npz", ".csv"):
        raise _usage(args, f"{flag} must end in .npz or .csv, got {path.name}")


def _out_file(args, flag: str, path: Path, suffixes: tuple[str, ...]) -> None:
    """Check an output file: a known suffix and a parent folder that exists."""
    if path.suffix.lower() not in suffixes:
        raise _usage(args, f"{flag} must end in {' or '.join(suffixes)}, got {path.name}")
    if path.is_dir():
        raise _usage(args, f"{flag} is a folder: {path}")
    if not path.resolve().parent.is_dir():
        raise _usage(args, f"{flag}: the folder {path.parent} does not exist")


def _out_dir(args, flag: str, path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise _usage(args, f"{flag} must be a folder, {path} is a file")
    parent = path.resolve().parent
    if not path.exists() and not parent.is_dir():
        raise _usage(args, f"{flag}: the folder {parent} does not exist")


def _read_image(args, flag: str, path: Path) -> np.ndarray:
    import imageio.v3 as iio

    try:
        img = iio.imread(path)
    except Exception as exc:  # decoders raise many types
        raise _usage(args, f"{flag}: {path} cannot be read as an image ({exc})") from None
    if img.ndim not in (2, 3):
        raise _usage(args, f"{flag}: {path} is not a single image (shape {img.shape})")
    return img


def _read_json(args, flag: str, path: Path):
    from .io.jsonio import read_json

    try:
        return read_json(path)
    except (ValueError, OSError) as exc:
        raise _usage(args, f"{flag}: {exc}") from None


def _intrinsics_from_file(args, flag: str, path: Path):
    """Intrinsics from ``calibrate``'s JSON (``to_dict()``) or a dataset camera file."""
    from .io.dataset import intrinsics_from_dict

    data = _read_json(args, flag, path)
    if isinstance(data, dict) and "model" not in data and isinstance(data.get("intrinsics"), dict):
        data = data["intrinsics"]
    try:
        intr = intrinsics_from_dict(data)
    except ValueError as exc:
        raise _usage(args, f"{flag}: {path}: {exc}") from None
    if isinstance(intr, np.ndarray):
        raise _usage(args, f"{flag}: {path} holds pinhole intrinsics; two-slit or pushbroom "
                           "intrinsics are needed")
    return intr


def _camera_from_file(args, flag: str, path: Path):
    from .cameras import TwoSlitCamera, camera_from_dict

    data = _read_json(args, flag, path)
    rec = data.get("camera", data) if isinstance(data, dict) else data
    try:
        cam = camera_from_dict(rec)
    except (ValueError, KeyError, TypeError) as exc:
        raise _usage(args, f"{flag}: {path}: not a camera file ({exc})") from None
    if not isinstance(cam, TwoSlitCamera):
        raise _usage(args, f"{flag}: {path} holds a {cam.model} camera; two-slit or pushbroom "
                           "cameras are needed")
    return cam


class _Collector(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _library_log():
    """Collect what the library logs on the ``xslit`` logger (a failure's reason, a warning),
    so that the command reports it in its own one line instead of a second one."""
    log = logging.getLogger("xslit")
    handler, propagate = _Collector(), log.propagate
    log.addHandler(handler)
    log.propagate = False
    try:
        yield handler.messages
    finally:
        log.removeHandler(handler)
        log.propagate = propagate


def _notes(messages: list[str]) -> None:
    for m in messages:
        print(f"note: {m}", file=sys.stderr)


def _progress(args, total: int, desc: str):
    from .io.progress import ProgressBar

    return ProgressBar(total, desc, enabled=False if getattr(args, "quiet", False) else None)


# -- render, info, verify -------------------------------------------------------------------
def _add_render(sub) -> None:
    from .datasets.generate import DEFAULT_VIEWS, RECIPES

    p = sub.add_parser(
        "render", help="render a dataset from a recipe",
        description="Render a dataset (images, exact cameras, ground-truth points and "
                    "correspondences) from a recipe, in the format of datasets/FORMAT.md.",
        epilog="recipes: " + "; ".join(f"{k}: {v[1]}" for k, v in RECIPES.items()))
    p.add_argument("--recipe", required=True, choices=sorted(RECIPES))
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="dataset folder to create")
    p.add_argument("--size", type=_size, default=(640, 480), metavar="WxH",
                   help="image size (default 640x480)")
    p.add_argument("--seed", type=_int_at_least(0), default=0, metavar="N",
                   help="seeds the scene, the rig and the match subsets (default 0)")
    p.add_argument("--views", type=_int_at_least(1), default=None, metavar="K",
                   help="number of views (defaults: "
                        + ", ".join(f"{k} {v}" for k, v in DEFAULT_VIEWS.items()) + ")")
    p.add_argument("--supersample", type=_int_at_least(1), default=2, metavar="K",
                   help="k x k rays per pixel for the colour (default 2)")
    p.add_argument("--max-matches", type=_int_at_least(1), default=20_000, metavar="N",
                   help="ground-truth correspondences kept per pair (default 20000)")
    p.add_argument("--threads", type=_int_at_least(1), default=None, metavar="N",
                   help="ray-casting threads (default: all cores)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_run_render)

    i = sub.add_parser("info", help="describe a dataset",
                       description="Describe a dataset: views, cameras, matches, point cloud.")
    i.add_argument("dataset", type=_existing_path, metavar="DIR")
    i.set_defaults(run=_run_info)
    v = sub.add_parser("verify", help="check a dataset's files and ground truth",
                       description="Check a dataset's checksums, files and cameras, and that "
                                   "its ground truth reprojects. Exit status 1 when damaged.")
    v.add_argument("dataset", type=_existing_path, metavar="DIR")
    v.set_defaults(run=_run_verify)


def _run_render(args) -> int:
    from .datasets.generate import generate_dataset

    n = args.views
    if args.recipe == "xslit-stereo" and n not in (None, 2):
        raise _usage(args, f"--views must be 2 for the xslit-stereo recipe, got {n}")
    if args.recipe == "xslit-circle" and n is not None and n < 2:
        raise _usage(args, f"--views must be at least 2 for the xslit-circle recipe, got {n}")
    out: Path = args.out
    if out.exists():
        if not out.is_dir():
            raise _usage(args, f"--out {out} is a file")
        if any(out.iterdir()):
            if not args.overwrite:
                raise _usage(args, f"--out {out} exists; pass --overwrite to replace it")
            if not (out / "manifest.json").is_file():
                raise _usage(args, f"--out {out} is a non-empty folder that is not a dataset; "
                                   "it is never overwritten")
    elif not out.resolve().parent.is_dir():
        raise _usage(args, f"--out: the folder {out.resolve().parent} does not exist")
    try:
        generate_dataset(args.recipe, out, args.size, args.seed, n,
                         supersample=args.supersample, max_matches=args.max_matches,
                         nthreads=args.threads, overwrite=args.overwrite,
                         progress=False if args.quiet else None)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    print(f"wrote {out}")
    return EXIT_OK


def _run_info(args) -> int:
    from .io.dataset import load_dataset
    from .io.jsonio import read_json

    path = args.dataset
    try:
        ds = load_dataset(path, checksums=False)
        m = read_json(path / "manifest.json")
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    total = sum(f["size"] for f in m["files"].values())
    meta = ds.metadata
    print(f"{path}: xslit dataset version {m['version']}, {len(m['files'])} files, "
          f"{total / 1e6:.1f} MB, created {m.get('created', '?')} by {m.get('generator', '?')}")
    if "recipe" in meta:
        print(f"recipe {meta['recipe']} (seed {meta.get('seed')}): {meta.get('description', '')}")
    for v in ds.views:
        extra = "" if v.mask is None else f", {int(v.mask.sum())} pixels with ground truth"
        intr = "" if v.intrinsics is None else ", intrinsics and pose"
        print(f"  view {v.name}: {v.camera.model} {v.image_size[0]}x{v.image_size[1]}"
              f"{intr}{extra}")
    for c in ds.correspondences:
        print(f"  matches {c.view1} - {c.view2}: {len(c)}")
    if ds.point_cloud is not None:
        print(f"  point cloud: {len(ds.point_cloud[0])} points")
    return EXIT_OK


def _run_verify(args) -> int:
    from .io.dataset import verify_dataset

    try:
        report = verify_dataset(args.dataset, progress=None)
    except ValueError as exc:
        raise CommandError(f"DAMAGED: {exc}") from None
    print(f"OK: {args.dataset}: {report['views']} views, {report['pairs']} pairs, all files "
          f"match their checksums; ground truth reprojects within "
          f"{max(report['max_pair_reprojection_px'], report['max_point_reprojection_px']):.2g} px")
    return EXIT_OK


# -- mosaic --------------------------------------------------------------------------------
def _add_mosaic(sub) -> None:
    p = sub.add_parser(
        "mosaic", help="pushbroom / crossed-slit mosaics from a video or folder of frames",
        description="Pushbroom and crossed-slit mosaics from the video of a sideways-moving "
                    "camera (Zomet et al., PAMI 2003): one column (or strip) of every frame, "
                    "side by side. Writes pushbroom.png and xslit.png; with --K and --speed "
                    "(or --velocity) also the exact camera of each mosaic as JSON (the dataset "
                    "camera-file format). The video is decoded once.",
        epilog="Frames of a folder are taken in natural order (2.png before 10.png). "
               "Example: xslit mosaic clip.mp4 --out out/ --K 500,500,319.5,239.5 --speed 0.01 "
               "--tvec -1,0,4.5")
    p.add_argument("source", type=_existing_path,
                   help="video file (anything cv2.VideoCapture reads: MP4, AVI, GIF, ...) or "
                        "folder of frames")
    p.add_argument("--out", "--out-dir", dest="out", required=True, type=Path, metavar="DIR",
                   help="output folder")
    p.add_argument("--kind", choices=("both", "pushbroom", "xslit"), default="both")
    p.add_argument("--column", type=_real(), default=None, metavar="X",
                   help="pushbroom column (default: the image centre (W-1)/2)")
    p.add_argument("--xslit-start", type=_real(), default=None, metavar="X",
                   help="crossed-slit column in the first frame (default 0)")
    p.add_argument("--xslit-end", type=_real(), default=None, metavar="X",
                   help="crossed-slit column in the last frame (default W-1)")
    p.add_argument("--slope", type=_real(), default=None, metavar="B",
                   help="crossed-slit columns per frame (instead of --xslit-end)")
    p.add_argument("--strip-width", type=_int_at_least(1), default=1, metavar="W",
                   help="columns taken per frame (default 1)")
    p.add_argument("--descending", action="store_true",
                   help="reverse columns inside strips (camera moving towards its -x)")
    p.add_argument("--start", type=_int_at_least(0), default=0, metavar="N", help="first frame (default 0)")
    p.add_argument("--stop", type=_int_at_least(1), default=None, metavar="N",
                   help="frame to stop before (default: the end)")
    p.add_argument("--step", type=_int_at_least(1), default=1, metavar="N", help="frame step (default 1)")
    p.add_argument("--K", type=_numbers(4), default=None, metavar="FX,FY,CX,CY",
                   help="pinhole intrinsics of the frames")
    p.add_argument("--speed", type=_real(), default=None, metavar="S",
                   help="camera displacement per frame along its own +x axis")
    p.add_argument("--velocity", type=_numbers(3), default=None, metavar="VX,VY,VZ",
                   help="world displacement per frame (instead of --speed)")
    p.add_argument("--rvec", type=_numbers(3), default=np.zeros(3), metavar="RX,RY,RZ",
                   help="cv2 pose of frame 0: rotation (default 0,0,0)")
    p.add_argument("--tvec", type=_numbers(3), default=np.zeros(3), metavar="TX,TY,TZ",
                   help="cv2 pose of frame 0: translation (default 0,0,0)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_run_mosaic)


def _run_mosaic(args) -> int:
    import imageio.v3 as iio

    from .geometry.projective import matrix_from_rvec
    from .io.jsonio import write_json
    from .mosaic import MosaicBuilder, count_frames, frames_from_source, mosaic_camera

    if args.stop is not None and args.stop <= args.start:
        raise _usage(args, f"--stop must be greater than --start, got {args.stop} <= "
                           f"{args.start}")
    if args.speed is not None and args.velocity is not None:
        raise _usage(args, "give --speed or --velocity, not both")
    if args.slope is not None and args.xslit_end is not None:
        raise _usage(args, "give --slope or --xslit-end, not both")
    motion = None
    if args.K is not None and (args.speed is not None or args.velocity is not None):
        fx, fy, cx, cy = args.K
        K = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1.0]])
        R = matrix_from_rvec(args.rvec)
        vel = args.velocity if args.velocity is not None else args.speed * R[0]
        # Frame k of the selection is frame start + k * step of the source.
        tvec0 = args.tvec - args.start * (R @ vel)
        motion = (K, args.rvec, tvec0, vel * args.step)
        try:
            mosaic_camera(*motion, 0.0, 0.0)  # checks K and the direction of motion
        except ValueError as exc:
            flag = "--velocity" if args.velocity is not None else "--K"
            if "velocity" not in str(exc):
                flag = "--K"
            raise _usage(args, f"{flag}: {exc}") from None
    elif args.K is not None or args.speed is not None or args.velocity is not None:
        raise _usage(args, "the mosaic camera needs both --K and --speed (or --velocity)")
    _out_dir(args, "--out", args.out)

    # The source: counted without decoding (folder listing, video header), then decoded once.
    try:
        n_expected = count_frames(args.source, start=args.start, stop=args.stop,
                                  step=args.step)
        frames = frames_from_source(args.source, start=args.start, stop=args.stop,
                                    step=args.step)
        first = next(frames, None)
    except ValueError as exc:
        raise _usage(args, f"source: {exc}") from None
    if first is None or n_expected == 0:
        raise _usage(args, f"source: {args.source} gives no frames in the selected range "
                           f"(--start {args.start}, --stop {args.stop}, --step {args.step})")
    W = np.asarray(first).shape[1]
    jobs = []
    if args.kind in ("both", "pushbroom"):
        jobs.append(("pushbroom", (W - 1) / 2 if args.column is None else args.column, 0.0))
    if args.kind in ("both", "xslit"):
        a = 0.0 if args.xslit_start is None else args.xslit_start
        if args.slope is not None:
            b = args.slope
        elif n_expected is None:
            raise _usage(args, f"source: {args.source} does not record its frame count; give "
                               "the crossed-slit --slope")
        else:
            end = W - 1.0 if args.xslit_end is None else args.xslit_end
            b = (end - a) / max(n_expected - 1, 1)
        jobs.append(("xslit", a, b))
    builders = [MosaicBuilder(a, b, strip_width=args.strip_width, descending=args.descending)
                for _, a, b in jobs]

    bar = _progress(args, n_expected or 0, "mosaic")
    try:
        with bar:
            frame = first
            while frame is not None:
                for builder in builders:
                    builder.add(frame)
                bar.update()
                frame = next(frames, None)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    n = builders[0].n_frames
    if n_expected is not None and n != n_expected and args.kind != "pushbroom" \
            and args.slope is None:
        print(f"note: {args.source} decoded {n} frames where its header announced "
              f"{n_expected}; the crossed-slit slope assumed {n_expected}", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    for (name, a, b), builder in zip(jobs, builders, strict=True):
        mosaic, valid = builder.result()
        img = mosaic[:, :, 0] if mosaic.shape[2] == 1 else mosaic
        iio.imwrite(args.out / f"{name}.png", img)
        msg = (f"{name}: {img.shape[1]}x{img.shape[0]} from {n} frames, column {a:g} + "
               f"{b:g} t, {int(valid.sum())}/{len(valid)} valid columns")
        if motion is not None:
            cam = mosaic_camera(*motion, a, b, strip_width=args.strip_width)
            write_json(args.out / f"{name}.json", {
                "camera": cam.to_dict(), "image_size": [int(img.shape[1]), int(img.shape[0])],
                "meta": {"mosaic": {"column": a, "slope": b, "strip_width": args.strip_width,
                                    "frames": int(n), "source": str(args.source)}}})
            msg += f"; camera in {name}.json ({cam.model})"
        print(msg)
    return EXIT_OK


# -- match ---------------------------------------------------------------------------------
def _add_feature_flags(p) -> None:
    from .features.matching import DEFAULT_RATIO, DETECTORS, MATCHERS

    g = p.add_argument_group("feature matching")
    g.add_argument("--detector", type=str.upper, choices=DETECTORS, default="SIFT",
                   help="keypoints and descriptors (default SIFT)")
    g.add_argument("--matcher", type=str.upper, choices=MATCHERS, default="FLANN",
                   help="nearest neighbours (default FLANN)")
    g.add_argument("--ratio", type=_real(positive=True), default=DEFAULT_RATIO,
                   help=f"Lowe's ratio test, in (0, 1] (default {DEFAULT_RATIO})")
    g.add_argument("--no-cross-check", dest="cross_check", action="store_false",
                   help="keep matches that are not mutual nearest neighbours")
    g.add_argument("--max-features", type=_int_at_least(1), default=None, metavar="N",
                   help="keypoints per image, best first (default: SIFT all, ORB 500)")


def _check_feature_flags(args) -> None:
    if args.ratio > 1:
        raise _usage(args, f"--ratio must be in (0, 1], got {args.ratio:g}")


def _match_images(args, image1, image2):
    """(points1, points2) of the feature matches of two images, as ``xslit match`` finds them."""
    from .features.matching import match_features

    try:
        m = match_features(image1, image2, detector=args.detector, matcher=args.matcher,
                           ratio=args.ratio, cross_check=args.cross_check,
                           nfeatures=args.max_features)
    except ValueError as exc:
        raise CommandError(f"feature matching: {exc}") from None
    return m.points1, m.points2


def _add_match(sub) -> None:
    p = sub.add_parser(
        "match", help="feature matches between two images -> matches file and picture",
        description="Match features of two images (SIFT or ORB, Lowe's ratio test, mutual "
                    "nearest neighbours) and write the correspondences (.npz with points1, "
                    "points2 (N, 2), or .csv with the header x1,y1,x2,y2), and optionally a "
                    "picture of the matches. With --filter only the matches that an epipolar "
                    "tensor explains are kept (findEpipolarTensor); the picture then shows "
                    "inliers in green and outliers in red.")
    p.add_argument("image1", type=_existing_file, metavar="IMAGE1")
    p.add_argument("image2", type=_existing_file, metavar="IMAGE2")
    p.add_argument("--out", required=True, type=Path, metavar="FILE",
                   help="matches file, .npz or .csv")
    p.add_argument("--picture", type=Path, default=None, metavar="PNG",
                   help="write the picture of the matches here")
    p.add_argument("--max-drawn", type=_int_at_least(1), default=500, metavar="N",
                   help="matches drawn in the picture at most (default 500)")
    p.add_argument("--filter", action="store_true",
                   help="keep the inliers of an epipolar tensor (two-slit or pushbroom pair)")
    p.add_argument("--threshold", type=_real(positive=True), default=1.5, metavar="PX",
                   help="inlier threshold of --filter (default 1.5 pixels)")
    p.add_argument("--seed", type=_int_at_least(0), default=0, metavar="N",
                   help="seeds the robust estimation of --filter and the drawn subset")
    _add_feature_flags(p)
    p.set_defaults(run=_run_match)


def _run_match(args) -> int:
    _check_feature_flags(args)
    _out_file(args, "--out", args.out, (".npz", ".csv"))
    if args.picture is not None:
        _out_file(args, "--picture", args.picture, (".png", ".jpg", ".jpeg"))
    img1 = _read_image(args, "IMAGE1", args.image1)
    img2 = _read_image(args, "IMAGE2", args.image2)
    p1, p2 = _match_images(args, img1, img2)
    mask = None
    summary = f"{len(p1)} matches ({args.detector}, ratio {args.ratio:g}"
    summary += ", mutual)" if args.cross_check else ")"
    if args.filter:
        from .api.epipolar import USAC_DEFAULT, findEpipolarTensor

        if len(p1) < 15:
            raise CommandError(f"--filter needs at least 15 matches to fit a tensor, found "
                               f"{len(p1)}")
        with _library_log() as log:
            F, mask = findEpipolarTensor(p1, p2, USAC_DEFAULT, args.threshold, rng=args.seed)
        if F is None:
            reason = log[-1].removeprefix("findEpipolarTensor failed: ") if log else ""
            raise CommandError(f"--filter: no epipolar tensor fits the {len(p1)} matches"
                               + (f" ({reason})" if reason else ""))
        _notes(log)
        summary += f", {int(mask.sum())} tensor inliers within {args.threshold:g} px"
    keep = slice(None) if mask is None else mask.ravel().astype(bool)
    write_matches(args.out, p1[keep], p2[keep])
    print(f"{args.image1}, {args.image2}: {summary} -> {args.out}")
    if args.picture is not None:
        import imageio.v3 as iio

        from .features.drawing import draw_matches

        picture = draw_matches(img1, p1, img2, p2, mask, max_matches=args.max_drawn,
                               rng=args.seed)
        iio.imwrite(args.picture, picture)
        print(f"picture of the matches in {args.picture}")
    return EXIT_OK


# -- calibrate -----------------------------------------------------------------------------
_CALIB_FLAGS = ("USE_INTRINSIC_GUESS", "FIX_PRINCIPAL_POINT", "FIX_FOCAL_LENGTH", "FIX_THETA",
                "FIX_D", "PARALLEL", "PUSHBROOM")

_CALIBRATION_FORMAT = """\
correspondence file (JSON):
  {"image_size": [W, H],
   "views": [{"object_points": [[X, Y, Z], ...], "image_points": [[x, y], ...]}, ...]}
or .npz: image_size (2,), and object_points_0, image_points_0, object_points_1, ... one
(N_i, 3) and one (N_i, 2) array per view. Pixels follow OpenCV (pixel centres at integers).
"""


def _add_calibrate(sub) -> None:
    p = sub.add_parser(
        "calibrate", help="intrinsics from views of a known target (2D-3D correspondences)",
        description="Calibrate a two-slit or pushbroom camera from views of known 3D points, "
                    "like cv2.calibrateCameraExtended (xslit.calibrateTwoSlitExtended). Prints "
                    "the intrinsics with their standard deviations, the RMS and per-view "
                    "reprojection errors; writes the intrinsics as JSON.",
        epilog=_CALIBRATION_FORMAT, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("correspondences", type=_existing_file, metavar="FILE",
                   help="per-view 2D-3D correspondences (.json or .npz, format below)")
    p.add_argument("--out", type=Path, default=None, metavar="JSON",
                   help="write the intrinsics (TwoSlitIntrinsics.to_dict()) here")
    p.add_argument("--report", type=Path, default=None, metavar="JSON",
                   help="write the RMS, standard deviations, per-view errors and poses here")
    p.add_argument("--image-size", type=_size, default=None, metavar="WxH",
                   help="image size (when the file does not give it)")
    p.add_argument("--flags", default="", metavar="NAME[,NAME...]",
                   help="calibration flags by name, with or without CALIB_: "
                        + ", ".join(_CALIB_FLAGS))
    p.add_argument("--guess", type=_existing_file, default=None, metavar="JSON",
                   help="intrinsics to start from (implies USE_INTRINSIC_GUESS)")
    p.add_argument("--max-iterations", type=_int_at_least(1), default=100, metavar="N",
                   help="of the joint refinement (default 100)")
    p.set_defaults(run=_run_calibrate)


def _read_calibration_file(args, path: Path):
    """(object_points, image_points, image_size or None) from the documented formats."""
    flag = "FILE"
    if path.suffix.lower() == ".json":
        data = _read_json(args, flag, path)
        if not isinstance(data, dict) or not isinstance(data.get("views"), list):
            raise _usage(args, f"{path}: must be a JSON object with a list 'views'")
        obj, img = [], []
        for k, v in enumerate(data["views"]):
            if not isinstance(v, dict) or not {"object_points", "image_points"} <= set(v):
                raise _usage(args, f"{path}: views[{k}] must have object_points and "
                                   "image_points")
            try:
                obj.append(np.asarray(v["object_points"], float))
                img.append(np.asarray(v["image_points"], float))
            except (TypeError, ValueError):
                raise _usage(args, f"{path}: views[{k}] must hold arrays of numbers") from None
        size = data.get("image_size")
    elif path.suffix.lower() == ".npz":
        try:
            with np.load(path, allow_pickle=False) as z:
                files = set(z.files)
                V = 0
                while f"object_points_{V}" in files:
                    V += 1
                obj = [np.asarray(z[f"object_points_{k}"], float) for k in range(V)]
                try:
                    img = [np.asarray(z[f"image_points_{k}"], float) for k in range(V)]
                except KeyError as exc:
                    raise _usage(args, f"{path}: lacks {exc.args[0]}") from None
                size = z["image_size"].tolist() if "image_size" in files else None
        except (OSError, ValueError, EOFError) as exc:
            raise _usage(args, f"{path}: cannot be read as .npz ({exc})") from None
    else:
        raise _usage(args, f"FILE must be .json or .npz, got {path.name}")
    if not obj:
        raise _usage(args, f"{path}: holds no views")
    if size is not None:
        if (not isinstance(size, (list, tuple)) or len(size) != 2
                or not all(isinstance(s, (int, float)) and s == int(s) and s > 0 for s in size)):
            raise _usage(args, f"{path}: image_size must be [width, height], got {size!r}")
        size = (int(size[0]), int(size[1]))
    return obj, img, size


def _calibration_flags(args) -> int:
    from .api import calibration as api

    flags = 0
    for raw in filter(None, (s.strip() for s in args.flags.split(","))):
        name = raw.upper().removeprefix("CALIB_")
        if name not in _CALIB_FLAGS:
            raise _usage(args, f"--flags: unknown flag {raw!r}; choose among "
                               + ", ".join(_CALIB_FLAGS))
        flags |= getattr(api, f"CALIB_{name}")
    return flags


def _run_calibrate(args) -> int:
    from .api.calibration import CALIB_USE_INTRINSIC_GUESS, calibrateTwoSlitExtended
    from .cameras.intrinsics import intrinsic_parameters
    from .io.jsonio import to_jsonable, write_json
    from .sfm.calibration import PARAMETER_NAMES

    flags = _calibration_flags(args)
    obj, img, size = _read_calibration_file(args, args.correspondences)
    if args.image_size is not None:
        size = args.image_size
    if size is None:
        raise _usage(args, f"{args.correspondences} gives no image_size; pass --image-size")
    guess = None
    if args.guess is not None:
        guess = _intrinsics_from_file(args, "--guess", args.guess)
        flags |= CALIB_USE_INTRINSIC_GUESS
    elif flags & CALIB_USE_INTRINSIC_GUESS:
        raise _usage(args, "--flags USE_INTRINSIC_GUESS needs --guess")
    for flag, path in (("--out", args.out), ("--report", args.report)):
        if path is not None:
            _out_file(args, flag, path, (".json",))
    try:
        out = calibrateTwoSlitExtended(obj, img, size, guess, flags, args.max_iterations)
    except ValueError as exc:
        msg = str(exc)
        # Bad input, named by the library after its argument: say which flag or file.
        where = {"objectPoints": str(args.correspondences),
                 "imagePoints": str(args.correspondences),
                 "imageSize": "--image-size" if args.image_size else str(args.correspondences),
                 "intrinsics": "--guess", "flags": "--flags"}
        arg = re.match(r"^(objectPoints|imagePoints|imageSize|intrinsics|flags)\b", msg)
        if arg:
            raise _usage(args, f"{where[arg.group(1)]}: {msg.removeprefix(arg.group(1) + ': ')}") from None
        raise CommandError(msg) from None
    rms, intr, rvecs, tvecs, std_i, std_e, per_view = out
    kind, values = intrinsic_parameters(intr)
    names = PARAMETER_NAMES[kind]
    print(f"{kind.replace('_', '-')} intrinsics from {len(obj)} views, "
          f"{sum(len(o) for o in obj)} points, image {size[0]}x{size[1]}:")
    for name, val, sd in zip(names, values, std_i.ravel(), strict=True):
        print(f"  {name:>8} = {val:.6g}" + ("  (fixed)" if sd == 0 else f" +- {sd:.2g}"))
    print(f"RMS reprojection error {rms:.4g} px; per view: "
          + " ".join(f"{e:.3g}" for e in per_view.ravel()))
    if args.out is not None:
        write_json(args.out, intr.to_dict())
        print(f"wrote {args.out}")
    if args.report is not None:
        write_json(args.report, to_jsonable({
            "intrinsics": intr.to_dict(), "rms": rms, "image_size": list(size),
            "parameters": dict(zip(names, values.tolist(), strict=True)),
            "std_deviations": dict(zip(names, std_i.ravel().tolist(), strict=True)),
            "per_view_errors": per_view.ravel().tolist(),
            "rvecs": [r.ravel().tolist() for r in rvecs],
            "tvecs": [t.ravel().tolist() for t in tvecs],
            "std_deviations_extrinsics": std_e.reshape(-1, 6).tolist()}))
        print(f"wrote {args.report}")
    return EXIT_OK


# -- reconstruct ---------------------------------------------------------------------------
def _add_reconstruct(sub) -> None:
    p = sub.add_parser(
        "reconstruct", help="two images + cameras or intrinsics -> 3D point cloud",
        description="Reconstruct a point cloud from two views: correspondences (feature "
                    "matches as `xslit match` finds them, a --matches file, or a dataset's "
                    "ground-truth pairs with --matches gt), the epipolar "
                    "tensor (findEpipolarTensor, which rejects outliers), the cameras (known, "
                    "or the relative pose from the intrinsics by recoverTwoSlitPose), then "
                    "triangulation (triangulateTwoSlitPoints). Writes points.ply, "
                    "preview.png (seen from view 1) and metrics.json to --out; with ground truth (a dataset) the metrics hold the "
                    "median 3D error and the Chamfer distance to the true points as fractions "
                    "of the scene's diameter.",
        epilog="Inputs: a dataset folder (as `xslit render` writes it; its cameras, or only "
               "its intrinsics with --calibrated), or two images with --cameras or "
               "--intrinsics.")
    p.add_argument("inputs", nargs="+", type=_existing_path, metavar="INPUT",
                   help="DATASET_DIR, or IMAGE1 IMAGE2")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="output folder (points.ply, metrics.json, matches.npz)")
    p.add_argument("--views", default=None, metavar="NAME1,NAME2",
                   help="dataset views to use (default: the first pair with correspondences)")
    p.add_argument("--cameras", nargs=2, type=_existing_file, default=None,
                   metavar=("CAM1", "CAM2"), help="camera files (dataset format) of two images")
    p.add_argument("--intrinsics", type=_existing_file, default=None, metavar="JSON",
                   help="intrinsics of image 1 (and of image 2 without --intrinsics2), as "
                        "`xslit calibrate` writes them, or a camera file that holds them")
    p.add_argument("--intrinsics2", type=_existing_file, default=None, metavar="JSON",
                   help="intrinsics of image 2 when they differ")
    p.add_argument("--calibrated", action="store_true",
                   help="with a dataset: use only its intrinsics and recover the pose")
    p.add_argument("--matches", default=None, metavar="FILE",
                   help="correspondences (.npz or .csv as `xslit match` writes them), or 'gt' "
                        "for a dataset's ground-truth correspondences")
    p.add_argument("--noise", type=_real(nonnegative=True), default=0.0, metavar="PX",
                   help="Gaussian noise added to the matches (pixels, for experiments)")
    p.add_argument("--max-matches", type=_int_at_least(15), default=None, metavar="N",
                   help="use at most this many correspondences (a seeded random subset)")
    p.add_argument("--threshold", type=_real(positive=True), default=1.5, metavar="PX",
                   help="inlier threshold of the tensor and the reprojections (default 1.5)")
    p.add_argument("--seed", type=_int_at_least(0), default=0, metavar="N",
                   help="seeds the robust estimation and the subsets (default 0)")
    p.add_argument("--no-preview", dest="preview", action="store_false",
                   help="do not draw preview.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_feature_flags(p)
    p.set_defaults(run=_run_reconstruct)


class _Job:
    """What ``reconstruct`` works on, checked before the work starts."""

    image1 = image2 = None
    camera1 = camera2 = None
    intrinsics1 = intrinsics2 = None
    points1 = points2 = None
    gt_X = None  # (N, 3) true point of each correspondence, when known
    gt_cloud = None  # (M, 3) true points of the scene, when known
    gt_points1 = None  # (H, W, 3) true point of every pixel of view 1, when known
    pose1 = None  # (R, t) of view 1 when the reconstruction is in its camera frame
    view_R = None  # rotation of view 1 (world to camera) for the preview, when known
    label = ""


def _reconstruct_inputs(args) -> _Job:
    from .geometry.projective import matrix_from_rvec

    job = _Job()
    ins = args.inputs
    if len(ins) == 1 and ins[0].is_dir():
        from .io.dataset import load_dataset

        if args.cameras is not None or args.intrinsics is not None \
                or args.intrinsics2 is not None:
            raise _usage(args, "--cameras and --intrinsics are for two images; a dataset "
                               "brings its own (use --calibrated for its intrinsics only)")
        try:
            ds = load_dataset(ins[0], checksums=False)
        except ValueError as exc:
            raise _usage(args, f"INPUT: {exc}") from None
        if args.views is not None:
            names = [s.strip() for s in args.views.split(",")]
            if len(names) != 2 or names[0] == names[1]:
                raise _usage(args, f"--views must be two different view names, got "
                                   f"{args.views!r}")
            known = [v.name for v in ds.views]
            for nm in names:
                if nm not in known:
                    raise _usage(args, f"--views: no view {nm!r} in {ins[0]} (views: "
                                       f"{', '.join(known)})")
        elif ds.correspondences:
            names = [ds.correspondences[0].view1, ds.correspondences[0].view2]
        elif len(ds.views) >= 2:
            names = [ds.views[0].name, ds.views[1].name]
        else:
            raise _usage(args, f"INPUT: {ins[0]} has fewer than two views")
        v1, v2 = ds.view(names[0]), ds.view(names[1])
        job.label = f"{ins[0]} views {names[0]}, {names[1]}"
        job.image1, job.image2 = v1.image, v2.image
        if args.calibrated:
            if v1.intrinsics is None or v2.intrinsics is None or isinstance(
                    v1.intrinsics, np.ndarray) or isinstance(v2.intrinsics, np.ndarray):
                raise _usage(args, "--calibrated needs two-slit or pushbroom intrinsics in the "
                                   "dataset's camera files")
            job.intrinsics1, job.intrinsics2 = v1.intrinsics, v2.intrinsics
            # The pose of view 1 brings the result into the world frame of the ground truth.
            job.pose1 = (matrix_from_rvec(np.asarray(v1.pose["rvec"], float)),
                         np.asarray(v1.pose["tvec"], float))
        else:
            from .cameras import TwoSlitCamera

            for v in (v1, v2):
                if not isinstance(v.camera, TwoSlitCamera):
                    raise _usage(args, f"view {v.name} has a {v.camera.model} camera; two-slit "
                                       "or pushbroom cameras are needed")
            job.camera1, job.camera2 = v1.camera, v2.camera
        if args.matches == "gt":
            try:
                c = ds.pair(names[0], names[1])
            except ValueError as exc:
                raise _usage(args, f"--matches gt: {exc}") from None
            job.points1, job.points2, job.gt_X = c.points1, c.points2, c.X
        job.gt_points1 = v1.points
        if v1.pose is not None:
            job.view_R = matrix_from_rvec(np.asarray(v1.pose["rvec"], float))
        if ds.point_cloud is not None:
            job.gt_cloud = ds.point_cloud[0]
    elif len(ins) == 2:
        for k, path in enumerate(ins, 1):
            if not path.is_file():
                raise _usage(args, f"INPUT: IMAGE{k} {path} is not a file")
        if args.views is not None or args.calibrated:
            raise _usage(args, "--views and --calibrated apply to a dataset folder")
        if (args.cameras is None) == (args.intrinsics is None):
            raise _usage(args, "two images need either --cameras or --intrinsics")
        if args.intrinsics2 is not None and args.intrinsics is None:
            raise _usage(args, "--intrinsics2 needs --intrinsics")
        job.image1 = _read_image(args, "INPUT", ins[0])
        job.image2 = _read_image(args, "INPUT", ins[1])
        job.label = f"{ins[0]}, {ins[1]}"
        if args.cameras is not None:
            job.camera1 = _camera_from_file(args, "--cameras", args.cameras[0])
            job.camera2 = _camera_from_file(args, "--cameras", args.cameras[1])
        else:
            job.intrinsics1 = _intrinsics_from_file(args, "--intrinsics", args.intrinsics)
            job.intrinsics2 = job.intrinsics1 if args.intrinsics2 is None else \
                _intrinsics_from_file(args, "--intrinsics2", args.intrinsics2)
            job.view_R = np.eye(3)  # the reconstruction is in camera 1's frame
        if args.matches == "gt":
            raise _usage(args, "--matches gt needs a dataset folder")
    else:
        raise _usage(args, f"INPUT must be one dataset folder or two images, got {len(ins)} "
                           "paths")
    if args.matches is not None and args.matches != "gt":
        path = Path(args.matches)
        if not path.is_file():
            raise _usage(args, f"--matches: no such file: {path}")
        try:
            job.points1, job.points2 = read_matches(path)
        except ValueError as exc:
            raise _usage(args, f"--matches: {exc}") from None
    if job.points1 is not None and len(job.points1) < 15:
        raise _usage(args, f"--matches: at least 15 correspondences are needed, got "
                           f"{len(job.points1)}")
    return job


def _sample_nearest(grid: np.ndarray, px: np.ndarray) -> np.ndarray:
    """Values of an (H, W, C) grid at the pixels nearest to (N, 2) points (NaN outside)."""
    H, W = grid.shape[:2]
    j = np.rint(px[:, 0]).astype(int)
    i = np.rint(px[:, 1]).astype(int)
    inside = (i >= 0) & (i < H) & (j >= 0) & (j < W)
    out = np.full((len(px), grid.shape[2]), np.nan)
    out[inside] = grid[i[inside], j[inside]]
    return out


def reconstruction_metrics(X, gt_X=None, gt_cloud=None) -> dict:
    """Accuracy of a reconstruction against ground truth.

    Parameters
    ----------
    X : (N, 3) array_like
        Reconstructed points.
    gt_X : (N, 3) array_like, optional
        The true point of each reconstructed point (NaN where unknown).
    gt_cloud : (M, 3) array_like, optional
        True points of the scene; its bounding-box diagonal is the scene's diameter.

    Returns
    -------
    dict
        ``median_3d_error`` (and ``median_3d_error_rel``, relative to the diameter) from
        ``gt_X``; from ``gt_cloud``: ``scene_diameter``, ``accuracy`` (mean distance of the
        reconstruction to the nearest true point), ``completeness`` (mean distance of the true
        points to the nearest reconstructed one) and ``chamfer`` (their mean), each also as a
        fraction of the diameter (``*_rel``).

    Examples
    --------
    >>> X = np.array([[0.0, 0, 0], [1, 0, 0]])
    >>> m = reconstruction_metrics(X + [0, 0.1, 0], X, X)
    >>> round(m["median_3d_error"], 9), round(m["chamfer_rel"], 9)
    (0.1, 0.1)
    """
    X = np.asarray(X, float)
    out: dict = {"points": len(X)}
    diameter = None
    if gt_cloud is not None and len(gt_cloud):
        from .render.evaluate import cloud_metrics

        out.update(cloud_metrics(X[np.isfinite(X).all(axis=1)], gt_cloud), points=len(X))
        diameter = out["scene_diameter"]
    if gt_X is not None:
        err = np.linalg.norm(X - np.asarray(gt_X, float), axis=1)
        err = err[np.isfinite(err)]
        out["points_with_truth"] = len(err)
        if len(err):
            out["median_3d_error"] = float(np.median(err))
            if diameter:
                out["median_3d_error_rel"] = out["median_3d_error"] / diameter
    return out


def _run_reconstruct(args) -> int:
    from .api.epipolar import USAC_DEFAULT, findEpipolarTensor
    from .api.pose import recoverTwoSlitPose, triangulateTwoSlitPoints
    from .io.jsonio import to_jsonable, write_json
    from .io.ply import write_ply

    _check_feature_flags(args)
    job = _reconstruct_inputs(args)
    _out_dir(args, "--out", args.out)
    if job.points1 is None:
        job.points1, job.points2 = _match_images(args, job.image1, job.image2)
        if len(job.points1) < 15:
            raise CommandError(f"only {len(job.points1)} feature matches; at least 15 are "
                               "needed (try --ratio 0.9, --detector ORB or larger images)")
    rng = np.random.default_rng(args.seed)
    p1, p2, gt_X = job.points1, job.points2, job.gt_X
    if args.max_matches is not None and len(p1) > args.max_matches:
        keep = np.sort(rng.choice(len(p1), args.max_matches, replace=False))
        p1, p2 = p1[keep], p2[keep]
        gt_X = None if gt_X is None else gt_X[keep]
    if args.noise > 0:
        p1 = p1 + rng.normal(scale=args.noise, size=p1.shape)
        p2 = p2 + rng.normal(scale=args.noise, size=p2.shape)

    with _progress(args, 3, "reconstruct") as bar, _library_log() as log:
        try:
            F, mask = findEpipolarTensor(p1, p2, USAC_DEFAULT, args.threshold,
                                         rng=args.seed)
        except ValueError as exc:
            raise CommandError(f"findEpipolarTensor: {exc}") from None
        if F is None:
            reason = log[-1].removeprefix("findEpipolarTensor failed: ") if log else ""
            raise CommandError(f"no epipolar tensor fits the {len(p1)} correspondences"
                               + (f" ({reason})" if reason else "")
                               + "; try a larger --threshold or better matches")
        inl = mask.ravel().astype(bool)
        bar.update(note=f"tensor: {int(inl.sum())}/{len(p1)} inliers")
        if job.camera1 is None:
            try:
                _, R, t, pose_mask, _ = recoverTwoSlitPose(
                    F, p1, p2, job.intrinsics1, job.intrinsics2, mask,
                    reprojThreshold=args.threshold, rng=args.seed)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            from .cameras import compose_camera
            from .geometry.projective import rvec_from_matrix

            job.camera1 = compose_camera(job.intrinsics1, np.zeros(3), np.zeros(3))
            job.camera2 = compose_camera(job.intrinsics2, rvec_from_matrix(R), t.ravel())
            inl &= pose_mask.ravel().astype(bool)
        bar.update(note="cameras")
        idx = np.flatnonzero(inl)
        if len(idx) < 2:
            raise CommandError(f"only {len(idx)} correspondences survive the tensor and pose")
        X4 = triangulateTwoSlitPoints([job.camera1, job.camera2], [p1[idx], p2[idx]])
        with np.errstate(divide="ignore", invalid="ignore"):
            X = (X4[:3] / X4[3]).T
        err = np.maximum(np.linalg.norm(job.camera1.project(X) - p1[idx], axis=1),
                         np.linalg.norm(job.camera2.project(X) - p2[idx], axis=1))
        good = np.isfinite(X).all(axis=1) & (err <= args.threshold)
        good &= job.camera1.in_front(X) & job.camera2.in_front(X)
        idx, X = idx[good], X[good]
        bar.update(note="triangulated")
    _notes(log)
    if len(idx) == 0:
        raise CommandError("no triangulated point reprojects within --threshold in front of "
                           "both cameras")
    if job.pose1 is not None:  # camera 1's frame -> world
        R1, t1 = job.pose1
        X = (X - t1) @ R1
    colors = None
    if job.image1 is not None:
        img = job.image1 if job.image1.ndim == 3 else job.image1[:, :, None].repeat(3, axis=2)
        colors = _sample_nearest(img[:, :, :3].astype(float), p1[idx])
        colors = np.nan_to_num(colors).clip(0, 255).astype(np.uint8)
    truth = None
    if gt_X is not None:
        truth = gt_X[idx]
    elif job.gt_points1 is not None:
        truth = _sample_nearest(job.gt_points1, p1[idx])
    metrics = {"input": job.label, "correspondences": len(p1),
               "tensor_inliers": int(mask.sum()), "noise_px": args.noise,
               "threshold_px": args.threshold,
               "cameras": "known" if job.intrinsics1 is None else "recovered from intrinsics"}
    metrics.update(reconstruction_metrics(X, truth, job.gt_cloud))
    args.out.mkdir(parents=True, exist_ok=True)
    write_ply(args.out / "points.ply", X, colors)
    write_matches(args.out / "matches.npz", p1[idx], p2[idx])
    write_json(args.out / "metrics.json", to_jsonable(metrics))
    print(f"{job.label}: {len(p1)} correspondences, {metrics['tensor_inliers']} tensor inliers, "
          f"{len(X)} points -> {args.out / 'points.ply'}")
    if args.preview:
        from .viz import preview_png

        w, h = job.image1.shape[1], job.image1.shape[0]
        scale = max(1.0, 480 / max(w, h))
        kw = {}
        if job.view_R is not None:  # from view 1: towards the camera, image y points down
            kw = {"front": -job.view_R[2], "up": -job.view_R[1]}
        preview = preview_png((X, colors), args.out / "preview.png",
                              (round(w * scale), round(h * scale)), **kw)
        print(f"preview ({preview.renderer}) in {preview.path}")
    if "median_3d_error" in metrics:
        rel = metrics.get("median_3d_error_rel")
        print(f"median 3D error {metrics['median_3d_error']:.4g}"
              + ("" if rel is None else f" ({rel:.3g} of the scene diameter)"))
    if "chamfer" in metrics:
        print(f"Chamfer distance {metrics['chamfer']:.4g} ({metrics.get('chamfer_rel', 0):.3g} "
              f"of the scene diameter {metrics['scene_diameter']:.4g}); accuracy "
              f"{metrics['accuracy']:.4g}, completeness {metrics['completeness']:.4g}")
    print(f"metrics in {args.out / 'metrics.json'}")
    return EXIT_OK


# -- view ----------------------------------------------------------------------------------
def _add_view(sub) -> None:
    p = sub.add_parser(
        "view", help="show a point cloud (a window, or a PNG without a display)",
        description="Show a PLY point cloud in Open3D's window when a display is reachable; "
                    "otherwise (or with --png) draw it into a PNG without a display (Open3D "
                    "offscreen, or a numpy renderer when that fails).")
    p.add_argument("cloud", type=_existing_file, metavar="PLY")
    p.add_argument("--png", type=Path, default=None, metavar="PNG",
                   help="write a PNG here instead of opening a window")
    p.add_argument("--size", type=_size, default=(1024, 768), metavar="WxH",
                   help="window or picture size (default 1024x768)")
    p.add_argument("--point-size", type=_real(positive=True), default=2.0, metavar="PX",
                   help="point size in pixels (default 2)")
    p.add_argument("--front", type=_numbers(3), default=None, metavar="X,Y,Z",
                   help="--png: direction from the cloud towards the viewer (default 0,0,1)")
    p.add_argument("--up", type=_numbers(3), default=None, metavar="X,Y,Z",
                   help="--png: up direction of the picture (default 0,1,0)")
    p.set_defaults(run=_run_view)


def _run_view(args) -> int:
    from .io.ply import read_ply

    if args.png is not None:
        _out_file(args, "--png", args.png, (".png",))
    for flag, v in (("--front", args.front), ("--up", args.up)):
        if v is not None and not np.any(v):
            raise _usage(args, f"{flag} must not be the zero vector")
    if args.png is None and (args.front is not None or args.up is not None):
        raise _usage(args, "--front and --up set the view of --png")
    try:
        read_ply(args.cloud)
    except ValueError as exc:
        raise _usage(args, f"PLY: {exc}") from None
    from .viz import preview_png, show

    try:
        if args.png is not None:
            kw = {k: v for k, v in (("front", args.front), ("up", args.up)) if v is not None}
            preview = preview_png(args.cloud, args.png, args.size, point_size=args.point_size,
                                  **kw)
            print(f"wrote {preview.path} ({preview.renderer})")
        else:
            show(args.cloud, title=f"xslit view {args.cloud.name}", size=args.size,
                 point_size=args.point_size)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return EXIT_OK


# -- the command ---------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The ``xslit`` argument parser (subcommands render, info, verify, mosaic, match,
    reconstruct, calibrate, view)."""
    from . import __version__

    p = _Parser(prog="xslit", allow_abbrev=False,
                description="Two-slit (crossed-slit) and pushbroom cameras from the shell: "
                            "render datasets, make mosaics from video, match features, "
                            "reconstruct point clouds, calibrate, view clouds.",
                epilog="Exit status: 0 ok, 1 the work failed, 2 bad usage, 130 interrupted. "
                       "Run `xslit COMMAND --help` for a command's flags.")
    p.add_argument("--version", action="version", version=f"xslit {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                           parser_class=_Parser)
    _add_render(sub)
    _add_mosaic(sub)
    _add_match(sub)
    _add_reconstruct(sub)
    _add_calibrate(sub)
    _add_view(sub)
    for action in sub.choices.values():
        action.allow_abbrev = False
    return p


def main(argv=None) -> int:
    """Run the ``xslit`` command; returns the exit status (see :data:`EXIT_USAGE` ...).

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``xslit`` (default ``sys.argv[1:]``).
    """
    # Quiet FFmpeg's own log lines (before OpenCV loads): unreadable videos get one line here.
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
    from .io.signals import Terminated, TerminationGuard, exit_code_for_interrupt

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        # SIGTERM and SIGHUP unwind like Ctrl-C, so that partial outputs are removed.
        with TerminationGuard():
            parser = build_parser()
            args = parser.parse_args(_join_negative_values(argv))
            args.prog = f"xslit {args.command}"
            return args.run(args)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except CommandError as exc:
        print(f"xslit: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt as exc:  # Ctrl-C: 130; SIGTERM: 143; SIGHUP: 129
        print(f"xslit: {exc if isinstance(exc, Terminated) else 'interrupted'}",
              file=sys.stderr)
        return exit_code_for_interrupt(exc)
    except OSError as exc:  # disk full, permissions, a folder that vanished
        print(f"xslit: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
