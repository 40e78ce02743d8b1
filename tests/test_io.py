"""Dataset format: round trips, damage detection with clear errors, atomic writes; PLY, JSON."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import subprocess
import sys

import numpy as np
import pytest

import xslit
from xslit.io import (
    FORMAT_VERSION,
    Dataset,
    DatasetWriter,
    ProgressBar,
    Terminated,
    View,
    load_dataset,
    read_json,
    read_ply,
    read_ply_cloud,
    read_ply_elements,
    sha256_of_file,
    verify_dataset,
    write_dataset,
    write_json,
    write_ply,
)
from xslit.io.jsonio import MAX_JSON_DEPTH
from xslit.synthetic import (
    random_points_in_front,
    random_pushbroom_intrinsics,
    random_two_slit_intrinsics,
)

W, H = 24, 16


def _views(rng):
    rng = np.random.default_rng(rng)
    i2 = random_two_slit_intrinsics(rng)
    r2, t2 = rng.normal(scale=0.2, size=3), np.array([0.1, -0.2, 6.0])
    ip = random_pushbroom_intrinsics(rng)
    rp, tp = rng.normal(scale=0.2, size=3), np.array([0.0, 0.3, 5.0])
    K = np.array([[30.0, 0, 12], [0, 30, 8], [0, 0, 1]])
    rk, tk = np.zeros(3), np.array([0, 0, 4.0])
    cams = [(xslit.composeTwoSlitProjection(i2, r2, t2), i2, r2, t2),
            (xslit.composePushbroomProjection(ip, rp, tp), ip, rp, tp),
            (xslit.PinholeCamera.from_intrinsics(K, rk, tk), K, rk, tk)]
    views = []
    jj, ii = np.meshgrid(np.arange(W), np.arange(H))
    pixels = np.stack([jj.ravel(), ii.ravel()], axis=1).astype(float)
    for k, (cam, intr, r, t) in enumerate(cams):
        rays = cam.rays(pixels)  # ground truth: a point on each pixel's ray
        pts = rays[:, :3] + rng.uniform(1, 3, size=(len(rays), 1)) * rays[:, 3:]
        pts = pts.reshape(H, W, 3).astype(np.float32)
        pts[rng.uniform(size=(H, W)) < 0.2] = np.nan
        views.append(View(f"view_{k:03d}", cam, rng.integers(0, 256, (H, W, 3), dtype=np.uint8),
                          pts, intr, {"rvec": r, "tvec": t}, {"index": k}))
    return views


def _dataset(rng=0) -> Dataset:
    views = _views(rng)
    X = random_points_in_front([views[0].camera, views[2].camera], 30, rng, radius=0.5)
    pairs = [xslit.io.Correspondences("view_000", "view_002", views[0].camera.project(X),
                                      views[2].camera.project(X), X)]
    cloud = (X, np.full((30, 3), 200, np.uint8))
    return Dataset(views, pairs, {"recipe": "test", "seed": 0}, cloud)


@pytest.fixture
def written(tmp_path):
    ds = _dataset()
    root = tmp_path / "ds"
    write_dataset(root, ds, progress=False)
    return ds, root


def _rehash(root, rel):
    """Update the manifest entry of ``rel`` to the file as it is now (a consistent edit)."""
    m = json.loads((root / "manifest.json").read_text())
    p = root / rel
    m["files"][rel] = {"size": p.stat().st_size, "sha256": sha256_of_file(p)}
    (root / "manifest.json").write_text(json.dumps(m))


def _edit_manifest(root, fn):
    m = json.loads((root / "manifest.json").read_text())
    fn(m)
    (root / "manifest.json").write_text(json.dumps(m))


# -- round trip ----------------------------------------------------------------------------
def test_round_trip_identical(written, tol):
    ds, root = written
    got = load_dataset(root)
    assert got.metadata == ds.metadata
    assert [v.name for v in got.views] == [v.name for v in ds.views]
    for a, b in zip(ds.views, got.views, strict=True):
        assert type(a.camera) is type(b.camera)
        assert a.camera.to_dict() == b.camera.to_dict()
        np.testing.assert_array_equal(a.image, b.image)
        assert b.points.dtype == np.float32
        np.testing.assert_array_equal(a.points, b.points)  # NaNs in the same places
        np.testing.assert_array_equal(a.pose["rvec"], b.pose["rvec"])
        np.testing.assert_array_equal(a.pose["tvec"], b.pose["tvec"])
        assert b.meta == a.meta
    for k in (0, 1):
        assert got.views[k].intrinsics.to_dict() == ds.views[k].intrinsics.to_dict()
    np.testing.assert_array_equal(got.views[2].intrinsics, ds.views[2].intrinsics)
    c0, c1 = ds.correspondences[0], got.correspondences[0]
    for k in ("points1", "points2", "X"):
        np.testing.assert_array_equal(getattr(c0, k), getattr(c1, k))
    np.testing.assert_array_equal(got.point_cloud[0], ds.point_cloud[0])
    np.testing.assert_array_equal(got.point_cloud[1], ds.point_cloud[1])
    swapped = got.pair("view_002", "view_000")
    np.testing.assert_array_equal(swapped.points1, c0.points2)
    report = verify_dataset(root)
    assert report["views"] == 3
    assert report["max_pair_reprojection_px"] < tol.DATASET_PAIR_REPROJECTION_PX


def test_manifest_lists_every_file(written):
    _, root = written
    m = json.loads((root / "manifest.json").read_text())
    assert m["version"] == FORMAT_VERSION and m["format"] == "xslit-dataset"
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert on_disk - {"manifest.json"} == set(m["files"])
    assert not list(root.parent.glob(".ds.*"))  # no temporary folders left


# -- damage ----------------------------------------------------------------------------------
def test_truncated_png(written):
    _, root = written
    p = root / "images/view_001.png"
    p.write_bytes(p.read_bytes()[:-40])
    with pytest.raises(ValueError, match=r"images/view_001.png: file is truncated"):
        load_dataset(root)
    _rehash(root, "images/view_001.png")
    with pytest.raises(ValueError, match=r"images/view_001.png: cannot be decoded as a PNG"):
        load_dataset(root)


def test_edited_json_checksum_mismatch(written):
    _, root = written
    p = root / "cameras/view_000.json"
    p.write_text(p.read_text().replace("0", "1", 1))
    with pytest.raises(ValueError, match=r"cameras/view_000.json: (checksum mismatch|file is)"):
        load_dataset(root)


def test_edited_json_same_size_detected_by_checksum(written):
    _, root = written
    p = root / "cameras/view_000.json"
    text = p.read_text()
    i = text.index(".") + 1  # first digit after a decimal point: inside a number
    p.write_text(text[:i] + ("2" if text[i] != "2" else "3") + text[i + 1:])
    with pytest.raises(ValueError, match=r"cameras/view_000.json: checksum mismatch"):
        load_dataset(root)
    # Without checksums the sizes still agree, but the camera no longer matches its
    # intrinsics and pose.
    with pytest.raises(ValueError, match=r"view_000.json: bad camera data: intrinsics and pose"):
        load_dataset(root, checksums=False)


def test_malformed_json(written):
    _, root = written
    p = root / "cameras/view_002.json"
    p.write_text(p.read_text()[:-10])
    _rehash(root, "cameras/view_002.json")
    with pytest.raises(ValueError, match=r"cameras/view_002.json: malformed JSON: .* line \d+"):
        load_dataset(root)


def test_bad_camera_data(written):
    _, root = written
    rel = "cameras/view_000.json"
    rec = json.loads((root / rel).read_text())
    rec["camera"]["A1"] = [[1, 0, 0, 0], [2, 0, 0, 0]]
    (root / rel).write_text(json.dumps(rec))
    _rehash(root, rel)
    with pytest.raises(ValueError, match=r"cameras/view_000.json: bad camera data: A1 must have "
                                         r"rank 2"):
        load_dataset(root)


def test_camera_inconsistent_with_intrinsics(written):
    _, root = written
    rel = "cameras/view_001.json"
    rec = json.loads((root / rel).read_text())
    rec["pose"]["tvec"][2] += 1.0
    (root / rel).write_text(json.dumps(rec))
    _rehash(root, rel)
    with pytest.raises(ValueError, match=r"view_001.json: bad camera data: intrinsics and pose "
                                         r"do not rebuild"):
        load_dataset(root)


def test_missing_file(written):
    _, root = written
    (root / "points/view_002.npz").unlink()
    with pytest.raises(ValueError, match=r"points/view_002.npz: file is missing"):
        load_dataset(root)


def test_missing_manifest(tmp_path):
    (tmp_path / "x").mkdir()
    with pytest.raises(ValueError, match=r"manifest.json: file is missing; .* not an xslit"):
        load_dataset(tmp_path / "x")


@pytest.mark.parametrize(("version", "match"), [(FORMAT_VERSION + 1, "newer xslit"),
                                                (0, "unsupported format version 0"),
                                                ("1", "version must be an integer")])
def test_wrong_version(written, version, match):
    _, root = written
    _edit_manifest(root, lambda m: m.update(version=version))
    with pytest.raises(ValueError, match=match):
        load_dataset(root)


def test_image_shape_mismatch(written):
    _, root = written
    rel = "cameras/view_000.json"
    rec = json.loads((root / rel).read_text())
    rec["image_size"] = [W + 1, H]
    (root / rel).write_text(json.dumps(rec))
    _rehash(root, rel)
    with pytest.raises(ValueError, match=rf"images/view_000.png: image must be \({H}, {W + 1}, 3"):
        load_dataset(root)


def test_bad_points_and_matches(written):
    _, root = written
    np.savez(root / "points/view_001.npz", points=np.zeros((H, W, 2)))
    _rehash(root, "points/view_001.npz")
    with pytest.raises(ValueError, match=r"points/view_001.npz: points must be a float array"):
        load_dataset(root)


def test_truncated_npz_and_unlisted_path(written):
    _, root = written
    rel = "matches/view_000__view_002.npz"
    (root / rel).write_bytes((root / rel).read_bytes()[:50])
    _rehash(root, rel)
    with pytest.raises(ValueError, match=r"matches/view_000__view_002.npz: cannot be read"):
        load_dataset(root)
    _edit_manifest(root, lambda m: m["views"][0].update(image="../escape.png"))
    with pytest.raises(ValueError, match=r"bad file name '../escape.png'"):
        load_dataset(root)


def test_verify_detects_wrong_ground_truth(tmp_path):
    ds = _dataset(1)
    c = ds.correspondences[0]
    c.points2 = c.points2 + 0.5
    write_dataset(tmp_path / "d", ds, progress=False)
    load_dataset(tmp_path / "d")  # structurally fine
    with pytest.raises(ValueError, match=r"do not reproject into view_002"):
        verify_dataset(tmp_path / "d")


# -- atomic writes ---------------------------------------------------------------------------
def test_interrupted_write_leaves_nothing(tmp_path):
    views = _views(2)
    out = tmp_path / "new"
    with pytest.raises(RuntimeError, match="simulated crash"), DatasetWriter(out,
                                                                             progress=False) as w:
        w.add_view(views[0].name, views[0].camera, views[0].image, points=views[0].points)
        raise RuntimeError("simulated crash")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_interrupted_overwrite_keeps_old_dataset(written):
    _, root = written
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    views = _views(3)
    with pytest.raises(KeyboardInterrupt), DatasetWriter(root, overwrite=True,
                                                         progress=False) as w:
        w.add_view("other", views[1].camera, views[1].image)
        raise KeyboardInterrupt  # Ctrl-C in the middle of a long generation
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in root.parent.iterdir()) == ["ds"]
    load_dataset(root)


def test_overwrite_replaces(written):
    _, root = written
    views = _views(4)
    with DatasetWriter(root, {"v": 2}, overwrite=True, progress=False) as w:
        w.add_view("only", views[2].camera, views[2].image)
    got = load_dataset(root)
    assert [v.name for v in got.views] == ["only"] and got.metadata == {"v": 2}
    assert sorted(p.name for p in root.parent.iterdir()) == ["ds"]


def test_writer_refuses(tmp_path, written):
    _, root = written
    with pytest.raises(ValueError, match="already exists; pass overwrite=True"):
        DatasetWriter(root)
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "thesis.tex").write_text("x")
    with pytest.raises(ValueError, match=r"not an xslit dataset .* refusing"):
        DatasetWriter(tmp_path / "precious", overwrite=True)
    views = _views(5)
    with DatasetWriter(tmp_path / "n", progress=False) as w:
        w.add_view("a", views[0].camera, views[0].image)
        with pytest.raises(ValueError, match="name 'a' is already a view"):
            w.add_view("a", views[0].camera, views[0].image)
        with pytest.raises(ValueError, match="name must be 1-100 characters"):
            w.add_view("../x", views[0].camera, views[0].image)
        with pytest.raises(ValueError, match=r"image must be an \(H, W, 3\) uint8 array"):
            w.add_view("b", views[0].camera, views[0].image.astype(float))
        with pytest.raises(ValueError, match="points must be a float array of shape"):
            w.add_view("b", views[0].camera, views[0].image, points=np.zeros((2, 2, 3)))
        with pytest.raises(ValueError, match="view2 must name a view added before"):
            w.add_correspondences("a", "zz", np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 3)))
        with pytest.raises(ValueError, match=r"points2 must have shape \(1, 2\)"):
            w.add_correspondences("a", "a", np.zeros((1, 2)), np.zeros((2, 2)), np.zeros((1, 3)))


# -- helpers -----------------------------------------------------------------------------------
def test_ply_round_trip_and_ascii(tmp_path):
    rng = np.random.default_rng(6)
    P = rng.normal(size=(50, 3))
    C = rng.integers(0, 256, size=(50, 3), dtype=np.uint8)
    write_ply(tmp_path / "a.ply", P, C)
    P2, C2 = read_ply(tmp_path / "a.ply")
    np.testing.assert_array_equal(P, P2)
    np.testing.assert_array_equal(C, C2)
    (tmp_path / "b.ply").write_text("ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\n"
                                    "property float y\nproperty float z\nend_header\n"
                                    "1 2 3\n4 5 6\n")
    P3, C3 = read_ply(tmp_path / "b.ply")
    assert P3.tolist() == [[1, 2, 3], [4, 5, 6]] and C3 is None
    raw = (tmp_path / "a.ply").read_bytes()
    (tmp_path / "c.ply").write_bytes(raw[:-10])
    with pytest.raises(ValueError, match="truncated PLY data"):
        read_ply(tmp_path / "c.ply")
    with pytest.raises(ValueError, match=r"points must have shape \(N, 3\)"):
        write_ply(tmp_path / "d.ply", np.zeros((3, 2)))


def test_json_helpers(tmp_path):
    write_json(tmp_path / "a.json", {"x": np.arange(3), "y": np.float64(1.5)})
    assert read_json(tmp_path / "a.json") == {"x": [0, 1, 2], "y": 1.5}
    (tmp_path / "b.json").write_text('{"x": NaN}')
    with pytest.raises(ValueError, match="NaN is not allowed"):
        read_json(tmp_path / "b.json")
    with pytest.raises(ValueError, match="Out of range float values"):
        write_json(tmp_path / "c.json", {"x": float("inf")})
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1000, 100_000])
def test_json_nested_too_deeply_is_refused_by_name(tmp_path, depth):
    """Nesting beyond MAX_JSON_DEPTH, up to the 100,000 brackets that exhaust the parser's
    stack, is a ValueError naming the file; MAX_JSON_DEPTH levels are read."""
    (tmp_path / "ok.json").write_text("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    assert read_json(tmp_path / "ok.json") is not None
    (tmp_path / "deep.json").write_text("[" * depth + "]" * depth)
    with pytest.raises(ValueError, match=r"deep\.json: malformed JSON: nested more than"):
        read_json(tmp_path / "deep.json")


def test_json_larger_than_the_limit_is_refused_before_reading(tmp_path, monkeypatch):
    import xslit.io.jsonio as jsonio

    monkeypatch.setattr(jsonio, "MAX_JSON_BYTES", 100)
    (tmp_path / "big.json").write_text("[" + ", ".join(["1"] * 100) + "]")
    with pytest.raises(ValueError, match=r"big\.json: \d+ bytes, more than the 100"):
        read_json(tmp_path / "big.json")
    with pytest.raises(ValueError, match=r"missing\.json: file is missing"):
        read_json(tmp_path / "missing.json")


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


def test_progress_bar_draws_on_terminals_only(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = _Terminal()
    with ProgressBar(4, "work", stream=out) as bar:
        for _ in range(4):
            bar.update(note="a long note " * 20)
    text = out.getvalue()
    assert "work [" in text and "4/4" in text and text.endswith("\n")
    # One line redrawn in place, never reaching the 80th column (no wrapping).
    assert all(len(line) <= 79 for line in text.rstrip("\n").split("\r"))
    for enabled in (None, True):  # a log file or a pipe never receives a bar
        log = io.StringIO()
        with ProgressBar(4, "work", enabled=enabled, stream=log) as bar:
            bar.update()
        assert log.getvalue() == ""
    quiet = _Terminal()
    with ProgressBar(4, "work", enabled=False, stream=quiet) as bar:
        bar.update()
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("columns", [12, 20, 40, 200])
def test_progress_bar_fits_any_width(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    out = _Terminal()
    with ProgressBar(1000, "a-rather-long-description", stream=out) as bar:
        bar.update(500, note="note")
    lines = out.getvalue().rstrip("\n").split("\r")
    assert all(len(line) <= columns - 1 for line in lines)
    assert "500/1000" in out.getvalue() or columns < 20


# -- PLY ---------------------------------------------------------------------------------------
def _ply_header(fmt, elements):
    lines = ["ply", f"format {fmt} 1.0"]
    for name, count, props in elements:
        lines.append(f"element {name} {count}")
        lines += [f"property {p}" for p in props]
    return ("\n".join([*lines, "end_header"]) + "\n").encode()


_VERTEX_PROPS = ["float x", "float y", "float z", "uchar red", "uchar green", "uchar blue"]
_FACE_PROPS = ["list uchar int vertex_indices"]


def _mesh(rng, n=7, m=4):
    P = rng.normal(size=(n, 3)).astype(np.float32)
    C = rng.integers(0, 256, size=(n, 3), dtype=np.uint8)
    F = rng.integers(0, n, size=(m, 3), dtype=np.int32)
    return P, C, F


@pytest.mark.parametrize("endian", ["<", ">"])
def test_ply_binary_face_before_vertex(tmp_path, rng, endian):
    P, C, F = _mesh(rng)
    fmt = {"<": "binary_little_endian", ">": "binary_big_endian"}[endian]
    vdt = np.dtype([("x", endian + "f4"), ("y", endian + "f4"), ("z", endian + "f4"),
                    ("red", "u1"), ("green", "u1"), ("blue", "u1")])
    fdt = np.dtype([("n", "u1"), ("idx", endian + "i4", (3,))])
    v = np.empty(len(P), vdt)
    v["x"], v["y"], v["z"] = P.T
    v["red"], v["green"], v["blue"] = C.T
    f = np.empty(len(F), fdt)
    f["n"], f["idx"] = 3, F
    head = _ply_header(fmt, [("face", len(F), _FACE_PROPS), ("vertex", len(P), _VERTEX_PROPS)])
    (tmp_path / "m.ply").write_bytes(head + f.tobytes() + v.tobytes())
    P2, C2 = read_ply(tmp_path / "m.ply")
    np.testing.assert_array_equal(P2, P.astype(np.float64))
    np.testing.assert_array_equal(C2, C)
    el = read_ply_elements(tmp_path / "m.ply")
    assert list(el) == ["face", "vertex"]
    np.testing.assert_array_equal(el["face"]["vertex_indices"], F)


def test_ply_binary_ragged_lists_and_all_types(tmp_path, rng):
    types = {"char": "i1", "uchar": "u1", "short": "i2", "ushort": "u2", "int": "i4",
             "uint": "u4", "float": "f4", "double": "f8"}
    n = 5
    vdt = np.dtype([("x", "<f8"), ("y", "<f8"), ("z", "<f8")]
                   + [(f"p_{t}", "<" + c) for t, c in types.items()])
    v = np.zeros(n, vdt)
    for k in ("x", "y", "z"):
        v[k] = rng.normal(size=n)
    for t, c in types.items():
        info = np.iinfo(c) if c[0] in "iu" else None
        v[f"p_{t}"] = info.max if info else 1.5
    faces = [np.array([0, 1, 2], "<i4"), np.array([0, 1, 2, 3], "<i4"), np.array([], "<i4")]
    body = b"".join(bytes([len(f)]) + f.tobytes() + np.float32(k).tobytes()
                    for k, f in enumerate(faces))
    head = _ply_header("binary_little_endian",
                       [("vertex", n, ["double x", "double y", "double z"]
                         + [f"{t} p_{t}" for t in types]),
                        ("face", len(faces), [*_FACE_PROPS, "float quality"])])
    (tmp_path / "t.ply").write_bytes(head + v.tobytes() + body)
    el = read_ply_elements(tmp_path / "t.ply")
    for t, c in types.items():
        assert el["vertex"][f"p_{t}"].dtype == np.dtype(c)
        np.testing.assert_array_equal(el["vertex"][f"p_{t}"], v[f"p_{t}"])
    got = el["face"]["vertex_indices"]
    assert [g.tolist() for g in got] == [f.tolist() for f in faces]
    np.testing.assert_array_equal(el["face"]["quality"], [0, 1, 2])
    P, C = read_ply(tmp_path / "t.ply")
    assert C is None and P.shape == (n, 3)


def test_ply_ascii_lists_float_colours_and_crlf(tmp_path):
    text = ("ply\r\nformat ascii 1.0\r\ncomment made by hand\r\nelement face 2\r\n"
            "property list uchar int vertex_indices\r\nelement vertex 3\r\n"
            "property float x\r\nproperty float y\r\nproperty float z\r\n"
            "property float red\r\nproperty float green\r\nproperty float blue\r\n"
            "end_header\r\n3 0 1 2\r\n4 0 1 2 0\r\n"
            "0 0 0 1 0.5 0\r\n1 0 0 0.2 0 1\r\n0 1 0 0 0 0.002\r\n")
    (tmp_path / "a.ply").write_bytes(text.encode())
    P, C = read_ply(tmp_path / "a.ply")
    assert P.tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    # float colours are scaled, not truncated to 0
    assert C.tolist() == [[255, 128, 0], [51, 0, 255], [0, 0, 1]]
    faces = read_ply_elements(tmp_path / "a.ply")["face"]["vertex_indices"]
    assert [f.tolist() for f in faces] == [[0, 1, 2], [0, 1, 2, 0]]


def test_ply_write_float_and_uint8_colours(tmp_path, rng, tol):
    P = rng.normal(size=(40, 3))
    Cf = rng.uniform(size=(40, 3))
    N = rng.normal(size=(40, 3))
    write_ply(tmp_path / "f.ply", P, Cf, N)
    P2, C2, N2 = read_ply_cloud(tmp_path / "f.ply")
    np.testing.assert_array_equal(P2, P)
    np.testing.assert_array_equal(N2, N)
    np.testing.assert_allclose(C2 / 255.0, Cf, atol=tol.PLY_COLOR_ATOL)
    C8 = rng.integers(0, 256, size=(40, 3), dtype=np.uint8)
    write_ply(tmp_path / "u.ply", P, C8)
    np.testing.assert_array_equal(read_ply(tmp_path / "u.ply")[1], C8)
    with pytest.raises(ValueError, match=r"float colors must be in \[0, 1\]"):
        write_ply(tmp_path / "x.ply", P, Cf * 255)
    with pytest.raises(ValueError, match=r"integer colors must be in \[0, 255\]"):
        write_ply(tmp_path / "x.ply", P, C8.astype(int) + 256)
    with pytest.raises(ValueError, match=r"colors must be an \(40, 3\) array"):
        write_ply(tmp_path / "x.ply", P, C8[:3])
    with pytest.raises(ValueError, match=r"normals must have shape \(40, 3\)"):
        write_ply(tmp_path / "x.ply", P, normals=N[:, :2])
    assert not (tmp_path / "x.ply").exists()


@pytest.mark.parametrize("ascii_", [False, True])
def test_ply_round_trip_with_open3d(tmp_path, rng, tol, ascii_):
    o3d = pytest.importorskip("open3d")
    P = rng.normal(size=(60, 3))
    C = rng.uniform(size=(60, 3))
    N = rng.normal(size=(60, 3))
    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(P))
    cloud.colors = o3d.utility.Vector3dVector(C)
    cloud.normals = o3d.utility.Vector3dVector(N)
    # Open3D writes, xslit reads.
    assert o3d.io.write_point_cloud(str(tmp_path / "o.ply"), cloud, write_ascii=ascii_)
    P2, C2, N2 = read_ply_cloud(tmp_path / "o.ply")
    atol = tol.PLY_OPEN3D_ASCII_ATOL if ascii_ else 0
    np.testing.assert_allclose(P2, P, rtol=0, atol=atol)
    np.testing.assert_allclose(N2, N, rtol=0, atol=atol)
    np.testing.assert_allclose(C2 / 255.0, C, atol=tol.PLY_COLOR_ATOL)
    # xslit writes (Open3D's float colours), Open3D reads.
    write_ply(tmp_path / "x.ply", P, C, N)
    back = o3d.io.read_point_cloud(str(tmp_path / "x.ply"))
    np.testing.assert_array_equal(np.asarray(back.points), P)
    np.testing.assert_array_equal(np.asarray(back.normals), N)
    np.testing.assert_allclose(np.asarray(back.colors), C, atol=tol.PLY_COLOR_ATOL)


_GOOD = ("ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
         "property float z\nend_header\n1 2 3\n4 5 6\n")


@pytest.mark.parametrize(("text", "match"), [
    (_GOOD.replace("vertex 2", "vertex -5"), r"element vertex -5: the count must be a non-neg"),
    (_GOOD.replace("vertex 2", "vertex abc"), r"element vertex abc: the count must be"),
    (_GOOD.replace("vertex 2", "vertex 3"), r"truncated PLY data: element vertex needs 3 rows"),
    (_GOOD.replace("vertex 2", "vertex 1"), r"3 values after the last element"),
    (_GOOD.replace("4 5 6", "4 five 6"), r"malformed ASCII PLY data in element vertex"),
    (_GOOD.replace("float y", "quad y"), r"header line 5 'property quad y': expected"),
    (_GOOD.replace("format ascii 1.0\n", ""), r"PLY header has no 'format' line"),
    (_GOOD.replace("ascii", "binary_middle_endian"), r"expected one 'format ascii"),
    (_GOOD.replace("end_header", "end"), r"PLY header has no 'end_header' line"),
    (_GOOD.replace("ply\n", "PLY\n", 1), r"not a PLY file"),
    (_GOOD.replace("element vertex 2\n", "") + "", r"property before any element"),
    (_GOOD.replace("property float x", "property list float int x"),
     r"a list's count type must be an integer type"),
    (_GOOD.replace("property float z", "property float y"), r"property y of element vertex is "
                                                            r"declared twice"),
    (_GOOD.replace("element vertex", "elephant vertex"), r"unknown keyword 'elephant'"),
    (_GOOD.replace("vertex", "point"), r"lacks a vertex element with x, y, z"),
])
def test_ply_invalid_refused_by_name(tmp_path, text, match):
    path = tmp_path / "bad.ply"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"^" + str(path).replace(".", r"\.") + ": .*" + match):
        read_ply(path)


def test_ply_truncated_binary(tmp_path, rng):
    P, C, _ = _mesh(rng)
    write_ply(tmp_path / "a.ply", P, C)
    raw = (tmp_path / "a.ply").read_bytes()
    (tmp_path / "c.ply").write_bytes(raw[:-10])
    with pytest.raises(ValueError, match=r"c\.ply: truncated PLY data: element vertex"):
        read_ply(tmp_path / "c.ply")
    with pytest.raises(ValueError, match=r"missing\.ply: file is missing"):
        read_ply(tmp_path / "missing.ply")


# -- file modes and interrupted runs -------------------------------------------------------------
@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_files_honour_the_umask(tmp_path, umask_022):
    write_ply(tmp_path / "p.ply", np.zeros((2, 3)))
    write_json(tmp_path / "a.json", {"x": 1})
    assert stat.S_IMODE((tmp_path / "p.ply").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o644
    root = tmp_path / "ds"
    write_dataset(root, _dataset(), progress=False)
    for p in [root, *root.rglob("*")]:
        want = 0o755 if p.is_dir() else 0o644
        assert stat.S_IMODE(p.stat().st_mode) == want, p
    os.umask(0o077)  # a private umask is honoured too
    write_ply(tmp_path / "q.ply", np.zeros((2, 3)))
    assert stat.S_IMODE((tmp_path / "q.ply").stat().st_mode) == 0o600


def test_sigterm_inside_writer_cleans_up(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    views = _views(2)
    with pytest.raises(Terminated) as info, DatasetWriter(tmp_path / "new", progress=False) as w:
        w.add_view(views[0].name, views[0].camera, views[0].image)
        os.kill(os.getpid(), signal.SIGTERM)
    assert info.value.signum == signal.SIGTERM
    assert isinstance(info.value, KeyboardInterrupt)
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is put back


_CHILD = """
import sys, time, numpy as np, xslit
from xslit.io import DatasetWriter, interruptible

@interruptible
def main():
    cam = xslit.PinholeCamera.from_intrinsics([[50, 0, 4], [0, 50, 3], [0, 0, 1]])
    with DatasetWriter(sys.argv[1], progress=False) as w:
        w.add_view("v0", cam, np.zeros((6, 8, 3), np.uint8))
        print("ready", flush=True)
        time.sleep(60)
    return 0

sys.exit(main())
"""


def _signals_as_from_a_terminal():
    # A shell starts its background jobs with SIGINT ignored, and the library keeps an
    # ignored signal ignored (as nohup expects): the child starts as from a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_process_leaves_nothing_and_no_traceback(tmp_path, sig):
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_signals_as_from_a_terminal)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.communicate()  # reaps the child and closes its pipes, also after a failure
    assert proc.returncode == 128 + sig
    assert "Traceback" not in err and err.startswith("xslit: ")
    assert list(tmp_path.iterdir()) == []


# -- recipes and the command line ----------------------------------------------------------------
def test_rigs_see_their_scene_in_front():
    from xslit.datasets import pushbroom_strips_rig, xslit_circle_rig, xslit_stereo_rig

    stereo = xslit_stereo_rig((64, 48), 0)
    circle = xslit_circle_rig((64, 48), 5, 0)
    strips = pushbroom_strips_rig((64, 48), 4, 0)
    assert [v.name for v in stereo] == ["left", "right"]
    assert all(isinstance(v.camera, xslit.TwoSlitCamera) for v in stereo + circle)
    assert all(isinstance(v.camera, xslit.PushbroomCamera) for v in strips)
    # The room's centre projects near the image centre of every room view.
    for v in stereo + circle:
        px = v.camera.project([[0.0, 0.0, -0.3]])[0]
        assert np.all(np.abs(px - [31.5, 23.5]) < 3), (v.name, px)
    # Neighbouring flight lines overlap: the terrain centre line is seen by two of them.
    ys = [v.meta["flight_line_y"] for v in strips]
    assert np.allclose(np.diff(ys), ys[1] - ys[0]) and ys[1] > ys[0]


@pytest.mark.render
@pytest.mark.parametrize(("recipe", "options"), [
    ("xslit-stereo", {"texels_per_unit": 16.0, "n_objects": 4}),
    ("xslit-circle", {"texels_per_unit": 16.0, "n_objects": 4}),
    ("pushbroom-strips", {"n_triangles": 20_000, "texture_size": 256}),
])
def test_generate_load_verify(tmp_path, recipe, options, tol):
    from xslit.datasets import generate_dataset

    out = generate_dataset(recipe, tmp_path / recipe, "48x32", seed=3,
                           views=3 if recipe == "xslit-circle" else None, supersample=1,
                           max_matches=500, scene_options=options, progress=False)
    ds = load_dataset(out)
    assert ds.metadata["recipe"] == recipe and ds.metadata["seed"] == 3
    assert all(v.image.shape == (32, 48, 3) for v in ds.views)
    assert all(v.mask.mean() > tol.DATASET_MIN_COVERAGE for v in ds.views)
    assert len(ds.correspondences) == {"xslit-stereo": 1, "xslit-circle": 3,
                                       "pushbroom-strips": 2}[recipe]
    assert all(len(c) > 50 for c in ds.correspondences)
    report = verify_dataset(out)
    assert report["max_pair_reprojection_px"] < tol.DATASET_PAIR_REPROJECTION_PX
    assert report["max_point_reprojection_px"] < tol.DATASET_POINT_REPROJECTION_PX


@pytest.mark.render
def test_generate_is_reproducible_and_atomic(tmp_path, monkeypatch):
    import xslit.render
    from xslit.datasets import generate_dataset

    opts = {"texels_per_unit": 16.0, "n_objects": 3}
    a = generate_dataset("xslit-stereo", tmp_path / "a", (40, 30), 7, supersample=1,
                         max_matches=100, scene_options=opts, progress=False)
    b = generate_dataset("xslit-stereo", tmp_path / "b", (40, 30), 7, supersample=1,
                         max_matches=100, scene_options=opts, progress=False)
    files = json.loads((a / "manifest.json").read_text())["files"]
    assert files == json.loads((b / "manifest.json").read_text())["files"]
    with pytest.raises(ValueError, match="already exists"):
        generate_dataset("xslit-stereo", a, (40, 30), 7, scene_options=opts)
    # A crash during rendering (after the first view) leaves nothing behind.
    real = xslit.render.renderImage
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("renderer crashed")
        return real(*args, **kwargs)

    monkeypatch.setattr(xslit.render, "renderImage", flaky)
    with pytest.raises(RuntimeError, match="renderer crashed"):
        generate_dataset("xslit-stereo", tmp_path / "c", (40, 30), 7, supersample=1,
                         scene_options=opts, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_generate_bad_arguments(tmp_path):
    from xslit.datasets import generate_dataset

    with pytest.raises(ValueError, match="recipe must be one of"):
        generate_dataset("nope", tmp_path / "x")
    with pytest.raises(ValueError, match="size must be WIDTHxHEIGHT"):
        generate_dataset("xslit-stereo", tmp_path / "x", "640by480")
    with pytest.raises(ValueError, match="views must be 2 for the xslit-stereo"):
        generate_dataset("xslit-stereo", tmp_path / "x", views=3)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        generate_dataset("xslit-stereo", tmp_path / "x", seed=-1)
    assert list(tmp_path.iterdir()) == []


def test_cli_info_and_verify(written, capsys):
    from xslit.datasets.cli import main

    _, root = written
    assert main(["info", str(root)]) == 0
    out = capsys.readouterr().out
    assert "view view_000: two_slit 24x16" in out and "matches view_000 - view_002: 30" in out
    assert main(["verify", str(root)]) == 0
    assert "OK:" in capsys.readouterr().out
    p = root / "images/view_002.png"
    p.write_bytes(p.read_bytes()[:-1] + b"\x00")
    assert main(["verify", str(root)]) == 1
    assert "DAMAGED: images/view_002.png: checksum mismatch" in capsys.readouterr().err
