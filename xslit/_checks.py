"""Validators for user input (``check_*``): each raises a ValueError naming the argument.

Public entry points call these once; the math kernels below them assume valid input.
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

__all__ = [
    "MAX_ARRAY_BYTES",
    "check_allocation",
    "check_array",
    "check_batch",
    "check_camera_stack",
    "check_finite",
    "check_image_points",
    "check_index_array",
    "check_matrix",
    "check_object_points",
    "check_path",
    "check_point_pair",
    "check_positive_int",
    "check_probability",
    "check_real",
    "check_rng",
    "check_rvec",
    "check_skew_lines",
    "check_vector",
    "format_bytes",
]

#: Largest working array an entry point agrees to allocate (8 GiB). Sizes beyond are refused
#: with a ValueError naming the argument and the memory it would need, before allocating, rather
#: than failing later with a MemoryError (or numpy's "array is too big") that names nothing.
MAX_ARRAY_BYTES = 8 << 30


def _describe(a) -> str:
    if isinstance(a, np.ndarray):
        return f"array of shape {a.shape} and dtype {a.dtype}"
    return f"{type(a).__name__}"


def check_array(name: str, value, *, dtype=np.float64, allow_bool: bool = False) -> np.ndarray:
    """Convert ``value`` to a numeric ndarray, rejecting object, string, complex and (unless
    ``allow_bool``) boolean input: a mask passed by mistake would otherwise be read as numbers
    0 and 1.

    Examples
    --------
    >>> check_array("A1", [[1, 2], [3, 4]]).dtype
    dtype('float64')
    >>> check_array("A1", np.eye(2) != 0)
    Traceback (most recent call last):
    ...
    ValueError: A1 must be a real numeric array, got an array of booleans (a mask?)
    """
    if value is None:
        raise ValueError(f"{name} must be an array, got None")
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a real numeric array, got {type(value).__name__} "
                         f"{value!r:.40}")
    try:
        a = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} must be a numeric array, got {type(value).__name__}") from exc
    if a.dtype == bool and not allow_bool:
        raise ValueError(f"{name} must be a real numeric array, got an array of booleans "
                         "(a mask?)")
    if a.dtype == object or a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real numeric array, got {_describe(a)}")
    return a if dtype is None else a.astype(dtype, copy=False)


def check_real(name: str, value, *, low: float = -np.inf, high: float = np.inf,
               low_open: bool = False, high_open: bool = False, nonzero: bool = False,
               what: str = "a finite real number") -> float:
    """A finite real scalar (a Python or numpy number, or a size-1 array; not a bool, not
    None) within ``[low, high]`` (open ends by ``low_open``, ``high_open``).

    Examples
    --------
    >>> check_real("fu", 800)
    800.0
    >>> check_real("fu", 0, low=0, low_open=True, what="a positive magnification")
    Traceback (most recent call last):
    ...
    ValueError: fu must be a positive magnification, got 0
    >>> check_real("fv", None)
    Traceback (most recent call last):
    ...
    ValueError: fv must be a finite real number, got None
    """
    if type(value) is float or type(value) is int:  # the common case, without the ABC test
        x = float(value)
    elif isinstance(value, (bool, np.bool_)) or value is None or isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    elif isinstance(value, numbers.Real):
        x = float(value)
    else:
        try:
            a = np.asarray(value)
        except Exception as exc:
            raise ValueError(f"{name} must be {what}, got {type(value).__name__}") from exc
        if a.dtype.kind not in "iuf" or a.size != 1:
            raise ValueError(f"{name} must be {what}, got {_describe(a)}")
        x = float(a.reshape(()))
    below = x <= low if low_open else x < low
    above = x >= high if high_open else x > high
    if not math.isfinite(x) or below or above or (nonzero and x == 0):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return x


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units: ``format_bytes(3 << 30) == '3.0 GiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    raise AssertionError("unreachable")


def check_allocation(name: str, value, nbytes: float, *, limit: int | None = None) -> None:
    """Refuse ``value`` of argument ``name`` when the arrays it implies need more than
    ``limit`` bytes (:data:`MAX_ARRAY_BYTES` by default), before anything is allocated.

    Examples
    --------
    >>> check_allocation("imageSize", (640, 480), 640 * 480 * 48)
    >>> check_allocation("imageSize", (50000, 50000), 50000 * 50000 * 48)
    Traceback (most recent call last):
    ...
    ValueError: imageSize must fit in 8.0 GiB of working memory, got (50000, 50000), which needs 111.8 GiB
    """
    limit = MAX_ARRAY_BYTES if limit is None else limit
    if nbytes > limit:
        raise ValueError(f"{name} must fit in {format_bytes(limit)} of working memory, "
                         f"got {value!r}, which needs {format_bytes(nbytes)}")


def check_path(name: str, value) -> str | os.PathLike:
    """A file-system path: ``str`` or ``os.PathLike`` (not None, not bytes or a number).

    Examples
    --------
    >>> check_path("path", None)
    Traceback (most recent call last):
    ...
    ValueError: path must be a path (str or os.PathLike), got None
    """
    if isinstance(value, str) and value:
        return value
    if isinstance(value, os.PathLike):
        return value
    raise ValueError(f"{name} must be a path (str or os.PathLike), got {value!r:.60}")


def check_index_array(name: str, value) -> np.ndarray:
    """An int64 array of indices: integer input, or floats holding whole numbers (as a file
    may store them); fractional, non-finite and out-of-int64 values are refused rather than
    truncated.

    Examples
    --------
    >>> check_index_array("triangles", [[0, 1, 2.0]])
    array([[0, 1, 2]])
    >>> check_index_array("triangles", [[0, 1, 2.5]])
    Traceback (most recent call last):
    ...
    ValueError: triangles must hold whole numbers (indices), got 1 fractional or non-finite entries
    """
    a = check_array(name, value, dtype=None)
    if a.dtype.kind in "iu":
        if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{name} must hold indices below 2**63, got {a.max()}")
        return a.astype(np.int64)
    bad = ~np.isfinite(a) | (a != np.round(a)) | (np.abs(a) >= 2.0 ** 63)
    if bad.any():
        raise ValueError(f"{name} must hold whole numbers (indices), got "
                         f"{int(np.count_nonzero(bad))} fractional or non-finite entries")
    return a.astype(np.int64)


def check_finite(name: str, a: np.ndarray) -> np.ndarray:
    if not np.isfinite(a).all():
        bad = int(np.count_nonzero(~np.isfinite(a)))
        raise ValueError(f"{name} must be finite, got {bad} NaN or inf entries")
    return a


def check_matrix(name: str, value, shape: tuple[int, ...], *, finite: bool = True) -> np.ndarray:
    """A float64 array of exactly ``shape``."""
    a = check_array(name, value)
    if a.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {a.shape}")
    if finite:
        check_finite(name, a)
    return a


def check_vector(name: str, value, size: int, *, finite: bool = True) -> np.ndarray:
    """A float64 ``(size,)`` vector; ``(size, 1)`` and ``(1, size)`` (cv2's layouts) are
    flattened.

    Examples
    --------
    >>> check_vector("rvec", [[0.1], [0.2], [0.3]], 3)
    array([0.1, 0.2, 0.3])
    """
    a = check_array(name, value)
    if a.size == size and a.ndim <= 2:
        a = a.reshape(size)
    if a.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {a.shape}")
    if finite:
        check_finite(name, a)
    return a


#: Largest rotation-vector norm accepted (radians): beyond, the angle modulo 2 pi is lost to
#: rounding and the Rodrigues formula overflows.
MAX_RVEC_NORM = 1e8


def check_rvec(name: str, value) -> np.ndarray:
    """A Rodrigues rotation vector, ``(3,)`` float64 (cv2's ``(3, 1)`` accepted), of norm at
    most :data:`MAX_RVEC_NORM`.

    Examples
    --------
    >>> check_rvec("rvec", [[0.0], [0.0], [1e300]])
    Traceback (most recent call last):
    ...
    ValueError: rvec must have a norm of at most 1e+08 radians (beyond, the angle is lost to rounding), got 1e+300
    """
    r = check_vector(name, value, 3)
    size = np.abs(r).max()
    if size > MAX_RVEC_NORM:
        raise ValueError(f"{name} must have a norm of at most {MAX_RVEC_NORM:.0e} radians "
                         f"(beyond, the angle is lost to rounding), got {size:.3g}")
    return r


def _check_points(name: str, value, dims: tuple[int, ...], min_count: int, label: str):
    a = check_array(name, value)
    if a.ndim == 3 and a.shape[1] == 1:  # OpenCV's (N, 1, d) layout
        a = a[:, 0, :]
    if a.ndim == 1 and a.shape[0] in dims:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] not in dims:
        want = " or ".join(f"(N, {d})" for d in dims)
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    if a.shape[0] < min_count:
        raise ValueError(
            f"{name} must have shape (N, {a.shape[1]}) with N >= {min_count} {label}, "
            f"got {a.shape}"
        )
    return check_finite(name, a)


def check_image_points(name: str, value, *, min_count: int = 0) -> np.ndarray:
    """Pixels as (N, 2) float64; (N, 1, 2) and a single (2,) point are accepted."""
    return _check_points(name, value, (2,), min_count, "points")


def check_object_points(name: str, value, *, min_count: int = 0) -> np.ndarray:
    """3D points as (N, 3) Euclidean or (N, 4) homogeneous float64 ((N, 1, 3) accepted)."""
    return _check_points(name, value, (3, 4), min_count, "points")


def check_positive_int(name: str, value, *, minimum: int = 1) -> int:
    if type(value) is int:  # the common case, without the abstract-class test (internal loops)
        if value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_rng(rng) -> np.random.Generator:
    """Normalise ``rng: None | int | numpy.random.Generator`` (no global state)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be None, an int seed or a numpy.random.Generator, got {rng!r}")


def check_mask(name, value, n):
    """Validate an inlier mask: ``(N,)`` or ``(N, 1)`` finite numbers or booleans, non-zero for
    inliers; all True when ``value`` is None.

    Parameters
    ----------
    name : str
        Argument name for the error message.
    value : (N,) or (N, 1) array_like or None
    n : int
        Expected N.

    Returns
    -------
    mask : (N,) bool ndarray

    Raises
    ------
    ValueError
        Naming ``name``, what was expected and what came.

    Examples
    --------
    >>> check_mask("mask", [[1], [0], [1]], 3)
    array([ True, False,  True])
    """
    if value is None:
        return np.ones(n, bool)
    m = np.asarray(value)
    if m.dtype == object or m.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be an (N,) or (N, 1) array of numbers or booleans with "
                         f"N = {n}, got dtype {m.dtype}")
    if m.shape not in ((n,), (n, 1)):
        raise ValueError(f"{name} must have shape ({n},) or ({n}, 1), got {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} must be finite (0 for outliers, non-zero for inliers), got "
                         f"{int(np.count_nonzero(~np.isfinite(m)))} non-finite entries")
    return m.reshape(n) != 0


def check_threshold(name: str, value) -> float:
    """Validate a threshold in pixels: a finite positive real number (not a bool).

    Examples
    --------
    >>> check_threshold("reprojThreshold", 2)
    2.0
    """
    if type(value) is not float and (isinstance(value, bool) or not isinstance(
            value, (numbers.Real, np.floating, np.integer))):
        raise ValueError(f"{name} must be a finite positive number of pixels, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite positive number of pixels, got {value!r}")
    return float(value)


def check_skew_lines(name1: str, line1, name2: str, line2, *, tol: float) -> None:
    r"""Raise a ValueError naming both arguments unless the Plücker lines ``line1`` and
    ``line2`` ``(6,)`` (direction and moment) are skew (:func:`xslit.geometry.plucker.lines_intersect` at ``tol``):
    the two slits of a camera must not meet.

    Examples
    --------
    >>> check_skew_lines("slit1", [1, 0, 0, 0, 0, 0], "slit2", [0, 1, 0, -1, 0, 0], tol=1e-12)
    >>> check_skew_lines("slit1", [1, 0, 0, 0, 0, 0], "slit2", [0, 1, 0, 0, 0, 0], tol=1e-12)
    Traceback (most recent call last):
    ...
    ValueError: slit1 and slit2 must be skew lines, got intersecting lines (a two-slit camera needs non-coplanar slits)
    """
    from .geometry.plucker import lines_intersect  # geometry imports nothing from here

    if lines_intersect(line1, line2, tol=tol):
        raise ValueError(f"{name1} and {name2} must be skew lines, got intersecting lines "
                         "(a two-slit camera needs non-coplanar slits)")


def check_camera_stack(name: str, value, *, min_count: int = 0) -> np.ndarray:
    """Two-slit cameras as an ``(n, 2, 2, 4)`` float64 stack of their ``(A1, A2)`` matrices.

    Accepts a list or tuple of camera objects (with ``A1`` and ``A2`` attributes) or of pairs
    ``(A1, A2)``, or an ``(n, 2, 2, 4)`` array. Boolean input is refused: a mask passed by
    mistake would otherwise be read as cameras of zeros and ones.

    Examples
    --------
    >>> A = [[[1, 0, 0, 0], [0, 0, 1, 0]], [[0, 1, 0, 0], [0, 0, 1, 1]]]
    >>> check_camera_stack("cameras", [A, A]).shape
    (2, 2, 2, 4)
    >>> check_camera_stack("cameras", "A1")
    Traceback (most recent call last):
    ...
    ValueError: cameras must be a list of two-slit cameras or pairs (A1, A2) of (2, 4) arrays, or an (n, 2, 2, 4) array, got str
    """
    if isinstance(value, (list, tuple)):
        pairs = [(c.A1, c.A2) if hasattr(c, "A1") and hasattr(c, "A2") else c for c in value]
    elif isinstance(value, np.ndarray):
        pairs = value
    else:
        raise ValueError(f"{name} must be a list of two-slit cameras or pairs (A1, A2) of (2, 4) "
                         f"arrays, or an (n, 2, 2, 4) array, got {type(value).__name__}")
    try:
        raw = np.asarray(pairs)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} must have shape (n, 2, 2, 4) (n pairs of 2x4 matrices), got "
                         "a ragged sequence") from exc
    if raw.dtype == bool:
        raise ValueError(f"{name} must hold real camera matrices, got a boolean array")
    a = check_array(name, raw)
    if a.ndim != 4 or a.shape[1:] != (2, 2, 4):
        raise ValueError(f"{name} must have shape (n, 2, 2, 4) (n pairs of 2x4 matrices), got "
                         f"{a.shape}")
    if a.shape[0] < min_count:
        raise ValueError(f"{name} must hold at least {min_count} cameras, got {a.shape[0]}")
    return check_finite(name, a)


def check_correspondences_2d3d(object_name: str, object_points, image_name: str,
                               image_points, *, min_count: int):
    """Validate 2D-3D correspondences: ``(N, 3)`` object points (``(N, 1, 3)`` accepted) and
    ``(N, 2)`` pixels (``(N, 1, 2)`` accepted), real (not boolean), finite, the same ``N``,
    at least ``min_count``.

    Returns
    -------
    X : (N, 3) float64 ndarray
    pixels : (N, 2) float64 ndarray

    Examples
    --------
    >>> X, px = check_correspondences_2d3d("objectPoints", np.zeros((7, 3)), "imagePoints",
    ...                                    np.zeros((7, 1, 2)), min_count=7)
    >>> X.shape, px.shape
    ((7, 3), (7, 2))
    >>> check_correspondences_2d3d("objectPoints", np.zeros((7, 3)), "imagePoints",
    ...                            np.zeros((6, 2)), min_count=6)
    Traceback (most recent call last):
    ...
    ValueError: objectPoints and imagePoints must have the same number of points, got 7 and 6
    """
    for name, value in ((object_name, object_points), (image_name, image_points)):
        try:
            is_bool = np.asarray(value).dtype == bool
        except ValueError:  # ragged input: check_array below says so
            is_bool = False
        if is_bool:
            raise ValueError(f"{name} must be a real numeric array, got an array of booleans")
    X = _check_points(object_name, object_points, (3,), min_count, "points")
    px = _check_points(image_name, image_points, (2,), min_count, "points")
    if len(X) != len(px):
        raise ValueError(f"{object_name} and {image_name} must have the same number of points, "
                         f"got {len(X)} and {len(px)}")
    return X, px


def check_batch(name: str, value, trailing: tuple[int, ...], *, batched: bool = True,
                finite: bool = True) -> np.ndarray:
    """A float64 array of shape ``(..., *trailing)`` (any leading batch dimensions when
    ``batched``, none otherwise), real (not boolean) and, with ``finite``, without NaN or inf.

    Examples
    --------
    >>> check_batch("F", np.zeros((5, 2, 2, 2, 2)), (2, 2, 2, 2)).shape
    (5, 2, 2, 2, 2)
    >>> check_batch("F", np.zeros((2, 2, 2)), (2, 2, 2, 2))
    Traceback (most recent call last):
    ...
    ValueError: F must have shape (..., 2, 2, 2, 2), got (2, 2, 2)
    """
    trailing = tuple(trailing)
    k = len(trailing)
    if type(value) is np.ndarray and value.dtype == np.float64 and value.ndim >= k and \
            value.shape[value.ndim - k:] == trailing and (batched or value.ndim == k) and \
            (not finite or np.isfinite(value).all()):
        return value  # the common case, checked in a few microseconds (kernels call this)
    a = check_array(name, value)
    if a.ndim < k or a.shape[a.ndim - k:] != trailing or (not batched and a.ndim != k):
        want = ", ".join(map(str, trailing))
        raise ValueError(f"{name} must have shape {'(..., ' if batched else '('}{want}), got "
                         f"{a.shape}")
    return check_finite(name, a) if finite else a


def check_point_pair(name1: str, points1, name2: str, points2, *,
                     min_count: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two pixel arrays ``(N, 2)`` float64 of one length ``N >= min_count`` (``(N, 1, 2)``
    accepted), real and finite.

    Examples
    --------
    >>> check_point_pair("points1", np.zeros((3, 2)), "points2", np.zeros((4, 2)))
    Traceback (most recent call last):
    ...
    ValueError: points1 and points2 must have the same number of points, got 3 and 4
    """
    p1 = check_image_points(name1, points1, min_count=min_count)
    p2 = check_image_points(name2, points2, min_count=min_count)
    if len(p1) != len(p2):
        raise ValueError(f"{name1} and {name2} must have the same number of points, got "
                         f"{len(p1)} and {len(p2)}")
    return p1, p2


def check_probability(name: str, value, *, open_low: bool = True,
                      open_high: bool = True) -> float:
    """A real number in ``(0, 1)`` (ends included when not open), not a bool.

    Examples
    --------
    >>> check_probability("confidence", 0.99)
    0.99
    >>> check_probability("confidence", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: confidence must be a probability in (0, 1), got 1.5
    """
    what = f"a probability in {'(' if open_low else '['}0, 1{')' if open_high else ']'}"
    return check_real(name, value, low=0.0, high=1.0, low_open=open_low, high_open=open_high,
                      what=what)
