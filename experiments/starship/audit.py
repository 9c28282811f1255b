"""The staged starship generator's audit reference: the distribution of every statistic of
``tablegym.envs.starship.layout`` and the pass rate of every rule over seeds 0-999, kept in
``audit_reference.json`` beside this file, against which other generators are read.

``python -m tablegym.experiments.starship.audit --check`` regenerates the reference and compares
it with the file (exit status 1 when they differ); ``--write`` rewrites it.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from tablegym.envs.starship.layout import RULES, STATISTICS, Audit, audit, layout_quality  # noqa: F401 (re-exported)
from tablegym.envs.starship.pipeline import Pipeline
from tablegym.training.flags import OneLineParser


class AuditError(ValueError):
    """A reference file that is missing, unreadable or not an audit reference."""


REFERENCE = Path(__file__).with_name("audit_reference.json")
"""The staged generator's distribution over seeds 0..REFERENCE_SEEDS - 1 (``reference``)."""
REFERENCE_SEEDS = 1000
SAMPLE_SEEDS = 5
"""The reference keeps the statistics of its first few seeds exactly, to check determinism."""
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
DIGITS = 6
"""Decimals kept in the reference's summaries."""


def summarise(audits: Iterable[Audit]) -> dict[str, Any]:
    """Per statistic its mean, standard deviation, quantiles (``q05`` ... ``q95``), min and max;
    per rule its pass rate; and the number of ships."""
    audits = list(audits)
    if not audits:
        raise ValueError("summarise needs at least one audit")
    x = np.array([a.vector() for a in audits])
    stats = {}
    for i, name in enumerate(STATISTICS):
        col = x[:, i]
        row = {
            "mean": col.mean(),
            "std": col.std(),
            **{f"q{round(q * 100):02d}": np.quantile(col, q) for q in QUANTILES},
            "min": col.min(),
            "max": col.max(),
        }
        stats[name] = {k: round(float(v), DIGITS) for k, v in row.items()}
    rules = {name: round(float(np.mean([a.rules[name] for a in audits])), DIGITS) for name in RULES}
    return {"ships": len(audits), "statistics": stats, "rules": rules}


def reference(seeds: int = REFERENCE_SEEDS, samples: int = SAMPLE_SEEDS) -> dict[str, Any]:
    """The audit of the staged generator (``Pipeline()``, its defaults) over seeds 0..seeds - 1,
    summarised, with the first ``samples`` seeds' statistics as they are."""
    pipeline = Pipeline()
    audits = [audit(pipeline.generate(seed)) for seed in range(seeds)]
    return {
        "generator": "staged (Pipeline() defaults)",
        "seeds": [0, seeds - 1],
        "command": "python -m tablegym.experiments.starship.audit --write",
        **summarise(audits),
        "samples": {str(seed): audits[seed].stats for seed in range(min(samples, seeds))},
    }


def write_reference(path: str | Path = REFERENCE, seeds: int = REFERENCE_SEEDS) -> Path:
    """Regenerate the reference and write it to ``path`` as JSON."""
    path = Path(path)
    path.write_text(_dumps(reference(seeds)))
    return path


def _dumps(data: dict[str, Any]) -> str:
    """JSON with one line per top-level entry and per entry of a table of tables (a statistic,
    a sample): small, and a regeneration's diff reads line by line."""
    lines = []
    for key, value in data.items():
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            inner = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            lines.append(f" {json.dumps(key)}: {{\n{inner}\n }}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def load_reference(path: str | Path | None = None) -> dict[str, Any]:
    """The reference in ``path`` (default ``REFERENCE``); ``AuditError`` says in one line why a
    file is refused."""
    path = REFERENCE if path is None else path
    try:
        data = json.loads(Path(path).read_text())
    except OSError as err:
        raise AuditError(f"audit reference {str(path)!r}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise AuditError(f"audit reference {str(path)!r} is not JSON: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("statistics"), dict) or not isinstance(data.get("rules"), dict):
        raise AuditError(f"audit reference {str(path)!r} has no 'statistics' and 'rules' tables")
    missing = [k for k in STATISTICS if k not in data["statistics"]] + [k for k in RULES if k not in data["rules"]]
    if missing:
        raise AuditError(
            f"audit reference {str(path)!r} lacks {', '.join(missing)}: regenerate it with "
            "python -m tablegym.experiments.starship.audit --write"
        )
    return data


def compare(stored: dict[str, Any], fresh: dict[str, Any], tol: float = 10.0**-DIGITS) -> list[str]:
    """Where two references differ by more than ``tol`` (each difference in words; [] if none).
    Only the seeds and ships both hold are compared when one is shorter (its samples)."""
    out = []

    def walk(prefix: str, a: Any, b: Any) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if k not in a or k not in b:
                    out.append(f"{prefix}{k}: only in the {'fresh' if k in b else 'stored'} one")
                else:
                    walk(f"{prefix}{k}.", a[k], b[k])
        elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
            if not math.isclose(a, b, rel_tol=0.0, abs_tol=tol):
                out.append(f"{prefix[:-1]}: stored {a!r}, regenerated {b!r}")
        elif a != b:
            out.append(f"{prefix[:-1]}: stored {a!r}, regenerated {b!r}")

    walk("", stored, fresh)
    return out


# -- text ----------------------------------------------------------------------------------------


def _num(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() and abs(x) >= 1 else f"{x:.3g}" if abs(x) < 1 else f"{x:.1f}"


def audit_tables(a: Audit, ref: dict[str, Any]) -> str:
    """Two markdown tables: each statistic beside the staged generator's mean and 5-95% range
    (``outside`` marks a value outside it), each rule beside the staged pass rate."""
    lines = ["| statistic | this ship | staged mean | staged 5-95% | flag |", "|---|---|---|---|---|"]
    tol = 10.0**-DIGITS  # the reference's rounding
    for name in STATISTICS:
        r, v = ref["statistics"][name], a.stats[name]
        flag = "outside" if not r["q05"] - tol <= v <= r["q95"] + tol else ""
        lines.append(f"| {name} | {_num(v)} | {_num(r['mean'])} | {_num(r['q05'])} .. {_num(r['q95'])} | {flag} |")
    lines += ["", "| rule | this ship | staged pass rate |", "|---|---|---|"]
    for name in RULES:
        lines.append(f"| {name} | {'pass' if a.rules[name] else 'FAIL'} | {ref['rules'][name]:.3f} |")
    passed = sum(a.rules.values())
    lines += [
        "",
        f"rules passed: {passed} of {len(RULES)}; reference: {ref['generator']}, seeds {ref['seeds'][0]}-"
        f"{ref['seeds'][1]} ({ref['ships']} ships)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m tablegym.experiments.starship.audit --check | --write [--seeds N] [--path FILE]``."""
    p = OneLineParser(
        prog="python -m tablegym.experiments.starship.audit",
        description="Regenerate the staged generator's audit reference (seeds 0..N-1) and "
        "compare it with the stored file (--check) or write it (--write).",
    )
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="regenerate and compare; exit status 1 if they differ")
    mode.add_argument("--write", action="store_true", help="regenerate and write the file")
    p.add_argument("--path", default=str(REFERENCE), help="the reference file (default: the shipped one)")
    p.add_argument("--seeds", type=int, default=REFERENCE_SEEDS, help=f"seeds 0..N-1 (default {REFERENCE_SEEDS})")
    args = p.parse_args(argv)
    if args.seeds < 1:
        p.error(f"--seeds must be >= 1, got {args.seeds}")
    if args.write:
        print(f"wrote {write_reference(args.path, args.seeds)}")
        return 0
    try:
        stored = load_reference(args.path)
    except AuditError as err:
        print(f"{p.prog}: error: {err}", file=sys.stderr)
        return 1
    diffs = compare(stored, reference(args.seeds))
    for d in diffs[:20]:
        print(d)
    print(
        f"{args.path}: {'differs from' if diffs else 'matches'} its regeneration over seeds 0-{args.seeds - 1}"
        + (f" ({len(diffs)} differences)" if diffs else "")
    )
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
