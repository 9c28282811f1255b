"""Every model in every searcher of every game: a spec string through ``make_agent`` (and the
command line) for each game x searcher x evaluator kind, each playing a legal move.

Evaluator kinds: the game's hand-made score (``hand``), its shipped network (``shipped``), a
user's torch network saved with ``tablegym.models.export.save`` (``exported``), and a
Stable-Baselines3 MaskablePPO zip trained on the game's env (``sb3``, read as data).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs import make_game, plugin, plugins
from tablegym.envs.core import CHANCE
from tablegym.models.agents import make_agent
from tablegym.models.export import save
from tablegym.models.learned import default_checkpoint

SEARCHERS = {  # game -> (spec template with {E}, its hand-made evaluator) for each searcher of that game
    "sim": [("alphabeta:eval={E},depth=2", "safe-moves")],
    "trilobite": [("alphabeta:eval={E},depth=2", "advanced")],
    "trilobite-tiny": [("alphabeta:eval={E},depth=2", "advanced")],
    "trap": [("search:eval={E},depth=1", "composite")],
    "threes": [("expectimax:depth=1,eval={E}", "openness-matthew"), ("greedy:eval={E}", "openness-matthew"),
               ("bestfirst:nodes=40,eval={E}", "openness-matthew")],
    "friday": [("bestfirst:nodes=40,eval={E}", "fridai"), ("mc:rollouts=2,horizon=1,eval={E}", "fridai")],
}
KINDS = ("hand", "shipped", "exported", "sb3")


def test_the_matrix_covers_every_game_with_searchers():
    searchable = {p.name for p in plugins() if p.agents}
    assert searchable == set(SEARCHERS)


def cases():
    for game, searchers in SEARCHERS.items():
        for template, hand in searchers:
            for kind in KINDS:
                yield pytest.param(game, template, hand, kind, id=f"{game}-{template.split(':')[0]}-{kind}")


@pytest.fixture(scope="module")
def model_files(tmp_path_factory) -> dict[tuple[str, str], Path]:
    """(game, kind) -> the file of that kind for the game: an exported MLP and an SB3 zip."""
    from sb3_contrib import MaskablePPO

    root = tmp_path_factory.mktemp("models")
    files = {}
    torch.manual_seed(0)
    for name in SEARCHERS:
        game = make_game(name)
        size = int(np.prod(game.spec.observation_shape))
        net = torch.nn.Sequential(torch.nn.Linear(size, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1), torch.nn.Tanh())
        files[name, "exported"] = save(net, game, root / f"{name}.pt")
        env_id = next(iter(plugin(name).gym))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import gymnasium

            model = MaskablePPO("MlpPolicy", gymnasium.make(env_id), n_steps=64, seed=0, device="cpu",
                                policy_kwargs=dict(net_arch=[16]))
        files[name, "sb3"] = root / f"{name}.zip"
        model.save(files[name, "sb3"])
    return files


def decision_state(game, seed: int = 0):
    """The first position where a player decides (chance resolved at random)."""
    rng = np.random.default_rng(seed)
    s = game.new_initial_state()
    while s.current_player() == CHANCE:
        outcomes = s.chance_outcomes()
        probs = np.array([p for _, p in outcomes])
        s = s.child(outcomes[rng.choice(len(outcomes), p=probs / probs.sum())][0])
    return s


def evaluator_name(name: str, hand: str, kind: str, files) -> str | None:
    if kind == "hand":
        return hand
    if kind == "shipped":
        return "learned" if default_checkpoint(name).is_file() else None
    return f"learned:{files[name, kind]}"


@pytest.mark.parametrize("name, template, hand, kind", list(cases()))
def test_every_model_in_every_searcher_plays_a_move(model_files, name, template, hand, kind):
    evaluator = evaluator_name(name, hand, kind, model_files)
    if evaluator is None:
        assert not default_checkpoint(name).is_file()  # no shipped network for this game: nothing to play
        return
    game = make_game(name)
    agent = make_agent(game, template.format(E=evaluator))
    state = decision_state(game)
    assert agent(state, np.random.default_rng(1)) in state.legal_actions()


@pytest.mark.parametrize("name", ["trilobite", "trap", "threes", "friday"])
def test_the_command_line_plays_each_games_exported_and_sb3_models(model_files, name, capsys):
    from tablegym.experiments.cli import main

    template = SEARCHERS[name][0][0]
    specs = [template.format(E=f"learned:{model_files[name, kind]}") for kind in ("exported", "sb3")]
    single = make_game(name).spec.num_players == 1
    argv = ["eval", name, *specs, "--games", "1" if single else "2", "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert all(spec in out for spec in specs)


def test_a_network_of_other_rules_is_refused_when_the_agent_is_built():
    """The one route loads the network for the game it was given (5x5), so the loader refuses
    the shipped 7x7 network before any search is built."""
    from tablegym.models.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match=r"other rule options \(n: checkpoint 7 vs requested 5\)"):
        make_agent(make_game("trap", n=5), "search:eval=learned,depth=1")
