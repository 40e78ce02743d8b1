r"""Pushbroom and crossed-slit mosaics from the video of a sideways-translating pinhole camera.

Zomet, Feldman, Peleg and Weinshall, "Mosaicing new views: the crossed-slits projection",
PAMI 25(6), 2003: pasting one column of every frame side by side gives a *pushbroom* image when
the column is fixed, and a *crossed-slit* (two-slit) image when the column moves linearly with
the frame index.

Geometry (section 3 of the paper, derived here in the camera frame of frame 0). Frame
:math:`\tau` is the pinhole :math:`K [I \mid -\tau v_c]` in the coordinates
:math:`X_c = R X + t` of frame 0, with :math:`v_c = (s, 0, 0)`: the camera centre moves by
:math:`s` along its own x axis per frame (sideways, along the image rows). Frame :math:`\tau`
contributes image column :math:`x(\tau) = a + b\tau`. With rows :math:`k_0, k_1, k_2 = e_3` of
:math:`K`, a point is seen by that column when

.. math::

    k_0^T (X_c - \tau v_c) = (a + b\tau)\, Z_c
    \iff
    \tau = \frac{(k_0 - a e_3)^T X_c}{b Z_c + f_x s},

and, since :math:`v_c` has no y or z component, its row in that frame is
:math:`y = k_1^T X_c / Z_c` for every :math:`\tau`. So the mosaic pixel
:math:`(u, v) = (\tau, y)` is the two-slit projection (eq. two_slit_projective)

.. math::

    A_1 = \sigma \begin{bmatrix} k_0^T - a e_3^T & 0 \\ b\, e_3^T & f_x s \end{bmatrix} T,\qquad
    A_2 = \begin{bmatrix} k_1^T & 0 \\ e_3^T & 0 \end{bmatrix} T,\qquad
    T = \begin{bmatrix} R & t \\ 0 & 1 \end{bmatrix}.

The slit of :math:`A_2` is :math:`\{Y_c = Z_c = 0\}`, the camera path; the slit of
:math:`A_1` is the line at depth :math:`Z^* = -f_x s / b` in the plane of column :math:`a`
of frame 0, parallel to the image columns. For :math:`b = 0` the second row of :math:`A_1` is
:math:`(0, 0, 0, f_x s)` and the mosaic is the pushbroom camera of eq. pushbroom_standard
(slit at infinity). The sign :math:`\sigma` (of :math:`b`, or of :math:`s` when
:math:`b = 0`) orients the camera so that points far from the path are in front; when the
second slit lies in front of the path (:math:`Z^* > 0`), points between the path and the slit
also appear in the mosaic but are "behind" in the sense of :meth:`TwoSlitCamera.in_front`.

Strips ``w`` columns wide put columns ``x(t) + k - (w-1)/2`` (``k = 0..w-1``) of frame ``t`` at
mosaic columns ``w t + k``; the reported camera is then that of the continuous mosaic,
:math:`u = w\tau + (w-1)/2`, which the wide strips match exactly at their centres and
elsewhere only at the depth where the image moves ``w - b`` pixels per frame.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ._checks import check_array, check_matrix, check_positive_int
from .cameras import PushbroomCamera, TwoSlitCamera
from .geometry.projective import matrix_from_rvec

__all__ = [
    "IMAGE_EXTENSIONS",
    "frames_from_source",
    "main",
    "mosaic_camera",
    "mosaic_columns",
    "mosaic_from_frames",
]

#: File extensions read as frames from a folder (sorted by name).
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")

#: Relative size of the components of the motion off the camera's x axis that are accepted.
SIDEWAYS_TOL = 1e-6


def _check_scalar(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def mosaic_columns(n_frames: int, column, slope=0.0, *, strip_width: int = 1,
                   descending: bool = False) -> tuple[np.ndarray, np.ndarray]:
    r"""Which frame and which (sub-pixel) frame column feed each mosaic column.

    Mosaic column ``m = w t + k`` (``k = 0..w-1``) takes column
    ``x = column + slope * t + (k - (w - 1) / 2)`` of frame ``t`` (``-`` instead of ``+`` before
    the strip offset when ``descending``).

    Parameters
    ----------
    n_frames : int
    column : float
        ``a``: the column of frame 0 (pixel centres are at integer ``x``).
    slope : float
        ``b``: columns per frame (0 gives a pushbroom mosaic).
    strip_width : int
    descending : bool
        Reverse the order of the columns inside a strip (for a camera moving towards its -x).

    Returns
    -------
    frame : (n_frames * strip_width,) int ndarray
    x : (n_frames * strip_width,) float64 ndarray

    Examples
    --------
    >>> mosaic_columns(3, 10.0, 0.5)
    (array([0, 1, 2]), array([10. , 10.5, 11. ]))
    """
    n = check_positive_int("n_frames", n_frames)
    w = check_positive_int("strip_width", strip_width)
    a = _check_scalar("column", column)
    b = _check_scalar("slope", slope)
    t = np.repeat(np.arange(n), w)
    k = np.tile(np.arange(w), n) - (w - 1) / 2.0
    x = a + b * t + (-k if descending else k)
    return t, x


def mosaic_from_frames(frames: Iterable, column, slope=0.0, *, strip_width: int = 1,
                       descending: bool = False, max_frames: int | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    r"""Paste a (sub-pixel) column, or a strip, of every frame side by side.

    ``slope = 0`` gives the pushbroom mosaic, ``slope != 0`` the crossed-slit mosaic; see
    :func:`mosaic_camera` for the camera of the result. A column between pixel centres is
    interpolated linearly from its two neighbours.

    .. math:: M[:, m] = (1 - f)\, I_t[:, \lfloor x \rfloor] + f\, I_t[:, \lfloor x \rfloor + 1],
              \quad f = x - \lfloor x \rfloor

    with ``t, x`` from :func:`mosaic_columns`.

    Parameters
    ----------
    frames : (T, H, W) or (T, H, W, C) array_like, or an iterable of (H, W[, C]) frames
        Read one at a time, so a video can be streamed (e.g. ``imageio.v3.imiter``).
    column, slope : float
        Frame column ``column + slope * t`` is taken from frame ``t``.
    strip_width : int
        Columns per frame (default 1).
    descending : bool
        See :func:`mosaic_columns`.
    max_frames : int, optional
        Stop after this many frames.

    Returns
    -------
    mosaic : (H, T * strip_width, C) ndarray
        Same dtype as the frames (rounded for integer types); ``C = 1`` for grey frames given
        as (H, W). Columns outside the frames are zero.
    valid : (T * strip_width,) bool ndarray
        Which mosaic columns lie inside the frames (``0 <= x <= W - 1``).

    Examples
    --------
    >>> frames = np.tile(np.arange(5.0), (4, 2, 1))  # 4 frames, 2 rows, value = column index
    >>> mosaic, valid = mosaic_from_frames(frames, 0.5, 1.0)
    >>> mosaic[0, :, 0], valid
    (array([0.5, 1.5, 2.5, 3.5]), array([ True,  True,  True,  True]))
    """
    w = check_positive_int("strip_width", strip_width)
    a = _check_scalar("column", column)
    b = _check_scalar("slope", slope)
    if max_frames is not None:
        max_frames = check_positive_int("max_frames", max_frames)
    strips, valids = [], []
    shape = dtype = None
    for t, frame in enumerate(frames):
        if max_frames is not None and t >= max_frames:
            break
        f = np.asarray(frame)
        if f.ndim == 2:
            f = f[:, :, None]
        if f.ndim != 3 or f.dtype.kind not in "uif":
            raise ValueError(f"frames must be numeric (H, W) or (H, W, C) images, frame {t} is "
                             f"{f.dtype} {f.shape}")
        if shape is None:
            shape, dtype = f.shape, f.dtype
        elif f.shape != shape:
            raise ValueError(f"frames must all have the same shape, frame 0 is {shape} and "
                             f"frame {t} is {f.shape}")
        _, x = mosaic_columns(1, a + b * t, 0.0, strip_width=w, descending=descending)
        strip, ok = _sample_columns(f, x)
        strips.append(strip)
        valids.append(ok)
    if shape is None:
        raise ValueError("frames must hold at least one frame, got none")
    mosaic = np.concatenate(strips, axis=1)
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        mosaic = np.clip(np.rint(mosaic), info.min, info.max)
    return mosaic.astype(dtype), np.concatenate(valids)


def _sample_columns(frame: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns ``x`` (float) of an (H, W, C) frame by linear interpolation; zeros outside."""
    W = frame.shape[1]
    eps = 1e-9
    ok = (x >= -eps) & (x <= W - 1 + eps)
    xc = np.clip(x, 0, W - 1)
    j0 = np.minimum(np.floor(xc).astype(int), max(W - 2, 0))
    f = (xc - j0)[None, :, None]
    j1 = np.minimum(j0 + 1, W - 1)
    out = (1 - f) * frame[:, j0].astype(np.float64) + f * frame[:, j1].astype(np.float64)
    out[:, ~ok] = 0
    return out, ok


def _check_K(K) -> np.ndarray:
    K = check_matrix("K", K, (3, 3))
    if K[2, 2] == 0:
        raise ValueError(f"K must have K[2, 2] != 0, got {K.tolist()}")
    K = K / K[2, 2]
    if abs(K[1, 0]) > 0 or abs(K[2, 0]) > 0 or abs(K[2, 1]) > 0:
        raise ValueError(f"K must be upper triangular (a pinhole calibration matrix), got "
                         f"{K.tolist()}")
    if K[0, 0] <= 0 or K[1, 1] <= 0:
        raise ValueError(f"K must have positive focal lengths K[0, 0], K[1, 1], got {K.tolist()}")
    return K


def mosaic_camera(K, rvec, tvec, velocity, column, slope=0.0, *, strip_width: int = 1):
    r"""The exact camera of a pushbroom or crossed-slit mosaic (module docstring).

    Frame ``t`` of the video is the pinhole camera ``K [R | tvec - t R velocity]``
    (``R = matrix_from_rvec(rvec)``): its centre moves by ``velocity`` per frame, which must be
    along the camera's x axis (the image rows). Mosaic pixel ``(u, v)`` is frame row ``v`` of
    the column :func:`mosaic_from_frames` takes at (continuous) frame time
    ``t = (u - (w - 1) / 2) / w``.

    Parameters
    ----------
    K : (3, 3) array_like
        Pinhole intrinsics of the frames (upper triangular; skew allowed).
    rvec, tvec : (3,) array_like
        cv2 pose of frame 0 (world to camera).
    velocity : (3,) array_like
        World displacement of the camera centre per frame, parallel to ``R.T @ (1, 0, 0)``.
    column, slope : float
        ``a``, ``b``: frame ``t`` contributes column ``a + b t``.
    strip_width : int
        ``w``, as in :func:`mosaic_from_frames`.

    Returns
    -------
    TwoSlitCamera or PushbroomCamera
        A :class:`PushbroomCamera` when ``slope == 0``.

    Examples
    --------
    A camera moving 0.1 along x per frame, taking column 40 + 0.5 t:

    >>> K = [[100, 0, 80], [0, 100, 60], [0, 0, 1]]
    >>> cam = mosaic_camera(K, [0, 0, 0], [0, 0, 0], [0.1, 0, 0], 40.0, 0.5)
    >>> X = [[0.1 * 10 + (40 + 0.5 * 10 - 80) / 100 * 5, 0.3, 5.0]]  # seen at t = 10
    >>> np.round(cam.project(X), 9)
    array([[10., 66.]])
    """
    K = _check_K(K)
    R = matrix_from_rvec(check_matrix("rvec", np.ravel(check_array("rvec", rvec)), (3,)))
    t = check_matrix("tvec", np.ravel(check_array("tvec", tvec)), (3,))
    v = check_matrix("velocity", np.ravel(check_array("velocity", velocity)), (3,))
    a = _check_scalar("column", column)
    b = _check_scalar("slope", slope)
    w = check_positive_int("strip_width", strip_width)
    vc = R @ v
    speed = np.linalg.norm(vc)
    if speed == 0:
        raise ValueError("velocity must be non-zero (the camera must move), got (0, 0, 0)")
    if np.hypot(vc[1], vc[2]) > SIDEWAYS_TOL * speed:
        raise ValueError(
            "velocity must be along the camera's x axis (sideways motion along the image rows); "
            f"in camera coordinates it is {vc.tolist()}. Rectify the frames or rotate the pose "
            "so that the motion is along x: otherwise the mosaic is not a two-slit image")
    s = vc[0]
    e3 = np.array([0.0, 0.0, 1.0])
    T = np.vstack([np.hstack([R, t[:, None]]), [0.0, 0.0, 0.0, 1.0]])
    A1c = np.array([np.append(K[0] - a * e3, 0.0), np.append(b * e3, K[0, 0] * s)])
    A1c = np.array([[w, (w - 1) / 2.0], [0.0, 1.0]]) @ A1c
    sigma = np.sign(b) if b != 0 else np.sign(s)
    A1 = sigma * A1c @ T
    A2 = np.array([np.append(K[1], 0.0), np.append(e3, 0.0)]) @ T
    if b == 0:
        return PushbroomCamera(A1, A2)
    return TwoSlitCamera(A1, A2)


# -- reading frames -------------------------------------------------------------------------
def frames_from_source(source, *, start: int = 0, stop: int | None = None, step: int = 1):
    """Iterate over the frames of a video file or a folder of images (sorted by file name).

    Parameters
    ----------
    source : str or Path
        A video or animated image imageio can read (its available plugins decide which
        formats: GIF, multi-page TIFF, and MP4/AVI with imageio-ffmpeg or PyAV), or a folder
        of images with extensions :data:`IMAGE_EXTENSIONS`.
    start, stop, step : int
        Which frames to use, as in ``range(start, stop, step)``.

    Yields
    ------
    frame : (H, W) or (H, W, C) ndarray
    """
    import imageio.v3 as iio

    src = Path(source)
    if start < 0 or step < 1 or (stop is not None and stop < start):
        raise ValueError(f"start, stop, step must satisfy 0 <= start <= stop and step >= 1, got "
                         f"{start}, {stop}, {step}")
    if src.is_dir():
        files = sorted(p for p in src.iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS)
        if not files:
            raise ValueError(f"source folder {src} holds no images ({', '.join(IMAGE_EXTENSIONS)})")
        for p in files[start:stop:step]:
            try:
                yield iio.imread(p)
            except Exception as exc:  # decoder errors come in many types
                raise ValueError(f"{p}: cannot be read as an image ({exc})") from None
        return
    if not src.is_file():
        raise ValueError(f"source {src} is neither a video file nor a folder of frames")
    try:
        frames = iio.imiter(src)
        for k, frame in enumerate(frames):
            if stop is not None and k >= stop:
                break
            if k >= start and (k - start) % step == 0:
                yield frame
    except ValueError:
        raise
    except Exception as exc:  # missing plugin, unknown format, corrupt file
        raise ValueError(f"{src}: cannot be read as a video by imageio ({exc}); install "
                         "imageio-ffmpeg or av for MP4/AVI, or pass a folder of frames") from None


# -- command line -------------------------------------------------------------------------
def _floats(text: str, n: int, name: str) -> np.ndarray:
    try:
        vals = np.array([float(x) for x in text.split(",")])
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name} must be {n} comma-separated numbers") from None
    if len(vals) != n:
        raise argparse.ArgumentTypeError(f"{name} must be {n} comma-separated numbers, got "
                                         f"{len(vals)}")
    return vals


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="make_mosaic",
        description="Pushbroom and crossed-slit mosaics from the video of a sideways-moving "
                    "camera (Zomet et al., PAMI 2003). Writes pushbroom.png and xslit.png; with "
                    "--K and --speed (or --velocity) also the exact camera of each mosaic as "
                    "JSON (the dataset camera-file format).")
    p.add_argument("source", help="video file (any format imageio reads) or folder of frames")
    p.add_argument("--out-dir", required=True, type=Path, help="output folder")
    p.add_argument("--kind", choices=("both", "pushbroom", "xslit"), default="both")
    p.add_argument("--column", type=float, default=None,
                   help="pushbroom column (default: the image centre (W-1)/2)")
    p.add_argument("--xslit-start", type=float, default=None,
                   help="crossed-slit column in the first frame (default 0)")
    p.add_argument("--xslit-end", type=float, default=None,
                   help="crossed-slit column in the last frame (default W-1)")
    p.add_argument("--slope", type=float, default=None,
                   help="crossed-slit columns per frame (overrides --xslit-end)")
    p.add_argument("--strip-width", type=int, default=1)
    p.add_argument("--descending", action="store_true",
                   help="reverse columns inside strips (camera moving towards its -x)")
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--stop", type=int, default=None)
    p.add_argument("--step", type=int, default=1)
    p.add_argument("--K", type=lambda s: _floats(s, 4, "--K"), default=None,
                   metavar="FX,FY,CX,CY", help="pinhole intrinsics of the frames")
    p.add_argument("--speed", type=float, default=None,
                   help="camera displacement per frame along its own +x axis")
    p.add_argument("--velocity", type=lambda s: _floats(s, 3, "--velocity"), default=None,
                   metavar="VX,VY,VZ", help="world displacement per frame (instead of --speed)")
    p.add_argument("--rvec", type=lambda s: _floats(s, 3, "--rvec"), default=np.zeros(3),
                   metavar="RX,RY,RZ", help="cv2 pose of frame 0 (default identity)")
    p.add_argument("--tvec", type=lambda s: _floats(s, 3, "--tvec"), default=np.zeros(3),
                   metavar="TX,TY,TZ")
    return p


def main(argv=None) -> int:
    """``python -m xslit.mosaic`` / ``tools/make_mosaic.py``; returns the exit status."""
    import imageio.v3 as iio

    from .io.jsonio import write_json

    args = _parser().parse_args(argv)

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
            print(f"error: {exc}", file=sys.stderr)
            return 2
    elif args.K is not None or args.speed is not None or args.velocity is not None:
        print("error: the mosaic camera needs both --K and --speed (or --velocity)",
              file=sys.stderr)
        return 2

    def frames():  # streamed again for each mosaic: a long video never sits in memory
        return frames_from_source(args.source, start=args.start, stop=args.stop,
                                  step=args.step)

    try:
        n, W = 0, None
        for f in frames():
            n, W = n + 1, np.asarray(f).shape[1]
        if n == 0:
            raise ValueError(f"source {args.source} gives no frames in the selected range")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    jobs = []
    if args.kind in ("both", "pushbroom"):
        jobs.append(("pushbroom", (W - 1) / 2 if args.column is None else args.column, 0.0))
    if args.kind in ("both", "xslit"):
        a = 0.0 if args.xslit_start is None else args.xslit_start
        end = W - 1.0 if args.xslit_end is None else args.xslit_end
        b = args.slope if args.slope is not None else (end - a) / max(n - 1, 1)
        jobs.append(("xslit", a, b))
    for name, a, b in jobs:
        try:
            mosaic, valid = mosaic_from_frames(frames(), a, b, strip_width=args.strip_width,
                                               descending=args.descending)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        img = mosaic[:, :, 0] if mosaic.shape[2] == 1 else mosaic
        iio.imwrite(args.out_dir / f"{name}.png", img)
        msg = (f"{name}: {img.shape[1]}x{img.shape[0]} from {n} frames, column {a:g} + "
               f"{b:g} t, {int(valid.sum())}/{len(valid)} valid columns")
        if motion is not None:
            cam = mosaic_camera(*motion, a, b, strip_width=args.strip_width)
            write_json(args.out_dir / f"{name}.json", {
                "camera": cam.to_dict(), "image_size": [int(img.shape[1]), int(img.shape[0])],
                "meta": {"mosaic": {"column": a, "slope": b, "strip_width": args.strip_width,
                                    "frames": int(n), "source": str(args.source)}}})
            msg += f"; camera in {name}.json ({cam.model})"
        print(msg)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
