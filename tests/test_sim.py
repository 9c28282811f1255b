"""Sim rules core, canonical form and the Cassis agents, checked against the published counts."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from tablegym.envs.core import DRAW, TERMINAL, IllegalActionError
from tablegym.envs.sim.canonical import (
    EDGE_ID,
    MAX_N,
    POPCOUNT,
    POW3,
    canonical_code,
    canonical_form,
    canonical_key,
    code_masks,
    decode_key,
    encode,
    relabel,
)
from tablegym.envs.sim.core import SimGame
from tablegym.models.sim.agents import (
    AGENTS,
    SAFE_MOVES,
    DumbAgent,
    EasyAgent,
    ExpertAgent,
    MediumAgent,
)

# ---------------------------------------------------------------- counting kernels (oracles)


@njit(cache=True)
def _labelled_counts(n):
    """DP over every labelled board code: move sequences reaching it without a finished game.

    Codes only grow when an edge is coloured, so increasing code order is a topological order.
    Returns (pre-triangle positions per ply, finished games per length).
    """
    ne = n * (n - 1) // 2
    paths = np.zeros(POW3[ne], dtype=np.int64)
    paths[0] = 1
    positions = np.zeros(ne + 1, dtype=np.int64)
    games = np.zeros(ne + 1, dtype=np.int64)
    masks = np.empty(2 * n, dtype=np.int64)
    for code in range(POW3[ne]):
        w = paths[code]
        if w == 0:
            continue
        code_masks(n, code, masks)
        ply = 0
        for v in range(2 * n):
            ply += POPCOUNT[masks[v]]
        ply //= 2
        positions[ply] += 1
        if ply == ne:
            games[ne] += w  # a draw
            continue
        p = ply % 2
        e = 0
        for i in range(n):
            for j in range(i + 1, n):
                if not ((masks[i] | masks[n + i]) >> j) & 1:
                    if masks[p * n + i] & masks[p * n + j]:
                        games[ply + 1] += w
                    else:
                        paths[code + (p + 1) * POW3[e]] += w
                e += 1
    return positions, games


@njit(cache=True)
def _expand(n, codes):
    """Canonical codes of the pre-triangle children of the boards ``codes`` (with repeats)."""
    ne = n * (n - 1) // 2
    out = np.empty(len(codes) * ne, dtype=np.int64)
    masks = np.empty(2 * n, dtype=np.int64)
    perm = np.empty(MAX_N, dtype=np.int64)
    m = 0
    for code in codes:
        code_masks(n, code, masks)
        ply = 0
        for v in range(2 * n):
            ply += POPCOUNT[masks[v]]
        p = (ply // 2) % 2
        for i in range(n):
            for j in range(i + 1, n):
                if ((masks[i] | masks[n + i]) >> j) & 1 or masks[p * n + i] & masks[p * n + j]:
                    continue
                masks[p * n + i] |= np.int64(1) << j
                masks[p * n + j] |= np.int64(1) << i
                out[m] = canonical_code(n, masks, 0, perm)
                m += 1
                masks[p * n + i] &= ~(np.int64(1) << j)
                masks[p * n + j] &= ~(np.int64(1) << i)
    return out[:m]


@njit(cache=True)
def _canonical_all(n, codes):
    out = np.empty(len(codes), dtype=np.int64)
    masks = np.empty(2 * n, dtype=np.int64)
    perm = np.empty(MAX_N, dtype=np.int64)
    for k in range(len(codes)):
        code_masks(n, codes[k], masks)
        out[k] = canonical_code(n, masks, 0, perm)
    return out


# ---------------------------------------------------------------- published counts


def test_canonical_pre_triangle_positions_per_ply():
    """2,250 boards up to relabelling, per number of coloured edges as published."""
    level = np.array([0], dtype=np.int64)
    counts = [1]
    for _ in range(15):
        level = np.unique(_expand(6, level))
        counts.append(len(level))
    assert counts == [1, 1, 2, 7, 25, 64, 166, 303, 500, 489, 415, 193, 71, 12, 1, 0]
    assert sum(counts) == 2250


def test_labelled_positions_and_complete_games():
    """1,350,022 labelled pre-triangle positions; 109,132,115,040 complete games by length."""
    positions, games = _labelled_counts(6)
    assert positions.sum() == 1_350_022
    assert games[:5].sum() == 0  # no game is decided before move 5
    assert games[5:].tolist() == [
        15_840,
        151_200,
        4_082_400,
        27_993_600,
        348_364_800,
        1_488_067_200,
        9_068_112_000,
        19_719_936_000,
        45_816_192_000,
        28_086_912_000,
        4_572_288_000,
    ]
    assert games.sum() == 109_132_115_040
    assert games[15] == 4_572_288_000  # all of them triangles: no draw on K6


def test_canonical_key_is_exact_on_k5():
    """On K5 every board (3**10) is canonicalised and compared with the minimum over all 120 relabellings."""
    from itertools import permutations

    n, ne = 5, 10
    codes = np.arange(3**ne, dtype=np.int64)
    digits = (codes[:, None] // POW3[:ne]) % 3
    full_min = np.full(len(codes), np.iinfo(np.int64).max)
    for perm in permutations(range(n)):
        new_ids = [EDGE_ID[n, perm[i], perm[j]] for i in range(n) for j in range(i + 1, n)]
        full_min = np.minimum(full_min, digits @ POW3[new_ids])
    ours = _canonical_all(n, codes)
    pairs = np.unique(np.stack([full_min, ours]), axis=1)
    # one key per isomorphism class: the two partitions of the boards are the same
    assert pairs.shape[1] == len(np.unique(full_min)) == len(np.unique(ours))
    assert np.all(_canonical_all(n, ours) == ours)


# ---------------------------------------------------------------- canonical form properties


@st.composite
def positions(draw):
    """A random pre-triangle position on K3..K8 and a random relabelling of its points."""
    n = draw(st.integers(3, 8))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    state = SimGame(n).new_initial_state()
    for _ in range(rng.integers(0, state.game.num_edges + 1)):
        safe = [e for e in state.legal_actions() if not state.child(e).is_terminal()]
        if not safe:
            break
        state = state.child(int(rng.choice(safe)))
    return state, rng.permutation(n)


@settings(max_examples=200, deadline=None)
@given(positions())
def test_relabelled_boards_share_the_canonical_key(pos):
    state, perm = pos
    game = state.game
    other = game.from_colours(relabel(state.colours, perm, game.n))
    assert canonical_key(other) == canonical_key(state)
    assert sorted(other.active_features()) == sorted(state.active_features())


@settings(max_examples=200, deadline=None)
@given(positions())
def test_canonical_key_decodes_to_itself(pos):
    state, _ = pos
    n = state.game.n
    key, perm = canonical_form(state.colours, n)
    board = decode_key(key, n)
    assert key == canonical_key(state)
    assert np.array_equal(relabel(state.colours, perm, n), board)  # the relabelling that reaches it
    assert canonical_key(state.game.from_colours(board)) == key


def test_decode_key_rejects_non_codes():
    with pytest.raises(ValueError, match="not a board code"):
        decode_key(3**15, 6)


# ---------------------------------------------------------------- rules


def test_closing_an_own_triangle_loses():
    """X plays 0-1, 0-2, then 1-2 and loses at move 5 (O played 3-4, 4-5).

       0 1 2 3 4 5
    0  - X X . . .
    1  X - X . . .      X closed 0-1-2 in its own colour: O (player 1) wins
    2  X X - . . .
    3  . . . - O .
    4  . . . O - O
    5  . . . . O -
    """
    g = SimGame()
    s = g.new_initial_state()
    for move in ["0-1", "3-4", "0-2", "4-5"]:
        s = s.child(s.string_to_action(move))
    assert not s.is_terminal()
    s = s.child(s.string_to_action("1-2"))
    assert s.current_player() == TERMINAL
    assert s.winner() == 1
    assert s.returns().tolist() == [-1.0, 1.0]
    assert s.losing_triangle() == (0, 1, 2)
    assert s.legal_actions() == []
    assert "closed triangle 0-1-2" in s.to_text()


def test_mixed_triangle_does_nothing():
    """X 0-1, O 1-2, X 0-2: a triangle, but in two colours; the game goes on."""
    s = SimGame().new_initial_state()
    for move in ["0-1", "1-2", "0-2"]:
        s = s.child(s.string_to_action(move))
    assert not s.is_terminal() and s.current_player() == 1


def test_k5_pentagon_pentagram_is_a_draw():
    """X the pentagon 0-1-2-3-4-0, O the pentagram: full board, no triangle in one colour."""
    g = SimGame(5)
    x = [g.edge(i, (i + 1) % 5) for i in range(5)]
    colours = np.full(10, 2)
    colours[x] = 1
    s = g.from_colours(colours)
    assert s.is_terminal() and s.winner() is None
    assert int(s.kernels.outcome(s.array)) == DRAW
    assert s.returns().tolist() == [0.0, 0.0]
    assert s.to_text().endswith("draw: board full, no triangle in one colour")


def test_to_text_is_an_adjacency_matrix():
    s = SimGame(4).new_initial_state().child(0).child(3)  # 0-1 X, 1-2 O
    assert s.to_text() == "\n".join(
        [
            "   0 1 2 3",
            "0  - X . .",
            "1  X - O .",
            "2  . O - .",
            "3  . . . -",
            "X = player 0, O = player 1, . = uncoloured",
            "X (player 0) to move",
        ]
    )


def test_edges_and_action_strings():
    g = SimGame()
    assert g.edges[:5] == [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5)] and g.edges[14] == (4, 5)
    s = g.new_initial_state()
    for e in range(15):
        assert s.string_to_action(s.action_to_string(e)) == e
    assert s.string_to_action("3 2") == s.string_to_action("2-3") == s.string_to_action("9") == 9


@pytest.mark.parametrize("text", ["0-1", "0 1", "0"])
def test_colouring_a_coloured_edge_is_illegal(text):
    s = SimGame().new_initial_state().child(0)
    with pytest.raises(IllegalActionError, match=repr(text)) as err:
        s.string_to_action(text)
    assert isinstance(err.value, ValueError) and 0 not in err.value.legal and "already coloured" in str(err.value)
    with pytest.raises(IllegalActionError, match="illegal action 0"):
        s.child(0)


@pytest.mark.parametrize("text", ["0-0", "6-1", "15", "a-b", "1-2-3", ""])
def test_unreadable_moves_are_rejected(text):
    with pytest.raises(IllegalActionError, match=repr(text)):
        SimGame().new_initial_state().string_to_action(text)


@pytest.mark.parametrize("n", [2, 9, 6.0, True, "6"])
def test_board_size_is_checked(n):
    with pytest.raises(ValueError, match="3..8"):
        SimGame(n)


def test_spec_and_observation():
    g = SimGame(6)
    s = g.new_initial_state().child(0).child(14)
    assert g.spec.num_actions == g.spec.max_game_length == 15
    obs = s.observation(1)
    assert obs.shape == g.spec.observation_shape == (3, 15) and obs.dtype == np.float32
    assert obs[0, 14] == 1 and obs[1, 0] == 1 and obs[0].sum() == obs[1].sum() == 1 and obs[2].sum() == 0
    assert s.observation(0)[2].sum() == 15
    assert s.colours.dtype == np.int8 and s.colours[[0, 14]].tolist() == [1, 2]
    assert s.num_features == 30 and len(s.active_features()) == 2


def test_push_pop_round_trip_and_pickle():
    rng = np.random.default_rng(7)
    for n in range(3, 9):
        s0 = SimGame(n).new_initial_state()
        k = s0.kernels
        s = s0
        while not s.is_terminal():
            s = s.child(int(rng.choice(s.legal_actions())))
        arr = s0.array
        snapshots = [arr.copy()]
        for e in s.history:
            k.push(arr, e)
            snapshots.append(arr.copy())
        assert np.array_equal(arr, s.array) and k.key(arr) == encode(s.colours)
        for snap in reversed(snapshots[:-1]):
            k.pop(arr)
            assert np.array_equal(arr, snap)
        back = pickle.loads(pickle.dumps(s))
        assert back == s and back.to_text() == s.to_text() and back.game.n == n


# ---------------------------------------------------------------- Cassis agents and evaluator

# K4, X (player 0) to move:      edges: 0-1 X, 0-2 X, 0-3 O, 2-3 O; free 1-2 (3) and 1-3 (4)
#      0 1 2 3
#   0  - X X O                   1-2 closes X's triangle 0-1-2 (loses at once);
#   1  X - . .                   1-3 is safe and, O then filling 1-2, draws.
#   2  X . - O
#   3  O . O -
HAND = SimGame(4).from_colours([1, 1, 2, 0, 0, 2])


def test_agents_on_a_hand_made_position():
    rng = np.random.default_rng(0)
    assert HAND.current_player() == 0 and HAND.legal_actions() == [3, 4]
    assert DumbAgent()(HAND, rng) == 3
    assert EasyAgent()(HAND, rng) == 4
    expert = ExpertAgent()
    assert expert.action_values(HAND) == {3: -1, 4: 0}
    assert expert(HAND, rng) == 4
    picks = {MediumAgent()(HAND, np.random.default_rng(seed)) for seed in range(20)}
    assert picks == {3, 4}
    assert set(AGENTS) == {"dumb", "easy", "medium", "expert"}


def test_easy_agent_falls_back_to_the_first_free_edge():
    """K5, X to move; both free edges close an X triangle: 0-3 (with 0-1, 1-3), 1-2 (with 0-1, 0-2).

       0 1 2 3 4
    0  - X X . O
    1  X - . X O
    2  X . - O X
    3  . X O - O
    4  O O X O -
    """
    s = SimGame(5).from_colours([1, 1, 0, 2, 0, 1, 2, 2, 1, 2])
    rng = np.random.default_rng(0)
    assert s.current_player() == 0 and s.legal_actions() == [2, 4]
    assert all(s.child(e).winner() == 1 for e in s.legal_actions())
    assert EasyAgent()(s, rng) == 2
    assert ExpertAgent().action_values(s) == {2: -1, 4: -1}
    assert ExpertAgent()(s, rng) == 2


def test_safe_moves_evaluator():
    # X: one safe move (1-3); O: two (1-2 and 1-3), over 6 edges
    assert SAFE_MOVES(HAND, 0) == pytest.approx((1 - 2) / 6 * 0.5)
    assert SAFE_MOVES(HAND, 1) == pytest.approx((2 - 1) / 6 * 0.5)
    lost = HAND.child(3)
    assert SAFE_MOVES(lost, 0) == -1.0 and SAFE_MOVES(lost, 1) == 1.0
    drawn = HAND.child(4).child(3)
    assert drawn.is_terminal() and SAFE_MOVES(drawn, 0) == 0.0
    assert SAFE_MOVES.compiled


def test_expert_wins_k6_as_second_player():
    expert = ExpertAgent()
    for seed, opponent in enumerate([DumbAgent(), EasyAgent(), MediumAgent(), MediumAgent(), ExpertAgent()]):
        rng = np.random.default_rng(seed)
        s = SimGame().new_initial_state()
        while not s.is_terminal():
            agent = opponent if s.current_player() == 0 else expert
            s = s.child(agent(s, rng))
        assert s.winner() == 1, s.to_text()
