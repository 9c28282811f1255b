"""Trilobite's learned / `advanced` alpha-beta nodes/s, measured in pairs (target: 0.6x).

    python -m tablegym.experiments.trilobite.learned_ratio [--repeats 10] [--depth 9]

The bench (`tablegym bench search`) times every `advanced` search, then every learned one; on a
shared virtual machine the speed drifts between the two halves (the `advanced` figure moved
1.67-2.48 M nodes/s between rounds of the bench). Here each position is searched with `advanced`
and with the learned network back to back, the ratio taken per pair, and the median over pairs
reported: the same searches as the bench (depth 9, the bench's 5 positions, value cache cleared
before each search).
"""

from __future__ import annotations

import argparse
import statistics

from tablegym.envs.trilobite.core import TrilobiteGame
from tablegym.envs.trilobite.heuristics import EVALUATORS
from tablegym.experiments.trilobite.bench import trilobite_positions
from tablegym.models.learned import load_evaluator
from tablegym.models.netkernel import clear_value_cache
from tablegym.search.alphabeta_search import alphabeta


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=10, help="times each position is searched with both")
    p.add_argument("--depth", type=int, default=9)
    args = p.parse_args(argv)
    positions = trilobite_positions()
    advanced, learned = EVALUATORS["advanced"], load_evaluator(TrilobiteGame(), None)
    for ev in (advanced, learned):
        alphabeta(positions[0], ev, depth=3)
    ratios, rates = [], {"advanced": [], "learned": []}
    for _ in range(args.repeats):
        for s in positions:
            a = alphabeta(s, advanced, depth=args.depth).nodes_per_second
            clear_value_cache(learned.params)
            b = alphabeta(s, learned, depth=args.depth).nodes_per_second
            ratios.append(b / a)
            rates["advanced"].append(a)
            rates["learned"].append(b)
    print(
        f"pairs {len(ratios)}: learned/advanced median {statistics.median(ratios):.3f} "
        f"(quartiles {statistics.quantiles(ratios, n=4)[0]:.3f}-{statistics.quantiles(ratios, n=4)[2]:.3f}); "
        f"medians advanced {statistics.median(rates['advanced']):,.0f}, learned {statistics.median(rates['learned']):,.0f} nodes/s"
    )


if __name__ == "__main__":
    main()
