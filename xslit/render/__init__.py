"""Ray-cast rendering of textured scenes with any xslit camera (Open3D, Embree).

``renderImage(scene, camera, imageSize)`` renders a two-slit, pushbroom, pinhole or rational
camera: one ray per pixel centre (integer image coordinates are pixel centres, as in OpenCV:
pixel row ``i``, column ``j`` is at ``(x, y) = (j, i)``), giving a colour image, the depth and
3D hit point of every pixel and a validity mask. ``correspondences_between`` gives exact
ground-truth matches between two renders, with visibility checked by depth.

Scenes are procedural and seeded (``make_room_scene``, ``make_terrain_scene``,
``make_calibration_target``) or loaded from mesh files (``Scene.from_file``).

Open3D and OpenCV are imported only when this package is used, never by ``import xslit``.
"""

from .evaluate import cloud_metrics, match_errors
from .raycast import (
    Correspondences,
    correspondences_between,
    pixel_grid,
    render_from_rays,
    renderImage,
)
from .scene import Scene
from .scenes import (
    MeshBuilder,
    make_calibration_target,
    make_room_scene,
    make_terrain_scene,
    pose_from_look_at,
)

__all__ = [
    "Correspondences",
    "MeshBuilder",
    "Scene",
    "cloud_metrics",
    "correspondences_between",
    "make_calibration_target",
    "make_room_scene",
    "make_terrain_scene",
    "match_errors",
    "pixel_grid",
    "pose_from_look_at",
    "renderImage",
    "render_from_rays",
]
