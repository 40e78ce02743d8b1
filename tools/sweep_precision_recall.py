"""Inlier precision and recall of ``findEpipolarTensor`` relative to the noise ceiling, over
many seeded scenes (the setting of tools/bench_find_tensor.py: 1000 x 1000 px, 300 matches, sigma 0.5 px, 30%
outliers, threshold 1.5 px).

Run::

    .venv/bin/python tools/sweep_precision_recall.py                 # seeds 0-79, USAC_DEFAULT
    .venv/bin/python tools/sweep_precision_recall.py --method accurate --seeds 0 40
    .venv/bin/python tools/sweep_precision_recall.py --runs 10     # 10 random streams per scene

The ceiling of a scene is what the true tensor gives at the threshold (true inliers within it,
and all points within it); printed are the mean ratios to the ceiling, how many runs fall
below 0.99 and 0.97 of it (the worse of precision and recall), and the worst run. With
``--runs K`` each scene is estimated with K random streams (``rng = seed + 1000 r``): how often
a scene falls below depends on the stream when its data leave two inlier sets nearly equally
good (see the README).
"""

from __future__ import annotations

import argparse

import numpy as np

import xslit
from xslit.epipolar.tensor import sampson_distance
from xslit.synthetic import random_two_view_scene


def ratios(method, seed, runs=1, threshold=1.5):
    """Precision and recall of one scene, each divided by its noise ceiling: ``(runs, 2)``."""
    s = random_two_view_scene(seed, 300, sigma=0.5, outlier_ratio=0.3)
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    truth = s["inliers"]
    within = sampson_distance(F0, s["points1"], s["points2"]) < threshold
    ceiling = (within & truth).sum()
    out = []
    for r in range(runs):
        _, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], method, threshold,
                                           rng=seed + 1000 * r)
        inl = mask[:, 0] == 1
        hit = (inl & truth).sum()
        out.append((hit / inl.sum() / (ceiling / within.sum()), hit / ceiling))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--method", choices=["default", "accurate"], default="default")
    ap.add_argument("--seeds", type=int, nargs=2, default=[0, 80], metavar=("FIRST", "STOP"))
    ap.add_argument("--runs", type=int, default=1, help="random streams per scene")
    args = ap.parse_args(argv)
    method = xslit.USAC_DEFAULT if args.method == "default" else xslit.USAC_ACCURATE
    seeds = range(*args.seeds)
    r = np.array([ratios(method, seed, args.runs) for seed in seeds])  # (scenes, runs, 2)
    worst = r.min(axis=2)
    per_scene = (worst < 0.99).sum(axis=1)
    i, j = np.unravel_index(np.argmin(worst), worst.shape)
    print(f"{args.method}, seeds {args.seeds[0]}-{args.seeds[1] - 1} x {args.runs} runs: mean "
          f"precision {r[..., 0].mean():.4f}, mean recall {r[..., 1].mean():.4f} of the "
          f"ceiling; runs below 0.99: {np.sum(worst < 0.99)}, below 0.97: "
          f"{np.sum(worst < 0.97)} of {worst.size}; worst {worst.min():.3f} (seed {seeds[i]}, "
          f"run {j})")
    if args.runs > 1:
        bad = np.flatnonzero(per_scene)
        print("scenes with runs below 0.99: " + (", ".join(
            f"{seeds[k]} ({per_scene[k]}/{args.runs}, mean {worst[k].mean():.3f})" for k in bad)
            or "none"))


if __name__ == "__main__":
    main()
