"""The lazy OpenCV import of the feature layer: ``import xslit`` never loads cv2."""

from __future__ import annotations

__all__ = ["import_cv2"]


def import_cv2():
    """Return the ``cv2`` module, or raise a RuntimeError that says what to install."""
    try:
        import cv2
    except (ImportError, OSError) as exc:
        raise RuntimeError(f"xslit.features needs OpenCV (pip install opencv-python): {exc}"
                           ) from exc
    return cv2
