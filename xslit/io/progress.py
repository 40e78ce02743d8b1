"""A small text progress bar (no dependency), used by the dataset tools.

The bar is drawn only on a terminal: redirected to a file or a pipe (a log, CI) it writes
nothing. It fits the terminal's width, so it never wraps onto a second line.
"""

from __future__ import annotations

import os
import shutil
import sys
import time

__all__ = ["ProgressBar"]

#: The bar's narrowest and widest extent in characters (between the brackets).
_BAR_MIN, _BAR_MAX = 5, 30


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


def _columns(stream) -> int:
    """The terminal's width for ``stream`` ($COLUMNS, then the terminal, then 80)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = shutil.get_terminal_size((80, 24)).columns
    # A pseudo-terminal whose size was never set (``script``, some CI runners) reports 0.
    return columns if columns > 0 else 80


class ProgressBar:
    """A one-line progress bar written to a stream (stderr by default).

    Parameters
    ----------
    total : int
        Number of steps.
    desc : str
        Label printed before the bar.
    enabled : bool or None
        ``False`` never draws; ``True`` or ``None`` draw when ``stream`` is a terminal (a
        file, a pipe or a log never receives a bar).
    stream : file-like, optional
        Where to draw; defaults to ``sys.stderr``.
    width : int
        Largest number of characters of the bar itself; it shrinks (and the note is cut) to
        keep the line within the terminal's width.

    Examples
    --------
    >>> import io
    >>> class Terminal(io.StringIO):
    ...     def isatty(self):
    ...         return True
    >>> out = Terminal()
    >>> with ProgressBar(2, "demo", stream=out) as bar:
    ...     bar.update()
    ...     bar.update()
    >>> "2/2" in out.getvalue()
    True
    >>> log = io.StringIO()  # not a terminal: nothing is written
    >>> with ProgressBar(2, "demo", enabled=True, stream=log) as bar:
    ...     bar.update()
    >>> log.getvalue()
    ''
    """

    def __init__(self, total: int, desc: str = "", *, enabled: bool | None = None,
                 stream=None, width: int = _BAR_MAX):
        self.total = max(int(total), 0)
        self.desc = desc
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled is not False and _is_terminal(self.stream)
        self.width = max(int(width), _BAR_MIN)
        self.count = 0
        self._start = time.monotonic()
        self._shown = 0
        self._draw()

    def update(self, n: int = 1, note: str = "") -> None:
        """Advance by ``n`` steps and redraw, with an optional note after the bar."""
        self.count = min(self.count + n, self.total) if self.total else self.count + n
        self._draw(note)

    def line(self, columns: int, note: str = "") -> str:
        """The bar's text for a terminal of ``columns`` characters (at most ``columns - 1``,
        so that the cursor never reaches the last column and wraps)."""
        frac = self.count / self.total if self.total else 1.0
        elapsed = time.monotonic() - self._start
        eta = elapsed / frac - elapsed if 0 < frac < 1 else 0.0
        counts = f" {self.count}/{self.total} {elapsed:.1f}s"
        if 0 < frac < 1:
            counts += f" eta {eta:.0f}s"
        room = columns - 1
        desc = self.desc
        bar_width = min(self.width, room - len(desc) - len(counts) - 3)
        if bar_width < _BAR_MIN:  # too narrow: drop the label, then the bar
            desc = ""
            bar_width = min(self.width, room - len(counts) - 2)
        if bar_width >= _BAR_MIN:
            full = round(frac * bar_width)
            text = f"{desc}{' ' if desc else ''}[{'#' * full}{'-' * (bar_width - full)}]{counts}"
        else:
            text = counts.strip()
        if note:
            text += " " + note
        return text[:max(room, 0)]

    def _draw(self, note: str = "") -> None:
        if not self.enabled:
            return
        text = self.line(_columns(self.stream), note)
        pad = max(self._shown - len(text), 0)  # rub out the end of a longer previous line
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._shown = len(text)

    def close(self) -> None:
        """Finish the line (the bar stays on screen)."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
