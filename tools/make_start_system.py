"""Make the start system of the 13-point minimal solver by monodromy.

A generic complex instance of the eight equations of ``xslit.epipolar.minimal`` is built around
one random complex matrix C (so one solution is known). Its other solutions are found by
monodromy: all known solutions are tracked around random loops in the parameter space (start ->
random chart -> random chart -> start), and every new end point, with its gauge transpose
partner, joins the set. The search stops when the set has not grown for --stable loops after
reaching at least 56 solutions (28 tensors times two matrices C), and the file is written only
when exactly 56 distinct solutions with small residuals were found.

The paths are tracked by the compiled kernel when numba is installed and by numpy otherwise
(--backend forces one); both take the same steps, so the file they write holds the same
solutions to rounding.

Usage: python tools/make_start_system.py [--seed 0] [--stable 5] [--backend auto]
                                          [--output xslit/epipolar/data/start_system_13pt.npz]
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

from xslit.epipolar.minimal import (
    N_SOLUTIONS,
    gauge_transpose,
    matrix_from_unknowns,
    minimal_residuals,
    track_paths,
)
from xslit.epipolar.minors import principal_minor_tensor

DEFAULT_OUTPUT = (pathlib.Path(__file__).resolve().parents[1] / "xslit" / "epipolar" / "data"
                  / "start_system_13pt.npz")
OFF = ((1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2))


def random_chart(rng) -> np.ndarray:
    """A random complex chart ``(f0, f1, f2)`` (3, 16) with ``f0[15] = 1``, ``f1[15] = f2[15] = 0``."""
    p = rng.normal(size=(3, 16)) + 1j * rng.normal(size=(3, 16))
    p[:, 15] = (1.0, 0.0, 0.0)
    return p


def unknowns_of(C, ab) -> np.ndarray:
    """``u`` (8, K) from matrices ``C`` (K, 4, 4) and chart coordinates ``ab`` (2, K)."""
    return np.concatenate([ab, np.stack([C[:, r, c] for r, c in OFF])])


def seeded_instance(rng):
    """A generic complex chart with one known solution ``u`` (8, 1)."""
    C = rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))
    C[0, 1:] = 1.0
    f = principal_minor_tensor(C).reshape(16)
    p = random_chart(rng)
    ab = rng.normal(size=2) + 1j * rng.normal(size=2)
    p[0] = f - ab[0] * p[1] - ab[1] * p[2]
    return p, unknowns_of(C[None], ab[:, None])


def with_partners(u, params) -> np.ndarray:
    """``u`` and the unknowns of the gauge transposes of its matrices, (8, 2K)."""
    C = matrix_from_unknowns(u, params[..., None])
    return np.concatenate([u, unknowns_of(gauge_transpose(C), u[:2])], axis=1)


def add_new(known, new, rtol=1e-6) -> np.ndarray:
    """Columns of ``new`` (finite, not within ``rtol`` of a known one) appended to ``known``."""
    for v in new.T:
        if not np.all(np.isfinite(v)):
            continue
        d = np.linalg.norm(known - v[:, None], axis=0)
        if np.all(d > rtol * (1.0 + np.linalg.norm(v))):
            known = np.concatenate([known, v[:, None]], axis=1)
    return known


def monodromy(rng, stable: int, max_loops: int = 200, verbose: bool = True,
              backend: str = "auto"):
    params, known = seeded_instance(rng)
    known = add_new(known[:, :0], with_partners(known, params))
    quiet = 0
    for loop in range(max_loops):
        q1, q2 = random_chart(rng), random_chart(rng)
        u = known
        for a, b in ((params, q1), (q1, q2), (q2, params)):
            k = u.shape[1]
            u, ok = track_paths(u, np.repeat(a[..., None], k, -1), np.repeat(b[..., None], k, -1),
                                predictor="rk4", backend=backend)
            u = u[:, ok]
        before = known.shape[1]
        known = add_new(known, with_partners(u, params))
        quiet = quiet + 1 if known.shape[1] == before else 0
        if verbose:
            print(f"loop {loop + 1}: {known.shape[1]} solutions", flush=True)
        if known.shape[1] >= N_SOLUTIONS and quiet >= stable:
            break
    return params, known


def pair_up(u, params) -> np.ndarray:
    """Order the 56 solutions so that column ``k + 28`` is the partner of column ``k``."""
    partners = with_partners(u, params)[:, u.shape[1]:]
    n = u.shape[1]
    d = np.linalg.norm(u[:, :, None] - partners[:, None, :], axis=0)  # d[i, j]: u_i vs partner_j
    match = np.argmin(d, axis=0)  # partner of j is column match[j]
    if sorted(match) != list(range(n)) or np.any(match[match] != np.arange(n)):
        raise RuntimeError("the solutions do not split into transpose pairs")
    first = [j for j in range(n) if j < match[j]]
    if len(first) != n // 2:
        raise RuntimeError("a solution is its own transpose partner")
    return u[:, first + [int(match[j]) for j in first]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--stable", type=int, default=5,
                    help="loops without a new solution before stopping (default 5)")
    ap.add_argument("--output", type=pathlib.Path, default=DEFAULT_OUTPUT,
                    help="where to write the .npz (default: the package's data folder)")
    ap.add_argument("--backend", choices=("auto", "numba", "numpy"), default="auto",
                    help="path tracking: compiled (numba) or numpy (default: numba if installed)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    params, known = monodromy(rng, args.stable, backend=args.backend)
    if known.shape[1] != N_SOLUTIONS:
        print(f"found {known.shape[1]} solutions, expected {N_SOLUTIONS}; nothing written",
              file=sys.stderr)
        return 1
    sols = pair_up(known, params)
    res = np.abs(minimal_residuals(sols, params[..., None])).max()
    print(f"{sols.shape[1]} solutions, largest residual {res:.1e}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.output, params=params, solutions=sols)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
