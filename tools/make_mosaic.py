#!/usr/bin/env python
"""Pushbroom and crossed-slit mosaics from a video or a folder of frames (Zomet et al. 2003).

The same as ``xslit mosaic`` (see ``xslit mosaic --help``)::

    python tools/make_mosaic.py clip.mp4 --out out/
    python tools/make_mosaic.py frames/ --out out/ --K 110,110,79.5,59.5 --speed 0.02 \\
        --xslit-start 0 --slope 1 --tvec -1,0,4.5

writes out/pushbroom.png and out/xslit.png, and with --K and --speed (or --velocity) the exact
camera of each mosaic (out/pushbroom.json, out/xslit.json).
"""

import sys

from xslit.cli import main

if __name__ == "__main__":
    sys.exit(main(["mosaic", *sys.argv[1:]]))
