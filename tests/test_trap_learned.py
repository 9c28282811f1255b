"""Trap's learned evaluator and its self-play training: inputs worked by hand, the compiled
network against PyTorch, board symmetries, TD targets with a non-alternating mover, the
search with the network against plain expectiminimax, and a training run that resumes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tablegym.envs.trap.core import HDR, POS0, TrapGame, k_chance
from tablegym.envs.trap.heuristics import free_board, one_cell_lookahead, voronoi
from tablegym.models.agents import make_agent, make_evaluator
from tablegym.models.checkpoint import CheckpointError, load_checkpoint
from tablegym.models.learned import LearnedEvaluator
from tablegym.models.trap.agents import SearchAgent
from tablegym.models.trap.learned import NUM_SCALARS, SCALE, input_symmetries, num_inputs, trap_inputs, trap_value
from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.search.expectiminimax_search import expectiminimax, reference_expectiminimax
from tablegym.search.play import play_game
from tablegym.training.selfplay import SelfPlayBatch, td_leaf_targets
from tablegym.training.trap.train import parse_args, play_selfplay, train
from tests.test_expectiminimax import _random_positions

TRAP = TrapGame()

BOARD = """
. . . . .
. # # # .
. # 1 # .
. # # . .
2 . . . .
"""


def _inputs(state) -> np.ndarray:
    x = np.empty(num_inputs(state.n))
    trap_inputs(state.array, x)
    return x


def test_inputs_of_a_hand_worked_position():
    game = TrapGame(n=5)
    x = _inputs(game.from_board(BOARD, to_move=0, phase="throw"))
    # Player 1 at c3 has one exit (d2); player 2 in the corner has two; the 16 empty cells form
    # one ring around the traps that both players touch. Trapping d2 cuts player 1 off from all
    # 15 other empty cells; player 2 sits on the ring and loses nothing to any single trap.
    expected = {
        0: 1.0,
        1: 1 / 8,
        2: 2 / 8,
        7: 15 / 16,
        8: 0.0,
        9: 16 / 16,
        10: 16 / 16,
        11: 1.0,
        12: 2 / 4,
        13: 0.0,
        14: 4 / 4,
        15: 7 / 16,
        16: 0.0,
    }
    for i, v in expected.items():
        assert x[i] == pytest.approx(v), i
    s = game.from_board(BOARD, to_move=0).array
    free = free_board(s)
    assert x[3] == one_cell_lookahead(s, 0, free) / 32 and x[4] == one_cell_lookahead(s, 1, free) / 32
    assert (x[5], x[6]) == tuple(v / 16 for v in voronoi(s, 0, free))
    assert np.flatnonzero(x[NUM_SCALARS:]).tolist() == [12, 25 + 20]
    # Seen by player 2 to move: the players' inputs swap, the phase flag is off.
    y = _inputs(game.from_board(BOARD, to_move=1))
    assert (y[0], y[1], y[2], y[7], y[8]) == (0.0, x[2], x[1], x[8], x[7])
    assert np.flatnonzero(y[NUM_SCALARS:]).tolist() == [20, 25 + 12]


def test_compiled_network_equals_pytorch_and_is_antisymmetric():
    game = TrapGame()
    torch.manual_seed(0)
    model = ValueMLP(NetConfig(num_inputs(7), (16, 8)))
    ev = LearnedEvaluator(model, "trap")
    assert ev.bound == ev.win_value == SCALE
    states = _random_positions(game, 40, seed=3, max_plies=30)
    xs = np.stack([_inputs(s) for s in states])
    with torch.no_grad():
        want = model(torch.from_numpy(xs).float()).numpy()
    for s, w in zip(states, want):
        mover = s.current_player()
        assert trap_value(s.array, mover, ev.params) == pytest.approx(SCALE * w, abs=1e-3)
        assert trap_value(s.array, 1 - mover, ev.params) == -trap_value(s.array, mover, ev.params)


def test_symmetries_map_inputs_of_rotated_and_reflected_boards():
    game = TrapGame()
    perms = input_symmetries(7)
    assert len({p.tobytes() for p in perms}) == 8 and (perms[0] == np.arange(num_inputs(7))).all()
    rows, cols = np.divmod(np.arange(49), 7)
    for state in _random_positions(game, 10, seed=5, max_plies=30):
        x = _inputs(state)
        for perm in perms:
            # Find the cell map of this permutation and draw the position through it.
            cell_map = np.empty(49, dtype=int)
            cell_map[perm[NUM_SCALARS : NUM_SCALARS + 49] - NUM_SCALARS] = np.arange(49)
            s = state.array.copy()
            s[HDR + cell_map] = state.array[HDR : HDR + 49]
            s[POS0 : POS0 + 2] = cell_map[state.array[POS0 : POS0 + 2]]
            y = np.empty_like(x)
            trap_inputs(s, y)
            np.testing.assert_allclose(y, x[perm])
        assert rows.size == cols.size


def test_td_targets_follow_the_mover_through_a_turn():
    # Positions: player 0 moves, player 0 throws, player 1 moves; player 1 wins at the end.
    b = SelfPlayBatch(
        np.zeros((3, 1)),
        np.array([0.2, 0.4, 0.6]),
        np.zeros(3, int),
        np.zeros(3, bool),
        np.array([-1.0, -1.0, 1.0]),
        np.array([0, 0, 1]),
    )
    t2 = 0.5 * 0.6 + 0.5 * 1.0  # 0.8, player 1's view
    t1 = 0.5 * 0.4 + 0.5 * -t2  # the throw bootstraps on the negated move of the other player
    t0 = 0.5 * 0.2 + 0.5 * t1  # the move bootstraps on its own player's throw, not negated
    np.testing.assert_allclose(td_leaf_targets(b, 0.5), [t0, t1, t2])
    np.testing.assert_allclose(td_leaf_targets(b, 1.0), [-1, -1, 1])


@pytest.mark.parametrize("depth", [1, 2])
def test_search_with_the_network_equals_plain_expectiminimax(depth):
    game = TrapGame(n=4, turn_cap=30)
    torch.manual_seed(1)
    ev = LearnedEvaluator(ValueMLP(NetConfig(num_inputs(4), (8,))), "trap")
    for state in _random_positions(game, 8, seed=depth):
        got = expectiminimax(state, ev, chance=k_chance, depth=depth)
        want = reference_expectiminimax(state, ev, depth, bound=SCALE)
        assert got.value == pytest.approx(want, abs=1e-6)


def test_selfplay_records_whole_games_seeded():
    params = ValueMLP(NetConfig(num_inputs(5), (8,))).export()
    a = play_selfplay(params, games=3, depth=1, epsilon=0.2, seed=4, n=5)
    b = play_selfplay(params, games=3, depth=1, epsilon=0.2, seed=4, n=5)
    np.testing.assert_array_equal(a.features, b.features)
    np.testing.assert_array_equal(a.result, b.result)
    assert set(a.game.tolist()) == {0, 1, 2} and np.all(np.abs(a.search_value) <= 1)
    for g in range(3):
        phase = a.features[a.game == g, 0]
        mover = a.mover[a.game == g]
        res = a.result[a.game == g]
        assert phase[0] == 0 and mover[0] == 0  # player 0 opens with a step
        # a throw is made by the player who just stepped, and every result is seen by its mover
        assert np.all(mover[1:][phase[1:] == 1] == mover[:-1][phase[1:] == 1])
        assert np.all(res[mover == 0] == -res[mover == 1][0]) if (mover == 1).any() else True


def test_training_resumes_and_the_checkpoint_plays(tmp_path):
    common = [
        "trap",
        "--run-dir",
        str(tmp_path),
        "--games-per-iter",
        "4",
        "--updates-per-iter",
        "2",
        "--eval-every",
        "2",
        "--eval-games",
        "2",
        "--eval-depth",
        "1",
        "--save-every",
        "1",
        "--no-progress",
        "--hidden",
        "8",
        "--depth",
        "1",
        "--option",
        "n=5",
    ]
    train(parse_args(common + ["--total-games", "8"]))
    meta = load_checkpoint(tmp_path / "checkpoint.pt")["metadata"]
    assert (meta["iteration"], meta["games"], meta["game"], meta["options"]["n"]) == (2, 8, "trap", 5)
    train(parse_args(common + ["--total-games", "12"]))
    assert load_checkpoint(tmp_path / "checkpoint.pt")["metadata"]["games"] == 12
    with pytest.raises(ValueError, match="another network"):
        train(parse_args(common + ["--total-games", "16", "--hidden", "4"]))
    # The 5x5 network refuses a 7x7 game; on its own board it plays a whole game.
    with pytest.raises(CheckpointError, match="other rule options"):
        make_evaluator(TRAP, f"learned:{tmp_path / 'checkpoint.pt'}")
    game = TrapGame(n=5)
    from tablegym.models.learned import load_evaluator

    ev = load_evaluator(game, tmp_path / "checkpoint.pt")
    record = play_game(game, (SearchAgent(ev, depth=2), make_agent(TRAP, "random")), np.random.default_rng(0))
    assert record.move_counts[0] > 0


def test_corrupt_checkpoint_is_reported(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt"):
        make_evaluator(TRAP, f"learned:{bad}")


def test_leaf_evaluation_bench_reports_every_evaluator(tmp_path):
    from tablegym.experiments.trap.bench import leaf_evaluations

    path = tmp_path / "net.pt"
    from tablegym.models.checkpoint import save_checkpoint

    game = TrapGame()
    model = ValueMLP(NetConfig(num_inputs(7), (8,)))
    save_checkpoint(
        path, model=model, metadata={"game": "trap", "options": dict(game.spec.options), "net": model.config.to_dict()}
    )
    rows = leaf_evaluations(("is", f"learned:{path}"), positions=50, seconds=0.01)
    assert list(rows) == ["leaf evaluations is", f"leaf evaluations learned:{path}"]
    assert rows["leaf evaluations is"]["ratio to is"] == 1.0
    assert all(r["evaluations/s"] > 0 for r in rows.values())


def test_play_trap_with_eval_alone_uses_the_shipped_network(monkeypatch, capsys):
    # `tablegym play trap --eval learned` works out of the box: a step (s), a throw (d4), quit.
    from tablegym.experiments.cli import main
    from tests.test_cli import scripted_input

    scripted_input(monkeypatch, ["s", "d4", "q"])
    assert main(["play", "trap", "--eval", "learned", "--depth", "2", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "search:eval=learned,depth=2 (player 1) plays" in out
