"""Inlier precision and recall of ``findEpipolarTensor`` relative to the noise ceiling, over
many seeded scenes (the setting of issue 3: 1000 x 1000 px, 300 matches, sigma 0.5 px, 30%
outliers, threshold 1.5 px).

Run::

    .venv/bin/python tools/sweep_precision_recall.py                 # seeds 0-79, USAC_DEFAULT
    .venv/bin/python tools/sweep_precision_recall.py --method accurate --seeds 0 40

The ceiling of a scene is what the true tensor gives at the threshold (true inliers within it,
and all points within it); printed are the mean ratios to the ceiling, how many scenes fall
below 0.99 and 0.97 of it (the worse of precision and recall), and the worst scene.
"""

from __future__ import annotations

import argparse

import numpy as np

import xslit
from xslit.epipolar.tensor import sampson_distance
from xslit.synthetic import random_two_view_scene


def ratios(method, seed, threshold=1.5):
    """Precision and recall of one scene, each divided by its noise ceiling."""
    s = random_two_view_scene(seed, 300, sigma=0.5, outlier_ratio=0.3)
    _, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], method, threshold, rng=seed)
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    inl, truth = mask[:, 0] == 1, s["inliers"]
    within = sampson_distance(F0, s["points1"], s["points2"]) < threshold
    hit, ceiling = (inl & truth).sum(), (within & truth).sum()
    return hit / inl.sum() / (ceiling / within.sum()), hit / ceiling


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--method", choices=["default", "accurate"], default="default")
    ap.add_argument("--seeds", type=int, nargs=2, default=[0, 80], metavar=("FIRST", "STOP"))
    args = ap.parse_args(argv)
    method = xslit.USAC_DEFAULT if args.method == "default" else xslit.USAC_ACCURATE
    seeds = range(*args.seeds)
    r = np.array([ratios(method, seed) for seed in seeds])
    worst = r.min(axis=1)
    print(f"{args.method}, seeds {args.seeds[0]}-{args.seeds[1] - 1}: mean precision "
          f"{r[:, 0].mean():.4f}, mean recall {r[:, 1].mean():.4f} of the ceiling; below 0.99: "
          f"{np.sum(worst < 0.99)}, below 0.97: {np.sum(worst < 0.97)}; worst {worst.min():.3f} "
          f"(seed {seeds[int(np.argmin(worst))]})")


if __name__ == "__main__":
    main()
