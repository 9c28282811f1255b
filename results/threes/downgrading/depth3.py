"""Depth-3 expectimax with the shipped network, its leaves read downgraded from rank TOP (13: 3072).

Needs depth3.patch of this folder applied (``git apply results/threes/downgrading/depth3.patch``:
``ExpectimaxAgent(downgrade=TOP)``, the leaves read through ``board.downgraded``); not part of the
package. Games are seeded as ``python -m tablegym.envs.threes.evaluate`` seeds them (seed 0, game
g), so each pairs with the depth-3 game of the same deal (deals 0-199: results/threes/learned.jsonl,
200-399: results/threes/deepening/depth3.jsonl). Records are appended as games end; a rerun skips
those already there.

    python results/threes/downgrading/depth3.py TOP OUT.jsonl FIRST LAST
"""

from __future__ import annotations

import json
import os
import sys
import time
from multiprocessing import Pool

_AGENT = None


def play(task: tuple[int, int]) -> dict:
    global _AGENT
    from tablegym.envs.threes.agents import expectimax
    from tablegym.envs.threes.records import play_game

    top, game = task
    if _AGENT is None:
        _AGENT = expectimax(3, "learned", downgrade=top)
    start = time.process_time()
    record = play_game(_AGENT, f"expectimax:depth=3,eval=learned, downgraded from rank {top}", "+", 0, game)
    return {**record, "cpu": time.process_time() - start}


def main() -> None:
    try:
        top, out, first, last = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    except (IndexError, ValueError):
        print("usage: depth3.py TOP OUT.jsonl FIRST LAST (integers but OUT)", file=sys.stderr)
        raise SystemExit(2)
    done = {json.loads(line)["game"] for line in open(out)} if os.path.exists(out) else set()
    with Pool(2) as pool, open(out, "a") as f:
        for record in pool.imap_unordered(play, [(top, g) for g in range(first, last) if g not in done]):
            f.write(json.dumps(record) + "\n")
            f.flush()


if __name__ == "__main__":
    main()
