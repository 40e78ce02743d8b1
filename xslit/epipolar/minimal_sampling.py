r"""Robust estimation of the epipolar tensor with 13-point minimal samples.

The default robust estimate draws samples of 15 correspondences, whose one linear solution
(the null vector of Theorem 1's relation, section "Two-slit cameras: algorithms") is the
hypothesis. Samples of 13, solved by the minimal solver (appendix "Algorithms", "Minimal SfM";
:mod:`xslit.epipolar.minimal`), need fewer draws to hold no outlier: with an inlier ratio
:math:`w` and confidence :math:`p`, RANSAC draws

.. math:: k_s = \frac{\log(1 - p)}{\log(1 - w^s)} \approx \frac{-\log(1 - p)}{w^s},

so :math:`k_{15} / k_{13} \approx w^{-2}`: 2.0 at 30% outliers, 2.8 at 40%, 4 at 50%, 11 at
70%. A 13-point sample costs the homotopy's 28 paths (about 0.8 ms with the compiled kernel,
hypotheses and residuals) against a 15-point sample's null vector (about 0.012 ms), some 60
times more: the option pays only when the draws saved outweigh that, beyond about 87%
outliers, far beyond the outlier ratios at which either search ends within its iteration cap
(``tools/bench_minimal_sampling.py`` measures both through ``findEpipolarTensor``).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._checks import check_rng
from .estimate import EpipolarProblem
from .linear import MIN_LINEAR_POINTS
from .minimal import MIN_MINIMAL_POINTS, minimal_hypotheses

__all__ = ["SAMPLE_SIZES", "MinimalEpipolarProblem", "check_sample_size", "epipolar_problem"]

#: Sample sizes of the robust estimate: 13 (the minimal solver) or 15 (linear samples).
SAMPLE_SIZES = (MIN_MINIMAL_POINTS, MIN_LINEAR_POINTS)


def check_sample_size(name: str, value) -> int:
    """``value`` as an int when it is one of :data:`SAMPLE_SIZES`, else a ValueError naming
    ``name``, what was expected and what came.

    Examples
    --------
    >>> check_sample_size("sample_size", 13)
    13
    >>> check_sample_size("sample_size", 14)
    Traceback (most recent call last):
    ...
    ValueError: sample_size must be 13 (minimal samples) or 15 (linear samples), got 14
    """
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
            or int(value) not in SAMPLE_SIZES):
        raise ValueError(f"{name} must be 13 (minimal samples) or 15 (linear samples), got "
                         f"{value!r}")
    return int(value)


class MinimalEpipolarProblem(EpipolarProblem):
    """:class:`~xslit.epipolar.estimate.EpipolarProblem` with 13-point minimal samples.

    A sample of 13 correspondences gives every real tensor through them
    (:func:`~xslit.epipolar.minimal.minimal_hypotheses`, one batched homotopy per round of
    samples), zero to 28 hypotheses; samples on one plane or with repeated points leave a
    null space of more than three dimensions and give none. The solver runs on the centred
    pixels, so its tensors are already models of the problem (tensors of the centred pixels,
    unit norm). Larger samples (local optimisation's), the residuals and the refits are those
    of the linear problem.

    Parameters
    ----------
    points1, points2 : (N, 2) ndarray
        Validated pixels.
    rng : None | int | numpy.random.Generator
        Randomness of the homotopy paths (the gamma trick of the solver).
    backend : {"auto", "numba", "numpy"}
        Path tracking of the solver (:func:`~xslit.epipolar.minimal.track_paths`).
    """

    sample_size = MIN_MINIMAL_POINTS

    def __init__(self, points1: np.ndarray, points2: np.ndarray, rng=None,
                 backend: str = "auto"):
        super().__init__(points1, points2)
        self.rng = check_rng(rng)
        self.backend = backend

    def fit_samples(self, samples, near=None):
        """Minimal samples: every real tensor of each (zero to 28). Larger samples: as
        :meth:`xslit.epipolar.estimate.EpipolarProblem.fit_samples`."""
        samples = np.asarray(samples)
        if samples.shape[1] != MIN_MINIMAL_POINTS:
            return super().fit_samples(samples, near)
        return minimal_hypotheses(self.points1, self.points2, samples, rng=self.rng,
                                  backend=self.backend)


def epipolar_problem(points1, points2, sample_size: int = MIN_LINEAR_POINTS, rng=None):
    """The robust problem of the epipolar tensor for samples of ``sample_size``.

    Parameters
    ----------
    points1, points2 : (N, 2) ndarray
        Validated pixels.
    sample_size : {13, 15}
        :class:`MinimalEpipolarProblem` for 13,
        :class:`~xslit.epipolar.estimate.EpipolarProblem` for 15.
    rng : None | int | numpy.random.Generator
        The minimal solver's randomness (13 only).

    Returns
    -------
    EpipolarProblem
    """
    sample_size = check_sample_size("sample_size", sample_size)
    if sample_size == MIN_MINIMAL_POINTS:
        return MinimalEpipolarProblem(points1, points2, rng)
    return EpipolarProblem(points1, points2)
