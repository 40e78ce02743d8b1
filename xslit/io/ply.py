"""PLY files in numpy: a reader for every valid PLY and a binary point-cloud writer.

The reader follows the PLY format as Greg Turk defined it: an ASCII header (``format ascii``,
``binary_little_endian`` or ``binary_big_endian``, version 1.0), then the elements in the order
the header declares them (a ``face`` element may come before ``vertex``), each with scalar
properties of the types ``char uchar short ushort int uint float double`` (or their sized
aliases ``int8 ... float64``) and list properties (``property list uchar int vertex_indices``).
Binary elements without lists are read with one ``numpy.frombuffer``; lists of one length per
element (triangle meshes) are read the same way, other lists row by row.

Malformed files are refused with a ValueError naming the file and what is wrong (a negative or
non-integer element count, an unknown type, truncated data, a value that is not a number).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np

from .._checks import check_array
from .files import atomic_write_bytes

__all__ = ["check_colors", "read_ply", "read_ply_cloud", "read_ply_elements", "write_ply"]

_TYPES = {"char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2",
          "int16": "i2", "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4",
          "uint": "u4", "uint32": "u4", "float": "f4", "float32": "f4", "double": "f8",
          "float64": "f8"}
_FORMATS = {"ascii": None, "binary_little_endian": "<", "binary_big_endian": ">"}
_END_HEADER = re.compile(rb"^end_header[ \t]*\r?\n", re.MULTILINE)
_COUNT = re.compile(r"^[0-9]+$")
#: Colour property names, in the order tried: PLY's usual names, then MeshLab's.
_COLOR_NAMES = (("red", "green", "blue"), ("diffuse_red", "diffuse_green", "diffuse_blue"),
                ("r", "g", "b"))
#: Float colours may exceed [0, 1] by this much (rounding in other writers), then are clipped.
_COLOR_SLACK = 1e-6


# -- colours ---------------------------------------------------------------------------------
def check_colors(name: str, value, n: int) -> np.ndarray:
    """Validate RGB colours and return them as float64 in [0, 1], as Open3D keeps them.

    Parameters
    ----------
    name : str
        The argument's name, for error messages.
    value : (N, 3) array_like
        Either integers in [0, 255] (``uint8`` or any integer type; divided by 255) or
        floats in [0, 1].
    n : int
        The number of points the colours belong to.

    Returns
    -------
    colors : (N, 3) float64 ndarray

    Examples
    --------
    >>> check_colors("colors", np.array([[255, 0, 51]], np.uint8), 1)
    array([[1. , 0. , 0.2]])
    """
    a = np.asarray(value)
    if a.dtype == object or a.dtype.kind not in "buif" or a.shape != (n, 3):
        raise ValueError(f"{name} must be an ({n}, 3) array of uint8 in [0, 255] or floats in "
                         f"[0, 1], got {a.dtype} {a.shape}")
    if a.dtype.kind == "f":
        if not np.isfinite(a).all():
            raise ValueError(f"{name} must be finite, got NaN or inf")
        if a.size and (a.min() < -_COLOR_SLACK or a.max() > 1 + _COLOR_SLACK):
            raise ValueError(f"float {name} must be in [0, 1], got values in [{a.min():g}, "
                             f"{a.max():g}] (pass uint8 for colours in [0, 255])")
        return np.clip(a.astype(np.float64), 0.0, 1.0)
    if a.size and (a.min() < 0 or a.max() > 255):
        raise ValueError(f"integer {name} must be in [0, 255], got values in [{a.min()}, "
                         f"{a.max()}]")
    return a.astype(np.float64) / 255.0


def _colors_uint8(name: str, value, n: int) -> np.ndarray:
    a = np.asarray(value)
    if a.dtype.kind in "ui" and a.shape == (n, 3):
        check_colors(name, a, n)  # range check only
        return a.astype(np.uint8)
    return np.round(check_colors(name, a, n) * 255.0).astype(np.uint8)


# -- writer ----------------------------------------------------------------------------------
def write_ply(path, points, colors=None, normals=None) -> None:
    """Write a binary little-endian PLY point cloud, atomically.

    The properties are written in Open3D's order and types (``double x y z``, ``double nx ny
    nz``, ``uchar red green blue``), so that ``open3d.io.read_point_cloud`` reads the file.

    Parameters
    ----------
    path : str or Path
    points : (N, 3) array_like
        Positions, stored as float64 (``double``) so that ground truth is exact.
    colors : (N, 3) array_like, optional
        RGB colours: integers in [0, 255] (``uint8``), or floats in [0, 1] as Open3D keeps
        them (stored as ``round(255 c)``).
    normals : (N, 3) array_like, optional
        Normals, stored as float64.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "p.ply")
    >>> write_ply(path, [[0.0, 1.0, 2.0]], [[1.0, 0.0, 0.5]])
    >>> read_ply(path)
    (array([[0., 1., 2.]]), array([[255,   0, 128]], dtype=uint8))
    """
    P = check_array("points", points)
    if P.ndim != 2 or P.shape[1] != 3:
        raise ValueError(f"points must have shape (N, 3), got {P.shape}")
    n = len(P)
    fields = [("x", "<f8"), ("y", "<f8"), ("z", "<f8")]
    header = ["ply", "format binary_little_endian 1.0", "comment written by xslit",
              f"element vertex {n}", "property double x", "property double y",
              "property double z"]
    N = None
    if normals is not None:
        N = check_array("normals", normals)
        if N.shape != (n, 3):
            raise ValueError(f"normals must have shape ({n}, 3) like points, got {N.shape}")
        fields += [("nx", "<f8"), ("ny", "<f8"), ("nz", "<f8")]
        header += ["property double nx", "property double ny", "property double nz"]
    C = None
    if colors is not None:
        C = _colors_uint8("colors", colors, n)
        fields += [("red", "u1"), ("green", "u1"), ("blue", "u1")]
        header += ["property uchar red", "property uchar green", "property uchar blue"]
    rec = np.empty(n, dtype=fields)
    rec["x"], rec["y"], rec["z"] = P.T
    if N is not None:
        rec["nx"], rec["ny"], rec["nz"] = N.T
    if C is not None:
        rec["red"], rec["green"], rec["blue"] = C.T
    data = ("\n".join([*header, "end_header"]) + "\n").encode("ascii") + rec.tobytes()
    atomic_write_bytes(path, data)


# -- header ----------------------------------------------------------------------------------
class _Property:
    __slots__ = ("count_type", "name", "type")

    def __init__(self, name: str, type_: str, count_type: str | None):
        self.name, self.type, self.count_type = name, type_, count_type


class _Element:
    __slots__ = ("count", "name", "properties")

    def __init__(self, name: str, count: int):
        self.name, self.count, self.properties = name, count, []

    @property
    def has_lists(self) -> bool:
        return any(p.count_type is not None for p in self.properties)


def _parse_header(raw: bytes, name: str):
    """Format, elements and the offset of the body; ValueError naming the file."""
    if not (raw.startswith(b"ply\n") or raw.startswith(b"ply\r\n")):
        raise ValueError(f"{name}: not a PLY file (it does not start with the line 'ply')")
    m = _END_HEADER.search(raw)
    if m is None:
        raise ValueError(f"{name}: PLY header has no 'end_header' line")
    lines = raw[:m.start()].decode("latin-1").splitlines()[1:]
    fmt = None
    elements: list[_Element] = []
    for lineno, line in enumerate(lines, start=2):
        words = line.split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        key = words[0]
        where = f"{name}: header line {lineno} {line.strip()!r}"
        if key == "format":
            if fmt is not None or len(words) != 3 or words[1] not in _FORMATS:
                raise ValueError(f"{where}: expected one 'format ascii|binary_little_endian|"
                                 "binary_big_endian 1.0' line")
            if words[2] not in ("1.0", "1"):
                raise ValueError(f"{where}: unsupported PLY version {words[2]} (expected 1.0)")
            fmt = words[1]
        elif key == "element":
            if len(words) != 3:
                raise ValueError(f"{where}: expected 'element NAME COUNT'")
            if not _COUNT.match(words[2]):
                raise ValueError(f"{name}: element {words[1]} {words[2]}: the count must be a "
                                 f"non-negative integer (header line {lineno})")
            if any(e.name == words[1] for e in elements):
                raise ValueError(f"{where}: element {words[1]} is declared twice")
            elements.append(_Element(words[1], int(words[2])))
        elif key == "property":
            if not elements:
                raise ValueError(f"{where}: property before any element")
            if len(words) == 3 and words[1] in _TYPES:
                prop = _Property(words[2], _TYPES[words[1]], None)
            elif (len(words) == 5 and words[1] == "list" and words[2] in _TYPES
                  and words[3] in _TYPES):
                if _TYPES[words[2]][0] not in "iu":
                    raise ValueError(f"{where}: a list's count type must be an integer type, "
                                     f"got {words[2]}")
                prop = _Property(words[4], _TYPES[words[3]], _TYPES[words[2]])
            else:
                raise ValueError(f"{where}: expected 'property TYPE NAME' or 'property list "
                                 f"COUNT_TYPE TYPE NAME' with TYPE one of {sorted(_TYPES)}")
            el = elements[-1]
            if any(p.name == prop.name for p in el.properties):
                raise ValueError(f"{where}: property {prop.name} of element {el.name} is "
                                 "declared twice")
            el.properties.append(prop)
        else:
            raise ValueError(f"{where}: unknown keyword {key!r}")
    if fmt is None:
        raise ValueError(f"{name}: PLY header has no 'format' line")
    return fmt, elements, m.end()


# -- body: binary ----------------------------------------------------------------------------
def _truncated(name: str, el: _Element, need: int, have: int) -> ValueError:
    return ValueError(f"{name}: truncated PLY data: element {el.name} ({el.count} rows) needs "
                      f"{need} more bytes, found {max(have, 0)}")


def _binary_element(raw: bytes, pos: int, el: _Element, endian: str, name: str):
    """Columns of one binary element and the offset after it."""
    if not el.has_lists:
        dtype = np.dtype([(p.name, endian + p.type) for p in el.properties])
        need = el.count * dtype.itemsize
        if len(raw) - pos < need:
            raise _truncated(name, el, need, len(raw) - pos)
        rec = np.frombuffer(raw, dtype=dtype, count=el.count, offset=pos)
        return {p.name: rec[p.name] for p in el.properties}, pos + need
    if el.count == 0:
        return {p.name: (np.zeros((0, 0), endian + p.type) if p.count_type else
                         np.zeros(0, endian + p.type)) for p in el.properties}, pos
    # Lengths of the first row's lists; try them as the lengths of every row.
    lengths, off = [], pos
    for p in el.properties:
        if p.count_type is not None:
            size = np.dtype(p.count_type).itemsize
            if len(raw) - off < size:
                raise _truncated(name, el, size, len(raw) - off)
            k = int(np.frombuffer(raw, endian + p.count_type, 1, off)[0])
            lengths.append(k)
            off += size + k * np.dtype(p.type).itemsize
        else:
            off += np.dtype(p.type).itemsize
    fields, li = [], 0
    for p in el.properties:
        if p.count_type is not None:
            fields.append(("__n_" + p.name, endian + p.count_type))
            fields.append((p.name, endian + p.type, (lengths[li],)))
            li += 1
        else:
            fields.append((p.name, endian + p.type))
    dtype = np.dtype(fields)
    if len(raw) - pos >= el.count * dtype.itemsize:
        rec = np.frombuffer(raw, dtype=dtype, count=el.count, offset=pos)
        if all((rec["__n_" + p.name] == k).all() for p, k in
               zip((p for p in el.properties if p.count_type), lengths, strict=True)):
            return ({p.name: rec[p.name] for p in el.properties},
                    pos + el.count * dtype.itemsize)
    return _binary_rows(raw, pos, el, endian, name)


def _binary_rows(raw: bytes, pos: int, el: _Element, endian: str, name: str):
    """Row-by-row reading of an element whose lists vary in length."""
    codes = {"i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "f4": "f",
             "f8": "d"}
    cols: dict[str, list] = {p.name: [] for p in el.properties}
    for _ in range(el.count):
        for p in el.properties:
            if p.count_type is None:
                fmt = endian + codes[p.type]
                size = struct.calcsize(fmt)
                if len(raw) - pos < size:
                    raise _truncated(name, el, size, len(raw) - pos)
                cols[p.name].append(struct.unpack_from(fmt, raw, pos)[0])
                pos += size
                continue
            cfmt = endian + codes[p.count_type]
            size = struct.calcsize(cfmt)
            if len(raw) - pos < size:
                raise _truncated(name, el, size, len(raw) - pos)
            k = struct.unpack_from(cfmt, raw, pos)[0]
            pos += size
            if k < 0:
                raise ValueError(f"{name}: element {el.name}: negative list length {k} in "
                                 f"property {p.name}")
            need = k * np.dtype(p.type).itemsize
            if len(raw) - pos < need:
                raise _truncated(name, el, need, len(raw) - pos)
            cols[p.name].append(np.frombuffer(raw, endian + p.type, k, pos).copy())
            pos += need
    return {p.name: _column(cols[p.name], p, endian) for p in el.properties}, pos


def _column(values: list, p: _Property, endian: str = "="):
    if p.count_type is None:
        return np.asarray(values, dtype=endian + p.type)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


# -- body: ASCII -----------------------------------------------------------------------------
def _numbers(tokens: list, name: str, el: _Element) -> np.ndarray:
    try:
        return np.array(tokens, dtype="S").astype(np.float64)
    except ValueError as exc:
        raise ValueError(f"{name}: malformed ASCII PLY data in element {el.name} ({exc})") from None


def _ascii_element(tokens: list, pos: int, el: _Element, name: str):
    """Columns of one ASCII element and the token index after it."""
    props = el.properties
    if not el.has_lists:
        need = el.count * len(props)
        if len(tokens) - pos < need:
            raise ValueError(f"{name}: truncated PLY data: element {el.name} needs {el.count} "
                             f"rows of {len(props)} values, found {len(tokens) - pos} values")
        table = _numbers(tokens[pos:pos + need], name, el).reshape(el.count, len(props))
        return ({p.name: _cast(table[:, k], p, name, el) for k, p in enumerate(props)},
                pos + need)
    if el.count == 0:
        return {p.name: _column([], p) for p in props}, pos
    # The first row's list lengths, tried for every row.
    lengths, off = [], pos
    for p in props:
        if off >= len(tokens):
            raise ValueError(f"{name}: truncated PLY data in element {el.name}")
        if p.count_type is not None:
            k = _list_length(tokens[off], name, el, p)
            lengths.append(k)
            off += 1 + k
        else:
            off += 1
    width = off - pos
    need = el.count * width
    if len(tokens) - pos >= need:
        table = _numbers(tokens[pos:pos + need], name, el).reshape(el.count, width)
        cols, c, ok, li = {}, 0, True, 0
        for p in props:
            if p.count_type is None:
                cols[p.name] = _cast(table[:, c], p, name, el)
                c += 1
                continue
            k = lengths[li]
            li += 1
            if not (table[:, c] == k).all():
                ok = False
                break
            cols[p.name] = _cast(table[:, c + 1:c + 1 + k], p, name, el)
            c += 1 + k
        if ok:
            return cols, pos + need
    lists: dict[str, list] = {p.name: [] for p in props}
    for _ in range(el.count):
        for p in props:
            if pos >= len(tokens):
                raise ValueError(f"{name}: truncated PLY data in element {el.name}: "
                                 f"{el.count} rows declared")
            if p.count_type is None:
                lists[p.name].append(tokens[pos])
                pos += 1
                continue
            k = _list_length(tokens[pos], name, el, p)
            if len(tokens) - pos - 1 < k:
                raise ValueError(f"{name}: truncated PLY data in element {el.name}: "
                                 f"{el.count} rows declared")
            lists[p.name].append(_cast(_numbers(tokens[pos + 1:pos + 1 + k], name, el),
                                       p, name, el))
            pos += 1 + k
    cols = {}
    for p in props:
        if p.count_type is None:
            cols[p.name] = _cast(_numbers(lists[p.name], name, el), p, name, el)
        else:
            cols[p.name] = _column(lists[p.name], p)
    return cols, pos


def _list_length(token: bytes, name: str, el: _Element, p: _Property) -> int:
    if not token.isdigit():
        raise ValueError(f"{name}: element {el.name}: list length of property {p.name} must be "
                         f"a non-negative integer, got {token.decode('latin-1')!r}")
    return int(token)


def _cast(values: np.ndarray, p: _Property, name: str, el: _Element) -> np.ndarray:
    dtype = np.dtype(p.type)
    if dtype.kind == "f":
        return values.astype(dtype)
    info = np.iinfo(dtype)
    if values.size and (not np.isfinite(values).all() or (values != np.round(values)).any()
                        or values.min() < info.min or values.max() > info.max):
        raise ValueError(f"{name}: element {el.name}: property {p.name} must hold integers of "
                         f"type {dtype} (range [{info.min}, {info.max}])")
    return values.astype(dtype)


# -- reader ----------------------------------------------------------------------------------
def read_ply_elements(path, *, label: str | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Read every element of a PLY file (ASCII or binary, either byte order).

    Parameters
    ----------
    path : str or Path
    label : str, optional
        How to name the file in error messages (defaults to the path).

    Returns
    -------
    elements : dict
        ``{element name: {property name: column}}`` in the file's order. A scalar property is
        an (count,) array of its declared type (native byte order); a list property is a
        (count, k) array when every row's list has k items, else an object array of 1-D
        arrays.

    Raises
    ------
    ValueError
        Naming the file when it is missing, is not PLY, or its header or data are malformed
        or truncated.
    """
    path = Path(path)
    name = label or str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{name}: file is missing") from None
    except OSError as exc:
        raise ValueError(f"{name}: cannot be read ({exc})") from None
    fmt, elements, start = _parse_header(raw, name)
    out: dict[str, dict[str, np.ndarray]] = {}
    if fmt == "ascii":
        tokens = raw[start:].split()
        pos = 0
        for el in elements:
            out[el.name], pos = _ascii_element(tokens, pos, el, name)
        if pos != len(tokens):
            raise ValueError(f"{name}: {len(tokens) - pos} values after the last element: the "
                             "element counts in the header do not match the data")
        return out
    endian = _FORMATS[fmt]
    pos = start
    for el in elements:
        cols, pos = _binary_element(raw, pos, el, endian, name)
        out[el.name] = {k: (v.astype(v.dtype.newbyteorder("=")) if v.dtype != object else v)
                        for k, v in cols.items()}
    return out


def _ply_colors(vertex: dict, name: str) -> np.ndarray | None:
    for keys in _COLOR_NAMES:
        if set(keys) <= vertex.keys():
            C = np.stack([vertex[k] for k in keys], axis=1)
            break
    else:
        return None
    if C.ndim != 2 or C.dtype == object:
        raise ValueError(f"{name}: vertex colours must be scalar properties")
    if C.dtype.kind == "f":
        if C.size and (not np.isfinite(C).all() or C.min() < -_COLOR_SLACK
                       or C.max() > 1 + _COLOR_SLACK):
            raise ValueError(f"{name}: float vertex colours must be in [0, 1]")
        return np.round(np.clip(C, 0, 1) * 255.0).astype(np.uint8)
    if C.dtype.itemsize == 2 and C.dtype.kind == "u":  # 16-bit colours
        return np.round(C / 257.0).astype(np.uint8)
    if C.size and (C.min() < 0 or C.max() > 255):
        raise ValueError(f"{name}: integer vertex colours must be in [0, 255], got values in "
                         f"[{C.min()}, {C.max()}]")
    return C.astype(np.uint8)


def read_ply_cloud(path, *, label: str | None = None):
    """Read the vertices of a PLY point cloud or mesh: positions, RGB colours and normals.

    Any valid PLY is read (see :func:`read_ply_elements`); other elements (faces, edges) are
    parsed and ignored.

    Parameters
    ----------
    path : str or Path
    label : str, optional
        How to name the file in error messages (defaults to the path).

    Returns
    -------
    points : (N, 3) float64 ndarray
    colors : (N, 3) uint8 ndarray or None
        ``uchar`` colours as stored; float colours in [0, 1] as ``round(255 c)``; 16-bit
        colours as ``round(c / 257)``.
    normals : (N, 3) float64 ndarray or None
        The ``nx ny nz`` properties when present.

    Raises
    ------
    ValueError
        Naming the file when it is malformed or truncated, or has no vertex element with
        scalar properties x, y, z.
    """
    name = label or str(path)
    elements = read_ply_elements(path, label=name)
    vertex = elements.get("vertex")
    if vertex is None or not {"x", "y", "z"} <= vertex.keys():
        raise ValueError(f"{name}: PLY file lacks a vertex element with x, y, z properties")

    def stack(keys):
        cols = [vertex[k] for k in keys]
        if any(c.ndim != 1 or c.dtype == object for c in cols):
            raise ValueError(f"{name}: vertex {', '.join(keys)} must be scalar properties, "
                             "not lists")
        return np.stack(cols, axis=1).astype(np.float64)

    normals = stack(("nx", "ny", "nz")) if {"nx", "ny", "nz"} <= vertex.keys() else None
    return stack(("x", "y", "z")), _ply_colors(vertex, name), normals


def read_ply(path, *, label: str | None = None):
    """Read the positions and RGB colours of a PLY point cloud or mesh.

    Parameters
    ----------
    path : str or Path
    label : str, optional
        How to name the file in error messages (defaults to the path).

    Returns
    -------
    points : (N, 3) float64 ndarray
    colors : (N, 3) uint8 ndarray or None
        As :func:`read_ply_cloud` returns them.

    Raises
    ------
    ValueError
        As :func:`read_ply_cloud`.
    """
    points, colors, _ = read_ply_cloud(path, label=label)
    return points, colors
