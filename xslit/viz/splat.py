r"""A numpy software renderer for point clouds: projected square splats with a z-buffer.

It needs no OpenGL, so a preview can always be made. The camera looks at the centre of the
cloud's bounding box from the direction ``front`` (Open3D's convention: ``front`` points from
the scene towards the camera), with ``up`` as the image's upward direction; the cloud's
bounding sphere fills ``fill`` of the shorter image side.

.. math::

    u = \frac{w}{2} + f \frac{x_c}{z_c}, \qquad v = \frac{h}{2} - f \frac{y_c}{z_c},
    \qquad f = \frac{h / 2}{\tan(\mathrm{fov} / 2)}

for the perspective projection (``x_c`` right, ``y_c`` up, ``z_c`` the depth along the viewing
direction), and ``u = w/2 + s x_c``, ``v = h/2 - s y_c`` for the orthographic one. Each point
covers a ``point_size`` by ``point_size`` square of pixels; the nearest point wins each pixel.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DEFAULT_POINT_COLOR", "look_at_frame", "render_points"]

#: Colour (float RGB in [0, 1]) of points without colours, in both renderers.
DEFAULT_POINT_COLOR = (0.15, 0.35, 0.75)


def _unit(name: str, v) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    n = np.linalg.norm(a) if a.shape == (3,) else 0.0
    if not np.isfinite(n) or n == 0:
        raise ValueError(f"{name} must be a non-zero finite 3-vector, got {v!r}")
    return a / n


def look_at_frame(points, front=(0.0, 0.0, 1.0), up=(0.0, 1.0, 0.0), *, fov_deg=60.0,
                  fill=0.9):
    """The camera of a preview: centre, radius, eye and the right, up, viewing axes.

    Parameters
    ----------
    points : (N, 3) ndarray
    front : (3,) array_like
        From the cloud towards the camera.
    up : (3,) array_like
        Upward in the image (made orthogonal to ``front``).
    fov_deg : float
        Vertical field of view of the perspective camera.
    fill : float
        Fraction of the shorter image side covered by the sphere around 99% of the points
        (the few farthest may fall outside the picture).

    Returns
    -------
    frame : dict
        ``center``, ``radius``, ``eye``, ``right``, ``up``, ``view`` (unit vectors), ``fov_deg``
        and ``fill``.
    """
    f = _unit("front", front)
    u = _unit("up", up)
    view = -f
    right = np.cross(view, u)
    if np.linalg.norm(right) < 1e-9:
        raise ValueError(f"up must not be parallel to front, got up={up!r}, front={front!r}")
    right /= np.linalg.norm(right)
    true_up = np.cross(right, view)
    if len(points):
        # Framed on the bulk of the cloud: a few stray points (a triangulated mismatch far
        # behind the scene) must not shrink everything else to a speck.
        lo, hi = np.percentile(points, [1.0, 99.0], axis=0)
        center = (lo + hi) / 2
        radius = float(np.percentile(np.linalg.norm(points - center, axis=1), 99.0))
    else:
        center, radius = np.zeros(3), 1.0
    radius = radius if radius > 0 else 1.0
    dist = radius / np.sin(np.radians(fov_deg) / 2) / fill
    return {"center": center, "radius": radius, "eye": center + f * dist, "right": right,
            "up": true_up, "view": view, "fov_deg": float(fov_deg), "fill": float(fill)}


def render_points(points, colors=None, size=(640, 480), *, front=(0.0, 0.0, 1.0),
                  up=(0.0, 1.0, 0.0), point_size=2, background=(1.0, 1.0, 1.0),
                  projection="perspective", fov_deg=60.0, fill=0.9) -> np.ndarray:
    """Render a point cloud to an RGB image with numpy (no OpenGL).

    Parameters
    ----------
    points : (N, 3) float ndarray
    colors : (N, 3) float ndarray in [0, 1], optional
        Defaults to :data:`DEFAULT_POINT_COLOR`.
    size : (int, int)
        ``(width, height)`` in pixels.
    front, up : (3,) array_like
        Viewing direction (from the cloud towards the camera) and image up, as Open3D's
        ``ViewControl.set_front`` and ``set_up``.
    point_size : int
        Side of each point's square in pixels.
    background : (3,) floats in [0, 1]
    projection : {"perspective", "orthographic"}
    fov_deg : float
        Vertical field of view of the perspective projection.
    fill : float
        Fraction of the shorter image side covered by the sphere around 99% of the points
        (the few farthest may fall outside the picture).

    Returns
    -------
    image : (height, width, 3) uint8 ndarray

    Examples
    --------
    >>> img = render_points(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]), size=(8, 6))
    >>> img.shape, bool((img != 255).any())
    ((6, 8, 3), True)
    """
    P = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    w, h = (int(s) for s in size)
    if projection not in ("perspective", "orthographic"):
        raise ValueError(f"projection must be 'perspective' or 'orthographic', got "
                         f"{projection!r}")
    bg = np.round(np.clip(np.asarray(background, dtype=np.float64), 0, 1) * 255).astype(np.uint8)
    image = np.empty((h, w, 3), np.uint8)
    image[:] = bg
    if not len(P):
        return image
    C = (np.broadcast_to(DEFAULT_POINT_COLOR, P.shape) if colors is None
         else np.asarray(colors, dtype=np.float64))
    C8 = np.round(np.clip(C, 0, 1) * 255).astype(np.uint8)
    fr = look_at_frame(P, front, up, fov_deg=fov_deg, fill=fill)
    rel = P - fr["eye"]
    xc, yc, zc = rel @ fr["right"], rel @ fr["up"], rel @ fr["view"]
    if projection == "perspective":
        f = (h / 2) / np.tan(np.radians(fov_deg) / 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            u, v = w / 2 + f * xc / zc, h / 2 - f * yc / zc
        keep = zc > 1e-9 * fr["radius"]
    else:
        s = fill * min(w, h) / 2 / fr["radius"]
        u, v = w / 2 + s * xc, h / 2 - s * yc
        keep = np.ones(len(P), bool)
    k = max(round(float(point_size)), 1)
    offsets = np.arange(k) - (k - 1) // 2
    dx, dy = (a.ravel() for a in np.meshgrid(offsets, offsets))
    idx = np.flatnonzero(keep & np.isfinite(u) & np.isfinite(v))
    ui = (np.floor(u[idx])[:, None] + dx).ravel()
    vi = (np.floor(v[idx])[:, None] + dy).ravel()
    src = np.repeat(idx, len(dx))
    inside = (ui >= 0) & (ui < w) & (vi >= 0) & (vi < h)
    pix = (vi[inside] * w + ui[inside]).astype(np.int64)
    src = src[inside]
    order = np.lexsort((zc[src], pix))  # by pixel, nearest first
    pix, src = pix[order], src[order]
    first = np.ones(len(pix), bool)
    first[1:] = pix[1:] != pix[:-1]
    image.reshape(-1, 3)[pix[first]] = C8[src[first]]
    return image
