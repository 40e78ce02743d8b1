"""The generic robust-estimation loop, independent of the model."""

from .loop import (
    LMEDS,
    MSAC,
    PROSAC,
    RANSAC,
    UNIFORM,
    RobustOptions,
    RobustProblem,
    RobustProblemBase,
    RobustResult,
    chance_verdict,
    iterated_least_squares,
    msac_loss,
    robust_estimate,
    support_needed,
)
from .quality import density_order
from .sampling import (
    ProsacSampler,
    Sampler,
    UniformSampler,
    disjoint_samples,
    log_binom_table,
    required_iterations,
    sample_indices,
)

__all__ = [
    "LMEDS",
    "MSAC",
    "PROSAC",
    "RANSAC",
    "UNIFORM",
    "ProsacSampler",
    "RobustOptions",
    "RobustProblem",
    "RobustProblemBase",
    "RobustResult",
    "Sampler",
    "UniformSampler",
    "chance_verdict",
    "density_order",
    "disjoint_samples",
    "iterated_least_squares",
    "log_binom_table",
    "msac_loss",
    "required_iterations",
    "robust_estimate",
    "sample_indices",
    "support_needed",
]
