"""Summarise the interleaved before/after `tablegym bench` rounds in this folder.

Run from the repository root: `python results/bench/game_records/compare.py [FOLDER]` (default: this
folder; `threes_repeat/` holds 8 more rounds of the Threes bench alone).
Each figure is a rate (higher is faster) or a time (lower is faster); the speed ratio is after/before
for rates and before/after for times, on the medians over rounds, so >= 1 means the after commit is
as fast or faster.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
BENCHES = ["search", "sim-solve", "envs", "trap", "threes", "friday", "starship"]


def kind(column: str) -> str | None:
    """'rate', 'time' or None (a count, a ratio or a setting, not a speed figure)."""
    if "ratio" in column or "_vs_" in column or column in {"seconds", "depth"}:
        return None
    if re.search(r"(^|_)(m?s|seconds)_per_", column) or column in {"ns each", "median_seconds", "min_seconds"}:
        return "time"
    if column.endswith("/s") or "per_s" in column or column.startswith(("ours_", "c4_")):
        return "rate"
    return None


def number(cell: str) -> float | None:
    cell = cell.strip().replace(",", "")
    try:
        return float(cell)
    except ValueError:
        return None


def figures(path: Path) -> dict[str, tuple[str, float]]:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in path.read_text().splitlines() if line.startswith("|")]
    header, body = rows[0], [r for r in rows[2:]]
    out: dict[str, tuple[str, float]] = {}
    if header == ["key", "value"]:
        for key, value in body:
            k, v = kind(key), number(value)
            if k and v is not None:
                out[key] = (k, v)
        return out
    for row in body:
        for column, cell in zip(header[1:], row[1:]):
            k, v = kind(column), number(cell)
            if k and v is not None:
                out[f"{row[0]} {column}"] = (k, v)
    return out


def main(folder: Path = HERE, title: str = "Game records (one record per game, each game's modules in its folder): tablegym bench before (30a25c0) and after (34fdf36)") -> None:
    rounds = sorted({int(m.group(1)) for p in folder.glob("*.txt") if (m := re.search(r"\.(\d+)\.txt$", p.name))})
    benches = [b for b in BENCHES if (folder / f"{b}.before.1.txt").exists()]
    print(f"# {title}, {len(rounds)} interleaved rounds\n")
    print("Each round ran every bench once on each commit, alternating which went first; nothing else ran.")
    print("Medians over rounds; speed ratio = after/before for rates, before/after for times (>= 1: no slower).\n")
    print("| bench | figure | before | after | speed ratio |")
    print("|---|---|---|---|---|")
    ratios = []
    for bench in benches:
        done = [r for r in rounds if (folder / f"{bench}.before.{r}.txt").exists()]  # some benches got more rounds
        runs = {side: [figures(folder / f"{bench}.{side}.{r}.txt") for r in done] for side in ("before", "after")}
        for name, (k, _) in runs["before"][0].items():
            b = statistics.median(f[name][1] for f in runs["before"])
            a = statistics.median(f[name][1] for f in runs["after"])
            ratio = a / b if k == "rate" else b / a
            ratios.append(ratio)
            print(f"| {bench} | {name} ({k}) | {b:,.4g} | {a:,.4g} | {ratio:.3f} |")
    print(f"\nfigures: {len(ratios)}, median ratio {statistics.median(ratios):.3f}, "
          f"min {min(ratios):.3f}, max {max(ratios):.3f}, below 0.95: {sum(r < 0.95 for r in ratios)}")


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE))
