r"""Self-calibration of parallel finite two-slit cameras (section 4, "Self-calibration";
supplementary appendix "Self-calibration").

A projective reconstruction :math:`(A_1^i, A_2^i)`, :math:`i = 1..n`, is the Euclidean one
seen through an unknown :math:`4 \times 4` matrix :math:`Q`: :math:`A^i Q = K^i [R^i \mid t^i]`
(Proposition 1). With :math:`\Omega = Q \,\mathrm{diag}(1, 1, 1, 0)\, Q^T`, the dual absolute
quadric in the projective frame, the equation of section 4's paragraph "Self-calibration"
reads

.. math::

    A_1^i \Omega A_1^{iT} \simeq K_1^i K_1^{iT}, \qquad
    A_2^i \Omega A_2^{iT} \simeq K_2^i K_2^{iT}, \qquad
    A_1^i \Omega A_2^{iT} \simeq K_1^i
        \begin{bmatrix} \cos\theta_i & 0 \\ 0 & 1 \end{bmatrix} K_2^{iT},

the last because :math:`r_1, r_2 \perp r_3`. With the principal points at zero the
:math:`K` are diagonal, and the four off-diagonal entries

.. math::

    p_1^T \Omega p_2 = 0, \quad q_1^T \Omega q_2 = 0, \quad
    p_1^T \Omega q_2 = 0, \quad p_2^T \Omega q_1 = 0

(:math:`A_1 = [p_1; p_2]`, :math:`A_2 = [q_1; q_2]`) are linear in the 10 entries of
:math:`\Omega`; a known slit angle of 90 degrees adds :math:`p_1^T \Omega q_1 = 0`. Three
cameras give 12 equations for the 9 degrees of freedom of :math:`\Omega`.

Geometrically each equation says that two rows of the upgraded camera :math:`A Q` have
orthogonal directions (their first three entries): :math:`f_u r_1 \perp r_3` and so on. The
refinement minimises these cosines, the sine of the angle between the two denominator
directions (which a parallel camera shares, :math:`r_3`), and for known slit angles
:math:`\cos\angle(p_1, q_1) - \cos\theta`. A cosine :math:`p_1 \cdot p_2` is
:math:`u_0 / \sqrt{f_u^2 + u_0^2}`: the principal point in units of the magnification.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._checks import check_array, check_camera_stack, check_finite, check_object_points
from ..cameras import TwoSlitCamera, decompose_two_slit
from .lm import batch_levenberg_marquardt

__all__ = [
    "SELF_CALIBRATION_GAP",
    "SELF_CALIBRATION_SPREAD",
    "SelfCalibration",
    "dual_quadric_equations",
    "self_calibrate_two_slit",
    "self_calibration_residuals",
    "upgrade_from_dual_quadric",
]

#: The data determine Omega when the second smallest singular value of the normalised linear
#: system exceeds the smallest by this factor. Measured on 100 scenes of
#: :func:`xslit.synthetic.random_projective_two_slit_cameras` per setting: noise-free, the
#: ratio is above 1e12; for pure translations (a second null direction) it stays below 8 at
#: every noise level (below 3 for 10 cameras); at noise levels where it falls below 10 for
#: general motions, the magnifications come out off by a median of 15-20%.
SELF_CALIBRATION_GAP = 10.0

#: The cameras' denominator planes must span three dimensions by this factor above the fit's
#: RMS residual. Measured on 150 scenes per setting at relative noise 1e-5 and 1e-3: pure
#: translations gave at most 7.3 times the residual (3 cameras; 2.6 with 10), general motions
#: at least 96 times at 1e-5 (and a median of 30-45 at 1e-3).
SELF_CALIBRATION_SPREAD = 10.0

#: Row pairs (matrix, row), (matrix, row) of the four equations of a camera with zero
#: principal points, and of the fifth for a known right slit angle.
_ZERO_PP_PAIRS = (((0, 0), (0, 1)), ((1, 0), (1, 1)), ((0, 0), (1, 1)), ((0, 1), (1, 0)))
_RIGHT_ANGLE_PAIR = ((0, 0), (1, 0))
_IU = np.triu_indices(4)
_SQRT2 = np.sqrt(2.0)


@dataclass
class SelfCalibration:
    """Result of :func:`self_calibrate_two_slit`.

    Attributes
    ----------
    ok : bool
    reason : str
        Why it failed ("" on success).
    Q : (4, 4) ndarray or None
        The upgrade: ``A Q`` are the cameras in a similarity frame; points map by ``Q^-1``.
    Omega : (4, 4) ndarray or None
        The dual absolute quadric ``Q diag(1, 1, 1, 0) Q^T`` (unit Frobenius norm).
    cameras : list of TwoSlitCamera
        The upgraded cameras ``(A1 Q, A2 Q)``.
    points : (N, 3) ndarray or None
        The upgraded points (Euclidean), when points were given.
    decompositions : list of TwoSlitDecomposition
        Proposition 1 on each upgraded camera (magnifications ``K1[0, 0]``, ``K2[0, 0] / 2``,
        slit angle, slit distance in the frame's unit, pose).
    singular_values : (10,) ndarray
        Of the normalised linear system, largest first (their last gap says whether the data
        determine Omega).
    linear_rms, rms : float
        Root mean square of :func:`self_calibration_residuals` at the linear upgrade and at
        the refined one.
    rank_ratio : float
        ``|4th eigenvalue| / 3rd eigenvalue`` of the linear Omega before the rank-3
        projection (0 for exact data).
    refined : bool
        Whether the refined upgrade was kept (it is when it lowers the cost).
    """

    ok: bool
    reason: str = ""
    Q: np.ndarray | None = None
    Omega: np.ndarray | None = None
    cameras: list = field(default_factory=list)
    points: np.ndarray | None = None
    decompositions: list = field(default_factory=list)
    singular_values: np.ndarray | None = None
    linear_rms: float = np.nan
    rms: float = np.nan
    rank_ratio: float = np.nan
    refined: bool = False


def _symmetric_design(a, b):
    """Rows of the linear map ``Omega -> a^T Omega b`` on ``(Omega_ii, sqrt(2) Omega_ij)``.

    The sqrt(2) makes the coordinates' norm the Frobenius norm of Omega, so that the smallest
    singular vector is the least-squares solution under a meaningful normalisation.
    """
    outer = a[:, :, None] * b[:, None, :]
    sym = outer + np.swapaxes(outer, 1, 2)
    rows = sym[:, _IU[0], _IU[1]]
    diag = _IU[0] == _IU[1]
    rows[:, diag] /= 2.0
    rows[:, ~diag] /= _SQRT2
    return rows


def _omega_from_vector(w):
    O = np.zeros((4, 4))
    diag = _IU[0] == _IU[1]
    O[_IU[0], _IU[1]] = np.where(diag, w, w / _SQRT2)
    return O + np.triu(O, 1).T


def dual_quadric_equations(cameras, *, right_angle=None) -> np.ndarray:
    r"""The linear self-calibration equations with zero principal points, one row per equation.

    .. math:: a^T \Omega\, b = 0 \quad\text{for}\quad (a, b) \in
              \{(p_1, p_2), (q_1, q_2), (p_1, q_2), (p_2, q_1)\}
              \;[\,\cup\, \{(p_1, q_1)\} \text{ if } \theta = 90^\circ]

    Parameters
    ----------
    cameras : (n, 2, 2, 4) ndarray
        ``cameras[i, 0] = A1 = [p1; p2]``, ``cameras[i, 1] = A2 = [q1; q2]``.
    right_angle : (n,) bool ndarray, optional
        Cameras known to have orthogonal slits.

    Returns
    -------
    D : (E, 10) ndarray
        ``D @ w = 0`` with ``w = (Omega_ii, sqrt(2) Omega_ij)`` over the upper triangle
        (row-major), so that ``|w| = |Omega|_F``.

    Examples
    --------
    Each camera of the appendix's experiment gives four equations ("40 equations" for 10):

    >>> A = np.zeros((10, 2, 2, 4))
    >>> dual_quadric_equations(A).shape
    (40, 10)
    """
    pairs = [(cameras[:, i, r], cameras[:, j, s]) for (i, r), (j, s) in _ZERO_PP_PAIRS]
    a = np.concatenate([p[0] for p in pairs])
    b = np.concatenate([p[1] for p in pairs])
    if right_angle is not None and np.any(right_angle):
        (i, r), (j, s) = _RIGHT_ANGLE_PAIR
        a = np.concatenate([a, cameras[right_angle, i, r]])
        b = np.concatenate([b, cameras[right_angle, j, s]])
    return _symmetric_design(a, b)


def _normalize_rows(A):
    return A / np.linalg.norm(A, axis=-1, keepdims=True)


def _conditioning(A):
    """Rows of unit norm in a whitened projective frame: ``(A T, T)``.

    Scaling a row of ``A1`` or ``A2`` is a diagonal change of image coordinates: it keeps
    ``K`` diagonal and the equations. ``T`` whitens the stacked rows (their matrix gets
    orthonormal columns), the frame preconditioning of Hartley and Zisserman's chapter on
    auto-calibration; Omega in the original frame is ``T Omega' T^T``.
    """
    A = _normalize_rows(A)
    _, s, Vt = np.linalg.svd(A.reshape(-1, 4), full_matrices=False)
    T = Vt.T / s
    return _normalize_rows(A @ T), T


def upgrade_from_dual_quadric(Omega):
    r"""The closest rank-3 semidefinite :math:`\Omega` and an upgrade :math:`Q` with
    :math:`Q \,\mathrm{diag}(1, 1, 1, 0)\, Q^T = \Omega`.

    The sign of :math:`\Omega` (free, the equations being homogeneous) is the one whose
    semidefinite rank-3 part is closer in Frobenius norm; :math:`Q = [V_3 \sqrt{E_3},\, v_4]`
    from the eigen-decomposition.

    Parameters
    ----------
    Omega : (4, 4) array_like
        Symmetric.

    Returns
    -------
    Q : (4, 4) ndarray or None
        None when neither sign has three positive eigenvalues.
    Omega3 : (4, 4) ndarray
        The projected quadric.
    rank_ratio : float
        ``|e4| / e3`` of the chosen sign (how far from rank 3 the input was).

    Examples
    --------
    >>> H = np.array([[2.0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1]])
    >>> Q, O3, ratio = upgrade_from_dual_quadric(-H @ np.diag([1, 1, 1, 0]) @ H.T)
    >>> bool(np.allclose(Q @ np.diag([1, 1, 1, 0]) @ Q.T, O3)), round(ratio, 12)
    (True, 0.0)
    """
    O = np.asarray(Omega, dtype=float)
    O = (O + O.T) / 2
    best = None
    for sign in (1.0, -1.0):
        e, V = np.linalg.eigh(sign * O)
        e, V = e[::-1], V[:, ::-1]
        kept = np.clip(e[:3], 0.0, None)
        dist = np.sum((e[:3] - kept) ** 2) + e[3] ** 2
        if best is None or dist < best[0]:
            best = (dist, e, V, kept)
    _, e, V, kept = best
    O3 = (V[:, :3] * kept) @ V[:, :3].T
    if kept[2] <= 0:
        return None, O3, np.inf
    Q = np.column_stack([V[:, :3] * np.sqrt(kept), V[:, 3]])
    return Q, O3, float(abs(e[3]) / kept[2])


def _unit_dirs(C):
    """Directions ``(n, 2, 2, 3)`` of the rows of the upgraded cameras ``C`` (n, 2, 2, 4),
    normalised with ``sqrt(x . x)`` so that complex-step derivatives stay exact."""
    M = C[..., :3]
    return M / np.sqrt(np.sum(M * M, axis=-1, keepdims=True))


def _structure_residuals(C, cos_theta):
    """Residuals ``(..., n, k)`` of upgraded cameras ``C`` (..., n, 2, 2, 4); see
    :func:`self_calibration_residuals`."""
    m = _unit_dirs(C)
    p1, p2, q1, q2 = m[..., 0, 0, :], m[..., 0, 1, :], m[..., 1, 0, :], m[..., 1, 1, :]
    dot = lambda a, b: np.sum(a * b, axis=-1)  # noqa: E731
    # A2's sign is free: orient q by the shared denominator direction (p2 . q2 > 0).
    s = np.sign(dot(p2, q2).real)
    s = np.where(s == 0, 1.0, s)
    parallel = np.cross(p2, q2 * s[..., None])
    res = [dot(p1, p2), dot(q1, q2), dot(p1, q2), dot(p2, q1), *np.moveaxis(parallel, -1, 0)]
    if cos_theta is not None:
        known = np.isfinite(cos_theta)
        res.append(np.where(known, s * dot(p1, q1) - np.where(known, cos_theta, 0.0), 0.0))
    return np.stack(res, axis=-1)


def self_calibration_residuals(cameras, Q, *, theta=None) -> np.ndarray:
    r"""How far the cameras ``A Q`` are from parallel two-slit cameras with zero principal
    points (and known slit angles), per camera.

    With unit directions :math:`\hat p_1, \hat p_2, \hat q_1, \hat q_2` of the rows of the
    upgraded :math:`A_1 Q, A_2 Q` (their first three entries, :math:`\hat q` oriented so that
    :math:`\hat p_2 \cdot \hat q_2 > 0`):

    .. math::

        \bigl(\hat p_1 \cdot \hat p_2,\; \hat q_1 \cdot \hat q_2,\;
        \hat p_1 \cdot \hat q_2,\; \hat p_2 \cdot \hat q_1,\;
        \hat p_2 \times \hat q_2,\; [\hat p_1 \cdot \hat q_1 - \cos\theta]\bigr)

    The first two are the principal points over the magnifications
    (:math:`u_0 / \sqrt{f_u^2 + u_0^2}`), the next two the angles of :math:`r_3` with
    :math:`r_1, r_2` (cosines), the cross product the sine of the angle between the
    denominators' directions (both :math:`r_3` for a parallel camera). All vanish at the true
    upgrade of exact data and do not depend on the scales of the rows nor on a similarity.

    Parameters
    ----------
    cameras : (n, 2, 2, 4) array_like or list of TwoSlitCamera
    Q : (4, 4) array_like
    theta : None, float or (n,) array_like
        Known slit angles (radians; NaN for unknown ones).

    Returns
    -------
    residuals : (n, 7) or (n, 8) ndarray
        The eighth column with ``theta``.

    Examples
    --------
    >>> from xslit.cameras import TwoSlitIntrinsics, compose_two_slit
    >>> intr = TwoSlitIntrinsics.from_parameters(800, 600, 0, 0, np.pi / 3, 0.5)
    >>> cam = compose_two_slit(intr, [0.1, 0.2, 0.3], [0, 0.1, 4])
    >>> r = self_calibration_residuals([cam], np.eye(4), theta=np.pi / 3)
    >>> r.shape, bool(np.abs(r).max() < 1e-12)
    ((1, 8), True)
    """
    A = check_camera_stack("cameras", cameras, min_count=1)
    Q = _check_Q(Q)
    return _structure_residuals(A @ Q, _cos_theta(theta, len(A)))


def _check_Q(Q):
    Q = check_array("Q", Q)
    if Q.shape != (4, 4):
        raise ValueError(f"Q must have shape (4, 4), got {Q.shape}")
    return check_finite("Q", Q)


def _cos_theta(theta, n):
    """Known slit angles as ``(n,)`` cosines (NaN where unknown), or None."""
    if theta is None:
        return None
    if isinstance(theta, (bool, np.bool_)) or np.asarray(theta).dtype == bool:
        raise ValueError(f"theta must be a slit angle in radians or one per camera, got "
                         f"{theta!r}")
    t = check_array("theta", theta)
    if t.ndim == 0:
        t = np.full(n, float(t))
    if t.shape != (n,):
        raise ValueError(f"theta must be a scalar or have shape ({n},) (one angle per camera), "
                         f"got {t.shape}")
    known = ~np.isnan(t)
    if not np.all(np.isfinite(t[known])):
        raise ValueError("theta must be finite angles in radians (NaN for unknown), got inf")
    if np.any(np.abs(np.sin(t[known])) < 1e-9):
        raise ValueError("theta must not make the slits parallel (sin(theta) = 0)")
    return np.where(known, np.cos(t), np.nan)


def _lower_form(x):
    """The upgrade step ``G = [[U, 0], [x[5:]^T, 1]]`` with ``U`` upper triangular,
    ``U[0, 0] = 1`` and the other five entries ``x[:5]`` added to the identity.

    ``G diag(1, 1, 1, 0) G^T = [[U U^T, U x[5:]], [., |x[5:]|^2]]`` covers the semidefinite
    rank-3 quadrics near ``diag(1, 1, 1, 0)`` (8 degrees of freedom, the dimension of the
    upgrades modulo similarities), so the refinement has no gauge freedom left.
    """
    K = x.shape[0]
    G = np.zeros((K, 4, 4), dtype=x.dtype)
    G[:, 0, 0] = 1.0
    G[:, 0, 1], G[:, 0, 2], G[:, 1, 1], G[:, 1, 2], G[:, 2, 2] = x[:, :5].T
    G[:, 1, 1] += 1.0
    G[:, 2, 2] += 1.0
    G[:, 3, :3] = x[:, 5:]
    G[:, 3, 3] = 1.0
    return G


def _refine(A, Q0, cos_theta, iterations):
    """Levenberg-Marquardt over the minimal upgrade step ``Q = Q0 G(x)`` from ``x = 0``.

    Derivatives by complex step (exact to rounding; the residuals are analytic near the
    solution).
    """

    def upgraded(x):
        return np.einsum("nijc,kcd->knijd", A, Q0 @ _lower_form(x))

    def residuals(state):
        r = _structure_residuals(upgraded(state[0]), cos_theta)
        return r.reshape(len(r), -1), state

    def jacobian(state, r):
        h = 1e-30
        steps = state[0][0] + 1j * h * np.eye(8)
        J = _structure_residuals(upgraded(steps), cos_theta).imag / h
        return J.reshape(1, 8, -1)

    def retract(state, steps):
        return (state[0] + steps,)

    (x,), _, cost = batch_levenberg_marquardt(residuals, jacobian, retract, (np.zeros((1, 8)),),
                                              iterations=iterations, rel_tol=1e-12)
    return Q0 @ _lower_form(x)[0], float(cost[0])


def self_calibrate_two_slit(cameras, points=None, *, theta=None, refine: bool = True,
                            max_iterations: int = 50) -> SelfCalibration:
    r"""Similarity upgrade of a projective reconstruction of parallel finite two-slit cameras
    with zero principal points (section 4, paragraph "Self-calibration"; appendix
    "Self-calibration").

    1. Condition: rows of unit norm in a whitened projective frame.
    2. Solve the linear equations of :func:`dual_quadric_equations` for :math:`\Omega` by SVD;
       fail when the last singular value gap is below :data:`SELF_CALIBRATION_GAP` (the data
       do not determine :math:`\Omega`: pure translations, identical cameras, too much noise)
       or with fewer than 9 equations.
    3. Project :math:`\Omega` on the rank-3 semidefinite matrices and factor it
       (:func:`upgrade_from_dual_quadric`).
    4. Refine the upgrade over its 8 degrees of freedom, minimising
       :func:`self_calibration_residuals` (cosines and sines between the upgraded rows'
       directions) with :func:`xslit.sfm.lm.batch_levenberg_marquardt`; the refined upgrade
       is kept only when it lowers that cost.

    .. math:: \Omega = Q\, \mathrm{diag}(1, 1, 1, 0)\, Q^T, \qquad
              A_j^i \Omega A_j^{iT} \simeq K_j^i K_j^{iT}

    The upgrade is determined up to a similarity, including a reflection: the mirror image
    has slit angles :math:`2\pi - \theta`. The reflection is chosen so that the first
    camera's slit angle is in :math:`(0, \pi)`; with points, the overall sign of :math:`Q`
    (which orients every camera's cheirality at once) puts most points in front of the
    cameras.

    Parameters
    ----------
    cameras : list of n >= 3 TwoSlitCamera or (A1, A2) pairs, or (n, 2, 2, 4) array_like
        The projective reconstruction.
    points : (N, 3) or (N, 4) array_like, optional
        Reconstructed points in the same projective frame (homogeneous with 4 columns).
    theta : None, float or (n,) array_like
        Known slit angles in radians (NaN for unknown ones). A right angle adds a linear
        equation; any known angle enters the refinement.
    refine : bool
        Run step 4.
    max_iterations : int
        Of the refinement.

    Returns
    -------
    SelfCalibration
        ``ok``, ``reason``, ``Q``, ``cameras`` (upgraded), ``points``, ``decompositions``
        and the residual figures.

    Raises
    ------
    ValueError
        For malformed input (naming the argument), not for degenerate data.

    Examples
    --------
    The appendix's experiment: 10 random cameras with diagonal K under a random projective
    frame.

    >>> from xslit.synthetic import random_projective_two_slit_cameras
    >>> scene = random_projective_two_slit_cameras(10, rng=0)
    >>> res = self_calibrate_two_slit(scene.cameras)
    >>> res.ok, res.rms < 1e-9
    (True, True)
    >>> fu = [dec.K1[0, 0] for dec in res.decompositions]
    >>> bool(np.allclose(fu, [k.fu for k in scene.intrinsics]))
    True
    """
    A = check_camera_stack("cameras", cameras)
    n = len(A)
    cos_theta = _cos_theta(theta, n)
    X = None
    if points is not None:
        X = check_object_points("points", points)
        if X.shape[1] == 3:
            X = np.hstack([X, np.ones((len(X), 1))])
    if isinstance(refine, (bool, np.bool_)) is False:
        raise ValueError(f"refine must be True or False, got {refine!r}")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) \
            or max_iterations < 0:
        raise ValueError(f"max_iterations must be an integer >= 0, got {max_iterations!r}")
    for k, pair in enumerate(A):
        for j, M in enumerate(pair):
            if np.linalg.matrix_rank(M, tol=1e-12 * np.abs(M).max(initial=0.0)) < 2:
                raise ValueError(f"cameras[{k}] must have A{j + 1} of rank 2, got rank < 2")

    right = None if cos_theta is None else np.isfinite(cos_theta) & (np.abs(
        np.nan_to_num(cos_theta, nan=1.0)) < 1e-12)
    n_equations = 4 * n + (0 if right is None else int(np.count_nonzero(right)))
    if n_equations < 9:
        return SelfCalibration(False, f"too few equations: {n_equations} from {n} camera(s), "
                               "Omega has 9 degrees of freedom (3 cameras needed)")
    An, T = _conditioning(A)
    D = dual_quadric_equations(An, right_angle=right)
    if len(D) < 9:
        return SelfCalibration(False, f"too few equations: {len(D)} from {n} camera(s), "
                               "Omega has 9 degrees of freedom (3 cameras needed)")
    _, s, Vt = np.linalg.svd(D, full_matrices=False)
    s = np.pad(s, (0, 10 - len(s)))
    if not s[8] > SELF_CALIBRATION_GAP * s[9] or s[8] <= 1e-10 * s[0]:
        dim = 1 + int(np.sum(s[:9] <= SELF_CALIBRATION_GAP * max(s[9], 1e-12 * s[0])))
        return SelfCalibration(
            False, f"the data do not determine Omega: singular value gap {s[8] / s[0]:.2e} / "
            f"{s[9] / s[0]:.2e} below {SELF_CALIBRATION_GAP:g} (about {dim} null directions; "
            "degenerate motion such as pure translation, identical cameras, or too much noise)",
            singular_values=s / s[0])
    Q0n, _, rank_ratio = upgrade_from_dual_quadric(_omega_from_vector(Vt[9]))
    if Q0n is None:
        return SelfCalibration(False, "the linear Omega has fewer than three eigenvalues of one "
                               "sign: no real upgrade (the cameras are not parallel two-slit "
                               "cameras with zero principal points, or too much noise)",
                               singular_values=s / s[0])
    linear_cost = float(np.sum(_structure_residuals(An @ Q0n, cos_theta) ** 2))
    Qn, cost, refined = Q0n, linear_cost, False
    if refine and max_iterations:
        Qr, cost_r = _refine(An, Q0n, cos_theta, max_iterations)
        if cost_r < linear_cost:
            Qn, cost, refined = Qr, cost_r, True
    rms = np.sqrt(np.mean(_structure_residuals(An @ Qn, None) ** 2))
    # The denominators of parallel cameras are planes (r3, t): when every camera has the same
    # r3 (pure translation, or rotation about the viewing direction) they span only 2
    # dimensions, whatever the frame, and Omega is not determined. Noise can hide the second
    # null direction of the linear system from the gap test (3 cameras give only 3 redundant
    # equations); it cannot make the denominators span 3 dimensions beyond the noise level,
    # which the fit's residual measures (without the known angles' terms, which carry the
    # error of the given angles too).
    d = np.linalg.svd(An[:, :, 1].reshape(-1, 4), compute_uv=False)
    if d[2] / d[0] < SELF_CALIBRATION_SPREAD * rms or d[2] <= 1e-10 * d[0]:
        return SelfCalibration(
            False, f"the data do not determine Omega: the cameras' retinal planes are parallel "
            f"to within the noise (third singular value of the denominators {d[2] / d[0]:.2e}, "
            f"fit residual {rms:.2e}); pure translation or rotation about the viewing "
            "direction", singular_values=s / s[0])
    return _finish(A, X, T @ Qn, s / s[0], linear_cost, cost, rank_ratio, refined, cos_theta)


def _finish(A, X, Q, s, linear_cost, cost, rank_ratio, refined, cos_theta):
    """Orient and scale the upgrade, decompose the cameras (Proposition 1)."""
    Q = Q / np.linalg.norm(Q)
    C = A @ Q
    if X is not None:
        Xe = _dehomogenize(X @ np.linalg.inv(Q).T)
        depth = np.einsum("kjc,nc->kjn", C[:, :, 1], Xe)
        if np.count_nonzero(depth > 0) < np.count_nonzero(depth < 0):
            Q, C = -Q, -C
    try:
        cams = [TwoSlitCamera(c[0], c[1]) for c in C]
        decs = [decompose_two_slit(cam) for cam in cams]
        if decs[0].theta > np.pi:  # the mirror image: reflect x
            F = np.diag([-1.0, 1.0, 1.0, 1.0])
            Q, C = Q @ F, C @ F
            cams = [TwoSlitCamera(c[0], c[1]) for c in C]
            decs = [decompose_two_slit(cam) for cam in cams]
    except ValueError as exc:
        return SelfCalibration(False, f"an upgraded camera is not a finite two-slit camera "
                               f"({exc})", singular_values=s)
    pts = None if X is None else _dehomogenize(X @ np.linalg.inv(Q).T)[:, :3]
    m = max(1, _structure_residuals(C, cos_theta).size)
    return SelfCalibration(True, "", Q, Q @ np.diag([1.0, 1.0, 1.0, 0.0]) @ Q.T, cams, pts,
                           decs, s, float(np.sqrt(linear_cost / m)), float(np.sqrt(cost / m)),
                           rank_ratio, refined)


def _dehomogenize(X):
    with np.errstate(divide="ignore", invalid="ignore"):
        return X / X[:, 3:4]
