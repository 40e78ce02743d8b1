"""Bad input raises ValueError naming the argument, what was expected and what came (a
caller must be able to tell which of its values was wrong without reading the code);
importing xslit stays light."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from tolerances import EXACT

import xslit
from xslit import synthetic
from xslit.cameras import RationalCamera
from xslit.geometry import line_from_planes

A1 = np.array([[1.0, 0, 0, 0], [0, 0, 1, 0]])
A2 = np.array([[0.0, 2, 0, 0], [0, 0, 1, 1]])
CAM = xslit.TwoSlitCamera(A1, A2)
L1 = line_from_planes([1.0, 0, 0, 0], [0.0, 0, 1, 0])
L2 = line_from_planes([0.0, 1, 0, 0], [0.0, 0, 1, 1])
L_MEETS_L1 = line_from_planes([1.0, 0, 0, 0], [0.0, 1, 0, 0])  # the z axis meets {x = z = 0}
Y = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]])
INTR = xslit.TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, 1.0, 0.5)
PB_INTR = xslit.PushbroomIntrinsics.from_parameters(0.02, 800.0, 300.0, 1.2)
PB = xslit.PushbroomCamera.from_matrix([[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 3]])
PTS = np.zeros((4, 3))
R0, T0 = np.zeros(3), np.array([0.0, 0, 5])

BAD_ARRAYS = {
    "string": [["a", "b", "c", "d"], ["e", "f", "g", "h"]],
    "object": np.array([[1, 2, 3, 4], [5, 6, 7, None]], dtype=object),
    "complex": np.array([[1, 0, 0, 0], [0, 0, 1j, 0]]),
    "nan": [[1.0, 0, 0, 0], [0, 0, np.nan, 0]],
    "inf": [[1.0, 0, 0, 0], [0, 0, np.inf, 0]],
    "none": None,
    "ragged": [[1.0, 0, 0], [0, 0, 1, 0]],
    "wrong_shape": np.zeros((3, 4)),
    "transposed": A1.T,
    "rank_1": [[1.0, 0, 0, 0], [2, 0, 0, 0]],
    "zero": np.zeros((2, 4)),
}


@pytest.mark.parametrize("kind", list(BAD_ARRAYS))
@pytest.mark.parametrize("which", ["A1", "A2"])
def test_two_slit_matrices(kind, which):
    bad = BAD_ARRAYS[kind]
    args = (bad, A2) if which == "A1" else (A1, bad)
    with pytest.raises(ValueError, match=rf"^{which} must"):
        xslit.TwoSlitCamera(*args)


def test_error_messages_say_what_came():
    with pytest.raises(ValueError, match=r"A1 must have shape \(2, 4\), got \(3, 4\)"):
        xslit.TwoSlitCamera(np.zeros((3, 4)), A2)
    with pytest.raises(ValueError, match="A2 must be finite, got 1 NaN or inf"):
        xslit.TwoSlitCamera(A1, BAD_ARRAYS["nan"])
    with pytest.raises(ValueError, match=r"A1 must be a real numeric array, got .*complex"):
        xslit.TwoSlitCamera(BAD_ARRAYS["complex"], A2)
    with pytest.raises(ValueError, match=r"points must have shape \(N, 3\) or \(N, 4\), got "
                                         r"\(5, 5\)"):
        CAM.project(np.zeros((5, 5)))


def test_slits_that_meet_are_not_a_two_slit_camera():
    # A2 = [0 1 0 0; 0 0 1 0]: slit {y = z = 0} meets {x = z = 0} at the origin.
    with pytest.raises(ValueError, match=r"A1 and A2 .*slits meet"):
        xslit.TwoSlitCamera(A1, [[0.0, 1, 0, 0], [0, 0, 1, 0]])
    # Parallel slits meet at infinity.
    with pytest.raises(ValueError, match=r"A1 and A2 .*slits meet"):
        xslit.TwoSlitCamera(A1, [[1.0, 0, 0, 1], [0, 0, 1, 1]])
    with pytest.raises(ValueError, match="slit1 and slit2 must be skew"):
        xslit.TwoSlitCamera.from_slits(L1, L_MEETS_L1, Y)
    with pytest.raises(ValueError, match="slit1 and slit2 must be skew"):
        RationalCamera.two_slit(L_MEETS_L1, L1, Y)
    with pytest.raises(ValueError, match="slit1 and slit2 must be skew"):
        xslit.retinal_plane_homography(L1, L_MEETS_L1, Y, Y)


POINTS_BAD = {
    "shape_5": np.zeros((5, 5)),
    "shape_2": np.zeros((5, 2)),
    "three_d": np.zeros((2, 2, 3)),
    "nan": [[np.nan, 0.0, 1.0]],
    "inf": [[0.0, -np.inf, 1.0]],
    "string": [["a", "b", "c"]],
    "complex": np.zeros((3, 3), dtype=complex),
    "object": np.array([[1, 2, None]], dtype=object),
    "none": None,
}


@pytest.mark.parametrize("kind", list(POINTS_BAD))
@pytest.mark.parametrize("camera", [CAM, PB, xslit.PinholeCamera(np.eye(3, 4)),
                                    RationalCamera.two_slit(L1, L2, Y)],
                         ids=["two_slit", "pushbroom", "pinhole", "rational"])
def test_points(kind, camera):
    for method in (camera.project, camera.project_homogeneous, camera.in_front):
        with pytest.raises(ValueError, match=r"^points must"):
            method(POINTS_BAD[kind])


@pytest.mark.parametrize("kind", ["shape_3", "nan", "inf", "string", "complex", "none"])
@pytest.mark.parametrize("camera", [CAM, PB, xslit.PinholeCamera(np.eye(3, 4)),
                                    RationalCamera.two_slit(L1, L2, Y)],
                         ids=["two_slit", "pushbroom", "pinhole", "rational"])
def test_pixels(kind, camera):
    bad = {"shape_3": np.zeros((4, 3)), "nan": [[np.nan, 1.0]], "inf": [[np.inf, 1.0]],
           "string": [["1", "2"]], "complex": [[1j, 0]], "none": None}[kind]
    for method in (camera.rays, camera.rays_plucker):
        with pytest.raises(ValueError, match=r"^pixels must"):
            method(bad)


def test_from_slits():
    with pytest.raises(ValueError, match=r"^slit1 must have shape \(6,\)"):
        xslit.TwoSlitCamera.from_slits(L1[:5], L2, Y)
    with pytest.raises(ValueError, match=r"^slit2 must be finite"):
        xslit.TwoSlitCamera.from_slits(L1, np.full(6, np.nan), Y)
    with pytest.raises(ValueError, match=r"^frame must have shape \(4, 3\)"):
        xslit.TwoSlitCamera.from_slits(L1, L2, Y.T)
    with pytest.raises(ValueError, match=r"^frame must have rank 3"):
        xslit.TwoSlitCamera.from_slits(L1, L2, np.column_stack([Y[:, 0], Y[:, 0], Y[:, 2]]))


def test_from_slits_rejects_a_non_intrinsic_frame():
    # A valid frame of the same plane x3 = x4, but y1 is not on slit2 (y1 = (1, 1, 0, 0)).
    Yb = Y.copy()
    Yb[:, 0] = [1.0, 1, 0, 0]
    with pytest.raises(ValueError, match=r"^frame is not intrinsic"):
        xslit.TwoSlitCamera.from_slits(L1, L2, Yb)
    # Swapped y1 and y2: each lies on the wrong slit.
    with pytest.raises(ValueError, match=r"^frame is not intrinsic"):
        xslit.TwoSlitCamera.from_slits(L1, L2, Y[:, [1, 0, 2]])
    # The general frame is accepted by the rational model.
    assert RationalCamera.two_slit(L1, L2, Yb).beta == 1


def test_retinal_plane_containing_a_slit():
    # The plane x3 = 0 contains slit1 {x1 = x3 = 0}: with y1 = e1 (on slit2), y2 = e2 and
    # y3 = e4 (both on slit1) the frame is "intrinsic" but spans no retinal plane.
    Yc = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"^frame"):
        xslit.TwoSlitCamera.from_slits(L1, L2, Yc)
    # retinal_frame: x3 = 0 contains the exceptional line {x3 = x4 = 0} and slit1.
    with pytest.raises(ValueError, match=r"^plane contains a slit"):
        CAM.retinal_frame([0.0, 0, 1, 0])
    with pytest.raises(ValueError, match=r"^plane must contain the camera's exceptional line"):
        CAM.retinal_frame([1.0, 0, 0, 0])
    with pytest.raises(ValueError, match=r"^plane must have shape \(4,\)"):
        CAM.retinal_frame([1.0, 0, 0])
    # The Lemma's homography: planes x3 = 0 (contains slit1) and x3 = x4 meet along
    # {x3 = x4 = 0}, a transversal; the first is not a retinal plane.
    with pytest.raises(ValueError, match=r"^frame1 spans a plane that contains slit1"):
        xslit.retinal_plane_homography(L1, L2, Yc, Y)
    with pytest.raises(ValueError, match=r"^frame2 spans a plane that contains a slit"):
        xslit.retinal_plane_homography(L1, L2, Y, Yc)


def test_retinal_plane_homography_inputs():
    with pytest.raises(ValueError, match=r"^frame1 must have rank 3"):
        xslit.retinal_plane_homography(L1, L2, np.zeros((4, 3)), Y)
    with pytest.raises(ValueError, match=r"^frame2 must have shape \(4, 3\)"):
        xslit.retinal_plane_homography(L1, L2, Y, np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"^slit2 must be a real numeric"):
        xslit.retinal_plane_homography(L1, L2.astype(complex), Y, Y)
    # x3 = x4 and x1 = 0 meet along {x1 = 0, x3 = x4}, which misses slit2 {x2 = 0, x3 = -x4}
    # (a common point would need x3 = x4 = 0 and x1 = x2 = 0): not a transversal.
    Y2 = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"^frame1 and frame2 must span planes that meet along"):
        xslit.retinal_plane_homography(L1, L2, Y, Y2)


def test_pushbroom_inputs():
    with pytest.raises(ValueError, match=r"^A1 of a pushbroom camera must have second row"):
        xslit.PushbroomCamera(A1, A2)
    with pytest.raises(ValueError, match=r"^A1 of a pushbroom camera must have second row"):
        xslit.PushbroomCamera([[1.0, 0, 0, 0], [0, 0, 0, 0]], A2)
    with pytest.raises(ValueError, match=r"^P must have shape \(3, 4\), got \(2, 4\)"):
        xslit.PushbroomCamera.from_matrix(np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"^P must have an invertible left 3x3 block"):
        xslit.PushbroomCamera.from_matrix([[1.0, 0, 0, 0], [2, 0, 0, 1], [0, 0, 1, 0]])
    with pytest.raises(ValueError, match=r"^P must be finite"):
        xslit.PushbroomCamera.from_matrix(np.full((3, 4), np.inf))
    with pytest.raises(ValueError, match=r"^A2 must"):
        xslit.PushbroomCamera([[1.0, 0, 0, 0], [0, 0, 0, 1]], [[1.0, 0, 0, 0]])


def test_pinhole_inputs():
    with pytest.raises(ValueError, match=r"^P must have shape \(3, 4\)"):
        xslit.PinholeCamera(np.eye(3))
    with pytest.raises(ValueError, match=r"^P must have an invertible left 3x3 block"):
        xslit.PinholeCamera(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"^P must be a real numeric"):
        xslit.PinholeCamera(np.eye(3, 4, dtype=complex))
    with pytest.raises(ValueError, match=r"^K must have shape \(3, 3\)"):
        xslit.PinholeCamera.from_intrinsics(np.eye(2))
    with pytest.raises(ValueError, match=r"^rvec must have shape \(3,\)"):
        xslit.PinholeCamera.from_intrinsics(np.eye(3), rvec=[0.0, 0.0])


@pytest.mark.parametrize("camera", [CAM, PB, xslit.PinholeCamera(np.eye(3, 4))],
                         ids=["two_slit", "pushbroom", "pinhole"])
def test_transform_inputs(camera):
    with pytest.raises(ValueError, match=r"^H must be invertible"):
        camera.transform(np.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"^H must be invertible"):
        camera.transform(np.diag([1.0, 1, 1, 0]))
    with pytest.raises(ValueError, match=r"^H must have shape \(4, 4\)"):
        camera.transform(np.eye(3))
    with pytest.raises(ValueError, match=r"^H must be finite"):
        camera.transform(np.full((4, 4), np.nan))


def test_rational_camera_inputs():
    with pytest.raises(ValueError, match=r"^frame must have rank 3"):
        RationalCamera.two_slit(L1, L2, np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"^frame must have shape \(4, 3\)"):
        RationalCamera.pinhole([0.0, 0, 0, 1], np.eye(3))
    with pytest.raises(ValueError, match=r"^center must have shape \(4,\)"):
        RationalCamera.pinhole([0.0, 0, 0], Y)
    with pytest.raises(ValueError, match=r"^f, g, h must have beta, beta \+ 1"):
        RationalCamera.transversal([1.0], [1.0, 0], [0.0, 1, 0], Y)
    with pytest.raises(ValueError, match=r"^g must be finite and not identically zero"):
        RationalCamera.transversal([1.0], [0.0, 0], [0.0, 1], Y)
    with pytest.raises(ValueError, match=r"^h must be a real numeric"):
        RationalCamera.transversal([1.0], [1.0, 0], ["a", "b"], Y)
    with pytest.raises(ValueError, match=r"^quadratic_forms exist only"):
        _ = RationalCamera.pinhole([0.0, 0, 0, 1], Y).quadratic_forms


INTRINSICS_BAD = [
    ("K1", lambda: xslit.TwoSlitIntrinsics(-np.eye(2), np.eye(2), 1.0, 1.0)),
    ("K1", lambda: xslit.TwoSlitIntrinsics(np.zeros((2, 2)), np.eye(2), 1.0, 1.0)),
    ("K1", lambda: xslit.TwoSlitIntrinsics(np.eye(3), np.eye(2), 1.0, 1.0)),
    ("K1", lambda: xslit.TwoSlitIntrinsics([[1.0, np.nan], [0, 1]], np.eye(2), 1.0, 1.0)),
    ("K2", lambda: xslit.TwoSlitIntrinsics(np.eye(2), [[1.0, 0], [0, -1]], 1.0, 1.0)),
    ("K2", lambda: xslit.TwoSlitIntrinsics(np.eye(2), [["1", "0"], ["0", "1"]], 1.0, 1.0)),
    ("theta", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), 0.0, 1.0)),
    ("theta", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), np.pi, 1.0)),
    ("theta", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), np.nan, 1.0)),
    ("theta", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), "a", 1.0)),
    ("theta", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), 1j, 1.0)),
    ("theta", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), [1.0, 2.0], 1.0)),
    ("theta", lambda: xslit.TwoSlitIntrinsics.from_parameters(800, 600, theta=80.0)),
    ("theta", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), -1.0, 1.0)),
    ("d", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), 1.0, 0.0)),
    ("d", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), 1.0, np.inf)),
    ("d", lambda: xslit.TwoSlitIntrinsics(np.eye(2), np.eye(2), 1.0, None)),
    ("velocity", lambda: xslit.PushbroomIntrinsics([0.0, 0.1, 0], 800.0)),
    ("velocity", lambda: xslit.PushbroomIntrinsics([1.0, np.nan, 0], 800.0)),
    ("velocity", lambda: xslit.PushbroomIntrinsics([1.0, 0], 800.0)),
    ("f", lambda: xslit.PushbroomIntrinsics([1.0, 0, 0], -800.0)),
    ("f", lambda: xslit.PushbroomIntrinsics([1.0, 0, 0], np.inf)),
    ("f", lambda: xslit.PushbroomIntrinsics([1.0, 0, 0], "x")),
    ("u", lambda: xslit.PushbroomIntrinsics([1.0, 0, 0], 800.0, np.nan)),
    ("yaw", lambda: xslit.PushbroomIntrinsics.from_parameters(0.1, 800.0, 0.0, np.pi / 2)),
    ("tilt", lambda: xslit.PushbroomIntrinsics.from_parameters(0.1, 800.0, 0.0, 0.0, np.inf)),
    ("v", lambda: xslit.PushbroomIntrinsics.from_parameters(0.0, 800.0)),
]


@pytest.mark.parametrize(("name", "make"), INTRINSICS_BAD,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(INTRINSICS_BAD)])
def test_intrinsics_values(name, make):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        make()


@pytest.mark.parametrize("bad", [None, "intrinsics", {"K1": np.eye(2)}, (np.eye(2), np.eye(2)),
                                 ("two_slit", np.eye(2), np.eye(2), 1.0, 1.0), CAM])
def test_wrong_intrinsics_type(bad):
    with pytest.raises(ValueError, match=r"^intrinsics must be"):
        xslit.projectTwoSlitPoints(PTS, R0, T0, bad)
    with pytest.raises(ValueError, match=r"^intrinsics must be TwoSlitIntrinsics"):
        xslit.composeTwoSlitProjection(bad, R0, T0)
    with pytest.raises(ValueError, match=r"^intrinsics must be PushbroomIntrinsics"):
        xslit.composePushbroomProjection(bad, R0, T0)


def test_intrinsics_of_the_other_model_are_rejected():
    with pytest.raises(ValueError, match=r"^intrinsics must be TwoSlitIntrinsics"):
        xslit.composeTwoSlitProjection(PB_INTR, R0, T0)
    with pytest.raises(ValueError, match=r"^intrinsics must be PushbroomIntrinsics"):
        xslit.composePushbroomProjection(INTR, R0, T0)


@pytest.mark.parametrize(("name", "args"), [
    ("objectPoints", (np.zeros((4, 4)), R0, T0)),
    ("objectPoints", (np.zeros((4, 2)), R0, T0)),
    ("objectPoints", ("abc", R0, T0)),
    ("objectPoints", ([[np.nan, 0, 1]], R0, T0)),
    ("objectPoints", (np.zeros((4, 3), dtype=complex), R0, T0)),
    ("rvec", (PTS, np.zeros(4), T0)),
    ("rvec", (PTS, np.zeros((3, 3)), T0)),
    ("rvec", (PTS, [np.inf, 0, 0], T0)),
    ("rvec", (PTS, ["a", "b", "c"], T0)),
    ("tvec", (PTS, R0, [0.0, 0.0])),
    ("tvec", (PTS, R0, [0.0, np.nan, 1.0])),
    ("tvec", (PTS, R0, None)),
])
def test_project_points_inputs(name, args):
    for intr in (INTR, PB_INTR):
        with pytest.raises(ValueError, match=rf"^{name} must"):
            xslit.projectTwoSlitPoints(*args, intr)


@pytest.mark.parametrize(("name", "rvec", "tvec"), [
    ("rvec", [0.0, 0.0], T0), ("rvec", [np.nan, 0, 0], T0), ("tvec", R0, np.zeros(4)),
    ("tvec", R0, [1j, 0, 0]),
])
def test_compose_pose_inputs(name, rvec, tvec):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        xslit.composeTwoSlitProjection(INTR, rvec, tvec)
    with pytest.raises(ValueError, match=rf"^{name} must"):
        xslit.composePushbroomProjection(PB_INTR, rvec, tvec)


def test_decompose_inputs():
    with pytest.raises(ValueError, match=r"^camera must be a TwoSlitCamera"):
        xslit.decomposeTwoSlitProjection("camera")
    with pytest.raises(ValueError, match=r"^camera must be a TwoSlitCamera"):
        xslit.decomposeTwoSlitProjection(np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"^A2 must have rank 2"):
        xslit.decomposeTwoSlitProjection((A1, np.zeros((2, 4))))
    # A pushbroom camera has a slit at infinity: no finite two-slit decomposition (and no
    # RuntimeWarning on the way).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"^camera has a slit at infinity"):
            xslit.decomposeTwoSlitProjection(PB)
    with pytest.raises(ValueError, match=r"^camera must be a real numeric array"):
        xslit.decomposePushbroomProjection("camera")
    with pytest.raises(ValueError, match=r"^P must have an invertible"):
        xslit.decomposePushbroomProjection(np.zeros((3, 4)))
    # A finite two-slit camera is not a pushbroom camera.
    with pytest.raises(ValueError, match=r"^A1 of a pushbroom camera"):
        xslit.decomposePushbroomProjection(CAM)


def test_camera_from_dict_inputs():
    with pytest.raises(ValueError, match=r"^data must be a dict with a 'model' key"):
        xslit.camera_from_dict([1, 2])
    with pytest.raises(ValueError, match=r"^data must be a dict with a 'model' key"):
        xslit.camera_from_dict({"A1": A1.tolist()})
    with pytest.raises(ValueError, match=r"^data\['model'\] must be one of"):
        xslit.camera_from_dict({"model": "fisheye"})
    with pytest.raises(ValueError, match=r"^data for a 'two_slit' camera lacks the key 'A2'"):
        xslit.camera_from_dict({"model": "two_slit", "A1": A1.tolist()})
    with pytest.raises(ValueError, match=r"^data\['kind'\] must be"):
        xslit.camera_from_dict({"model": "rational", "frame": Y.tolist(), "kind": "conic"})
    with pytest.raises(ValueError, match=r"^A1 must be finite"):
        xslit.camera_from_dict({"model": "two_slit", "A1": [[np.nan] * 4] * 2,
                                "A2": A2.tolist()})


def test_synthetic_inputs():
    with pytest.raises(ValueError, match=r"^rng must be None, an int seed or a numpy"):
        synthetic.random_two_slit_camera("seed")
    with pytest.raises(ValueError, match=r"^rng must be"):
        synthetic.random_rotation(np.random.RandomState(0))
    with pytest.raises(ValueError, match=r"^n must be an integer >= 1"):
        synthetic.random_points_in_front(CAM, 0)
    with pytest.raises(ValueError, match=r"^n must be an integer >= 1"):
        synthetic.random_points_in_front(CAM, 2.5)
    # Same seed, same camera; Generators are used, not global state.
    a = synthetic.random_two_slit_camera(7)
    b = synthetic.random_two_slit_camera(np.random.default_rng(7))
    np.testing.assert_array_equal(a.A1, b.A1)


def test_import_xslit_does_not_import_cv2_or_open3d():
    code = ("import sys, xslit, xslit.synthetic, xslit.testing\n"
            "heavy = sorted(m for m in ('cv2', 'open3d') if m in sys.modules)\n"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "", f"import xslit imported {out.stdout.strip()}"


# Cases an outside harness found misbehaving; each must raise a ValueError naming its argument.

def test_booleans_are_not_numbers():
    with pytest.raises(ValueError, match=r"^A1 must be a real numeric array, got an array of "
                                         r"booleans"):
        xslit.TwoSlitCamera(A1 != 0, A2)
    with pytest.raises(ValueError, match=r"^points must"):
        CAM.project(np.ones((3, 3)) > 0)
    with pytest.raises(ValueError, match=r"^rvec must"):
        xslit.projectTwoSlitPoints(np.ones((3, 3)), R0 > 0, T0, INTR)
    with pytest.raises(ValueError, match=r"^K must"):
        xslit.PinholeCamera.from_intrinsics(np.eye(3) != 0)
    with pytest.raises(ValueError, match=r"^theta must"):
        xslit.TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, theta=True, d=True)


def test_messages_name_the_argument_at_fault():
    with pytest.raises(ValueError, match=r"^fu must be a finite positive magnification, got 0"):
        xslit.TwoSlitIntrinsics.from_parameters(0, 600, 320, 240, 1.4, 1.5)
    with pytest.raises(ValueError, match=r"^fv must .* got None"):
        xslit.TwoSlitIntrinsics.from_parameters(800, None, 320, 240, 1.4, 1.5)
    with pytest.raises(ValueError, match=r"^tvec must"):
        xslit.composeTwoSlitProjection(INTR, R0, [0, 0, 1e300])
    with pytest.raises(ValueError, match=r"^rvec must have a norm of at most"):
        xslit.composeTwoSlitProjection(INTR, [0, 0, 1e300], T0)
    with pytest.raises(ValueError, match=r"^camera must be a TwoSlitCamera, got NoneType"):
        xslit.PushbroomCamera.from_two_slit(None)
    with pytest.raises(ValueError, match=r"^beta must be an integer"):
        RationalCamera(lambda X: X, Y, "a")
    with pytest.raises(ValueError, match=r"^whichImage must be 1 or 2, got 0"):
        xslit.computeCorrespondEpilines(np.ones((2, 2)), 0, np.ones((2, 2, 2, 2)))


def test_a_translation_that_swamps_the_camera_is_named():
    # Full rank in exact arithmetic, rank 1 to rounding: the error names tvec, not A1.
    with pytest.raises(ValueError, match=r"^tvec must be small enough"):
        xslit.composeTwoSlitProjection(INTR, R0, [0, 0, 1e12])
    assert np.isfinite(xslit.composeTwoSlitProjection(INTR, R0, [0, 0, 1e3]).A1).all()


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_camera_matrices_at_extreme_scales(scale):
    X = np.array([[0.3, 0.2, 3.0], [-1.0, 0.5, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cam = xslit.TwoSlitCamera(A1 * scale, A2)
        np.testing.assert_allclose(cam.project(X), CAM.project(X), rtol=EXACT)
        cam.slits  # noqa: B018 (Pluecker coordinates of the scaled matrices)
    with pytest.raises(ValueError, match=r"^A1 and A2 .*slits meet"):
        xslit.TwoSlitCamera([[1.0 * scale, 0, 0, 0], [0, 0, scale, 0]],
                            [[0.0, 1, 0, 0], [0, 0, 1, 0]])


def test_cameras_cannot_be_corrupted_after_construction():
    cam = xslit.TwoSlitCamera(A1, A2)
    for a in (cam.A1, cam.A2, INTR.K1, INTR.K2, PB.A1, xslit.PinholeCamera(np.eye(3, 4)).P):
        with pytest.raises(ValueError, match="read-only"):
            a[0, 0] = np.nan
    F = xslit.computeEpipolarTensor(cam, PB)
    assert np.isfinite(F).all()


def test_identical_cameras_are_a_reported_failure_not_an_exception():
    # The conditioning of the linear fit took the square root of an eigenvalue rounded below 0.
    X = synthetic.random_points_in_front([CAM], 30, 0, radius=0.5)
    p = CAM.project(X)
    F, mask = xslit.findEpipolarTensor(p, p, xslit.FM_LINEAR)
    assert F is None or np.isfinite(F).all()
    assert mask.shape == (len(p), 1)
