"""A generic robust-estimation loop (RANSAC family), independent of the model.

The loop knows only the :class:`RobustProblem` interface (PoseLib's ``robust/ransac_impl.h``,
scikit-image's ``RansacModelProtocol``): a sample size, a batched generator of models from
samples, batched residuals, and a non-minimal refit. Hypotheses are generated and scored in
batches (stacked SVDs, one ``einsum`` for all residuals), never per sample in Python.

Sampling (:mod:`xslit.robust.sampling`): uniform (RANSAC) or progressive on a quality order
(PROSAC, Chum and Matas, CVPR 2005, with its maximality and non-randomness termination).
Scoring: RANSAC (inlier count), MSAC (truncated quadratic loss, Torr and Zisserman) and LMedS
(median of squared residuals). USAC-style extras (Raguram et al., "USAC", PAMI 2013; Chum et
al., "Locally optimized RANSAC", 2003): preemptive verification on a random subset of points,
local optimisation when the best model improves, a final iteratively re-weighted refit on all
inliers, and a non-randomness test that rejects a "best" model whose support is what chance
would give.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

import numpy as np

from .._checks import (
    check_array,
    check_mask,
    check_positive_int,
    check_probability,
    check_real,
    check_rng,
    check_threshold,
)
from .sampling import (
    ProsacSampler,
    Sampler,
    UniformSampler,
    disjoint_samples,
    log_binom,
)

__all__ = [
    "LMEDS",
    "MSAC",
    "PROSAC",
    "RANSAC",
    "UNIFORM",
    "RobustOptions",
    "RobustProblem",
    "RobustProblemBase",
    "RobustResult",
    "anneal_thresholds",
    "chance_inlier_ratio",
    "chance_verdict",
    "iterated_least_squares",
    "msac_loss",
    "robust_estimate",
    "support_needed",
]

#: Iterated least squares has converged when at most this fraction of the inliers changes.
CONVERGED_CHANGE = 1e-3

#: Locally optimised models the loop keeps besides its best (``history["elite"]`` of the
#: result): at most ``ELITE_SIZE``, whose inlier sets overlap by at most ``ELITE_OVERLAP``
#: (Jaccard). A problem whose final model differs from the loop's (a polish on a smaller
#: manifold, as for the epipolar tensor) can rank them again.
ELITE_SIZE = 4
ELITE_OVERLAP = 0.9

RANSAC = "ransac"
MSAC = "msac"
LMEDS = "lmeds"
UNIFORM = "uniform"
PROSAC = "prosac"


class RobustProblem(Protocol):
    """What the loop needs from a model.

    The first five members are required. The last five have defaults in
    :class:`RobustProblemBase`, which a problem may inherit from.
    """

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
        """Residuals ``(M, n)`` in the units of the threshold, for all points or the points
        ``subset`` (indices; the loop passes one verification subset, always the same)."""

    def refit(self, model: np.ndarray, inliers: np.ndarray, threshold: float,
              final: bool = True) -> np.ndarray | None:
        """A non-minimal fit on the points ``inliers`` (bool mask), or None when degenerate.

        ``final`` False marks an intermediate fit that will be fitted again (a step of the
        annealed least squares): the problem may skip refinements that only the last fit
        needs.
        """

    #: Why every sample can be degenerate, in words: the end of the failure message when
    #: no sample gives a model.
    degenerate_reason: str

    def chance_residuals(self, model: np.ndarray, rng: np.random.Generator,
                         draws: int) -> np.ndarray | None:
        """Residuals ``(about draws,)`` of ``model`` on wrongly paired data, or None.

        The non-randomness tests use them to estimate how often a point fits by chance;
        without them (None), the median support of the hypotheses is used.
        """

    def quality_order(self, rng: np.random.Generator) -> np.ndarray | None:
        """Point indices ``(n,)`` by decreasing quality, the PROSAC order when none is given,
        or None (PROSAC then needs an explicit order)."""

    def best_fit(self, samples: np.ndarray, near: np.ndarray, subset: np.ndarray | None,
                 threshold: float) -> tuple[np.ndarray, float] | None:
        """The model of least MSAC loss (:func:`msac_loss`) on the points ``subset`` (all for
        None) among the fits of the larger-than-minimal ``samples`` ``(B, m)`` near the model
        ``near``, and that loss; None when no sample gives a model. The default
        (:class:`RobustProblemBase`) fits them with :meth:`fit_samples` and scores them with
        :meth:`residuals` (a problem may do both in fewer, compiled calls)."""

    def iterated_least_squares(self, model: np.ndarray, inliers: np.ndarray, threshold: float,
                               iterations: int, anneal: float, anneal_steps: int
                               ) -> tuple[np.ndarray | None, bool]:
        """:func:`iterated_least_squares` of this problem on validated input: the same
        models as the loop of :meth:`refit` and :meth:`residuals` that
        :class:`RobustProblemBase` runs (a problem may run it in fewer, compiled calls)."""


class RobustProblemBase:
    """Defaults of the optional members of :class:`RobustProblem`."""

    degenerate_reason = "the data do not determine a unique model"

    def chance_residuals(self, model, rng, draws):
        """No residuals of wrong pairs: the loop uses the hypotheses' median support."""
        return None

    def quality_order(self, rng):
        """No quality order: PROSAC needs one from the caller."""
        return None

    def best_fit(self, samples, near, subset, threshold):
        """:meth:`RobustProblem.best_fit` by :meth:`RobustProblem.fit_samples` and
        :meth:`RobustProblem.residuals`."""
        fits, _ = self.fit_samples(samples, near=near)
        if not len(fits):
            return None
        ranked = _msac_loss(self.residuals(fits, subset), threshold)
        k = int(np.argmin(ranked))
        return fits[k], ranked[k]

    def iterated_least_squares(self, model, inliers, threshold, iterations=3, anneal=1.0,
                               anneal_steps=0):
        """:func:`iterated_least_squares` by :meth:`RobustProblem.refit` and
        :meth:`RobustProblem.residuals`, one call each per step."""
        return _refits(self, model, inliers, threshold, iterations, anneal, anneal_steps)


@dataclass
class RobustOptions:
    """Options of :func:`robust_estimate`, validated at construction (a ValueError names the
    option) and again by :func:`robust_estimate` (fields may be set in between)."""

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

    def __post_init__(self):
        _check_options(self)


@dataclass
class RobustResult:
    model: np.ndarray | None
    inliers: np.ndarray
    score: float
    iterations: int
    success: bool
    reason: str = ""
    history: dict = field(default_factory=dict)


def _check_problem(problem, *members: str):
    """ValueError naming ``problem`` unless it has ``members`` of :class:`RobustProblem`
    (integer sizes, callable methods)."""
    bad = []
    for m in members:
        value = getattr(problem, m, None)
        if m in ("sample_size", "n_points"):
            ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool) and \
                value >= (1 if m == "sample_size" else 0)
        else:
            ok = callable(value)
        if not ok:
            bad.append(m)
    if bad:
        raise ValueError(f"problem must implement RobustProblem ({', '.join(bad)} missing or "
                         f"invalid), got {type(problem).__name__}")
    return problem


def _check_options(opt: RobustOptions) -> None:
    """ValueError naming the first invalid option, what was expected and what came."""
    if not isinstance(opt, RobustOptions):
        raise ValueError(f"options must be RobustOptions, got {type(opt).__name__}")
    if not isinstance(opt.method, str) or opt.method not in (RANSAC, MSAC, LMEDS):
        raise ValueError(f"options.method must be one of {RANSAC!r}, {MSAC!r}, {LMEDS!r}, "
                         f"got {opt.method!r}")
    if not isinstance(opt.sampler, str) or opt.sampler not in (UNIFORM, PROSAC):
        raise ValueError(f"options.sampler must be {UNIFORM!r} or {PROSAC!r}, got {opt.sampler!r}")
    check_threshold("options.threshold", opt.threshold)
    check_probability("options.confidence", opt.confidence)
    for name, minimum in (("max_iterations", 1), ("min_iterations", 0), ("batch_size", 1),
                          ("lo_iterations", 0), ("lo_sample_factor", 1),
                          ("lo_anneal_steps", 0), ("lo_rounds", 0), ("preemptive_subset", 0)):
        check_positive_int(f"options.{name}", getattr(opt, name), minimum=minimum)
    check_real("options.lo_anneal", opt.lo_anneal, low=1.0, what="a finite number >= 1")
    for name in ("local_optimization", "final_refit"):
        if not isinstance(getattr(opt, name), (bool, np.bool_)):
            raise ValueError(f"options.{name} must be True or False, got "
                             f"{getattr(opt, name)!r}")
    if opt.randomness_alpha is not None:
        check_probability("options.randomness_alpha", opt.randomness_alpha)


def msac_loss(residuals, threshold: float) -> np.ndarray:
    r"""Truncated quadratic loss (MSAC, Torr and Zisserman 2000) of residuals ``(..., n)``:

    .. math:: C = \sum_i \min(r_i^2, \tau^2) .

    Examples
    --------
    >>> float(msac_loss(np.array([0.5, 3.0]), 1.0))
    1.25

    Parameters
    ----------
    residuals : (..., n) array_like
        Real, not NaN (``inf`` is a residual beyond any threshold).
    threshold : float
        Positive and finite.
    """
    r = check_array("residuals", residuals)
    if r.ndim < 1:
        raise ValueError(f"residuals must have shape (..., n), got {r.shape}")
    if np.isnan(r).any():
        raise ValueError(f"residuals must not be NaN, got {int(np.isnan(r).sum())} NaN entries")
    thr = check_real("threshold", threshold, low=0.0, low_open=True,
                     what="a positive finite number")
    return _msac_loss(r, thr)


def _msac_loss(residuals: np.ndarray, threshold: float) -> np.ndarray:
    """:func:`msac_loss` on validated input (the loop's kernel)."""
    return np.minimum(residuals * residuals, threshold * threshold).sum(axis=-1)


def _lmeds_rank(n: int, s: int) -> int:
    """The order statistic that least median of squares minimises: the ``h``-th smallest of
    ``n`` squared residuals, ``h = n // 2 + (s + 1) // 2`` for models fitted to ``s`` points
    (Rousseeuw and Leroy's choice, of highest breakdown point).

    A model fits its ``s`` sample points exactly; with the plain median (the ``n / 2``-th) a
    sample that happens to pass near ``n / 2 - s`` more points wins however badly it fits the
    rest: on 33 outlier-free correspondences and 15-point samples, two near points sufficed,
    and the scale it gave was a thousandth of the noise.

    Examples
    --------
    >>> _lmeds_rank(33, 15), _lmeds_rank(1000, 15)
    (24, 508)
    """
    return min(n, n // 2 + (s + 1) // 2)


def _loss(method: str, r: np.ndarray, thr: float, s: int) -> np.ndarray:
    """Per-model loss (lower is better) of residuals ``(M, n)`` of models fitted to ``s``
    points."""
    if method == RANSAC:
        return -(r < thr).sum(axis=-1).astype(float)
    if method == MSAC:
        return _msac_loss(r, thr)
    if method == LMEDS:
        h = _lmeds_rank(r.shape[-1], s)
        return np.partition(r * r, h - 1, axis=-1)[..., h - 1]
    raise ValueError(f"method must be one of {RANSAC!r}, {MSAC!r}, {LMEDS!r}, got {method!r}")


#: LMedS's inliers lie within this many robust standard deviations (Rousseeuw and Leroy).
LMEDS_CUTOFF = 2.5
#: :math:`E[z^2 \mid |z| < c]` for :math:`z \sim N(0, 1)` and :math:`c` = ``LMEDS_CUTOFF``:
#: the variance of residuals truncated at the cutoff, per unit variance (0.911).
_LMEDS_TRUNCATED_VARIANCE = (1.0 - 2.0 * LMEDS_CUTOFF * math.exp(-LMEDS_CUTOFF**2 / 2)
                             / math.sqrt(2.0 * math.pi) / math.erf(LMEDS_CUTOFF / math.sqrt(2.0)))


def _lmeds_inliers(r: np.ndarray, s: int, sigma0: float | None = None
                   ) -> tuple[np.ndarray, float]:
    r"""The inliers within :data:`LMEDS_CUTOFF` robust standard deviations of the best LMedS
    model, and that threshold.

    The scale of the order statistic LMedS minimises (:func:`_lmeds_rank`),
    :math:`\sigma_0 = |r|_{(h)} / \Phi^{-1}((1 + h / n) / 2)` (Rousseeuw's
    :math:`1.4826 \operatorname{med} |r_i|` for :math:`h = n / 2`), starts a fixed-point
    iteration on the residuals within :math:`c = 2.5` of it,

    .. math:: \sigma_{k+1}^2 = \frac{\sum_{|r_i| \le c \sigma_k} r_i^2}
              {(m_k - s)\, E[z^2 \mid |z| < c]}

    (:math:`m_k` of them; the model fits its ``s`` sample points exactly, or, refitted by
    least squares, has ``s`` parameters, hence ``m_k - s`` degrees of freedom, and the truncation at :math:`c\sigma` keeps the part
    :math:`E[z^2 \mid |z| < c] = 0.911` of the variance), whose fixed point is the noise's
    standard deviation. The median alone counts the sample's ``s`` exact residuals among
    its ``n``: with 15-point samples on 40-50 outlier-free correspondences it gave a third
    to a half of the noise, and the mask left out up to 40% of them. ``sigma0`` starts the
    iteration instead (the scale of a previous fit).
    """
    n = len(r)
    if sigma0 is None:
        h = _lmeds_rank(n, s)
        sigma = float(np.partition(np.abs(r), h - 1)[h - 1]
                      / statistics.NormalDist().inv_cdf(0.5 + 0.5 * min(h / n, 0.999)))
    else:
        sigma = sigma0
    for _ in range(50):
        inl = r <= LMEDS_CUTOFF * sigma
        m = int(inl.sum())
        if m <= s or sigma <= 0.0:
            break
        new = float(np.sqrt(np.sum(r[inl] ** 2) / ((m - s) * _LMEDS_TRUNCATED_VARIANCE)))
        done = abs(new - sigma) <= 1e-4 * sigma
        sigma = new
        if done:
            break
    thr = max(LMEDS_CUTOFF * sigma, 1e-6)  # floor for noise-free data
    return r <= thr, thr


def _residuals_of(problem, model) -> np.ndarray:
    """Residuals ``(n,)`` of one model on all points."""
    return problem.residuals(model[None])[0]


@dataclass
class _Best:
    """The best model of the search so far and what the loop knows about it."""

    model: np.ndarray | None = None
    loss: float = np.inf
    inliers: np.ndarray | None = None
    #: Its last refit converged (the final refit would only repeat it).
    polished: bool = False
    #: How often a point fits it by chance at the loop's threshold (measured for PROSAC).
    chance: float | None = None
    #: Locally optimised models with distinct inlier sets, ``(loss, model, inliers)``, best
    #: first (:data:`ELITE_SIZE` at most; the best model is the first).
    elite: list = field(default_factory=list)

    def remember(self, loss, model, inliers) -> None:
        """Keep a locally optimised model among the elite when its inliers differ from those
        of every kept model by more than :data:`ELITE_OVERLAP` (Jaccard) or it is better
        than the one it resembles."""
        for i, (other_loss, _, other) in enumerate(self.elite):
            union = np.count_nonzero(inliers | other)
            if union and np.count_nonzero(inliers & other) > ELITE_OVERLAP * union:
                if loss < other_loss:
                    self.elite[i] = (loss, model, inliers)
                    self.elite.sort(key=lambda e: e[0])
                return
        self.elite.append((loss, model, inliers))
        self.elite.sort(key=lambda e: e[0])
        del self.elite[ELITE_SIZE:]


class _Candidate(NamedTuple):
    """The model of lowest loss in a batch, with its residuals on all points."""

    model: np.ndarray
    residuals: np.ndarray
    loss: float


class _BatchScorer:
    """Scores batches of hypotheses: preemptively on a random verification subset (when there
    are enough points), then the survivors on all points. Keeps every hypothesis's support,
    the fallback estimate of how often a point fits by chance."""

    def __init__(self, problem, opt: RobustOptions, rng):
        n = problem.n_points
        self.problem, self.method, self.thr = problem, opt.method, opt.threshold
        self.subset = None
        if opt.method != LMEDS and opt.preemptive_subset and n > 2 * opt.preemptive_subset:
            self.subset = rng.choice(n, opt.preemptive_subset, replace=False)
        self.best_subset_support = 0.0
        self.supports: list[np.ndarray] = []

    def best_of(self, models) -> _Candidate | None:
        """The best of ``models`` ``(M, ...)``, or None when no model is worth scoring."""
        if len(models) == 0:
            return None
        if self.subset is not None:
            frac = np.count_nonzero(self.problem.residuals(models, self.subset) < self.thr,
                                    axis=1) / len(self.subset)
            self.supports.append(frac)
            # Compare with the best subset support including this batch's (SPRT-like early
            # bail-out): in the first batch too, only models within 80% of the best one are
            # scored on all points.
            self.best_subset_support = max(self.best_subset_support, float(frac.max()))
            keep = frac >= 0.8 * self.best_subset_support
            if not np.any(keep):
                return None
            models = models[keep]
        r = self.problem.residuals(models)
        if self.subset is None:
            self.supports.append(np.count_nonzero(r < self.thr, axis=1) / r.shape[1])
        loss = _loss(self.method, r, self.thr, self.problem.sample_size)
        k = int(np.argmin(loss))
        return _Candidate(models[k], r[k], loss[k])

    def median_support(self) -> float:
        return float(np.median(np.concatenate(self.supports)))


def _make_sampler(problem, opt: RobustOptions, rng, order) -> Sampler:
    n, s = problem.n_points, problem.sample_size
    if opt.sampler == UNIFORM:
        return UniformSampler(n, s, opt.confidence)
    if order is None:
        order = problem.quality_order(rng)
        if order is None:
            raise ValueError("order is required by the PROSAC sampler for a problem without "
                             "quality_order")
    return ProsacSampler(order, s, opt.confidence)


def _chance_ratio(problem, model, thr, rng, draws: int, scorer: _BatchScorer) -> float:
    """:func:`chance_inlier_ratio`, or the hypotheses' median support when the problem has no
    wrong pairs to offer."""
    p0 = _chance_inlier_ratio(problem, model, thr, rng, draws)
    return scorer.median_support() if p0 is None else p0


def chance_inlier_ratio(problem: RobustProblem, model, threshold: float, rng,
                        draws: int = 20000) -> float | None:
    """How often a point fits ``model`` by chance: the fraction of about ``draws`` wrongly
    paired points (``problem.chance_residuals``) within ``threshold``, smoothed by one, or
    None when the problem has no wrong pairs to offer.

    Examples
    --------
    >>> class Pairs(RobustProblemBase):
    ...     def chance_residuals(self, model, rng, draws):
    ...         return np.arange(draws) / draws
    >>> round(chance_inlier_ratio(Pairs(), None, 0.25, None, 999), 3)
    0.251
    """
    _check_problem(problem, "chance_residuals")
    threshold = check_real("threshold", threshold, low=0.0, low_open=True,
                           what="a positive finite number")
    draws = check_positive_int("draws", draws)
    return _chance_inlier_ratio(problem, model, threshold, rng, draws)


def _chance_inlier_ratio(problem, model, threshold, rng, draws):
    r = problem.chance_residuals(model, rng, draws)
    if r is None:
        return None
    return (float(np.count_nonzero(r < threshold)) + 1.0) / (len(r) + 1.0)


def _worth_optimising(best: _Best, cand: _Candidate, thr, lo: bool, sampler: Sampler,
                      s: int) -> bool:
    """A batch's best model goes on when it beats the best so far. A model from a noisy
    all-inlier sample can also score below a locally optimised one and still lead to the
    better optimum: with PROSAC's short runs, it goes on when it has half the best support
    beyond a sample's ``s`` points.

    A model fits the ``s`` points of its sample whatever they are, so only the support
    beyond them is evidence: counted in full, half the support of a best model with fewer
    than ``2 s`` inliers is reached by every sample, and on 30-60 correspondences the loop
    optimised every batch's model (about 150 per search, of which 0-4 improved the best)."""
    if cand.loss < best.loss:
        return True
    return (lo and sampler.progressive and best.inliers is not None
            and np.count_nonzero(cand.residuals < thr) - s
            >= 0.5 * (np.count_nonzero(best.inliers) - s))


def _maybe_optimise(problem, best: _Best, cand: _Candidate, opt: RobustOptions, rng, subset,
                    lo: bool) -> bool:
    """Locally optimise ``cand`` when local optimisation is on and it has more inliers than a
    sample; make it ``best`` when its loss is lower. Returns whether ``best`` changed."""
    thr, s = opt.threshold, problem.sample_size
    model, r, loss = cand
    inliers = _lmeds_inliers(r, s)[0] if opt.method == LMEDS else r < thr
    polished = False
    if lo and np.count_nonzero(inliers) > s:
        model, r, loss, polished = _local_optimization(problem, model, r, opt, rng, subset)
        inliers = r < thr
        best.remember(loss, model, inliers)
    if loss >= best.loss:
        return False
    best.model, best.loss, best.inliers, best.polished = model, loss, inliers, polished
    return True


def _final_refit(problem, best: _Best, opt: RobustOptions):
    """Iterated least squares on the best model's inliers (unless its last refit converged),
    kept when it does not raise the MSAC loss. For LMedS, the inliers and threshold come from
    the robust scale of its residuals.

    Returns the model, its inliers, the threshold used and whether the refit replaced it.
    """
    model, inliers, s = best.model, best.inliers, problem.sample_size
    if opt.method == LMEDS:
        inliers, thr = _lmeds_inliers(_residuals_of(problem, model), s)
        if not opt.final_refit or inliers.sum() <= s:
            return model, inliers, thr, False
        return (*_reweighted_least_squares(problem, model, inliers, thr), True)
    thr = opt.threshold
    if not opt.final_refit or best.polished or np.count_nonzero(inliers) <= s:
        return model, inliers, thr, False
    refined, _ = _iterated_least_squares(problem, model, inliers, thr)
    if refined is None:
        return model, inliers, thr, False
    r = _residuals_of(problem, refined)
    if _msac_loss(r, thr) <= _msac_loss(_residuals_of(problem, model), thr) * (1 + 1e-9):
        return refined, r < thr, thr, True
    return model, inliers, thr, False


#: Refits of :func:`_reweighted_least_squares` at most.
LMEDS_REFITS = 5


def _reweighted_least_squares(problem, model, inliers, threshold):
    """Rousseeuw's reweighted least squares after LMedS, repeated: the fit of the inliers,
    then the robust scale and inliers of its residuals (:func:`_lmeds_inliers` from the last
    scale), until they stop changing.

    The LMedS model fits its sample exactly; on few points its residuals elsewhere are
    those of an extrapolation from ``s`` points, and the scale they give is too large or too
    small (15-point samples of 31-34 outlier-free correspondences kept 16-19 of them, which
    the test against chance then refused). The fit of the inliers has residuals of many
    points, whose scale is the noise's.

    Returns the model, its inliers and their threshold.
    """
    s = problem.sample_size
    for _ in range(LMEDS_REFITS):
        refined, _ = _iterated_least_squares(problem, model, inliers, threshold)
        if refined is None:
            break
        new, thr = _lmeds_inliers(_residuals_of(problem, refined), s,
                                  threshold / LMEDS_CUTOFF)
        if new.sum() <= s:
            break
        model, done = refined, np.array_equal(new, inliers)
        inliers, threshold = new, thr
        if done:
            break
    return model, inliers, threshold


def _non_randomness_test(problem, result: RobustResult, chance: float | None, alpha: float,
                         rng, scorer: _BatchScorer) -> None:
    """Fail ``result`` when its support is what chance gives (``chance``: the measured chance
    inlier ratio of its model, or None to measure it here)."""
    thr = result.history["threshold"]
    p0 = chance if chance is not None else _chance_ratio(problem, result.model, thr, rng,
                                                         20000, scorer)
    needed, reason = _chance_verdict(problem, result.inliers, p0,
                                     result.history.get("hypotheses", result.iterations), alpha)
    result.history["chance_inlier_ratio"] = p0
    result.history["support_needed"] = needed
    if reason:
        result.success, result.reason = False, reason


def chance_verdict(problem: RobustProblem, inliers, chance: float, hypotheses: int,
                   alpha: float) -> tuple[int, str]:
    """The non-randomness test of a support: the support needed, and why it fails ("" when
    it passes).

    Parameters
    ----------
    problem : RobustProblem
    inliers : (n,) bool ndarray
        The support of the model tested.
    chance : float
        Probability that a point fits the model by chance (e.g. from wrongly paired points).
    hypotheses : int
        Hypotheses the best was chosen from (Bonferroni; at most the ``C(n, s)`` distinct
        samples).
    alpha : float
        Significance.

    Returns
    -------
    needed : int
    reason : str
    """
    _check_problem(problem, "n_points", "sample_size")
    if inliers is None:
        raise ValueError(f"inliers must be an ({problem.n_points},) mask, got None")
    inliers = check_mask("inliers", inliers, problem.n_points)
    check_probability("chance", chance, open_low=False, open_high=False)
    hypotheses = check_positive_int("hypotheses", hypotheses, minimum=0)
    alpha = check_probability("alpha", alpha)
    return _chance_verdict(problem, inliers, chance, hypotheses, alpha)


def _chance_verdict(problem, inliers, chance, hypotheses, alpha):
    n, s = problem.n_points, problem.sample_size
    tests = min(float(max(hypotheses, 1)), float(np.exp(log_binom(n, s))))
    needed = support_needed(n, s, chance, alpha / tests)
    if needed > n:
        return needed, (f"{n} points leave {n - s} beyond a minimal sample of {s}: even if all "
                        f"of them fit, chance could explain it ({needed} needed), so inliers "
                        "cannot be told from outliers; fit all points without a robust method")
    if np.count_nonzero(inliers) < needed:
        return needed, (f"best model has {int(np.count_nonzero(inliers))} inliers of {n}, no "
                        f"more than chance gives ({needed} needed; too many outliers or no "
                        "consistent model)")
    return needed, ""


def robust_estimate(problem: RobustProblem, options: RobustOptions, rng,
                    order: np.ndarray | None = None) -> RobustResult:
    """Run the robust loop on ``problem``.

    Batches of samples are drawn (:mod:`xslit.robust.sampling`) and fitted; the best model of
    each batch is scored, locally optimised when it is worth it, and kept when it lowers the
    loss, which updates the number of samples needed. The best model is then refitted on its
    inliers and its support tested against chance.

    Parameters
    ----------
    problem : RobustProblem
    options : RobustOptions
    rng : None, int or numpy.random.Generator
    order : (n,) int array_like, optional
        Point indices by decreasing quality for the ``PROSAC`` sampler (default: the problem's
        ``quality_order``).

    Returns
    -------
    RobustResult
        ``model`` None and ``success`` False, with a ``reason``, when no model is supported.
        ``iterations`` counts the samples drawn; ``history`` holds the final ``threshold``,
        the ``hypotheses`` tested (models fitted, at least the samples), the ``elite``
        models, and the non-randomness test's ``chance_inlier_ratio`` and
        ``support_needed``.

    Raises
    ------
    ValueError
        On invalid options or order (naming it).
    """
    _check_problem(problem, "sample_size", "n_points")
    _check_options(options)
    rng = check_rng(rng)
    n, s = problem.n_points, problem.sample_size
    opt, thr = options, options.threshold
    if order is not None:
        order = np.asarray(order)
        if order.shape != (n,) or order.dtype.kind not in "iu":
            raise ValueError(f"order must be ({n},) integer indices, got shape {order.shape} "
                             f"and dtype {order.dtype}")
    if n < s:
        return RobustResult(None, np.zeros(n, bool), np.inf, 0, False,
                            f"{n} points, at least {s} are needed")
    sampler = _make_sampler(problem, opt, rng, order)
    _check_problem(problem, "fit_samples", "residuals", "refit")
    scorer = _BatchScorer(problem, opt, rng)
    lo = opt.local_optimization and opt.method != LMEDS
    best = _Best()
    iterations, hypotheses, needed = 0, 0, float(opt.max_iterations)
    batch = sampler.first_batch(opt.batch_size)
    while iterations < min(needed, opt.max_iterations) or iterations < opt.min_iterations:
        size = int(min(batch, max(opt.max_iterations - iterations, 1)))
        batch = min(2 * batch, opt.batch_size)
        models, _ = problem.fit_samples(sampler.draw(rng, size))
        iterations += size
        hypotheses += len(models)
        cand = scorer.best_of(models)
        if cand is None or not _worth_optimising(best, cand, thr, lo, sampler, s):
            continue
        if _maybe_optimise(problem, best, cand, opt, rng, scorer.subset, lo):
            if sampler.progressive:
                best.chance = _chance_ratio(problem, best.model, thr, rng, 2500, scorer)
            needed = sampler.needed(best.inliers, best.chance)
    if best.model is None:
        return RobustResult(None, np.zeros(n, bool), np.inf, iterations, False,
                            f"every sample was degenerate: {problem.degenerate_reason}")
    model, inliers, thr_final, refitted = _final_refit(problem, best, opt)
    result = RobustResult(model, inliers, float(best.loss), iterations, True)
    result.history["threshold"] = thr_final
    # The models the best was chosen from: a minimal solver can give several per sample (the
    # 13-point solver about 11), and each is a test of the support against chance.
    result.history["hypotheses"] = max(iterations, hypotheses)
    result.history["elite"] = [(m, inl) for _, m, inl in best.elite
                               if not np.array_equal(inl, best.inliers)]
    if sampler.progressive:
        result.history["prosac_pool"] = sampler.pool
    if opt.randomness_alpha is not None and scorer.supports:
        # The chance ratio measured during the search is the final model's when the final
        # refit kept it at the same threshold.
        known = best.chance if not refitted and thr_final == thr else None
        _non_randomness_test(problem, result, known, opt.randomness_alpha, rng, scorer)
    return result


def support_needed(n: int, s: int, p0: float, alpha: float) -> int:
    """Smallest support that a random model reaches with probability below ``alpha``: the
    non-randomness test of the loop (the support must exceed a binomial quantile).

    A model fitted to ``s`` points explains them exactly; each of the other ``n - s`` points
    is an inlier by chance with probability ``p0`` (estimated from the hypotheses).

    Parameters
    ----------
    n, s : int
        Points, and points per sample.
    p0 : float
        Probability that a point fits a wrong model by chance.
    alpha : float
        Significance, already divided by the number of hypotheses tested.

    Returns
    -------
    int
        ``n + 1`` or more when even all points would not be significant.

    Examples
    --------
    >>> support_needed(1000, 15, 0.05, 1e-6) > 15 + 0.05 * 985
    True
    """
    from scipy.special import bdtrik

    n = check_positive_int("n", n, minimum=0)
    s = check_positive_int("s", s)
    p0 = check_probability("p0", p0, open_low=False, open_high=False)
    alpha = check_probability("alpha", alpha)
    if n <= s:
        return s + 1
    p = min(max(p0, 1e-9), 1.0 - 1e-9)
    extra = bdtrik(1.0 - alpha, n - s, p)  # k with P(Binomial(n - s, p) <= k) = 1 - alpha
    return int(s + np.ceil(extra) + 1)


def iterated_least_squares(problem: RobustProblem, model, inliers, threshold: float,
                           iterations: int = 3, anneal: float = 1.0, anneal_steps: int = 0):
    """Iterated least squares: re-fit on the inliers, update them, repeat.

    With ``anneal > 1`` the first ``anneal_steps`` fits use thresholds decreasing geometrically
    from ``anneal * threshold`` towards ``threshold`` (LO+'s iterated least squares, Lebeda,
    Matas and Chum, BMVC 2012), so a poor starting model gathers its inliers in a few fits;
    then up to ``iterations`` fits at ``threshold`` until the inlier set stops changing
    (at most :data:`CONVERGED_CHANGE` of it changes). The problem runs the steps
    (:meth:`RobustProblem.iterated_least_squares`: by default one :meth:`RobustProblem.refit`
    and one :meth:`RobustProblem.residuals` each).

    Parameters
    ----------
    problem : RobustProblem
    model : ndarray
        Starting model.
    inliers : (n,) bool ndarray
        Its inliers at ``threshold``.
    threshold : float
    iterations, anneal_steps : int
    anneal : float

    Returns
    -------
    model : ndarray or None
        The last model (None when the first refit is degenerate).
    converged : bool
        Whether the inlier set stopped changing, up to :data:`CONVERGED_CHANGE` of it (a
        converged refit need not be repeated).
    """
    _check_problem(problem, "n_points", "residuals", "refit")
    if inliers is None:
        raise ValueError(f"inliers must be an ({problem.n_points},) mask, got None")
    inliers = check_mask("inliers", inliers, problem.n_points)
    threshold = check_real("threshold", threshold, low=0.0, low_open=True,
                           what="a positive finite number")
    iterations = check_positive_int("iterations", iterations, minimum=0)
    anneal = check_real("anneal", anneal, low=1.0, what="a finite number >= 1")
    anneal_steps = check_positive_int("anneal_steps", anneal_steps, minimum=0)
    return _iterated_least_squares(problem, model, inliers, threshold, iterations, anneal,
                                   anneal_steps)


def anneal_thresholds(threshold: float, anneal: float, steps: int) -> list[float]:
    """The thresholds of the annealing fits of :func:`iterated_least_squares`: ``steps`` of
    them, decreasing geometrically from ``anneal * threshold`` towards ``threshold`` (none
    when ``anneal`` is 1 or ``steps`` 0).

    Examples
    --------
    >>> anneal_thresholds(1.0, 4.0, 2)
    [4.0, 2.0]
    """
    threshold = check_real("threshold", threshold, low=0.0, low_open=True,
                           what="a positive finite number")
    anneal = check_real("anneal", anneal, low=1.0, what="a finite number >= 1")
    steps = check_positive_int("steps", steps, minimum=0)
    return _anneal_thresholds(threshold, anneal, steps)


def _anneal_thresholds(threshold, anneal, steps):
    """:func:`anneal_thresholds` on validated input."""
    if not (anneal > 1.0 and steps > 0):
        return []
    return [threshold * anneal ** (1.0 - i / steps) for i in range(steps)]


def _iterated_least_squares(problem, model, inliers, threshold, iterations=3, anneal=1.0,
                            anneal_steps=0):
    """:func:`iterated_least_squares` on validated input (the loop's kernel): the
    problem's own (:meth:`RobustProblem.iterated_least_squares`)."""
    return problem.iterated_least_squares(model, inliers, threshold, iterations, anneal,
                                          anneal_steps)


def _refits(problem, model, inliers, threshold, iterations, anneal, anneal_steps):
    """:func:`iterated_least_squares` by the problem's refits and residuals (the default
    of :meth:`RobustProblemBase.iterated_least_squares`)."""
    thr = threshold
    current, fitted = model, False
    thresholds = _anneal_thresholds(thr, anneal, anneal_steps)
    if thresholds:
        r = _residuals_of(problem, model)
        for t in thresholds:
            new = problem.refit(current, r < t, t, final=False)
            if new is None:
                break
            current, fitted = new, True
            r = _residuals_of(problem, current)
        inliers = r < thr
    inl = inliers
    for _ in range(iterations):
        new = problem.refit(current, inl, thr)
        if new is None:
            return (current if fitted else None), False
        current, fitted = new, True
        inl_new = _residuals_of(problem, current) < thr
        if np.count_nonzero(inl_new) <= problem.sample_size:
            return current, False
        # Converged when at most a thousandth of the inliers change: at thousands of
        # inliers, points near the threshold flip between fits that differ at the noise
        # level, and another fit costs a full pass without moving the model measurably.
        if np.count_nonzero(inl_new != inl) <= CONVERGED_CHANGE * np.count_nonzero(inl):
            return current, True
        inl = inl_new
    return current, False


def _best_inner_fit(problem, model, residuals, loss, opt: RobustOptions, rng, subset):
    """LO's inner samples: non-minimal samples of the inliers of ``model``, fitted in one
    batch and ranked on the verification ``subset`` (all points without one); the best is
    scored on all points. Returns it with its residuals and MSAC loss when it beats ``model``,
    else None."""
    thr, s = opt.threshold, problem.sample_size
    idx = np.flatnonzero(residuals < thr)
    m = min(len(idx) // 2, opt.lo_sample_factor * s)
    if m <= s or opt.lo_iterations <= 0:
        return None
    picks = idx[disjoint_samples(rng, len(idx), m, opt.lo_iterations)]
    found = problem.best_fit(picks, model, subset, thr)
    if found is None:
        return None
    fit, ranked = found
    if not ranked < (loss if subset is None else _msac_loss(residuals[subset], thr)):
        return None
    r = _residuals_of(problem, fit)
    fit_loss = _msac_loss(r, thr)
    return (fit, r, fit_loss) if fit_loss < loss else None


def _local_optimization(problem, model, residuals, opt: RobustOptions, rng, subset=None):
    """LO-RANSAC (Chum et al. 2003; LO+, Lebeda et al. 2012), ``opt.lo_rounds`` rounds at
    most: the best of non-minimal samples of the inliers (:func:`_best_inner_fit`), then
    iterated least squares with a decreasing threshold from it. A later round starts from the
    result (a restart of the annealing reaches inliers that the first model was too far from)
    and stops the loop unless one of its samples beats the model.

    Returns the best model, its residuals, its MSAC loss and whether its refit converged.
    """
    thr = opt.threshold
    best, best_r = model, residuals
    best_loss = _msac_loss(best_r, thr)
    converged = False
    for round_ in range(max(opt.lo_rounds, 1)):
        start, start_r, start_loss = best, best_r, best_loss
        inner = _best_inner_fit(problem, best, best_r, best_loss, opt, rng, subset)
        if inner is not None:
            start, start_r, start_loss = inner
        elif round_ > 0:  # no sample beat the optimised model
            break
        # A converged refit rejected here would be rejected again by the final refit.
        ref, conv = _iterated_least_squares(problem, start, start_r < thr, thr,
                                           anneal=opt.lo_anneal,
                                           anneal_steps=opt.lo_anneal_steps)
        if ref is not None:
            r = _residuals_of(problem, ref)
            loss = _msac_loss(r, thr)
            if loss < start_loss:
                start, start_r, start_loss = ref, r, loss
        if not start_loss < best_loss * (1 - 1e-6) and round_ > 0:
            break
        best, best_r, best_loss, converged = start, start_r, start_loss, conv
    return best, best_r, best_loss, converged
