"""Sweep the two-view pipeline over seeded scenes drawn from a wide space, by region.

Each scene comes from ``xslit.synthetic.random_sweep_scene(seed)``: two-slit, mixed (one
pushbroom) and pushbroom pairs; slit distance / depth 0.005-1; slit angles 20-160 degrees; focal
lengths 200-3000 px; principal points inside or outside the image; 20-100% of image 1 covered;
sideways, forward, vertical or mixed baselines; rotations up to 30 degrees; a box of points or up
to 80% of them on one plane; noise 0.1-2 px; 0-70% outliers (random pixel pairs); 30-10,000
correspondences. On each scene the tool runs ``xslit.findEpipolarTensor`` and then the calibrated
``xslit.recoverTwoSlitPose(F, p1, p2, intrinsics1, intrinsics2, mask=mask)`` and scores:

* inlier precision and recall of the tensor's mask against the true inliers, each divided by the
  *noise ceiling* (what the true tensor's mask gives at the same threshold), and by what the mask
  of the maximum-likelihood tensor (the truth polished on the data) gives; that mask's own
  ratios to the ceiling are what the data allow the first ones to be (on few correspondences
  or many outliers even maximum likelihood keeps a few chance points more, or misses a few);
* whether the scene is *decidable*: the true tensor's own support beats what chance gives
  (the robust loop's non-randomness test, at most 10,000 hypotheses). On the other scenes no
  estimator can tell inliers from outliers, and a failure with that reason is the right
  answer; they are counted apart;
* whether the tensor *fits as well as the maximum-likelihood tensor*: its mask keeps 0.99 of
  the precision and recall of that tensor's mask, or its truncated quadratic loss over all
  correspondences (the loss robust estimators minimise) is at most 1.001 times that tensor's.
  With few correspondences another mask can fit the data better than the truth's optimum
  (outliers that happen to lie near the curves): no estimator could prefer the truth's
  mask there, and the ceiling ratios count it against the estimate;
* rotation (degrees) and translation errors of the pose against the truth, and their ratio to the
  *yardstick*: maximum likelihood started from the true pose on the correspondences within the
  threshold of the true tensor (what the data allow: an estimator cannot tell the outliers
  that fall within the threshold from inliers), and the robust maximum likelihood from the
  true pose (the correspondences within the threshold of the fitted pose re-selected while
  the truncated loss falls: a few correspondences near the threshold can move the pose by
  several standard deviations, and which of them are inliers is for the data to decide). The
  ratio divides by the larger of the yardsticks' errors and the predicted standard deviation;
  a pose is *within* when both ratios are at most --factor (the fraction without the robust
  yardstick is printed too). The ratios against maximum likelihood on the true inliers
  (labels no estimator knows) are recorded as well (``oracle_*`` in the JSON);
* whether the scene is *determined*: the yardstick's predicted standard deviations and errors
  (on the true inliers) are below 1 degree and 10% of |t|, and the pose block of its
  Gauss-Newton matrix (points eliminated, scaled to a unit diagonal) has a condition number
  below 1e10. Pose figures are judged on scenes both determined and decidable;
* failures: an exception, or no tensor, with the reason.

Output: one line per scene (--per-scene), then the summary: fractions of scenes whose precision
and recall both reach 0.99 and 0.95 of the ceiling, fraction of decidable scenes whose tensor
fits as well as the maximum-likelihood tensor, fraction of judged scenes whose pose is
within --factor of the yardstick, failures, the same per region (bins of each drawn parameter),
and the worst scenes with their seeds (rerun one with --only SEED --per-scene). Same arguments,
same output, except the timing figures (omit them with --no-timing).

Examples::

    .venv/bin/python tools/sweep_two_view.py --scenes 200 --max-n 2000
    .venv/bin/python tools/sweep_two_view.py --scenes 50 --region kind=pushbroom --json out.json
    .venv/bin/python tools/sweep_two_view.py --region slit_ratio=0.005:0.02 --method USAC_ACCURATE
    .venv/bin/python tools/sweep_two_view.py --only 17 --per-scene
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time

import numpy as np

import xslit
from xslit.sfm import calibrated_two_view
from xslit.synthetic import SWEEP_BINS, summarize_sweep, sweep_two_view

METHODS = ("FM_LINEAR", "FM_RANSAC", "FM_LMEDS", "USAC_DEFAULT", "USAC_ACCURATE")


class _Reasons(logging.Handler):
    """Keeps the messages that findEpipolarTensor logs on failure."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def make_estimator(method: int, seed: int, reasons: _Reasons):
    """``findEpipolarTensor`` (random stream ``seed``) then the calibrated pose, as
    ``sweep_two_view`` calls it; ``reasons`` collects what the ``xslit`` logger reports.

    The pose comes from :func:`xslit.sfm.calibrated_two_view`, of which calibrated
    ``recoverTwoSlitPose`` is a thin wrapper (the same call on the tensor's mask), for its
    status and covariance: a failed or undetermined pose is a failure with its reason (as
    ``recoverTwoSlitPose`` raises it), an ambiguous one is returned with its status.
    """

    def estimate(p1, p2, intr1, intr2, threshold):
        reasons.messages.clear()
        F, mask = xslit.findEpipolarTensor(p1, p2, method, threshold, rng=seed)
        if F is None:
            why = "; ".join(reasons.messages) or "no reason logged"
            return {"mask": mask, "failure": f"tensor: {why}"}
        try:
            res = calibrated_two_view(p1, p2, intr1, intr2, mask.ravel() > 0,
                                      threshold=threshold, rng=0)
        except Exception as exc:  # recorded per scene; the sweep goes on
            return {"mask": mask, "F": F, "failure": f"pose: {type(exc).__name__}: {exc}"}
        if res.status in ("failed", "undetermined"):
            return {"mask": mask, "F": F, "failure": f"pose: {res.status}: {res.reason}"}
        return {"mask": mask, "F": F, "R": res.R, "t": res.t, "status": res.status,
                "covariance": res.covariance}

    return estimate


def parse_region(items):
    """``name=value`` (category or number) or ``name=lo:hi`` (half-open interval)."""
    region = {}
    for item in items:
        if "=" not in item:
            raise SystemExit(f"--region expects name=value or name=lo:hi, got {item!r}")
        name, value = item.split("=", 1)
        if ":" in value:
            lo, hi = value.split(":", 1)
            region[name] = (float(lo) if lo else -math.inf, float(hi) if hi else math.inf)
        else:
            try:
                region[name] = float(value)
            except ValueError:
                region[name] = None if value == "None" else value
    return region


def parse_overrides(items):
    """``name=value`` overrides of random_sweep_scene (numbers, strings, true/false)."""
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        if value in ("true", "false"):
            out[name] = value == "true"
        elif name == "n" or name == "image_width":
            out[name] = int(value)
        else:
            try:
                out[name] = float(value)
            except ValueError:
                out[name] = value
    return out


def _fmt(v, spec=".3g"):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return format(v, spec)


def scene_line(r, timing):
    p = r.get("params", {})
    head = (f"seed {r['seed']:>6} {p.get('kind', '?'):>9} n={p.get('n', 0):>5} "
            f"out={_fmt(p.get('outlier_ratio'), '.2f')} sig={_fmt(p.get('sigma'), '.2f')} "
            f"slit={_fmt(p.get('slit_ratio'))} base={p.get('baseline', '?')}:"
            f"{_fmt(p.get('baseline_ratio'))} rot={_fmt(p.get('rotation_deg'), '.1f')}")
    if "precision_ratio" not in r:
        return f"{head} | {r.get('failure')}"
    body = (f" | P/ceil {_fmt(r['precision_ratio'], '.3f')} R/ceil "
            f"{_fmt(r['recall_ratio'], '.3f')} loss/ML {_fmt(r.get('tensor_loss_ratio'), '.3f')}"
            f" | rot {_fmt(r.get('rotation_error_deg'))} deg "
            f"(ML {_fmt(r['ml_rotation_error_deg'])}, x{_fmt(r.get('rotation_ratio'), '.2f')}) "
            f"t {_fmt(r.get('translation_rel_error'))} rel (ML "
            f"{_fmt(r['ml_translation_rel_error'])}, x{_fmt(r.get('translation_ratio'), '.2f')})"
            f" {'det' if r['determined'] else 'undet'}")
    if timing and "time_s" in r:
        body += f" {r['time_s'] * 1e3:.0f} ms"
    if r.get("failure"):
        body += f" | FAIL {r['failure']}"
    return head + body


def tally_line(label, s):
    return (f"{label:<32} {s['scenes']:>5} {s['failures']:>5} {_fmt(s['pr_0.99'], '.2f'):>6} "
            f"{_fmt(s['pr_0.95'], '.2f'):>6} {_fmt(s['pr_median'], '.3f'):>6} "
            f"{s['decidable']:>5} {_fmt(s['decidable_ml_0.99'], '.2f'):>6} "
            f"{_fmt(s['decidable_fits_ml'], '.2f'):>6} {s['determined']:>5} "
            f"{_fmt(s['pose_within'], '.2f'):>6} {_fmt(s['rotation_median_deg']):>8} "
            f"{_fmt(s['rotation_max_deg']):>8}")


def worst_cases(records, k):
    """Worst scenes: failures, then lowest precision/recall ratio, then largest pose ratio."""
    lines = []
    fails = [r for r in records if r.get("failure")]
    if fails:
        lines.append("failures:")
        lines += [f"  seed {r['seed']}: {r['failure']}" for r in fails[:k]]
    scored = [r for r in records if "precision_ratio" in r]
    by_pr = sorted(scored, key=lambda r: min(r["precision_ratio"], r["recall_ratio"]))[:k]
    lines.append("lowest precision/recall relative to the ceiling:")
    lines += [f"  seed {r['seed']}: precision x{r['precision_ratio']:.3f} recall "
              f"x{r['recall_ratio']:.3f} (kind {r['params']['kind']}, outliers "
              f"{r['params']['outlier_ratio']:.2f}, n {r['n']}, mask {r['n_mask']})"
              for r in by_pr]
    det = [r for r in scored if r.get("pose_judged") and "rotation_ratio" in r]
    by_pose = sorted(det, key=lambda r: -max(r["rotation_ratio"], r["translation_ratio"]))[:k]
    lines.append("largest pose errors relative to the yardstick (determined and decidable "
                 "scenes):")
    lines += [f"  seed {r['seed']}: rotation {r['rotation_error_deg']:.3g} deg "
              f"(x{r['rotation_ratio']:.2f} of ML {r['ml_rotation_error_deg']:.3g}), translation "
              f"{r['translation_rel_error']:.3g} rel (x{r['translation_ratio']:.2f}), "
              f"loss x{r['pose_loss_ratio']:.4f} of ML's "
              f"(kind {r['params']['kind']}, slit {_fmt(r['params']['slit_ratio'])})"
              for r in by_pose]
    return lines


def _json_clean(x):
    if isinstance(x, dict):
        return {k: _json_clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_clean(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", type=int, default=200,
                    help="number of scenes (within --region, seeds taken in order from --seed)")
    ap.add_argument("--seed", type=int, default=0, help="first scene seed")
    ap.add_argument("--only", type=int, metavar="SEED", help="run the one scene of this seed")
    ap.add_argument("--max-n", type=int, default=2000,
                    help="cap on the correspondences per scene (0: no cap; drawn up to 10,000)")
    ap.add_argument("--method", choices=METHODS, default="USAC_DEFAULT",
                    help="findEpipolarTensor flag, by name")
    thr = ap.add_mutually_exclusive_group()
    thr.add_argument("--threshold", type=float, default=1.5,
                     help="Sampson threshold in pixels, for the tensor, the pose and the ceiling")
    thr.add_argument("--threshold-sigmas", type=float,
                     help="threshold as this multiple of each scene's true noise sigma instead")
    ap.add_argument("--factor", type=float, default=1.5,
                    help="pose tolerance relative to the yardstick (default 1.5)")
    ap.add_argument("--region", action="append", default=[], metavar="NAME=VALUE|NAME=LO:HI",
                    help="keep scenes whose drawn parameter equals VALUE or lies in [LO, HI) "
                         "(repeatable; names as in the summary, e.g. kind, slit_ratio, sigma)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="override a parameter of random_sweep_scene in every scene "
                         "(e.g. outlier_ratio=0, kind=mixed, baseline=forward)")
    ap.add_argument("--per-scene", action="store_true", help="print one line per scene")
    ap.add_argument("--worst", type=int, default=10, help="worst scenes listed (default 10)")
    ap.add_argument("--no-timing", action="store_true",
                    help="leave out timings (the output is then identical between runs)")
    ap.add_argument("--json", metavar="PATH", help="write the records and the summary as JSON")
    args = ap.parse_args(argv)

    method = getattr(xslit, args.method)
    region = parse_region(args.region)
    overrides = parse_overrides(args.set)
    if args.only is not None:
        seeds, count = [args.only], 1
    else:
        seeds, count = range(args.seed, args.seed + 1000 * max(args.scenes, 1)), args.scenes
    clock = None if args.no_timing else time.perf_counter
    max_n = args.max_n or None
    reasons = _Reasons()
    logger = logging.getLogger("xslit")
    logger.addHandler(reasons)
    logger.propagate = False  # the reasons go into the records, not to stderr
    records = []
    start = time.perf_counter()
    for seed in seeds:
        if len(records) >= count:
            break
        got = sweep_two_view(make_estimator(method, seed, reasons), [seed], max_n=max_n,
                             threshold=args.threshold,
                             threshold_sigmas=args.threshold_sigmas, overrides=overrides,
                             region=region, factor=args.factor, clock=clock)
        records += got
        if args.per_scene:
            for r in got:
                print(scene_line(r, not args.no_timing), flush=True)
    wall = time.perf_counter() - start
    summary = summarize_sweep(records, factor=args.factor)
    o = summary["overall"]
    thr_text = (f"{args.threshold} px" if args.threshold_sigmas is None
                else f"{args.threshold_sigmas} sigma")
    first = args.seed if args.only is None else args.only
    print(f"\n{args.method}, threshold {thr_text}, max-n {args.max_n}, {o['scenes']} scenes "
          f"from seed {first}")
    print(f"precision and recall >= 0.99 of the ceiling: {_fmt(o['pr_0.99'], '.3f')}; "
          f">= 0.95: {_fmt(o['pr_0.95'], '.3f')}")
    print(f"decidable scenes (the true tensor's support beats chance): {o['decidable']}; on "
          f"them, precision and recall >= 0.99 of the ceiling: "
          f"{_fmt(o['decidable_pr_0.99'], '.3f')}, >= 0.95: {_fmt(o['decidable_pr_0.95'], '.3f')} "
          f"(what the data allow: the maximum-likelihood tensor's own mask reaches 0.99 of "
          f"the ceiling on {_fmt(o['ml_mask_0.99'], '.3f')} of them, 0.95 on "
          f"{_fmt(o['ml_mask_0.95'], '.3f')}); of the maximum-likelihood tensor's mask: >= 0.99: "
          f"{_fmt(o['decidable_ml_0.99'], '.3f')}, >= 0.95: {_fmt(o['decidable_ml_0.95'], '.3f')}; "
          f"tensor as good as the maximum-likelihood tensor (its mask, or a truncated loss no "
          f"higher): {_fmt(o['decidable_fits_ml'], '.3f')}")
    print(f"undecidable scenes: {o['undecidable_failed']} failed with a reason, "
          f"{o['undecidable_returned']} answered")
    print(f"decidable scenes whose pose the yardstick does not determine: {o['undetermined']}; "
          f"failed with a reason, a pose reported ambiguous or whose covariance covers its "
          f"error, or as good as the data allow: {_fmt(o['undetermined_honest'], '.3f')} of "
          f"them")
    print(f"determined and decidable scenes: {o['determined']} of {o['scenes']}; pose within "
          f"{args.factor}x of the yardstick: {_fmt(o['pose_within'], '.3f')} of them "
          f"({_fmt(o['pose_within_mask'], '.3f')} against maximum likelihood on the "
          f"correspondences within the threshold of the true tensor alone, without the robust "
          f"fit from the truth that re-selects them); as good "
          f"as the data allow (within, or a truncated Sampson loss no higher than the "
          f"yardsticks' poses): {_fmt(o['pose_fits_ml'], '.3f')}; of the {o['pose_beyond']} "
          f"beyond {args.factor}x, failed with a reason or reported uncertain (ambiguous, or "
          f"a covariance that covers the error): {_fmt(o['pose_beyond_reported'], '.3f')}")
    print(f"scenes with fewer than 15 true inliers (left out of the fractions): "
          f"{o['too_few_inliers']}")
    print(f"failures: {o['failures']}; rotation error median {_fmt(o['rotation_median_deg'])} "
          f"deg, max {_fmt(o['rotation_max_deg'])} deg")
    if not args.no_timing and records:
        times = np.array([r["time_s"] for r in records if "time_s" in r])
        print(f"time per scene (estimator): mean {times.mean():.3f} s, median "
              f"{np.median(times):.3f} s, max {times.max():.3f} s; sweep wall time {wall:.1f} s")
    print(f"\n{'per region':<32} scenes fails  pr.99  pr.95  prmed   dec  ml.99 fitsml   det "
          f"within  rot_med  rot_max")
    print("(pr.99, pr.95: fraction of scenes whose precision and recall both reach that fraction "
          "of the ceiling; prmed: median of the smaller ratio; dec: decidable scenes; ml.99: "
          "fraction of those within 0.99 of the maximum-likelihood tensor's mask; fitsml: "
          "fraction of those whose tensor is as good as the maximum-likelihood tensor; det: "
          "determined and decidable scenes; within: "
          "fraction of those whose pose is within --factor of the yardstick; rot_med, rot_max: "
          "rotation errors in degrees)")
    for name in SWEEP_BINS:
        for label, s in summary["regions"].get(name, {}).items():
            print(tally_line(f"{name} {label}", s))
    print()
    for line in worst_cases(records, args.worst):
        print(line)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(_json_clean({"args": vars(args), "summary": summary, "records": records}),
                      fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
