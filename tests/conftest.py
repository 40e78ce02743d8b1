"""Shared fixtures. Tolerances live in ``tests/tolerances.py``; seeded scenes come from
``xslit.synthetic``; projective comparisons use ``xslit.testing``."""

import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

# pytest runs with --import-mode=importlib, which does not put tests/ on sys.path: make the
# shared ``tolerances`` module importable from every test file.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import tolerances  # noqa: E402


@pytest.fixture
def tol():
    """The tolerances module (``tol.RAY_RTOL`` ...)."""
    return tolerances


@pytest.fixture
def rng(request):
    """A Generator seeded from the test's name: reproducible, different for every test."""
    seed = zlib.crc32(request.node.nodeid.encode())
    return np.random.default_rng(seed)
