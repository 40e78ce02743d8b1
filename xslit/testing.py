r"""Assertions for tests of projective objects (used by xslit's own tests and by downstream code).

Projective objects (homogeneous points, planes, Plücker lines, camera matrices, homographies,
epipolar tensors) are defined up to a non-zero scale. :func:`projective_distance` measures how far
two arrays are from being proportional, and :func:`assert_allclose_up_to_scale` turns it into an
assertion with a relative tolerance.

The distance of ``a`` from the line spanned by ``b`` is

.. math:: \delta(a, b) = \frac{\| a - s b \|}{\| a \|}, \qquad
          s = \frac{\langle a, b \rangle}{\langle b, b \rangle},

the sine of the angle between the two vectors: 0 when they are proportional (with either sign),
1 when they are orthogonal. With ``positive=True`` a negative ``s`` counts as a mismatch (use it
when the sign carries meaning, as the sign of a two-slit camera's matrices carries cheirality).
"""

from __future__ import annotations

import numpy as np

__all__ = ["assert_allclose_up_to_scale", "projective_distance"]


def projective_distance(a, b, *, axis=None, positive: bool = False) -> np.ndarray:
    """Sine of the angle between ``a`` and ``b`` seen as vectors, per slice along ``axis``.

    Parameters
    ----------
    a, b : array_like, same shape
    axis : None or int or tuple of int
        Axes that form one projective object. None: the whole array is one object (one scale);
        ``-1``: every vector along the last axis has its own scale (e.g. ``(N, 6)`` lines).
    positive : bool
        If True, proportionality with a negative factor gives a distance of at least 1.

    Returns
    -------
    distance : ndarray (a float for ``axis=None``)
        0 for proportional inputs, 0 when both are zero, 1 when exactly one is zero, NaN
        where an input is not finite.

    Examples
    --------
    >>> float(projective_distance([1.0, 2.0, 3.0], [-2.0, -4.0, -6.0]))
    0.0
    >>> float(projective_distance([1.0, 2.0, 3.0], [-2.0, -4.0, -6.0], positive=True))
    1.0
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    if axis is None:
        axis = tuple(range(a.ndim))
    ab = np.sum(a * b, axis=axis)
    aa = np.sum(a * a, axis=axis)
    bb = np.sum(b * b, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # Residual computed explicitly (1 - cos^2 would lose half the digits).
        s = np.expand_dims(ab / bb, axis) if a.ndim else ab / bb
        r = a - s * b
        dist = np.sqrt(np.sum(r * r, axis=axis) / aa)
    dist = np.where((aa == 0) & (bb == 0), 0.0, dist)
    dist = np.where((aa == 0) != (bb == 0), 1.0, dist)
    if positive:
        dist = np.where(ab < 0, np.maximum(dist, 1.0), dist)
    bad = ~(np.isfinite(aa) & np.isfinite(bb))
    dist = np.where(bad, np.nan, dist)
    return dist[()] if np.ndim(dist) == 0 else dist


def assert_allclose_up_to_scale(actual, desired, rtol: float = 1e-9, *, axis=None,
                                positive: bool = False, err_msg: str = "") -> None:
    """Assert that ``actual`` equals ``desired`` up to a non-zero scale (and sign).

    Parameters
    ----------
    actual, desired : array_like, same shape
    rtol : float
        Largest allowed :func:`projective_distance` (relative error after the best scale).
    axis : None or int or tuple of int
        As in :func:`projective_distance`: None for one scale for the whole array, ``-1`` for a
        scale per vector along the last axis.
    positive : bool
        Require the scale to be positive.
    err_msg : str
        Prepended to the failure message.

    Raises
    ------
    AssertionError
        With the worst distance and, for batches, how many objects failed.

    Examples
    --------
    >>> H = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    >>> assert_allclose_up_to_scale(-3.0 * H, H)
    >>> try:
    ...     assert_allclose_up_to_scale(H + 1e-3, H, rtol=1e-9)
    ... except AssertionError:
    ...     print("differs")
    differs
    """
    dist = np.atleast_1d(projective_distance(actual, desired, axis=axis, positive=positive))
    bad = ~(dist <= rtol)  # NaN counts as a failure
    if np.any(bad):
        worst = np.nanmax(dist) if np.any(np.isfinite(dist)) else np.nan
        where = ""
        if dist.size > 1:
            idx = np.flatnonzero(bad)
            where = f" ({idx.size} of {dist.size} objects differ; first at index {idx[0]})"
        sign = " or the scale is negative" if positive else ""
        msg = (f"not equal up to scale: projective distance {worst:.6g} > rtol {rtol:g}"
               f"{sign}{where}")
        raise AssertionError(f"{err_msg}: {msg}" if err_msg else msg)
