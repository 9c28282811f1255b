"""Value network export, learned evaluator and checkpoints (safe loading, clear errors)."""

import numpy as np
import pytest
import torch

from tablegym.envs.trilobite.core import TrilobiteGame
from tablegym.models.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tablegym.models.learned import LearnedEvaluator, default_checkpoint, load_evaluator, load_model
from tablegym.models.value_net import NetConfig, ValueMLP, dense_features
from tests.test_alphabeta import random_position


def meta_for(game, config):
    return {"game": game.spec.name, "options": dict(game.spec.options), "net": config.to_dict(), "iteration": 3}


@pytest.mark.parametrize("hidden", [(16,), (24, 8)])
def test_compiled_value_equals_the_torch_network(hidden):
    torch.manual_seed(0)
    model = ValueMLP(NetConfig(112, hidden))
    ev = LearnedEvaluator(model, "trilobite")
    for seed in range(5):
        s = random_position(seed, 12)
        with torch.no_grad():
            v = float(model(dense_features([s.active_features()], 112)))
        mover = s.current_player()
        assert ev(s, mover) == pytest.approx(v, abs=1e-6)
        assert ev(s, 1 - mover) == pytest.approx(-v, abs=1e-6)


def test_learned_evaluator_is_exact_at_finished_games():
    game = TrilobiteGame()
    ev = LearnedEvaluator(ValueMLP(NetConfig(112, (8,))), "trilobite")
    s = game.new_initial_state()
    for c in (0, 1, 0, 1, 0, 1, 0):
        s = s.child(c)
    assert (ev(s, 0), ev(s, 1)) == (1.0, -1.0)


def test_checkpoint_round_trip(tmp_path):
    game = TrilobiteGame()
    config = NetConfig(112, (16,))
    model = ValueMLP(config)
    path = save_checkpoint(tmp_path / "a.pt", model=model, metadata=meta_for(game, config))
    loaded, meta = load_model(path, game)
    assert meta["iteration"] == 3
    for p, q in zip(model.parameters(), loaded.parameters()):
        assert torch.equal(p, q)
    ev = load_evaluator(game, path)
    assert np.array_equal(ev.params, model.export())


def test_a_folder_given_as_a_checkpoint_is_named_a_folder(tmp_path):
    with pytest.raises(CheckpointError, match="is a folder, not a checkpoint file"):
        load_model(tmp_path, TrilobiteGame())


def test_missing_corrupt_and_mismatched_checkpoints_give_clear_errors(tmp_path):
    game = TrilobiteGame()
    with pytest.raises(CheckpointError, match="does not exist"):
        load_model(tmp_path / "nope.pt", game)
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="corrupt"):
        load_model(bad, game)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    with pytest.raises(CheckpointError, match="not a tablegym-checkpoint"):
        load_model(foreign, game)
    config = NetConfig(112, (16,))
    path = save_checkpoint(tmp_path / "tri.pt", model=ValueMLP(config), metadata=meta_for(game, config))
    with pytest.raises(CheckpointError, match="win_length: checkpoint 4 vs requested 3"):
        load_model(path, TrilobiteGame(win_length=3))
    with pytest.raises(CheckpointError, match="for game 'trilobite', not 'sim'"):
        load_checkpoint(path, game="sim")
    lying = save_checkpoint(tmp_path / "lying.pt", model=ValueMLP(config), metadata=meta_for(game, NetConfig(112, (32,))))
    with pytest.raises(CheckpointError, match="does not match its network"):
        load_model(lying, game)


def test_a_failed_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    game = TrilobiteGame()
    config = NetConfig(112, (16,))
    path = save_checkpoint(tmp_path / "c.pt", model=ValueMLP(config), metadata=meta_for(game, config))
    before = path.read_bytes()

    def broken_save(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError):
        save_checkpoint(path, model=ValueMLP(config), metadata=meta_for(game, config))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.pt"]


def test_the_shipped_trilobite_checkpoint_loads():
    path = default_checkpoint("trilobite")
    assert path.is_file(), f"shipped checkpoint {path} is missing"
    ev = load_evaluator(TrilobiteGame())
    assert ev.kernel is not None and ev.params.size > 100


def test_the_value_cache_changes_no_search_result():
    """With and without the network's value cache, alpha-beta on Trilobite and expectiminimax on
    Trap return the same move, value and node count: a hit returns the value the network computes."""
    from tablegym.envs.trap.core import TrapGame
    from tablegym.models.agents import make_evaluator
    from tablegym.models.netkernel import without_value_cache
    from tablegym.search import alphabeta, expectiminimax

    cached = load_evaluator(TrilobiteGame())
    uncached = load_evaluator(TrilobiteGame())
    uncached.params = without_value_cache(uncached.params)
    assert cached.params[7] > 0 and uncached.params[7] == 0
    for seed in range(3):
        s = random_position(seed, 2 + 3 * seed)
        a, b = alphabeta(s, cached, depth=6), alphabeta(s, uncached, depth=6)
        assert (a.action, a.value, a.nodes) == (b.action, b.value, b.nodes)
    cached, uncached = make_evaluator(TrapGame(), "learned"), make_evaluator(TrapGame(), "learned")
    uncached.params = without_value_cache(uncached.params)
    s = TrapGame().new_initial_state()
    for depth in (2, 3):
        a, b = expectiminimax(s, cached, depth=depth), expectiminimax(s, uncached, depth=depth)
        assert (a.action, a.value, a.nodes) == (b.action, b.value, b.nodes)


def test_value_cache_entries_are_kept_by_key_and_replaced_on_collision():
    from tablegym.models.netkernel import cached_value, clear_value_cache, pack, remember_value

    layers = [(np.ones((2, 3)), np.zeros(2), "relu", 0.0), (np.ones((1, 2)), np.zeros(1), "tanh", 0.0)]
    params = pack(layers, binary=True, cache=4)
    assert np.isnan(cached_value(params, 5))
    remember_value(params, 5, 0.25)
    assert cached_value(params, 5) == 0.25
    remember_value(params, 9, -0.5)  # 9 & 3 == 5 & 3: the same entry
    assert np.isnan(cached_value(params, 5)) and cached_value(params, 9) == -0.5
    clear_value_cache(params)
    assert np.isnan(cached_value(params, 9))
    with pytest.raises(ValueError, match="power-of-two"):
        pack(layers, cache=6)
