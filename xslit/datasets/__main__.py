"""``python -m xslit.datasets``: ``xslit render``, ``info`` and ``verify`` under their old
names (:mod:`xslit.datasets.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
