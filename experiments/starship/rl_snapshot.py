"""Export a snapshot of a conditioned (``--targets --target-caps``) starship run as a generator
checkpoint beside it (``generator_<steps>.pt``), for ``targets_eval``.

    python -m tablegym.experiments.starship.rl_snapshot runs/starship-targets-caps/model_250000_steps.zip
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tablegym.experiments.starship import rl


def export_snapshot(path: str) -> None:
    """Write the generator checkpoint of the model saved at ``path`` beside it and print its path."""
    args = rl.parse_args(["--targets", "--target-caps", "--masks", "safe", "--reward", "gated", "--max-steps", "1024"])
    model = rl.load_model(path, args)
    print(rl.export_generator(args, model, Path(path)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="a saved model of the run (model_<steps>_steps.zip)")
    export_snapshot(parser.parse_args(argv).model)


if __name__ == "__main__":
    main()
