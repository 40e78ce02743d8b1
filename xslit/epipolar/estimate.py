"""Robust estimation of the epipolar tensor from correspondences (the model side of the loop)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import check_positive_int, check_probability, check_threshold
from .._scratch import Scratch
from ..robust import (
    LMEDS,
    MSAC,
    PROSAC,
    RANSAC,
    UNIFORM,
    RobustOptions,
    RobustProblemBase,
    anneal_thresholds,
    chance_inlier_ratio,
    chance_verdict,
    density_order,
    iterated_least_squares,
    msac_loss,
    robust_estimate,
)
from ..robust.loop import CONVERGED_CHANGE
from .family import search_family
from .linear import (
    MIN_LINEAR_POINTS,
    best_sample_fit,
    conditioning_from_eigenvalues,
    denormalize_with,
    design_rows,
    gram_pass,
    iterated_taubin_fits,
    minimal_null_vectors,
    normalize_axes,
    pulled_rows,
    sample_inverse_iteration,
    taubin_basis,
    taubin_basis_from_design,
    taubin_fit,
    taubin_fit_from_design,
    taubin_matrices,
    taubin_matrices_from_design,
    weighted_leverage,
)
from .tensor import SampsonRows, kron_modes
from .variety import VarietyFit, refine_on_variety

__all__ = ["EpipolarEstimate", "EpipolarProblem", "estimate_epipolar_tensor", "robust_options"]

#: Distances within this many units of rounding of the largest pixel coordinate count as
#: zero (the threshold is never below it).
ROUNDING_DISTANCE = 64.0
#: ``s_15 / s_1`` of the normalised design matrix below which F is not determined.
CONDITIONING_TOL = 1e-6

#: Taubin's generalised eigenvalues (:func:`~xslit.epipolar.linear.solve_taubin`: mean squared
#: Sampson distances of the eigenvectors, to first order) that fit at the noise level. When
#: the fourth is within ``FAMILY_RATIO`` times the first, or the fifth within
#: :func:`family_bound` times, the correspondences fit a linear space of tensors of projective
#: dimension 3 or more, which meets the 13-dimensional variety of epipolar tensors (in a
#: 15-dimensional space) in a family: the tensor is not determined. All points on one plane
#: or line, identical cameras and pushbroom strips on one flight line leave five such
#: directions; well-posed scenes leave two or three (fourth ratio 6 or more).
FAMILY_RATIO = 4.0


def family_bound(n: int) -> float:
    """The largest ratio of Taubin's fifth eigenvalue to the first that still counts as a
    family on ``n`` inliers: ``1 + 80 / sqrt(n)``, kept within [3, 16].

    On a degenerate configuration the five directions fit the same noise, and their ratios
    approach a constant as ``n`` grows: 1 on one plane, about 2 on one line or with identical
    cameras (1.1-1.2 and 2.0-2.2 at 2,000 correspondences). On few correspondences they
    scatter: below 5 on 100 coplanar, collinear or identical-camera correspondences, up to
    16 and beyond on 30-45 (the bound then misses some, as the fixed bound of 16 did). Scenes
    that determine the tensor but are nearly planar (80% of the points on one plane, slits
    close together) reach only 9-16 on 1,000-2,000 correspondences, and a fixed bound of 16
    called them degenerate.
    """
    return min(max(1.0 + 80.0 / math.sqrt(max(n, 1)), 3.0), 16.0)


#: The second polishes of :func:`_second_polishes`: the annealing from the polished tensor
#: (Taubin's fits at thresholds from ``FINAL_ANNEAL`` times the inlier threshold down, in
#: ``FINAL_ANNEAL_STEPS`` fits), and the inliers whose leverage exceeds ``TRIM_LEVERAGE``
#: times the average left out.
FINAL_ANNEAL = 2.0
FINAL_ANNEAL_STEPS = 3
TRIM_LEVERAGE = 3.0
#: The annealing's factors of the threshold, from ``FINAL_ANNEAL`` down to 1.
_FINAL_ANNEAL_FACTORS = (FINAL_ANNEAL ** np.linspace(1.0, 0.0, FINAL_ANNEAL_STEPS + 1)).tolist()

#: The polish on the variety reads its starts off the linear tensor and polishes the one that
#: fits a few inliers best (:func:`~xslit.epipolar.variety.refine_on_variety`). When its
#: inliers fall below ``RETRY_SUPPORT`` times the linear tensor's, that start was in another
#: basin, and ``RETRY_STARTS`` distinct starts are polished (on a sweep scene of 300
#: correspondences the best-ranked start kept 20 of 261 inliers; one of the best eight, 259).
RETRY_SUPPORT = 0.9
RETRY_STARTS = 8

#: The trimmed start of :func:`_second_polishes` is not polished when its inliers differ from
#: the polished tensor's in at most this fraction of them: it is there for dozens of inliers
#: held off by a few outliers, and a few points at the threshold move the optimum by far less
#: than its noise (the rule of the polish's own re-selection,
#: :func:`~xslit.epipolar.variety.refine_on_variety`), while its cold polish costs about a
#: sixth of the whole estimate at 10,000 correspondences. On 296 sweep scenes (60 to 2,000
#: correspondences) it changed two answers, by 1.5e-4 and 2.6e-5 of their truncated loss.
SAME_INLIERS = 1e-3

#: When the polished tensor leaves out at most this fraction of the correspondences, Taubin's
#: fit of all of them is polished too (and its inliers re-selected): the few left out can be
#: inliers that no polish from the robust loop's basin reaches. On sweep scenes without
#: outliers (35-55 correspondences) the mask missed 2-6 of them with a truncated loss 1.2-1.7
#: times that of maximum likelihood from the truth, which the fit of all of them reaches; with
#: a few outliers among them the polish's re-selection drops those.
CLEAN_OUTSIDE = 0.15
#: Taubin's two least eigenvalues within this factor span a pencil of linear tensors that
#: fit the inliers equally well: which member lies on the variety of epipolar tensors, the
#: data decide only through the variety, and the polish started from the least eigenvector
#: alone can stop in another basin.
PENCIL_RATIO = 4.0
#: Members of such a pencil read off as starts (evenly spaced angles), and the best of their
#: starts polished.
PENCIL_MEMBERS = 24
PENCIL_STARTS = 3


#: The refits of :meth:`EpipolarProblem.refit` in the robust loop (local optimisation, its
#: final refit) and the family search fit at most this many inliers, evenly thinned: a fit's
#: noise falls as the square root of its rows, and beyond 2,000 it is already well below the
#: spread of the models the refits rank (the 300-scene sweep, up to 2,000 correspondences, is
#: fitted whole), while every row costs three passes of the leverage guard (at 10,000
#: correspondences, 7,000 inliers, the refits were a quarter of the estimate).
REFIT_ROWS = 2000

#: Taubin's fits an :class:`EpipolarProblem` remembers by their rows (:meth:`_taubin`).
_REMEMBERED_FITS = 16


class EpipolarProblem(RobustProblemBase):
    """:class:`xslit.robust.RobustProblem` for the epipolar tensor (15-point linear samples).

    The design matrix of all correspondences is built once, on pixels normalised per axis over
    all of them (median and trimmed deviation: a few wild pixels do not collapse the others;
    every sample and refit takes its rows); residuals come from
    :class:`~xslit.epipolar.tensor.SampsonRows`. The models of the loop are tensors of the
    pixels *centred* on the medians (``points1``, ``points2`` here): Sampson distances are
    invariant to the shift, and evaluating them near the origin keeps their precision when
    the pixel coordinates are large.

    Attributes
    ----------
    design : (N, 16) ndarray
        Design matrix of the normalised pixels (read-only).
    frame : (4, 2, 2) ndarray
        The per-axis normalisations ``[x_n, 1] = frame[k] @ [x, 1]`` of ``x, y, x', y'``.
    normalized : (4, N) ndarray
        The normalised coordinates ``x_n`` (the design matrix's, and Taubin's fits').
    model_from_normalized, normalized_from_model : (16, 16) ndarray
        ``f @ model_from_normalized`` is the model (tensor of the centred pixels) of a tensor
        ``f`` of the normalised pixels, and ``normalized_from_model`` the inverse map.
    sampson_rows : xslit.epipolar.tensor.SampsonRows
        The centred correspondences, whose Sampson distances are the residuals.
    """

    sample_size = MIN_LINEAR_POINTS
    degenerate_reason = ("the data do not determine a unique model (for the epipolar tensor: "
                         "coplanar or collinear scene points, or identical cameras)")

    def __init__(self, points1: np.ndarray, points2: np.ndarray):
        Ts, normed = normalize_axes(points1, points2, robust=True)
        s = np.array([T[0, 0] for T in Ts])
        self.normalized = np.array(normed)  # Taubin's fits
        self.frame = np.array(Ts)  # the polish on the variety works in the same frame
        centre = np.array([-T[0, 1] / T[0, 0] for T in Ts])
        self.points1 = points1 - centre[:2]
        self.points2 = points2 - centre[2:]
        self.n_points = len(points1)
        self.design = design_rows(*normed)
        self.design.flags.writeable = False
        # Per axis: pixels to centred ones (shift), centred pixels to normalised ones (scale),
        # and their inverses (written out: the numbers LAPACK's inverse gives, without its
        # call); the four tensor maps in one batched product.
        maps = np.zeros((4, 4, 2, 2))  # (shift, shift^-1, scale, scale^-1), axis
        maps[:2, :, 0, 0] = maps[:, :, 1, 1] = 1.0
        maps[0, :, 0, 1], maps[1, :, 0, 1] = -centre, centre
        maps[2, :, 0, 0], maps[3, :, 0, 0] = s, 1.0 / s
        (self._to_pixels, self._from_pixels, self.model_from_normalized,
         self.normalized_from_model) = kron_modes(*np.swapaxes(maps, 0, 1))
        self.sampson_rows = SampsonRows(self.points1, self.points2)
        self._subset = None
        self._rows_subset = None
        self._scratch = Scratch()
        self._last = (None, None, None, None)  # (model's bytes, distances, norms, shape)
        self._subset_given = None  # the last verification subset passed to residuals
        # Taubin's fits remembered by their rows (:meth:`_taubin`): the rows' bytes give a
        # slot of the arrays (rows, their number, the fit, whether it succeeded) that the
        # compiled refits search too; the slots are reused oldest first.
        self._fits = {}
        self._fit_keys = [None] * _REMEMBERED_FITS
        self._memory = (np.empty((_REMEMBERED_FITS, self.n_points), np.intp),
                        np.full(_REMEMBERED_FITS, -1, np.intp), np.empty((_REMEMBERED_FITS, 16)),
                        np.zeros(_REMEMBERED_FITS, bool))
        self._next_slot = 0

    def pixels_from_model(self, model) -> np.ndarray:
        """The tensor of the original pixels, ``(2, 2, 2, 2)`` of unit norm, of a model of the
        centred pixels."""
        f = np.asarray(model, dtype=float).reshape(16) @ self._to_pixels
        return (f / math.sqrt(f.dot(f))).reshape(2, 2, 2, 2)  # np.linalg.norm's arithmetic

    def model_from_pixels(self, F) -> np.ndarray:
        """The model (tensor of the centred pixels) of a tensor ``F`` of the original pixels."""
        f = np.asarray(F, dtype=float).reshape(16) @ self._from_pixels
        return (f / math.sqrt(f.dot(f))).reshape(2, 2, 2, 2)  # np.linalg.norm's arithmetic

    def fit_samples(self, samples, near=None):
        """Minimal samples: null vectors by QR (:func:`~xslit.epipolar.linear.minimal_null_vectors`).
        Larger samples (local optimisation's, refitted later): the least eigenvector of each
        Gram matrix, by inverse iteration from ``near`` when given (all of them are fits of
        its inliers; degenerate samples are then not detected, the refits decide).
        """
        if samples.shape[1] == MIN_LINEAR_POINTS:
            f, ok = minimal_null_vectors(self.design, CONDITIONING_TOL, samples)
        elif near is not None:
            start = np.asarray(near, dtype=float).reshape(16) @ self.normalized_from_model
            f = sample_inverse_iteration(self.design, samples, start)
            ok = np.ones(len(f), bool)
        else:  # the first pass of the Gram eigendecomposition (refined by the refits)
            V, w, _ = gram_pass(self.design[samples])
            f, ok = V[..., 0], conditioning_from_eigenvalues(w) > CONDITIONING_TOL
        return denormalize_with(f[ok], self.model_from_normalized), np.flatnonzero(ok)

    def residuals(self, models, subset=None):
        if subset is None and len(models) == 1:
            return self._single(models[0])[0][None]
        return self._evaluator(subset).distances(models)

    def best_fit(self, samples, near, subset, threshold):
        """:meth:`xslit.robust.RobustProblemBase.best_fit` of :meth:`fit_samples` and
        :meth:`residuals`; with numba, for samples larger than a minimal one, in one compiled
        call (:func:`~xslit.epipolar.linear.best_sample_fit`: the same fit and loss bit for
        bit)."""
        samples = np.asarray(samples)
        found = None
        if samples.shape[1] not in (MIN_LINEAR_POINTS, self.sample_size):
            found = best_sample_fit(
                self.design, self._evaluator(subset), samples,
                np.asarray(near, dtype=float).reshape(16) @ self.normalized_from_model,
                self.model_from_normalized, threshold)
        if found is None:
            return super().best_fit(samples, near, subset, threshold)
        return found

    def _evaluator(self, subset):
        """The :class:`~xslit.epipolar.tensor.SampsonRows` of the correspondences ``subset``
        (indices; all of them for None)."""
        if subset is None:
            return self.sampson_rows
        # The loop passes one verification subset: its evaluator is built once, and rebuilt
        # only for other indices (the same array object is the same indices).
        if subset is not self._subset_given and (self._subset is None
                                                 or not np.array_equal(self._subset, subset)):
            self._subset = np.array(subset)
            self._rows_subset = self.sampson_rows.subset(self._subset)
        self._subset_given = subset
        return self._rows_subset

    def _single(self, model):
        """Distances and gradient norms ``(N,)`` of one model on all points (read-only; the
        last model is cached: the loop scores each refit, and the next refit weights its rows
        by the gradient norms)."""
        # The model's bytes identify it (the loop asks about 20 times per estimate; equal
        # values with other bytes, 0.0 and -0.0, are only evaluated again).
        key = model.tobytes()
        if key != self._last[0] or model.shape != self._last[3]:
            d, gn = self.sampson_rows.distances(model[None], norms=True)
            d.flags.writeable = gn.flags.writeable = False
            self._last = (key, d[0], gn[0], model.shape)
        return self._last[1], self._last[2]

    def chance_residuals(self, model, rng, draws):
        """Residuals of about ``draws`` wrong pairs: every pairing of ``m`` random points of
        image 1 with ``m`` other random points of image 2 (how well chance pairs fit)."""
        m = min(int(np.ceil(np.sqrt(draws))), self.n_points // 2)
        perm = rng.permutation(self.n_points)[:2 * m]
        return self.sampson_rows.pair_distances(model, perm[:m], perm[m:]).ravel()

    def quality_order(self, rng):
        """PROSAC order: density of the correspondences in the joint image space."""
        return density_order(np.hstack([self.points1, self.points2]), rng)

    def refit(self, model, inliers, threshold, final=True, *, thin=True):
        """Taubin's fit of the inliers (:func:`~xslit.epipolar.linear.taubin_fit`), without the
        rows that only fit because they pull the fit.

        Taubin's fit is nearly unbiased where least squares is not: on a sweep scene with
        1,600 inliers, Sampson-weighted least squares iterated from the true tensor drifted
        to a truncated quadratic loss 25% above the truth's (and the loop compared such
        drifted models), Taubin's fit of the same inliers lands within 0.1% of it.

        The linear tensor has two degrees of freedom more than the variety of epipolar tensors,
        and in weakly observed directions a least-squares fit can bend to absorb a gross
        outlier, which then looks like an inlier (and costs real inliers elsewhere). Such a
        row has a large leverage ``h`` on the Sampson-weighted Gram matrix (first-order
        perturbation of its least eigenvector when the row is deleted:
        ``h_i = sum_k (d_i . v_k)^2 / (s_k^2 - s_0^2)``); its deleted residual
        ``d_i / (1 - h_i)`` exceeds twice the threshold, and it is left out of the fit.
        Inliers have ``h`` about ``15 / n`` and are never left out. Several such outliers mask
        each other (each one's deleted residual is small while the others hold the fit), so
        the rows of high leverage are also deleted together and tested against that fit.

        An intermediate fit (``final`` False: a step of the annealing, whose inliers at a
        larger threshold are fitted again) is Taubin's fit alone, without the leverage guard.

        With ``thin``, more than :data:`REFIT_ROWS` inliers are thinned to every ``k``-th of
        them (at most that many): the loop's refits select inliers and rank its models, and
        the polish on the variety fits all of them. The starts of the second polishes are
        fitted whole (their inliers are compared with the polished tensor's).
        """
        idx = np.flatnonzero(inliers)
        if thin and len(idx) > REFIT_ROWS:
            idx = idx[::-(-len(idx) // REFIT_ROWS)]
        n = len(idx)
        if n < self.sample_size:
            return None
        if not final:
            return self._taubin(idx)
        lev = self._leverage(model, idx)
        if lev is None:
            return self._taubin(idx)
        h, V, V1, w1, D = lev
        d = self._single(denormalize_with(V[:, 0], self.model_from_normalized))[0][idx]
        pulled = pulled_rows(d, h, D, V1, w1, self.model_from_normalized, threshold,
                             self.sample_size)
        return self._taubin(idx[~pulled])

    def iterated_least_squares(self, model, inliers, threshold, iterations=3, anneal=1.0,
                               anneal_steps=0):
        """:meth:`xslit.robust.RobustProblemBase.iterated_least_squares` of :meth:`refit` and
        :meth:`residuals`; with numba in one compiled call
        (:func:`~xslit.epipolar.linear.iterated_taubin_fits`, the same tensors bit for bit),
        whose Taubin fits are remembered as :meth:`refit`'s are and whose last distances are
        those :meth:`residuals` gives next."""
        compiled = self._compiled_fits(model, inliers, threshold,
                                       anneal_thresholds(threshold, anneal, anneal_steps),
                                       iterations, REFIT_ROWS)
        if compiled is None:
            return super().iterated_least_squares(model, inliers, threshold, iterations,
                                                  anneal, anneal_steps)
        return self._recorded(*compiled)

    def _compiled_fits(self, model, inliers, threshold, thresholds, iterations, max_rows):
        """:func:`~xslit.epipolar.linear.iterated_taubin_fits` of this problem's rows, frame
        and remembered fits (None without numba)."""
        return iterated_taubin_fits(
            self.design, self.sampson_rows, model, inliers, threshold, thresholds, iterations,
            self.sample_size, max_rows, CONVERGED_CHANGE, self.frame[:, 0, 0],
            self.model_from_normalized, CONDITIONING_TOL, self._memory)

    def _recorded(self, fitted, converged, d, gn, fits):
        """The tensor and convergence of :func:`~xslit.epipolar.linear.iterated_taubin_fits`,
        its ``fits`` remembered and its distances ``d`` and norms ``gn`` those of the next
        residuals of ``fitted``."""
        for rows, fit in fits:
            self._remember(rows, fit)
        if fitted is not None:
            d.flags.writeable = gn.flags.writeable = False
            self._last = (fitted.tobytes(), d, gn, fitted.shape)
        return fitted, converged

    def annealed_fit(self, model, threshold, factors):
        """Taubin's fits of the correspondences within ``k * threshold`` of the last fit, for
        each ``k`` of ``factors`` in turn from ``model`` (:meth:`refit` of all of them, not
        final), or None when one of them is degenerate. With numba in one compiled call
        (:func:`~xslit.epipolar.linear.iterated_taubin_fits`), the same tensor bit for bit.
        """
        thresholds = [k * threshold for k in factors]
        compiled = self._compiled_fits(model, np.zeros(self.n_points, bool), threshold,
                                       thresholds, 0, self.n_points)
        if compiled is None:
            for t in thresholds:
                within = self.residuals(model[None])[0] < t
                model = self.refit(model, within, t, final=False, thin=False)
                if model is None:
                    return None
            return model
        fits = compiled[-1]
        fitted = self._recorded(*compiled)[0]
        return fitted if len(fits) == len(thresholds) and fits[-1][1] is not None else None

    def leverage(self, model, inliers) -> np.ndarray | None:
        """Leverage ``h`` of each of the ``inliers`` (bool mask) on the least eigenvector of
        their Gram matrix weighted by the gradient norms of ``model`` (first-order
        perturbation when the row is deleted, :meth:`refit`); ``(inliers.sum(),)``, or None
        when that eigenvector is not isolated. Inliers have about ``15 / n``."""
        lev = self._leverage(model, np.flatnonzero(inliers), refine=False)
        return None if lev is None else lev[0].copy()

    def _leverage(self, model, idx, refine=True):
        """(h, V, V1, w1, D): leverages, the refined (with ``refine``) and first eigenvectors
        of the weighted Gram matrix of the rows ``idx``, its eigenvalues and the weighted rows
        (scratch)."""
        return weighted_leverage(self.design, idx, self._single(np.asarray(model))[1],
                                 self._scratch, refine)

    def _taubin(self, rows):
        """Taubin's fit of ``rows`` (indices) as a model, or None when they do not determine
        it.

        The fit is a function of the rows alone, and the refits of one estimate often fit
        the same rows again (an intermediate fit of the annealing and the final refit of the
        same inliers, local optimisations that converge to the same inliers): about a
        quarter of the fits at 1,000 correspondences. The last :data:`_REMEMBERED_FITS`
        fits are remembered by their rows and returned again (as copies).
        """
        rows = np.asarray(rows, dtype=np.intp)
        key = rows.tobytes()
        slot = self._fits.get(key)
        if slot is not None:
            _, _, models, ok = self._memory
            return models[slot].reshape(2, 2, 2, 2).copy() if ok[slot] else None
        fit = self._fit_rows(rows)
        self._remember(rows, fit, key)
        return None if fit is None else fit.copy()

    def _remember(self, rows, fit, key=None) -> None:
        """Remember Taubin's ``fit`` (None: degenerate) of ``rows`` (indices; ``key`` their
        bytes) in the oldest slot."""
        key = rows.tobytes() if key is None else key
        if key in self._fits:
            return
        slot = self._next_slot
        if self._fit_keys[slot] is not None:
            del self._fits[self._fit_keys[slot]]
        table, sizes, models, ok = self._memory
        table[slot, :len(rows)], sizes[slot], ok[slot] = rows, len(rows), fit is not None
        if fit is not None:
            models[slot] = fit.reshape(16)
        self._fits[key], self._fit_keys[slot] = slot, key
        self._next_slot = (slot + 1) % _REMEMBERED_FITS

    def _fit_rows(self, rows):
        """:meth:`_taubin` without the memory of earlier fits."""
        return taubin_fit_from_design(self.design, rows, self.frame[:, 0, 0],
                                      self.model_from_normalized, CONDITIONING_TOL,
                                      self._scratch)


@dataclass
class EpipolarEstimate:
    """Result of :func:`estimate_epipolar_tensor`."""

    F: np.ndarray | None
    inliers: np.ndarray
    success: bool
    reason: str
    iterations: int
    conditioning: float = np.nan
    #: Root mean square Sampson distance of the inliers to ``F``, in pixels.
    rms: float = np.nan
    #: Taubin's generalised eigenvalues on the inliers (:func:`~xslit.epipolar.linear.solve_taubin`).
    taubin_ratios: np.ndarray | None = None
    #: The Sampson distance (pixels) within which ``inliers`` lie: the options' threshold or,
    #: for LMedS, the one its robust scale gives; NaN for the all-points fit.
    threshold: float = np.nan


#: The robust methods of ``findEpipolarTensor`` by name (its flags ``FM_RANSAC``,
#: ``FM_LMEDS``, ``USAC_DEFAULT``, ``USAC_ACCURATE`` map onto them).
ROBUST_METHODS = ("ransac", "lmeds", "usac_default", "usac_accurate")


def robust_options(method: str, threshold: float = 1.5, confidence: float = 0.99,
                   max_iterations: int = 10000) -> RobustOptions:
    """The options of the robust loop of one of ``findEpipolarTensor``'s robust methods.

    ``"ransac"``: plain RANSAC (inlier count) with uniform sampling; ``"lmeds"``: least
    median of squares (its threshold comes from its robust scale, ``threshold`` is ignored);
    ``"usac_default"``: PROSAC on the joint-image density, MSAC, local optimisation,
    preemptive verification; ``"usac_accurate"``: the same with uniform sampling, more local
    optimisation and a confidence of at least 0.999.

    Parameters
    ----------
    method : {"ransac", "lmeds", "usac_default", "usac_accurate"}
    threshold : float
        Inlier threshold (Sampson distance, pixels).
    confidence : float
        In (0, 1).
    max_iterations : int

    Returns
    -------
    RobustOptions

    Raises
    ------
    ValueError
        On an unknown method or a malformed value (naming the argument).

    Examples
    --------
    >>> robust_options("lmeds").method, robust_options("usac_default").sampler
    ('lmeds', 'prosac')
    """
    if not isinstance(method, str) or method not in ROBUST_METHODS:
        raise ValueError(f"method must be one of {ROBUST_METHODS}, got {method!r}")
    lmeds = method == "lmeds"
    threshold = 1.0 if lmeds else check_threshold("threshold", threshold)
    confidence = check_probability("confidence", confidence)
    max_iterations = check_positive_int("max_iterations", max_iterations)
    usac = method.startswith("usac")
    return RobustOptions(
        method={"ransac": RANSAC, "lmeds": LMEDS}.get(method, MSAC),
        sampler=PROSAC if method == "usac_default" else UNIFORM,
        threshold=float(threshold),
        confidence=max(confidence, 0.999) if method == "usac_accurate" else float(confidence),
        max_iterations=int(max_iterations),
        local_optimization=usac,
        lo_iterations=20 if method == "usac_accurate" else 6,
        preemptive_subset=256 if usac else 0,
    )


def _distinct_count(points1, points2) -> int:
    """Distinct rows of ``[points1, points2]`` (to 1e-9 px): sorted, then compared."""
    rows = np.round(np.hstack([points1, points2]), 9)
    rows = rows[np.lexsort(rows.T)]
    return 1 + int(np.count_nonzero(np.any(rows[1:] != rows[:-1], axis=1))) if len(rows) else 0


def _has_distinct(points1, points2, count: int) -> bool:
    """Whether ``[points1, points2]`` holds at least ``count`` distinct rows (to 1e-9 px): at
    once when the first coordinates alone take that many values (rows with distinct ones are
    distinct), otherwise by :func:`_distinct_count`."""
    x = np.sort(np.round(points1[:, 0], 9))
    if len(x) and 1 + np.count_nonzero(x[1:] != x[:-1]) >= count:
        return True
    return _distinct_count(points1, points2) >= count


def estimate_epipolar_tensor(points1, points2, options: RobustOptions | None = None, rng=0,
                             linear_only: bool = False, order=None,
                             sample_size: int = MIN_LINEAR_POINTS) -> EpipolarEstimate:
    """Robust (or, with ``linear_only``, all-points) estimate of ``F`` on the variety of
    epipolar tensors.

    The robust loop (or, with ``linear_only``, all correspondences) selects the inliers with
    linear fits; Taubin's fit of the inliers (:func:`~xslit.epipolar.linear.solve_taubin`)
    then starts the maximum-likelihood polish on the variety
    (:func:`~xslit.epipolar.variety.refine_on_variety`), whose inlier set at the threshold is
    the returned mask.

    Parameters
    ----------
    points1, points2 : (N, 2) ndarray
        Validated pixels.
    options : RobustOptions, optional
        Default ``RobustOptions()`` (MSAC, uniform sampling, 1 px). Ignored when
        ``linear_only``.
    rng : None, int or numpy.random.Generator
        Default 0: the same call gives the same answer.
    linear_only : bool
    order : (N,) int ndarray, optional
        Correspondences by decreasing quality for the PROSAC sampler (default: by density in
        the joint image space, :func:`xslit.robust.density_order`).
    sample_size : {15, 13}
        Correspondences per sample of the robust loop: 15 (one linear solution each) or 13
        (every real tensor of the minimal solver,
        :class:`~xslit.epipolar.minimal_sampling.MinimalEpipolarProblem`: fewer samples, each
        much dearer). Ignored when ``linear_only``.

    Returns
    -------
    EpipolarEstimate
        ``F`` None with ``success`` False and a ``reason`` for degenerate input: fewer than 15
        distinct correspondences, correspondences that leave a family of tensors (all scene
        points on one plane or line, identical cameras, pushbroom strips on one flight line),
        or a support no larger than chance (too many outliers).
    """
    from .._checks import check_rng
    from .minimal_sampling import check_sample_size, epipolar_problem

    rng = check_rng(rng)
    sample_size = check_sample_size("sample_size", sample_size)
    options = RobustOptions() if options is None else options
    n = len(points1)
    none = np.zeros(n, bool)
    # The first rows nearly always hold 15 distinct pairs: count all only when they do not.
    if not _has_distinct(points1[:4 * MIN_LINEAR_POINTS], points2[:4 * MIN_LINEAR_POINTS],
                         MIN_LINEAR_POINTS):
        distinct = _distinct_count(points1, points2)
        if distinct < MIN_LINEAR_POINTS:
            return EpipolarEstimate(None, none, False, f"only {distinct} distinct "
                                    f"correspondences, at least {MIN_LINEAR_POINTS} are needed", 0)
    if linear_only:
        inliers, threshold, it, loop_inliers = np.ones(n, bool), None, 1, None
        Ts, normed = normalize_axes(points1, points2, robust=True)
        frame, normed, design = np.stack(Ts), np.stack(normed), None
    else:
        problem = epipolar_problem(points1, points2, sample_size, rng)
        res = robust_estimate(problem, options, rng, order)
        if res.model is None or not res.success:
            return EpipolarEstimate(None, none, False, res.reason, res.iterations)
        inliers, it = res.inliers, res.iterations
        # Distances below the rounding of the pixel coordinates are zero: a threshold from the
        # data's own scale (LMedS's, 2.5 robust deviations of the rounding on noise-free
        # pixels offset by 1e12) is not taken below it.
        threshold = max(res.history.get("threshold", options.threshold),
                        ROUNDING_DISTANCE * np.finfo(float).eps
                        * float(max(np.abs(points1).max(), np.abs(points2).max())))
        # A nearly degenerate model (most inliers on one plane, held by a few outliers) is
        # left for a better member of the family its inliers leave open, whatever the loop:
        # with 80% of the points on one plane, the least median of squares is the plane's
        # (the family's) and left out the 20% off it on an outlier-free scene.
        def optimise(model, inl):
            return iterated_least_squares(problem, model, inl, threshold,
                                          anneal=options.lo_anneal,
                                          anneal_steps=options.lo_anneal_steps)[0]

        other, other_inl = search_family(problem, res.model, threshold, rng,
                                         optimise=optimise)
        loop_inliers = None
        if other is not None:
            loop_inliers, inliers = inliers, other_inl
        frame, normed, design = problem.frame, problem.normalized, problem.design
    est, fit = _polish(points1, points2, inliers, threshold, rng, it, frame, normed, design)
    if est.success and not linear_only:
        est, loss = _second_polishes(problem, points1, points2, est, fit, threshold, rng)
        if loop_inliers is not None:
            # The family's member won by the linear tensor's loss; the loop's own inliers are
            # polished the same way, and the loss on the variety decides (on a sweep scene
            # with 34 inliers among 84, the member ended at 1.02 times the loss of theirs).
            other, other_fit = _polish(points1, points2, loop_inliers, threshold, rng, it,
                                       frame, normed, design)
            if other.success:
                other, other_loss = _second_polishes(problem, points1, points2, other,
                                                     other_fit, threshold, rng)
                if other_loss < loss:
                    est, loss = other, other_loss
        # The loop ranked its models by the linear tensor's loss, with two degrees of freedom
        # more than a camera pair's tensor can use: another of its locally optimised models
        # can polish to a lower loss on the variety.
        for _, elite_inliers in res.history.get("elite", []):
            other, other_fit = _polish(points1, points2, elite_inliers, threshold, rng, it,
                                       frame, normed, design)
            if not other.success:
                continue
            other_loss = msac_loss(other_fit.distances, threshold)
            if other_loss < loss:
                est, loss = other, other_loss
    if est.success and not linear_only and options.randomness_alpha is not None:
        # The loop tested the support of its linear model; the answer is the polished tensor,
        # whose mask can be smaller: its support must beat chance too.
        p0 = chance_inlier_ratio(problem, problem.model_from_pixels(est.F), threshold, rng)
        _, reason = chance_verdict(problem, est.inliers, p0, res.history.get("hypotheses", it),
                                   options.randomness_alpha)
        if reason:
            return EpipolarEstimate(None, none, False, reason, it, est.conditioning,
                                    taubin_ratios=est.taubin_ratios, threshold=threshold)
    if threshold is not None:
        est.threshold = float(threshold)
    return est


def _second_polishes(problem, points1, points2, est, fit, threshold,
                     rng) -> tuple[EpipolarEstimate, float]:
    """The polished tensor, or another polish near it with a lower truncated loss, and that
    loss.

    Least squares on the inliers with re-selection at the threshold stops at fixed points
    that the truncated loss ranks lower than others nearby; other starts are polished:

    * **annealed**: a correspondence just beyond the threshold never enters the fit that
      would bring it within (on 30 correspondences one such point costs 10% of the loss).
      From the polished tensor, Taubin's fits of the correspondences within thresholds
      decreasing from :data:`FINAL_ANNEAL` times the threshold (LO+'s annealing) let such
      points pull the fit; the inliers of the last one are polished from the polished
      tensor's ``fit`` (its basin: a few inliers more or less move the optimum by less than
      its noise, and the candidate starts of a linear tensor can land in a worse minimum);
    * **trimmed**: on a dominant plane the weakly observed directions of the tensor can be
      held by two or three outliers (at 70 thresholds from the truth) at the cost of dozens
      of inliers. Taubin's fit without the inliers whose leverage exceeds
      :data:`TRIM_LEVERAGE` times the average ``15 / n`` (Hoaglin and Welsch's rule) frees
      those directions; the polish then re-selects the inliers from all correspondences;
    * **all**: when the polished tensor leaves out at most :data:`CLEAN_OUTSIDE` of the
      correspondences, Taubin's fit of all of them (and the members of its pencil when its
      two least eigenvalues are close, :func:`_pencil_members`), polished on them all and
      re-selected.

    A start whose inliers are the polished tensor's (for the trimmed start: up to
    :data:`SAME_INLIERS` of them) is not polished. The lowest truncated loss on all
    correspondences (the loss that ranked the loop's models) wins.
    """
    model0 = problem.model_from_pixels(est.F)
    # The polish's own distances (the same tensor): its loss without another pass.
    best, best_loss = est, msac_loss(fit.distances, threshold)
    starts = []
    # The leverage weighs the rows by model0's gradient norms; its distances, evaluated with
    # them, then also start the annealing.
    h = problem.leverage(model0, est.inliers)
    trimmed = None
    if h is not None:
        high = h > TRIM_LEVERAGE * MIN_LINEAR_POINTS / len(h)
        if high.any():
            kept = est.inliers.copy()
            kept[np.flatnonzero(est.inliers)[high]] = False
            trimmed = problem.refit(model0, kept, threshold, final=False, thin=False)
    model = problem.annealed_fit(model0, threshold, _FINAL_ANNEAL_FACTORS)
    if model is not None:
        starts.append((model, fit))
    if trimmed is not None:
        starts.append((trimmed, None))
    # (start tensors in the problem's frame, fit to continue from, correspondences to polish,
    # starts polished)
    starts = [(model.reshape(16) @ problem.normalized_from_model, start,
               problem.residuals(model[None])[0] < threshold, 1) for model, start in starts]
    n = len(est.inliers)
    if 0 < n - np.count_nonzero(est.inliers) <= CLEAN_OUTSIDE * n:
        everything = np.ones(n, bool)
        try:
            basis, ratios = taubin_basis(*taubin_matrices_from_design(
                problem.design, everything, problem.frame[:, 0, 0]), 2)
        except np.linalg.LinAlgError:  # the gradients do not span the entries: no start
            basis = None
        if basis is not None:  # polished on all correspondences, then re-selected
            starts.append((basis[0], None, everything, 1))
            members = _pencil_members(basis, ratios)
            if members is not None:  # and from the members of Taubin's pencil
                starts.append((members, None, everything, PENCIL_STARTS))
    for f, start, within, count in starts:
        # The annealing is for single points just beyond the threshold: any change counts.
        same = 0.0 if start is not None else SAME_INLIERS * np.count_nonzero(est.inliers)
        if (np.count_nonzero(within) <= MIN_LINEAR_POINTS
                or np.count_nonzero(within != est.inliers) <= same):
            continue
        try:
            other = refine_on_variety(f, points1, points2, within, threshold, rng=rng,
                                      frame=problem.frame, start=start, n_starts=count)
        except ValueError:
            continue
        loss = msac_loss(other.distances, threshold)
        if loss < best_loss:
            best, best_loss = EpipolarEstimate(other.F, other.inliers, True, "", est.iterations,
                                               est.conditioning, other.rms,
                                               est.taubin_ratios), loss
    return best, best_loss


def _pencil_members(basis, ratios) -> np.ndarray | None:
    """:data:`PENCIL_MEMBERS` members of the pencil of Taubin's two least eigenvectors
    ``basis`` (2, 16) when their eigenvalues (``ratios``, ascending) are within
    :data:`PENCIL_RATIO` (None otherwise): starts of the polish on the variety besides the
    least eigenvector.

    On an outlier-free sweep scene (a nearly central mixed pair, 79% of the points on one
    plane) the polish from the least eigenvector stopped at 1.7-2.3 times the truncated loss
    of the maximum-likelihood tensor, leaving out four of its inliers; a member of the
    pencil polished to it.
    """
    if not ratios[1] < PENCIL_RATIO * ratios[0]:
        return None
    angles = np.pi * np.arange(PENCIL_MEMBERS) / PENCIL_MEMBERS
    return np.cos(angles)[:, None] * basis[0] + np.sin(angles)[:, None] * basis[1]


def _fit_loss(fit, threshold) -> float:
    """The loss that ranks polishes: the truncated quadratic loss at ``threshold``, or the
    squared distances of the fixed inliers without one."""
    if threshold is None:
        return float(np.sum(fit.distances[fit.inliers] ** 2))
    return float(msac_loss(fit.distances, threshold))


def _polish(points1, points2, inliers, threshold, rng, iterations, frame,
            normed, design=None) -> tuple[EpipolarEstimate, VarietyFit | None]:
    """Taubin's fit of ``inliers``, the test for a family of solutions, and the polish on the
    variety from Taubin's fit (and from its pencil, :func:`_pencil_members`, when its two
    least eigenvalues are close) (:func:`estimate_epipolar_tensor`'s last steps), in the
    robust normalisation
    ``frame`` (4, 2, 2) of all points, whose normalised coordinates are ``normed`` (4, N) and
    design matrix ``design`` (N, 16) when already built.
    Returns the estimate and the polish's :class:`~xslit.epipolar.variety.VarietyFit` (None
    when it failed)."""
    none = np.zeros(len(points1), bool)
    linear_support = np.count_nonzero(inliers)
    # Taubin's fit of the inliers in the frame normalised over all points (the polish's).
    scales = frame[:, 0, 0]

    def matrices(rows):
        if design is None:
            return taubin_matrices([c[rows] for c in normed], scales)
        return taubin_matrices_from_design(design, rows, scales)

    if design is None:
        M, N = matrices(inliers)
        cond = conditioning_from_eigenvalues(np.linalg.eigvalsh(M))  # M = D^T D
        try:
            basis, ratios = taubin_basis(M, N, 2)
        except np.linalg.LinAlgError:
            basis = None
    else:
        basis, ratios, cond = taubin_basis_from_design(design, inliers, scales, 2)
    if basis is None:  # no gradient in some direction: degenerate
        basis, ratios = np.zeros((2, 16)), np.zeros(16)
    f0 = basis[0]
    if (cond < CONDITIONING_TOL or ratios[3] < FAMILY_RATIO * ratios[0]
            or ratios[4] < family_bound(linear_support) * ratios[0]):
        return EpipolarEstimate(None, none, False, (
            "the correspondences do not determine F: a family of tensors fits them at the "
            "noise level (Taubin's eigenvalues "
            f"{', '.join(f'{r:.3g}' for r in ratios[:5])} px^2, s15/s1 = {cond:.1e}); a "
            "degenerate configuration such as "
            "coplanar or collinear scene points, identical cameras, or pushbroom strips on "
            "one flight line"), iterations, cond, taubin_ratios=ratios), None
    try:
        fit = refine_on_variety(f0, points1, points2, inliers, threshold, rng=rng,
                                frame=frame)
        if (threshold is not None
                and np.count_nonzero(fit.inliers) < RETRY_SUPPORT * linear_support):
            again = refine_on_variety(f0, points1, points2, inliers, threshold, rng=rng,
                                      frame=frame, n_starts=RETRY_STARTS)
            if msac_loss(again.distances, threshold) < msac_loss(fit.distances, threshold):
                fit = again
    except ValueError as err:
        return EpipolarEstimate(None, none, False, str(err), iterations, cond,
                                taubin_ratios=ratios), None
    fits = [fit]
    members = _pencil_members(basis, ratios)
    if members is not None:
        try:
            fits.append(refine_on_variety(members, points1, points2, inliers, threshold,
                                          rng=rng, frame=frame, n_starts=PENCIL_STARTS))
        except ValueError:
            pass
    # When the polished model's inliers differ from the ones Taubin's fit saw by more than 1%
    # (a loop without local optimisation, or outliers it absorbed), its start was biased by
    # them: fit again from Taubin's fit of the new inliers and keep the better truncated loss.
    # Each polish (from the least eigenvector, and from the pencil) goes on on its own, and
    # the lower loss wins at the end: improving the first polish can lead the refits into a
    # worse basin.
    for k, fit in enumerate(fits):
        fitted = inliers
        for _ in range(2):
            changed = np.count_nonzero(fit.inliers != fitted)
            if (threshold is None or changed <= 0.01 * np.count_nonzero(fitted)
                    or np.count_nonzero(fit.inliers) < 16):
                break
            fitted = fit.inliers
            try:
                f1, _ = taubin_fit(*matrices(fitted))
                again = refine_on_variety(f1, points1, points2, fitted, threshold, rng=rng,
                                          frame=frame)
            except (ValueError, np.linalg.LinAlgError):
                break
            if msac_loss(again.distances, threshold) >= msac_loss(fit.distances, threshold):
                break
            fit = again
        fits[k] = fit
    fit = fits[0] if len(fits) == 1 else min(fits, key=lambda f: _fit_loss(f, threshold))
    if (threshold is not None
            and np.count_nonzero(fit.inliers) < max(MIN_LINEAR_POINTS, 0.5 * linear_support)):
        # The linear estimate's inliers, up to a few near the threshold, are inliers of the
        # tensor of a camera pair nearby; losing half of them means that the linear fit used
        # its two spare degrees of freedom to absorb outliers, away from every camera pair.
        return EpipolarEstimate(None, none, False, (
            f"no tensor of a camera pair fits the inliers: the linear estimate explains "
            f"{linear_support} correspondences, its maximum-likelihood polish on the variety "
            f"of epipolar tensors only {int(fit.inliers.sum())} (outliers among too few "
            "correspondences hold the linear fit)"), iterations, cond,
            taubin_ratios=ratios), None
    mask = fit.inliers if threshold is not None else np.ones(len(points1), bool)
    return EpipolarEstimate(fit.F, mask, True, "", iterations, cond, fit.rms, ratios), fit
