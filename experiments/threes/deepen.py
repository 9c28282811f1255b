"""Depth-3 expectimax with the shipped network, one swipe deeper where the board is full.

An experiment, not a spec option: on a move whose board has at most K empty cells the player
searches ``expectimax:depth=4,eval=learned`` instead of depth 3 (K = -1: never). With
``--penalty P`` both searches score a leaf where the game is over P below its score
(``ExpectimaxAgent``'s ``terminal_penalty``; 0 by default, as the spec's searches). Games are seeded as
``python -m tablegym.experiments.threes.evaluate`` seeds them (seed 0, game g), so each game pairs with
the depth-3 game of the same deal in results/threes/learned.jsonl (and deals 200-399 in
results/threes/deepening/depth3.jsonl). Records are appended as games end; a rerun skips those
already there.

    python -m tablegym.experiments.threes.deepen K OUT.jsonl [GAMES] [--penalty P]

Each record adds "deep" (moves searched deeper) and "cpu" (the searches' process time, s)."""

from __future__ import annotations

import argparse
import json
import os
import time
from multiprocessing import Pool

_AGENT = None


class Deepened:
    """Depth 3, or depth 4 on a board with at most ``k`` empty cells."""

    def __init__(self, k: int, penalty: float) -> None:
        from tablegym.models.threes.agents import expectimax

        self.shallow = expectimax(3, "learned", terminal_penalty=penalty)
        self.deep = expectimax(4, "learned", terminal_penalty=penalty)
        self.k, self.deepened, self.cpu = k, 0, 0.0

    @property
    def leaves(self) -> int:
        """The leaves both searches scored (what ``play_game`` records; the earlier records hold 0)."""
        return self.shallow.leaves + self.deep.leaves

    def __call__(self, state, rng=None) -> int:
        board = int(state.search_inputs()[0])
        empty = sum((board >> (4 * c)) & 15 == 0 for c in range(16))
        start = time.process_time()
        deeper = empty <= self.k
        action = (self.deep if deeper else self.shallow)(state, rng)
        self.cpu += time.process_time() - start
        self.deepened += deeper
        return action


def play(task: tuple[int, float, int]) -> dict:
    global _AGENT
    from tablegym.experiments.threes.records import play_game

    k, penalty, game = task
    if _AGENT is None:
        _AGENT = Deepened(k, penalty)
    deep, cpu = _AGENT.deepened, _AGENT.cpu
    label = f"expectimax:depth=3,eval=learned, depth 4 at <= {k} empty" + (f", penalty {penalty:g}" if penalty else "")
    record = play_game(_AGENT, label, "+", 0, game)
    return {**record, "deep": _AGENT.deepened - deep, "cpu": _AGENT.cpu - cpu}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("k", type=int, metavar="K", help="search depth 4 on boards with at most K empty cells (-1: never)")
    parser.add_argument("out", metavar="OUT.jsonl", help="the records file (appended to; a rerun resumes)")
    parser.add_argument("games", nargs="?", type=int, default=200, metavar="GAMES", help="deals 0..GAMES-1")
    parser.add_argument(
        "--penalty", type=float, default=0.0, metavar="P", help="a finished game's leaf scored P below its score (P >= 0)"
    )
    args = parser.parse_args(argv)
    if args.penalty < 0:
        parser.error("--penalty takes a number >= 0")
    k, out, games, penalty = args.k, args.out, args.games, args.penalty
    done = {json.loads(line)["game"] for line in open(out)} if os.path.exists(out) else set()
    with Pool(2) as pool, open(out, "a") as f:
        for record in pool.imap_unordered(play, [(k, penalty, g) for g in range(games) if g not in done]):
            f.write(json.dumps(record) + "\n")
            f.flush()


if __name__ == "__main__":
    main()
