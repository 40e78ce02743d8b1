"""Shared fixtures. Tolerances live in ``tests/tolerances.py``; seeded scenes come from
``xslit.synthetic``; projective comparisons use ``xslit.testing``."""

import os
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


# Hypothesis profiles for the property tests (tests/test_properties.py). Both are derandomized:
# the same examples run on every machine, so a failure reproduces. "quick" keeps the whole
# property suite under a minute on two cores; "thorough" (the slow run, or
# XSLIT_HYPOTHESIS_PROFILE=thorough) draws ten times as many examples.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "quick", max_examples=25, derandomize=True, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors])
settings.register_profile(
    "thorough", max_examples=250, derandomize=True, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors])
settings.load_profile(os.environ.get("XSLIT_HYPOTHESIS_PROFILE", "quick"))
