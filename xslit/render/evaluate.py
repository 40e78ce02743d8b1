"""Measuring a reconstruction against the renderer's ground truth: matches and point clouds.

Every sample and the ``xslit reconstruct`` command judge their results with these two
functions, so that their figures mean the same thing.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_image_points, check_object_points

__all__ = ["cloud_metrics", "match_errors"]


def match_errors(render1, camera2, points1, points2) -> np.ndarray:
    """Distance (pixels) of each match to its true correspondence.

    The truth of a match ``points1[i] <-> points2[i]`` is the surface point under the pixel of
    ``points1[i]`` nearest to it in ``render1`` (the renderer's hit point), projected by
    ``camera2``.

    Parameters
    ----------
    render1 : dict
        :func:`xslit.renderImage`'s result for view 1 (``"points"``, ``"mask"``).
    camera2 : xslit.Camera
    points1, points2 : (N, 2) array_like

    Returns
    -------
    (N,) float64 ndarray
        ``inf`` where the pixel of view 1 sees no surface or the truth does not project.
    """
    p1 = check_image_points("points1", points1)
    p2 = check_image_points("points2", points2)
    if len(p1) != len(p2):
        raise ValueError(f"points1 and points2 must have the same number of points, got "
                         f"{len(p1)} and {len(p2)}")
    h, w = render1["mask"].shape
    ij = np.clip(np.round(p1).astype(int), 0, [w - 1, h - 1])
    hit = render1["mask"][ij[:, 1], ij[:, 0]]
    err = np.full(len(p1), np.inf)
    if hit.any():
        with np.errstate(invalid="ignore"):
            err[hit] = np.linalg.norm(
                camera2.project(render1["points"][ij[hit, 1], ij[hit, 0]]) - p2[hit], axis=1)
    return np.nan_to_num(err, nan=np.inf)


def cloud_metrics(points, surface=None, *, scene=None, diameter=None) -> dict:
    r"""Accuracy, completeness and Chamfer distance of a point cloud against the truth.

    *Accuracy* is the mean distance of the reconstructed points to the true surface: to the
    mesh of ``scene`` when given (exact, Open3D's ``compute_distance``), else to the nearest of
    the ``surface`` points. *Completeness* is the mean distance of the ``surface`` points (the
    part of the truth that should be reconstructed, e.g. what both views see) to the nearest
    reconstructed point. The *Chamfer distance* is their mean. Each is also given as a
    fraction of ``diameter`` (``*_rel``).

    Parameters
    ----------
    points : (N, 3) array_like
        The reconstruction, in the truth's frame.
    surface : (M, 3) array_like, optional
        True surface points; without them only the accuracy is computed (from ``scene``).
    scene : xslit.render.Scene, optional
        The true mesh.
    diameter : float, optional
        Scale of the scene; default: the bounding-box diagonal of ``surface`` (or of the
        scene's vertices).

    Returns
    -------
    dict
        ``points``, ``scene_diameter``, ``accuracy``, ``accuracy_median`` and, with
        ``surface``, ``completeness`` and ``chamfer``; the ``*_rel`` fractions.

    Examples
    --------
    >>> X = np.array([[0.0, 0, 0], [1, 0, 0]])
    >>> m = cloud_metrics(X + [0, 0.1, 0], X)
    >>> round(m["chamfer"], 9), round(m["chamfer_rel"], 9)
    (0.1, 0.1)
    """
    X = check_object_points("points", points)
    if X.shape[1] != 3:
        raise ValueError(f"points must have shape (N, 3), got {X.shape}")
    if surface is None and scene is None:
        raise ValueError("surface or scene must be given: the truth to measure against")
    G = None if surface is None else check_object_points("surface", surface)
    if diameter is None:
        ref = G if G is not None else scene.vertices
        diameter = float(np.linalg.norm(ref.max(axis=0) - ref.min(axis=0)))
    out = {"points": len(X), "scene_diameter": float(diameter)}
    if not len(X):
        return out
    from scipy.spatial import cKDTree

    if scene is not None:
        import open3d as o3d

        d_acc = scene.raycaster.compute_distance(
            o3d.core.Tensor(X.astype(np.float32))).numpy().astype(np.float64)
    else:
        d_acc = cKDTree(G).query(X)[0]
    out.update(accuracy=float(d_acc.mean()), accuracy_median=float(np.median(d_acc)))
    if G is not None and len(G):
        comp = float(cKDTree(X).query(G)[0].mean())
        out.update(completeness=comp, chamfer=(out["accuracy"] + comp) / 2)
    if diameter > 0:
        for key in ("accuracy", "accuracy_median", "completeness", "chamfer"):
            if key in out:
                out[f"{key}_rel"] = out[key] / diameter
    return out
