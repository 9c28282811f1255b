"""The searching starship generator under other settings, on tuning seeds that are neither the
classifiers' (0-399), the held-out ones (2000-2199) nor the demonstrations' (10,000 on): ships
valid, audit rules passed, quality v2 and the share of weapon points facing forward, as one
markdown row a run.

Run from the repository root (one process):
    python -m tablegym.experiments.starship.search_tuning --checkpoint models/checkpoints/starship_imitated.pt --branch 16
    python -m tablegym.experiments.starship.search_tuning --checkpoint runs/starship-search/search.pt --beam 4 --branch 4 --segment 512

A plain policy's checkpoint is searched without a value network (its ``--branch`` draws whole,
the best finished one kept; ``--branch 1`` is one draw); a searching generator's checkpoint keeps
its value network, with ``--beam``, ``--branch`` and ``--segment`` in place of its own.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from tablegym.envs.starship.layout import RULES, audit, layout_quality
from tablegym.models.checkpoint import CheckpointError
from tablegym.training.flags import OneLineParser

PROG = "python -m tablegym.experiments.starship.search_tuning"


def main(argv: list[str] | None = None) -> str:
    from tablegym.models.starship.learned import LearnedGenerator
    from tablegym.models.starship.search import SearchGenerator

    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True, help="a generator checkpoint: a fitted policy or a searching generator")
    p.add_argument("--beam", type=int, help="partial ships kept (a searching generator's own by default)")
    p.add_argument("--branch", type=int, help="continuations of each kept ship (default 16, or the generator's own)")
    p.add_argument("--segment", type=int, help="cursor steps between choices (the generator's own by default)")
    p.add_argument("--select", choices=("score", "rules"), default="score", help="what picks the finished ship (default score)")
    p.add_argument("--seeds", default="3000:3012", help="first:stop of the tuning seeds (default 3000:3012)")
    args = p.parse_args(argv)
    try:
        first, stop = (int(v) for v in args.seeds.split(":"))
    except ValueError:
        p.error(f"--seeds takes first:stop, got {args.seeds!r}")
    if not 0 <= first < stop:
        p.error(f"--seeds must be first:stop with 0 <= first < stop, got {args.seeds!r}")
    for name in ("beam", "branch", "segment"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    try:
        gen = LearnedGenerator.load(args.checkpoint)
        if isinstance(gen, SearchGenerator):
            settings = {k: getattr(args, k) or getattr(gen, k) for k in ("beam", "branch", "segment")}
            gen = SearchGenerator(gen.net, gen.value, gen.env_kwargs, gen.radius, gen.pool, gen.metadata, **settings)
        else:
            gen = SearchGenerator(
                gen.net, None, gen.env_kwargs, gen.radius, gen.pool, gen.metadata, beam=1, branch=args.branch or 16
            )
    except (CheckpointError, ValueError) as err:
        p.error(str(err))
    if args.select == "rules":
        gen.select = lambda ship: sum(audit(ship).rules.values()) / len(RULES)
    torch.set_num_threads(1)
    valid, rules, v2, forward = [], [], [], []
    start = time.perf_counter()
    for seed in range(first, stop):
        ship, _ = gen.generate(seed)
        result = audit(ship)
        valid.append(result.rules["valid"])
        rules.append(sum(result.rules.values()))
        v2.append(layout_quality(ship, result))
        forward.append(result.stats["forward_weapons"])
    seconds = (time.perf_counter() - start) / (stop - first)
    setting = f"beam {gen.beam} x branch {gen.branch}" + (
        f", every {gen.segment} steps" if gen.value is not None else ", drawn whole"
    )
    row = (
        f"| {args.checkpoint} | {setting}, select {args.select} | {sum(valid)}/{len(valid)} | {np.mean(rules):.2f} | "
        f"{np.mean(v2):.3f} | {np.mean(forward):.3f} | {seconds:.1f} s |"
    )
    print("| checkpoint | search | valid | rules (of 13) | quality v2 | forward weapons | time a ship |")
    print("|---|---|---|---|---|---|---|")
    print(row)
    print(f"\nSeeds {first}-{stop - 1}. Command: {PROG} {' '.join(sys.argv[1:] if argv is None else argv)}")
    return row


if __name__ == "__main__":
    main()
