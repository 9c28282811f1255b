"""The staged starship generator over many seeds: validity rate, ships per second, and the
distribution of every quality term (and of what the stages built).

    python -m tablegym.experiments.starship.bench --seeds 1000 --out results/starship/generator.md
    tablegym bench starship --param seeds=200

Speed is timed on one core after a warm-up ship (the compiled kernels load from numba's cache
or compile then): generation alone, and validity + quality scoring alone.
"""

from __future__ import annotations

import math
import os
import platform
import time
from typing import Any

import numpy as np

from tablegym.envs.rates import per_second
from tablegym.envs.starship.pipeline import Pipeline
from tablegym.envs.starship.quality import QUALITY_WEIGHTS, quality, validate
from tablegym.envs.starship.ship import BUNK, DOOR, EMPTY, KIND, PH, PW, QUARTERS, THRUSTER, WEAPON, Ship
from tablegym.training.flags import OneLineParser


def _counts(ship: Ship) -> dict[str, float]:
    kinds = ship.parts[:, KIND]
    area = ship.parts[:, PH] * ship.parts[:, PW]
    return {
        "ship_tiles": float((ship.tiles != EMPTY).sum()),
        "thruster_points": float(area[kinds == THRUSTER].sum()),
        "weapon_points": float(area[kinds == WEAPON].sum()),
        "crew_rooms": float(np.isin(kinds, (QUARTERS, BUNK)).sum()),
        "doors": float((ship.tiles == DOOR).sum()),
    }


def _spread(values: list[float]) -> dict[str, float]:
    a = np.array(values, float)
    a = a[~np.isnan(a)]
    if not len(a):
        return {"n": 0, "min": math.nan, "median": math.nan, "mean": math.nan, "max": math.nan}
    return {
        "n": int(len(a)),
        "min": float(a.min()),
        "median": float(np.median(a)),
        "mean": float(a.mean()),
        "max": float(a.max()),
    }


def run(seeds: int = 1000, first_seed: int = 0, **config: Any) -> dict[str, Any]:
    """Generate and score ``seeds`` ships (seeds first_seed, first_seed + 1, ...); every number."""
    pipeline = Pipeline(**config)
    pipeline.generate(first_seed)  # warm-up: load the compiled kernels outside the timing
    stage_s = {s.name: 0.0 for s in pipeline.stages if s.enabled}
    gen_s = score_s = 0.0
    invalid: dict[str, int] = {}
    raw: dict[str, list[float]] = {k: [] for k in QUALITY_WEIGHTS}
    terms: dict[str, list[float]] = {k: [] for k in QUALITY_WEIGHTS}
    scores: list[float] = []
    counts: dict[str, list[float]] = {}
    valid = 0
    for seed in range(first_seed, first_seed + seeds):
        t0 = time.perf_counter()
        t = t0
        ship = None
        for stage, ship in pipeline.steps(seed):  # noqa: B007 (ship: the last stage's, read after the loop)
            now = time.perf_counter()
            stage_s[stage.name] += now - t
            t = now
        gen_s += time.perf_counter() - t0
        if ship is None:
            ship = pipeline.new_ship()
        t0 = time.perf_counter()
        v = validate(ship)
        q = quality(ship)
        score_s += time.perf_counter() - t0
        valid += v.ok
        for check in v.checks:
            if not check.ok:
                invalid[check.rule] = invalid.get(check.rule, 0) + 1
        for k in QUALITY_WEIGHTS:
            raw[k].append(q.raw[k])
            terms[k].append(q.terms[k])
        scores.append(q.score)
        for k, x in _counts(ship).items():
            counts.setdefault(k, []).append(x)
    return {
        "seeds": seeds,
        "first_seed": first_seed,
        "config": pipeline.config(),
        "valid": valid,
        "validity_rate": valid / seeds,
        "failed_rules": invalid,
        "ships_per_s": per_second(seeds, gen_s),
        "ms_per_ship": 1000 * gen_s / seeds,
        "scored_per_s": per_second(seeds, score_s),
        "stage_ms": {k: 1000 * v / seeds for k, v in stage_s.items()},
        "raw": {k: _spread(v) for k, v in raw.items()},
        "terms": {k: _spread(v) for k, v in terms.items()},
        "score": _spread(scores),
        "counts": {k: _spread(v) for k, v in counts.items()},
    }


def bench_starship(seeds: int = 1000, first_seed: int = 0) -> dict[str, Any]:
    """The headline figures of ``run`` (for ``tablegym bench starship``)."""
    r = run(seeds, first_seed)
    out: dict[str, Any] = {k: r[k] for k in ("seeds", "valid", "validity_rate", "ships_per_s", "ms_per_ship", "scored_per_s")}
    out["quality score"] = r["score"]
    out.update({f"term {k}": v for k, v in r["terms"].items()})
    return out


def _f(x: float) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def markdown(r: dict[str, Any]) -> str:
    """``run``'s result as the markdown of results/starship/generator.md."""
    lines = [
        "# Starship generator: 14-stage pipeline over seeds",
        "",
        f"Seeds {r['first_seed']}..{r['first_seed'] + r['seeds'] - 1}, default pipeline (32 x 32, detour limit 5), "
        f"`python -m tablegym.experiments.starship.bench --seeds {r['seeds']}`; one core of a shared "
        f"{os.cpu_count()}-core machine (load average {os.getloadavg()[0]:.1f} at the end; "
        f"{platform.python_implementation()} {platform.python_version()}).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| valid ships | {r['valid']} / {r['seeds']} ({100 * r['validity_rate']:.1f}%) |",
        f"| rules failed | {', '.join(f'{k}: {v}' for k, v in r['failed_rules'].items()) or 'none'} |",
        f"| generation, ships per second | {r['ships_per_s']:.1f} ({r['ms_per_ship']:.2f} ms a ship) |",
        f"| validity + quality scoring, ships per second | {r['scored_per_s']:.1f} |",
        "",
        "## Quality terms",
        "",
        "Each term in [0, 1] (1 best; weighted mean = the quality score) and its raw measure in tiles or points "
        "(nan, left out of the raw columns, where a ship has nothing to measure); definitions in "
        "`tablegym.envs.starship.quality`.",
        "",
        "| term | weight | min | median | mean | max | raw min | raw median | raw mean | raw max |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for k, w in QUALITY_WEIGHTS.items():
        t, a = r["terms"][k], r["raw"][k]
        lines.append(
            f"| {k} | {w:g} | "
            + " | ".join(_f(t[s]) for s in ("min", "median", "mean", "max"))
            + " | "
            + " | ".join(_f(a[s]) for s in ("min", "median", "mean", "max"))
            + " |"
        )
    s = r["score"]
    lines.append("| **quality score** | | " + " | ".join(_f(s[x]) for x in ("min", "median", "mean", "max")) + " | | | | |")
    lines += ["", "## What the stages built", "", "| count | min | median | mean | max |", "|---|---|---|---|---|"]
    for k, c in r["counts"].items():
        lines.append(f"| {k} | " + " | ".join(_f(c[x]) for x in ("min", "median", "mean", "max")) + " |")
    lines += ["", "## Time per stage", "", "| stage | ms a ship |", "|---|---|"]
    lines += [f"| {k} | {v:.3f} |" for k, v in r["stage_ms"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m tablegym.experiments.starship.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=1000, help="ships to generate (default 1000)")
    parser.add_argument("--first-seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--out", help="also write the markdown report here")
    args = parser.parse_args(argv)
    text = markdown(run(args.seeds, args.first_seed))
    print(text, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
