"""Reusable scratch arrays for the hot loops of the estimators.

A fresh numpy array of more than about 128 KiB is memory newly mapped from the operating system,
and every page of it costs a page fault on first touch; on virtual machines that makes a large
temporary several times slower to fill than to compute. Estimators that evaluate the same large
shapes hundreds of times (residuals of a batch of models on all points, weighted design
matrices) keep their temporaries in a :class:`Scratch` instead and reuse them.

The buffers of a :class:`Scratch` that is no longer used go to a pool of the thread that
releases them, and the next :class:`Scratch` of that thread takes them from there: repeated
estimates on thousands of points (each with its own evaluators) then reuse the pages of the
last one instead of mapping new ones (at 10,000 correspondences about 1,200 page faults per
estimate of the epipolar tensor, a fifth of its time). A pooled buffer is handed out again only
when no view of it is alive.
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

__all__ = ["Scratch"]

#: Buffers smaller than this come from numpy's allocator as usual (malloc keeps them mapped).
POOLED_MIN_BYTES = 1 << 17
#: At most this many bytes of released buffers are kept per thread (the oldest go first).
POOLED_MAX_BYTES = 64 << 20
#: Views a :class:`Scratch` remembers (shapes that vary with each call would grow it).
_MAX_VIEWS = 64


class _Pool(threading.local):
    """Released buffers of one thread, oldest first."""

    def __init__(self):
        self.free: list[np.ndarray] = []
        self.nbytes = 0


_pool = _Pool()


def _take(size: int) -> np.ndarray:
    """A flat float64 buffer of at least ``size`` entries: the smallest pooled one that no view
    refers to, or a new one."""
    if 8 * size >= POOLED_MIN_BYTES:
        free = _pool.free
        best = -1
        for i in range(len(free)):
            # References: the pool's list, getrefcount's argument, and nothing else.
            if (free[i].size >= size and (best < 0 or free[i].size < free[best].size)
                    and sys.getrefcount(free[i]) == 2):
                best = i
        if best >= 0:
            flat = free.pop(best)
            _pool.nbytes -= flat.nbytes
            return flat
    return np.empty(size)


def _release(flat: np.ndarray) -> None:
    """Put ``flat`` in this thread's pool (large buffers only, within the pool's budget)."""
    if flat.nbytes < POOLED_MIN_BYTES or flat.nbytes > POOLED_MAX_BYTES:
        return
    _pool.free.append(flat)
    _pool.nbytes += flat.nbytes
    while _pool.nbytes > POOLED_MAX_BYTES:
        _pool.nbytes -= _pool.free.pop(0).nbytes


class Scratch:
    """Named float64 buffers, grown on demand and reused across calls.

    ``get(name, shape)`` returns a C-contiguous view of the buffer ``name`` with ``shape``; its
    contents are undefined, and the view is only valid until the next ``get`` of the same name
    (so a result that outlives the call must be a fresh array, never a scratch view). Not
    thread-safe: one :class:`Scratch` per evaluator. Its buffers go back to the thread's pool
    when it is garbage collected (or replaced by larger ones).
    """

    def __init__(self):
        self._buffers: dict[str, np.ndarray] = {}
        # The views handed out, by name and shape: the hot loops ask for the same few shapes
        # again and again, and a dictionary look-up costs a tenth of slicing a new view.
        self._views: dict[tuple, np.ndarray] = {}

    def get(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        key = (name, shape)
        view = self._views.get(key)
        if view is not None:
            return view
        size = math.prod(shape)
        flat = self._buffers.get(name)
        if flat is None or flat.size < size:
            if flat is not None:
                # Views of the old buffer would keep it from the pool.
                self._views = {k: v for k, v in self._views.items() if k[0] != name}
                _release(flat)
            flat = self._buffers[name] = _take(size)
        if len(self._views) >= _MAX_VIEWS:
            self._views.clear()
        view = self._views[key] = flat[:size].reshape(shape)
        return view

    def __del__(self):
        try:
            self._views.clear()
            for flat in self._buffers.values():
                _release(flat)
        except Exception:  # interpreter shutdown: the pool may be gone already
            pass
