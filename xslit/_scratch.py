"""Reusable scratch arrays for the hot loops of the estimators.

A fresh numpy array of more than about 128 KiB is memory newly mapped from the operating system,
and every page of it costs a page fault on first touch; on virtual machines that makes a large
temporary several times slower to fill than to compute. Estimators that evaluate the same large
shapes hundreds of times (residuals of a batch of models on all points, weighted design
matrices) keep their temporaries in a :class:`Scratch` instead and reuse them.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Scratch"]


class Scratch:
    """Named float64 buffers, grown on demand and reused across calls.

    ``get(name, shape)`` returns a C-contiguous view of the buffer ``name`` with ``shape``; its
    contents are undefined, and the view is only valid until the next ``get`` of the same name
    (so a result that outlives the call must be a fresh array, never a scratch view). Not
    thread-safe: one :class:`Scratch` per evaluator.
    """

    def __init__(self):
        self._buffers: dict[str, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        size = math.prod(shape)
        flat = self._buffers.get(name)
        if flat is None or flat.size < size:
            flat = self._buffers[name] = np.empty(size)
        return flat[:size].reshape(shape)
