"""Camera rigs of the dataset recipes: where the cameras are and how they are built.

Pure geometry (no rendering): each rig returns a list of :class:`RigView` with the camera, its
intrinsics and cv2 pose, so that the rig can be inspected and tested without Open3D.

Two-slit cameras are composed with :func:`xslit.composeTwoSlitProjection`: in camera
coordinates (OpenCV's: z forward, x right, y down) the first slit is the line ``x = z = 0``
through the eye and the second the line ``z = -d, cos θ x + sin θ y = 0`` a distance ``d``
behind it, so every point ahead of the eye (``z > 0``) is in front of both slit planes.
Pushbroom cameras are composed with :func:`xslit.composePushbroomProjection`: the camera moves
along its x axis by ``v`` per image column, looking down its z axis, and its linear sensor
spans the image rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import check_positive_int, check_rng
from ..api.cameras import composePushbroomProjection, composeTwoSlitProjection
from ..cameras import Camera, PushbroomIntrinsics, TwoSlitIntrinsics
from ..geometry.projective import rvec_from_matrix
from ..render.scenes import pose_from_look_at

__all__ = [
    "RigView",
    "check_in_front",
    "pushbroom_strips_rig",
    "xslit_circle_rig",
    "xslit_stereo_rig",
]

#: Horizontal field of view of the two-slit rigs (degrees).
XSLIT_FOV_DEG = 62.0
#: Default distance between the slits of the two-slit rigs, in room units.
XSLIT_SLIT_DISTANCE = 1.5
#: Point the room rigs look at (the middle of the objects) and the eye height.
ROOM_TARGET = (0.0, 0.0, -0.3)
ROOM_EYE_HEIGHT = 0.6


@dataclass
class RigView:
    """One camera of a rig: name, camera, intrinsics, cv2 pose and a JSON description."""

    name: str
    camera: Camera
    intrinsics: object
    rvec: np.ndarray
    tvec: np.ndarray
    meta: dict

    @property
    def pose(self) -> dict:
        return {"rvec": self.rvec, "tvec": self.tvec}


def _xslit_intrinsics(size, d, theta=np.pi / 2) -> TwoSlitIntrinsics:
    w, h = size
    f = (w / 2) / np.tan(np.radians(XSLIT_FOV_DEG) / 2)
    # K2[0, 0] = 2 fv: equal magnification on both axes far from the slits.
    return TwoSlitIntrinsics.from_parameters(f, f / 2, (w - 1) / 2, (h - 1) / 2, theta, d)


def check_in_front(views: list[RigView], points: np.ndarray, what: str) -> None:
    """Raise ValueError when some of ``points`` are not in front of some camera."""
    for v in views:
        ok = v.camera.in_front(points)
        if not ok.all():
            raise ValueError(f"rig: {what} is not in front of camera {v.name} "
                             f"({int((~ok).sum())} of {len(points)} test points behind a slit "
                             "plane)")


def _room_test_points(radius: float = 2.0, floor: float = -1.2, top: float = 1.2) -> np.ndarray:
    """Points of the room's central region (where the objects stand), to check cheirality."""
    a = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    xy = np.stack([np.cos(a), np.sin(a)], axis=1)
    return np.concatenate([np.column_stack([r * xy, np.full(len(xy), z)])
                           for r in (0.0, radius / 2, radius) for z in (floor, top)])


def xslit_stereo_rig(size, rng=None, *, baseline: float = 0.8, distance: float = 4.5,
                     d: float = XSLIT_SLIT_DISTANCE) -> list[RigView]:
    """Two two-slit cameras side by side, converging on the room's centre.

    Parameters
    ----------
    size : (width, height)
    rng : None, int or numpy.random.Generator
        Jitters the eyes by a few centimetres and the slit angles by a few degrees.
    baseline : float
        Distance between the two eyes (on the first slits).
    distance : float
        Distance from the eyes to the room's centre.
    d : float
        Slit distance (the second slit lies ``d`` behind the first).

    Returns
    -------
    list of RigView
        ``left``, ``right``.
    """
    rng = check_rng(rng)
    target = np.array(ROOM_TARGET)
    views = []
    for k, name in enumerate(("left", "right")):
        eye = np.array([(k - 0.5) * baseline, -distance, ROOM_EYE_HEIGHT])
        eye += rng.uniform(-0.03, 0.03, size=3)
        theta = np.pi / 2 + np.radians(rng.uniform(-3, 3))
        intr = _xslit_intrinsics(size, d, theta)
        rvec, tvec = pose_from_look_at(eye, target)
        cam = composeTwoSlitProjection(intr, rvec, tvec)
        views.append(RigView(name, cam, intr, rvec, tvec,
                             {"eye": eye.tolist(), "target": target.tolist()}))
    check_in_front(views, _room_test_points(), "the room's centre")
    return views


def xslit_circle_rig(size, n_views: int = 8, rng=None, *, radius: float = 4.5,
                     d: float = XSLIT_SLIT_DISTANCE) -> list[RigView]:
    """``n_views`` two-slit cameras on a circle around the room's centre, looking at it.

    Eye heights alternate between 0.4 and 1.0 above the target plane so that the views are not
    coplanar; the start angle is random (from ``rng``).

    Returns
    -------
    list of RigView
        ``view_000``, ``view_001``, ...
    """
    n_views = check_positive_int("n_views", n_views, minimum=2)
    rng = check_rng(rng)
    target = np.array(ROOM_TARGET)
    start = rng.uniform(0, 2 * np.pi)
    views = []
    for k in range(n_views):
        a = start + 2 * np.pi * k / n_views
        eye = np.array([radius * np.cos(a), radius * np.sin(a),
                        ROOM_EYE_HEIGHT + (0.3 if k % 2 else -0.2)])
        intr = _xslit_intrinsics(size, d)
        rvec, tvec = pose_from_look_at(eye, target)
        cam = composeTwoSlitProjection(intr, rvec, tvec)
        views.append(RigView(f"view_{k:03d}", cam, intr, rvec, tvec,
                             {"eye": eye.tolist(), "target": target.tolist(),
                              "angle_deg": float(np.degrees(a) % 360)}))
    check_in_front(views, _room_test_points(radius=min(2.0, radius / 2)), "the room's centre")
    return views


def pushbroom_strips_rig(size, n_views: int = 3, rng=None, *, extent: float = 100.0,
                         relief: float = 12.0, altitude: float = 60.0,
                         fov_deg: float = 40.0, side_overlap: float = 0.6) -> list[RigView]:
    """Pushbroom strips along parallel flight lines over a terrain, looking down.

    Flight lines run along world +x over the middle 80 % of the terrain, at ``altitude``
    above the terrain's base; neighbouring lines overlap by ``side_overlap`` of the swath.
    Each camera has a small random roll and pitch (within 2 degrees).

    Parameters
    ----------
    size : (width, height)
        Width: along-track samples (image columns = time); height: sensor pixels.
    n_views : int
        Number of flight lines.
    extent, relief : float
        Terrain size (as :func:`xslit.render.make_terrain_scene`).
    altitude : float
    fov_deg : float
        Cross-track field of view of the linear sensor.
    side_overlap : float
        Fraction of the swath shared by neighbouring lines, in [0, 1).

    Returns
    -------
    list of RigView
        ``strip_000``, ``strip_001``, ...
    """
    n_views = check_positive_int("n_views", n_views)
    if not 0 <= side_overlap < 1:
        raise ValueError(f"side_overlap must be in [0, 1), got {side_overlap}")
    if not altitude > relief:
        raise ValueError(f"altitude must exceed the relief {relief}, got {altitude}")
    rng = check_rng(rng)
    w, h = size
    length = 0.8 * extent
    v = length / w
    f = (h / 2) / np.tan(np.radians(fov_deg) / 2)
    swath = 2 * (altitude - relief / 2) * np.tan(np.radians(fov_deg) / 2)
    step = swath * (1 - side_overlap)
    offsets = (np.arange(n_views) - (n_views - 1) / 2) * step
    views = []
    for k, y in enumerate(offsets):
        roll, pitch = np.radians(rng.uniform(-2, 2, size=2))
        # Camera axes: x along the flight (+x world), z down, y = z cross x.
        R0 = np.array([[1.0, 0, 0], [0, -1.0, 0], [0, 0, -1.0]])
        cr, sr, cp, sp = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch)
        Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
        Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
        R = Ry @ Rx @ R0
        eye = np.array([-length / 2, y, altitude])
        rvec, tvec = rvec_from_matrix(R), -R @ eye
        intr = PushbroomIntrinsics.from_parameters(v, f, (h - 1) / 2)
        cam = composePushbroomProjection(intr, rvec, tvec)
        views.append(RigView(f"strip_{k:03d}", cam, intr, rvec, tvec,
                             {"flight_line_y": float(y), "altitude": altitude,
                              "along_track_per_column": v}))
    ground = np.array([[x, y, z] for x in (-length / 2, 0, length / 2)
                       for y in (-extent / 2, 0, extent / 2) for z in (0.0, relief)])
    check_in_front(views, ground, "the terrain")
    return views
