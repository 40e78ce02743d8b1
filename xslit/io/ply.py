"""Binary PLY point clouds (positions, optional RGB colours), written without Open3D."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._checks import check_array
from .files import atomic_write_bytes

__all__ = ["read_ply", "write_ply"]

_TYPES = {"float": "f4", "float32": "f4", "double": "f8", "float64": "f8", "uchar": "u1",
          "uint8": "u1", "char": "i1", "int8": "i1", "short": "i2", "int16": "i2",
          "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4",
          "uint32": "u4"}


def write_ply(path, points, colors=None) -> None:
    """Write a binary little-endian PLY point cloud, atomically.

    Parameters
    ----------
    points : (N, 3) array_like
        Positions, stored as float64 (``double``) so that ground truth is exact.
    colors : (N, 3) array_like of integers in [0, 255], optional
        RGB colours.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "p.ply")
    >>> write_ply(path, [[0.0, 1.0, 2.0]], [[255, 0, 0]])
    >>> read_ply(path)[0]
    array([[0., 1., 2.]])
    """
    P = check_array("points", points)
    if P.ndim != 2 or P.shape[1] != 3:
        raise ValueError(f"points must have shape (N, 3), got {P.shape}")
    fields = [("x", "<f8"), ("y", "<f8"), ("z", "<f8")]
    header = ["ply", "format binary_little_endian 1.0", f"element vertex {len(P)}",
              "property double x", "property double y", "property double z"]
    if colors is not None:
        C = np.asarray(colors)
        if (C.shape != P.shape or C.dtype.kind not in "ui"
                or (C.size and (C.min() < 0 or C.max() > 255))):
            raise ValueError(f"colors must be integers in [0, 255] of shape {P.shape}, got "
                             f"{C.dtype} {C.shape}")
        fields += [("red", "u1"), ("green", "u1"), ("blue", "u1")]
        header += ["property uchar red", "property uchar green", "property uchar blue"]
    rec = np.empty(len(P), dtype=fields)
    rec["x"], rec["y"], rec["z"] = P.T
    if colors is not None:
        rec["red"], rec["green"], rec["blue"] = C.T
    data = ("\n".join([*header, "end_header"]) + "\n").encode("ascii") + rec.tobytes()
    atomic_write_bytes(path, data)


def read_ply(path, *, label: str | None = None):
    """Read the vertices of a binary little-endian or ASCII PLY file.

    Returns
    -------
    points : (N, 3) float64 ndarray
    colors : (N, 3) uint8 ndarray or None

    Raises ValueError naming the file when the header or the data are malformed or truncated.
    """
    path = Path(path)
    name = label or str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{name}: file is missing") from None
    end = raw.find(b"end_header\n")
    if not raw.startswith(b"ply") or end < 0:
        raise ValueError(f"{name}: not a PLY file (no 'ply' magic or no end_header)")
    lines = raw[:end].decode("ascii", "replace").splitlines()
    body = raw[end + len(b"end_header\n"):]
    fmt, count, props, element = None, None, [], None
    for line in lines[1:]:
        words = line.split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        if words[0] == "format":
            fmt = words[1]
        elif words[0] == "element":
            element = words[1]
            if element == "vertex":
                count = int(words[2])
        elif words[0] == "property" and element == "vertex":
            if words[1] == "list" or words[1] not in _TYPES:
                raise ValueError(f"{name}: unsupported vertex property {line!r}")
            props.append((words[2], _TYPES[words[1]]))
    if count is None or not {"x", "y", "z"} <= {p for p, _ in props}:
        raise ValueError(f"{name}: PLY header lacks a vertex element with x, y, z")
    if fmt == "binary_little_endian":
        dtype = np.dtype([(p, "<" + t) for p, t in props])
        if len(body) < count * dtype.itemsize:
            raise ValueError(f"{name}: truncated PLY data: {count} vertices need "
                             f"{count * dtype.itemsize} bytes, found {len(body)}")
        rec = np.frombuffer(body, dtype=dtype, count=count)
        cols = {p: rec[p] for p, _ in props}
    elif fmt == "ascii":
        try:
            table = np.loadtxt(body.decode("ascii").splitlines()[:count], ndmin=2)
        except ValueError as exc:
            raise ValueError(f"{name}: malformed ASCII PLY data ({exc})") from None
        if table.shape != (count, len(props)):
            raise ValueError(f"{name}: expected {count} vertices of {len(props)} values, got "
                             f"{table.shape}")
        cols = {p: table[:, k] for k, (p, _) in enumerate(props)}
    else:
        raise ValueError(f"{name}: unsupported PLY format {fmt!r}")
    points = np.stack([cols["x"], cols["y"], cols["z"]], axis=1).astype(np.float64)
    colors = None
    if {"red", "green", "blue"} <= cols.keys():
        colors = np.stack([cols["red"], cols["green"], cols["blue"]], axis=1).astype(np.uint8)
    return points, colors
