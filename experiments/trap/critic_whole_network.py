"""A match of the Trap critic against the composite searcher (0.1 s a move each), the critic's
network evaluated whole at every leaf (no kept first layer, no value cache): set beside the same
match with the usual export, it shows what the faster evaluation alone changes, with the same
weights, the same openings and the same seeds. Prints the match's markdown table.

    python -m tablegym.experiments.trap.critic_whole_network runs/trap-negamax-plain/v.pt --games 200 --seed 0 \\
        > results/rl/trap_critic_plain_whole_network_vs_composite.md
"""

from __future__ import annotations

import argparse

from tablegym.experiments.match import markdown_table, play_match
from tablegym.models.agents import make_agent
from tablegym.models.netkernel import evaluated_whole

WHOLE = "whole:"


def factory(game, spec: str):
    """``make_agent``, where a spec starting ``whole:`` evaluates its network whole at every leaf."""
    agent = make_agent(game, spec.removeprefix(WHOLE))
    if spec.startswith(WHOLE):
        agent.evaluator.params = evaluated_whole(agent.evaluator.params)
    return agent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    r = play_match(
        "trap",
        f"{WHOLE}search:eval=learned:{args.model},time=0.1",
        "search:eval=composite,time=0.1",
        games=args.games,
        seed=args.seed,
        workers=args.workers,
        progress=False,
        agent_factory=factory,
    )
    print(markdown_table([r]))


if __name__ == "__main__":
    main()
