"""The samples run end to end on rendered images and meet their accuracy bounds (small sizes,
so that CI runs them)."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from tolerances import SAMPLE_CHAMFER_SMALL, SAMPLE_DSM_MEDIAN, SAMPLE_ROTATION_DEG

pytestmark = [pytest.mark.render, pytest.mark.slow]
pytest.importorskip("xslit.render")

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _run(name, argv):
    spec = importlib.util.spec_from_file_location(name, SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main(argv)


def test_xslit_stereo_sample(tmp_path):
    assert _run("xslit_stereo", ["--out", str(tmp_path), "--size", "320x240",
                                 "--metrics", str(tmp_path / "all.json")]) == 0
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["rotation_error_deg"] < SAMPLE_ROTATION_DEG
    assert m["chamfer_fraction_of_diameter"] < SAMPLE_CHAMFER_SMALL
    assert json.loads((tmp_path / "all.json").read_text())["xslit_stereo"] == m
    for name in ("view1.png", "view2.png", "matches.png", "points.ply", "cloud.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_pushbroom_stereo_sample(tmp_path):
    assert _run("pushbroom_stereo", ["--out", str(tmp_path), "--size", "600x600"]) == 0
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["dense_rotation_error_deg"] < SAMPLE_ROTATION_DEG
    assert m["chamfer_fraction_of_diameter"] < SAMPLE_CHAMFER_SMALL
    assert m["dsm_error_median"] < SAMPLE_DSM_MEDIAN
    for name in ("strip1.png", "strip2.png", "matches.png", "points.ply", "cloud.png",
                 "dsm.png", "dsm_error.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_samples_refuse_a_bad_size(tmp_path, capsys):
    for name in ("xslit_stereo", "pushbroom_stereo"):
        with pytest.raises(SystemExit) as exc:
            _run(name, ["--out", str(tmp_path), "--size", "big"])
        assert exc.value.code == 2
        assert "--size must be" in capsys.readouterr().err


def test_mosaic_stereo_sample(tmp_path):
    assert _run("mosaic_stereo", ["--out", str(tmp_path), "--frames", "200"]) == 0
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["inlier_distance_to_true_tensor_median"] < 1.0
    assert m["distance_to_surface_median"] < SAMPLE_CHAMFER_SMALL * m["scene_diameter"]
    for name in ("pushbroom.png", "xslit_left.png", "xslit_right.png", "matches.png",
                 "points.ply", "cloud.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_show_clouds_sample_draws_pictures(tmp_path):
    pts = np.random.default_rng(0).normal(size=(500, 3))
    from xslit.io.ply import write_ply

    write_ply(tmp_path / "c.ply", pts, np.full((500, 3), 200, np.uint8))
    assert _run("show_clouds", [str(tmp_path / "c.ply"), "--png", str(tmp_path / "v.png"),
                                "--size", "160x120"]) == 0
    import imageio.v3 as iio

    img = iio.imread(tmp_path / "v.png")
    assert img.shape[:2] == (120, 480) and (img[..., :3] < 250).any()
