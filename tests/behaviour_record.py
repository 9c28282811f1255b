"""Fixed-seed games, search values and checkpoint values of every game, recorded once.

A restructuring of the library must not change behaviour: the same agents play the same moves
on the same seeds, and the shipped checkpoints give the same values.
``tests/data/behaviour_record.json`` holds what the code did when it was recorded (its commit is
in the file); ``test_behaviour_record.py``
replays every case and compares.

Regenerate only when behaviour is meant to change, and say why in the commit::

    python -m tests.behaviour_record --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

PATH = Path(__file__).parent / "data" / "behaviour_record.json"

GAMES: list[tuple[str, dict[str, Any], list[str], int]] = [
    # (game, options, agent specs by seat, opening plies); each is played on SEEDS.
    ("trilobite", {}, ["alphabeta:eval=advanced,depth=3", "alphabeta:eval=learned,depth=2"], 2),
    ("trilobite-tiny", {}, ["random", "alphabeta:eval=win-loss,depth=9"], 0),
    ("sim", {}, ["alphabeta:eval=safe-moves,depth=2", "expert"], 2),
    ("sim", {}, ["alphabeta:eval=learned,depth=2", "medium"], 2),
    ("trap", {}, ["search:eval=composite,depth=2", "hard"], 2),
    ("trap", {}, ["search:eval=learned,depth=2", "hard-sound"], 2),
    ("trap", {"n": 5}, ["medium", "easy"], 0),
    ("threes", {}, ["expectimax:depth=1,eval=openness-matthew"], 0),
    ("threes", {}, ["greedy:eval=learned"], 0),
    ("friday", {}, ["rules"], 0),
    ("friday", {"level": 2}, ["bestfirst:nodes=300,eval=fridai"], 0),
    ("friday", {}, ["mc:rollouts=8,horizon=2,eval=learned"], 0),
]
SEEDS = (0, 1)
EVALUATED = [
    # (game, options, evaluator): its value for player 0 at every third decision of the first game
    # of the same game and options above.
    ("trilobite", {}, "learned"),
    ("trilobite", {}, "advanced"),
    ("sim", {}, "learned"),
    ("trap", {}, "learned"),
    ("trap", {}, "composite"),
    ("friday", {}, "learned"),
    ("friday", {}, "learned:models/checkpoints/friday_mc.pt"),
    ("threes", {}, "learned"),
]
STARSHIP_SEEDS = (0, 1, 2)


def _game_cases() -> list[dict[str, Any]]:
    from tablegym.envs import make_game
    from tablegym.models.agents import make_agent
    from tablegym.search.play import play_game

    out = []
    for name, options, specs, opening in GAMES:
        game = make_game(name, **options)
        for seed in SEEDS:
            agents = [make_agent(game, spec) for spec in specs]
            record = play_game(game, agents, np.random.default_rng(seed), opening)
            out.append(
                dict(
                    game=name,
                    options=options,
                    specs=specs,
                    seed=seed,
                    opening_plies=opening,
                    actions=list(record.actions),
                    returns=list(record.returns),
                )
            )
    return out


def _evaluations(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from tablegym.envs import make_game
    from tablegym.models.agents import make_evaluator

    out = []
    for name, options, evaluator_name in EVALUATED:
        case = next(c for c in games if c["game"] == name and c["options"] == options)
        game = make_game(name, **options)
        evaluator = _evaluator(game, evaluator_name, make_evaluator)
        state, values, decisions = game.new_initial_state(), [], 0
        for action in case["actions"]:
            if state.current_player() >= 0:
                if decisions % 3 == 0:
                    values.append(float(evaluator(state, 0)))
                decisions += 1
            state = state.child(action)
        out.append(dict(game=name, options=options, evaluator=evaluator_name, values=values))
    return out


def _evaluator(game, name: str, make_evaluator):
    """The evaluator by the route each game had when the record was made (they have since become one)."""
    root = Path(__file__).parent.parent
    if game.spec.name == "trap" and name != "learned":  # Trap's evaluators are not in the generic table
        from tablegym.envs.trap.heuristics import EVALUATORS

        return EVALUATORS[name]
    if game.spec.name == "friday":
        from tablegym.models.friday.learned import load_friday_evaluator

        path = name.partition(":")[2]
        return load_friday_evaluator(root / path if path else None)
    if game.spec.name == "threes":  # the n-tuple network's value of the board (hint code 0)
        from tablegym.models.threes.ntuple_net import load_ntuple

        tables = load_ntuple().tables()
        return lambda state, player: tables.value(state.board, 0)
    return make_evaluator(game, name)


def _starships() -> list[dict[str, Any]]:
    from tablegym.envs.starship.pipeline import generate

    out = []
    for seed in STARSHIP_SEEDS:
        ship = generate(seed)
        digest = hashlib.sha256(
            b"".join(np.ascontiguousarray(a).tobytes() for a in (ship.tiles, ship.part, ship.parts))
        ).hexdigest()
        out.append(dict(seed=seed, sha256=digest))
    return out


def record() -> dict[str, Any]:
    """Every case, played and evaluated now."""
    games = _game_cases()
    return dict(games=games, evaluations=_evaluations(games), starships=_starships())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {PATH.name} from the code as it is")
    args = parser.parse_args()
    data = record()
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    data = dict(commit=commit, **data)
    if args.write:
        PATH.parent.mkdir(exist_ok=True)
        PATH.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {PATH}")
    else:
        print(json.dumps(data)[:2000])


if __name__ == "__main__":
    main()
