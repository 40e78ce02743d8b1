"""Outlier-free sweep scenes: does every method's mask keep what the true tensor keeps?

With no outliers the true tensor's mask at a threshold is what an estimator should return; a
robust method that leaves out correspondences has either stopped in a wrong basin or used a
wrong scale. For each seeded scene of ``xslit.synthetic.random_sweep_scene(seed,
max_n=--max-n, outlier_ratio=0)`` with at least 15 correspondences within the threshold, every
method of ``xslit.findEpipolarTensor`` runs at 3 noise deviations; the scene counts when the
method's mask keeps at least ``--keeps`` of the correspondences within the threshold of the
true tensor. ``FM_LMEDS`` ignores the threshold: its own (2.5 robust standard deviations, from
``xslit.epipolar.estimate.estimate_epipolar_tensor``, whose mask is checked to be the API's)
is used for the true tensor's mask, and the tool prints its range in noise deviations.

Printed per method: scenes that keep at least ``--keeps``, failures (with their seeds and the
first words of the reason), and the seeds that keep less (kept / the true tensor's), marked
``*`` where the estimate fits the data at least as well as the maximum-likelihood tensor (the
truth polished on the correspondences within the threshold,
``xslit.synthetic.noise_ceiling``): its truncated quadratic loss over all
correspondences at most 1.001 times that tensor's. On few correspondences another mask can
fit better than the truth's optimum, and no estimator could prefer the truth's there; the
count of scenes that keep enough or fit as well is printed too (what the data allow).

Usage: python tools/sweep_clean_masks.py [--scenes 100] [--max-n 1000] [--keeps 0.99]
                                         [--methods FM_RANSAC,FM_LMEDS]
"""

from __future__ import annotations

import argparse
import logging

import numpy as np

import xslit
from xslit.epipolar import sampson_distance
from xslit.epipolar.estimate import estimate_epipolar_tensor, robust_options
from xslit.robust import msac_loss
from xslit.synthetic import noise_ceiling, random_sweep_scene

METHODS = ("FM_LINEAR", "FM_RANSAC", "FM_LMEDS", "USAC_DEFAULT", "USAC_ACCURATE")


def lmeds_threshold(points1, points2, seed, mask):
    """LMedS's own threshold, from the plain estimator with the options of
    ``findEpipolarTensor(..., FM_LMEDS)`` (``robust_options("lmeds")``; their masks must
    agree)."""
    options = robust_options("lmeds")
    est = estimate_epipolar_tensor(points1, points2, options, seed)
    if not np.array_equal(est.inliers, mask):
        raise SystemExit("the plain LMedS estimate's mask is not findEpipolarTensor's")
    return est.threshold


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", type=int, default=100, help="seeds 0 .. SCENES - 1")
    ap.add_argument("--max-n", type=int, default=1000, help="correspondences per scene at most")
    ap.add_argument("--keeps", type=float, default=0.99,
                    help="fraction of the true tensor's mask a method must keep")
    ap.add_argument("--methods", default=",".join(METHODS),
                    help="comma-separated flags of findEpipolarTensor")
    args = ap.parse_args(argv)
    methods = args.methods.split(",")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        ap.error(f"unknown methods {unknown}; choose among {list(METHODS)}")
    logging.getLogger("xslit").setLevel(logging.ERROR)  # failures are counted, not logged
    tally = {m: {"scenes": 0, "keep": 0, "fits": 0, "failed": [], "short": []}
             for m in methods}
    scales = []
    for seed in range(args.scenes):
        scene = random_sweep_scene(seed, max_n=args.max_n, outlier_ratio=0.0)
        p1, p2 = scene.points1, scene.points2
        threshold = 3.0 * scene.sigma
        d_true = np.abs(sampson_distance(scene.F, p1, p2))
        if np.count_nonzero(d_true <= threshold) < 15:
            continue
        for name in methods:
            F, mask = xslit.findEpipolarTensor(p1, p2, getattr(xslit, name), threshold,
                                               rng=seed)
            t = tally[name]
            t["scenes"] += 1
            if F is None:
                t["failed"].append(seed)
                continue
            mask = mask[:, 0].astype(bool)
            thr = threshold
            if name == "FM_LMEDS":
                thr = lmeds_threshold(p1, p2, seed, mask)
                scales.append(thr / scene.sigma)
            keep = d_true <= thr
            kept = int(np.count_nonzero(mask & keep))
            if kept >= args.keeps * keep.sum():
                t["keep"] += 1
                t["fits"] += 1
                continue
            fits = (msac_loss(sampson_distance(F, p1, p2), thr)
                    <= 1.001 * noise_ceiling(scene, thr).ml_loss)
            t["fits"] += int(fits)
            t["short"].append(f"{seed} ({kept}/{int(keep.sum())}{'*' if fits else ''})")
    print(f"{args.scenes} outlier-free sweep scenes (max-n {args.max_n}), threshold 3 sigma; "
          f"a mask counts when it keeps >= {args.keeps} of the true tensor's")
    for name in methods:
        t = tally[name]
        print(f"  {name:<14} {t['keep']:>4} of {t['scenes']} keep ({t['fits']} keep or fit as "
              f"well as maximum likelihood); failed {len(t['failed'])} {t['failed']}; keep less "
              f"(* fits as well): {', '.join(t['short']) or '-'}")
    if scales:
        print(f"  FM_LMEDS threshold / sigma: median {np.median(scales):.2f}, "
              f"range {min(scales):.2f}-{max(scales):.2f}")


if __name__ == "__main__":
    main()
