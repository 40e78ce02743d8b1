"""The epipolar tensor: compute, residuals, linear solver, recovery of camera pairs."""

from .linear import MIN_LINEAR_POINTS, axis_normalization, solve_linear, solve_linear_batch
from .minimal import solve_minimal
from .minors import (
    balance_matrix,
    cameras_from_matrix,
    candidate_matrices,
    matrix_from_cameras,
    normalize_matrix_gauge,
    principal_minor_jacobian,
    principal_minor_tensor,
    recover_configurations,
)
from .tensor import (
    contract_modes,
    design_matrix,
    epipolar_tensor,
    evaluate_tensor,
    sampson_distance,
    sampson_distance_pairs,
    tensor_gradient,
)

__all__ = [
    "MIN_LINEAR_POINTS",
    "axis_normalization",
    "balance_matrix",
    "cameras_from_matrix",
    "candidate_matrices",
    "contract_modes",
    "design_matrix",
    "epipolar_tensor",
    "evaluate_tensor",
    "matrix_from_cameras",
    "normalize_matrix_gauge",
    "principal_minor_jacobian",
    "principal_minor_tensor",
    "recover_configurations",
    "sampson_distance",
    "sampson_distance_pairs",
    "solve_linear",
    "solve_linear_batch",
    "solve_minimal",
    "tensor_gradient",
]
