"""Mosaics from video (Zomet et al. 2003): exactness of the reported camera, sampling, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tolerances import (
    MOSAIC_EXACT_PX,
    MOSAIC_MIN_PSNR_DB,
    MOSAIC_MIN_VALID,
    MOSAIC_POINT_ATOL,
    RAY_RTOL,
)

from xslit import PinholeCamera, PushbroomCamera, TwoSlitCamera
from xslit.cli import main as xslit_main
from xslit.geometry.projective import matrix_from_rvec
from xslit.mosaic import (
    MosaicBuilder,
    count_frames,
    frame_files,
    frames_from_source,
    mosaic_camera,
    mosaic_columns,
    mosaic_from_frames,
)


def main(argv):
    """``xslit mosaic ARGV``."""
    return xslit_main(["mosaic", *argv])


def _rig(rng, speed=0.05, skew=0.0):
    """A random pinhole video rig: K, pose of frame 0, and sideways velocity (world)."""
    rng = np.random.default_rng(rng)
    f = rng.uniform(100, 400)
    K = np.array([[f, skew, rng.uniform(60, 100)], [0, f * rng.uniform(0.9, 1.1),
                                                     rng.uniform(40, 80)], [0, 0, 1]])
    rvec = rng.normal(scale=0.5, size=3)
    tvec = rng.normal(size=3)
    R = matrix_from_rvec(rvec)
    return K, rvec, tvec, speed * R[0]


def _frame_camera(K, rvec, tvec, velocity, t):
    R = matrix_from_rvec(rvec)
    return PinholeCamera.from_intrinsics(K, rvec, tvec - t * (R @ velocity))


@pytest.mark.parametrize(("slope", "speed"), [(0.0, 0.05), (0.4, 0.05), (-0.7, 0.05),
                                              (0.5, -0.03), (0.0, -0.03)])
def test_points_on_frame_rays_project_to_mosaic_pixels(slope, speed):
    """A point seen by column a + b t, row y of frame t is mosaic pixel (t, y), exactly."""
    rng = np.random.default_rng(1)
    K, rvec, tvec, vel = _rig(rng, speed, skew=0.5)
    a = 70.0
    cam = mosaic_camera(K, rvec, tvec, vel, a, slope)
    assert isinstance(cam, PushbroomCamera if slope == 0 else TwoSlitCamera)
    t = rng.integers(0, 100, size=50).astype(float)
    y = rng.uniform(0, 120, size=50)
    X = np.empty((50, 3))
    for k in range(50):
        ray = _frame_camera(K, rvec, tvec, vel, t[k]).rays([[a + slope * t[k], y[k]]])[0]
        X[k] = ray[:3] + rng.uniform(2, 20) * ray[3:]
    np.testing.assert_allclose(cam.project(X), np.stack([t, y], axis=1), atol=MOSAIC_EXACT_PX)


@pytest.mark.parametrize("slope", [0.0, 0.6, -0.6])
def test_mosaic_camera_matches_column_selection_from_projections(slope):
    """Project synthetic points with every pinhole frame, find the frame time where the point
    crosses the moving column (x_t - (a + b t) is affine in t for sideways motion, so linear
    interpolation between integer frames is exact), and compare with the mosaic camera."""
    rng = np.random.default_rng(2)
    K, rvec, tvec, vel = _rig(rng, 0.04)
    a, n_frames = 60.0, 200
    cam = mosaic_camera(K, rvec, tvec, vel, a, slope)
    pin0 = _frame_camera(K, rvec, tvec, vel, 0)
    # Points seen by frame 0 at 3-15 units depth.
    px = rng.uniform([0, 0], [160, 120], size=(40, 2))
    rays = pin0.rays(px)
    X = rays[:, :3] + rng.uniform(3, 15, size=(40, 1)) * rays[:, 3:]
    frames = np.arange(n_frames)
    proj = np.stack([_frame_camera(K, rvec, tvec, vel, t).project(X) for t in frames])
    g = proj[:, :, 0] - (a + slope * frames[:, None])  # (T, N), affine in t
    tau = -g[0] / (g[1] - g[0])
    y_tau = proj[0, :, 1]  # rows do not change with sideways motion
    np.testing.assert_allclose(proj[:, :, 1], np.broadcast_to(y_tau, proj.shape[:2]),
                               atol=MOSAIC_EXACT_PX)
    np.testing.assert_allclose(cam.project(X), np.stack([tau, y_tau], axis=1), atol=MOSAIC_EXACT_PX)
    # The points crossing inside the video are in front of the mosaic camera when its second
    # slit lies behind the path (slope and speed of the same sign) or for pushbroom.
    if slope >= 0:
        assert cam.in_front(X).all()


def test_wide_strips_exact_at_strip_centres():
    rng = np.random.default_rng(3)
    K, rvec, tvec, vel = _rig(rng)
    w, a, b = 3, 50.0, 0.25
    cam = mosaic_camera(K, rvec, tvec, vel, a, b, strip_width=w)
    t = np.arange(10.0)
    X = np.array([r[:3] + 7 * r[3:] for r in
                  (_frame_camera(K, rvec, tvec, vel, tk).rays([[a + b * tk, 30.0]])[0]
                   for tk in t)])
    np.testing.assert_allclose(cam.project(X)[:, 0], w * t + (w - 1) / 2, atol=MOSAIC_EXACT_PX)


def test_mosaic_rays_meet_the_camera_path():
    """The slit of A2 is the camera path: every mosaic ray passes through it."""
    rng = np.random.default_rng(4)
    K, rvec, tvec, vel = _rig(rng)
    cam = mosaic_camera(K, rvec, tvec, vel, 40.0, 0.5)
    c0 = _frame_camera(K, rvec, tvec, vel, 0).center
    for t in (0.0, 17.0, 55.0):
        ray = cam.rays([[t, 33.0]])[0]
        c = c0 + t * vel
        # Distance from the frame-t centre to the mosaic ray's line.
        d = np.linalg.norm(np.cross(c - ray[:3], ray[3:]))
        assert d < RAY_RTOL


def test_mosaic_sampling_linear_interpolation():
    frames = np.tile(np.arange(8.0) * 10, (5, 3, 1))  # value = 10 * column
    mosaic, valid = mosaic_from_frames(frames, 1.25, 1.375)
    np.testing.assert_allclose(mosaic[0, :, 0], 10 * (1.25 + 1.375 * np.arange(5)))
    assert valid.tolist() == [True, True, True, True, True]
    mosaic, valid = mosaic_from_frames(frames, 5.0, 1.0)
    assert valid.tolist() == [True, True, True, False, False]
    assert (mosaic[:, 3:] == 0).all()


def test_mosaic_uint8_rgb_and_strips():
    rng = np.random.default_rng(5)
    frames = rng.integers(0, 256, size=(6, 4, 10, 3), dtype=np.uint8)
    mosaic, valid = mosaic_from_frames(iter(list(frames)), 4, 0.0, strip_width=3)
    assert mosaic.dtype == np.uint8 and mosaic.shape == (4, 18, 3) and valid.all()
    for t in range(6):
        np.testing.assert_array_equal(mosaic[:, 3 * t:3 * t + 3], frames[t][:, 3:6])
    desc, _ = mosaic_from_frames(frames, 4, 0.0, strip_width=3, descending=True)
    np.testing.assert_array_equal(desc[:, :3], frames[0][:, 5:2:-1])
    t, x = mosaic_columns(2, 4.0, 1.0, strip_width=3)
    assert t.tolist() == [0, 0, 0, 1, 1, 1] and x.tolist() == [3, 4, 5, 4, 5, 6]


def test_bad_input():
    K, rvec, tvec, vel = _rig(6)
    with pytest.raises(ValueError, match="velocity must be along the camera's x axis"):
        mosaic_camera(K, rvec, tvec, matrix_from_rvec(rvec)[1], 10, 0.5)
    with pytest.raises(ValueError, match="velocity must be non-zero"):
        mosaic_camera(K, rvec, tvec, [0, 0, 0], 10, 0.5)
    with pytest.raises(ValueError, match="K must be upper triangular"):
        mosaic_camera(np.ones((3, 3)), rvec, tvec, vel, 10, 0.5)
    with pytest.raises(ValueError, match="column must be finite"):
        mosaic_camera(K, rvec, tvec, vel, np.nan, 0.5)
    with pytest.raises(ValueError, match="strip_width must be an integer >= 1"):
        mosaic_from_frames(np.zeros((2, 3, 4)), 1, strip_width=0)
    with pytest.raises(ValueError, match="frames must all have the same shape"):
        mosaic_from_frames([np.zeros((3, 4)), np.zeros((3, 5))], 1)
    with pytest.raises(ValueError, match="at least one frame"):
        mosaic_from_frames([], 1)
    with pytest.raises(ValueError, match="neither a video file nor a folder"):
        list(frames_from_source("/nonexistent/video.mp4"))


def test_cli_folder_of_frames(tmp_path, capsys):
    import imageio.v3 as iio

    rng = np.random.default_rng(7)
    src = tmp_path / "frames"
    src.mkdir()
    frames = rng.integers(0, 256, size=(12, 6, 9, 3), dtype=np.uint8)
    for k, f in enumerate(frames):
        iio.imwrite(src / f"f{k:03d}.png", f)
    out = tmp_path / "out"
    rc = main([str(src), "--out-dir", str(out), "--K", "50,50,4,3", "--speed", "0.1",
               "--step", "2"])
    assert rc == 0
    pb = iio.imread(out / "pushbroom.png")
    np.testing.assert_array_equal(pb, frames[::2, :, 4].transpose(1, 0, 2))
    xs = iio.imread(out / "xslit.png")
    assert xs.shape == (6, 6, 3)
    np.testing.assert_array_equal(xs[:, 0], frames[0][:, 0])
    np.testing.assert_array_equal(xs[:, -1], frames[10][:, 8])
    cam = json.loads((out / "xslit.json").read_text())
    assert cam["camera"]["model"] == "two_slit" and cam["image_size"] == [6, 6]
    assert json.loads((out / "pushbroom.json").read_text())["camera"]["model"] == "pushbroom"
    assert "valid columns" in capsys.readouterr().out


def test_cli_gif_video(tmp_path):
    import imageio.v3 as iio

    frames = np.random.default_rng(8).integers(0, 256, size=(5, 6, 7, 3), dtype=np.uint8)
    iio.imwrite(tmp_path / "v.gif", frames, loop=0)
    got = np.stack(list(frames_from_source(tmp_path / "v.gif", start=1, stop=4)))
    assert got.shape[0] == 3 and got.shape[1:3] == (6, 7)
    assert main([str(tmp_path / "v.gif"), "--out-dir", str(tmp_path / "o"), "--kind",
                 "pushbroom"]) == 0
    assert (tmp_path / "o" / "pushbroom.png").is_file()


def test_cli_errors(tmp_path, capsys):
    out = ["--out-dir", str(tmp_path / "o")]
    assert main([str(tmp_path), *out, "--K", "1,1,0,0"]) == 2
    assert "needs both --K and --speed" in capsys.readouterr().err
    assert main([str(tmp_path), *out, "--K", "1,1,0,0", "--velocity", "0,1,0"]) == 2
    assert "velocity must be along the camera's x axis" in capsys.readouterr().err
    assert main([str(tmp_path), *out]) == 2
    assert "holds no images" in capsys.readouterr().err
    (tmp_path / "bad.gif").write_bytes(b"GIF89a not really")
    assert main([str(tmp_path / "bad.gif"), *out]) == 2
    assert "bad.gif: cannot be read" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def _write_mp4(path, n=20, size=(64, 48)):
    """A synthetic MP4 (mp4v) whose frame k is flat grey 10 k + 20: robust to compression."""
    import cv2

    w, h = size
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 10, (w, h))
    assert writer.isOpened()
    for k in range(n):
        writer.write(np.full((h, w, 3), 10 * k + 20, np.uint8))
    writer.release()
    return path


def test_mp4_video_read_with_opencv(tmp_path, tol):
    """MP4 is read by cv2.VideoCapture (no imageio plugin needed), counted from its header."""
    import imageio.v3 as iio

    video = _write_mp4(tmp_path / "clip.mp4")
    assert count_frames(video) == 20
    assert count_frames(video, start=3, stop=15, step=4) == 3
    got = list(frames_from_source(video, start=3, stop=15, step=4))
    assert [f.shape for f in got] == [(48, 64, 3)] * 3
    np.testing.assert_allclose([f.mean() for f in got], [50, 90, 130], atol=tol.MOSAIC_MP4_GREY)
    assert main([str(video), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    pb = iio.imread(tmp_path / "o" / "pushbroom.png")
    assert pb.shape == (48, 20, 3)
    np.testing.assert_allclose(pb.mean(axis=(0, 2)), 10 * np.arange(20) + 20,
                               atol=tol.MOSAIC_MP4_GREY)


def test_video_decoded_once(tmp_path, monkeypatch):
    """Both mosaics come from one decoding pass over the video."""
    import xslit.mosaic

    video = _write_mp4(tmp_path / "clip.mp4")
    real = xslit.mosaic.frames_from_source
    yielded = []

    def counting(*args, **kwargs):
        for f in real(*args, **kwargs):
            yielded.append(1)
            yield f

    monkeypatch.setattr(xslit.mosaic, "frames_from_source", counting)
    assert main([str(video), "--out", str(tmp_path / "o"), "--K", "50,50,31.5,23.5",
                 "--speed", "0.1"]) == 0
    assert len(yielded) == 20
    assert {p.name for p in (tmp_path / "o").iterdir()} == {
        "pushbroom.png", "xslit.png", "pushbroom.json", "xslit.json"}


def test_frames_in_natural_order(tmp_path):
    """Frames 1.png ... 20.png are taken as 1, 2, ..., 20 (not 1, 10, 11, ..., 2, 20, 3)."""
    import imageio.v3 as iio

    src = tmp_path / "frames"
    src.mkdir()
    for k in range(1, 21):
        iio.imwrite(src / f"{k}.png", np.full((4, 5), k, np.uint8))
    assert [p.name for p in frame_files(src)][:4] == ["1.png", "2.png", "3.png", "4.png"]
    assert main([str(src), "--out", str(tmp_path / "o"), "--kind", "pushbroom"]) == 0
    pb = iio.imread(tmp_path / "o" / "pushbroom.png")
    np.testing.assert_array_equal(pb[0], np.arange(1, 21))


@pytest.mark.parametrize("form", ["separate", "joined"])
def test_negative_vectors_and_numbers(tmp_path, form):
    """--tvec -1,0,4.5 (two tokens) and --tvec=-1,0,4.5 are both accepted, as are negative
    scalars in exponent form."""
    import imageio.v3 as iio

    src = tmp_path / "frames"
    src.mkdir()
    for k in range(6):
        iio.imwrite(src / f"{k}.png", np.full((4, 9), k, np.uint8))
    vec = ["--tvec", "-1,0,4.5"] if form == "separate" else ["--tvec=-1,0,4.5"]
    out = tmp_path / "o"
    assert main([str(src), "--out", str(out), "--K", "50,50,4,1.5", "--speed", "-1e-1",
                 "--xslit-start", "8", "--slope", "-1.5", *vec]) == 0
    ref = mosaic_camera([[50, 0, 4], [0, 50, 1.5], [0, 0, 1]], [0, 0, 0], [-1, 0, 4.5],
                        [-0.1, 0, 0], 8.0, -1.5)
    cam = json.loads((out / "xslit.json").read_text())
    np.testing.assert_allclose(cam["camera"]["A1"], ref.A1)
    np.testing.assert_allclose(cam["camera"]["A2"], ref.A2)
    assert cam["meta"]["mosaic"]["slope"] == -1.5


def test_builder_feeds_several_mosaics_from_one_pass():
    frames = np.random.default_rng(3).integers(0, 256, size=(7, 5, 8, 3), dtype=np.uint8)
    builders = [MosaicBuilder(3.5), MosaicBuilder(0.0, 1.0, strip_width=2)]
    for f in frames:
        for b in builders:
            b.add(f)
    for b, (a, s, w) in zip(builders, [(3.5, 0.0, 1), (0.0, 1.0, 2)], strict=True):
        got, valid = b.result()
        want, want_valid = mosaic_from_frames(frames, a, s, strip_width=w)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(valid, want_valid)


def test_cli_usage_errors_name_the_flag(tmp_path, capsys):
    import imageio.v3 as iio

    src = tmp_path / "frames"
    src.mkdir()
    iio.imwrite(src / "1.png", np.zeros((4, 5), np.uint8))
    out = ["--out", str(tmp_path / "o")]
    cases = [(["--tvec", "1,2"], "--tvec"), (["--strip-width", "0"], "--strip-width"),
             (["--step", "x"], "--step"), (["--start", "3", "--stop", "2"], "--stop"),
             (["--speed", "1", "--velocity", "1,0,0"], "--speed or --velocity")]
    for extra, flag in cases:
        assert main([str(src), *out, *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and flag in err and "Traceback" not in err, err
    assert main([str(src), *out, "--start", "5"]) == 2
    assert "no frames in the selected range" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# -- against the renderer ------------------------------------------------------------------------

def _psnr(a, b, mask) -> float:
    err = np.mean((a.astype(np.float64) - b.astype(np.float64))[mask] ** 2)
    return float("inf") if err == 0 else 10 * np.log10(255.0 ** 2 / err)


def _video(n_frames=160, size=(160, 120), supersample=1):
    """A pinhole video of the room scene, moving sideways 3.2 units in total."""
    from xslit.render import make_room_scene, pose_from_look_at, renderImage

    scene = make_room_scene(0)
    w, h = size
    K = np.array([[110.0, 0, (w - 1) / 2], [0, 110.0, (h - 1) / 2], [0, 0, 1]])
    eye0 = np.array([-1.6, -4.5, 0.4])
    rvec, tvec = pose_from_look_at(eye0, eye0 + np.array([0.0, 1.0, -0.15]))
    vel = 3.2 / n_frames * matrix_from_rvec(rvec)[0]
    renders = [renderImage(scene, _frame_camera(K, rvec, tvec, vel, t), size,
                           supersample=supersample, nthreads=2) for t in range(n_frames)]
    return scene, (K, rvec, tvec, vel), renders


@pytest.fixture(scope="module")
def room_video():
    return _video()


@pytest.mark.render
@pytest.mark.parametrize(("column", "slope"), [(0.0, 1.0), (150.0, -1.0), (80.0, 0.0)])
def test_mosaic_of_rendered_video_matches_direct_rendering(room_video, column, slope):
    """Crossed-slit (slit behind, slit in front of the path) and pushbroom mosaics of a
    rendered pinhole video against renderImage with the camera mosaic_camera reports."""
    from xslit.render import renderImage

    scene, motion, renders = room_video
    frames = np.stack([r["image"] for r in renders])
    mosaic, valid = mosaic_from_frames(frames, column, slope)
    cam = mosaic_camera(*motion, column, slope)
    direct = renderImage(scene, cam, (len(frames), frames.shape[1]), nthreads=2)
    # The mosaic's hit points, taken column by column from the frames, are the direct ones.
    points = np.stack([r["points"][:, round(column + slope * t)]
                       for t, r in enumerate(renders)], axis=1)
    mask = direct["mask"] & valid[None, :] & np.isfinite(points).all(axis=2)
    assert mask.mean() > MOSAIC_MIN_VALID
    np.testing.assert_allclose(points[mask], direct["points"][mask], atol=MOSAIC_POINT_ATOL)
    psnr = _psnr(mosaic, direct["image"], mask)
    print(f"mosaic column {column} + {slope} t vs direct {cam.model}: PSNR {psnr:.1f} dB")
    assert psnr >= MOSAIC_MIN_PSNR_DB


@pytest.mark.render
@pytest.mark.slow
def test_subpixel_mosaic_matches_direct_rendering():
    """Half-pixel columns, interpolated, against the direct rendering (both anti-aliased)."""
    from xslit.render import renderImage

    scene, motion, renders = _video(supersample=2)
    frames = np.stack([r["image"] for r in renders])
    mosaic, valid = mosaic_from_frames(frames, 20.0, 0.5)
    cam = mosaic_camera(*motion, 20.0, 0.5)
    direct = renderImage(scene, cam, (len(frames), frames.shape[1]), supersample=2, nthreads=2)
    mask = direct["mask"] & valid[None, :]
    psnr = _psnr(mosaic, direct["image"], mask)
    print(f"sub-pixel crossed-slit mosaic vs direct: PSNR {psnr:.1f} dB")
    assert psnr >= MOSAIC_MIN_PSNR_DB
