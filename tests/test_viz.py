"""Point clouds in Open3D, PNG previews without a display, and a viewer that never hangs."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from xslit.io import write_ply
from xslit.viz import (
    arrays_from_cloud,
    display_problem,
    pointcloud_from_points,
    points_from_pointcloud,
    preview_png,
    render_points,
)

RED, GREEN, BLUE = (230, 20, 20), (20, 200, 40), (30, 40, 220)


def _quadrant_cloud(rng, n=6000):
    """A flat square in the z = 0 plane: left half red, top right green, bottom right blue."""
    P = np.column_stack([rng.uniform(-1, 1, (n, 2)), np.zeros(n)])
    C = np.empty((n, 3), np.uint8)
    C[P[:, 0] < 0] = RED
    C[(P[:, 0] >= 0) & (P[:, 1] >= 0)] = GREEN
    C[(P[:, 0] >= 0) & (P[:, 1] < 0)] = BLUE
    return P, C


def _centroid(image, color, tol):
    """Fraction of the pixels showing ``color`` and their mean (column, row)."""
    near = (np.abs(image.astype(int) - color) <= tol.PREVIEW_COLOR_TOL).all(axis=2)
    rows, cols = np.nonzero(near)
    return near.mean(), (cols.mean() if len(cols) else np.nan,
                         rows.mean() if len(rows) else np.nan)


def _check_silhouette(image, tol):
    h, w = image.shape[:2]
    red, (rx, _) = _centroid(image, RED, tol)
    green, (gx, gy) = _centroid(image, GREEN, tol)
    blue, (bx, by) = _centroid(image, BLUE, tol)
    assert min(red, green, blue) > tol.PREVIEW_MIN_FRACTION, (red, green, blue)
    assert rx < w / 2 < gx and rx < w / 2 < bx  # x to the right
    assert gy < h / 2 < by  # y up
    assert (image[0, 0] == 255).all() and (image[-1, -1] == 255).all()  # background corners


# -- conversions -------------------------------------------------------------------------------
def test_pointcloud_round_trip(rng):
    pytest.importorskip("open3d")
    P = rng.normal(size=(50, 3))
    C8 = rng.integers(0, 256, (50, 3), dtype=np.uint8)
    N = rng.normal(size=(50, 3))
    cloud = pointcloud_from_points(P, C8, N)
    P2, C2, N2 = points_from_pointcloud(cloud)
    assert P2.dtype == C2.dtype == N2.dtype == np.float64
    np.testing.assert_array_equal(P2, P)
    np.testing.assert_array_equal(N2, N)
    np.testing.assert_array_equal(C2, C8 / 255.0)
    Cf = rng.uniform(size=(50, 3))
    np.testing.assert_array_equal(points_from_pointcloud(pointcloud_from_points(P, Cf))[1], Cf)
    assert points_from_pointcloud(pointcloud_from_points(P))[1:] == (None, None)


def test_tensor_pointcloud_and_other_inputs(rng, tmp_path):
    o3d = pytest.importorskip("open3d")
    P = rng.normal(size=(20, 3))
    C8 = rng.integers(0, 256, (20, 3), dtype=np.uint8)
    t = o3d.t.geometry.PointCloud(o3d.core.Tensor(P))
    t.point.colors = o3d.core.Tensor(C8)
    P2, C2, N2 = points_from_pointcloud(t)
    np.testing.assert_array_equal(P2, P)
    np.testing.assert_array_equal(C2, C8 / 255.0)
    assert N2 is None
    write_ply(tmp_path / "c.ply", P, C8, -P)
    P3, C3, N3 = arrays_from_cloud(tmp_path / "c.ply")
    np.testing.assert_array_equal(P3, P)
    np.testing.assert_array_equal(C3, C8 / 255.0)
    np.testing.assert_array_equal(N3, -P)
    _, C4, _ = arrays_from_cloud((P, C8))
    np.testing.assert_array_equal(C4, C8 / 255.0)


@pytest.mark.parametrize(("args", "match"), [
    (([[0.0, 1.0]],), r"^points must have shape \(N, 3\), got \(1, 2\)"),
    (([[0.0, 1.0, np.nan]],), r"^points must be finite"),
    (([[0.0, 1.0, 2.0]], [[1.5, 0, 0]]), r"^float colors must be in \[0, 1\]"),
    (([[0.0, 1.0, 2.0]], [[300, 0, 0]]), r"^integer colors must be in \[0, 255\]"),
    (([[0.0, 1.0, 2.0]], [[1, 0, 0], [0, 1, 0]]), r"^colors must be an \(1, 3\) array"),
    (([[0.0, 1.0, 2.0]], None, [[0.0, 1.0]]), r"^normals must have shape \(1, 3\)"),
])
def test_conversion_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        pointcloud_from_points(*args)
    with pytest.raises(ValueError, match=r"^cloud must be an open3d PointCloud"):
        points_from_pointcloud(np.zeros((2, 3)))


# -- previews ------------------------------------------------------------------------------------
@pytest.mark.parametrize("projection", ["perspective", "orthographic"])
def test_numpy_renderer_silhouette(rng, tol, projection):
    P, C = _quadrant_cloud(rng)
    image = render_points(P, C / 255.0, (160, 120), point_size=3, projection=projection)
    assert image.shape == (120, 160, 3) and image.dtype == np.uint8
    _check_silhouette(image, tol)
    # Looking from behind (front = -z) mirrors left and right.
    back = render_points(P, C / 255.0, (160, 120), front=(0, 0, -1), point_size=3,
                         projection=projection)
    _, (rx, _) = _centroid(back, RED, tol)
    assert rx > 80


def test_numpy_renderer_z_buffer():
    # Two coincident squares: the nearer (z = 0.5, towards the camera at +z) wins.
    g = np.stack(np.meshgrid(np.linspace(-1, 1, 40), np.linspace(-1, 1, 40)), -1).reshape(-1, 2)
    far = np.column_stack([g, np.full(len(g), -0.5)])
    near = np.column_stack([g, np.full(len(g), 0.5)])
    for order in (slice(None), slice(None, None, -1)):
        P = np.vstack([far, near])[order]
        C = np.vstack([np.tile([1.0, 0, 0], (len(g), 1)), np.tile([0, 0, 1.0], (len(g), 1))])
        image = render_points(P, C[order], (64, 64), point_size=3, projection="orthographic")
        centre = image[24:40, 24:40].reshape(-1, 3)
        assert (centre == [0, 0, 255]).all()


@pytest.mark.render
@pytest.mark.parametrize("renderer", ["open3d", "numpy"])
def test_preview_png_shows_the_cloud(tmp_path, rng, tol, renderer):
    import imageio.v3 as iio

    P, C = _quadrant_cloud(rng)
    out = tmp_path / "preview.png"
    res = preview_png((P, C), out, (160, 120), point_size=3, renderer=renderer)
    assert res.path == out and res.renderer == renderer and res.reason is None
    image = iio.imread(out)
    assert image.shape[:2] == (120, 160)
    _check_silhouette(image[..., :3], tol)


def test_preview_png_bad_input(tmp_path):
    P = np.zeros((3, 3))
    with pytest.raises(ValueError, match=r"^size must be \(width, height\)"):
        preview_png(P, tmp_path / "a.png", (0, 10))
    with pytest.raises(ValueError, match=r"^renderer must be one of"):
        preview_png(P, tmp_path / "a.png", renderer="vulkan")
    with pytest.raises(ValueError, match=r"^path .*: the folder .* does not exist"):
        preview_png(P, tmp_path / "no" / "a.png", renderer="numpy")
    with pytest.raises(ValueError, match=r"^up must not be parallel to front"):
        preview_png(P, tmp_path / "a.png", front=(0, 1, 0), up=(0, 2, 0), renderer="numpy")
    with pytest.raises(ValueError, match=r"^background must be three floats"):
        preview_png(P, tmp_path / "a.png", background=(255, 255, 255), renderer="numpy")
    assert list(tmp_path.iterdir()) == []


# -- the viewer without a display --------------------------------------------------------------------
_SHOW = """
import sys, numpy as np
from xslit.viz import show
res = show(np.random.default_rng(0).normal(size=(500, 3)), png_path=sys.argv[1], size=(96, 64))
print(res.shown, res.path is not None and res.path.is_file())
"""


@pytest.mark.render
@pytest.mark.parametrize("display", [None, ":87"])
def test_show_without_display_writes_png_and_returns(tmp_path, display):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    if display is not None:
        env["DISPLAY"] = display  # set, but no X server there
    out = tmp_path / "view.png"
    proc = subprocess.run([sys.executable, "-c", _SHOW, str(out)], env=env, timeout=120,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True"]
    assert f"wrote a preview to {out}" in proc.stderr


def test_display_problem_names_the_reason(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert display_problem() == "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
    monkeypatch.setenv("WAYLAND_DISPLAY", "no-such-wayland-socket")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/nonexistent")
    assert display_problem().startswith("cannot connect to the Wayland display")
