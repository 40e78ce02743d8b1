"""Open3D, imported where the viewer needs it, with an install hint for missing system libraries.

``import xslit`` and ``import xslit.viz`` never load Open3D; each function that needs it calls
:func:`import_open3d`.
"""

from __future__ import annotations

__all__ = ["import_open3d"]

#: Debian packages providing the shared libraries Open3D's wheel links against or opens.
_DEBIAN_PACKAGES = {"libusb": "libusb-1.0-0", "libEGL": "libegl1", "libGL.": "libgl1",
                    "libX11": "libx11-6", "libgomp": "libgomp1"}


def import_open3d():
    """Return the ``open3d`` module, or raise a RuntimeError that says what to install.

    Raises
    ------
    RuntimeError
        When Open3D is not installed, or a system library it needs is missing (the message
        names the Debian package, e.g. ``libegl1``, and ``tools/check_system_deps.sh``).
    """
    try:
        import open3d
    except (ImportError, OSError) as exc:
        text = str(exc)
        for lib, package in _DEBIAN_PACKAGES.items():
            if lib in text:
                raise RuntimeError(
                    f"Open3D could not load a system library ({exc}); install it with "
                    f"'apt-get install {package}' (Debian/Ubuntu; tools/check_system_deps.sh "
                    "installs every package xslit needs) and try again") from exc
        raise RuntimeError(f"xslit.viz needs Open3D (pip install open3d): {exc}") from exc
    return open3d
