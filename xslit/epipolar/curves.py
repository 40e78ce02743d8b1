r"""Epipolar curves: the two-slit analogue of epipolar lines (cv2.computeCorrespondEpilines).

Fixing the point :math:`(x, y)` of image 1 in the tensor equation (Theorem 1, with the index
convention of :mod:`xslit.epipolar.tensor`) leaves

.. math::

    \sum_{kl} G_{kl}\, [x', 1]_k\, [y', 1]_l = 0, \qquad
    G_{kl} = \sum_{ij} F_{ijkl}\, [x, 1]_i\, [y, 1]_j ,

which is bilinear in the point :math:`(x', y')` of image 2:

.. math:: a\, x' y' + b\, x' + c\, y' + d = 0, \qquad (a, b, c, d) = (G_{00}, G_{01}, G_{10},
          G_{11}) .

It is the image in camera 2 of the viewing ray of :math:`(x, y)`: a hyperbola whose asymptotes
are parallel to the image axes, :math:`x' = -c/a` and :math:`y' = -b/a` (projectively, a conic
through the points at infinity of both image axes), since

.. math:: (a x' + c)(a y' + b) = bc - ad .

With :math:`a = 0` it is a line; with :math:`bc = ad` it degenerates into its two asymptotes.
Points of image 2 give curves in image 1 the same way, contracting the last two modes.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_array, check_finite, check_image_points, check_matrix

__all__ = ["curve_distance", "curves_from_points", "polylines_from_curves"]


def curves_from_points(F, points, which_image: int = 1) -> np.ndarray:
    r"""Epipolar curves in the other image of points of image ``which_image``.

    .. math:: a\, x' y' + b\, x' + c\, y' + d = 0

    Parameters
    ----------
    F : (2, 2, 2, 2) array_like
        Epipolar tensor, ``F[i, j, k, l]`` with ``(i, j)`` for image 1 and ``(k, l)`` for
        image 2 (as :func:`xslit.computeEpipolarTensor` returns it).
    points : (N, 2) array_like
        Points ``(x, y)`` of image ``which_image`` ((N, 1, 2) accepted).
    which_image : {1, 2}
        1: curves in image 2 of points of image 1; 2: curves in image 1 of points of image 2.

    Returns
    -------
    curves : (N, 4) float64 ndarray
        Rows ``(a, b, c, d)`` scaled to unit norm; all zero where the point is singular for
        ``F`` (every point of the other image satisfies the equation).

    Examples
    --------
    A point of image 1 and its match in image 2 lie on each other's curves:

    >>> import xslit
    >>> from xslit.synthetic import random_two_view_scene
    >>> s = random_two_view_scene(0, n=5)
    >>> F = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    >>> curves = curves_from_points(F, s["points1"], 1)
    >>> bool(np.all(curve_distance(curves, s["points2"]) < 1e-6))
    True
    """
    F = check_matrix("F", F, (2, 2, 2, 2))
    points = check_image_points("points", points)
    if isinstance(which_image, bool) or which_image not in (1, 2):
        raise ValueError(f"which_image must be 1 or 2, got {which_image!r}")
    one = np.ones(len(points))
    x = np.stack([points[:, 0], one], axis=1)
    y = np.stack([points[:, 1], one], axis=1)
    subscripts = "ijkl,ni,nj->nkl" if which_image == 1 else "ijkl,nk,nl->nij"
    curves = np.einsum(subscripts, F, x, y).reshape(-1, 4)
    norm = np.linalg.norm(curves, axis=1, keepdims=True)
    return np.divide(curves, norm, out=np.zeros_like(curves), where=norm > 0)


def curve_distance(curves, points) -> np.ndarray:
    r"""First-order (Sampson) distance in pixels of each point to its curve.

    .. math:: \frac{|a x y + b x + c y + d|}{\|(a y + b,\; a x + c)\|}

    Parameters
    ----------
    curves : (N, 4) array_like
        Rows ``(a, b, c, d)`` as :func:`curves_from_points` returns them.
    points : (N, 2) array_like
        One point per curve.

    Returns
    -------
    distance : (N,) float64 ndarray
        ``inf`` where the gradient vanishes but the residual does not.

    Examples
    --------
    The curve x y = 1 (a = 1, d = -1) and the points (1, 1) and (2, 1):

    >>> curve_distance([[1, 0, 0, -1], [1, 0, 0, -1]], [[1, 1], [2, 1]]).round(3)
    array([0.   , 0.447])
    """
    curves = _check_rows("curves", curves, 4)
    points = check_image_points("points", points)
    if len(points) != len(curves):
        raise ValueError(f"points must have one row per curve ({len(curves)}), "
                         f"got {len(points)}")
    a, b, c, d = curves.T
    x, y = points.T
    e = a * x * y + b * x + c * y + d
    g = np.hypot(a * y + b, a * x + c)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(e == 0, 0.0, np.abs(e) / g)


#: Offsets of the extra samples around a hyperbola's vertices, in units of the vertex distance.
_VERTEX_OFFSETS = 2.0 ** (np.arange(-8, 9) / 2.0)


def _check_rows(name: str, value, width: int) -> np.ndarray:
    """A finite float64 ``(N, width)`` array ((width,) is read as one row)."""
    a = check_array(name, value)
    if a.ndim == 1 and a.shape[0] == width:
        a = a[None, :]
    if a.ndim == 3 and a.shape[1] == 1:
        a = a[:, 0, :]
    if a.ndim != 2 or a.shape[1] != width:
        raise ValueError(f"{name} must have shape (N, {width}), got {a.shape}")
    return check_finite(name, a)


def _check_image_size(image_size) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in image_size)
        ok = all(float(v) == int(v) for v in image_size)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"image_size must be a (width, height) pair of positive integers, "
                         f"got {image_size!r}") from exc
    if not ok or w < 1 or h < 1:
        raise ValueError(f"image_size must be a (width, height) pair of positive integers, "
                         f"got {image_size!r}")
    return w, h


def polylines_from_curves(curves, image_size, *, step: float = 1.0) -> list[list[np.ndarray]]:
    r"""Sample epipolar curves as polylines clipped to an image, one per branch.

    Each branch of the hyperbola :math:`(a x + c)(a y + b) = bc - ad` lies on one side of the
    vertical asymptote :math:`x = -c/a`; it is monotone (:math:`y` is a monotone function of
    :math:`x`), so its part inside the image is one piece, and no segment joins the two
    branches across the asymptote. A branch is sampled on the columns ``x = -0.5, -0.5 + step,
    ...`` (solving for :math:`y`) and on the rows (solving for :math:`x`), so consecutive
    vertices are at most ``step`` apart along each axis, however steep the curve. A line
    (:math:`a = 0`) is one piece; a degenerate curve (:math:`bc = ad`) gives its two
    asymptotes as separate pieces.

    Parameters
    ----------
    curves : (N, 4) array_like
        Rows ``(a, b, c, d)`` of :math:`a x y + b x + c y + d = 0`.
    image_size : (width, height)
        The image covers ``[-0.5, width - 0.5] x [-0.5, height - 0.5]`` (pixel centres at
        integer coordinates).
    step : float
        Largest spacing of vertices along each axis, in pixels.

    Returns
    -------
    polylines : list of N lists of (M, 2) float64 ndarray
        For each curve, its pieces inside the image (0, 1 or 2), vertices ``(x, y)`` in order
        along the curve.

    Examples
    --------
    The hyperbola (x - 50)(y - 40) = 100 in a 100 x 80 image has two branches:

    >>> pieces = polylines_from_curves([[1, -40, -50, 1900]], (100, 80))[0]
    >>> len(pieces), [bool(np.all(p[:, 0] > 50)) for p in pieces]
    (2, [False, True])
    """
    curves = _check_rows("curves", curves, 4)
    w, h = _check_image_size(image_size)
    if not (np.isfinite(step) and step > 0):
        raise ValueError(f"step must be a positive number of pixels, got {step!r}")
    lo_x, hi_x, lo_y, hi_y = -0.5, w - 0.5, -0.5, h - 0.5
    xg = np.linspace(lo_x, hi_x, int(np.ceil(w / step)) + 1)
    yg = np.linspace(lo_y, hi_y, int(np.ceil(h / step)) + 1)
    a, b, c, d = (v[:, None] for v in curves.T)
    k = b * c - a * d
    sk = np.sign(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        den_x = a * xg + c  # (N, Gx): solve for y on the columns
        y_of_x = -(b * xg + d) / den_x
        den_y = a * yg + b  # (N, Gy): solve for x on the rows
        x_of_y = -(c * yg + d) / den_y
    ok_x = (den_x != 0) & np.isfinite(y_of_x) & (y_of_x >= lo_y) & (y_of_x <= hi_y)
    ok_y = (den_y != 0) & np.isfinite(x_of_y) & (x_of_y >= lo_x) & (x_of_y <= hi_x)
    # Near the vertices x = -c/a +- sqrt|k|/|a| r, a branch turns fastest (a sharp corner when
    # k is small): sample them at geometric spacing r = 2^(j/2) too.
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(np.abs(k)) / np.abs(a) * _VERTEX_OFFSETS
        x_vertex = np.concatenate([-c / a + r, -c / a - r], axis=1)
        den_v = a * x_vertex + c
        y_vertex = -(b * x_vertex + d) / den_v
    ok_v = ((a != 0) & (sk != 0) & (den_v != 0) & np.isfinite(x_vertex) & np.isfinite(y_vertex)
            & (x_vertex >= lo_x) & (x_vertex <= hi_x) & (y_vertex >= lo_y) & (y_vertex <= hi_y))
    # The branch is the sign of (a x + c); on the curve it equals sign(k) sign(a y + b). An
    # exactly degenerate curve (k = 0) is its two asymptotes: the columns see the horizontal
    # one (label 2), the rows the vertical one (label -2).
    lab_x = np.where(sk != 0, np.sign(den_x), 2.0)
    lab_y = np.where(sk != 0, sk * np.sign(den_y), -2.0)
    ok = np.concatenate([ok_x, ok_y, ok_v], axis=1)
    label = np.where(ok, np.concatenate([lab_x, lab_y, np.sign(den_v)], axis=1), np.nan)
    xs = np.where(ok, np.concatenate([np.broadcast_to(xg, den_x.shape), x_of_y, x_vertex],
                                     axis=1), 0.0)
    ys = np.where(ok, np.concatenate([y_of_x, np.broadcast_to(yg, den_y.shape), y_vertex],
                                     axis=1), 0.0)
    # Along a branch x - sign(k) y increases strictly; a vertical asymptote is ordered by y.
    key = np.where(ok, np.where(label == -2.0, ys, xs - sk * ys), np.inf)
    order = np.lexsort((key, np.nan_to_num(label, nan=np.inf)))
    xs, ys, label = (np.take_along_axis(v, order, axis=1) for v in (xs, ys, label))
    polylines = []
    for n in range(len(curves)):
        valid = np.flatnonzero(~np.isnan(label[n]))
        runs = np.split(valid, np.flatnonzero(np.diff(label[n, valid])) + 1)
        polylines.append([np.stack([xs[n, r], ys[n, r]], axis=1) for r in runs if len(r)])
    return polylines
