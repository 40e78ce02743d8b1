"""Camera models (two-slit, pushbroom, pinhole, general rational) and their intrinsics."""

from .base import Camera
from .intrinsics import (
    PushbroomDecomposition,
    PushbroomIntrinsics,
    TwoSlitDecomposition,
    TwoSlitIntrinsics,
    camera_matrices,
    checked_translation_length,
    compose_camera,
    compose_pushbroom,
    compose_two_slit,
    decompose_camera,
    decompose_pushbroom,
    decompose_two_slit,
    project_points_with_pose,
    project_points_with_poses,
)
from .pinhole import PinholeCamera
from .pushbroom import PushbroomCamera
from .rational import RationalCamera, plane_projection_matrix
from .retinal import retinal_plane_homography
from .serialize import camera_from_dict
from .two_slit import TwoSlitCamera, check_two_slit_matrices

__all__ = [
    "Camera",
    "PinholeCamera",
    "PushbroomCamera",
    "PushbroomDecomposition",
    "PushbroomIntrinsics",
    "RationalCamera",
    "TwoSlitCamera",
    "TwoSlitDecomposition",
    "TwoSlitIntrinsics",
    "camera_from_dict",
    "camera_matrices",
    "check_two_slit_matrices",
    "checked_translation_length",
    "compose_camera",
    "compose_pushbroom",
    "compose_two_slit",
    "decompose_camera",
    "decompose_pushbroom",
    "decompose_two_slit",
    "plane_projection_matrix",
    "project_points_with_pose",
    "project_points_with_poses",
    "retinal_plane_homography",
]
