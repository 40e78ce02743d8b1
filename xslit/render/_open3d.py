"""Lazy imports of the heavy optional libraries the renderer needs (Open3D, OpenCV).

``import xslit`` never loads these; the renderer calls :func:`import_open3d` and
:func:`import_cv2` where it needs them, and a missing system library gives an error that says
what to install.
"""

from __future__ import annotations

__all__ = ["import_cv2", "import_open3d"]


def import_open3d():
    """Return the ``open3d`` module, or raise a RuntimeError that says what to install."""
    try:
        import open3d
    except (ImportError, OSError) as exc:
        if "libusb" in str(exc):
            raise RuntimeError(
                f"Open3D could not load the system library libusb-1.0 ({exc}); install it with "
                "'apt-get install libusb-1.0-0' (Debian/Ubuntu) and try again"
            ) from exc
        raise RuntimeError(f"xslit.render needs Open3D (pip install open3d): {exc}") from exc
    return open3d


def import_cv2():
    """Return the ``cv2`` module, or raise a RuntimeError that says what to install."""
    try:
        import cv2
    except (ImportError, OSError) as exc:
        raise RuntimeError(f"xslit.render needs OpenCV (pip install opencv-python): {exc}") from exc
    return cv2
