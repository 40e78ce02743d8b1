"""Point clouds in Open3D, PNG previews without a display, and an interactive viewer.

``import xslit.viz`` does not load Open3D: the functions that need it import it when called.

- :func:`pointcloud_from_points`, :func:`points_from_pointcloud`: numpy arrays to and from
  ``open3d.geometry.PointCloud`` (colours as float64 in [0, 1]; uint8 accepted);
- :func:`preview_png`: a PNG of a cloud, drawn by Open3D offscreen (EGL) or, when that
  fails, by a numpy splat renderer (:func:`render_points`);
- :func:`show`: Open3D's window when a display is reachable, else a PNG and a line saying
  where.
"""

from .convert import arrays_from_cloud, pointcloud_from_points, points_from_pointcloud
from .splat import render_points
from .view import Preview, ShowResult, display_problem, preview_png, show

__all__ = [
    "Preview",
    "ShowResult",
    "arrays_from_cloud",
    "display_problem",
    "pointcloud_from_points",
    "points_from_pointcloud",
    "preview_png",
    "render_points",
    "show",
]
