"""The shipped generator drawing its edits at other temperatures (the policy's logits divided by T
before the softmax), on seeds that are neither the classifier's nor the held-out ones nor the
demonstrations': the audit rules passed, quality v2 and the old score, as a markdown table.

Run from the repository root (2 processes; about 1 s a ship on this machine):
    python -m tablegym.experiments.starship.decode_temperature --temps 1.25,1.0,0.8,0.6,0.4 --seeds 3000:3030
"""

from __future__ import annotations

import argparse
import json
from multiprocessing import Pool

import numpy as np
import torch


class Scaled(torch.nn.Module):
    """The policy with its logits divided by ``temperature``."""

    def __init__(self, net: torch.nn.Module, temperature: float) -> None:
        super().__init__()
        self.net, self.temperature = net, temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x) / self.temperature


def one(task: tuple[float, int]) -> tuple[float, int, dict[str, bool], float, float]:
    temperature, seed = task
    torch.set_num_threads(1)
    from tablegym.envs.starship.layout import audit, layout_quality
    from tablegym.envs.starship.quality import quality
    from tablegym.models.starship.learned import LearnedGenerator

    generator = LearnedGenerator.load()
    generator.net = Scaled(generator.net, temperature).eval()
    ship, _ = generator.generate(seed)
    result, score = audit(ship), quality(ship).score
    return temperature, seed, dict(result.rules), float(layout_quality(ship, result, score)), float(score)


def table(rows: list) -> str:
    names = list(rows[0][2])
    lines = [
        "| T | ships | rules passed (of 13) | quality v2 ± 95% | old score | " + " | ".join(names) + " |",
        "|---" * (5 + len(names)) + "|",
    ]
    for t in sorted({r[0] for r in rows}, reverse=True):
        rs = [r for r in rows if r[0] == t]
        v2 = np.array([r[3] for r in rs])
        rules = " | ".join(f"{np.mean([r[2][k] for r in rs]):.2f}" for k in names)
        lines.append(
            f"| {t} | {len(rs)} | {np.mean([sum(r[2].values()) for r in rs]):.2f} | "
            f"{v2.mean():.3f} ± {1.96 * v2.std(ddof=1) / np.sqrt(len(rs)):.3f} | "
            f"{np.mean([r[4] for r in rs]):.3f} | {rules} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--temps", default="1.25,1.0,0.8,0.6,0.4")
    parser.add_argument("--seeds", default="3000:3030", help="FIRST:END (END not included)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    first, end = (int(x) for x in args.seeds.split(":"))
    tasks = [(float(t), s) for t in args.temps.split(",") for s in range(first, end)]
    with Pool(args.workers) as pool:
        rows = sorted(pool.imap_unordered(one, tasks), key=lambda r: (r[0], r[1]))
    print(table(rows))
    print("\n" + json.dumps({"temps": args.temps, "seeds": args.seeds}))


if __name__ == "__main__":
    main()
