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
from tests.warm_caches import BUDGET


def _searchers(name: str) -> list[tuple[str, str]]:
    """(spec template with {E}, the game's hand-made evaluator) for each searcher its record lists."""
    from tablegym.models.agents import game_evaluators

    record = plugin(name)
    out = []
    for searcher in record.searchers:
        hand = record.defaults.get(searcher, {}).get("eval") or sorted(game_evaluators(make_game(name)))[0]
        keys = ",".join(k for k in (BUDGET[searcher], "eval={E}") if k)
        out.append((f"{searcher}:{keys}", hand))
    return out


SEARCHERS = {p.name: _searchers(p.name) for p in plugins() if p.agents}
"""game -> its searchers, from the registry: every game x every searcher that applies."""
KINDS = ("hand", "shipped", "exported", "sb3")


def test_every_searcher_a_record_lists_is_declared_once_in_search():
    from tablegym.search.searchers import SEARCHERS as DECLARED

    assert {s for p in plugins() for s in p.searchers} <= set(DECLARED) == set(BUDGET)
    assert set(SEARCHERS) == {"sim", "trilobite", "trilobite-tiny", "trap", "threes", "friday"}
    assert sum(len(v) for v in SEARCHERS.values()) == 10  # the matrix: 10 game x searcher pairs x 4 kinds


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

            model = MaskablePPO(
                "MlpPolicy", gymnasium.make(env_id), n_steps=64, seed=0, device="cpu", policy_kwargs=dict(net_arch=[16])
            )
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


@pytest.mark.parametrize("name, template", [(g, t) for g, ts in SEARCHERS.items() for t, _ in ts])
def test_the_command_line_plays_each_games_exported_and_sb3_models(model_files, name, template, capsys):
    from tablegym.experiments.cli import main

    specs = [template.format(E=f"learned:{model_files[name, kind]}") for kind in ("exported", "sb3")]
    single = make_game(name).spec.num_players == 1
    argv = ["eval", name, *specs, "--games", "1" if single else "2", "--no-progress"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert all(spec in out for spec in specs)


@pytest.mark.parametrize("name", sorted(SEARCHERS))
def test_every_fixed_agent_of_every_game_plays_a_move(name):
    from tablegym.envs import load

    game = make_game(name)
    state = decision_state(game)
    for agent_name in load(plugin(name).agents).__dict__.get("AGENTS", {}):
        agent = make_agent(game, agent_name)
        assert agent(state, np.random.default_rng(0)) in state.legal_actions(), agent_name


@pytest.mark.parametrize("evaluator, game", [("advanced", "sim"), ("safe-moves", "trilobite"), ("composite", "trilobite")])
def test_a_hand_made_evaluator_of_another_game_is_refused_in_one_line(evaluator, game):
    from tablegym.envs.evaluator import WrongGameError
    from tablegym.models.agents import make_evaluator
    from tablegym.search.alphabeta_search import alphabeta

    owner = {"advanced": "trilobite", "safe-moves": "sim", "composite": "trap"}[evaluator]
    ev = make_evaluator(make_game(owner), evaluator)
    with pytest.raises(WrongGameError, match=f"made for {owner!r}, not {game!r}"):
        alphabeta(make_game(game).new_initial_state(), ev, depth=1)


def test_a_network_of_other_rules_is_refused_when_the_agent_is_built():
    """The one route loads the network for the game it was given (5x5), so the loader refuses
    the shipped 7x7 network before any search is built."""
    from tablegym.models.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match=r"other rule options \(n: checkpoint 7 vs requested 5\)"):
        make_agent(make_game("trap", n=5), "search:eval=learned,depth=1")
