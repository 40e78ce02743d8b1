"""The generic robust-estimation loop, independent of the model."""

from .loop import (
    LMEDS,
    MSAC,
    PROSAC,
    RANSAC,
    UNIFORM,
    RobustOptions,
    RobustProblem,
    RobustResult,
    robust_estimate,
    search_other_branch,
)
from .quality import density_order

__all__ = [
    "LMEDS",
    "MSAC",
    "PROSAC",
    "RANSAC",
    "UNIFORM",
    "RobustOptions",
    "RobustProblem",
    "RobustResult",
    "density_order",
    "robust_estimate",
    "search_other_branch",
]
