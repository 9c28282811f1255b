"""Steps a second of a Starship vector env, this checkout against another git revision, in one
process (``vector_ab`` for the Starship vector envs, by class name, narrow observations, as the
tables of results/bench/vec/table.md were measured):
`python -m tablegym.experiments.vector_benches.starship_ab REV [StarshipVectorEnv|StarshipTargetsVectorEnv] [BOARDS] [ROUNDS]`."""

from __future__ import annotations

import argparse

from tablegym.experiments.vector_benches.vector_ab import compare

IDS = {"StarshipVectorEnv": "tablegym/Starship-v0", "StarshipTargetsVectorEnv": "tablegym/StarshipTargets-v0"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rev", help="the git revision to compare this checkout with")
    parser.add_argument(
        "cls",
        nargs="?",
        choices=sorted(IDS),
        default="StarshipVectorEnv",
        metavar="CLASS",
        help="StarshipVectorEnv (default) or StarshipTargetsVectorEnv",
    )
    parser.add_argument("boards", nargs="?", type=int, default=1024)
    parser.add_argument("rounds", nargs="?", type=int, default=16)
    args = parser.parse_args(argv)
    compare(args.rev, IDS[args.cls], args.boards, args.rounds, representation="narrow")


if __name__ == "__main__":
    main()
