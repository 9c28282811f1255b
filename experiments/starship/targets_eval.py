"""How close ships come to what they were asked for: the conditioned generator against the staged
generator given the same targets.

    python -m tablegym.experiments.starship.targets_eval --checkpoint runs/starship-targets/generator.pt \\
        --episodes 200 --workers 2 --out results/starship/targets.md

For each seed ``s`` of ``--eval-seed .. --eval-seed + --episodes - 1`` the targets are the ones
``TargetStarshipEnv.reset(seed=s)`` draws (``conditioned.TARGETS``: uniform over their ranges),
and three generators build a ship:

- ``learned``: the conditioned policy of ``--checkpoint`` (trained with ``rl.py --targets``), asked
  for those targets from the env's start ship for ``s``;
- ``staged``: the 14-stage generator for seed ``s`` with its thrusters and weapons stages set to
  exactly the target points (``min_points = max_points``); it has no parameter for forward
  firepower, so that column measures what it builds anyway;
- ``staged, defaults``: the 14-stage generator as shipped (35-45 thrust, 12-18 weapon points), the
  reference of a generator that ignores the targets.

Per target and generator: the mean absolute error (points) with a 95% interval, the share of
ships within 1 point and the correlation of built with asked; per generator: validity (Wilson
95%), mean quality, mean quality v2 (``audit.layout_quality``: quality times the share of the
audit's layout rules passed) and the mean number of those rules passed. Episodes go to ``--journal`` as they finish (a rerun resumes).
"""

from __future__ import annotations

import functools
import json
import math
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tablegym.envs.starship.conditioned import TARGETS, TargetStarshipEnv, measures
from tablegym.envs.starship.layout import RULES, audit, layout_quality
from tablegym.envs.starship.pipeline import Pipeline
from tablegym.envs.starship.quality import quality, validate
from tablegym.experiments.game_runs import recorded, run_tasks
from tablegym.experiments.stats import Z95, wilson_interval
from tablegym.training.flags import OneLineParser
from tablegym.training.sb3 import write_report

PROG = "python -m tablegym.experiments.starship.targets_eval"
ROWS = ("learned", "staged", "staged, defaults")


def targets_of(seed: int, env_kwargs: dict[str, Any]) -> dict[str, float]:
    """The targets ``TargetStarshipEnv.reset(seed=seed)`` draws."""
    env = TargetStarshipEnv(**env_kwargs)
    env.reset(seed=seed)
    return dict(env.targets)


@functools.lru_cache(maxsize=1)
def _generator(path: str) -> Any:
    import torch

    from tablegym.models.starship.learned import LearnedGenerator

    torch.set_num_threads(1)
    return LearnedGenerator.load(path)


def play_one(task: tuple[str, int, str]) -> dict:
    """One ship ``(row, seed, checkpoint)``: what it was asked for, what it built, validity, quality."""
    row, seed, checkpoint = task
    gen = _generator(checkpoint)
    targets = targets_of(seed, gen.env_kwargs)
    size = gen.env.env.pipeline.size
    if row == "learned":
        ship, _ = gen.generate(seed, targets)
    elif row == "staged":
        points = {"thrusters": int(targets["thrust_points"]), "weapons": int(targets["weapon_points"])}
        ship = Pipeline(size=size, **{k: {"min_points": v, "max_points": v} for k, v in points.items()}).generate(seed)
    elif row == "staged, defaults":
        ship = Pipeline(size=size).generate(seed)
    else:
        raise ValueError(f"row must be one of {ROWS}, got {row!r}")
    q, v, a = quality(ship), validate(ship), audit(ship)
    return {
        "game": seed,
        "row": row,
        "checkpoint": checkpoint,
        "targets": targets,
        "measures": measures(ship, q.raw["forward_firepower"]),
        "valid": v.ok,
        "quality": q.score,
        "quality_v2": layout_quality(ship, a, q.score),
        "rules": int(sum(a.rules.values())),
    }


def summarise(records: list[dict]) -> dict[str, Any]:
    """Validity, quality, quality v2 and rules passed, and, per target, the mean absolute error +- 95%,
    share within 1, correlation."""
    n = len(records)
    valid = sum(r["valid"] for r in records)
    out: dict[str, Any] = {"n": n, "valid": valid, "wilson": wilson_interval(valid, n)}
    for key in ("quality", "quality_v2", "rules"):  # a journal written before the audit has no v2
        values = np.array([r.get(key, math.nan) for r in records], dtype=float)
        out[key] = float(values.mean())
        out[f"{key}_ci"] = float(Z95 * values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    for k in TARGETS:
        asked = np.array([r["targets"][k] for r in records])
        built = np.array([r["measures"][k] for r in records])
        err = np.abs(built - asked)
        corr = float(np.corrcoef(asked, built)[0, 1]) if asked.std() > 0 and built.std() > 0 else math.nan
        out[k] = {
            "mae": float(err.mean()),
            "ci": float(Z95 * err.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan,
            "within1": float((err <= 1).mean()),
            "corr": corr,
        }
    return out


def table(summaries: dict[str, dict[str, Any]]) -> str:
    head = [
        "generator",
        "ships",
        "valid [95% Wilson]",
        "quality ± 95%",
        "quality v2 ± 95%",
        f"layout rules passed (of {len(RULES)})",
    ]
    for k in TARGETS:
        head += [f"{k}: mean abs. error", "within 1", "corr."]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for row, s in summaries.items():
        lo, hi = s["wilson"]
        cells = [
            row,
            str(s["n"]),
            f"{s['valid']}/{s['n']} [{lo:.3f}, {hi:.3f}]",
            f"{s['quality']:.3f} ± {s['quality_ci']:.3f}",
            f"{s['quality_v2']:.3f} ± {s['quality_v2_ci']:.3f}",
            f"{s['rules']:.2f} ± {s['rules_ci']:.2f}",
        ]
        for k in TARGETS:
            t = s[k]
            cells += [
                f"{t['mae']:.2f} ± {t['ci']:.2f}",
                f"{t['within1']:.2f}",
                "-" if math.isnan(t["corr"]) else f"{t['corr']:.2f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True, help="a generator trained with rl.py --targets (generator.pt)")
    p.add_argument("--episodes", type=int, default=200, help="seeds per generator (default 200)")
    p.add_argument("--eval-seed", type=int, default=10_000, help="the first seed (default 10000)")
    p.add_argument("--workers", type=int, default=1, help="processes building ships")
    p.add_argument("--journal", help="episode records (default: next to --out, .jsonl)")
    p.add_argument("--out", default="results/starship/targets.md", help="the markdown report")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    args = p.parse_args(argv)
    if args.episodes < 1 or args.workers < 1:
        p.error("--episodes and --workers must be at least 1")
    from tablegym.models.checkpoint import CheckpointError

    try:
        gen = _generator(args.checkpoint)
    except CheckpointError as err:
        p.error(str(err))
    if not gen.targets:
        p.error(f"--checkpoint {args.checkpoint}: this generator was trained without targets (rl.py --targets)")
    journal = args.journal or str(Path(args.out).with_suffix(".jsonl"))
    Path(journal).parent.mkdir(parents=True, exist_ok=True)
    seeds = range(args.eval_seed, args.eval_seed + args.episodes)
    results = {}
    for row in ROWS:
        done = recorded(journal, row=row, checkpoint=args.checkpoint)
        tasks = [(row, s, args.checkpoint) for s in seeds if s not in done]
        run_tasks(
            play_one,
            tasks,
            done,
            total=len(seeds),
            workers=args.workers,
            out=journal,
            label=row,
            progress=args.progress,
            postfix="quality",
        )
        results[row] = summarise([done[s] for s in seeds])
    ranges = ", ".join(f"{k} {lo}..{hi}" for k, (lo, hi) in TARGETS.items())
    meta = gen.metadata
    steps = f"{meta['timesteps']:,}" if isinstance(meta.get("timesteps"), int) else "?"
    text = (
        "\n".join(
            [
                "## Starship: ships built to targets",
                "",
                f"Generator `{args.checkpoint}` ({steps} training steps; env {json.dumps(gen.env_kwargs)}). "
                f"Seeds {args.eval_seed}..{args.eval_seed + args.episodes - 1}; the targets of each seed drawn uniformly ({ranges}). "
                "`staged` gets the thrust and weapon targets as its stages' points; it has no forward-firepower parameter.",
                "",
                table(results),
                "",
                "Command:",
                "",
                f"```\n{PROG} {shlex.join(argv)}\n```",
            ]
        )
        + "\n"
    )
    return write_report(text, args.out)


if __name__ == "__main__":
    main()
