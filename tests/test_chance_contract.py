"""Chance is part of a game's kernels: one ``chance`` kernel serves the object API, expectiminimax
and the compiled expectimax, which must equal the Python expectimax over the rules core."""

import numpy as np
import pytest

from tablegym.envs import make_game
from tablegym.envs.core import CHANCE, sample_outcome
from tablegym.envs.evaluator import Evaluator
from tablegym.envs.threes.core import ThreesGame
from tablegym.envs.threes.heuristics import BoardEvaluator
from tablegym.envs.trap.core import TrapGame, k_chance
from tablegym.envs.trap.heuristics import IS
from tablegym.search.expectimax_search import expectimax
from tablegym.search.expectiminimax_search import expectiminimax
from tests.episodes import threes_positions

THREES = ThreesGame()


def trap_positions(seed: int, count: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    s = TrapGame().new_initial_state()
    while len(out) < count:
        if s.is_terminal():
            s = TrapGame().new_initial_state()
        if s.current_player() == CHANCE:
            out.append(s)
            s = s.child(sample_outcome(s, rng))
        else:
            s = s.child(int(rng.choice(s.legal_actions())))
    return out


@pytest.mark.parametrize("game", ["threes", "trap"])
def test_chance_outcomes_come_from_the_kernel_and_sum_to_one(game):
    states = threes_positions(3, 5) if game == "threes" else trap_positions(3, 5)
    for s in states:
        if s.current_player() != CHANCE:
            with pytest.raises(ValueError, match="decision node"):
                s.chance_outcomes()
            s = s.child(s.legal_actions()[0])
        assert s.current_player() == CHANCE
        outcomes = s.chance_outcomes()
        ids = np.empty(max(s.game.spec.max_chance_outcomes, 1), dtype=np.int64)
        probs = np.empty(len(ids))
        n = s.kernels.chance(s.array, ids, probs)
        assert outcomes == list(zip(ids[:n].tolist(), probs[:n].tolist()))
        assert sum(p for _, p in outcomes) == pytest.approx(1.0)


def test_games_without_chance_have_no_chance_kernel():
    s = make_game("trilobite").new_initial_state()
    assert s.kernels.chance is None
    with pytest.raises(ValueError, match="no chance nodes"):
        s.chance_outcomes()


def test_sample_outcome_follows_the_distribution():
    s = trap_positions(5, 1)[0]
    rng = np.random.default_rng(0)
    counts: dict[int, int] = {}
    for _ in range(4000):
        o = sample_outcome(s, rng)
        counts[o] = counts.get(o, 0) + 1
    for o, p in s.chance_outcomes():
        assert counts.get(o, 0) / 4000 == pytest.approx(p, abs=0.03)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_compiled_expectimax_equals_the_python_search(depth):
    ev = BoardEvaluator("openness-matthew", terminal_penalty=50.0)
    for s in threes_positions(depth, 4 if depth < 3 else 2):
        slow = expectimax(s, ev, depth=depth, compiled=False, transpositions=False)
        fast = expectimax(s, ev, depth=depth, compiled=True)
        assert fast.values == slow.values  # the same sums in the same order: bit for bit
        assert fast.action == slow.action
        assert fast.nodes == slow.nodes


def test_compiled_expectimax_with_a_probability_cutoff_equals_the_python_search():
    ev = BoardEvaluator("openness")
    for s in threes_positions(7, 3):
        slow = expectimax(s, ev, depth=2, prob_cutoff=0.02, compiled=False, transpositions=False)
        fast = expectimax(s, ev, depth=2, prob_cutoff=0.02)
        full = expectimax(s, ev, depth=2)
        assert fast.values == slow.values and fast.nodes == slow.nodes
        assert fast.nodes < full.nodes


def test_compiled_expectimax_refuses_what_it_cannot_run():
    s = threes_positions(0, 1)[0]

    class PythonOnly(Evaluator):
        name = "python-only"

        def evaluate(self, state, player):
            return 0.0

    with pytest.raises(ValueError, match="no compiled expectimax"):
        expectimax(s, PythonOnly(), depth=1, compiled=True)
    assert expectimax(s, PythonOnly(), depth=1).value == 0.0  # the Python path still runs it


def test_expectiminimax_reads_the_chance_kernel_from_the_state():
    for s in trap_positions(11, 3):
        root = s.child(sample_outcome(s, np.random.default_rng(0)))
        if root.is_terminal() or root.current_player() == CHANCE:
            continue
        implicit = expectiminimax(root, IS, depth=3, bound=20.0)
        explicit = expectiminimax(root, IS, chance=k_chance, depth=3, bound=20.0)
        assert (implicit.action, implicit.value, implicit.nodes) == (explicit.action, explicit.value, explicit.nodes)


def test_expectiminimax_refuses_a_game_without_chance():
    from tablegym.envs.trilobite.heuristics import ADVANCED

    s = make_game("trilobite").new_initial_state()
    with pytest.raises(ValueError, match="no chance kernel"):
        expectiminimax(s, ADVANCED, depth=2)


@pytest.fixture(scope="module")
def ntuple_state_ev():
    from tablegym.models.threes.ntuple_net import load_ntuple, ntuple_state_evaluator

    return ntuple_state_evaluator(load_ntuple().tables())


@pytest.mark.parametrize("depth", [1, 2])
def test_the_ntuple_network_is_one_evaluator_of_the_generic_expectimax(depth, ntuple_state_ev):
    """Depth d of the generic search with the network valuing positions (best afterstate under
    the shown hint) is Threes' own afterstate search of depth d + 1: the same tree, summed in
    another order."""
    from tablegym.models.agents import make_agent

    agent = make_agent(THREES, f"expectimax:depth={depth + 1},eval=learned")
    for s in threes_positions(20 + depth, 4):
        generic = expectimax(s, ntuple_state_ev, depth=depth)
        assert agent(s) == generic.action
        for a in range(4):
            if a in generic.values:
                assert agent.values[a] == pytest.approx(generic.values[a], rel=1e-9)
            else:
                assert agent.values[a] == -np.inf


@pytest.mark.parametrize("nodes", [1, 50, 400])
def test_compiled_best_first_equals_its_python_reference(nodes, ntuple_state_ev):
    """Best-first on the common contract (Threes: chance sampled through its chance kernel) plays
    the same search as the plain one over the object API: same action, values, polled and
    generated counts, with a hand-made board evaluator and with the n-tuple network."""
    from tablegym.search.bestfirst import best_first_search, reference_best_first

    for evaluator in (BoardEvaluator("openness"), ntuple_state_ev):
        for i, s in enumerate(threes_positions(30 + nodes, 3)):
            fast = best_first_search(s, evaluator, nodes=nodes, seed=i + 1)
            slow = reference_best_first(s, evaluator, nodes=nodes, seed=i + 1)
            assert (fast.action, fast.values, fast.polled, fast.generated) == (
                slow.action,
                slow.values,
                slow.polled,
                slow.generated,
            )
            assert fast.polled == min(nodes, fast.polled) and fast.generated >= len(s.legal_actions())
            assert fast.action in s.legal_actions() and fast.value == max(fast.values.values())


def test_best_first_samples_chance_with_its_seed_and_refuses_what_it_cannot_run(ntuple_state_ev):
    from tablegym.search.bestfirst import best_first_search

    s = threes_positions(7, 1)[0]
    ev = BoardEvaluator("openness")
    runs = [best_first_search(s, ntuple_state_ev, nodes=300, seed=seed).values for seed in (1, 1, 2)]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    with pytest.raises(ValueError, match="node budget"):
        best_first_search(s, ev, nodes=0, seed=1)
    with pytest.raises(ValueError, match="chance node"):
        best_first_search(s.child(s.legal_actions()[0]), ev, nodes=10, seed=1)
    python_only = Evaluator()
    with pytest.raises(ValueError, match="no compiled best-first"):
        best_first_search(s, python_only, nodes=10, seed=1)


def test_threes_plays_the_generic_best_first_by_spec():
    from tablegym.models.agents import make_agent

    agent = make_agent(THREES, "bestfirst:nodes=30,eval=openness")
    s = threes_positions(8, 1)[0]
    assert agent(s, np.random.default_rng(0)) in s.legal_actions()
    assert agent.last_result.polled <= 30
    for bad, match in (
        ("bestfirst:nodes=0", "positive"),
        ("bestfirst:depth=2", "allowed: eval, nodes"),
        ("bestfirst:eval=nope", "unknown"),
    ):
        with pytest.raises(ValueError, match=match):
            make_agent(THREES, bad)
