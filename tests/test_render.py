"""Renderer: exact reprojection of every rendered hit point, texture richness for SIFT, exact
ground-truth correspondences with visibility, file round trip, and malformed input."""

import subprocess
import sys

import numpy as np
import pytest
from tolerances import (
    EXACT,
    FLOAT32_RAYS_GREY_FRACTION,
    RAY_RTOL,
    RAYCAST_T_RTOL,
    RENDER_FLOAT32_RTOL,
    RENDER_HIT_ON_MESH,
    RENDER_MATCH_PX,
    RENDER_MIN_CORRESPONDENCE_FRACTION,
    RENDER_MIN_COVERAGE,
    RENDER_NEAREST_HIT,
    RENDER_REPROJECTION_PX,
    RENDER_SIFT_MIN_CORRECT,
    RENDER_TENSOR_RTOL,
    SHADING_GREY_ATOL,
    TEXTURE_FAST_GREY_MAX,
    TEXTURE_FAST_GREY_MEAN,
    TEXTURE_REMAP_GREY,
)

from xslit import PinholeCamera, PushbroomIntrinsics, RationalCamera, TwoSlitIntrinsics
from xslit.cameras import compose_pushbroom, compose_two_slit
from xslit.geometry.projective import rvec_from_matrix
from xslit.synthetic import random_two_slit_camera

render = pytest.importorskip("xslit.render")
cv2 = pytest.importorskip("cv2")

pytestmark = pytest.mark.render

SMALL = (160, 120)
LARGE = (640, 480)


@pytest.fixture(scope="module")
def room():
    return render.make_room_scene(0)


@pytest.fixture(scope="module")
def terrain():
    return render.make_terrain_scene(1, n_triangles=20_000, texture_size=512)


def two_slit_looking_at(eye, target, size, d=0.8, theta=np.pi / 2):
    w, h = size
    f = 0.65 * w
    intr = TwoSlitIntrinsics.from_parameters(f, f / 2, (w - 1) / 2, (h - 1) / 2, theta, d)
    return compose_two_slit(intr, *render.pose_from_look_at(eye, target))


def pinhole_looking_at(eye, target, size):
    w, h = size
    K = [[0.8 * w, 0, (w - 1) / 2], [0, 0.8 * w, (h - 1) / 2], [0, 0, 1]]
    return PinholeCamera.from_intrinsics(K, *render.pose_from_look_at(eye, target))


def pushbroom_over_terrain(size, height=60.0):
    """Flying along +x at ``height``, looking straight down; columns are along-track."""
    w, h = size
    R = np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, -1]])
    C = np.array([-40.0, 0.0, height])
    intr = PushbroomIntrinsics.from_parameters(80.0 / w, 1.1 * h, (h - 1) / 2)
    return compose_pushbroom(intr, rvec_from_matrix(R), -R @ C)


def reprojection_error(result):
    m = result["mask"]
    px = result["camera"].project(result["points"][m])
    return np.abs(px - result["pixels"][m]).max()


# -- exact reprojection ---------------------------------------------------------------------
def test_two_slit_reprojection(room):
    cam = two_slit_looking_at([0, -4.5, 0.6], [0, 0, -0.3], SMALL)
    r = render.renderImage(room, cam, SMALL, nthreads=1)
    assert r["image"].shape == (120, 160, 3) and r["image"].dtype == np.uint8
    assert r["depth"].shape == (120, 160) and r["points"].shape == (120, 160, 3)
    assert r["mask"].all()  # inside a closed room every ray hits
    assert reprojection_error(r) < RENDER_REPROJECTION_PX
    np.testing.assert_array_equal(r["pixels"][7, 11], [11, 7])  # centre of row 7, column 11


def test_random_two_slit_reprojection(room, rng):
    intr = TwoSlitIntrinsics(np.array([[120.0, 79.5], [rng.uniform(-0.2, 0.2), 1.0]]),
                             np.array([[100.0, 59.5], [rng.uniform(-0.2, 0.2), 1.0]]),
                             np.radians(70.0), -0.6)
    cam = random_two_slit_camera(rng, distance=4.0, intrinsics=intr)
    r = render.renderImage(room, cam, SMALL, nthreads=1)
    assert r["mask"].mean() > RENDER_MIN_COVERAGE
    assert reprojection_error(r) < RENDER_REPROJECTION_PX
    # Misses carry inf depth and NaN points.
    assert np.all(np.isinf(r["depth"][~r["mask"]]))
    assert np.all(np.isnan(r["points"][~r["mask"]]))


def test_pushbroom_reprojection(terrain):
    cam = pushbroom_over_terrain(SMALL)
    r = render.renderImage(terrain, cam, SMALL, nthreads=1)
    assert r["mask"].all()
    assert reprojection_error(r) < RENDER_REPROJECTION_PX
    # Each column is one position of the sensor line: the along-track coordinate is constant.
    x = r["points"][..., 0]
    np.testing.assert_allclose(x - x[:1], 0, atol=RAY_RTOL)


def test_pinhole_reprojection(room):
    cam = pinhole_looking_at([3.0, -3.5, 1.0], [0, 0, -0.5], SMALL)
    r = render.renderImage(room, cam, SMALL, nthreads=1)
    assert r["mask"].all()
    assert reprojection_error(r) < RENDER_REPROJECTION_PX
    # Depth is the distance from the centre for a pinhole.
    dist = np.linalg.norm(r["points"] - cam.center, axis=-1)
    np.testing.assert_allclose(r["depth"], dist, rtol=RAY_RTOL)


def test_supersampling_keeps_geometry(room):
    cam = two_slit_looking_at([0, -4.5, 0.6], [0, 0, -0.3], SMALL)
    r1 = render.renderImage(room, cam, SMALL, nthreads=1)
    r3 = render.renderImage(room, cam, SMALL, supersample=3, nthreads=1)
    np.testing.assert_array_equal(r1["depth"], r3["depth"])
    diff = np.abs(r1["image"].astype(int) - r3["image"].astype(int))
    assert 0 < diff.mean() < 30  # anti-aliased, not a different picture


def test_supersampling_texture_kernel(terrain):
    """Supersampled renders of a textured scene with sky: sky rows keep the background exactly,
    the image is anti-aliased, not a different picture."""
    cam = two_slit_looking_at([0, -30, 25], [0, 5, 0], SMALL, d=5.0)
    r1 = render.renderImage(terrain, cam, SMALL, nthreads=1, background=(30, 60, 90))
    r2 = render.renderImage(terrain, cam, SMALL, supersample=2, nthreads=1,
                            background=(30, 60, 90))
    assert list(r2)[:4] == ["image", "depth", "points", "mask"]
    np.testing.assert_array_equal(r1["depth"], r2["depth"])
    sky = ~r1["mask"].any(axis=1)
    sky[:-1] &= sky[1:]  # sub-pixel rays of the last sky row may reach the horizon
    assert sky.sum() >= 5
    assert (r2["image"][sky] == [30, 60, 90]).all()
    diff = np.abs(r1["image"].astype(int) - r2["image"].astype(int))
    assert 0 < diff.mean() < 30


def oblique_pushbroom_over_terrain(size):
    """A pushbroom flying diagonally, its flight line not perpendicular to the sensor line."""
    c, s = np.cos(0.5), np.sin(0.5)
    H = np.array([[c, -s, 0.3, 2.0], [s, c, 0.1, -1.0], [0, 0.2, 1, 0.5], [0, 0, 0, 1]])
    return pushbroom_over_terrain(size).transform(H)


def rational_pinhole_looking_at(eye, target, size):
    """The pinhole of :func:`pinhole_looking_at` as a RationalCamera (rays from ``rays``)."""
    pin = pinhole_looking_at(eye, target, size)
    Minv = np.linalg.inv(pin.P[:, :3])
    frame = np.vstack([np.column_stack([Minv[:, :2], Minv[:, 2] + pin.center]), [0, 0, 1]])
    return RationalCamera.pinhole(np.append(pin.center, 1.0), frame)


RENDER_VIEWS = {
    "two_slit_room": ("room", lambda: two_slit_looking_at([0, -4.5, 0.6], [0, 0, -0.3], SMALL)),
    "two_slit_terrain": ("terrain",
                         lambda: two_slit_looking_at([0, -30, 25], [0, 5, 0], SMALL, d=5.0)),
    "pushbroom": ("terrain", lambda: pushbroom_over_terrain(SMALL)),
    "pushbroom_oblique": ("terrain", lambda: oblique_pushbroom_over_terrain(SMALL)),
    "pinhole": ("room", lambda: pinhole_looking_at([3.0, -3.5, 1.0], [0, 0, -0.5], SMALL)),
    "rational": ("room",
                 lambda: rational_pinhole_looking_at([3.0, -3.5, 1.0], [0, 0, -0.5], SMALL)),
}


@pytest.mark.parametrize("view", list(RENDER_VIEWS))
def test_render_image_equals_the_render_of_camera_rays(request, view, monkeypatch):
    """renderImage makes its rays from the pixel grid's structure (``camera.ray_grid``); its
    render equals that of ``camera.rays`` on every pixel centre: the same hits, image and
    depth, hit points within rounding (they are evaluated on the float64 rays), on two
    threads over several blocks."""
    scene_name, make_camera = RENDER_VIEWS[view]
    scene = request.getfixturevalue(scene_name)
    cam = make_camera()
    assert cam.ray_grid([0.0], [0.0]).separable == (view != "rational")
    monkeypatch.setattr(render.raycast, "BLOCK_PIXELS", 1 << 13)  # blocks of 51 rows
    monkeypatch.setattr(render.raycast, "PARALLEL_PIXELS", 1 << 10)
    r = render.renderImage(scene, cam, SMALL, nthreads=2, background=(9, 9, 9))
    rays = cam.rays(render.pixel_grid(SMALL).reshape(-1, 2))
    ref = render.render_from_rays(scene, rays, SMALL, nthreads=1, background=(9, 9, 9))
    assert r["mask"].mean() > RENDER_MIN_COVERAGE
    np.testing.assert_array_equal(r["mask"], ref["mask"])
    np.testing.assert_array_equal(r["image"], ref["image"])
    m = ref["mask"]
    np.testing.assert_allclose(r["depth"][m], ref["depth"][m], rtol=RENDER_FLOAT32_RTOL)
    assert np.isinf(r["depth"][~m]).all() and np.isnan(r["points"][~m]).all()
    scale = np.abs(ref["points"][m]).max()
    np.testing.assert_allclose(r["points"][m], ref["points"][m], rtol=0, atol=EXACT * scale)
    assert reprojection_error(r) < RENDER_REPROJECTION_PX


# -- images rich enough for SIFT; exact ground-truth correspondences ---------------------------
@pytest.fixture(scope="module")
def stereo_pair(room):
    cam1 = two_slit_looking_at([0, -4.5, 0.6], [0, 0, -0.3], LARGE)
    cam2 = two_slit_looking_at([0.5, -4.4, 0.7], [0, 0, -0.3], LARGE, d=1.0, theta=1.3)
    return (render.renderImage(room, cam1, LARGE, nthreads=2),
            render.renderImage(room, cam2, LARGE, nthreads=2))


def test_sift_finds_many_keypoints(stereo_pair):
    sift = cv2.SIFT_create()
    for r in stereo_pair:
        keypoints = sift.detect(cv2.cvtColor(r["image"], cv2.COLOR_RGB2GRAY), None)
        assert len(keypoints) > 1000


def test_correspondences_reproject_exactly(stereo_pair):
    r1, r2 = stereo_pair
    c = render.correspondences_between(r1, r2)
    assert len(c.X) > RENDER_MIN_CORRESPONDENCE_FRACTION * r1["mask"].sum()
    np.testing.assert_allclose(r1["camera"].project(c.X), c.points1, atol=RENDER_REPROJECTION_PX)
    np.testing.assert_allclose(r2["camera"].project(c.X), c.points2, atol=RENDER_REPROJECTION_PX)
    # Visible in view 2: the hit point of the nearest pixel of view 2 is next to X.
    ij = np.rint(c.points2[:, ::-1]).astype(int)
    near = r2["points"][ij[:, 0], ij[:, 1]]
    assert np.median(np.linalg.norm(near - c.X, axis=1)) < RENDER_NEAREST_HIT
    sub = render.correspondences_between(r1, r2, max_points=500, rng=0)
    assert len(sub.X) == 500
    assert np.isin(sub.X[:, 0], c.X[:, 0]).all()


def test_correspondences_satisfy_the_epipolar_relation(stereo_pair):
    """Ground-truth matches of two rendered X-slit views satisfy eq. (22) of their cameras, and
    the tensor estimated from them is the cameras' tensor."""
    import xslit
    from xslit.epipolar import sampson_distance
    from xslit.testing import projective_distance

    r1, r2 = stereo_pair
    c = render.correspondences_between(r1, r2, max_points=2000, rng=1)
    F = xslit.computeEpipolarTensor(r1["camera"], r2["camera"])
    assert sampson_distance(F, c.points1, c.points2).max() < RENDER_REPROJECTION_PX
    F_est, mask = xslit.findEpipolarTensor(c.points1, c.points2, xslit.FM_LINEAR)
    assert projective_distance(F_est, F) < RENDER_TENSOR_RTOL and mask.all()


def test_correspondences_drop_occluded_points(room):
    # From the other side of the room, many points seen by view 1 are hidden behind objects.
    cam1 = two_slit_looking_at([0, -4.5, 0.6], [0, 0, -0.3], SMALL)
    cam2 = two_slit_looking_at([0, 4.5, 0.6], [0, 0, -0.3], SMALL)
    r1 = render.renderImage(room, cam1, SMALL, nthreads=1)
    r2 = render.renderImage(room, cam2, SMALL, nthreads=1)
    c = render.correspondences_between(r1, r2)
    p2 = cam2.project(r1["points"][r1["mask"]])
    inside = np.isfinite(p2).all(1) & (p2[:, 0] >= -0.5) & (p2[:, 0] < 159.5) & \
        (p2[:, 1] >= -0.5) & (p2[:, 1] < 119.5)
    assert 0 < len(c.X) < inside.sum()
    # Every kept point is the first hit along view 2's ray.
    rays = cam2.rays(c.points2)
    t_hit = render.raycast.cast_rays(room, rays, 1)["t_hit"]
    t_expected = np.einsum("ij,ij->i", c.X - rays[:, :3], rays[:, 3:])
    np.testing.assert_allclose(t_hit, t_expected, rtol=RAYCAST_T_RTOL)


def test_sift_matches_agree_with_ground_truth(stereo_pair):
    r1, r2 = stereo_pair
    sift = cv2.SIFT_create()
    k1, d1 = sift.detectAndCompute(cv2.cvtColor(r1["image"], cv2.COLOR_RGB2GRAY), None)
    k2, d2 = sift.detectAndCompute(cv2.cvtColor(r2["image"], cv2.COLOR_RGB2GRAY), None)
    knn = cv2.BFMatcher().knnMatch(d1, d2, k=2)
    good = [m for m, n in knn if m.distance < 0.8 * n.distance]
    assert len(good) > 500
    p1 = np.array([k1[m.queryIdx].pt for m in good])
    p2 = np.array([k2[m.trainIdx].pt for m in good])
    ij = np.rint(p1[:, ::-1]).astype(int)
    truth = r2["camera"].project(r1["points"][ij[:, 0], ij[:, 1]])
    # Rounding p1 to a pixel centre moves the truth by up to ~0.7 px times the local scale.
    correct = np.linalg.norm(truth - p2, axis=1) < RENDER_MATCH_PX
    assert correct.mean() > RENDER_SIFT_MIN_CORRECT


# -- colour sources, files, scenes ----------------------------------------------------------
def flat_square(**colour):
    V = [[-1, -1, 3], [1, -1, 3], [1, 1, 3], [-1, 1, 3]]
    return render.Scene.from_arrays(V, [[0, 1, 2], [0, 2, 3]], **colour)


def test_colour_sources_and_lambert():
    cam = PinholeCamera.from_intrinsics([[20, 0, 15.5], [0, 20, 11.5], [0, 0, 1]])
    light = (0, 0, -1)  # towards the camera side of the square, so n . l = 1
    cases = {
        "base": ({"base_color": (200, 100, 50)}, [200, 100, 50]),
        "vertex": ({"vertex_colors": np.full((4, 3), 0.5)}, [128, 128, 128]),
        "points": ({"color_fn": lambda X: np.tile([10.0, 20, 30], (len(X), 1))}, [10, 20, 30]),
        "uv": ({"triangle_uvs": np.zeros((2, 3, 2)),
                "uv_color_fn": lambda uv: np.tile([40.0, 50, 60], (len(uv), 1))}, [40, 50, 60]),
        "texture": ({"triangle_uvs": np.full((6, 2), 0.5),
                     "textures": np.full((4, 4, 3), 77, np.uint8)}, [77, 77, 77]),
    }
    for colour, expected in cases.values():
        r = render.renderImage(flat_square(**colour), cam, (32, 24), light_dir=light, nthreads=1)
        np.testing.assert_allclose(r["image"][12, 16], expected, atol=SHADING_GREY_ATOL)
    dim = render.renderImage(flat_square(base_color=(200, 200, 200)), cam, (32, 24),
                             light_dir=(1, 0, 0), nthreads=1, ambient=0.25)
    # Ambient light only.
    np.testing.assert_allclose(dim["image"][12, 16], [50, 50, 50], atol=SHADING_GREY_ATOL)


def test_texture_convention_obj_round_trip(tmp_path):
    """A texture read back from an OBJ file by Open3D renders as the scene built in code."""
    o3d = pytest.importorskip("open3d")
    scene = render.make_calibration_target(3, planes=2, squares=(4, 5), square_px=16)
    path = tmp_path / "target.obj"
    assert o3d.io.write_triangle_mesh(str(path), scene.to_legacy_mesh())
    loaded = render.Scene.from_file(path)
    cam = pinhole_looking_at([1.2, -0.8, 1.0], [0.2, 0.2, 0.2], SMALL)
    a = render.renderImage(scene, cam, SMALL, nthreads=1)
    b = render.renderImage(loaded, cam, SMALL, nthreads=1)
    np.testing.assert_array_equal(a["mask"], b["mask"])
    diff = np.abs(a["image"].astype(int) - b["image"].astype(int))
    assert np.mean(diff) < 1.0


def test_calibration_target_corners(rng):
    scene = render.make_calibration_target(rng, planes=3, squares=(6, 7), square_size=0.05)
    assert len(scene.textures) == 3
    for board in scene.info["boards"]:
        corners = np.array(board["corners"])
        assert corners.shape == (5 * 6, 3)
        normal = np.cross(board["axis_u"], board["axis_v"])
        np.testing.assert_allclose(corners @ normal, 0, atol=EXACT)  # on the board's plane
        assert corners.min() > -EXACT and corners.max() < 0.35


def test_scenes_are_seeded():
    a = render.make_room_scene(5, texels_per_unit=8.0, n_objects=3)
    b = render.make_room_scene(5, texels_per_unit=8.0, n_objects=3)
    c = render.make_room_scene(6, texels_per_unit=8.0, n_objects=3)
    np.testing.assert_array_equal(a.vertices, b.vertices)
    assert all(np.array_equal(s, t) for s, t in zip(a.textures, b.textures, strict=True))
    assert not np.array_equal(a.textures[0], c.textures[0])
    t = render.make_terrain_scene(0, n_triangles=5000, texture_size=64)
    assert abs(t.n_triangles - 5000) < 300


def _scene_arrays(scene):
    """Every array a scene holds, by attribute name (textures by index)."""
    out = {name: getattr(scene, name) for name in
           ("vertices", "triangles", "triangle_uvs", "material_ids", "vertex_colors",
            "base_color")}
    out.update({f"textures[{i}]": t for i, t in enumerate(scene.textures)})
    return {name: a for name, a in out.items() if a is not None}


@pytest.mark.parametrize("colour", [
    {"vertex_colors": np.full((4, 3), 0.5)},
    {"triangle_uvs": np.full((6, 2), 0.5), "textures": np.full((4, 4, 3), 77, np.uint8),
     "material_ids": [0, 0]},
])
def test_scene_arrays_are_read_only(colour):
    """Writing into a scene raises ValueError and reassigning its arrays AttributeError: its ray
    caster and texel table are built from them once, so a changed scene is a new object."""
    scene = flat_square(**colour)
    arrays = _scene_arrays(scene)
    assert len(arrays) == 3 + len(colour)
    for a in arrays.values():
        with pytest.raises(ValueError, match="read-only"):
            a[...] = np.nan if a.dtype.kind == "f" else 0
        with pytest.raises(ValueError, match="WRITEABLE"):
            a.setflags(write=True)
    for name in ("vertices", "triangles", "textures", "base_color", "color_fn"):
        with pytest.raises(AttributeError):
            setattr(scene, name, None)
    assert isinstance(scene.textures, tuple)
    table, texture = scene.texel_table()
    for a in (table, texture):
        if a is not None:
            with pytest.raises(ValueError, match="read-only"):
                a[...] = 0


def test_scene_does_not_share_memory_with_its_input():
    """Arrays already of the scene's dtype are copied, so writing into the caller's array does
    not change the scene behind its cached ray caster."""
    V = np.array([[-1, -1, 3], [1, -1, 3], [1, 1, 3], [-1, 1, 3]], np.float32)
    T = np.array([[0, 1, 2], [0, 2, 3]], np.uint32)
    tex = np.full((4, 4, 3), 77, np.uint8)
    scene = render.Scene.from_arrays(V, T, triangle_uvs=np.full((6, 2), 0.5), textures=tex)
    for given, held in ((V, scene.vertices), (T, scene.triangles), (tex, scene.textures[0])):
        assert not np.shares_memory(given, held)
        assert given.flags.writeable  # the caller's array is left as it was
    tex[...] = 0
    assert scene.textures[0].max() == 77


def test_read_only_scene_works_with_every_function_that_takes_one(room, tmp_path):
    """renderImage, render_from_rays, correspondences_between, match_errors, cloud_metrics and
    the Scene methods all run on a scene whose arrays are read-only, and render it as a scene
    built from writeable copies of the same arrays."""
    o3d = pytest.importorskip("open3d")
    assert not room.vertices.flags.writeable
    copy = render.Scene.from_arrays(
        room.vertices.copy(), room.triangles.copy(), triangle_uvs=room.triangle_uvs.copy(),
        textures=[t.copy() for t in room.textures], material_ids=room.material_ids.copy(),
        base_color=room.base_color.copy())
    cam1 = two_slit_looking_at([-0.4, -4.2, 0.4], [0, 0, -0.3], SMALL)
    cam2 = two_slit_looking_at([0.4, -4.2, 0.4], [0, 0, -0.3], SMALL)
    r1 = render.renderImage(room, cam1, SMALL, nthreads=1)
    np.testing.assert_array_equal(r1["image"],
                                  render.renderImage(copy, cam1, SMALL, nthreads=1)["image"])
    assert r1["mask"].mean() > RENDER_MIN_COVERAGE
    r2 = render.renderImage(room, cam2, SMALL, nthreads=1)
    rays = cam1.rays(render.pixel_grid(SMALL).reshape(-1, 2))
    fr = render.render_from_rays(room, rays, SMALL, nthreads=1)
    np.testing.assert_array_equal(fr["mask"], r1["mask"])
    corr = render.correspondences_between(r1, r2, scene=room)
    assert len(corr.points1) > 100
    errors = render.match_errors(r1, cam2, corr.points1, corr.points2)
    assert np.nanmax(errors) < RENDER_REPROJECTION_PX
    metrics = render.cloud_metrics(r1["points"][r1["mask"]], scene=room)
    assert metrics["accuracy"] < RENDER_HIT_ON_MESH  # hit points lie on the mesh
    assert room.bounds.shape == (2, 3)
    mesh = room.to_legacy_mesh()
    assert o3d.io.write_triangle_mesh(str(tmp_path / "room.ply"), mesh)
    assert len(render.Scene(mesh).triangles) == room.n_triangles
    ids = np.zeros(4, np.int64)
    assert room.albedo(ids, np.full((4, 2), 0.25, np.float32)).shape == (4, 3)


def test_import_xslit_does_not_load_open3d_or_cv2():
    code = "import sys, xslit; print('open3d' in sys.modules, 'cv2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# -- malformed input ------------------------------------------------------------------------
@pytest.mark.parametrize("size", [(0, 10), (10,), "abc", (10.5, 3), None, (10, 10, 3), (True, 4)])
def test_bad_image_size(size):
    scene = flat_square()
    cam = PinholeCamera.from_intrinsics(np.eye(3))
    with pytest.raises(ValueError, match="imageSize"):
        render.renderImage(scene, cam, size)


def test_bad_arguments():
    scene = flat_square()
    cam = PinholeCamera.from_intrinsics(np.eye(3))
    with pytest.raises(ValueError, match="camera"):
        render.renderImage(scene, np.eye(3, 4), (8, 8))
    with pytest.raises(ValueError, match="scene"):
        render.renderImage("room", cam, (8, 8))
    with pytest.raises(ValueError, match="supersample"):
        render.renderImage(scene, cam, (8, 8), supersample=0)
    with pytest.raises(ValueError, match="nthreads"):
        render.renderImage(scene, cam, (8, 8), nthreads=0)
    with pytest.raises(ValueError, match="light_dir"):
        render.renderImage(scene, cam, (8, 8), light_dir=(0, 0, 0))
    with pytest.raises(ValueError, match="render1"):
        render.correspondences_between({"image": 0}, {})
    with pytest.raises(ValueError, match="triangles"):
        render.Scene.from_arrays(np.zeros((3, 3)), [[0, 1, 5]])
    with pytest.raises(ValueError, match="triangle_uvs"):
        render.Scene.from_arrays(np.eye(3), [[0, 1, 2]], triangle_uvs=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="path"):
        render.Scene.from_file("/nonexistent/mesh.obj")
    with pytest.raises(ValueError, match="mesh"):
        render.Scene(np.zeros((3, 3)))


def test_fast_texture_path_matches_general_path(terrain):
    """The cv2 kernel for single-texture scenes gives the colours of Scene.albedo."""
    cam = pushbroom_over_terrain(SMALL)
    rays = cam.rays(render.pixel_grid(SMALL).reshape(-1, 2))
    w, h = SMALL
    light = np.array([0.3, -0.4, 0.866])
    images = []
    for fast in (True, False):
        image = np.zeros((h, w, 3), np.float32)
        render.raycast._render(terrain, rays, h, w, ("image",), light, 0.35,
                               np.zeros(3, np.float32), 1, accumulate=image, fast=fast)
        images.append(image)
    assert terrain.texel_table()[0] is not None
    np.testing.assert_allclose(images[0], images[1], atol=TEXTURE_REMAP_GREY)


def test_fast_texture_path_background_and_sky_rows(terrain, terrain_rays):
    """With sky in view (rows without any hit are not textured) and a background colour, the
    texture kernel matches Scene.albedo's colours, and misses get the background exactly."""
    w, h = SMALL
    rays = terrain_rays.reshape(-1, 6)
    bg = np.array([30, 60, 90], np.float32)
    light = render.raycast._check_direction("light_dir", render.raycast.DEFAULT_LIGHT)
    images = [render.raycast._render(terrain, rays, h, w, ("image", "mask"), light, 0.35, bg, 1,
                                     fast=fast) for fast in (True, False)]
    mask = images[0]["mask"]
    assert (~mask.any(axis=1)).sum() >= 5 and 0.5 < mask.mean() < 1  # sky rows and sky pixels
    np.testing.assert_array_equal(images[0]["image"][~mask], np.tile([30, 60, 90], (
        (~mask).sum(), 1)))
    diff = np.abs(images[0]["image"].astype(int) - images[1]["image"].astype(int))
    assert diff.max() <= TEXTURE_FAST_GREY_MAX and diff.mean() < TEXTURE_FAST_GREY_MEAN


def test_non_finite_rays_do_not_hit(room):
    rays = np.array([[0, -4, 0, 0, 1, 0], [np.nan, -4, 0, 0, 1, 0], [0, -4, 0, np.inf, 1, 0.0]])
    r = render.render_from_rays(room, rays, (3, 1), nthreads=1)
    np.testing.assert_array_equal(r["mask"], [[True, False, False]])
    assert np.isnan(r["points"][0, 1:]).all() and np.isinf(r["depth"][0, 1:]).all()


# -- render_from_rays: outputs, float32 rays, threads -------------------------------------------
@pytest.fixture(scope="module")
def terrain_rays():
    w, h = SMALL
    cam = two_slit_looking_at([0, -30, 25], [0, 5, 0], SMALL, d=5.0)
    return cam.rays(render.pixel_grid(SMALL).reshape(-1, 2)).reshape(h, w, 6)


OUTPUT_SUBSETS = [names for k in range(1, 5)
                  for names in __import__("itertools").combinations(render.raycast.OUTPUTS, k)]


@pytest.mark.parametrize("scene_name", ["terrain", "room"])
def test_outputs_subsets_equal_the_full_render(request, scene_name, terrain_rays):
    """Each subset of outputs gives exactly those arrays of the full render (fast texture
    kernel on the terrain, Scene.albedo on the room)."""
    scene = request.getfixturevalue(scene_name)
    if scene_name == "room":
        rays = two_slit_looking_at([0, -4.5, 0.6], [0, 0, -0.3], SMALL).rays(
            render.pixel_grid(SMALL).reshape(-1, 2))
    else:
        rays = terrain_rays
    full = render.render_from_rays(scene, rays, SMALL, nthreads=1, background=(5, 200, 90))
    assert list(full) == ["image", "depth", "points", "mask"]
    assert 0.2 < full["mask"].mean() <= 1.0
    for names in OUTPUT_SUBSETS:
        part = render.render_from_rays(scene, rays, SMALL, outputs=names, nthreads=1,
                                       background=(5, 200, 90))
        assert set(part) == set(names)
        for k in names:
            np.testing.assert_array_equal(part[k], full[k], err_msg=f"{names}: {k}")
    one = render.render_from_rays(scene, rays, SMALL, outputs="depth", nthreads=1)
    assert list(one) == ["depth"]
    np.testing.assert_array_equal(one["depth"], full["depth"])


@pytest.mark.parametrize("outputs", [(), ["image", "normals"], "colour", 3, None, [1],
                                     ("image", None)])
def test_bad_outputs(terrain, terrain_rays, outputs):
    with pytest.raises(ValueError, match="outputs"):
        render.render_from_rays(terrain, terrain_rays, SMALL, outputs=outputs, nthreads=1)


def test_float32_rays_render_like_float64(terrain, terrain_rays):
    """Float32 rays are cast as given; the image matches the float64 render within one grey
    level on most pixels, and the geometry to float32 precision."""
    r64 = render.render_from_rays(terrain, terrain_rays, SMALL, nthreads=1)
    rays32 = terrain_rays.astype(np.float32)
    r32 = render.render_from_rays(terrain, rays32, SMALL, nthreads=1)
    diff = np.abs(r64["image"].astype(int) - r32["image"].astype(int))
    assert np.mean(diff <= 1) > FLOAT32_RAYS_GREY_FRACTION
    # The float64 rays are rounded to float32 for the cast either way: same hits.
    np.testing.assert_array_equal(r32["mask"], r64["mask"])
    np.testing.assert_array_equal(r32["depth"], r64["depth"])
    m = r64["mask"]
    scale = np.abs(r64["points"][m]).max()
    np.testing.assert_allclose(r32["points"][m], r64["points"][m], rtol=0,
                               atol=RENDER_FLOAT32_RTOL * scale)
    assert np.isnan(r32["points"][~m]).all()
    # (H * W, 6) float32 rays work as (H, W, 6) ones.
    flat = render.render_from_rays(terrain, rays32.reshape(-1, 6), SMALL, outputs="image",
                                   nthreads=1)
    np.testing.assert_array_equal(flat["image"], r32["image"])


@pytest.mark.parametrize("scene_name", ["terrain", "room"])
def test_threads_do_not_change_the_render(request, scene_name, monkeypatch):
    """Post-processing on several threads, over several blocks (the last one shorter), gives
    the single-threaded result exactly, for float64 and float32 rays."""
    scene = request.getfixturevalue(scene_name)
    monkeypatch.setattr(render.raycast, "BLOCK_PIXELS", 1 << 15)
    monkeypatch.setattr(render.raycast, "PARALLEL_PIXELS", 1 << 12)
    size = (330, 250)  # blocks of 99 rows: 99, 99, 52
    if scene_name == "room":
        cam = two_slit_looking_at([0, -4.5, 0.6], [0, 0, -0.3], size)
    else:
        cam = two_slit_looking_at([0, -30, 25], [0, 5, 0], size, d=5.0)
    rays = cam.rays(render.pixel_grid(size).reshape(-1, 2))
    for r in (rays, np.ascontiguousarray(rays, np.float32)):
        one = render.render_from_rays(scene, r, size, nthreads=1, background=(9, 9, 9))
        two = render.render_from_rays(scene, r, size, nthreads=2, background=(9, 9, 9))
        assert 0.2 < one["mask"].mean() <= 1
        for k in one:
            np.testing.assert_array_equal(one[k], two[k], err_msg=k)
