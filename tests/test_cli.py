"""The ``xslit`` command: every subcommand on tiny inputs, one-line errors naming the flag, exit
statuses (0 ok, 1 failure, 2 usage, 130 interrupted), negative numbers, ``python -m xslit``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import xslit
from xslit.cli import _join_negative_values, main, read_matches, write_matches
from xslit.io import intrinsics_from_dict, read_ply


def _one_line_error(capsys, *needles) -> str:
    """The captured stderr: exactly one line, holding every needle, without a traceback."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A 64x48 X-slit stereo dataset rendered by ``xslit render``."""
    out = tmp_path_factory.mktemp("render") / "stereo"
    assert main(["render", "--recipe", "xslit-stereo", "--out", str(out), "--size", "64x48",
                 "--supersample", "1", "--max-matches", "2000", "--threads", "2",
                 "--quiet"]) == 0
    return out


def _texture(rng, shape=(120, 160)):
    """A smooth random texture (blurred noise), rich in SIFT keypoints."""
    import cv2

    noise = rng.random((shape[0] // 4, shape[1] // 4))
    img = cv2.resize(noise, shape[::-1], interpolation=cv2.INTER_CUBIC)
    return (255 * (img - img.min()) / np.ptp(img)).astype(np.uint8)


# -- the command ------------------------------------------------------------------------------
def test_python_m_xslit(tmp_path):
    """``python -m xslit`` runs the same main: help, and a one-line usage error with status 2."""
    ok = subprocess.run([sys.executable, "-m", "xslit", "--help"], capture_output=True,
                        text=True, timeout=60)
    assert ok.returncode == 0
    for cmd in ("render", "mosaic", "match", "reconstruct", "calibrate", "view"):
        assert cmd in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "xslit", "mosaic", str(tmp_path), "--out",
                          str(tmp_path / "o"), "--strip-width", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "--strip-width" in bad.stderr


@pytest.mark.parametrize("cmd", ["render", "info", "verify", "mosaic", "match", "reconstruct",
                                 "calibrate", "view"])
def test_help_everywhere(cmd, capsys):
    assert main([cmd, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: xslit {cmd}")


def test_import_xslit_stays_light():
    code = ("import sys, xslit, xslit.cli; xslit.cli.build_parser(); "
            "print(sorted({'cv2', 'open3d'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_negative_numbers_joined():
    argv = ["mosaic", "v.mp4", "--tvec", "-1,0,4.5", "--speed", "-1e-3", "--descending",
            "--slope=-2", "--column", "-.5"]
    assert _join_negative_values(argv) == ["mosaic", "v.mp4", "--tvec=-1,0,4.5",
                                           "--speed=-1e-3", "--descending", "--slope=-2",
                                           "--column=-.5"]
    # Only numbers are joined: a following flag stays a flag.
    assert _join_negative_values(["--out", "-x"]) == ["--out", "-x"]


@pytest.mark.parametrize(("argv", "needles"), [
    (["nope"], ["invalid choice", "nope"]),
    (["render", "--recipe", "xslit-stereo", "--out", "{tmp}/d", "--size", "64by48"],
     ["--size"]),
    (["render", "--recipe", "xslit-stereo", "--out", "{tmp}/d", "--views", "3"], ["--views"]),
    (["render", "--recipe", "xslit-stereo", "--out", "{tmp}/no/such/d"], ["--out"]),
    (["mosaic", "{tmp}", "--out", "{tmp}/o", "--tvec", "1,2"], ["--tvec"]),
    (["mosaic", "{tmp}", "--out", "{tmp}/o", "--K", "40,40,15.5,11.5", "--speed", "nan",
      "--tvec", "-1,0,4.5"], ["--speed", "finite"]),
    (["mosaic", "{tmp}/missing.mp4", "--out", "{tmp}/o"], ["source", "missing.mp4"]),
    (["match", "{img}", "{img}", "--out", "{tmp}/m.txt"], ["--out", ".npz or .csv"]),
    (["match", "{img}", "{img}", "--out", "{tmp}/m.npz", "--ratio", "1.5"], ["--ratio"]),
    (["match", "{img}", "{img}", "--out", "{tmp}/m.npz", "--detector", "surf"],
     ["--detector"]),
    (["reconstruct", "{img}", "{img}", "--out", "{tmp}/r"], ["--cameras or --intrinsics"]),
    (["reconstruct", "{img}", "{img}", "--out", "{tmp}/r", "--intrinsics", "{img}"],
     ["--intrinsics"]),
    (["reconstruct", "{tmp}", "--out", "{tmp}/r", "--max-matches", "3"], ["--max-matches"]),
    (["reconstruct", "{tmp}", "--out", "{tmp}/r", "--noise", "-1"], ["--noise"]),
    (["reconstruct", "{img}", "{img}", "--out", "{tmp}/r", "--cameras", "{img}", "{img}",
      "--intrinsics2", "{img}"], ["--intrinsics2"]),
    (["calibrate", "{tmp}/missing.json"], ["FILE", "missing.json"]),
    (["calibrate", "{calib}", "--flags", "PARALLEL,NOPE"], ["--flags", "NOPE"]),
    (["calibrate", "{calib}", "--flags", "FIX_D"], ["--flags", "CALIB_USE_INTRINSIC_GUESS"]),
    (["calibrate", "{calib}", "--flags", "USE_INTRINSIC_GUESS"], ["--guess"]),
    (["calibrate", "{calib}", "--out", "{tmp}/i.txt"], ["--out", ".json"]),
    (["view", "{tmp}/missing.ply"], ["PLY", "missing.ply"]),
    (["view", "{img}", "--png", "{tmp}/v.png"], ["PLY"]),
    (["view", "{tmp}/c.ply", "--png", "{tmp}/v.png", "--front", "0,0,0"], ["--front"]),
])
def test_usage_errors_name_the_flag(tmp_path, capsys, argv, needles):
    import imageio.v3 as iio

    iio.imwrite(tmp_path / "a.png", np.zeros((8, 8, 3), np.uint8))
    (tmp_path / "calib.json").write_text(json.dumps(
        {"image_size": [64, 48], "views": [{"object_points": [[0, 0, 0]] * 8,
                                            "image_points": [[1, 1]] * 8}]}))
    xslit.io.write_ply(tmp_path / "c.ply", [[0.0, 0, 1], [1, 0, 1]])
    subs = {"{tmp}": str(tmp_path), "{img}": str(tmp_path / "a.png"),
            "{calib}": str(tmp_path / "calib.json")}
    for key, value in subs.items():
        argv = [a.replace(key, value) for a in argv]
    assert main(argv) == 2
    _one_line_error(capsys, *needles)
    assert not (tmp_path / "d").exists() and not (tmp_path / "o").exists()


def test_ctrl_c_is_one_line_and_status_130(tmp_path, capsys, monkeypatch):
    import imageio.v3 as iio

    import xslit.mosaic

    iio.imwrite(tmp_path / "1.png", np.zeros((4, 5), np.uint8))

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
        yield

    monkeypatch.setattr(xslit.mosaic, "frames_from_source", interrupted)
    assert main(["mosaic", str(tmp_path), "--out", str(tmp_path / "o")]) == 130
    _one_line_error(capsys, "interrupted")


def test_sigterm_unwinds_with_status_143(tmp_path, capsys, monkeypatch):
    """kill (SIGTERM) during the work: one line, 128 + 15, no output folder left."""
    import os
    import signal

    import imageio.v3 as iio

    import xslit.mosaic

    for k in range(1, 4):
        iio.imwrite(tmp_path / f"{k}.png", np.zeros((4, 5), np.uint8))
    real = xslit.mosaic.frames_from_source

    def killed_after_one_frame(*args, **kwargs):
        for f in real(*args, **kwargs):
            yield f
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(xslit.mosaic, "frames_from_source", killed_after_one_frame)
    assert main(["mosaic", str(tmp_path), "--out", str(tmp_path / "o")]) == 143
    _one_line_error(capsys, "terminated by SIGTERM")
    assert not (tmp_path / "o").exists()


# -- mosaic -----------------------------------------------------------------------------------
def test_mosaic_from_mp4_and_numbered_frames(tmp_path, capsys):
    """A 20-frame MP4 (cv2.VideoWriter, mp4v) and a folder 1.png..20.png of the same frames
    give the same mosaics; nothing but the summary is printed when stderr is not a terminal."""
    import cv2
    import imageio.v3 as iio

    rng = np.random.default_rng(4)
    w, h = 32, 24
    frames = [np.full((h, w, 3), 12 * k, np.uint8) for k in range(20)]
    for f in frames:
        f[:, :, 1] = rng.integers(0, 256)  # some colour, constant per frame
    writer = cv2.VideoWriter(str(tmp_path / "clip.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), 10,
                             (w, h))
    folder = tmp_path / "frames"
    folder.mkdir()
    for k, f in enumerate(frames, start=1):
        writer.write(cv2.cvtColor(f, cv2.COLOR_RGB2BGR))
        iio.imwrite(folder / f"{k}.png", f)
    writer.release()
    common = ["--K", "40,40,15.5,11.5", "--speed", "-0.05", "--tvec", "-1,0,4.5"]
    assert main(["mosaic", str(tmp_path / "clip.mp4"), "--out", str(tmp_path / "v"),
                 *common]) == 0
    assert main(["mosaic", str(folder), "--out", str(tmp_path / "f"), *common]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.count("from 20 frames") == 4
    from_folder = iio.imread(tmp_path / "f" / "pushbroom.png")
    np.testing.assert_array_equal(from_folder[0], np.stack(frames)[:, 0, 0])
    from_video = iio.imread(tmp_path / "v" / "pushbroom.png").astype(float)
    assert np.abs(from_video - from_folder).max() <= 6  # the codec's loss, under half a step
    for name in ("pushbroom", "xslit"):
        a = json.loads((tmp_path / "v" / f"{name}.json").read_text())
        b = json.loads((tmp_path / "f" / f"{name}.json").read_text())
        assert a["camera"] == b["camera"]


# -- render, info, verify ---------------------------------------------------------------------
@pytest.mark.render
def test_render_info_verify(dataset, capsys):
    assert main(["info", str(dataset)]) == 0
    assert "view left: two_slit 64x48" in capsys.readouterr().out
    assert main(["verify", str(dataset)]) == 0
    assert "OK:" in capsys.readouterr().out
    # An existing dataset is refused before anything is rendered.
    assert main(["render", "--recipe", "xslit-stereo", "--out", str(dataset), "--size",
                 "64x48"]) == 2
    _one_line_error(capsys, "--out", "--overwrite")


def test_datasets_module_redirects(capsys):
    from xslit.datasets.cli import main as datasets_main

    assert datasets_main(["generate", "--help"]) == 0
    assert "usage: xslit render" in capsys.readouterr().out
    assert datasets_main(["frobnicate"]) == 2
    _one_line_error(capsys, "generate, info or verify")


# -- match ------------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".npz", ".csv"])
def test_match(tmp_path, capsys, suffix, tol):
    import imageio.v3 as iio

    img = _texture(np.random.default_rng(5))
    iio.imwrite(tmp_path / "a.png", img)
    iio.imwrite(tmp_path / "b.png", np.roll(img, 6, axis=1))
    out = tmp_path / f"m{suffix}"
    assert main(["match", str(tmp_path / "a.png"), str(tmp_path / "b.png"), "--out", str(out),
                 "--picture", str(tmp_path / "m.png"), "--ratio", "0.7"]) == 0
    p1, p2 = read_matches(out)
    assert len(p1) >= 20
    inside = p1[:, 0] < 160 - 6  # away from the wrapped columns
    shift = p2[inside] - p1[inside]
    np.testing.assert_allclose(shift, np.broadcast_to([6.0, 0.0], shift.shape),
                               atol=tol.CLI_SHIFT_MATCH_PX)
    assert iio.imread(tmp_path / "m.png").shape == (120, 320, 3)
    assert "matches (SIFT, ratio 0.7, mutual)" in capsys.readouterr().out


def test_matches_files_round_trip_and_errors(tmp_path):
    p1 = np.array([[1.5, 2.0], [3.25, -4.0]])
    p2 = p1 + 1
    for name in ("m.npz", "m.csv"):
        write_matches(tmp_path / name, p1, p2)
        got = read_matches(tmp_path / name)
        np.testing.assert_allclose(got[0], p1)
        np.testing.assert_allclose(got[1], p2)
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="header x1,y1,x2,y2"):
        read_matches(tmp_path / "bad.csv")
    np.savez(tmp_path / "bad.npz", points1=p1)
    with pytest.raises(ValueError, match="lacks the arrays"):
        read_matches(tmp_path / "bad.npz")


# -- reconstruct ------------------------------------------------------------------------------
@pytest.mark.render
def test_reconstruct_dataset_known_cameras(dataset, tmp_path, capsys, tol):
    """Exact correspondences and known cameras: the true points, and a preview."""
    out = tmp_path / "r"
    assert main(["reconstruct", str(dataset), "--out", str(out), "--matches", "gt",
                 "--max-matches", "300", "--quiet"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["points"] >= 290
    assert metrics["median_3d_error_rel"] < tol.CLI_EXACT_RECONSTRUCTION_REL
    assert 0 < metrics["chamfer_rel"] < tol.CLI_EXACT_CHAMFER_REL
    X, colors = read_ply(out / "points.ply")
    assert X.shape == (metrics["points"], 3) and colors.shape == X.shape
    assert (out / "preview.png").stat().st_size > 0
    printed = capsys.readouterr().out
    assert "median 3D error" in printed and "Chamfer distance" in printed


@pytest.mark.render
def test_reconstruct_dataset_from_intrinsics(dataset, tmp_path, tol):
    """--calibrated: the pose from the intrinsics alone (recoverTwoSlitPose), metric."""
    out = tmp_path / "r"
    assert main(["reconstruct", str(dataset), "--out", str(out), "--matches", "gt",
                 "--max-matches", "300", "--calibrated", "--no-preview", "--quiet"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["cameras"] == "recovered from intrinsics"
    assert metrics["median_3d_error_rel"] < tol.CLI_EXACT_RECONSTRUCTION_REL


@pytest.mark.render
def test_reconstruct_images_with_camera_and_intrinsics_files(dataset, tmp_path, tol):
    """Two images with camera files, or with intrinsics files as calibrate writes them, and
    a .csv matches file; the result has no ground truth, only counts."""
    ds = xslit.load_dataset(dataset)
    c = ds.pair("left", "right")
    write_matches(tmp_path / "m.csv", c.points1[:300], c.points2[:300])
    for v in ds.views:
        (tmp_path / f"{v.name}.json").write_text(json.dumps(
            {"camera": v.camera.to_dict(), "image_size": list(v.image_size)}))
        (tmp_path / f"{v.name}_intr.json").write_text(json.dumps(v.intrinsics.to_dict()))
    images = [str(dataset / "images" / "left.png"), str(dataset / "images" / "right.png")]
    common = ["--matches", str(tmp_path / "m.csv"), "--no-preview", "--quiet"]
    assert main(["reconstruct", *images, "--out", str(tmp_path / "a"), "--cameras",
                 str(tmp_path / "left.json"), str(tmp_path / "right.json"), *common]) == 0
    X, _ = read_ply(tmp_path / "a" / "points.ply")
    assert len(X) == 300
    diameter = np.linalg.norm(np.ptp(ds.point_cloud[0], axis=0))
    err = np.linalg.norm(X - c.X[:300], axis=1) / diameter
    assert np.median(err) < tol.CLI_EXACT_RECONSTRUCTION_REL
    assert main(["reconstruct", *images, "--out", str(tmp_path / "b"), "--intrinsics",
                 str(tmp_path / "left_intr.json"), "--intrinsics2",
                 str(tmp_path / "right_intr.json"), *common]) == 0
    metrics = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert metrics["points"] >= 290 and "median_3d_error" not in metrics


@pytest.mark.render
def test_reconstruct_from_feature_matches(tmp_path, tol):
    """The whole pipeline on rendered 160x120 images: SIFT matches, tensor, triangulation."""
    ds = tmp_path / "ds"
    assert main(["render", "--recipe", "xslit-stereo", "--out", str(ds), "--size", "160x120",
                 "--supersample", "1", "--max-matches", "100", "--quiet"]) == 0
    assert main(["reconstruct", str(ds), "--out", str(tmp_path / "r"), "--quiet"]) == 0
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["points"] >= 50
    assert metrics["median_3d_error_rel"] < tol.CLI_FEATURE_RECONSTRUCTION_REL


def test_reconstruct_random_matches_fail_with_status_1(tmp_path, capsys):
    """Valid arguments, but no tensor explains random correspondences: a failure, not usage."""
    import imageio.v3 as iio

    from xslit.synthetic import random_two_view_scene

    s = random_two_view_scene(0, n=20)
    for k in (1, 2):
        (tmp_path / f"c{k}.json").write_text(json.dumps({"camera": s[f"camera{k}"].to_dict()}))
    iio.imwrite(tmp_path / "a.png", np.zeros((480, 640, 3), np.uint8))
    rng = np.random.default_rng(0)
    write_matches(tmp_path / "m.npz", rng.uniform(0, 640, (200, 2)),
                  rng.uniform(0, 640, (200, 2)))
    assert main(["reconstruct", str(tmp_path / "a.png"), str(tmp_path / "a.png"), "--out",
                 str(tmp_path / "r"), "--cameras", str(tmp_path / "c1.json"),
                 str(tmp_path / "c2.json"), "--matches", str(tmp_path / "m.npz"),
                 "--no-preview"]) == 1
    _one_line_error(capsys, "xslit: error: no epipolar tensor fits the 200", "chance")
    assert not (tmp_path / "r").exists()


# -- calibrate --------------------------------------------------------------------------------
def _calibration_views(sigma=0.0):
    from xslit.synthetic import random_calibration_views

    true = xslit.TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, np.radians(80), 0.5)
    return true, random_calibration_views(true, 5, rng=1, sigma=sigma)


@pytest.mark.parametrize("fmt", ["json", "npz"])
def test_calibrate(tmp_path, capsys, tol, fmt):
    true, v = _calibration_views()
    path = tmp_path / f"views.{fmt}"
    if fmt == "json":
        path.write_text(json.dumps({"image_size": [640, 480], "views": [
            {"object_points": o.tolist(), "image_points": i.tolist()}
            for o, i in zip(v["object_points"], v["image_points"], strict=True)]}))
    else:
        arrays = {f"object_points_{k}": o for k, o in enumerate(v["object_points"])}
        arrays |= {f"image_points_{k}": i for k, i in enumerate(v["image_points"])}
        np.savez(path, image_size=np.array([640, 480]), **arrays)
    out, report = tmp_path / "intr.json", tmp_path / "report.json"
    assert main(["calibrate", str(path), "--flags", "calib_parallel", "--out", str(out),
                 "--report", str(report)]) == 0
    intr = intrinsics_from_dict(json.loads(out.read_text()))
    for name in ("fu", "fv", "u0", "v0", "theta", "d"):
        assert getattr(intr, name) == pytest.approx(getattr(true, name),
                                                    rel=tol.CALIB_EXACT_RTOL)
    rep = json.loads(report.read_text())
    assert len(rep["per_view_errors"]) == 5 and rep["std_deviations"]["K1[1,0]"] == 0
    printed = capsys.readouterr().out
    assert "K1[1,0] = 0  (fixed)" in printed and "RMS reprojection error" in printed


def test_calibrate_noisy_prints_standard_deviations(tmp_path, capsys):
    _, v = _calibration_views(sigma=0.3)
    path = tmp_path / "views.json"
    path.write_text(json.dumps({"views": [
        {"object_points": o.tolist(), "image_points": i.tolist()}
        for o, i in zip(v["object_points"], v["image_points"], strict=True)]}))
    assert main(["calibrate", str(path), "--image-size", "640x480", "--flags",
                 "PARALLEL,FIX_PRINCIPAL_POINT"]) == 0
    printed = capsys.readouterr().out
    assert "fu = " in printed and " +- " in printed and "u0 = 319.5  (fixed)" in printed


def test_calibrate_without_image_size_is_usage(tmp_path, capsys):
    _, v = _calibration_views()
    path = tmp_path / "views.json"
    path.write_text(json.dumps({"views": [{"object_points": v["object_points"][0].tolist(),
                                           "image_points": v["image_points"][0].tolist()}]}))
    assert main(["calibrate", str(path)]) == 2
    _one_line_error(capsys, "--image-size")


# -- view -------------------------------------------------------------------------------------
@pytest.mark.parametrize("front", [["--front", "-1,0,0.5"], ["--front=-1,0,0.5"]])
def test_view_png(tmp_path, capsys, front):
    import imageio.v3 as iio

    rng = np.random.default_rng(6)
    xslit.io.write_ply(tmp_path / "c.ply", rng.normal(size=(200, 3)),
                       rng.integers(0, 256, (200, 3)))
    assert main(["view", str(tmp_path / "c.ply"), "--png", str(tmp_path / "v.png"), "--size",
                 "96x64", *front, "--up", "0,0,1"]) == 0
    assert iio.imread(tmp_path / "v.png").shape[:2] == (64, 96)
    assert "wrote" in capsys.readouterr().out
