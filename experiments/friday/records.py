"""The records and the results table of Friday runs: the deal of game ``index``, one game's
record as the published tables keep it, their summary (win rate with its Wilson interval, mean
score) and its markdown row. The eval script (``evaluate``) and the SB3 baseline (experiments/sb3_baseline.py)
both write them.
"""

from __future__ import annotations

import numpy as np

from tablegym.envs.rates import per_second
from tablegym.experiments.solo import play_deal
from tablegym.experiments.stats import wilson_interval


def deal(level: int, seed: int, index: int, options: dict | None = None):
    """The opening state of game ``index`` at ``level`` and the generator that plays its chance
    (Friday's record ``deal``: the one seeding rule of every Friday run)."""
    from tablegym.envs.friday.core import FridayGame
    from tablegym.envs.friday.core import deal as friday_deal

    return friday_deal(FridayGame(level=level, **(options or {})), seed, index)


def play_game(agent, level: int, seed: int, index: int, options: dict | None = None) -> dict:
    """Game ``index`` at ``level`` played by ``agent`` (state, rng) -> action; its record (the
    single-player runner's, ``tablegym.experiments.solo``, in this script's fields)."""
    from tablegym.envs.friday.core import FridayGame

    polled = getattr(agent, "polled", 0)
    game = FridayGame(level=level, **(options or {}))
    rec = play_deal(game, agent, seed, index)
    return {
        "game": index,
        "agent": agent.name,
        "level": level,
        "seed": seed,
        "options": game.spec.options,
        "won": rec["won"],
        "score": rec["score"],
        "life": rec["life"],
        "step": rec["step"],
        "pirates_beaten": rec["pirates_beaten"],
        "decisions": rec["decisions"],
        "seconds": rec["seconds"],
        "polled": getattr(agent, "polled", 0) - polled,
    }


def summarise(records: list[dict]) -> dict:
    n = len(records)
    wins = sum(r["won"] for r in records)
    lo, hi = wilson_interval(wins, n)
    scores = np.array([r["score"] for r in records], dtype=float)
    seconds = sum(r["seconds"] for r in records)
    polled = sum(r.get("polled", 0) for r in records)
    return {
        "games": n,
        "wins": wins,
        "rate": wins / n,
        "lo": lo,
        "hi": hi,
        "score": float(scores.mean()),
        "score_ci": float(1.96 * scores.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
        "beaten": float(np.mean([r["pirates_beaten"] for r in records])),
        "ended_in": [float(np.mean([r["step"] == k for r in records])) for k in range(4)],
        "s_per_game": seconds / n,
        "polled_per_s": per_second(polled, seconds) if polled else float("nan"),
    }


HEADER = (
    "| agent | level | games | wins | win rate [95%] | mean score ± 95% "
    "| ended in green / yellow / red / pirates | s/game | options |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def markdown_row(label: str, level: int, s: dict, options: str) -> str:
    return (
        f"| {label} | {level} | {s['games']} | {s['wins']} | {100 * s['rate']:.1f}% "
        f"[{100 * s['lo']:.1f}, {100 * s['hi']:.1f}] | {s['score']:.1f} ± {s['score_ci']:.1f} "
        f"| {' / '.join(f'{100 * e:.0f}%' for e in s['ended_in'])} | {s['s_per_game']:.2f} | {options} |"
    )


def options_text(options: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in options.items() if k != "level")
