"""Termination signals as exceptions, so that interrupted runs clean up after themselves.

Python turns Ctrl-C (SIGINT) into :class:`KeyboardInterrupt`, which unwinds ``with`` blocks
and ``finally`` clauses; SIGTERM (``kill``, a batch system's time limit) and SIGHUP (a closed
terminal) end the process at once by default, leaving temporary files behind.
:class:`TerminationGuard` turns them into :class:`Terminated`, a ``KeyboardInterrupt``, while
it is installed; :class:`~xslit.io.DatasetWriter` installs one for as long as its temporary
folder exists. :func:`exit_code_for_interrupt` and :func:`interruptible` give a command-line
entry point the usual exit codes and a one-line message instead of a traceback.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading

__all__ = ["Terminated", "TerminationGuard", "exit_code_for_interrupt", "interruptible"]


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when a termination signal arrives under a guard.

    Attributes
    ----------
    signum : int
        The signal number (``signal.SIGTERM`` or ``signal.SIGHUP``).
    """

    def __init__(self, signum: int):
        super().__init__(f"terminated by {signal.Signals(signum).name}")
        self.signum = int(signum)


def _default_signals() -> tuple[int, ...]:
    return tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
                 if s is not None)


class TerminationGuard:
    """While installed, SIGTERM and SIGHUP raise :class:`Terminated` in the main thread.

    Signals the process ignores (``nohup`` ignores SIGHUP) stay ignored. Outside the main
    thread the guard does nothing (Python delivers signals to the main thread only). Use as a
    context manager, or call :meth:`install` and :meth:`restore`; guards nest.

    Parameters
    ----------
    signals : tuple of int, optional
        Defaults to ``(signal.SIGTERM, signal.SIGHUP)``.

    Examples
    --------
    >>> import os, signal
    >>> try:
    ...     with TerminationGuard():
    ...         os.kill(os.getpid(), signal.SIGTERM)
    ... except Terminated as exc:
    ...     print(exc.signum == signal.SIGTERM)
    True
    """

    def __init__(self, signals: tuple[int, ...] | None = None):
        self.signals = _default_signals() if signals is None else tuple(signals)
        self._previous: dict[int, object] = {}
        self._deferred: list[int] = []
        self._defer = False

    def _handler(self, signum, frame):
        if self._defer:
            self._deferred.append(signum)
            return
        raise Terminated(signum)

    def install(self) -> TerminationGuard:
        """Install the handlers (in the main thread; elsewhere a no-op)."""
        if self._previous or threading.current_thread() is not threading.main_thread():
            return self
        for s in self.signals:
            previous = signal.getsignal(s)
            if previous == signal.SIG_IGN:
                continue
            self._previous[s] = previous
            signal.signal(s, self._handler)
        return self

    def defer(self) -> None:
        """From now on record signals instead of raising (during cleanup); :meth:`restore`
        delivers them again to the previous handlers."""
        self._defer = True

    def restore(self) -> None:
        """Put back the previous handlers and re-deliver any signal deferred meanwhile."""
        previous, self._previous = self._previous, {}
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        deferred, self._deferred = self._deferred, []
        self._defer = False
        for s in dict.fromkeys(deferred):
            os.kill(os.getpid(), s)

    def __enter__(self) -> TerminationGuard:
        return self.install()

    def __exit__(self, *exc) -> None:
        self.restore()


def exit_code_for_interrupt(exc: KeyboardInterrupt) -> int:
    """The shell's exit code for an interrupted run: 128 + the signal number.

    130 for Ctrl-C (SIGINT), 143 for SIGTERM, 129 for SIGHUP.
    """
    signum = getattr(exc, "signum", signal.SIGINT)
    return 128 + int(signum)


def interruptible(main):
    """Wrap a command-line ``main(argv) -> int``: termination signals unwind like Ctrl-C, and
    an interrupted run prints one line (no traceback) and returns 128 + the signal number.

    Examples
    --------
    >>> @interruptible
    ... def main(argv=None):
    ...     raise KeyboardInterrupt
    >>> main()  # prints "xslit: interrupted" on stderr
    130
    """

    @functools.wraps(main)
    def wrapper(*args, **kwargs):
        try:
            with TerminationGuard():
                return main(*args, **kwargs)
        except KeyboardInterrupt as exc:
            what = str(exc) if isinstance(exc, Terminated) else "interrupted"
            print(f"xslit: {what}", file=sys.stderr)
            return exit_code_for_interrupt(exc)

    return wrapper
