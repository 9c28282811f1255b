"""``tablegym starship``: run the staged generator for one seed, print the ship, its validity and
quality terms (with ``--audit``, its audit beside the staged generator's reference), and draw it. The starship record names ``add_command``; the command line calls it
with its subparsers, so the generator's flags live beside the generator.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from tablegym.experiments.commands.bench import format_table
from tablegym.experiments.commands.shared import CommandError, key_values, parse_value, require
from tablegym.training.flags import bounded_int, check_writable


def add_command(sub: Any) -> None:
    """Add ``tablegym starship`` to the command line's subparsers."""
    p = sub.add_parser(
        "starship",
        help="generate a starship with the 14-stage generator, print and draw it",
        description="Run the staged starship generator (rules/starship.md) for one seed: print the ship, "
        "its validity and its quality terms, and with --out draw it as a PNG.",
    )
    p.add_argument("--seed", type=bounded_int(0), default=0, help="generator seed (an integer >= 0; default 0)")
    p.add_argument(
        "--generator",
        choices=("staged", "learned"),
        default="staged",
        help="staged: the 14-stage generator (default); learned: the trained editing policy "
        "(models/starship/learned.py), which finishes the staged generator's ship after stage 6",
    )
    p.add_argument(
        "--checkpoint",
        help="with --generator learned: its checkpoint (default: the shipped models/checkpoints/starship_imitated.pt)",
    )
    p.add_argument("--out", help="write the picture (with --stages: the strip of stages) to this PNG file")
    p.add_argument("--stages", action="store_true", help="draw the ship after each stage, as a strip")
    p.add_argument("--config", help="generator options from a TOML (.toml) or JSON file")
    p.add_argument("--size", type=bounded_int(4), help="grid side (default 32)")
    p.add_argument("--detour", type=bounded_int(0), help="detour limit of the path contiguity check (default 5)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="STAGE.PARAM=VALUE",
        help="a stage parameter (repeatable), e.g. --set thrusters.min_points=20",
    )
    p.add_argument(
        "--off", action="append", default=[], metavar="STAGE", help="switch a stage off (repeatable), e.g. --off doors"
    )
    p.add_argument("--cell", type=bounded_int(2), help="pixels per tile (default 16; 6 with --stages)")
    p.add_argument("--quiet", action="store_true", help="do not print the ship's drawing")
    p.add_argument(
        "--audit",
        action="store_true",
        help="also print the ship's audit (experiments/starship/audit.py: the spec's properties as statistics and "
        "rules) beside the staged generator's over seeds 0-999 (experiments/starship/audit_reference.json)",
    )
    p.set_defaults(run=_cmd_starship, parser=p)


def _starship_pipeline(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The generator configured by ``--config``, then ``--size/--detour``, ``--set`` and ``--off``."""
    pipeline_cls = require("tablegym.envs.starship.pipeline", "Pipeline", "the starship generator")
    config: dict[str, Any] = {}
    if args.config:
        try:
            config = pipeline_cls.from_file(args.config).config()
        except OSError as err:
            parser.error(f"--config {args.config}: {err.strerror or err}")
        except ValueError as err:
            parser.error(str(err))
    for key, value in (("size", args.size), ("detour", args.detour)):
        if value is not None:
            config[key] = value
    for key, value in key_values(parser, args.set, "--set").items():
        stage, dot, param = key.partition(".")
        if not dot or not param:
            parser.error(f"--set needs STAGE.PARAM=VALUE, got {key!r}")
        entry = config.setdefault(stage, {})
        if not isinstance(entry, dict):
            entry = config[stage] = {"enabled": bool(entry)}
        entry[param] = parse_value(value)
    for stage in args.off:
        entry = config.get(stage)
        config[stage] = {**entry, "enabled": False} if isinstance(entry, dict) else False
    try:
        return pipeline_cls(**config)
    except ValueError as err:
        parser.error(str(err))


def _learned_ship(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The learned generator's ship for ``--seed`` (its env options come from its checkpoint)."""
    given = [
        flag
        for flag, value in (
            ("--stages", args.stages),
            ("--config", args.config),
            ("--size", args.size),
            ("--detour", args.detour),
            ("--set", args.set),
            ("--off", args.off),
        )
        if value
    ]
    if given:
        parser.error(f"--generator learned takes no {', '.join(given)}: the checkpoint fixes its env and start ship")
    learned = require("tablegym.models.starship.learned", "LearnedGenerator", "the learned starship generator")
    checkpoint = importlib.import_module("tablegym.models.checkpoint")
    try:
        generator = learned.load(args.checkpoint)
    except checkpoint.CheckpointError as err:
        raise CommandError(str(err)) from None
    importlib.import_module("torch").set_num_threads(1)  # one observation a forward pass: threads only wait
    return generator.generate(args.seed)[0]


def _cmd_starship(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Generate one ship: print it, its validity, its quality terms and (``--audit``) its audit;
    draw it to ``--out``."""
    quality_mod = importlib.import_module("tablegym.envs.starship.quality")
    if args.checkpoint and args.generator != "learned":
        parser.error("--checkpoint is the learned generator's: add --generator learned")
    if args.out:
        check_writable(parser, "--out", args.out)
    if args.generator == "learned":
        ship = _learned_ship(parser, args)
    elif args.stages:
        snapshots = _starship_pipeline(parser, args).snapshots(args.seed)
        if not snapshots:
            parser.error("--stages: every stage is switched off")
        ship = snapshots[-1][1]
    else:
        ship = _starship_pipeline(parser, args).generate(args.seed)
    validity = quality_mod.validate(ship)
    q = quality_mod.quality(ship)
    if not args.quiet:
        print(ship.to_text(legend=True))
        print()
    print(f"seed {args.seed}: {validity}")
    rows = {k: {"raw": q.raw[k], "term": q.terms[k], "weight": w} for k, w in quality_mod.QUALITY_WEIGHTS.items()}
    rows["quality score"] = {"term": q.score}
    print(format_table(rows))
    if args.audit:
        audit_mod = importlib.import_module("tablegym.experiments.starship.audit")
        try:
            reference = audit_mod.load_reference()
        except audit_mod.AuditError as err:
            raise CommandError(str(err)) from None
        result = audit_mod.audit(ship)
        print()
        print(audit_mod.audit_tables(result, reference))
        print(
            f"quality v2: {audit_mod.layout_quality(ship, result, q.score):.4f} (the quality score {q.score:.4f} times "
            f"{sum(result.rules.values())} of {len(audit_mod.RULES)} layout rules passed)"
        )
    if args.out:
        render = importlib.import_module("tablegym.envs.starship.render")
        if args.stages:
            img = render.draw_stages(snapshots, cell=args.cell or 6)
        else:
            img = render.draw_ship(
                ship,
                cell=args.cell or 16,
                bbox=render.ship_bbox(ship),
                title=f"SEED {args.seed}" + (" LEARNED" if args.generator == "learned" else ""),
            )
        try:
            render.write_png(args.out, img)
        except OSError as err:
            raise CommandError(f"cannot write {args.out}: {err.strerror or err}") from None
        print(f"wrote {args.out} ({img.shape[1]} x {img.shape[0]} pixels)")
    return 0
