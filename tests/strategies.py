"""Hypothesis strategies: valid cameras, intrinsics, poses and point sets with their ground
truth, and malformed values for the bad-input properties.

Valid values are drawn in ranges where the geometry is well conditioned (points a few units in
front of the camera, slit angles away from 0 and pi), so that a property can state a tolerance;
malformed values cover the ways a caller gets an argument wrong: shape, dtype (bool, complex,
object, str), NaN and inf, empty, None, a ragged list, a string or a dict in place of an array.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import xslit


def floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def signed(lo: float, hi: float) -> st.SearchStrategy[float]:
    """``x`` or ``-x`` with ``lo <= x <= hi``."""
    return st.tuples(floats(lo, hi), st.booleans()).map(lambda p: -p[0] if p[1] else p[0])


def vectors(n: int, lo: float, hi: float) -> st.SearchStrategy[np.ndarray]:
    return st.lists(floats(lo, hi), min_size=n, max_size=n).map(np.array)


# -- valid values ---------------------------------------------------------------------------

def two_slit_intrinsics() -> st.SearchStrategy[xslit.TwoSlitIntrinsics]:
    return st.builds(xslit.TwoSlitIntrinsics.from_parameters,
                     fu=floats(200, 2000), fv=floats(100, 1000), u0=floats(-400, 400),
                     v0=floats(-400, 400), theta=floats(0.4, np.pi - 0.4), d=signed(0.2, 5.0))


def pushbroom_intrinsics() -> st.SearchStrategy[xslit.PushbroomIntrinsics]:
    return st.builds(xslit.PushbroomIntrinsics.from_parameters,
                     v=signed(0.01, 1.0), f=floats(200, 2000), u=floats(-400, 400),
                     yaw=floats(-0.8, 0.8), tilt=floats(-0.8, 0.8))


def poses() -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """``(rvec, tvec)`` with a rotation of at most ~170 degrees and a translation within 3."""
    return st.tuples(vectors(3, -1.7, 1.7), vectors(3, -3.0, 3.0))


def camera_points(n_min: int = 1, n_max: int = 30) -> st.SearchStrategy[np.ndarray]:
    """``(N, 3)`` points in the camera's frame, in front of both slits (``z`` in [2, 8])."""
    return st.integers(n_min, n_max).flatmap(
        lambda n: st.tuples(st.integers(0, 2 ** 32 - 1), st.just(n))).map(
        lambda p: np.random.default_rng(p[0]).uniform([-2, -2, 2], [2, 2, 8], size=(p[1], 3)))


def world_from_camera(Xc: np.ndarray, rvec, tvec) -> np.ndarray:
    from xslit.geometry.projective import matrix_from_rvec

    R = matrix_from_rvec(np.asarray(rvec, float))
    return (Xc - np.asarray(tvec, float)) @ R  # R^T (Xc - t), row by row


@st.composite
def posed_scenes(draw, n_min: int = 1, n_max: int = 30, pushbroom: bool | None = None):
    """``(intrinsics, rvec, tvec, camera, X)``: a composed camera and world points in front."""
    if pushbroom is None:
        pushbroom = draw(st.booleans())
    intr = draw(pushbroom_intrinsics() if pushbroom else two_slit_intrinsics())
    rvec, tvec = draw(poses())
    cam = (xslit.composePushbroomProjection if pushbroom else xslit.composeTwoSlitProjection)(
        intr, rvec, tvec)
    X = world_from_camera(draw(camera_points(n_min, n_max)), rvec, tvec)
    return intr, rvec, tvec, cam, X


def two_slit_cameras() -> st.SearchStrategy[xslit.TwoSlitCamera]:
    return posed_scenes(1, 1, pushbroom=False).map(lambda s: s[3])


def scales() -> st.SearchStrategy[float]:
    """Scale factors from 1e-150 to 1e150: a camera matrix is defined up to scale."""
    return st.integers(-150, 150).map(lambda e: 10.0 ** e)


# -- malformed values -----------------------------------------------------------------------

def _ragged(shape):
    return [[0.0] * (k + 1) for k in range(max(2, shape[0] if shape else 2))]


def malformed_arrays(shape: tuple[int, ...], *, finite: bool = True,
                     allow_empty: bool = False, batched: bool = False,
                     any_shape: bool = False) -> st.SearchStrategy:
    """Values that must be refused where a real ``shape`` array is expected.

    With ``finite``, NaN and inf entries are refused too; ``allow_empty`` leaves out the
    empty array (for point sets, where zero points is a valid input); ``batched`` leaves out
    extra leading dimensions (a batch of ``shape`` arrays is valid); ``any_shape`` keeps only
    the wrong types and values (where every shape is valid).
    """
    good = np.ones(shape)
    kinds = {
        "none": st.just(None),
        "string": st.just("abc"),
        "dict": st.just({"a": 1}),
        "bool": st.just(good != 0),
        "complex": st.just(good + 1j),
        "object": st.just(np.array(good.tolist() if good.ndim else 1.0, dtype=object)),
        "str_array": st.just(good.astype(str)),
        "ragged": st.just(_ragged(shape)),
        "wrong_ndim": st.just(np.ones((*shape, 2, 2))),
    }
    if not allow_empty:  # a point set of any length is valid; a fixed-size array is not
        kinds["wrong_len"] = st.just(np.ones((shape[0] + 7, *shape[1:]) if shape else 7))
    if len(shape) >= 2:
        kinds["wrong_width"] = st.just(np.ones((*shape[:-1], shape[-1] + 3)))
    if not allow_empty:
        kinds["empty"] = st.just(np.empty((0, *shape[1:])))
    if batched or any_shape:
        del kinds["wrong_ndim"]
    if any_shape:
        for k in ("wrong_len", "wrong_width", "empty", "ragged"):
            kinds.pop(k, None)
    if finite:
        for bad in (np.nan, np.inf, -np.inf):
            def poisoned(i, bad=bad):
                a = good.copy().reshape(-1)
                a[i % a.size] = bad
                return a.reshape(shape)
            kinds[f"nonfinite_{bad}"] = st.integers(0, max(0, good.size - 1)).map(poisoned)
    return st.sampled_from(sorted(kinds)).flatmap(kinds.__getitem__)


def malformed_scalars(*, allow_zero: bool = True, allow_negative: bool = True) -> st.SearchStrategy:
    """Values that must be refused where a finite real number is expected."""
    bad = [None, True, False, "1.0", np.nan, np.inf, -np.inf, [1.0, 2.0], np.ones(3), 1j,
           {"a": 1}]
    if not allow_zero:
        bad.append(0.0)
    if not allow_negative:
        bad.append(-1.0)
    return st.sampled_from(bad)


def array_layouts(a: np.ndarray) -> st.SearchStrategy:
    """The same values as ``a`` in other accepted layouts: a list, float32 or int when
    whole, non-contiguous, read-only, Fortran order."""
    def noncontiguous(x):
        big = np.zeros((*x.shape, 2))
        big[..., 0] = x
        return big[..., 0]

    def read_only(x):
        y = x.copy()
        y.setflags(write=False)
        return y

    return st.sampled_from([
        lambda x: x.tolist(), noncontiguous, read_only, np.asfortranarray, lambda x: x.copy(),
    ]).map(lambda f: f(a))


# -- scenes from the package's seeded generators ----------------------------------------------

def seeds() -> st.SearchStrategy[int]:
    return st.integers(0, 2 ** 32 - 1)


@st.composite
def two_view_scenes(draw, n_min: int = 20, n_max: int = 50,
                    kinds=("two_slit", "mixed", "pushbroom")):
    """A noise-free calibrated rig of :func:`xslit.synthetic.random_two_view_scene`: the dict
    of its ground truth (intrinsics, cameras, ``rvec, tvec`` of camera 2, ``X``, pixels)."""
    from xslit.synthetic import random_two_view_scene

    return random_two_view_scene(draw(seeds()), n=draw(st.integers(n_min, n_max)),
                                 kind=draw(st.sampled_from(kinds)))


@st.composite
def projective_two_slit_scenes(draw, n_min: int = 3, n_max: int = 6, n_points: int = 8,
                               motions=("general",)):
    """A noise-free projective reconstruction of
    :func:`xslit.synthetic.random_projective_two_slit_cameras` with its ground truth."""
    from xslit.synthetic import random_projective_two_slit_cameras

    return random_projective_two_slit_cameras(draw(st.integers(n_min, n_max)), draw(seeds()),
                                              n_points=n_points,
                                              motion=draw(st.sampled_from(motions)))


def malformed_ints(minimum: int = 1) -> st.SearchStrategy:
    """Values that must be refused where an integer ``>= minimum`` is expected."""
    return st.sampled_from([None, True, "3", 2.5, np.nan, [3], minimum - 1, minimum - 7])


def malformed_probabilities() -> st.SearchStrategy:
    """Values that must be refused where a probability in (0, 1) is expected."""
    return st.sampled_from([None, True, "0.5", np.nan, np.inf, -0.5, 1.5, [0.5, 0.5], 1j])


def malformed_generators() -> st.SearchStrategy:
    """Values that must be refused where a ``numpy.random.Generator`` is expected."""
    return st.sampled_from([None, 0, "rng", np.random.RandomState(0), [1, 2]])


def malformed_intrinsics() -> st.SearchStrategy:
    """Values that must be refused where TwoSlitIntrinsics or PushbroomIntrinsics are
    expected."""
    return st.sampled_from([None, "intrinsics", np.eye(3), {"fu": 800.0}, 1.0])
