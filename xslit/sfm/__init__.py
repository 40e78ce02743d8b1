"""Triangulation, two-view refinement and metric pose (later: resection, bundle adjustment)."""

from .calibrated import (
    CalibratedPose,
    CalibratedTwoView,
    RobustMetricFit,
    calibrated_two_view,
    fit_metric_pose_robust,
    pose_distances,
    relative_pose,
    tensor_map,
)
from .triangulate import reprojection_residuals, triangulate_linear, triangulate_nonlinear
from .two_view import (
    MetricFit,
    ProjectiveRefinement,
    fit_metric_pose,
    metric_pose_information,
    metric_residuals,
    projective_pairs_from_tensor,
    refine_metric_pose,
    refine_projective_pair,
)

__all__ = [
    "CalibratedPose",
    "CalibratedTwoView",
    "MetricFit",
    "ProjectiveRefinement",
    "RobustMetricFit",
    "calibrated_two_view",
    "fit_metric_pose",
    "fit_metric_pose_robust",
    "metric_pose_information",
    "metric_residuals",
    "pose_distances",
    "projective_pairs_from_tensor",
    "refine_metric_pose",
    "refine_projective_pair",
    "relative_pose",
    "reprojection_residuals",
    "tensor_map",
    "triangulate_linear",
    "triangulate_nonlinear",
]
