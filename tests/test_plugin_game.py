"""A game from outside the library joins it through one record.

Tic-tac-toe lives in tests/tictactoe/; ``register(RECORD)`` in the fixture below is the only
place it meets tablegym. Everything these tests use (make_game, gymnasium and PettingZoo ids,
check_game, agent specs, alpha-beta, the exact solver, ``tablegym eval/solve/play/bench/train``,
``eval=learned:PATH``) is the library's generic code, reached through that record.
"""

from __future__ import annotations

import builtins
import itertools
import re
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env

from tablegym.envs import GamePlugin, plugin, plugins, register, unregister
from tablegym.envs.conformance import check_game
from tablegym.experiments.cli import main
from tests.tictactoe import ENV_ID, RECORD

with warnings.catch_warnings():  # pettingzoo.test imports envs through its deprecated module API
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.test import api_test

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("envs", "search", "models", "training", "experiments")


@pytest.fixture
def tictactoe():
    """Tic-tac-toe registered through its one record, removed again afterwards."""
    record = register(RECORD)
    yield record
    unregister(record.name)
    assert ENV_ID not in gymnasium.registry and ENV_ID not in pettingzoo.aec_registry


def play(state, moves):
    for m in moves:
        state = state.child(m)
    return state


def game():
    from tablegym.envs import make_game

    return make_game("tictactoe")


# ------------------------------------------------------------------------------ the record


def test_no_library_file_names_the_game():
    """The record is the whole wiring: no module of the library names this game, its modules or
    its classes (envs/aec.py's mention of PettingZoo's own ``tictactoe_v3`` is not one)."""
    name = re.compile(r"""tests\.tictactoe|TicTacToe|["']tictactoe["']""")
    hits = [
        str(p.relative_to(ROOT))
        for d in LIBRARY
        for p in (ROOT / d).rglob("*")
        if p.suffix in (".py", ".toml") and name.search(p.read_text())
    ]
    assert hits == []


def test_the_record_reads_cheaply_and_is_the_only_way_in():
    code = (
        "import sys; from tests.tictactoe import RECORD; "
        "print(sorted(m for m in sys.modules if m.startswith(('tests.tictactoe.', 'numba', 'torch'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"
    assert "tictactoe" not in [p.name for p in plugins()]
    with pytest.raises(ValueError, match="unknown game 'tictactoe'"):
        game()
    assert ENV_ID not in gymnasium.registry


def test_make_game_builds_it_with_typed_options(tictactoe):
    from tablegym.envs import make_game
    from tests.tictactoe.core import TicTacToeGame

    assert plugin("tictactoe") is RECORD and plugins()[-1] is RECORD
    g = make_game("tictactoe")
    assert isinstance(g, TicTacToeGame) and g.spec.name == "tictactoe" and g.spec.num_actions == 9
    assert make_game("tictactoe", first_player="1").new_initial_state().current_player() == 1
    with pytest.raises(ValueError, match="unknown option 'n' for game 'tictactoe'; its options are: first_player"):
        make_game("tictactoe", n=3)
    with pytest.raises(ValueError, match="a game named 'tictactoe' is already registered"):
        register(GamePlugin(name="tictactoe", doc="again"))


# ------------------------------------------------------------------------------ envs


@pytest.mark.filterwarnings("error")  # a checker warning is a failure
def test_gymnasium_make_and_check_env(tictactoe):
    env = gymnasium.make(ENV_ID)
    assert env.observation_space.shape == (3, 3, 3) and env.action_space.n == 9
    check_env(env.unwrapped)
    check_env(gymnasium.make(ENV_ID, agent_seat=1, first_player=1, render_mode="rgb_array").unwrapped)
    env = gymnasium.make(ENV_ID, opponent="alphabeta:eval=lines,depth=2", render_mode="rgb_array")
    obs, info = env.reset(seed=0)
    assert info["action_mask"].tolist() == [1] * 9 and obs[2].all()
    assert env.render().shape == (96, 96, 3)
    obs, reward, terminated, truncated, info = env.step(4)
    assert len(info["opponent_actions"]) == 1 and obs[0, 1, 1] == 1 and obs[1].sum() == 1


@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array", "ignore:Observation space for each agent")
def test_pettingzoo_aec_env(tictactoe):
    aec = pettingzoo.make("aec", ENV_ID)
    assert aec.unwrapped.game.spec == gymnasium.make(ENV_ID).unwrapped.game.spec
    api_test(aec, num_cycles=100)


# ------------------------------------------------------------------------------ rules core


def test_check_game_passes(tictactoe):
    for first in (0, 1):
        report = check_game(game().__class__(first), games=60, seed=0)
        assert report.games == 60 and report.max_length <= 9
        assert set(report.outcomes) == {-1.0, 0.0, 1.0} and report.transpositions > 0


def test_published_position_counts(tictactoe):
    """5,478 legal positions are reachable from the empty board (terminal ones included), 765
    of them distinct up to the board's 8 symmetries (the known facts of tic-tac-toe)."""
    seen: dict[int, object] = {}
    canonical = set()
    stack = [game().new_initial_state()]
    while stack:
        s = stack.pop()
        if s.key() in seen:
            continue
        seen[s.key()] = s
        canonical.add(s.canonical_key)
        stack.extend(s.child(a) for a in s.legal_actions())
    assert len(seen) == 5478
    assert len(canonical) == 765
    ends = [s.winner() for s in seen.values() if s.is_terminal()]
    assert (len(ends), ends.count(0), ends.count(1), ends.count(None)) == (958, 626, 316, 16)


def test_feature_symmetries_are_board_symmetries(tictactoe):
    from tests.tictactoe.core import CELLS, SYMMETRIES, TicTacToeState

    def features(state):
        x = np.zeros(18)
        x[state.active_features()] = 1
        return x

    g = game()
    perms = g.feature_symmetries()
    assert len(perms) == 8 and perms[0].tolist() == list(range(18))
    assert len({p.tobytes() for p in perms}) == 8
    s = play(g.new_initial_state(), [0, 4, 5])
    for perm, sym in zip(perms, SYMMETRIES):
        arr = s.array
        arr[CELLS : CELLS + 9] = s.board.ravel()[sym]  # the board under the same symmetry
        image = TicTacToeState(g, arr)
        assert features(s)[perm].tolist() == features(image).tolist()
        assert image.canonical_key == s.canonical_key


# ------------------------------------------------------------------------------ search


WIN_IN_ONE = [0, 3, 1, 4]  # X a1 b1, O a2 b2: X to move wins at c1 (2); O threatens c2 (5)
MUST_BLOCK = [0, 4, 1]  # X a1 b1, O b2: O to move must block at c1 (2)
OPPOSITE_CORNERS = [0, 4, 8]  # X a1 c3, O b2: O must take an edge; a corner loses to a fork


@pytest.mark.parametrize("spec_eval", ["win-loss", "lines"])
@pytest.mark.parametrize("compiled", [True, False])
def test_alphabeta_wins_at_once_and_blocks(tictactoe, spec_eval, compiled):
    from tablegym.models.agents import make_evaluator
    from tablegym.search.alphabeta_search import alphabeta

    g = game()
    ev = make_evaluator(g, spec_eval)
    win = alphabeta(play(g.new_initial_state(), WIN_IN_ONE), ev, depth=1, compiled=compiled)
    assert win.action == 2 and win.value == ev.win_value
    deep = alphabeta(play(g.new_initial_state(), WIN_IN_ONE), ev, depth=5, compiled=compiled)
    assert deep.action == 2 and deep.value == ev.win_value
    block = alphabeta(play(g.new_initial_state(), MUST_BLOCK), ev, depth=2, compiled=compiled)
    assert block.action == 2 and block.values[2] > max(v for a, v in block.values.items() if a != 2)
    full = alphabeta(play(g.new_initial_state(), OPPOSITE_CORNERS), ev, depth=9, compiled=compiled)
    assert full.action == 1 and full.value == 0  # the first edge: a draw
    for corner in (2, 6):  # a corner loses: X forks
        fork = alphabeta(play(g.new_initial_state(), OPPOSITE_CORNERS + [corner]), ev, depth=9, compiled=compiled)
        assert fork.value == ev.win_value


def test_alphabeta_from_the_empty_board_sees_a_draw(tictactoe):
    from tablegym.models.agents import make_agent

    agent = make_agent(game(), "alphabeta:eval=win-loss,depth=9")
    state = game().new_initial_state()
    agent(state, np.random.default_rng(0))
    assert agent.last_result.value == 0 and agent.last_result.depth == 9 and agent.last_result.completed


def test_solver_proves_the_empty_board_a_draw(tictactoe):
    from tablegym.search.solver import Solver, solve, solved_values
    from tests.tictactoe.core import KERNELS, k_canonical

    root = game().new_initial_state()
    plain = solve(root)
    canon = solve(root, key_fn=k_canonical)
    assert plain.value == 0 and canon.value == 0
    # The memo holds only positions the search had to settle, a subset of the reachable ones.
    assert 0 < canon.positions_stored < plain.positions_stored <= 5478 and canon.positions_stored <= 765
    assert solved_values(root) == {a: 0 for a in range(9)}  # every opening move draws
    center = play(root, [4])
    assert solved_values(center, key_fn=k_canonical) == {0: 0, 2: 0, 6: 0, 8: 0, 1: -1, 3: -1, 5: -1, 7: -1}
    solver = Solver(KERNELS, key_fn=k_canonical)
    assert solver.action_values(play(root, OPPOSITE_CORNERS)) == {1: 0, 2: -1, 3: 0, 5: 0, 6: -1, 7: 0}
    assert solver.value(play(root, WIN_IN_ONE)) == 1 and solver.solve(play(root, WIN_IN_ONE)).best_action == 2


def test_the_perfect_agent_never_loses(tictactoe):
    from tablegym.models.agents import make_agent
    from tablegym.search.play import play_game

    g = game()
    perfect, rnd = make_agent(g, "perfect"), make_agent(g, "random")
    rng = np.random.default_rng(1)
    for i in range(10):
        seats = (perfect, rnd) if i % 2 == 0 else (rnd, perfect)
        record = play_game(g, seats, rng)
        assert record.winner in (i % 2, None)
    assert play_game(g, (perfect, perfect), rng).winner is None


# ------------------------------------------------------------------------------ command line


def test_cli_eval_prints_a_table(tictactoe, capsys):
    assert main(["eval", "tictactoe", "random", "random", "--games", "10", "--no-progress"]) == 0
    header, rule, row = capsys.readouterr().out.strip().splitlines()
    assert "W/D/L" in header and rule.startswith("|---")
    wins, draws, losses = map(int, row.split("|")[4].split("/"))
    assert wins + draws + losses == 10


def test_cli_eval_perfect_against_a_search(tictactoe, capsys):
    assert (
        main(
            [
                "eval",
                "tictactoe",
                "perfect",
                "alphabeta:eval=lines,depth=2",
                "--games",
                "4",
                "--opening-plies",
                "0",
                "--no-progress",
            ]
        )
        == 0
    )
    row = capsys.readouterr().out.strip().splitlines()[-1]
    wins, draws, losses = map(int, row.split("|")[4].split("/"))
    assert wins + draws + losses == 4 and losses == 0


def test_cli_solve_says_draw(tictactoe, capsys):
    assert main(["solve", "tictactoe"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("TicTacToeGame(first_player=0): draw (value +0 for the first player)")
    assert "positions stored:" in out


def test_cli_play_a_whole_game_against_the_perfect_agent(tictactoe, monkeypatch, capsys):
    from tablegym.experiments import human

    seen = {}
    original = human.HumanAgent.__call__

    def watched(self, state, rng):
        seen["state"] = state
        return original(self, state, rng)

    answers = itertools.chain(
        ["banana", "b2"], iter(lambda: seen["state"].action_to_string(seen["state"].legal_actions()[0]), None)
    )
    monkeypatch.setattr(human.HumanAgent, "__call__", watched)
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(answers))
    assert main(["play", "tictactoe", "--agent", "perfect", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "illegal action 'banana'" in out and "a cell such as b2" in out
    assert "legal moves: a1, b1, c1, a2, b2, c2, a3, b3, c3" in out
    assert "perfect (player 1) plays" in out
    assert out.strip().splitlines()[-1] in ("draw", "you lose")


def test_cli_bench_runs_the_records_benchmark(tictactoe, capsys):
    assert main(["bench", "tictactoe", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| name | value | positions | nodes | seconds | nodes_per_s |")
    assert "| solve canonical | 0 |" in out and "| alphabeta depth 9 | 0 |" in out


def test_cli_train_then_search_with_the_checkpoint(tictactoe, tmp_path, capsys):
    """``tablegym train tictactoe`` (self-play TD through the record's trainer and learned
    kernel) writes a checkpoint that ``alphabeta:eval=learned:PATH`` loads and plays with."""
    import torch

    from tablegym.models.agents import make_agent, make_evaluator
    from tablegym.models.checkpoint import CheckpointError
    from tablegym.search.alphabeta_search import alphabeta

    out = tmp_path / "ttt.pt"
    argv = [
        "train",
        "tictactoe",
        "--total-games",
        "40",
        "--games-per-iter",
        "20",
        "--depth",
        "1",
        "--hidden",
        "16",
        "--batch-size",
        "32",
        "--updates-per-iter",
        "4",
        "--buffer-size",
        "2000",
        "--eval-every",
        "1",
        "--eval-games",
        "2",
        "--eval-depth",
        "1",
        "--eval-baseline",
        "lines",
        "--save-every",
        "1",
        "--run-dir",
        str(tmp_path / "run"),
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 0
    assert f"checkpoint: {tmp_path / 'run' / 'checkpoint.pt'}" in capsys.readouterr().out
    assert out.exists() and list((tmp_path / "run").glob("events.out.tfevents.*"))

    g = game()
    spec = f"alphabeta:eval=learned:{out},depth=2"
    agent = make_agent(g, spec)
    assert agent(play(g.new_initial_state(), WIN_IN_ONE), np.random.default_rng(0)) == 2  # exact at terminals
    # The compiled kernel is the network: same value as the torch module on the same features.
    ev = make_evaluator(g, f"learned:{out}")
    s = play(g.new_initial_state(), [4, 0, 8])
    x = torch.zeros(1, 18)
    x[0, s.active_features()] = 1
    with torch.no_grad():
        assert ev(s, s.current_player()) == pytest.approx(float(ev.model(x)), abs=1e-5)
    assert alphabeta(s, ev, depth=3).action in s.legal_actions()
    assert main(["eval", "tictactoe", spec, "random", "--games", "4", "--no-progress"]) == 0
    row = capsys.readouterr().out.strip().splitlines()[-1]
    assert row.startswith(f"| `{spec}` | `random` | 4 ")
    with pytest.raises(CheckpointError):
        from tablegym.envs import make_game

        make_evaluator(make_game("trilobite-tiny"), f"learned:{out}")


def test_unregister_removes_every_trace():
    record = register(RECORD)
    try:
        assert ENV_ID in gymnasium.registry and ENV_ID in pettingzoo.aec_registry
        assert game().spec.name == "tictactoe"
    finally:
        unregister(record.name)
    assert "tictactoe" not in [p.name for p in plugins()]
    with pytest.raises(ValueError, match="unknown game 'tictactoe'"):
        game()
    with pytest.raises(gymnasium.error.Error):
        gymnasium.make(ENV_ID)
