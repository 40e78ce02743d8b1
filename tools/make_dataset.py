#!/usr/bin/env python
"""Render an xslit dataset from a recipe (thin wrapper around ``python -m xslit.datasets``).

    python tools/make_dataset.py --recipe xslit-stereo --out data/stereo --size 640x480 --seed 0
    python tools/make_dataset.py info data/stereo
    python tools/make_dataset.py verify data/stereo

Without a sub-command, ``generate`` is assumed. See datasets/FORMAT.md for the format.
"""

import sys

from xslit.datasets.cli import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    if not argv or argv[0] not in ("generate", "info", "verify", "-h", "--help"):
        argv = ["generate", *argv]
    sys.exit(main(argv))
