"""Previews (PNG files, no display needed) and an interactive viewer that never hangs.

:func:`preview_png` renders with Open3D's legacy ``Visualizer`` in an invisible window; with
no display, Open3D (0.19 and later) renders through EGL (Mesa's software rasteriser on a
machine without a GPU). When that fails at run time (no EGL, no OpenGL driver, a blank
capture), it renders with the numpy splat renderer of :mod:`xslit.viz.splat`, so a PNG is
always written; the returned :class:`Preview` says which renderer ran and why.

:func:`show` opens Open3D's window when a display can be reached, and otherwise writes the
preview and says where. It never calls ``draw_geometries`` blind: without a display Open3D
falls back to an invisible offscreen window whose event loop never ends.
"""

from __future__ import annotations

import ctypes.util
import os
import socket
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io.files import atomic_write_bytes
from ._open3d import import_open3d
from .convert import arrays_from_cloud
from .splat import DEFAULT_POINT_COLOR, look_at_frame, render_points

__all__ = ["Preview", "ShowResult", "display_problem", "preview_png", "show"]

#: Largest preview side in pixels.
MAX_SIZE = 8192
#: Seconds allowed to the probe that opens a connection to the X server.
DISPLAY_PROBE_TIMEOUT = 5.0
_RENDERERS = ("auto", "open3d", "numpy")
#: Open3D's log lines when it found no display and went offscreen instead.
_HEADLESS_MARKERS = ("falling back to EGL", "Falling back to headless", "No display detected")


@dataclass(frozen=True)
class Preview:
    """A preview written by :func:`preview_png`.

    Attributes
    ----------
    path : Path
        The PNG file.
    renderer : str
        ``"open3d"`` or ``"numpy"``: which renderer drew it.
    reason : str or None
        Why the numpy renderer drew it when ``renderer="auto"`` (Open3D's error).
    """

    path: Path
    renderer: str
    reason: str | None = None


@dataclass(frozen=True)
class ShowResult:
    """What :func:`show` did.

    Attributes
    ----------
    shown : bool
        True when an interactive window was opened (and has been closed by the user).
    path : Path or None
        The preview PNG written instead of a window.
    reason : str or None
        Why no window was opened.
    """

    shown: bool
    path: Path | None = None
    reason: str | None = None


def _check_size(size) -> tuple[int, int]:
    try:
        w, h = (int(s) for s in size)
        ok = all(float(s) == int(s) for s in size) and 0 < w <= MAX_SIZE and 0 < h <= MAX_SIZE
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"size must be (width, height) of integers in [1, {MAX_SIZE}], got "
                         f"{size!r}")
    return w, h


def _check_color3(name: str, value) -> np.ndarray:
    a = np.asarray(value, dtype=np.float64) if np.ndim(value) == 1 else None
    if a is None or a.shape != (3,) or not np.isfinite(a).all() or a.min() < 0 or a.max() > 1:
        raise ValueError(f"{name} must be three floats in [0, 1], got {value!r}")
    return a


def _encode_png(image: np.ndarray) -> bytes:
    import imageio.v3 as iio

    return iio.imwrite("<bytes>", image, extension=".png")


def _open3d_cloud(o3d, P, C, N):
    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(P))
    cloud.colors = o3d.utility.Vector3dVector(
        np.broadcast_to(DEFAULT_POINT_COLOR, P.shape) if C is None else C)
    if N is not None:
        cloud.normals = o3d.utility.Vector3dVector(N)
    return cloud


def _set_view(vis, P, size, front, up, projection, fill=0.9):
    """Frame the cloud as :func:`render_points` does (Open3D's zoom is relative to the box)."""
    fr = look_at_frame(P, front, up, fill=fill)
    ctl = vis.get_view_control()
    if projection == "orthographic":
        ctl.change_field_of_view(step=-90.0)  # Open3D's smallest field of view is orthographic
    extent = float(np.ptp(P, axis=0).max()) if len(P) else 1.0
    w, h = size
    short = 1.0 if h <= w else w / h
    ctl.set_lookat(fr["center"])
    ctl.set_front(-fr["view"])
    ctl.set_up(fr["up"])
    ctl.set_zoom(fr["radius"] / (fill * max(extent, 1e-12) * short))


@contextmanager
def _open3d_quiet(o3d):
    with o3d.utility.VerbosityContextManager(o3d.utility.VerbosityLevel.Error):
        yield


def _render_open3d(P, C, N, size, front, up, point_size, background, projection):
    o3d = import_open3d()
    w, h = size
    with _open3d_quiet(o3d):
        vis = o3d.visualization.Visualizer()
        with _capture_output_fds():  # GLFW and Mesa report the missing display on stderr
            ok = vis.create_window(window_name="xslit preview", width=w, height=h,
                                   visible=False)
        if not ok:
            raise RuntimeError("Open3D could not create an offscreen window (no display and no "
                               "EGL: install Debian's libegl1, libegl-mesa0 and libgl1-mesa-dri)")
        try:
            vis.add_geometry(_open3d_cloud(o3d, P, C, N))
            opt = vis.get_render_option()
            opt.point_size = float(point_size)
            opt.background_color = np.asarray(background, dtype=np.float64)
            opt.light_on = False
            _set_view(vis, P, size, front, up, projection)
            vis.poll_events()
            vis.update_renderer()
            buf = np.asarray(vis.capture_screen_float_buffer(do_render=True))
        finally:
            vis.destroy_window()
    if buf.ndim != 3 or buf.shape[2] != 3 or not buf.size:
        raise RuntimeError(f"Open3D returned an empty capture of shape {buf.shape}")
    image = np.round(np.clip(buf, 0, 1) * 255).astype(np.uint8)
    if image.shape[:2] != (h, w):
        raise RuntimeError(f"Open3D captured {image.shape[1]}x{image.shape[0]} pixels instead "
                           f"of {w}x{h}")
    bg = np.round(np.asarray(background) * 255).astype(np.uint8)
    if len(P) and (image == bg).all():
        raise RuntimeError("Open3D's capture is blank (the OpenGL context drew nothing)")
    return image


def preview_png(cloud, path, size=(640, 480), *, colors=None, front=(0.0, 0.0, 1.0),
                up=(0.0, 1.0, 0.0), point_size=2.0, background=(1.0, 1.0, 1.0),
                projection="perspective", renderer="auto") -> Preview:
    """Render a point cloud to a PNG file without a display.

    Parameters
    ----------
    cloud : (N, 3) array_like, (points, colors) tuple, open3d PointCloud, str or Path
        Anything :func:`xslit.viz.arrays_from_cloud` accepts (a PLY path included).
    path : str or Path
        The PNG to write (atomically; its folder must exist).
    size : (int, int)
        ``(width, height)`` in pixels.
    colors : (N, 3) array_like, optional
        uint8 in [0, 255] or floats in [0, 1]; points without colours are drawn in
        :data:`xslit.viz.splat.DEFAULT_POINT_COLOR`.
    front, up : (3,) array_like
        From the cloud towards the camera, and the image's up direction (Open3D's
        ``set_front``, ``set_up``). The default looks down the -z axis with y up.
    point_size : float
        Point size in pixels.
    background : (3,) floats in [0, 1]
    projection : {"perspective", "orthographic"}
    renderer : {"auto", "open3d", "numpy"}
        ``"auto"`` tries Open3D and falls back to numpy when Open3D fails; ``"open3d"``
        raises instead.

    Returns
    -------
    Preview
        The path, the renderer that drew it and, after a fallback, Open3D's error.

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "cloud.png")
    >>> preview_png([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]], out, (64, 48), renderer="numpy")
    ... # doctest: +ELLIPSIS
    Preview(path=PosixPath('...cloud.png'), renderer='numpy', reason=None)
    """
    P, C, N = arrays_from_cloud(cloud, colors)
    w, h = _check_size(size)
    bg = _check_color3("background", background)
    if renderer not in _RENDERERS:
        raise ValueError(f"renderer must be one of {_RENDERERS}, got {renderer!r}")
    if projection not in ("perspective", "orthographic"):
        raise ValueError(f"projection must be 'perspective' or 'orthographic', got "
                         f"{projection!r}")
    if not (np.isfinite(point_size) and 0 < point_size <= 64):
        raise ValueError(f"point_size must be in (0, 64] pixels, got {point_size!r}")
    look_at_frame(P, front, up)  # validates front and up
    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"path {path}: the folder {path.parent} does not exist")
    reason = None
    image = None
    if renderer in ("auto", "open3d"):
        try:
            image = _render_open3d(P, C, N, (w, h), front, up, point_size, bg, projection)
            used = "open3d"
        except RuntimeError as exc:
            if renderer == "open3d":
                raise
            reason = str(exc)
    if image is None:
        image = render_points(P, C, (w, h), front=front, up=up, point_size=point_size,
                              background=bg, projection=projection)
        used = "numpy"
    atomic_write_bytes(path, _encode_png(image))
    return Preview(path, used, reason)


# -- interactive window ---------------------------------------------------------------------------
_X_PROBE = """
import ctypes, ctypes.util, sys
lib = ctypes.util.find_library("X11")
if lib is None:
    sys.exit(3)
x11 = ctypes.CDLL(lib)
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
d = x11.XOpenDisplay(None)
sys.exit(0 if d else 2)
"""


def display_problem(timeout: float = DISPLAY_PROBE_TIMEOUT) -> str | None:
    """Why no interactive window can be opened here, or None when a display is reachable.

    An X display (``DISPLAY``) is probed by opening a connection in a child process, stopped
    after ``timeout`` seconds (a remote ``DISPLAY`` can otherwise block for minutes); a
    Wayland display (``WAYLAND_DISPLAY`` alone) by connecting to its socket.

    Parameters
    ----------
    timeout : float
        Seconds allowed to the X probe.

    Returns
    -------
    reason : str or None
    """
    display = os.environ.get("DISPLAY", "")
    wayland = os.environ.get("WAYLAND_DISPLAY", "")
    if not display and not wayland:
        return "no display (DISPLAY and WAYLAND_DISPLAY are unset)"
    if display:
        if ctypes.util.find_library("X11") is None:
            return f"DISPLAY={display} but libX11 is not installed"
        try:
            rc = subprocess.run([sys.executable, "-c", _X_PROBE], timeout=timeout,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL).returncode
        except subprocess.TimeoutExpired:
            return f"the X display {display} did not answer within {timeout:g} s"
        return None if rc == 0 else f"cannot open the X display {display}"
    sock = Path(wayland)
    if not sock.is_absolute():
        sock = Path(os.environ.get("XDG_RUNTIME_DIR", "/nonexistent")) / wayland
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(sock))
    except OSError as exc:
        return f"cannot connect to the Wayland display {sock} ({exc.strerror or exc})"
    return None


@contextmanager
def _capture_output_fds():
    """Redirect file descriptors 1 and 2 (where Open3D, GLFW and Mesa write) to a temporary
    file; yield the file."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        try:
            yield tmp
        finally:
            for fd, old in ((1, saved[0]), (2, saved[1])):
                os.dup2(old, fd)
                os.close(old)


def _open_window(o3d, title: str, size):
    """A visible Open3D window, or (None, reason) when Open3D went offscreen instead."""
    vis = o3d.visualization.Visualizer()
    with _capture_output_fds() as log, \
            o3d.utility.VerbosityContextManager(o3d.utility.VerbosityLevel.Info):
        ok = vis.create_window(window_name=title, width=size[0], height=size[1], visible=True)
        log.seek(0)
        text = log.read().decode("utf-8", "replace")
    if not ok:
        return None, "Open3D could not create a window"
    if any(m in text for m in _HEADLESS_MARKERS):
        vis.destroy_window()
        return None, "Open3D found no usable display and went offscreen"
    return vis, None


def show(cloud, *, colors=None, title="xslit", size=(1024, 768), point_size=2.0,
         background=(1.0, 1.0, 1.0), png_path=None, stream=None) -> ShowResult:
    """Show a point cloud in Open3D's window, or write a PNG preview when there is no display.

    With a reachable display (see :func:`display_problem`) this opens Open3D's interactive
    window and returns when the user closes it. Otherwise it never blocks: it writes a
    preview with :func:`preview_png` and prints one line saying where.

    Parameters
    ----------
    cloud : (N, 3) array_like, (points, colors) tuple, open3d PointCloud, str or Path
        Anything :func:`xslit.viz.arrays_from_cloud` accepts.
    colors : (N, 3) array_like, optional
    title : str
        Window title.
    size : (int, int)
        ``(width, height)`` of the window and of the preview.
    point_size : float
    background : (3,) floats in [0, 1]
    png_path : str or Path, optional
        Where to write the preview without a display (default: a new file
        ``xslit-view-*.png`` in the temporary folder).
    stream : file-like, optional
        Where to say it (default ``sys.stderr``).

    Returns
    -------
    ShowResult
    """
    P, C, N = arrays_from_cloud(cloud, colors)
    w, h = _check_size(size)
    bg = _check_color3("background", background)
    stream = sys.stderr if stream is None else stream
    reason = display_problem()
    if reason is None:
        o3d = import_open3d()
        vis, reason = _open_window(o3d, str(title), (w, h))
        if vis is not None:
            try:
                vis.add_geometry(_open3d_cloud(o3d, P, C, N))
                opt = vis.get_render_option()
                opt.point_size = float(point_size)
                opt.background_color = bg
                vis.run()
            finally:
                vis.destroy_window()
            return ShowResult(True)
    if png_path is None:
        fd, png_path = tempfile.mkstemp(prefix="xslit-view-", suffix=".png")
        os.close(fd)
    preview = preview_png((P, C), png_path, (w, h), point_size=point_size, background=bg)
    print(f"xslit: {reason}; wrote a preview to {preview.path}", file=stream)
    return ShowResult(False, preview.path, reason)
