"""``python -m xslit.datasets {generate,info,verify}``: the dataset subcommands of ``xslit``.

``generate`` is ``xslit render``, ``info`` and ``verify`` are ``xslit info`` and
``xslit verify`` (see ``xslit --help``); this module only maps the old names.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

#: Old subcommand -> ``xslit`` subcommand.
COMMANDS = {"generate": "render", "info": "info", "verify": "verify"}


def main(argv=None) -> int:
    """Run ``xslit render|info|verify`` for ``generate|info|verify``; returns the exit status
    (0 ok, 1 failure or damaged dataset, 2 bad usage)."""
    from ..cli import main as xslit_main

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        return xslit_main([COMMANDS[argv[0]], *argv[1:]])
    if argv and argv[0] in ("-h", "--help"):
        print("usage: python -m xslit.datasets {generate,info,verify} ...\n\n"
              "The dataset commands of `xslit`: generate is `xslit render`, info and verify "
              "are `xslit info` and `xslit verify`.\nSee `xslit render --help`.")
        return 0
    got = repr(argv[0]) if argv else "nothing"
    print(f"python -m xslit.datasets: error: the command must be generate, info or verify, got "
          f"{got} (see `xslit --help`)", file=sys.stderr)
    return 2
