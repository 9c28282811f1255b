"""``tablegym bench``: the speed benchmarks, the package's own and those of every game's record."""

from __future__ import annotations

import argparse
import inspect
import math
from typing import Any

import numpy as np

from tablegym.envs import plugins
from tablegym.experiments.commands.shared import key_values, parse_value, positive_float, require
from tablegym.training.flags import bounded_int


def _fmt_cell(x: Any) -> str:
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, (int, np.integer)):
        return f"{x:,}"
    if isinstance(x, (float, np.floating)):
        if math.isnan(x) or math.isinf(x):
            return str(x)
        return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"
    return str(x)


def format_table(data: dict[str, Any]) -> str:
    """A benchmark's dict as a markdown table: one row per sub-dict, else key | value rows.

    >>> print(format_table({"nodes": 1200, "seconds": 0.5}))
    | key | value |
    |---|---|
    | nodes | 1,200 |
    | seconds | 0.5 |
    """
    if data and all(isinstance(v, dict) for v in data.values()):
        cols: list[str] = []
        for v in data.values():
            cols += [k for k in v if k not in cols]
        lines = ["| name | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 1)]
        for name, row in data.items():
            lines.append(f"| {name} | " + " | ".join(_fmt_cell(row.get(c, "")) for c in cols) + " |")
        return "\n".join(lines)
    flat: dict[str, Any] = {}

    def walk(prefix: str, d: dict[str, Any]) -> None:
        for k, v in d.items():
            if isinstance(v, dict):
                walk(f"{prefix}{k}.", v)
            else:
                flat[f"{prefix}{k}"] = v

    walk("", data)
    return "\n".join(["| key | value |", "|---|---|"] + [f"| {k} | {_fmt_cell(v)} |" for k, v in flat.items()])


def _benches() -> dict[str, str]:
    """``tablegym bench`` names -> benchmark functions: "vec" (every game's vector env, beside
    its SyncVectorEnv), "rl" (PPO training steps/s beside sb3-contrib's), then those of every
    game's record."""
    out = {"vec": "tablegym.experiments.vector_bench:bench_vec", "rl": "tablegym.experiments.rl_bench:bench_rl"}
    for p in plugins():
        if p.bench:
            out[p.bench_name or p.name] = p.bench
        out.update(p.benches)
    return out


def _cmd_bench(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    params = {k: parse_value(v) for k, v in key_values(parser, args.param, "--param").items()}
    module, _, name = _benches()[args.which].partition(":")
    fn = require(module, name, f"the {args.which} benchmark")
    for key in ("seconds", "n", "repeats"):  # the flags some benchmarks take
        if getattr(args, key) is not None:
            params[key] = getattr(args, key)
    taken = inspect.signature(fn).parameters
    if not any(p.kind == p.VAR_KEYWORD for p in taken.values()):
        unknown = sorted(set(params) - set(taken))
        if unknown:
            parser.error(
                f"bench {args.which} takes no {', '.join(map(repr, unknown))}; its parameters: {', '.join(taken) or 'none'}"
            )
    try:
        result = fn(**params)
    except TypeError as err:
        if params and "argument" in str(err):
            parser.error(f"bench {args.which}: {err}")
        raise
    except ValueError as err:  # a benchmark refusing its parameters (sizes, a game it does not know)
        parser.error(f"bench {args.which}: {err}")
    print(format_table(result))
    return 0


def add_command(sub: Any, game_opts: argparse.ArgumentParser) -> None:
    """Add ``bench`` to the subcommands ``sub``."""
    p = sub.add_parser("bench", help="speed benchmarks")
    p.add_argument("which", choices=tuple(_benches()))
    p.add_argument("--seconds", type=positive_float, help="envs: seconds per env; vec: seconds per measurement")
    p.add_argument("--n", type=bounded_int(3), help="sim-solve: number of points")
    p.add_argument("--repeats", type=bounded_int(1), help="sim-solve, vec: repetitions")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra keyword argument for the benchmark function (repeatable)",
    )
    p.set_defaults(run=_cmd_bench, parser=p)
