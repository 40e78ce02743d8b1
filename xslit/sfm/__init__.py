"""Triangulation, two-view refinement and metric pose (later: resection, bundle adjustment)."""

from .triangulate import reprojection_residuals, triangulate_linear, triangulate_nonlinear
from .two_view import (
    MetricPose,
    ProjectiveRefinement,
    metric_pose,
    metric_pose_candidates,
    projective_pairs_from_tensor,
    refine_metric_pose,
    refine_pose_sampson,
    refine_projective_pair,
)

__all__ = [
    "MetricPose",
    "ProjectiveRefinement",
    "metric_pose",
    "metric_pose_candidates",
    "projective_pairs_from_tensor",
    "refine_metric_pose",
    "refine_pose_sampson",
    "refine_projective_pair",
    "reprojection_residuals",
    "triangulate_linear",
    "triangulate_nonlinear",
]
