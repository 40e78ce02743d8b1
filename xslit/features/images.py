"""Validation of images and detection masks for the feature layer (``check_*``).

Images are ``uint8`` arrays as :func:`xslit.renderImage` returns them: ``(H, W, 3)`` RGB, or
grayscale ``(H, W)`` / ``(H, W, 1)``; ``(H, W, 4)`` RGBA is accepted and its alpha ignored.
"""

from __future__ import annotations

import numpy as np

__all__ = ["check_detection_mask", "check_image", "gray_from_image", "rgb_from_image"]


def check_image(name: str, image) -> np.ndarray:
    """Validate an 8-bit image and return it as an ndarray (not copied).

    Parameters
    ----------
    name : str
        Argument name for the error message.
    image : (H, W, 3) or (H, W) or (H, W, 1) or (H, W, 4) uint8 array_like
        RGB (as ``xslit.renderImage(...)["image"]``), grayscale or RGBA; ``H, W >= 1``.

    Returns
    -------
    image : ndarray
        The same array, ``(H, W)`` or ``(H, W, C)`` uint8.

    Raises
    ------
    ValueError
        Naming ``name``: None, a dtype other than uint8, a wrong shape or an empty image.

    Examples
    --------
    >>> check_image("image1", np.zeros((4, 5, 3), np.uint8)).shape
    (4, 5, 3)
    >>> check_image("image1", np.zeros((4, 5)))
    Traceback (most recent call last):
    ...
    ValueError: image1 must be a uint8 image (8-bit, as renderImage returns), got dtype float64
    """
    if image is None:
        raise ValueError(f"{name} must be an image array, got None")
    try:
        a = np.asarray(image)
    except ValueError:  # a ragged list
        raise ValueError(f"{name} must be an image array, got a ragged "
                         f"{type(image).__name__}") from None
    if a.dtype != np.uint8:
        raise ValueError(f"{name} must be a uint8 image (8-bit, as renderImage returns), "
                         f"got dtype {a.dtype}")
    if not (a.ndim == 2 or (a.ndim == 3 and a.shape[2] in (1, 3, 4))):
        raise ValueError(f"{name} must have shape (H, W, 3) (RGB), (H, W) or (H, W, 1) "
                         f"(grayscale) or (H, W, 4) (RGBA), got {a.shape}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"{name} must not be empty, got shape {a.shape}")
    return a


def gray_from_image(image: np.ndarray) -> np.ndarray:
    """Grayscale ``(H, W)`` uint8 of a checked image (RGB weights as cv2.COLOR_RGB2GRAY).

    Examples
    --------
    >>> gray_from_image(np.full((1, 2, 3), 200, np.uint8))
    array([[200, 200]], dtype=uint8)
    """
    if image.ndim == 2:
        return np.ascontiguousarray(image)
    if image.shape[2] == 1:
        return np.ascontiguousarray(image[:, :, 0])
    rgb = image[:, :, :3].astype(np.float64)
    gray = rgb @ np.array([0.299, 0.587, 0.114])
    return np.clip(np.rint(gray), 0, 255).astype(np.uint8)


def rgb_from_image(image: np.ndarray) -> np.ndarray:
    """A contiguous ``(H, W, 3)`` uint8 RGB copy of a checked image (gray repeated, alpha dropped).

    Examples
    --------
    >>> rgb_from_image(np.zeros((2, 3), np.uint8)).shape
    (2, 3, 3)
    """
    if image.ndim == 2:
        image = image[:, :, None]
    if image.shape[2] == 1:
        return np.repeat(image, 3, axis=2)
    return np.array(image[:, :, :3], dtype=np.uint8, order="C")


def check_detection_mask(name: str, mask, shape: tuple[int, int]) -> np.ndarray | None:
    """Validate a detection mask: ``(H, W)`` booleans or numbers, non-zero where to detect.

    Parameters
    ----------
    name : str
    mask : (H, W) array_like or None
        Same height and width as the image (e.g. ``renderImage(...)["mask"]``).
    shape : (H, W)
        The image's height and width.

    Returns
    -------
    mask : (H, W) uint8 ndarray or None
        255 where features may be detected, 0 elsewhere (cv2's convention).

    Examples
    --------
    >>> check_detection_mask("mask1", [[True, False]], (1, 2))
    array([[255,   0]], dtype=uint8)
    """
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.dtype == object or not (m.dtype == bool or np.issubdtype(m.dtype, np.number)):
        raise ValueError(f"{name} must be an (H, W) array of booleans or numbers, "
                         f"got dtype {m.dtype}")
    if m.shape != tuple(shape):
        raise ValueError(f"{name} must have the image's shape {tuple(shape)}, got {m.shape}")
    if np.issubdtype(m.dtype, np.floating) and not np.all(np.isfinite(m)):
        raise ValueError(f"{name} must be finite (0 to exclude, non-zero to detect)")
    return np.where(m != 0, 255, 0).astype(np.uint8)
