"""Exported networks in the games with chance: Trap's expectiminimax and Threes' expectimax run a
user's torch MLP compiled, through each game's observation kernel, equal to the Python path; and
the critics of two-player games, kept incrementally between leaves, equal the whole network."""

import copy

import numpy as np
import pytest
import torch

from tablegym.envs import load, make_game, plugin
from tablegym.envs.core import CHANCE, TO_MOVE, sample_outcome
from tablegym.models.export import InputSizeError, NetEvaluator, TorchEvaluator, from_torch
from tablegym.models.netkernel import evaluated_whole, forward_dense, observed_value, pack
from tablegym.search.alphabeta_search import alphabeta
from tablegym.search.expectimax_search import expectimax
from tablegym.search.expectiminimax_search import expectiminimax, reference_expectiminimax


def random_states(game_name: str, seed: int, count: int) -> list:
    """Positions of random games: decision and chance nodes, and finished games."""
    game = make_game(game_name)
    rng = np.random.default_rng(seed)
    out = []
    s = game.new_initial_state()
    while len(out) < count:
        out.append(s)
        if s.is_terminal():
            s = game.new_initial_state()
        elif s.current_player() == CHANCE:
            s = s.child(sample_outcome(s, rng))
        else:
            s = s.child(int(rng.choice(s.legal_actions())))
    return out


def mlp(inputs: int, outputs: int = 1, seed: int = 0) -> torch.nn.Sequential:
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(inputs, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 16),
        torch.nn.LeakyReLU(0.1),
        torch.nn.Linear(16, outputs),
        torch.nn.Tanh(),
    )


@pytest.mark.parametrize("game_name", ["trap", "threes"])
def test_observation_kernel_equals_state_observation(game_name):
    kernel = load(plugin(game_name).observation)
    size = int(np.prod(make_game(game_name).spec.observation_shape))
    for s in random_states(game_name, 1, 400):
        for p in range(s.game.spec.num_players):
            out = np.full(size, 7.0, dtype=np.float32)
            kernel(s.array, p, out)
            assert np.array_equal(out, s.observation(p).reshape(-1))


@pytest.mark.parametrize("game_name", ["trap", "threes"])
def test_compiled_network_equals_the_torch_forward_pass(game_name):
    game = make_game(game_name)
    size = int(np.prod(game.spec.observation_shape))
    net = mlp(size, seed=3)
    compiled, python = from_torch(net, game), TorchEvaluator(net, game)
    checked = 0
    for s in random_states(game_name, 2, 300):
        if s.current_player() == CHANCE:
            continue
        for p in range(game.spec.num_players):
            want = python.evaluate(s, p)
            assert compiled.evaluate(s, p) == pytest.approx(want, abs=1e-5)
            if not s.is_terminal():
                mover = s.current_player()
                with torch.no_grad():
                    raw = float(net(torch.as_tensor(s.observation(mover).reshape(1, -1))))
                assert want == pytest.approx(raw if mover == p else -raw, abs=1e-6)
                checked += 1
    assert checked > 50


def test_trap_expectiminimax_runs_an_exported_network_as_its_python_reference():
    game = make_game("trap")
    net = mlp(int(np.prod(game.spec.observation_shape)), seed=5)
    ev = from_torch(net, game)
    for s in random_states("trap", 4, 60)[10::10]:
        if s.is_terminal() or s.current_player() == CHANCE:
            continue
        got = expectiminimax(s, ev, depth=2, bound=1.0)
        want = reference_expectiminimax(s, TorchEvaluator(net, game), 2, bound=1.0)
        assert got.value == pytest.approx(want, abs=1e-5)


def test_threes_expectimax_runs_an_exported_network_as_the_python_search():
    game = make_game("threes")
    net = mlp(int(np.prod(game.spec.observation_shape)), seed=6)
    ev, slow = from_torch(net, game), TorchEvaluator(net, game)
    for s in random_states("threes", 5, 80)[20::15]:
        if s.is_terminal() or s.current_player() == CHANCE:
            continue
        fast = expectimax(s, ev, depth=1)
        ref = expectimax(s, slow, depth=1, compiled=False, transpositions=False)
        assert fast.action == ref.action
        assert fast.nodes == ref.nodes
        for a, v in ref.values.items():
            assert fast.values[a] == pytest.approx(v, abs=1e-5)


def test_a_q_network_is_valued_by_its_best_legal_swipe():
    game = make_game("threes")
    net = mlp(int(np.prod(game.spec.observation_shape)), outputs=4, seed=7)
    compiled, python = from_torch(net, game, output="max"), TorchEvaluator(net, game, output="max")
    for s in random_states("threes", 8, 60):
        if s.current_player() == 0:
            assert compiled.evaluate(s, 0) == pytest.approx(python.evaluate(s, 0), abs=1e-5)


@pytest.mark.parametrize("game_name", ["trap", "threes"])
def test_wrong_input_size_is_one_clear_error(game_name):
    with pytest.raises(InputSizeError, match="observation"):
        from_torch(mlp(3), make_game(game_name))


def finished_games(game_name: str, seed: int, count: int) -> list:
    """The last positions of ``count`` random games played to the end."""
    game, rng, out = make_game(game_name), np.random.default_rng(seed), []
    for _ in range(count):
        s = game.new_initial_state()
        while not s.is_terminal():
            s = s.child(sample_outcome(s, rng) if s.current_player() == CHANCE else int(rng.choice(s.legal_actions())))
        out.append(s)
    return out


@pytest.mark.parametrize("game_name", ["trap", "threes"])
def test_finished_games_are_worth_their_returns_in_both_paths(game_name):
    game = make_game(game_name)
    net = mlp(int(np.prod(game.spec.observation_shape)), seed=9)
    compiled, python = from_torch(net, game), TorchEvaluator(net, game)
    for s in finished_games(game_name, 10, 6):
        for p in range(game.spec.num_players):  # Trap: +1/-1/0; Threes: the score, whatever the network says
            assert compiled.evaluate(s, p) == python.evaluate(s, p) == s.returns()[p]


@pytest.mark.parametrize("game_name", ["trap", "threes"])
def test_a_q_network_takes_the_legal_decisions_only(game_name):
    """Player nodes: the best legal output, as the Python path; a chance node has no decision
    (-inf for the player whose turn it stays, Trap's thrower), and its outcome list must not overrun the kernel's index buffer (Threes: 48 ids)."""
    game = make_game(game_name)
    net = mlp(int(np.prod(game.spec.observation_shape)), outputs=game.spec.num_actions, seed=11)
    compiled, python = from_torch(net, game, output="max"), TorchEvaluator(net, game, output="max")
    chance = 0
    for s in random_states(game_name, 12, 200):
        if s.is_terminal():
            continue
        if s.current_player() == CHANCE:
            assert compiled.evaluate(s, int(s.array[TO_MOVE])) == -np.inf
            chance += 1
        else:
            for p in range(game.spec.num_players):
                assert compiled.evaluate(s, p) == pytest.approx(python.evaluate(s, p), abs=1e-5)
    assert chance > 20


def test_friday_runs_an_exported_network_in_its_best_first_search():
    """Friday on the common state: its observation kernel equals ``State.observation``, the
    exported network equals the torch forward pass, a finished game is worth its return, and
    best-first over Fridai's moves plays with it."""
    from tablegym.models.friday.agents import MOVE_FILTER
    from tablegym.search.agents import BestFirstAgent

    game = make_game("friday")
    size = int(np.prod(game.spec.observation_shape))
    net = mlp(size, seed=13)
    ev = from_torch(net, game)
    kernel = load(plugin("friday").observation)
    checked = finished = 0
    for s in random_states("friday", 14, 400):
        out = np.full(size, 7.0, dtype=np.float32)
        kernel(s._s, 0, out)
        assert np.array_equal(out, s.observation(0).reshape(-1))
        if s.is_terminal():
            assert ev.evaluate(s) == s.returns()[0]
            finished += 1
        elif s.current_player() != CHANCE:
            with torch.no_grad():
                want = float(net(torch.as_tensor(s.observation(0).reshape(1, -1))))
            assert ev.evaluate(s, 0) == pytest.approx(want, abs=1e-6)
            checked += 1
    assert checked > 100 and finished > 0
    agent = BestFirstAgent(ev, nodes=200, move_filter=MOVE_FILTER)
    s = next(s for s in random_states("friday", 15, 100) if s.current_player() == 0 and len(s.legal_actions()) > 1)
    assert agent(s, np.random.default_rng(0)) in s.legal_actions() and agent.generated > 0


def test_the_python_expectimax_values_a_chance_layer_of_leaves_in_one_batch():
    """TorchEvaluator.batch gets every leaf under a chance node in one call; the search is the
    same (values as leaf-by-leaf evaluation, same nodes), with far fewer forward passes."""
    game = make_game("threes")
    net = mlp(int(np.prod(game.spec.observation_shape)), seed=16)

    class Counting(TorchEvaluator):
        calls = 0

        def batch(self, states, player):
            Counting.calls += 1
            return super().batch(states, player)

    class LeafByLeaf(TorchEvaluator):
        batch = None
        calls = 0

        def evaluate(self, state, player):
            LeafByLeaf.calls += 1
            return float(TorchEvaluator.batch(self, [state], player)[0])

    batched, single = Counting(net, game), LeafByLeaf(net, game)
    for s in [s for s in random_states("threes", 17, 60) if not s.is_terminal() and s.current_player() != CHANCE][:3]:
        Counting.calls = LeafByLeaf.calls = 0
        a = expectimax(s, batched, depth=2, compiled=False, transpositions=False)
        b = expectimax(s, single, depth=2, compiled=False, transpositions=False)
        assert a.nodes == b.nodes and a.action == b.action
        assert a.values == pytest.approx(b.values, abs=1e-6)
        assert 0 < Counting.calls < LeafByLeaf.calls / 2


def test_a_torch_q_network_takes_no_decision_at_a_chance_node():
    game = make_game("threes")
    net = mlp(int(np.prod(game.spec.observation_shape)), outputs=game.spec.num_actions, seed=18)
    python = TorchEvaluator(net, game, output="max")
    chance = [s for s in random_states("threes", 19, 50) if s.current_player() == CHANCE]
    assert chance and all(python.evaluate(s, 0) == -np.inf for s in chance)


TWO_PLAYER_NETWORKS = ["trap", "trilobite", "sim"]


def critic(size: int, seed: int, shape: str = "relu") -> torch.nn.Sequential:
    """A critic of the usual shape (ReLU, ReLU, Tanh out), a single Linear layer, or saturating
    hidden layers (each takes another branch after the kept first layer)."""
    torch.manual_seed(seed)
    nn = torch.nn
    if shape == "linear":
        return nn.Sequential(nn.Linear(size, 1))
    if shape == "tanh-sigmoid":
        return nn.Sequential(nn.Flatten(), nn.Linear(size, 40), nn.Tanh(), nn.Linear(40, 8), nn.Sigmoid(), nn.Linear(8, 1))
    return nn.Sequential(nn.Linear(size, 64), nn.ReLU(), nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())


def whole_network(ev: NetEvaluator) -> NetEvaluator:
    """``ev`` with the same (grid-rounded) weights, evaluated whole at every leaf: no kept first
    layer, no value cache."""
    plain = copy.copy(ev)
    plain.params = evaluated_whole(ev.params)
    return plain


@pytest.mark.parametrize("shape", ["relu", "linear", "tanh-sigmoid"])
@pytest.mark.parametrize("game_name", TWO_PLAYER_NETWORKS)
def test_a_critic_kept_incrementally_equals_the_whole_network_bit_for_bit(game_name, shape):
    game = make_game(game_name)
    size = int(np.prod(game.spec.observation_shape))
    net = critic(size, seed=5, shape=shape)
    ev = from_torch(net, game)
    whole, python = whole_network(ev), TorchEvaluator(net, game)
    states = [s for s in random_states(game_name, 4, 400) if s.current_player() != CHANCE]
    order = np.random.default_rng(0).permutation(len(states) * 2)  # positions far apart, revisited (the cache)
    for i in order:
        s, p = states[i % len(states)], int(i // len(states))
        assert ev.evaluate(s, p) == whole.evaluate(s, p)
        assert ev.evaluate(s, p) == pytest.approx(python.evaluate(s, p), abs=1e-6)


@pytest.mark.parametrize("game_name", TWO_PLAYER_NETWORKS)
def test_a_search_over_an_incremental_critic_is_the_search_over_the_whole_network(game_name):
    game = make_game(game_name)
    ev = from_torch(critic(int(np.prod(game.spec.observation_shape)), seed=6), game)
    whole = whole_network(ev)
    search = expectiminimax if game_name == "trap" else alphabeta
    for s in random_states(game_name, 7, 60)[10::10]:
        if s.is_terminal() or s.current_player() == CHANCE:
            continue
        a, b = search(s, ev, depth=3), search(s, whole, depth=3)
        assert (a.action, a.value, a.nodes) == (b.action, b.value, b.nodes)


def test_an_observation_that_is_not_zero_one_goes_through_the_whole_network():
    rng = np.random.default_rng(1)
    layers = [
        (rng.normal(size=(16, 40)) * 0.2, rng.normal(size=16) * 0.2, "relu", 0.0),
        (rng.normal(size=(8, 16)) * 0.2, rng.normal(size=8) * 0.2, "relu", 0.0),
        (rng.normal(size=(1, 8)), rng.normal(size=1) * 0.2, "tanh", 0.0),
    ]
    kept, whole = pack(layers, binary=True, slots=2), pack(layers, binary=True)
    none = np.zeros(0, dtype=np.int64)
    for _ in range(20):
        x = (rng.random(40) * (rng.random(40) < 0.4)).astype(np.float32)  # real values and zeros
        binary = (rng.random(40) < 0.3).astype(np.float32)
        for obs in (x, binary, x):
            assert observed_value(obs, 0, kept) == forward_dense(obs, whole, none, 0)
    # (which a path that took every non-zero entry for a 1 would not give)
    assert observed_value(x, 0, kept) != forward_dense((x > 0).astype(np.float32), whole, none, 0)
