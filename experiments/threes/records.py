"""The records and the results table of Threes runs: one game's record as the published tables
keep it, their summary (score quantiles, milestones reached) and its markdown row. The eval
script (``evaluate``) and the SB3 baseline (experiments/sb3_baseline.py) both write them.
"""

from __future__ import annotations

import numpy as np

from tablegym.envs.rates import per_second
from tablegym.experiments.solo import play_deal

MILESTONES = (384, 768, 1536, 3072, 6144)


def play_game(agent, label: str, hint: str, seed: int, index: int) -> dict:
    """Game ``index`` of seed ``seed`` played by ``agent`` (state, rng) -> swipe; its record (the
    single-player runner's, ``tablegym.experiments.solo``, in this script's fields)."""
    from tablegym.envs.threes.core import ThreesGame

    leaves = getattr(agent, "leaves", 0)
    rec = play_deal(ThreesGame(hint), agent, seed, index)
    return {
        "game": index,
        "agent": label,
        "hint": hint,
        "seed": seed,
        "score": rec["score"],
        "highest": rec["highest"],
        "moves": rec["moves"],
        "seconds": rec["seconds"],
        "leaves": getattr(agent, "leaves", 0) - leaves,
    }


def summarise(records: list[dict]) -> dict:
    scores = np.array([r["score"] for r in records])
    highest = np.array([r["highest"] for r in records])
    moves = sum(r["moves"] for r in records)
    seconds = sum(r["seconds"] for r in records)
    n = len(records)
    out = {
        "games": n,
        "low": int(scores.min()),
        "median": float(np.median(scores)),
        "mean": float(scores.mean()),
        "mean_ci95": float(1.96 * scores.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
        "high": int(scores.max()),
        "moves_per_s": per_second(moves, seconds),
        "s_per_move": seconds / moves if moves else float("nan"),
    }
    leaves = sum(r.get("leaves", 0) for r in records)
    if leaves:
        out["leaves_per_s"] = per_second(leaves, seconds)
    for m in MILESTONES:
        out[f"pct_{m}"] = float(100.0 * np.mean(highest >= m))
    return out


def markdown_row(label: str, s: dict, hint: str) -> str:
    pct = " | ".join(f"{s[f'pct_{m}']:.0f}%" for m in MILESTONES)
    return (
        f"| {label} | {s['games']} | {s['low']:,} | {s['median']:,.0f} | {s['mean']:,.0f} ± {s['mean_ci95']:,.0f} "
        f"| {s['high']:,} | {pct} | {s['moves_per_s']:,.1f} | `{hint}` |"
    )


HEADER = (
    "| agent | games | low | median | mean ± 95% | high | >=384 | >=768 | >=1536 | >=3072 | >=6144 "
    "| moves/s | hint |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)
