"""The Trap critic against the composite with its network evaluated whole at every leaf (no kept
first layer, no value cache), as every exported critic was before: what the faster evaluation
alone changes, with the same weights, the same openings and the same seeds.

    python results/rl/trap_critic_whole_network.py runs/trap-negamax-plain/v.pt --games 200 --seed 0 > results/rl/trap_critic_plain_whole_network_vs_composite.md
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    r = play_match("trap", f"{WHOLE}search:eval=learned:{args.model},time=0.1", "search:eval=composite,time=0.1",
                   games=args.games, seed=args.seed, workers=args.workers, progress=False, agent_factory=factory)
    print(markdown_table([r]))


if __name__ == "__main__":
    main()
