"""Bring-your-own networks (tablegym.models.export) and the compiled network format (netkernel)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from tablegym.envs import load, make_game, plugin, plugins
from tablegym.envs.evaluator import WrongGameError
from tablegym.models.export import (
    ExportError,
    InputSizeError,
    TorchEvaluator,
    UnsupportedLayerError,
    from_sb3,
    from_state_dict,
    from_torch,
)
from tablegym.models.netkernel import forward_binary, pack
from tablegym.search.alphabeta_search import alphabeta

GAMES_WITH_OBSERVATION_KERNEL = [p.name for p in plugins() if p.observation]


def random_positions(game, count, seed):
    rng = np.random.default_rng(seed)
    out, s = [], game.new_initial_state()
    while len(out) < count:
        if s.is_terminal():
            out.append(s)
            s = game.new_initial_state()
            continue
        out.append(s)
        s = s.child(int(rng.choice(s.legal_actions())))
    return out


@pytest.mark.parametrize("name", GAMES_WITH_OBSERVATION_KERNEL)
def test_the_compiled_observation_is_the_states_observation(name):
    game = make_game(name)
    kernel = load(plugin(name).observation)
    size = int(np.prod(game.spec.observation_shape))
    for s in random_positions(game, 200, seed=1):
        for player in range(game.spec.num_players):
            out = np.full(size, np.nan, dtype=np.float32)
            kernel(s.array, player, out)
            np.testing.assert_array_equal(out, s.observation(player).reshape(-1))


def mlp(inputs, outputs=1, *, act=nn.ReLU):
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Flatten(), nn.Linear(inputs, 32), act(), nn.Linear(32, 16), nn.LeakyReLU(0.2), nn.Linear(16, outputs), nn.Tanh()
    )


@pytest.mark.parametrize("name", ["trilobite", "sim"])
@pytest.mark.parametrize("act", [nn.ReLU, nn.Tanh, nn.Sigmoid, nn.Identity])
def test_an_exported_sequential_is_the_torch_network(name, act):
    game = make_game(name)
    size = int(np.prod(game.spec.observation_shape))
    net = mlp(size, act=act)
    ev, ref = from_torch(net, game), TorchEvaluator(net, game)
    positions = random_positions(game, 60, seed=2)
    batch = ref.batch(positions, 0)
    for s, want in zip(positions, batch):
        assert ev(s, 0) == pytest.approx(want, abs=1e-5)
        assert ev(s, 1) == pytest.approx(-want, abs=1e-5)
        if s.is_terminal():  # exact results at finished games, whatever the network says
            assert ev(s, 0) == s.returns()[0]


def test_compiled_and_python_alphabeta_agree_with_an_exported_network():
    game = make_game("trilobite")
    net = mlp(168)
    ev, ref = from_torch(net, game), TorchEvaluator(net, game)
    for s in random_positions(game, 12, seed=3)[1::2]:
        if s.is_terminal():
            continue
        a = alphabeta(s, ev, depth=3)
        b = alphabeta(s, ref, depth=3, compiled=False)
        assert a.action == b.action
        assert a.value == pytest.approx(b.value, abs=1e-5)


def test_a_q_network_is_worth_its_best_legal_action():
    game = make_game("sim")
    net = mlp(45, outputs=15)
    ev = from_torch(net, game, output="max")
    for s in random_positions(game, 40, seed=4):
        if s.is_terminal():
            continue
        with torch.no_grad():
            q = net(torch.as_tensor(s.observation(s.current_player()).reshape(1, -1)))[0].numpy()
        assert ev(s, s.current_player()) == pytest.approx(q[s.legal_actions()].max(), abs=1e-5)


def test_a_state_dict_and_its_layer_list():
    game = make_game("sim")
    net = nn.Sequential(nn.Linear(45, 8), nn.ReLU(), nn.Linear(8, 1), nn.Tanh())
    ev = from_state_dict(net.state_dict(), ["linear", "relu", "linear", "tanh"], game)
    s = random_positions(game, 5, seed=5)[3]
    assert ev(s, 0) == pytest.approx(TorchEvaluator(net, game)(s, 0), abs=1e-6)
    with pytest.raises(UnsupportedLayerError, match="'gelu'"):
        from_state_dict(net.state_dict(), ["linear", "gelu", "linear"], game)
    with pytest.raises(ExportError, match="3 linear layers"):
        from_state_dict(net.state_dict(), ["linear", "linear", "linear"], game)


def test_bad_networks_get_clear_errors():
    game = make_game("trilobite")
    with pytest.raises(UnsupportedLayerError, match="Conv2d"):
        from_torch(nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(120, 1)), game)
    with pytest.raises(InputSizeError, match="takes 100 inputs; trilobite's observation \\(3, 7, 8\\) has 168"):
        from_torch(nn.Sequential(nn.Linear(100, 1)), game)
    with pytest.raises(ExportError, match="needs 1 output"):
        from_torch(nn.Sequential(nn.Linear(168, 8)), game)
    from tablegym.envs import register, unregister
    from tests.tictactoe import RECORD

    register(RECORD)  # a plugin game without an observation kernel
    try:
        ttt = make_game("tictactoe")
        with pytest.raises(ExportError, match="no compiled observation kernel"):
            from_torch(nn.Sequential(nn.Linear(int(np.prod(ttt.spec.observation_shape)), 1)), ttt)
    finally:
        unregister(RECORD.name)
    ev = from_torch(mlp(45), make_game("sim"))
    with pytest.raises(WrongGameError, match="made for 'sim', not 'trilobite'"):
        alphabeta(game.new_initial_state(), ev, depth=2)


def test_stable_baselines3_critic_and_q_network():
    import gymnasium
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import DQN

    import tablegym.envs  # noqa: F401

    game = make_game("trilobite")
    env = gymnasium.make("tablegym/Trilobite-v0")
    ppo = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, device="cpu")
    dqn = DQN("MlpPolicy", env, seed=0, device="cpu", learning_starts=0)
    ppo_ev, dqn_ev = from_sb3(ppo, game), from_sb3(dqn, game)
    for s in random_positions(game, 30, seed=6):
        if s.is_terminal():
            continue
        obs = torch.as_tensor(s.observation(s.current_player())[None])
        with torch.no_grad():
            v = ppo.policy.predict_values(obs)[0, 0].item()
            q = dqn.q_net(obs)[0].numpy()
        assert ppo_ev(s, s.current_player()) == pytest.approx(v, abs=1e-5)
        assert dqn_ev(s, s.current_player()) == pytest.approx(q[s.legal_actions()].max(), abs=1e-5)
    with pytest.raises(ExportError, match="cannot find a critic"):
        from_sb3(object(), game)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sets(st.integers(0, 39), max_size=20), min_size=1, max_size=12), st.integers(0, 1))
def test_the_incremental_first_layer_equals_the_full_sum_bit_for_bit(feature_sets, mover):
    rng = np.random.default_rng(7)
    layers = [
        (rng.normal(size=(16, 40)), rng.normal(size=16), "relu", 0.0),
        (rng.normal(size=(1, 16)), rng.normal(size=1), "tanh", 0.0),
    ]
    cached, plain = pack(layers, binary=True, slots=2), pack(layers, binary=True, slots=0)
    for features in feature_sets:
        active = np.array(sorted(features) or [0], dtype=np.int64)[: len(features)]
        order = rng.permutation(len(active))
        got = forward_binary(active[order], len(active), mover, cached)
        assert got == forward_binary(active, len(active), mover, plain)


def test_a_saved_sb3_model_loads_as_learned_path(tmp_path):
    import gymnasium
    from sb3_contrib import MaskablePPO

    import tablegym.envs  # noqa: F401
    from tablegym.models.checkpoint import CheckpointError
    from tablegym.models.learned import load_evaluator

    game = make_game("trilobite")
    model = MaskablePPO("MlpPolicy", gymnasium.make("tablegym/Trilobite-v0"), n_steps=64, seed=1, device="cpu")
    model.save(tmp_path / "model.zip")
    ev = load_evaluator(game, tmp_path / "model.zip")
    s = random_positions(game, 9, seed=8)[7]
    assert ev(s, 0) == pytest.approx(from_sb3(model, game)(s, 0), abs=1e-12)
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="is not a MaskablePPO, PPO or DQN model"):
        load_evaluator(game, tmp_path / "bad.zip")
    with pytest.raises(CheckpointError, match="does not exist"):
        load_evaluator(game, tmp_path / "missing.zip")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sets(st.integers(0, 39), max_size=20), min_size=1, max_size=12), st.integers(0, 1))
def test_the_kept_first_layer_of_sorted_feature_lists_equals_the_full_sum(feature_sets, mover):
    """Feature kernels list features in order, so leaves one after another share a prefix and a
    suffix, which forward_binary skips: its three-layer value still equals the full sum's."""
    rng = np.random.default_rng(8)
    layers = [
        (rng.normal(size=(48, 40)), rng.normal(size=48), "relu", 0.0),
        (rng.normal(size=(40, 48)), rng.normal(size=40), "relu", 0.0),
        (rng.normal(size=(1, 40)), rng.normal(size=1), "tanh", 0.0),
    ]
    cached, plain = pack(layers, binary=True, slots=2), pack(layers, binary=True, slots=0)
    for features in feature_sets:
        active = np.array(sorted(features), dtype=np.int64)
        for near in (active, np.setdiff1d(active, active[len(active) // 2 : len(active) // 2 + 1]), np.union1d(active, [39])):
            got = forward_binary(near, len(near), mover, cached)
            assert got == forward_binary(near, len(near), mover, plain)


# ------------------------------------------------------ TorchEvaluator's input shape


class BoardConv(nn.Module):
    """A small convolutional critic over Trilobite's board planes (3, 7, 8); it remembers the
    shapes of the batches it was given."""

    def __init__(self, outputs: int = 1) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.head = nn.Linear(8 * 7 * 8, outputs)
        self.shapes: list[tuple[int, ...]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.shapes.append(tuple(x.shape))
        return torch.tanh(self.head(torch.relu(self.conv(x)).flatten(1)))


def test_a_conv_net_reads_the_board_planes_and_plays_a_legal_move():
    game = make_game("trilobite")
    net = BoardConv()
    ev = TorchEvaluator(net, game)
    assert not ev.flatten and ev.input_shape == (3, 7, 8)
    for s in random_positions(game, 10, seed=9)[1::3]:
        if s.is_terminal():
            continue
        result = alphabeta(s, ev, depth=2, compiled=False)
        assert result.action in s.legal_actions()
        me = s.current_player()
        with torch.no_grad():
            want = net(torch.as_tensor(s.observation(me)[None])).item()
        assert ev(s, me) == pytest.approx(want, abs=1e-6) and ev(s, 1 - me) == pytest.approx(-want, abs=1e-6)
    positions = [p for p in random_positions(game, 12, seed=10) if not p.is_terminal()]
    net.shapes.clear()
    ev.batch(positions, 0)
    assert net.shapes == [(len(positions), 3, 7, 8)]  # one forward pass, the observation's own shape


def test_a_linear_first_network_still_gets_the_flat_observation():
    game = make_game("trilobite")
    plain = nn.Sequential(nn.Linear(168, 8), nn.ReLU(), nn.Linear(8, 1))  # no Flatten: reads (B, 168)
    assert TorchEvaluator(plain, game).input_shape == (168,)
    s = random_positions(game, 4, seed=11)[3]
    assert TorchEvaluator(plain, game)(s, 0) == pytest.approx(from_torch(plain, game)(s, 0), abs=1e-6)
    with pytest.raises(
        InputSizeError,
        match=r"refused a batch of shape \(1, 3, 7, 8\) \(the observation in its own "
        r"shape\): mat1 and mat2 shapes cannot be multiplied",
    ) as err:
        TorchEvaluator(plain, game, flatten=False)(s, 0)
    assert "\n" not in str(err.value) and "\x1b" not in str(err.value)


@pytest.mark.parametrize("outputs, output, shape", [(4, "value", "(1, 4)"), (1, "max", "(1, 1)")])
def test_an_output_that_is_not_one_value_per_position_is_one_line(outputs, output, shape):
    game = make_game("trilobite")
    ev = TorchEvaluator(BoardConv(outputs), game, output=output, name="conv")
    s = random_positions(game, 3, seed=12)[2]
    need = "one value per position, shape (1,) or (1, 1)" if output == "value" else "one value per action, shape (1, 8)"
    with pytest.raises(
        ExportError,
        match=rf"^the network 'conv' gave an output of shape {re_escape(shape)} for 1 "
        rf"position\(s\); output='{output}' needs {re_escape(need)}$",
    ):
        ev(s, 0)


def re_escape(text: str) -> str:
    import re

    return re.escape(text)


# ---------------------------------------------------------- save: what eval=learned:PATH reads


def test_save_takes_a_network_or_an_evaluator_of_one_and_writes_plain_tensors(tmp_path):
    from tablegym.models.checkpoint import FORMAT
    from tablegym.models.export import load_exported, save
    from tablegym.models.learned import load_evaluator

    game = make_game("trilobite")
    net = mlp(168)
    want = from_torch(net, game).params
    for i, source in enumerate([net, from_torch(net, game), TorchEvaluator(net, game)]):
        path = save(source, game, tmp_path / f"net{i}.pt")
        payload = torch.load(path, weights_only=True)  # tensors and plain values only
        assert payload["format"] == FORMAT and payload["metadata"]["network"] == "exported-network"
        assert np.array_equal(load_evaluator(game, path).params, want)
        assert np.array_equal(load_exported(game, path).params, want)
    q = nn.Sequential(nn.Linear(168, 8))
    assert save(from_torch(q, game, output="max"), game, tmp_path / "q.pt").is_file()
    with pytest.raises(ExportError, match="has output='max', not 'value'"):
        save(from_torch(q, game, output="max"), game, tmp_path / "q2.pt", output="value")
    with pytest.raises(UnsupportedLayerError, match="cannot compile layer BoardConv"):  # stays on the Python path
        save(TorchEvaluator(BoardConv(), game), game, tmp_path / "conv.pt")


def _cli_error(capsys, path) -> str:
    from tablegym.experiments.cli import main

    try:
        status = main(["eval", "trilobite", f"alphabeta:eval=learned:{path},depth=1", "random", "--games", "1", "--no-progress"])
    except SystemExit as exit_:  # refused while the arguments are read
        status = exit_.code
    assert status == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "\x1b" not in err and "Traceback" not in err
    return err


def test_a_torch_saved_module_on_the_command_line_says_how_to_save_it(tmp_path, capsys):
    torch.save(mlp(168), tmp_path / "module.pt")
    assert "save a network with tablegym.models.export.save(net, game, path)" in _cli_error(capsys, tmp_path / "module.pt")


def test_a_bare_state_dict_on_the_command_line_is_one_line(tmp_path, capsys):
    torch.save(mlp(168).state_dict(), tmp_path / "sd.pt")
    assert "is not a tablegym-checkpoint-v1 checkpoint" in _cli_error(capsys, tmp_path / "sd.pt")


def test_a_bare_state_dict_on_the_command_line_says_how_to_save_it(tmp_path, capsys):
    torch.save(mlp(168).state_dict(), tmp_path / "sd.pt")
    assert "tablegym.models.export.save" in _cli_error(capsys, tmp_path / "sd.pt")


# ------------------------------------- save: a network no kernel compiles, for the Python path

PYTHON_PATH_SEARCHER = {
    "trilobite": "alphabeta",
    "sim": "alphabeta",
    "trap": "expectiminimax",
    "threes": "expectimax",
    "friday": "expectimax",
}
"""A searcher of each game that takes ``eval=learned:PATH`` (its Python path for these files)."""


def python_path_net(game) -> nn.Sequential:
    """A network with layers the compiled format has no counterpart for (LayerNorm, GELU)."""
    torch.manual_seed(5)
    size = int(np.prod(game.spec.observation_shape))
    return nn.Sequential(nn.Flatten(), nn.Linear(size, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 1), nn.Tanh())


@pytest.mark.parametrize("name", sorted(PYTHON_PATH_SEARCHER))
def test_a_saved_network_for_the_python_path_plays_through_the_command_line(name, tmp_path, capsys):
    from tablegym.experiments.cli import main
    from tablegym.models.export import save
    from tablegym.models.learned import load_evaluator

    game = make_game(name)
    net = python_path_net(game).eval()
    path = save(net, game, tmp_path / "net.pt")
    payload = torch.load(path, weights_only=True)  # tensors and plain values only
    assert payload["metadata"]["network"] == "exported-module"
    loaded = load_evaluator(game, path)
    assert isinstance(loaded, TorchEvaluator)
    positions = [p for p in random_positions(game, 30, seed=3) if not p.is_terminal()][:5]
    for p in positions:
        me = p.current_player() if p.current_player() >= 0 else 0
        assert loaded(p, me) == pytest.approx(TorchEvaluator(net, game)(p, me), abs=1e-6)
    spec = f"{PYTHON_PATH_SEARCHER[name]}:eval=learned:{path},depth=1"
    rest = ["random"] if game.spec.num_players == 2 else []
    assert main(["eval", name, spec, *rest, "--games", "1", "--no-progress"]) == 0
    assert str(path) in capsys.readouterr().out


def test_a_conv_net_with_batch_norm_and_pooling_is_saved_and_searched_as_it_was():
    import tempfile

    from tablegym.models.export import save
    from tablegym.models.learned import load_evaluator

    game = make_game("trilobite")
    torch.manual_seed(2)
    conv = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Sequential(nn.Flatten(), nn.Linear(8 * 3 * 4, 1)),  # nested: flattened in order
        nn.Tanh(),
    )
    conv(torch.randn(16, 3, 7, 8))  # batch norm's running statistics move off their start
    conv.eval()
    with tempfile.TemporaryDirectory() as tmp:
        ev = load_evaluator(game, save(conv, game, f"{tmp}/conv.pt"))
    assert not ev.flatten and ev.input_shape == (3, 7, 8)
    s = [p for p in random_positions(game, 12, seed=4) if not p.is_terminal()][-1]
    want = alphabeta(s, TorchEvaluator(conv, game), depth=2, compiled=False)
    got = alphabeta(s, ev, depth=2, compiled=False)
    assert (got.action, got.value) == (want.action, pytest.approx(want.value, abs=1e-6))


def _described(tmp_path, layers, tensors, name="bad.pt"):
    from tablegym.models.checkpoint import save_checkpoint

    game = make_game("trilobite")
    meta = {"game": "trilobite", "options": dict(game.spec.options), "network": "exported-module", "output": "value"}
    meta.update(flatten=False, layers=layers)
    return save_checkpoint(tmp_path / name, state=tensors, metadata=meta)


@pytest.mark.parametrize(
    "layers, tensors, said",
    [
        ([["system", {}]], {}, "layer 'system' is not one of Conv1d, Conv2d"),
        ([["Linear", {"in_features": 168, "out_features": 1, "device": "cuda"}]], {}, "takes no argument 'device'"),
        ([["Dropout", {"p": {"a": 1}}]], {}, "argument 'p' of layer Dropout is a dict"),
        # asks for a layer of 10**12 weights and holds none: refused before anything is allocated
        ([["Flatten", {}], ["Linear", {"in_features": 10**6, "out_features": 10**6}]], {}, "its tensors do not fit its layers"),
        ("Linear", {}, "describes no layers"),
    ],
)
def test_a_layer_description_from_elsewhere_rebuilds_only_listed_layers(tmp_path, capsys, layers, tensors, said):
    from tablegym.models.checkpoint import CheckpointError
    from tablegym.models.learned import load_evaluator

    path = _described(tmp_path, layers, tensors)
    with pytest.raises(CheckpointError, match=re_escape(said)):
        load_evaluator(make_game("trilobite"), path)
    assert said in _cli_error(capsys, path)


def test_a_module_that_is_no_sequential_of_listed_layers_is_refused_when_saved(tmp_path):
    from tablegym.models.export import save

    game = make_game("trilobite")
    with pytest.raises(UnsupportedLayerError, match=r"a torch.nn.Sequential of .*: layer BoardConv is not one of"):
        save(nn.Sequential(nn.Flatten(), BoardConv()), game, tmp_path / "conv.pt")
    with pytest.raises(InputSizeError, match="refused a batch of shape"):  # refused when saved, not when searched
        save(nn.Sequential(nn.Conv2d(5, 4, 3), nn.Flatten(), nn.Linear(4, 1)), game, tmp_path / "c.pt")
    assert not (tmp_path / "conv.pt").exists() and not (tmp_path / "c.pt").exists()
