"""Train, then plug in: the ``checkpoint.pt`` of every ``tablegym train GAME --algo ...`` run that
holds a value function plays as ``eval=learned:RUN/checkpoint.pt`` in that game's searcher,
through the command line, and gives the values its ``--out`` file gives (the default trainers'
checkpoints are ValueMLP or n-tuple files that load as they are: their own tests)."""

from __future__ import annotations

import numpy as np
import pytest

from tablegym.envs import make_game
from tablegym.experiments.cli import main as cli
from tablegym.models.learned import load_evaluator

SEARCHER = {
    "trilobite": "alphabeta",
    "sim": "alphabeta",
    "trap": "expectiminimax",
    "threes": "expectimax",
    "friday": "expectimax",
}
"""A compiled searcher of each game that takes ``eval=learned:PATH``."""
TWO_PLAYER = ("sim", "trap", "trilobite")
TINY = {
    "ppo": [
        "--total-steps",
        "16",
        "--num-envs",
        "4",
        "--num-steps",
        "4",
        "--minibatches",
        "1",
        "--eval-every",
        "0",
        "--hidden",
        "8",
    ],
    "dqn": [
        "--total-steps",
        "16",
        "--num-envs",
        "4",
        "--learning-starts",
        "4",
        "--batch-size",
        "4",
        "--buffer-size",
        "64",
        "--eval-every",
        "0",
        "--hidden",
        "8",
    ],
    "imitate": ["--teacher", "random", "--games", "1", "--chunk", "1", "--epochs", "1", "--eval-games", "0", "--hidden", "8"],
}
"""Flags of a run a few steps long, by ``--algo``."""
TINY["negamax-dqn"] = TINY["dqn"]
CASES = [(game, algo) for game in sorted(SEARCHER) for algo in ("ppo", "dqn", "imitate")]
CASES += [(game, "negamax-dqn") for game in TWO_PLAYER]


def train(game: str, algo: str, run, *more: str) -> None:
    assert cli(["train", game, "--algo", algo, "--run-dir", str(run), "--no-progress", *TINY[algo], *more]) == 0


@pytest.mark.parametrize("game, algo", CASES)
def test_a_run_checkpoint_plays_as_the_learned_evaluator_of_the_game_searcher(game, algo, tmp_path, capsys):
    run, out = tmp_path / "run", tmp_path / "out.pt"
    train(game, algo, run, "--out", str(out))
    said = capsys.readouterr().out
    assert f"wrote {run / 'checkpoint.pt'}, {out} (--out)" in said
    spec = f"{SEARCHER[game]}:eval=learned:{run / 'checkpoint.pt'},depth=1"
    rest = ["random"] if game in TWO_PLAYER else []
    assert cli(["eval", game, spec, *rest, "--games", "1", "--no-progress"]) == 0
    assert str(run / "checkpoint.pt") in capsys.readouterr().out  # the agent's row
    # the run's own file and its --out give the same network, value for value
    g = make_game(game)
    from_run, from_out = load_evaluator(g, run / "checkpoint.pt"), load_evaluator(g, out)
    assert np.array_equal(from_run.weights, from_out.weights)
    s = g.new_initial_state()
    while s.current_player() < 0:
        s = s.child(s.chance_outcomes()[0][0])
    assert from_run.evaluate(s, 0) == from_out.evaluate(s, 0)
