"""cv2-style self-calibration: selfCalibrateTwoSlit (and its flags)."""

from __future__ import annotations

import logging
import numbers

from ..sfm.autocalibration import self_calibrate_two_slit

__all__ = [
    "SELFCALIB_FIX_THETA",
    "SELFCALIB_USE_LINEAR",
    "SELFCALIB_ZERO_PRINCIPAL_POINT",
    "selfCalibrateTwoSlit",
]

log = logging.getLogger("xslit")

#: Principal points at the origin (``K`` diagonal): the assumption behind the linear
#: equations, always made (the flag is accepted for explicitness).
SELFCALIB_ZERO_PRINCIPAL_POINT = 1
#: The slit angles are known and given by ``theta``.
SELFCALIB_FIX_THETA = 2
#: Return the linear upgrade without the Levenberg-Marquardt refinement.
SELFCALIB_USE_LINEAR = 4

_KNOWN_FLAGS = SELFCALIB_ZERO_PRINCIPAL_POINT | SELFCALIB_FIX_THETA | SELFCALIB_USE_LINEAR


def selfCalibrateTwoSlit(cameras, points=None, flags=SELFCALIB_ZERO_PRINCIPAL_POINT,
                         theta=None):
    r"""Similarity upgrade of a projective reconstruction of parallel finite two-slit cameras
    (section 4 "Two-slit cameras: algorithms", paragraph "Self-calibration"; supplementary
    appendix "Self-calibration").

    Solves the linear self-calibration equations of section 4 for the dual absolute quadric
    :math:`\Omega = Q\,\mathrm{diag}(1, 1, 1, 0)\,Q^T` with zero principal points, projects it
    on rank 3 and refines the upgrade (:func:`xslit.sfm.autocalibration.self_calibrate_two_slit`,
    which also reports the reason of a failure and the residual figures).

    .. math:: A_j^i\, \Omega\, A_j^{iT} \simeq K_j^i K_j^{iT}, \qquad j = 1, 2

    Parameters
    ----------
    cameras : list of n >= 3 TwoSlitCamera or (A1, A2) pairs, or (n, 2, 2, 4) array_like
        A projective reconstruction.
    points : (N, 3) or (N, 4) array_like, optional
        Points in the same projective frame.
    flags : int
        ``SELFCALIB_ZERO_PRINCIPAL_POINT`` (always assumed), ``SELFCALIB_FIX_THETA`` (use
        ``theta``), ``SELFCALIB_USE_LINEAR`` (no refinement), combined with ``|``.
    theta : float or (n,) array_like, optional
        Known slit angles in radians, with ``SELFCALIB_FIX_THETA``.

    Returns
    -------
    retval : bool
        False when the data do not determine the upgrade (degenerate motion, fewer than 3
        cameras, too much noise); the reason is logged as a warning.
    Q : (4, 4) ndarray or None
        The upgrade: ``A Q`` is in a similarity frame, points map by ``Q^-1``.
    upgradedCameras : list of TwoSlitCamera or None
        ``(A1 Q, A2 Q)``; :func:`xslit.decomposeTwoSlitProjection` gives their intrinsics.
    points3D : (N, 3) ndarray or None
        The upgraded points, when ``points`` were given.

    Examples
    --------
    >>> import xslit
    >>> from xslit.synthetic import random_projective_two_slit_cameras
    >>> scene = random_projective_two_slit_cameras(5, rng=1)
    >>> ok, Q, cams, _ = selfCalibrateTwoSlit(scene.cameras)
    >>> dec = xslit.decomposeTwoSlitProjection(cams[0])
    >>> ok, round(float(dec.K1[0, 0] / scene.intrinsics[0].fu), 9)
    (True, 1.0)
    """
    if isinstance(flags, bool) or not isinstance(flags, numbers.Integral) or flags < 0:
        raise ValueError(f"flags must be a non-negative integer of SELFCALIB_* flags, got "
                         f"{flags!r}")
    if flags & ~_KNOWN_FLAGS:
        raise ValueError(f"flags has unknown bits {flags & ~_KNOWN_FLAGS:#x} (known: "
                         "SELFCALIB_ZERO_PRINCIPAL_POINT, SELFCALIB_FIX_THETA, "
                         "SELFCALIB_USE_LINEAR)")
    if bool(flags & SELFCALIB_FIX_THETA) != (theta is not None):
        raise ValueError("theta must be given exactly when flags has SELFCALIB_FIX_THETA, got "
                         f"theta={theta!r} with flags={flags}")
    res = self_calibrate_two_slit(cameras, points, theta=theta,
                                  refine=not flags & SELFCALIB_USE_LINEAR)
    if not res.ok:
        log.warning("selfCalibrateTwoSlit failed: %s", res.reason)
        return False, None, None, None
    return True, res.Q, res.cameras, res.points
