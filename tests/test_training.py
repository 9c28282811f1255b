"""TD-leaf self-play: targets worked by hand, seeded determinism, logging and resuming."""

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from tablegym.envs.trilobite.core import TrilobiteGame
from tablegym.models.checkpoint import load_checkpoint
from tablegym.models.learned import LearnedEvaluator
from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.training.selfplay import SelfPlayBatch, play_selfplay, td_leaf_targets
from tablegym.training.symmetry import feature_symmetries
from tablegym.training.td import Args, parse_args, train

TINY_RUN = [
    "--games-per-iter",
    "20",
    "--updates-per-iter",
    "2",
    "--save-every",
    "1",
    "--no-progress",
    "--hidden",
    "8",
    "--minutes",
    "5",
]
"""A tiny TD self-play run (of TrilobiteTiny here and in tests/test_ray.py): 20 games and 2 updates an
iteration, a checkpoint after each, 8 hidden units, no progress bar, at most 5 minutes."""


def batch(values, results, games, explored):
    n = len(values)
    return SelfPlayBatch(
        np.zeros((n, 2), np.uint8), np.array(values, float), np.array(games), np.array(explored, bool), np.array(results, float)
    )


def test_td_leaf_targets_by_hand():
    # One game of three positions; the player to move at the last one wins (+1), so the results
    # alternate +1, -1, +1 back to the first position. Search values 0.2, -0.4, 0.6.
    b = batch([0.2, -0.4, 0.6], [1, -1, 1], [0, 0, 0], [False, False, False])
    lam = 0.5
    t2 = 0.5 * 0.6 + 0.5 * 1.0  # 0.8
    t1 = 0.5 * -0.4 + 0.5 * -t2  # -0.6
    t0 = 0.5 * 0.2 + 0.5 * -t1  # 0.4
    np.testing.assert_allclose(td_leaf_targets(b, lam), [t0, t1, t2])
    np.testing.assert_allclose(td_leaf_targets(b, 0.0), [0.2, -0.4, 0.6])
    np.testing.assert_allclose(td_leaf_targets(b, 1.0), [1, -1, 1])


def test_an_exploratory_move_cuts_the_trace_and_games_do_not_leak():
    b = batch([0.1, 0.3, -0.5, 0.7], [-1, 1, 1, -1], [0, 0, 1, 1], [False, True, False, False])
    t = td_leaf_targets(b, 1.0)
    assert t[1] == 0.3  # random move played from here: its own search value only
    assert t[0] == -0.3  # bootstraps on it, not on the outcome behind the random move
    assert list(t[2:]) == [1.0, -1.0]  # game 1 ends with its own result, not game 0's


def test_selfplay_is_seeded_and_records_alternating_results():
    game = TrilobiteGame(5, 4, 3)
    ev = LearnedEvaluator(ValueMLP(NetConfig(40, (8,))), "trilobite")
    a = play_selfplay(game.new_initial_state(), ev, games=6, depth=2, epsilon=0.2, seed=7)
    b = play_selfplay(game.new_initial_state(), ev, games=6, depth=2, epsilon=0.2, seed=7)
    np.testing.assert_array_equal(a.features, b.features)
    np.testing.assert_array_equal(a.result, b.result)
    assert set(np.unique(a.game)) == set(range(6))
    for g in range(6):
        r = a.result[a.game == g]
        feats = a.features[a.game == g]
        assert np.all(feats.sum(axis=1) == np.arange(len(r)))  # one more chip per position
        if r[-1] != 0:
            assert np.all(r[:-1] == -r[1:])  # the players alternate


def test_mirror_symmetry_maps_features_of_mirrored_games():
    game = TrilobiteGame()
    ident, mirror = feature_symmetries(game)
    s = game.new_initial_state().child(0).child(1)
    m = game.new_initial_state().child(7).child(6)
    x = np.zeros(112, np.uint8)
    x[s.active_features()] = 1
    y = np.zeros(112, np.uint8)
    y[m.active_features()] = 1
    np.testing.assert_array_equal(x[mirror], y)


def test_training_logs_checkpoints_and_resumes(tmp_path):
    evaluation = ["--eval-every", "2", "--eval-games", "2", "--eval-depth", "2", "--eval-baseline", "win-loss"]
    common = ["trilobite-tiny", "--run-dir", str(tmp_path), *TINY_RUN, *evaluation]
    train(parse_args(common + ["--total-games", "40"]))
    meta = load_checkpoint(tmp_path / "checkpoint.pt")["metadata"]
    assert (meta["iteration"], meta["games"], meta["game"]) == (2, 40, "trilobite")
    train(parse_args(common + ["--total-games", "80"]))
    meta = load_checkpoint(tmp_path / "checkpoint.pt")["metadata"]
    assert (meta["iteration"], meta["games"]) == (4, 80)
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"losses/mse", "losses/td_error", "charts/games_per_s", "charts/score_vs_win-loss"} <= tags
    with pytest.raises(ValueError, match="another network"):
        train(parse_args(common + ["--total-games", "100", "--hidden", "16"]))


def test_bad_training_arguments_are_reported():
    with pytest.raises(SystemExit):
        parse_args(["trilobite", "--option", "novalue"])
    with pytest.raises(ValueError, match="unknown"):
        train(Args(game="chess", minutes=0.01))
