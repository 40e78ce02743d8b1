r"""Calibration from views of a known target: the analogue of ``cv2.calibrateCamera``.

Several views of known 3D points (a calibration target, ground control points) give the
intrinsics shared by the views and one pose per view:

1. **Per view, linear.** Without a guess of the intrinsics each view's projective camera is
   resected (:func:`xslit.sfm.resection.resect_projective`: 7 points per view, linear then
   maximum likelihood) and decomposed into intrinsics and pose (Propositions 1 and 2,
   :func:`xslit.cameras.decompose_camera`). The start is the median of the views'
   intrinsics; the projective resection needs a target that is not planar in every view (the
   two or three boards of :func:`xslit.render.make_calibration_target`). With a guess, the
   views' poses come from the generalized absolute pose (:func:`~xslit.sfm.resection.resect_pose`),
   which also works on planar targets.
2. **Jointly, nonlinear.** Maximum likelihood of all reprojections over the free intrinsic
   parameters (shared) and the poses (one per view): Levenberg-Marquardt with the poses
   eliminated by the Schur complement (:func:`xslit.sfm.lm.block_levenberg_marquardt`), the
   Jacobian exact by complex steps on all views at once.

The minimised cost is

.. math::

    \sum_{i} \sum_{j} \| \pi(K, R_i X_{ij} + t_i) - x_{ij} \|^2 ,

with :math:`\pi` the projection of :func:`xslit.cameras.project_points_with_poses`. The
standard deviations are those of ``cv2.calibrateCameraExtended``: the inverse of
:math:`J^\top J` times :math:`\hat\sigma^2 = \sum r^2 / (M - P)` (``M`` residuals, ``P``
free parameters); the intrinsics' block is the inverse of the Schur complement
(Triggs et al., "Bundle adjustment - a modern synthesis", 2000, section 6).

Parameters are those of :func:`xslit.cameras.intrinsics.intrinsic_parameters`: two-slit
``fu, u0, K1[1,0], 2 fv, v0, K2[1,0], theta, d`` (Proposition 1; the lower-left entries are
zero for the parallel model), pushbroom ``1/v, f, u, v_y/v, v_z/v``
(:class:`xslit.PushbroomIntrinsics`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cameras import (
    PushbroomIntrinsics,
    TwoSlitIntrinsics,
    decompose_camera,
    project_points_with_poses,
)
from ..cameras.intrinsics import (
    intrinsic_parameters,
    intrinsics_from_parameters,
    intrinsics_object,
)
from .lm import block_levenberg_marquardt, reduced_normal_equations
from .resection import resect_pose, resect_projective

__all__ = [
    "PARAMETER_NAMES",
    "CalibrationResult",
    "calibrate",
    "calibration_parameters",
]

#: Names of the intrinsic parameters, in :func:`intrinsic_parameters` order.
PARAMETER_NAMES = {
    "two_slit": ("fu", "u0", "K1[1,0]", "K2[0,0]", "v0", "K2[1,0]", "theta", "d"),
    "pushbroom": ("1/v", "f", "u", "v_y/v", "v_z/v"),
}
#: Parameters fixed by the named assumptions, per model.
_GROUPS = {
    "two_slit": {"principal_point": (1, 4), "parallel": (2, 5), "theta": (6,), "d": (7,),
                 "focal": (0, 3)},
    "pushbroom": {"principal_point": (2,), "theta": (3, 4), "focal": (1,)},
}
#: Complex-step increment (exact derivatives to rounding).
_STEP = 1e-30
#: The joint refinement reports undetermined parameters when the information matrix of the
#: free intrinsics (scaled to unit diagonal) has an eigenvalue below this: a parameter that
#: the views change by less than a millionth of its own scale.
UNDETERMINED_EIGENVALUE = 1e-12


@dataclass
class CalibrationResult:
    """Result of :func:`calibrate`.

    Attributes
    ----------
    success : bool
    reason : str
        Why it failed ("" on success).
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics or None
    rvecs, tvecs : (V, 3) ndarray
        One cv2 pose per view (``X_c = R X + t``).
    rms : float
        Root mean square reprojection distance over all points (``cv2.calibrateCamera``'s
        return value).
    per_view_errors : (V,) ndarray
        The same per view.
    std_intrinsics : (P,) ndarray
        Standard deviations of the parameters (``PARAMETER_NAMES`` order; 0 for the fixed).
    std_extrinsics : (V, 6) ndarray
        Of ``rvec, tvec`` per view.
    free : (P,) bool ndarray
        The parameters that were estimated.
    iterations : int
        Levenberg-Marquardt iterations of the joint refinement.
    initial_rms : float
        After the per-view initialisation, before the joint refinement.
    """

    success: bool
    reason: str = ""
    intrinsics: object = None
    rvecs: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    tvecs: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    rms: float = np.inf
    per_view_errors: np.ndarray = field(default_factory=lambda: np.zeros(0))
    std_intrinsics: np.ndarray = field(default_factory=lambda: np.zeros(0))
    std_extrinsics: np.ndarray = field(default_factory=lambda: np.zeros((0, 6)))
    free: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    iterations: int = 0
    initial_rms: float = np.inf


def calibration_parameters(model: str, fixed=()) -> np.ndarray:
    """Mask ``(P,)`` of the free parameters of ``model`` with the named groups fixed.

    ``fixed`` holds names among ``"principal_point"``, ``"parallel"`` (two-slit: the
    lower-left entries of K1, K2, zero for Proposition 1's parallel cameras), ``"theta"``
    (two-slit: the slit angle; pushbroom: the direction of motion), ``"d"`` (two-slit) and
    ``"focal"``.

    Examples
    --------
    >>> calibration_parameters("two_slit", ("parallel", "principal_point")).astype(int).tolist()
    [1, 0, 0, 1, 0, 0, 1, 1]
    """
    groups = _GROUPS[model]
    free = np.ones(len(PARAMETER_NAMES[model]), bool)
    for name in fixed:
        if name not in groups:
            raise ValueError(f"fixed must name parameters of a {model} camera among "
                             f"{sorted(groups)}, got {name!r}")
        free[list(groups[name])] = False
    return free


class _Views:
    """The views padded to one size: points ``(V, N, 3)``, pixels ``(V, N, 2)``, a mask."""

    def __init__(self, object_points, image_points):
        self.counts = np.array([len(X) for X in object_points])
        V, N = len(object_points), int(self.counts.max())
        self.X = np.empty((V, N, 3))
        self.px = np.zeros((V, N, 2))
        self.mask = np.zeros((V, N), bool)
        for i, (X, px) in enumerate(zip(object_points, image_points, strict=True)):
            n = len(X)
            # Padding repeats a real point, so that no projection divides by zero.
            self.X[i] = X[np.minimum(np.arange(N), n - 1)]
            self.px[i, :n] = px
            self.mask[i, :n] = True

    def residuals(self, kind, p, rvecs, tvecs) -> np.ndarray:
        """``(V, 2N)`` reprojection residuals, zero on the padding."""
        r = project_points_with_poses(self.X, rvecs, tvecs, intrinsics_from_parameters(kind, p))
        r = np.where(self.mask[..., None], r - self.px, 0.0)
        return r.reshape(len(r), -1)


def _fail(reason, free, V=0) -> CalibrationResult:
    P = len(free)
    return CalibrationResult(False, reason, free=free, std_intrinsics=np.full(P, np.nan),
                             per_view_errors=np.full(V, np.nan))


def _initial_intrinsics(views, model, image_size, free, guess):
    """Start intrinsics and the views' poses: the guess (no poses), or the median of the
    views' decomposed resections and the decompositions' poses (None for a view that gave
    none)."""
    poses = [None] * len(views)
    if guess is not None:
        return intrinsic_parameters(guess)[1], poses, ""
    pushbroom = model == "pushbroom"
    params, reasons = [], []
    for i, (X, px) in enumerate(views):
        # Linear only: the joint refinement is the maximum likelihood of every view.
        res = resect_projective(X, px, pushbroom=pushbroom, refine=False)
        if not res.success:
            reasons.append(f"view {i}: {res.reason}")
            continue
        try:
            dec = decompose_camera(res.camera, PushbroomIntrinsics if pushbroom
                                   else TwoSlitIntrinsics)
        except ValueError as exc:
            reasons.append(f"view {i}: {exc}")
            continue
        params.append(intrinsic_parameters(dec.intrinsics)[1])
        poses[i] = np.concatenate([dec.rvec, dec.tvec])
    if not params:
        return None, poses, ("no view determines the intrinsics without a guess (the projective "
                      "resection needs 7 points not on one plane per view): "
                      + "; ".join(reasons))
    p = np.median(np.array(params), axis=0)
    W, H = image_size
    centre = {"two_slit": ((W - 1) / 2, (H - 1) / 2), "pushbroom": ((H - 1) / 2,)}[model]
    pp = list(_GROUPS[model]["principal_point"])
    if not free[pp[0]]:  # fixed without a guess: at the image centre, as cv2 does
        p[pp] = centre
    if model == "two_slit" and not free[2]:  # the parallel model
        p[[2, 5]] = 0.0
    return p, poses, ""


def calibrate(object_points, image_points, image_size, *, model: str = "two_slit",
              intrinsics_guess=None, fixed=(), max_iterations: int = 100,
              tol: float = 1e-12) -> CalibrationResult:
    """Intrinsics shared by several views of known points, and the pose of each view.

    Parameters
    ----------
    object_points : list of (N_i, 3) ndarray
        Validated 3D points per view (world units: they set the scale of ``d`` and ``v``).
    image_points : list of (N_i, 2) ndarray
        Their pixels.
    image_size : (width, height)
        Where a fixed principal point sits without a guess (the image centre).
    model : {"two_slit", "pushbroom"}
    intrinsics_guess : TwoSlitIntrinsics or PushbroomIntrinsics, optional
        Start of the refinement and the values of the fixed parameters.
    fixed : iterable of str
        Parameter groups kept at their start (see :func:`calibration_parameters`).
    max_iterations : int
    tol : float
        Relative decrease of the cost below which the refinement stops.

    Returns
    -------
    CalibrationResult

    Examples
    --------
    >>> from xslit import TwoSlitIntrinsics, synthetic
    >>> from xslit.cameras import project_points_with_pose
    >>> true = TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, np.radians(80), 0.5)
    >>> rng = np.random.default_rng(0)
    >>> X = [rng.uniform(-1, 1, (40, 3)) for _ in range(3)]
    >>> poses = [(rng.normal(scale=0.2, size=3), np.array([0, 0, 6.0])) for _ in range(3)]
    >>> px = [project_points_with_pose(x, r, t, true) for x, (r, t) in zip(X, poses)]
    >>> res = calibrate(X, px, (640, 480), fixed=("parallel",))
    >>> res.success, round(res.intrinsics.fu, 6), round(res.intrinsics.d, 9), res.rms < 1e-6
    (True, 800.0, 0.5, True)
    """
    free = calibration_parameters(model, fixed)
    V = len(object_points)
    views = list(zip(object_points, image_points, strict=True))
    p0, starts, reason = _initial_intrinsics(views, model, image_size, free, intrinsics_guess)
    if p0 is None:
        return _fail(reason, free, V)
    try:
        intr0 = intrinsics_object(model, p0)
    except ValueError as exc:
        return _fail(f"the views' intrinsics do not form a camera: {exc}", free, V)
    poses = np.empty((V, 6))
    for i, (X, px) in enumerate(views):
        if starts[i] is not None:  # the decomposition's pose (for the view's own intrinsics)
            poses[i] = starts[i]
            continue
        res = resect_pose(X, px, intr0)
        if not res.success:
            return _fail(f"view {i}: no pose for the start intrinsics: {res.reason}", free, V)
        poses[i] = np.concatenate([res.rvec, res.tvec])
    data = _Views(object_points, image_points)
    n_obs = int(data.counts.sum())
    kind = model
    full = p0.astype(float)
    idx = np.flatnonzero(free)

    def params(g):
        p = full.astype(g.dtype)
        p[idx] = g
        return p

    def fun(g, q):
        return data.residuals(kind, params(g), q[:, :3], q[:, 3:])

    def jac(g, q):
        Jg = np.empty((V, 2 * data.X.shape[1], len(g)))
        Jp = np.empty((V, 2 * data.X.shape[1], 6))
        for k in range(6):
            qc = q.astype(complex)
            qc[:, k] += 1j * _STEP
            Jp[..., k] = fun(g, qc).imag / _STEP
        for k in range(len(g)):
            gc = g.astype(complex)
            gc[k] += 1j * _STEP
            Jg[..., k] = fun(gc, q).imag / _STEP
        return Jg, Jp

    g0 = full[idx]
    r0 = fun(g0, poses)
    initial_rms = float(np.sqrt(np.sum(r0 * r0) / n_obs))
    with np.errstate(divide="ignore", invalid="ignore"):
        lm = block_levenberg_marquardt(fun, g0, poses, jac, max_iterations=max_iterations,
                                       tol=tol)
    p = params(lm.g)
    try:
        intrinsics = intrinsics_object(kind, p)
    except ValueError as exc:
        return _fail(f"the refinement left the space of cameras: {exc}", free, V)
    r = lm.residuals.reshape(V, -1, 2)
    sq = np.sum(r * r, axis=(1, 2))
    if not np.all(np.isfinite(sq)):
        return _fail("a point lies on the exceptional locus of the refined camera", free, V)
    Jg, Jp = jac(lm.g, lm.p)
    S, _, Vinv, WV = reduced_normal_equations(Jg, Jp)
    scale = np.sqrt(np.maximum(np.diag(S), 1e-300))
    Sn = S / np.outer(scale, scale)
    eig = np.linalg.eigvalsh(Sn) if len(S) else np.ones(1)
    if eig.min() < UNDETERMINED_EIGENVALUE * max(eig.max(), 1e-300):
        weak = np.linalg.eigh(Sn)[1][:, 0]
        names = [PARAMETER_NAMES[kind][idx[j]] for j in np.flatnonzero(np.abs(weak) > 0.3)]
        return _fail("the views do not determine the intrinsics (a combination of "
                     f"{', '.join(names)} changes no reprojection): add views with other "
                     "orientations, or fix these parameters", free, V)
    dof = 2 * n_obs - len(idx) - 6 * V
    sigma2 = float(np.sum(sq)) / dof if dof > 0 else np.nan
    Sinv = np.linalg.inv(S)
    std_int = np.zeros(len(full))
    std_int[idx] = np.sqrt(np.maximum(np.diag(Sinv), 0) * sigma2)
    cov_p = Vinv + np.einsum("vgi,gh,vhj->vij", WV, Sinv, WV)
    std_ext = np.sqrt(np.maximum(np.einsum("vii->vi", cov_p), 0) * sigma2)
    return CalibrationResult(
        True, "", intrinsics, lm.p[:, :3].copy(), lm.p[:, 3:].copy(),
        float(np.sqrt(np.sum(sq) / n_obs)), np.sqrt(sq / data.counts), std_int, std_ext, free,
        lm.iterations, initial_rms)
