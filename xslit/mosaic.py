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
:math:`(u, v) = (\tau, y)` is the two-slit projection (eq. (11))

.. math::

    A_1 = \sigma \begin{bmatrix} k_0^T - a e_3^T & 0 \\ b\, e_3^T & f_x s \end{bmatrix} T,\qquad
    A_2 = \begin{bmatrix} k_1^T & 0 \\ e_3^T & 0 \end{bmatrix} T,\qquad
    T = \begin{bmatrix} R & t \\ 0 & 1 \end{bmatrix}.

The slit of :math:`A_2` is :math:`\{Y_c = Z_c = 0\}`, the camera path; the slit of
:math:`A_1` is the line at depth :math:`Z^* = -f_x s / b` in the plane of column :math:`a`
of frame 0, parallel to the image columns. For :math:`b = 0` the second row of :math:`A_1` is
:math:`(0, 0, 0, f_x s)` and the mosaic is the pushbroom camera of eq. (18)
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

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from ._checks import check_matrix, check_positive_int, check_rvec, check_vector
from .cameras import PushbroomCamera, TwoSlitCamera
from .geometry.projective import matrix_from_rvec

__all__ = [
    "IMAGE_EXTENSIONS",
    "MosaicBuilder",
    "count_frames",
    "frame_files",
    "frames_from_source",
    "mosaic_camera",
    "mosaic_columns",
    "mosaic_from_frames",
    "natural_sort_key",
]

#: File extensions read as frames from a folder (in natural order of their names).
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
        Read one at a time, so a video can be streamed (e.g. :func:`frames_from_source`).
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
    if max_frames is not None:
        max_frames = check_positive_int("max_frames", max_frames)
    builder = MosaicBuilder(column, slope, strip_width=strip_width, descending=descending)
    for t, frame in enumerate(frames):
        if max_frames is not None and t >= max_frames:
            break
        builder.add(frame)
    return builder.result()


class MosaicBuilder:
    """Build one mosaic frame by frame, so that one pass over a video feeds several mosaics.

    :func:`mosaic_from_frames` is ``add`` on every frame, then ``result``.

    Parameters
    ----------
    column, slope : float
        Frame column ``column + slope * t`` is taken from frame ``t``.
    strip_width : int
    descending : bool
        See :func:`mosaic_columns`.

    Examples
    --------
    >>> pushbroom, xslit = MosaicBuilder(2.0), MosaicBuilder(0.0, 1.0)
    >>> for t in range(3):
    ...     frame = np.tile(np.arange(5.0) + 10 * t, (2, 1))  # value = column + 10 t
    ...     pushbroom.add(frame)
    ...     xslit.add(frame)
    >>> pushbroom.result()[0][0, :, 0], xslit.result()[0][0, :, 0]
    (array([ 2., 12., 22.]), array([ 0., 11., 22.]))
    """

    def __init__(self, column, slope=0.0, *, strip_width: int = 1, descending: bool = False):
        self.strip_width = check_positive_int("strip_width", strip_width)
        self.column = _check_scalar("column", column)
        self.slope = _check_scalar("slope", slope)
        self.descending = bool(descending)
        self._strips: list[np.ndarray] = []
        self._valid: list[np.ndarray] = []
        self._shape = self._dtype = None

    @property
    def n_frames(self) -> int:
        """Frames added so far."""
        return len(self._strips)

    def add(self, frame) -> None:
        """Take the column (or strip) of the next frame, an (H, W) or (H, W, C) image."""
        t = len(self._strips)
        f = np.asarray(frame)
        if f.ndim == 2:
            f = f[:, :, None]
        if f.ndim != 3 or f.dtype.kind not in "uif":
            raise ValueError(f"frames must be numeric (H, W) or (H, W, C) images, frame {t} is "
                             f"{f.dtype} {f.shape}")
        if self._shape is None:
            self._shape, self._dtype = f.shape, f.dtype
        elif f.shape != self._shape:
            raise ValueError(f"frames must all have the same shape, frame 0 is {self._shape} "
                             f"and frame {t} is {f.shape}")
        _, x = mosaic_columns(1, self.column + self.slope * t, 0.0,
                              strip_width=self.strip_width, descending=self.descending)
        strip, ok = _sample_columns(f, x)
        self._strips.append(strip)
        self._valid.append(ok)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mosaic, valid)`` as :func:`mosaic_from_frames` returns them."""
        if self._shape is None:
            raise ValueError("frames must hold at least one frame, got none")
        mosaic = np.concatenate(self._strips, axis=1)
        if self._dtype.kind in "ui":
            info = np.iinfo(self._dtype)
            mosaic = np.clip(np.rint(mosaic), info.min, info.max)
        return mosaic.astype(self._dtype), np.concatenate(self._valid)


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
    R = matrix_from_rvec(check_rvec("rvec", rvec))
    t = check_vector("tvec", tvec, 3)
    v = check_vector("velocity", velocity, 3)
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
def natural_sort_key(name: str) -> tuple:
    """Sort key that orders the digit runs of a name by value: ``2.png`` before ``10.png``.

    Examples
    --------
    >>> sorted(["10.png", "2.png", "1.png", "frame_9.png", "frame_10.png"], key=natural_sort_key)
    ['1.png', '2.png', '10.png', 'frame_9.png', 'frame_10.png']
    """
    parts = re.split(r"(\d+)", name.lower())
    # Odd positions hold the digit runs; ties between "01" and "1" fall back to the text.
    return (tuple((0, int(p)) if k % 2 else (1, p) for k, p in enumerate(parts)), name)


def frame_files(folder) -> list[Path]:
    """The images of a folder (extensions :data:`IMAGE_EXTENSIONS`) in natural order.

    Raises
    ------
    ValueError
        When the folder holds no image.
    """
    src = Path(folder)
    files = sorted((p for p in src.iterdir() if p.is_file()
                    and p.suffix.lower() in IMAGE_EXTENSIONS),
                   key=lambda p: natural_sort_key(p.name))
    if not files:
        raise ValueError(f"source folder {src} holds no images ({', '.join(IMAGE_EXTENSIONS)})")
    return files


def _check_range(start, stop, step) -> None:
    if start < 0 or step < 1 or (stop is not None and stop < start):
        raise ValueError(f"start, stop, step must satisfy 0 <= start <= stop and step >= 1, got "
                         f"{start}, {stop}, {step}")


def _open_video(src: Path):
    """An opened ``cv2.VideoCapture`` of a file, or ValueError."""
    import cv2

    if not src.is_file():
        raise ValueError(f"source {src} is neither a video file nor a folder of frames")
    cap = cv2.VideoCapture(str(src))
    if not cap.isOpened():
        raise ValueError(f"{src}: cannot be read as a video by OpenCV; pass a folder of frames "
                         "instead")
    return cap


def count_frames(source, *, start: int = 0, stop: int | None = None, step: int = 1
                 ) -> int | None:
    """Number of frames :func:`frames_from_source` yields, without decoding them.

    A folder is counted exactly; a video by the frame count in its header, which most
    containers (MP4, AVI, GIF) record: None when it does not.

    Examples
    --------
    >>> import tempfile, imageio.v3 as iio
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for k in range(1, 8):
    ...         iio.imwrite(f"{d}/{k}.png", np.zeros((2, 3), np.uint8))
    ...     count_frames(d, start=1, step=2)
    3
    """
    _check_range(start, stop, step)
    src = Path(source)
    if src.is_dir():
        return len(frame_files(src)[start:stop:step])
    import cv2

    cap = _open_video(src)
    try:
        total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    finally:
        cap.release()
    if total <= 0:
        return None
    return len(range(total)[start:stop:step])


def frames_from_source(source, *, start: int = 0, stop: int | None = None, step: int = 1
                       ) -> Iterator[np.ndarray]:
    """Iterate over the frames of a video file or a folder of images, decoding each once.

    Parameters
    ----------
    source : str or Path
        A video OpenCV reads (``cv2.VideoCapture``: MP4, AVI, MOV, animated GIF, ...), or a
        folder of images with extensions :data:`IMAGE_EXTENSIONS`, taken in the natural
        order of their names (``2.png`` before ``10.png``, see :func:`natural_sort_key`).
    start, stop, step : int
        Which frames to use, as in ``range(start, stop, step)``.

    Yields
    ------
    frame : (H, W) or (H, W, C) ndarray
        RGB(A) for colour (a video's BGR frames are converted).

    Raises
    ------
    ValueError
        When the source does not exist, holds no images, or cannot be decoded (raised when
        the first frame is requested, or at the first frame that fails).
    """
    _check_range(start, stop, step)
    src = Path(source)
    if src.is_dir():
        import imageio.v3 as iio

        for p in frame_files(src)[start:stop:step]:
            try:
                yield iio.imread(p)
            except Exception as exc:  # decoder errors come in many types
                raise ValueError(f"{p}: cannot be read as an image ({exc})") from None
        return
    import cv2

    cap = _open_video(src)
    try:
        k = 0
        while stop is None or k < stop:
            if k >= start and (k - start) % step == 0:
                ok, frame = cap.read()
                if not ok:
                    break
                if frame.ndim == 3 and frame.shape[2] == 3:
                    frame = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
                elif frame.ndim == 3 and frame.shape[2] == 4:
                    frame = cv2.cvtColor(frame, cv2.COLOR_BGRA2RGBA)
                yield frame
            elif not cap.grab():  # skipped frames are not converted
                break
            k += 1
        if k == 0 and stop != 0:
            raise ValueError(f"{src}: cannot be read as a video (no frame decodes); pass a "
                             "folder of frames instead")
    finally:
        cap.release()
