"""The shipped (unconditioned) safe generator asked for targets with caps, before any training:
its policy in a conditioned network whose target and deficit inputs have zero weights
(``rl.load_generator_policy``), exported as a conditioned generator with caps.

    python -m tablegym.experiments.starship.rl_caps_zero_shot runs/starship-caps-start/generator.pt
    python -m tablegym.experiments.starship.targets_eval --checkpoint runs/starship-caps-start/generator.pt \\
        --episodes 200 --workers 2 --out results/starship/targets_caps_start.md
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

from tablegym.experiments.starship import rl
from tablegym.models.starship.learned import CHECKPOINT, export


def export_zero_shot(out: str) -> None:
    """Write the untrained conditioned generator to ``out`` and print its path."""
    args = rl.parse_args(["--targets", "--target-caps", "--masks", "safe", "--reward", "gated", "--max-steps", "1024"])
    env = rl.make_env(rl.env_kwargs(args), targets=True, caps=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rl.build_model(env, args)
    rl.load_generator_policy(model, CHECKPOINT)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    print(
        export(
            model,
            rl.env_kwargs(args),
            out,
            radius=args.crop_radius,
            targets=True,
            caps=True,
            metadata={"timesteps": 0, "init_from": str(CHECKPOINT)},
        )
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "out", nargs="?", default="runs/starship-caps-start/generator.pt", help="the generator checkpoint to write"
    )
    export_zero_shot(parser.parse_args(argv).out)


if __name__ == "__main__":
    main()
