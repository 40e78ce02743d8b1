"""The generic robust-estimation loop, independent of the model."""

from .loop import (
    LMEDS,
    MSAC,
    RANSAC,
    RobustOptions,
    RobustProblem,
    RobustResult,
    robust_estimate,
)

__all__ = [
    "LMEDS",
    "MSAC",
    "RANSAC",
    "RobustOptions",
    "RobustProblem",
    "RobustResult",
    "robust_estimate",
]
