"""JSON files with clear errors: which file is malformed and where."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .files import atomic_write_bytes

__all__ = ["read_json", "to_jsonable", "write_json"]


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
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{name}: file is missing") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not valid UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ValueError(f"{name}: cannot be read ({exc})") from None

    def _no_constants(token):
        raise ValueError(f"{name}: malformed JSON: {token} is not allowed")

    try:
        return json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name}: malformed JSON: {exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno}") from None
    except RecursionError:  # thousands of nested brackets exhaust the parser's stack
        raise ValueError(f"{name}: malformed JSON: nested too deeply") from None
