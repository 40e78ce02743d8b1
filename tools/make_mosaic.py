#!/usr/bin/env python
"""Pushbroom and crossed-slit mosaics from a video or a folder of frames (Zomet et al. 2003).

    python tools/make_mosaic.py video.gif --out-dir out/
    python tools/make_mosaic.py frames/ --out-dir out/ --K 110,110,79.5,59.5 --speed 0.02 \\
        --xslit-start 0 --slope 1

writes out/pushbroom.png and out/xslit.png, and with --K and --speed (or --velocity) the exact
camera of each mosaic (out/pushbroom.json, out/xslit.json). See ``xslit.mosaic`` and
``python tools/make_mosaic.py --help``.
"""

import sys

from xslit.mosaic import main

if __name__ == "__main__":
    sys.exit(main())
