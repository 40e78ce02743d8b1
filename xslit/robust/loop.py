"""A generic robust-estimation loop (RANSAC family), independent of the model.

The loop knows only the :class:`RobustProblem` interface (PoseLib's ``robust/ransac_impl.h``,
scikit-image's ``RansacModelProtocol``): a sample size, a batched generator of models from
samples, batched residuals, and a non-minimal refit. Hypotheses are generated and scored in
batches (stacked SVDs, one ``einsum`` for all residuals), never per sample in Python.

Scoring: RANSAC (inlier count), MSAC (truncated quadratic loss, Torr and Zisserman) and LMedS
(median of squared residuals). USAC-style extras (Raguram et al., "USAC", PAMI 2013; Chum et
al., "Locally optimized RANSAC", 2003): preemptive verification on a random subset of points,
local optimisation when the best model improves, a final iteratively re-weighted refit on all
inliers, and a non-randomness test that rejects a "best" model whose support is what chance
would give.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

__all__ = [
    "LMEDS",
    "MSAC",
    "RANSAC",
    "RobustOptions",
    "RobustProblem",
    "RobustResult",
    "robust_estimate",
]

RANSAC = "ransac"
MSAC = "msac"
LMEDS = "lmeds"


class RobustProblem(Protocol):
    """What the loop needs from a model."""

    #: Points per minimal (or smallest non-degenerate) sample.
    sample_size: int
    #: Number of data points.
    n_points: int

    def fit_samples(self, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Models from a batch of samples ``(B, sample_size)`` of indices.

        Returns stacked models ``(M, ...)`` and the index ``(M,)`` of the sample each came
        from (a solver may return several models per sample, or none).
        """

    def residuals(self, models: np.ndarray, subset: np.ndarray | None = None) -> np.ndarray:
        """Residuals ``(M, n)`` in the units of the threshold, for all points or a subset."""

    def refit(self, model: np.ndarray, inliers: np.ndarray, threshold: float) -> np.ndarray | None:
        """A non-minimal fit on the points ``inliers`` (bool mask), or None when degenerate."""

    # Optional: ``chance_residuals(model, rng) -> (n,)`` residuals of the model on data whose
    # pairing was shuffled; the non-randomness test uses it to estimate how often a point
    # fits by chance. Without it, the median support of the hypotheses is used.


@dataclass
class RobustOptions:
    """Options of :func:`robust_estimate` (all validated by the caller)."""

    method: str = MSAC
    threshold: float = 1.0
    confidence: float = 0.999
    max_iterations: int = 10000
    min_iterations: int = 0
    batch_size: int = 64
    local_optimization: bool = True
    lo_iterations: int = 10
    lo_sample_factor: int = 4
    final_refit: bool = True
    preemptive_subset: int = 256
    #: Significance of the non-randomness test of the final support (None: no test).
    randomness_alpha: float | None = 1e-6


@dataclass
class RobustResult:
    model: np.ndarray | None
    inliers: np.ndarray
    score: float
    iterations: int
    success: bool
    reason: str = ""
    history: dict = field(default_factory=dict)


def _sample_indices(rng: np.random.Generator, n: int, s: int, batch: int) -> np.ndarray:
    """``batch`` samples of ``s`` distinct indices out of ``n``, vectorised."""
    if n <= 4 * s or n <= 512:
        keys = rng.random((batch, n))
        return np.argpartition(keys, s - 1, axis=1)[:, :s]
    idx = rng.integers(0, n, size=(2 * batch, s))
    srt = np.sort(idx, axis=1)
    ok = np.all(srt[:, 1:] != srt[:, :-1], axis=1)
    idx = idx[ok]
    while len(idx) < batch:  # rare: too many samples had repeated indices
        more = rng.integers(0, n, size=(batch, s))
        srt = np.sort(more, axis=1)
        idx = np.vstack([idx, more[np.all(srt[:, 1:] != srt[:, :-1], axis=1)]])
    return idx[:batch]


def _loss(method: str, r: np.ndarray, thr: float) -> np.ndarray:
    """Per-model loss (lower is better) of residuals ``(M, n)``."""
    if method == RANSAC:
        return -(r < thr).sum(axis=-1).astype(float)
    if method == MSAC:
        return np.minimum(r * r, thr * thr).sum(axis=-1)
    if method == LMEDS:
        return np.median(r * r, axis=-1)
    raise ValueError(f"method must be one of {RANSAC!r}, {MSAC!r}, {LMEDS!r}, got {method!r}")


def _required_iterations(inlier_ratio: float, s: int, confidence: float) -> float:
    w = inlier_ratio**s
    if w <= 0:
        return np.inf
    if w >= 1:
        return 0
    return np.log(1 - confidence) / np.log1p(-w)


def _lmeds_inliers(r: np.ndarray, s: int) -> tuple[np.ndarray, float]:
    """Rousseeuw's robust scale from the median and the 2.5-sigma inliers."""
    n = len(r)
    sigma = 1.4826 * (1 + 5.0 / max(n - s, 1)) * np.sqrt(np.median(r * r))
    thr = max(2.5 * sigma, 1e-6)  # floor for noise-free data
    return r <= thr, thr


def robust_estimate(problem: RobustProblem, options: RobustOptions, rng) -> RobustResult:
    """Run the robust loop on ``problem``.

    Parameters
    ----------
    problem : RobustProblem
    options : RobustOptions
    rng : numpy.random.Generator

    Returns
    -------
    RobustResult
        ``model`` None and ``success`` False, with a ``reason``, when no model is supported.
    """
    n, s = problem.n_points, problem.sample_size
    opt = options
    thr = opt.threshold
    if n < s:
        return RobustResult(None, np.zeros(n, bool), np.inf, 0, False,
                            f"{n} points, at least {s} are needed")
    sub = None
    if opt.method != LMEDS and opt.preemptive_subset and n > 2 * opt.preemptive_subset:
        sub = rng.choice(n, opt.preemptive_subset, replace=False)
    best_model, best_loss, best_inl = None, np.inf, None
    best_sub_frac = 0.0
    chance_fracs: list[np.ndarray] = []
    it = 0
    needed = float(opt.max_iterations)
    while it < min(needed, opt.max_iterations) or it < opt.min_iterations:
        b = int(min(opt.batch_size, max(opt.max_iterations - it, 1)))
        samples = _sample_indices(rng, n, s, b)
        it += b
        models, _ = problem.fit_samples(samples)
        if len(models) == 0:
            continue
        if sub is not None:
            rs = problem.residuals(models, sub)
            frac = (rs < thr).mean(axis=1)
            chance_fracs.append(frac)
            # Compare with the best subset support including this batch's (SPRT-like early
            # bail-out): in the first batch too, only models within 80% of the best one are
            # scored on all points.
            best_sub_frac = max(best_sub_frac, float(frac.max()))
            keep = frac >= 0.8 * best_sub_frac
            if not np.any(keep):
                continue
            models = models[keep]
        r = problem.residuals(models)
        if sub is None:
            chance_fracs.append((r < thr).mean(axis=1))
        loss = _loss(opt.method, r, thr)
        k = int(np.argmin(loss))
        if loss[k] < best_loss:
            model = models[k]
            rk = r[k]
            if opt.method == LMEDS:
                inl, _ = _lmeds_inliers(rk, s)
            else:
                inl = rk < thr
            if opt.local_optimization and opt.method != LMEDS and inl.sum() > s:
                model, rk, _ = _local_optimization(problem, model, inl, opt, rng)
                loss_k = _loss(opt.method, rk[None], thr)[0]
                inl = rk < thr
            else:
                loss_k = loss[k]
            best_model, best_loss, best_inl = model, loss_k, inl
            needed = _required_iterations(inl.mean(), s, opt.confidence)
    if best_model is None:
        return RobustResult(None, np.zeros(n, bool), np.inf, it, False,
                            ("every sample was degenerate: the data do not determine a unique model (for "
                             "the epipolar tensor: coplanar or collinear scene points, or identical "
                             "cameras)"))
    model, inl = best_model, best_inl
    if opt.method == LMEDS:
        inl, thr_eff = _lmeds_inliers(problem.residuals(model[None])[0], s)
    else:
        thr_eff = thr
    if opt.final_refit and inl.sum() > s:
        refined = _irls(problem, model, inl, thr_eff)
        if refined is not None:
            r_ref = problem.residuals(refined[None])[0]
            inl_ref = r_ref < thr_eff
            if _loss(MSAC, r_ref[None], thr_eff)[0] <= _loss(
                    MSAC, problem.residuals(model[None]), thr_eff)[0] * (1 + 1e-9):
                model, inl = refined, inl_ref
    result = RobustResult(model, inl, float(best_loss), it, True)
    if opt.randomness_alpha is not None and chance_fracs:
        if hasattr(problem, "chance_residuals"):
            hits = sum(int(np.sum(problem.chance_residuals(model, rng) < thr_eff))
                       for _ in range(20))
            p0 = (hits + 1.0) / (20 * n + 1.0)
        else:
            p0 = float(np.median(np.concatenate(chance_fracs)))
        # Bonferroni: the best of `it` hypotheses (each locally optimised) is being tested.
        needed_support = _support_needed(n, s, p0, opt.randomness_alpha / max(it, 1))
        result.history["chance_inlier_ratio"] = p0
        result.history["support_needed"] = needed_support
        if inl.sum() < needed_support:
            result.success = False
            result.reason = (f"best model has {int(inl.sum())} inliers of {n}, no more than "
                             f"chance gives ({needed_support} needed; too many outliers or "
                             "no consistent model)")
    return result


def _support_needed(n: int, s: int, p0: float, alpha: float) -> int:
    """Smallest support that a random model reaches with probability below ``alpha``.

    A model fitted to ``s`` points explains them exactly; each of the other ``n - s`` points
    is an inlier by chance with probability ``p0`` (estimated from the hypotheses).
    """
    from scipy.special import bdtrik

    p = min(max(p0, 1e-9), 1.0 - 1e-9)
    extra = bdtrik(1.0 - alpha, n - s, p)  # k with P(Binomial(n - s, p) <= k) = 1 - alpha
    return int(s + np.ceil(extra) + 1)


def _irls(problem, model, inliers, thr, iterations: int = 3):
    """Re-fit on the inliers a few times, updating the inlier set in between."""
    inl = inliers
    current = model
    for _ in range(iterations):
        new = problem.refit(current, inl, thr)
        if new is None:
            return None if current is model else current
        current = new
        inl_new = problem.residuals(current[None])[0] < thr
        if inl_new.sum() <= problem.sample_size or np.array_equal(inl_new, inl):
            break
        inl = inl_new
    return current


def _local_optimization(problem, model, inliers, opt: RobustOptions, rng):
    """LO-RANSAC: refits on inliers plus inner non-minimal samples; returns the best."""
    thr = opt.threshold
    best = model
    best_r = problem.residuals(model[None])[0]
    best_loss = _loss(MSAC, best_r[None], thr)[0]
    candidates = []
    ref = _irls(problem, model, inliers, thr)
    if ref is not None:
        candidates.append(ref)
    idx = np.flatnonzero(inliers)
    m = min(len(idx) // 2, opt.lo_sample_factor * problem.sample_size)
    if m > problem.sample_size:
        for _ in range(opt.lo_iterations):
            pick = np.zeros(problem.n_points, bool)
            pick[rng.choice(idx, m, replace=False)] = True
            fit = problem.refit(model, pick, thr)
            if fit is not None:
                r = problem.residuals(fit[None])[0]
                ref = _irls(problem, fit, r < thr, thr)
                candidates.append(fit if ref is None else ref)
    if candidates:
        C = np.stack(candidates)
        R = problem.residuals(C)
        L = _loss(MSAC, R, thr)
        k = int(np.argmin(L))
        if L[k] < best_loss:
            best, best_r, best_loss = C[k], R[k], L[k]
    return best, best_r, best_loss
