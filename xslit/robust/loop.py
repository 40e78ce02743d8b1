"""A generic robust-estimation loop (RANSAC family), independent of the model.

The loop knows only the :class:`RobustProblem` interface (PoseLib's ``robust/ransac_impl.h``,
scikit-image's ``RansacModelProtocol``): a sample size, a batched generator of models from
samples, batched residuals, and a non-minimal refit. Hypotheses are generated and scored in
batches (stacked SVDs, one ``einsum`` for all residuals), never per sample in Python.

Sampling: uniform (RANSAC) or progressive on a quality order (PROSAC, Chum and Matas, CVPR
2005, with its maximality and non-randomness termination). Scoring: RANSAC (inlier count), MSAC
(truncated quadratic loss, Torr and Zisserman) and LMedS (median of squared residuals).
USAC-style extras (Raguram et al., "USAC", PAMI 2013; Chum et
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
    "PROSAC",
    "RANSAC",
    "UNIFORM",
    "RobustOptions",
    "RobustProblem",
    "RobustResult",
    "robust_estimate",
    "search_other_branch",
]

RANSAC = "ransac"
MSAC = "msac"
LMEDS = "lmeds"
UNIFORM = "uniform"
PROSAC = "prosac"


class RobustProblem(Protocol):
    """What the loop needs from a model."""

    #: Points per minimal (or smallest non-degenerate) sample.
    sample_size: int
    #: Number of data points.
    n_points: int

    def fit_samples(self, samples: np.ndarray, near: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
        """Models from a batch of samples ``(B, sample_size)`` of indices (or larger samples,
        for local optimisation).

        Returns stacked models ``(M, ...)`` and the index ``(M,)`` of the sample each came
        from (a solver may return several models per sample, or none). ``near`` is a model
        close to all of them (local optimisation samples its inliers), where an iterative
        solver may start.
        """

    def residuals(self, models: np.ndarray, subset: np.ndarray | None = None) -> np.ndarray:
        """Residuals ``(M, n)`` in the units of the threshold, for all points or a subset."""

    def refit(self, model: np.ndarray, inliers: np.ndarray, threshold: float,
              final: bool = True) -> np.ndarray | None:
        """A non-minimal fit on the points ``inliers`` (bool mask), or None when degenerate.

        ``final`` False marks an intermediate fit that will be fitted again (a step of the
        annealed least squares): the problem may skip refinements that only the last fit
        needs.
        """

    # Optional: ``chance_residuals(model, rng, draws) -> (about draws,)`` residuals of the
    # model on wrongly paired data; the non-randomness tests use it to estimate how often a
    # point fits by chance. Without it, the median support of the
    # hypotheses is used.
    # Optional: ``quality_order(rng) -> (n,)`` indices by decreasing quality, the PROSAC order
    # when none is given.


@dataclass
class RobustOptions:
    """Options of :func:`robust_estimate` (all validated by the caller)."""

    method: str = MSAC
    #: ``UNIFORM`` (RANSAC's sampling) or ``PROSAC`` (progressive, on a quality order).
    sampler: str = UNIFORM
    threshold: float = 1.0
    confidence: float = 0.999
    max_iterations: int = 10000
    min_iterations: int = 0
    batch_size: int = 64
    local_optimization: bool = True
    lo_iterations: int = 10
    lo_sample_factor: int = 8
    #: Iterated least squares in LO: first thresholds from ``lo_anneal * threshold`` down.
    lo_anneal: float = 4.0
    lo_anneal_steps: int = 2
    #: Rounds of local optimisation, each from the result of the last, while it improves.
    lo_rounds: int = 2
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
    return _sample_pools(rng, np.full(batch, n), s)


def _sample_pools(rng: np.random.Generator, pools: np.ndarray, s: int) -> np.ndarray:
    """One sample of ``s`` distinct indices out of ``range(p)`` for each pool size ``p``.

    Small pools (or samples large enough for repeats to be likely: the birthday bound
    ``s^2 > p``) take the ``s`` smallest of random keys; large pools draw indices directly and
    redraw the rare rows with a repeat.
    """
    out = np.empty((len(pools), s), np.intp)
    small = (pools <= 512) | (pools <= 4 * s) | (s * s > pools)
    if np.any(small):
        ps = pools[small]
        keys = rng.random((len(ps), int(ps.max())))
        keys[np.arange(keys.shape[1]) >= ps[:, None]] = 2.0
        out[small] = np.argpartition(keys, s - 1, axis=1)[:, :s]
    rows = np.flatnonzero(~small)
    while len(rows):
        idx = (rng.random((len(rows), s)) * pools[rows, None]).astype(np.intp)
        srt = np.sort(idx, axis=1)
        ok = np.all(srt[:, 1:] != srt[:, :-1], axis=1)
        out[rows[ok]] = idx[ok]
        rows = rows[~ok]
    return out


def _disjoint_samples(rng: np.random.Generator, n: int, s: int, batch: int) -> np.ndarray:
    """``batch`` samples of ``s`` distinct indices out of ``n`` (``s <= n``): consecutive
    chunks of random permutations, so the samples cut from one permutation are disjoint.

    Each sample is uniform; for local optimisation's large inner samples (``s^2 > n``, where
    rejection would mostly redraw) one permutation serves ``n // s`` of them.
    """
    per = n // s
    perms = rng.permuted(np.tile(np.arange(n), (-(-batch // per), 1)), axis=1)
    return perms[:, :per * s].reshape(-1, s)[:batch]


def _log_binom_table(n_max: int, k: int) -> np.ndarray:
    """``log C(n, k)`` for ``n = k .. n_max`` (``(n_max - k + 1,)``), from the recurrence
    ``C(n, k) = C(n - 1, k) n / (n - k)`` as one cumulative sum of logarithms."""
    n = np.arange(k + 1, n_max + 1, dtype=float)
    return np.concatenate([[0.0], np.cumsum(np.log(n) - np.log(n - k))])


class _Prosac:
    """PROSAC's progressive sampling and termination (Chum and Matas, CVPR 2005).

    Sample ``t`` is drawn from the ``n(t)`` points of best quality, ``n`` growing on the
    schedule ``T'_n`` that makes the first ``T_N`` samples match, in expectation, the samples
    of RANSAC that lie in the top ``n`` (so PROSAC falls back to RANSAC when the order is
    uninformative). Termination: the smallest number of samples over the prefix sizes ``n``
    whose support is non-random, for the confidence that no better model exists among the top
    ``n`` (maximality); the pool then stops growing at the best ``n``. Prefixes shorter than
    ``min_length`` are not considered (the paper's minimum is the sample size): a locally
    optimised model that explains the few best points but misses many inliers elsewhere must
    not end the search.
    """

    def __init__(self, order: np.ndarray, s: int, confidence: float, t_total: float = 200000.0,
                 min_length: int = 100):
        n = len(order)
        self.order, self.s, self.n, self.confidence = np.asarray(order), s, n, confidence
        self.sizes = np.arange(s, n + 1)
        self.min_length = min(max(min_length, s), n)
        # T_n = T_N C(n, s) / C(N, s), in logarithms (no overflow for large N).
        self.log_binom_sizes = _log_binom_table(n, s)  # log C(n, s), n = s..N
        log_t = np.log(t_total) + self.log_binom_sizes - self.log_binom_sizes[-1]
        steps = np.maximum(np.ceil(np.diff(np.exp(log_t))), 1.0)
        self.grow = np.concatenate([[1.0], 1.0 + np.cumsum(steps)])  # T'_n, n = s..N
        self.pool = s
        self.max_pool = n
        self.drawn = 0

    def draw(self, rng, batch: int) -> np.ndarray:
        t = self.drawn + 1.0 + np.arange(batch)
        pool = self.s + np.searchsorted(self.grow, t, side="right") - 1
        pool = np.minimum(pool, max(self.max_pool, self.pool))
        # At t = T'_n the sample holds the n-th point and s - 1 of the better ones.
        newest = (self.grow[pool - self.s] == t) & (pool > self.s)
        idx = _sample_pools(rng, pool - newest, self.s)
        idx[newest, -1] = pool[newest] - 1
        self.drawn += batch
        self.pool = int(pool[-1])
        return self.order[idx]

    def needed(self, inliers: np.ndarray, chance: float) -> float:
        """Samples needed for the support ``inliers`` (bool, all points); sets ``n*``."""
        s = self.s
        # Termination lengths below min_length are not considered: a model that explains the
        # few best points but is wrong elsewhere would stop the search at once.
        first = self.min_length - s
        sizes = self.sizes[first:]
        support = np.cumsum(inliers[self.order])[self.min_length - 1:]  # I_n, n = min_length..N
        # Non-randomness: I_n above the 95% quantile of chance support (normal approximation
        # of the binomial, as in the paper), beta the probability that a point fits by chance.
        extra = sizes - s
        beta = min(max(chance, 1e-9), 1.0 - 1e-9)
        minimum = s + beta * extra + 1.645 * np.sqrt(beta * (1.0 - beta) * extra)
        # Probability that a sample from the top n is all inliers: C(I_n, s) / C(n, s).
        good = np.where(support >= s, np.exp(self.log_binom_sizes[np.maximum(support - s, 0)]
                                             - self.log_binom_sizes[first:]), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.where(good >= 1.0, 0.0,
                         np.log(1.0 - self.confidence) / np.log1p(-np.minimum(good, 1.0)))
        k = np.where(support >= minimum, np.nan_to_num(k, nan=np.inf), np.inf)
        i = int(np.argmin(k))
        if np.isfinite(k[i]):
            self.max_pool = int(sizes[i])
        return float(k[i])


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


def _chance_ratio(problem, model, thr, rng, draws: int) -> float | None:
    """How often a point fits ``model`` by chance: shuffled pairs within ``thr`` (smoothed)."""
    if not hasattr(problem, "chance_residuals"):
        return None
    r = problem.chance_residuals(model, rng, draws)
    return (float(np.sum(r < thr)) + 1.0) / (len(r) + 1.0)


def robust_estimate(problem: RobustProblem, options: RobustOptions, rng,
                    order: np.ndarray | None = None) -> RobustResult:
    """Run the robust loop on ``problem``.

    Parameters
    ----------
    problem : RobustProblem
    options : RobustOptions
    rng : numpy.random.Generator
    order : (n,) int ndarray, optional
        Point indices by decreasing quality for the ``PROSAC`` sampler (default: the problem's
        ``quality_order``).

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
    prosac = None
    if opt.sampler == PROSAC:
        if order is None:
            if not hasattr(problem, "quality_order"):
                raise ValueError("order is required by the PROSAC sampler for a problem "
                                 "without quality_order")
            order = problem.quality_order(rng)
        prosac = _Prosac(order, s, opt.confidence)
    elif opt.sampler != UNIFORM:
        raise ValueError(f"sampler must be {UNIFORM!r} or {PROSAC!r}, got {opt.sampler!r}")
    sub = None
    if opt.method != LMEDS and opt.preemptive_subset and n > 2 * opt.preemptive_subset:
        sub = rng.choice(n, opt.preemptive_subset, replace=False)
    best_model, best_loss, best_inl = None, np.inf, None
    best_polished = False
    best_chance = (None, None)  # (model, chance inlier ratio) measured for PROSAC
    best_sub_frac = 0.0
    chance_fracs: list[np.ndarray] = []
    it = 0
    needed = float(opt.max_iterations)
    # PROSAC's first samples are the most likely to be all inliers: its batches start small.
    batch = min(opt.batch_size, 16) if prosac is not None else opt.batch_size
    while it < min(needed, opt.max_iterations) or it < opt.min_iterations:
        b = int(min(batch, max(opt.max_iterations - it, 1)))
        batch = min(2 * batch, opt.batch_size)
        samples = prosac.draw(rng, b) if prosac else _sample_indices(rng, n, s, b)
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
        rk = r[k]
        lo = opt.local_optimization and opt.method != LMEDS
        # A model from a noisy all-inlier sample can score below a locally optimised one and
        # still lead to the better optimum: with PROSAC's short runs, the best model of each
        # batch is optimised when it has half the support of the best so far.
        if loss[k] < best_loss or (lo and prosac is not None and best_inl is not None
                                   and np.count_nonzero(rk < thr) >= 0.5 * best_inl.sum()):
            model = models[k]
            if opt.method == LMEDS:
                inl, _ = _lmeds_inliers(rk, s)
            else:
                inl = rk < thr
            polished = False
            if lo and inl.sum() > s:
                model, rk, loss_k, polished = _local_optimization(problem, model, rk, opt, rng,
                                                                      sub)
                inl = rk < thr
            else:
                loss_k = loss[k]
            if loss_k >= best_loss:
                continue
            best_model, best_loss, best_inl, best_polished = model, loss_k, inl, polished
            if prosac is not None:
                chance = _chance_ratio(problem, model, thr, rng, 2500)
                if chance is None:
                    chance = float(np.median(np.concatenate(chance_fracs)))
                best_chance = (model, chance)
                needed = prosac.needed(inl, chance)
            else:
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
    if opt.final_refit and not best_polished and inl.sum() > s:
        refined, _ = _irls(problem, model, inl, thr_eff)
        if refined is not None:
            r_ref = problem.residuals(refined[None])[0]
            inl_ref = r_ref < thr_eff
            if _loss(MSAC, r_ref[None], thr_eff)[0] <= _loss(
                    MSAC, problem.residuals(model[None]), thr_eff)[0] * (1 + 1e-9):
                model, inl = refined, inl_ref
    result = RobustResult(model, inl, float(best_loss), it, True)
    result.history["threshold"] = thr_eff
    if prosac is not None:
        result.history["prosac_pool"] = prosac.pool
    if opt.randomness_alpha is not None and chance_fracs:
        p0 = best_chance[1] if best_chance[0] is model and thr_eff == thr else \
            _chance_ratio(problem, model, thr_eff, rng, 20000)
        if p0 is None:
            p0 = float(np.median(np.concatenate(chance_fracs)))
        # Bonferroni: the best of the hypotheses (each locally optimised) is being tested;
        # there are no more distinct ones than distinct samples, C(n, s).
        tests = min(float(max(it, 1)), float(np.exp(_log_binom_table(n, s)[-1])))
        needed_support = _support_needed(n, s, p0, opt.randomness_alpha / tests)
        result.history["chance_inlier_ratio"] = p0
        result.history["support_needed"] = needed_support
        if needed_support > n:
            result.success = False
            result.reason = (f"{n} points leave {n - s} beyond a minimal sample of {s}: even "
                             f"if all of them fit, chance could explain it ({needed_support} "
                             "needed), so inliers cannot be told from outliers; fit all points "
                             "without a robust method")
        elif inl.sum() < needed_support:
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

    if n <= s:
        return s + 1
    p = min(max(p0, 1e-9), 1.0 - 1e-9)
    extra = bdtrik(1.0 - alpha, n - s, p)  # k with P(Binomial(n - s, p) <= k) = 1 - alpha
    return int(s + np.ceil(extra) + 1)


def _irls(problem, model, inliers, thr, iterations: int = 3, anneal: float = 1.0,
          anneal_steps: int = 0):
    """Iterated least squares: re-fit on the inliers, update them, repeat.

    With ``anneal > 1`` the first ``anneal_steps`` fits use thresholds decreasing geometrically
    from ``anneal * thr`` towards ``thr`` (LO+'s iterated least squares, Lebeda, Matas and
    Chum, BMVC 2012), so a poor starting model gathers its inliers in a few fits; then up to
    ``iterations`` fits at ``thr`` until the inlier set stops changing.

    Returns the last model (None when the first refit is degenerate) and whether the inlier
    set stopped changing (a converged refit need not be repeated).
    """
    current = model
    if anneal > 1.0 and anneal_steps > 0:
        r = problem.residuals(model[None])[0]
        for i in range(anneal_steps):
            t = thr * anneal ** (1.0 - i / anneal_steps)
            new = problem.refit(current, r < t, t, final=False)
            if new is None:
                break
            current = new
            r = problem.residuals(current[None])[0]
        inliers = r < thr
    inl = inliers
    for _ in range(iterations):
        new = problem.refit(current, inl, thr)
        if new is None:
            return (None if current is model else current), False
        current = new
        inl_new = problem.residuals(current[None])[0] < thr
        if inl_new.sum() <= problem.sample_size:
            return current, False
        if np.array_equal(inl_new, inl):
            return current, True
        inl = inl_new
    return current, False


def _local_optimization(problem, model, residuals, opt: RobustOptions, rng, sub=None):
    """LO-RANSAC (Chum et al. 2003; LO+, Lebeda et al. 2012), ``opt.lo_rounds`` rounds at
    most: non-minimal samples of the inliers, fitted in one batch, then iterated least squares
    with a decreasing threshold from the best of them. A later round starts from the result
    (a restart of the annealing reaches inliers that the first model was too far from) and
    stops the loop unless one of its samples beats the model. With a verification subset
    ``sub`` (point indices), the inner fits are ranked on it and only the best one is scored on
    all points.

    Returns the best model, its residuals, its MSAC loss and whether its refit converged.
    """
    thr = opt.threshold
    best, best_r = model, residuals
    best_loss = _loss(MSAC, best_r[None], thr)[0]
    converged = False
    for round_ in range(max(opt.lo_rounds, 1)):
        idx = np.flatnonzero(best_r < thr)
        m = min(len(idx) // 2, opt.lo_sample_factor * problem.sample_size)
        start, start_r, start_loss = best, best_r, best_loss
        if m > problem.sample_size and opt.lo_iterations > 0:
            picks = idx[_disjoint_samples(rng, len(idx), m, opt.lo_iterations)]
            fits, _ = problem.fit_samples(picks, near=best)
            if len(fits):
                # Ranked on the verification subset (if any); the best is scored on all points.
                L = _loss(MSAC, problem.residuals(fits, sub), thr)
                k = int(np.argmin(L))
                if L[k] < (start_loss if sub is None else
                           _loss(MSAC, start_r[sub][None], thr)[0]):
                    r = problem.residuals(fits[k][None])[0]
                    loss = _loss(MSAC, r[None], thr)[0]
                    if loss < start_loss:
                        start, start_r, start_loss = fits[k], r, loss
        if round_ > 0 and start is best:  # no sample beat the optimised model
            break
        # A converged refit rejected here would be rejected again by the final refit.
        ref, conv = _irls(problem, start, start_r < thr, thr, anneal=opt.lo_anneal,
                          anneal_steps=opt.lo_anneal_steps)
        if ref is not None:
            r = problem.residuals(ref[None])[0]
            loss = _loss(MSAC, r[None], thr)[0]
            if loss < start_loss:
                start, start_r, start_loss = ref, r, loss
        if not start_loss < best_loss * (1 - 1e-6) and round_ > 0:
            break
        best, best_r, best_loss, converged = start, start_r, start_loss, conv
    return best, best_r, best_loss, converged


def search_other_branch(problem: RobustProblem, model, candidates, options: RobustOptions, rng,
                        n_samples: int = 30, n_optimised: int = 5,
                        from_candidates: int | None = None):
    """Look for a better model through points that ``model`` leaves out.

    On degenerate data (most inliers on one plane) the loop settles on a model of the
    degenerate part: a sample holding a few of the other inliers scores worse, before local
    optimisation, than that optimised model, so it is never optimised, although it optimises
    to the right one. Here samples mix current inliers with ``candidates`` (points the
    problem believes are inliers the model misses), each is fitted and locally optimised
    (annealed iterated least squares, as LO+), and the best is returned when its truncated
    quadratic loss is lower than the model's. Only the ``n_optimised`` samples of lowest loss
    are optimised (one batched scoring of all of them first).

    Parameters
    ----------
    problem : RobustProblem
    model : ndarray
        The loop's model.
    candidates : (M,) int ndarray
        Indices of left-out points to draw from.
    options : RobustOptions
        Threshold and annealing of the local optimisation.
    rng : numpy.random.Generator
    n_samples, n_optimised : int
    from_candidates : int, optional
        Points of each sample drawn from ``candidates`` (default a third of the sample).

    Returns
    -------
    model, inliers : ndarray and (n,) bool ndarray, or None and None when no sample beats
    ``model``.
    """
    thr, s = options.threshold, problem.sample_size
    k = max(1, s // 3) if from_candidates is None else int(from_candidates)
    r0 = problem.residuals(np.asarray(model)[None])[0]
    inl = np.flatnonzero(r0 < thr)
    if len(candidates) < k or len(inl) < s - k:
        return None, None
    best_loss = _loss(MSAC, r0[None], thr)[0]
    picks = np.concatenate([inl[_sample_indices(rng, len(inl), s - k, n_samples)],
                            np.asarray(candidates)[_sample_indices(rng, len(candidates), k,
                                                                   n_samples)]], axis=1)
    models, _ = problem.fit_samples(picks)
    if len(models) == 0:
        return None, None
    raw = _loss(MSAC, problem.residuals(models), thr)
    best = None
    for m in models[np.argsort(raw)[:n_optimised]]:
        r = problem.residuals(m[None])[0]
        ref, _ = _irls(problem, m, r < thr, thr, anneal=options.lo_anneal,
                       anneal_steps=options.lo_anneal_steps)
        if ref is None:
            continue
        rr = problem.residuals(ref[None])[0]
        loss = _loss(MSAC, rr[None], thr)[0]
        if loss < best_loss:
            best, best_loss, best_inl = ref, loss, rr < thr
    return (best, best_inl) if best is not None else (None, None)
