"""The game registry (tablegym.envs): one record per game, every reference in it resolves, and a
game registered at run time reaches make_game, agents and gymnasium.make through its record only."""

import subprocess
import sys

import gymnasium
import numpy as np
import pytest

import tablegym.envs as envs
from tablegym.envs import GamePlugin, load, plugin, plugins, register, unregister
from tablegym.experiments.cli import main

RECORDS = plugins()


@pytest.mark.parametrize("record", RECORDS, ids=[r.name for r in RECORDS])
def test_every_reference_of_a_record_resolves(record):
    for ref in (record.game, record.agents, record.learned, record.trainer, record.bench, record.training_metrics):
        if ref is not None:
            assert load(ref) is not None, ref
    for env_id, (entry_point, _) in {**record.gym, **record.aec}.items():
        assert callable(load(entry_point)), env_id
    for env_id in record.gym:
        assert env_id in gymnasium.registry
    if record.game:
        game = load(record.game)()
        assert game.new_initial_state().legal_actions()


def test_the_registry_holds_every_game_once_and_each_env_id_once():
    names = [r.name for r in RECORDS]
    assert names == ["trilobite", "trilobite-tiny", "sim", "trap", "threes", "friday", "starship"]
    ids = [i for r in RECORDS for i in r.gym]
    assert len(ids) == len(set(ids))
    assert set(envs.ENV_IDS) | set(envs.SINGLE_AGENT_ENV_IDS) == set(ids)
    assert plugin("friday").numbered_moves and plugin("trap").searcher == "search"
    with pytest.raises(ValueError, match="unknown game 'chess'; known games: trilobite"):
        plugin("chess")


def test_a_clashing_record_is_refused():
    with pytest.raises(ValueError, match="a game named 'trap' is already registered"):
        register(GamePlugin(name="trap", doc="again"))
    clash = GamePlugin(name="trap2", doc="x", gym={"tablegym/Trap-v0": ("tablegym.envs.trap.env:TrapEnv", {})})
    with pytest.raises(ValueError, match="env id 'tablegym/Trap-v0' is already registered"):
        register(clash)
    assert [r.name for r in plugins()] == [r.name for r in RECORDS]


def test_a_bad_toml_record_names_its_file():
    with pytest.raises(ValueError, match="x/game.toml: bad game record 'g'"):
        GamePlugin.from_toml({"name": "g", "doc": "d", "options": {"n": "integer"}}, "x/game.toml")


@pytest.fixture
def mini():
    """Trilobite 4x4 under a new name and env id, registered through one record. (Its Game
    still names itself "trilobite", so agents resolve through Trilobite's record; a game of
    its own from outside is tests/tictactoe.)"""
    record = register(
        GamePlugin(
            name="trilobite-mini",
            doc="Trilobite 4x4, three in a row",
            game="tablegym.envs.trilobite.core:TrilobiteGame",
            options={"width": int, "height": int, "win_length": int},
            agents="tablegym.envs.trilobite.heuristics",
            gym={
                "tablegym/TrilobiteMini-v0": ("tablegym.envs.trilobite.env:TrilobiteEnv", dict(width=4, height=4, win_length=3))
            },
        )
    )
    yield record
    unregister(record.name)
    assert "tablegym/TrilobiteMini-v0" not in gymnasium.registry


def test_a_game_registered_at_run_time_works_everywhere(mini, capsys):
    from tablegym.envs import make_game
    from tablegym.models.agents import make_agent
    from tablegym.search.play import play_game

    game = make_game("trilobite-mini", width="4", height="4", win_length="3")
    agents = [make_agent(game, "alphabeta:eval=advanced,depth=2"), make_agent(game, "random")]
    record = play_game(game, agents, np.random.default_rng(0))
    assert record.winner in (0, 1, None)
    env = gymnasium.make("tablegym/TrilobiteMini-v0")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (3, 4, 4)


def test_train_names_unknown_and_untrainable_games_in_one_line(capsys):
    assert main(["train", "chess"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tablegym: error: train: unknown game 'chess'; known games:") and "Traceback" not in err
    assert main(["train", "starship"]) == 2
    err = capsys.readouterr().err
    assert "game 'starship' has no trainer; games with one: trilobite, trilobite-tiny, sim, trap, threes, friday" in err


def test_reading_the_records_imports_no_game():
    code = (
        "import sys, tablegym.envs as e; e.plugins(); "
        "print(sorted(m for m in sys.modules if m.startswith(('tablegym.envs.', 'numba', 'torch'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
