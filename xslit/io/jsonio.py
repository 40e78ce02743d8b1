"""JSON files with clear errors: which file is malformed and where."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .files import atomic_write_bytes

__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "read_json", "to_jsonable", "write_json"]

#: Largest JSON file :func:`read_json` reads (bytes). The project's JSON files (dataset
#: manifests, cameras, metrics) are kilobytes; a larger one is not one of them, and parsing it
#: would hold all of it in memory several times over.
MAX_JSON_BYTES = 64 * 2**20
#: Deepest nesting of arrays and objects :func:`read_json` accepts (the project's files nest
#: four levels at most; Python's parser runs out of stack near a thousand).
MAX_JSON_DEPTH = 64


def to_jsonable(value):
    """Convert numpy arrays and scalars (recursively) to plain JSON types."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return value.as_posix()
    return value


def write_json(path, data) -> None:
    """Write ``data`` as indented UTF-8 JSON, atomically. NaN and inf are refused."""
    text = json.dumps(to_jsonable(data), indent=2, sort_keys=False, allow_nan=False)
    atomic_write_bytes(path, (text + "\n").encode("utf-8"))


def read_json(path, *, label: str | None = None):
    """Read a JSON file; ValueError naming the file (and line/column) when it is malformed.

    Parameters
    ----------
    path : str or Path
    label : str, optional
        How to name the file in error messages (defaults to the path).
    """
    path = Path(path)
    name = label or str(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ValueError(f"{name}: file is missing") from None
    except OSError as exc:
        raise ValueError(f"{name}: cannot be read ({exc})") from None
    if size > MAX_JSON_BYTES:
        raise ValueError(f"{name}: {size} bytes, more than the {MAX_JSON_BYTES} a JSON file of "
                         "xslit may have")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{name}: file is missing") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not valid UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ValueError(f"{name}: cannot be read ({exc})") from None

    def _no_constants(token):
        raise ValueError(f"{name}: malformed JSON: {token} is not allowed")

    too_deep = f"{name}: malformed JSON: nested more than {MAX_JSON_DEPTH} levels deep"
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name}: malformed JSON: {exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno}") from None
    except RecursionError:  # thousands of nested brackets exhaust the parser's stack
        raise ValueError(too_deep) from None
    level = [data]
    for _ in range(MAX_JSON_DEPTH):
        level = [v for c in level if isinstance(c, (dict, list))
                 for v in (c.values() if isinstance(c, dict) else c)]
        if not level:
            return data
    raise ValueError(too_deep)
