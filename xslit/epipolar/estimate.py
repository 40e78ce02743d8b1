"""Robust estimation of the epipolar tensor from correspondences (the model side of the loop)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..robust import RobustOptions, density_order, robust_estimate
from .linear import MIN_LINEAR_POINTS, _fit_minimal_batch, solve_linear, solve_linear_batch
from .tensor import sampson_distance_op, sampson_distance_pairs, sampson_operator

__all__ = ["EpipolarEstimate", "EpipolarProblem", "estimate_epipolar_tensor"]

#: ``s_15 / s_1`` of the normalised design matrix below which F is not determined.
CONDITIONING_TOL = 1e-6


class EpipolarProblem:
    """:class:`xslit.robust.RobustProblem` for the epipolar tensor (15-point linear samples)."""

    sample_size = MIN_LINEAR_POINTS

    def __init__(self, points1: np.ndarray, points2: np.ndarray):
        self.points1 = points1
        self.points2 = points2
        self.n_points = len(points1)
        self._G = sampson_operator(points1, points2)
        self._subset = None
        self._G_subset = None

    def fit_samples(self, samples):
        if samples.shape[1] == MIN_LINEAR_POINTS:
            F, ok = _fit_minimal_batch(self.points1[samples], self.points2[samples],
                                       CONDITIONING_TOL)
        else:
            F, cond = solve_linear_batch(self.points1[samples], self.points2[samples])
            ok = cond > CONDITIONING_TOL
        return F[ok], np.flatnonzero(ok)

    def residuals(self, models, subset=None):
        if subset is None:
            return sampson_distance_op(self._G, models)
        if self._subset is not subset:
            self._subset, self._G_subset = subset, self._G[:, subset]
        return sampson_distance_op(self._G_subset, models)

    def chance_residuals(self, model, rng, draws):
        """Residuals of about ``draws`` wrong pairs: every pairing of ``m`` random points of
        image 1 with ``m`` other random points of image 2 (how well chance pairs fit)."""
        m = min(int(np.ceil(np.sqrt(draws))), self.n_points // 2)
        perm = rng.permutation(self.n_points)[:2 * m]
        return sampson_distance_pairs(model, self.points1[perm[:m]],
                                      self.points2[perm[m:]]).ravel()

    def quality_order(self, rng):
        """PROSAC order: density of the correspondences in the joint image space."""
        return density_order(np.hstack([self.points1, self.points2]), rng)

    def refit(self, model, inliers, threshold):
        """Sampson-weighted linear least squares: rows scaled by ``1 / |grad e|``."""
        p1, p2 = self.points1[inliers], self.points2[inliers]
        if len(p1) < self.sample_size:
            return None
        # Gradient of the residual from the cached operator: one product over all points.
        g = np.asarray(model, dtype=float).reshape(16) @ self._G[1:].transpose(0, 2, 1)
        gn = np.sqrt(np.einsum("kn,kn->n", g, g)[inliers])
        w = 1.0 / np.maximum(gn, 1e-12 * gn.max())
        F, cond = solve_linear(p1, p2, weights=w)
        if cond < CONDITIONING_TOL:
            return None
        return F


@dataclass
class EpipolarEstimate:
    """Result of :func:`estimate_epipolar_tensor`."""

    F: np.ndarray | None
    inliers: np.ndarray
    success: bool
    reason: str
    iterations: int
    conditioning: float = np.nan


def _distinct_count(points1, points2) -> int:
    return len(np.unique(np.round(np.hstack([points1, points2]), 9), axis=0))


def estimate_epipolar_tensor(points1, points2, options: RobustOptions | None, rng,
                             linear_only: bool = False, order=None) -> EpipolarEstimate:
    """Robust (or, with ``linear_only``, all-points linear) estimate of ``F``.

    Parameters
    ----------
    points1, points2 : (N, 2) ndarray
        Validated pixels.
    options : RobustOptions or None
        Ignored when ``linear_only``.
    rng : numpy.random.Generator
    linear_only : bool
    order : (N,) int ndarray, optional
        Correspondences by decreasing quality for the PROSAC sampler (default: by density in
        the joint image space, :func:`xslit.robust.density_order`).

    Returns
    -------
    EpipolarEstimate
        ``F`` None with ``success`` False and a ``reason`` for degenerate input: fewer than 15
        distinct correspondences, a design matrix whose null space is not one-dimensional
        (all scene points on one plane or line, identical cameras), or a support no larger than
        chance (too many outliers).
    """
    n = len(points1)
    none = np.zeros(n, bool)
    # The first rows nearly always hold 15 distinct pairs: count all only when they do not.
    distinct = _distinct_count(points1[:4 * MIN_LINEAR_POINTS], points2[:4 * MIN_LINEAR_POINTS])
    if distinct < MIN_LINEAR_POINTS:
        distinct = _distinct_count(points1, points2)
    if distinct < MIN_LINEAR_POINTS:
        return EpipolarEstimate(None, none, False, f"only {distinct} distinct correspondences, "
                                f"at least {MIN_LINEAR_POINTS} are needed", 0)
    if linear_only:
        F, cond = solve_linear(points1, points2)
        inliers = np.ones(n, bool)
        it = 1
    else:
        res = robust_estimate(EpipolarProblem(points1, points2), options, rng, order)
        if res.model is None:
            return EpipolarEstimate(None, none, False, res.reason, res.iterations)
        if not res.success:
            return EpipolarEstimate(None, none, False, res.reason, res.iterations)
        F, inliers, it = res.model, res.inliers, res.iterations
        _, cond = solve_linear(points1[inliers], points2[inliers])
    if cond < CONDITIONING_TOL:
        return EpipolarEstimate(None, none, False, (
            "the correspondences do not determine F (the linear system has more than one "
            f"solution, s15/s1 = {cond:.1e}): degenerate configuration such as coplanar or "
            "collinear scene points or identical cameras"), it, cond)
    return EpipolarEstimate(F, inliers, True, "", it, cond)
