"""A small text progress bar on stderr (no dependency), used by the dataset tools."""

from __future__ import annotations

import sys
import time

__all__ = ["ProgressBar"]


class ProgressBar:
    """A one-line progress bar written to a stream (stderr by default).

    Parameters
    ----------
    total : int
        Number of steps.
    desc : str
        Label printed before the bar.
    enabled : bool or None
        ``None`` draws the bar only when the stream is a terminal.
    stream : file-like, optional
        Where to draw; defaults to ``sys.stderr``.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with ProgressBar(2, "demo", enabled=True, stream=out) as bar:
    ...     bar.update()
    ...     bar.update()
    >>> "2/2" in out.getvalue()
    True
    """

    def __init__(self, total: int, desc: str = "", *, enabled: bool | None = None,
                 stream=None, width: int = 30):
        self.total = max(int(total), 0)
        self.desc = desc
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.width = width
        self.count = 0
        self._start = time.monotonic()
        self._draw()

    def update(self, n: int = 1, note: str = "") -> None:
        """Advance by ``n`` steps and redraw, with an optional note after the bar."""
        self.count = min(self.count + n, self.total) if self.total else self.count + n
        self._draw(note)

    def _draw(self, note: str = "") -> None:
        if not self.enabled:
            return
        frac = self.count / self.total if self.total else 1.0
        full = round(frac * self.width)
        bar = "#" * full + "-" * (self.width - full)
        elapsed = time.monotonic() - self._start
        eta = elapsed / frac - elapsed if 0 < frac < 1 else 0.0
        text = (f"\r{self.desc} [{bar}] {self.count}/{self.total} "
                f"{elapsed:5.1f}s (eta {eta:4.0f}s) {note}")
        self.stream.write(text[:120].ljust(80))
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
