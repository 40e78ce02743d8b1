"""Validators for user input (``check_*``): each raises a ValueError naming the argument.

Public entry points call these once; the math kernels below them assume valid input.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "check_array",
    "check_camera_stack",
    "check_finite",
    "check_image_points",
    "check_matrix",
    "check_object_points",
    "check_positive_int",
    "check_rng",
    "check_skew_lines",
]


def _describe(a) -> str:
    if isinstance(a, np.ndarray):
        return f"array of shape {a.shape} and dtype {a.dtype}"
    return f"{type(a).__name__}"


def check_array(name: str, value, *, dtype=np.float64) -> np.ndarray:
    """Convert ``value`` to a numeric ndarray, rejecting object, string and complex input."""
    if value is None:
        raise ValueError(f"{name} must be an array, got None")
    try:
        a = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} must be a numeric array, got {type(value).__name__}") from exc
    if a.dtype == object or a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real numeric array, got {_describe(a)}")
    return a.astype(dtype, copy=False)


def check_finite(name: str, a: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(a)):
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
    if m.dtype == object or not (np.issubdtype(m.dtype, np.number) or m.dtype == bool):
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
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating,
                                                           np.integer)):
        raise ValueError(f"{name} must be a finite positive number of pixels, got {value!r}")
    if not np.isfinite(value) or value <= 0:
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
