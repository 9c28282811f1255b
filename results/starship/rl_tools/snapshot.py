"""Export a snapshot of a conditioned (``--targets --target-caps``) starship run as a generator
checkpoint beside it (``generator_<steps>.pt``), for ``targets_eval``.

    python results/starship/rl_tools/snapshot.py runs/starship-targets-caps/model_250000_steps.zip
"""

from __future__ import annotations

import sys
from pathlib import Path

from tablegym.experiments.starship import rl


def main(path: str) -> None:
    args = rl.parse_args(["--targets", "--target-caps", "--masks", "safe", "--reward", "gated", "--max-steps", "1024"])
    model = rl.load_model(path, args)
    print(rl.export_generator(args, model, Path(path)))


if __name__ == "__main__":
    main(sys.argv[1])
