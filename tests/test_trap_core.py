"""Trap rules core checked against rules/trap.md: hand-worked landings and wins, an independent
reference model replayed over thousands of random games, push/pop and candidate throws.

Boards are drawn as ``from_board`` reads them: ``.`` empty, ``#`` trap, ``1`` player 0, ``2``
player 1; columns a.. from the left, rows 1.. from the top (cell a1 is the top-left corner).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegym.envs.conformance import check_game
from tablegym.envs.core import CHANCE, DRAW, ONGOING, PLY, TERMINAL, TO_MOVE, IllegalActionError
from tablegym.envs.trap.core import (
    CAND,
    COURSE,
    GAME,
    HDR,
    KERNELS,
    MODE,
    NUM_DIRS,
    PHASE,
    POS0,
    SEARCH_KERNELS,
    TURNS,
    TrapGame,
    TrapState,
)

N, NE, E, SE, S, SW, W, NW = range(8)
OFFSETS = [(-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1)]
"""The king steps in action order, as the module docstring draws them (0 = N, clockwise)."""


# -- an independent reading of the spec ------------------------------------------------------


def sq(name: str, n: int = 7) -> int:
    """The cell index of a name like "d4" (column letter, row number from the top)."""
    return (int(name[1:]) - 1) * n + ord(name[0]) - ord("a")


def throw_at(name: str, n: int = 7) -> int:
    return NUM_DIRS + sq(name, n)


def ring(n: int, cell: int) -> list[int]:
    """The in-board 8-neighbours of ``cell``, in action order."""
    r, c = divmod(cell, n)
    return [(r + dr) * n + c + dc for dr, dc in OFFSETS if 0 <= r + dr < n and 0 <= c + dc < n]


def ref_steps(n: int, traps: set[int], players: tuple[int, int], here: int) -> list[int]:
    """Legal king steps from ``here``: onto an empty in-board cell (no trap, no player)."""
    r, c = divmod(here, n)
    steps = []
    for d, (dr, dc) in enumerate(OFFSETS):
        t = (r + dr) * n + c + dc
        if 0 <= r + dr < n and 0 <= c + dc < n and t not in traps and t not in players:
            steps.append(d)
    return steps


def ref_landing(n: int, thrower: int, target: int, players: tuple[int, int]) -> dict[int, float]:
    """p = 1 - 0.05 (a - 1) on the target; 1 - p shared by its in-board non-player neighbours."""
    a = abs(thrower // n - target // n) + abs(thrower % n - target % n)
    p = 1 - 0.05 * (a - 1)
    misses = [c for c in ring(n, target) if c not in players]
    if a == 1:
        return {target: 1.0}
    return {target: p, **{c: (1 - p) / len(misses) for c in misses}}


def outcomes(state: TrapState) -> dict[int, float]:
    got = state.chance_outcomes()
    assert got[0][0] == state.target  # the intended cell comes first
    assert sum(p for _, p in got) == pytest.approx(1.0, abs=1e-12)
    assert len({c for c, _ in got}) == len(got)
    return dict(got)


def assert_distribution(state: TrapState, want: dict[int, float]) -> None:
    got = outcomes(state)
    assert set(got) == set(want)
    for cell, p in want.items():
        assert got[cell] == pytest.approx(p, abs=1e-12), cell


def mirrored(text: str) -> str:
    """The same drawing with the two players' seats swapped."""
    return text.replace("1", "x").replace("2", "1").replace("x", "2")


def board(game: TrapGame, text: str, me: int, phase: str = "move") -> TrapState:
    """``text`` drawn with ``1`` as the player ``me`` (the mover) and ``2`` as its opponent."""
    return game.from_board(mirrored(text) if me else text, to_move=me, phase=phase)


def drawing(state: TrapState) -> str:
    grid = [["#" if t else "." for t in row] for row in state.traps]
    for p in (0, 1):
        r, c = state.position(p)
        grid[r][c] = str(p + 1)
    return "\n".join(" ".join(row) for row in grid)


def random_game(game: TrapGame, seed: int) -> tuple[list[int], TrapState]:
    """A game of uniformly random decisions and landings drawn by their probabilities."""
    rng = np.random.default_rng(seed)
    s = game.new_initial_state()
    actions = []
    while not s.is_terminal():
        if s.current_player() == CHANCE:
            cells, probs = zip(*s.chance_outcomes())
            a = cells[rng.choice(len(cells), p=probs)]
        else:
            a = rng.choice(s.legal_actions())
        actions.append(int(a))
        s = s.child(int(a))
    return actions, s


# -- landing distribution ----------------------------------------------------------------------


def test_landing_distributions_by_hand_after_a_step():
    #     a b c d e f g
    #  1  . . . 1 . . .     player 0 steps S from d1 to d2 and throws from d2, not from d1
    #  2  . . . v . . .
    #  ...
    #  7  . . . 2 . . .
    s = TrapGame().new_initial_state().child(S)
    assert s.position(0) == (1, 3) and s.phase == "throw"
    # corner a1: a = |2-1| + |d-a| = 1 + 3 = 4, p = 0.85; b1 a2 b2 get 0.15 / 3 = 0.05
    assert_distribution(s.child(throw_at("a1")), {sq("a1"): 0.85, sq("b1"): 0.05, sq("a2"): 0.05, sq("b2"): 0.05})
    # edge f1: a = 1 + 2 = 3, p = 0.90; e1 g1 e2 f2 g2 get 0.10 / 5 = 0.02
    assert_distribution(s.child(throw_at("f1")), {sq("f1"): 0.90, **{sq(c): 0.02 for c in ("e1", "g1", "e2", "f2", "g2")}})
    # interior e5: a = 3 + 1 = 4, p = 0.85; its 8 neighbours get 0.15 / 8 = 0.01875
    assert_distribution(
        s.child(throw_at("e5")), {sq("e5"): 0.85, **{sq(c): 0.01875 for c in ("d4", "e4", "f4", "d5", "f5", "d6", "e6", "f6")}}
    )
    # d6 next to the opponent on d7: a = 4, p = 0.85; 7 neighbours (not d7) get 0.15 / 7
    assert_distribution(
        s.child(throw_at("d6")), {sq("d6"): 0.85, **{sq(c): 0.15 / 7 for c in ("c5", "d5", "e5", "c6", "e6", "c7", "e7")}}
    )
    # e3 next to the thrower on d2 (diagonal, a = 2, p = 0.95): 7 neighbours (not d2) get 0.05 / 7
    assert_distribution(
        s.child(throw_at("e3")), {sq("e3"): 0.95, **{sq(c): 0.05 / 7 for c in ("e2", "f2", "d3", "f3", "d4", "e4", "f4")}}
    )
    # distance 1 (d3 below, c2 beside): p = 1, one outcome
    assert s.child(throw_at("d3")).chance_outcomes() == [(sq("d3"), 1.0)]
    assert s.child(throw_at("c2")).chance_outcomes() == [(sq("c2"), 1.0)]


def test_farthest_throw_on_7x7_hits_with_045():
    #     a b c d e f g
    #  1  . 1 . . . . .     player 0 steps W to a1 and throws at g7: a = 6 + 6 = 12, p = 0.45
    #  4  . . . 2 . . .     (from b1 it would have been a = 11, p = 0.50)
    #  7  . . . . . . v     f6 g6 f7 share 0.55: 0.18333... each
    s = (
        TrapGame()
        .from_board("""
        . 1 . . . . .
        . . . . . . .
        . . . . . . .
        . . . 2 . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
        .child(W)
        .child(throw_at("g7"))
    )
    assert s.current_player() == CHANCE
    assert_distribution(s, {sq("g7"): 0.45, sq("f6"): 0.55 / 3, sq("g6"): 0.55 / 3, sq("f7"): 0.55 / 3})


def test_landing_includes_trapped_neighbours_and_a_trap_on_a_trap_changes_nothing():
    #     a b c d e f g
    #  1  . . . . . . .
    #  2  . . . . . . .
    #  3  . . # # . . .     c3 (the target) and d3 trapped, c4 trapped
    #  4  . . # . . . .
    #  5  . . . . . . .     player 0 steps N from d6 to d5 and throws at c3: a = 2 + 1 = 3, p = 0.90
    #  6  . . . 1 . . .     b2 c2 d2 b3 d3# b4 c4# d4 share 0.10: 0.0125 each, traps included
    #  7  . . . . . . 2
    game = TrapGame()
    s = (
        game.from_board("""
        . . . . . . .
        . . . . . . .
        . . # # . . .
        . . # . . . .
        . . . . . . .
        . . . 1 . . .
        . . . . . . 2
    """)
        .child(N)
        .child(throw_at("c3"))
    )
    assert_distribution(s, {sq("c3"): 0.90, **{sq(c): 0.0125 for c in ("b2", "c2", "d2", "b3", "d3", "b4", "c4", "d4")}})
    before = s.traps.copy()
    for cell in ("c3", "d3", "c4"):  # onto a trap: nothing changes, the turn passes
        after = s.child(sq(cell))
        assert np.array_equal(after.traps, before) and after.mover == 1 and after.phase == "move"
        assert after.turns == 1 and not after.is_terminal()
    after = s.child(sq("b2"))
    assert after.traps.sum() == before.sum() + 1 and after.traps[1, 1]


def test_a_target_with_a_single_free_neighbour_gets_the_whole_miss():
    #     a b c
    #  1  v 2 .     player 0 on b2 throws at a1 (diagonal: a = 2, p = 0.95);
    #  2  . 1 .     of a1's neighbours b1 and b2 hold players, so a2 alone gets 0.05
    #  3  . . .
    s = (
        TrapGame(n=3)
        .from_board(
            """
        . 2 .
        . 1 .
        . . .
    """,
            phase="throw",
        )
        .child(throw_at("a1", 3))
    )
    assert_distribution(s, {sq("a1", 3): 0.95, sq("a2", 3): 0.05})


def test_every_throw_from_a_square_matches_the_formula():
    # every target from every thrower cell of the 5x5 and 8x8 boards, opponent in the centre or a corner
    for game in (TrapGame(n=5), TrapGame(n=8)):
        n = game.n
        for opp in (n * n // 2, n * n - 1):
            for me in range(n * n):
                if me == opp:
                    continue
                rows = [["."] * n for _ in range(n)]
                rows[me // n][me % n], rows[opp // n][opp % n] = "1", "2"
                s = game.from_board("\n".join("".join(r) for r in rows), phase="throw")
                for a in s.legal_actions():
                    landing = s.child(a)
                    want = ref_landing(n, me, a - NUM_DIRS, (me, opp))
                    got = outcomes(landing)
                    assert set(got) == set(want) and all(got[c] == pytest.approx(p) for c, p in want.items())


def test_chance_outcomes_only_at_chance_nodes():
    s = TrapGame().new_initial_state()
    with pytest.raises(ValueError, match="decision node"):
        s.chance_outcomes()
    with pytest.raises(ValueError):
        s.child(S).chance_outcomes()


# -- winning ------------------------------------------------------------------------------------


@pytest.mark.parametrize("me", [0, 1])
def test_the_move_alone_wins_and_there_is_no_throw(me):
    #     a b c d e f g
    #  5  . . . . 1 . .     the mover on e5 steps SE onto f6, the opponent's last free
    #  6  . . . . . . #     neighbour: g7 is walled in by f6 (a player), g6# and f7#
    #  7  . . . . . # 2
    text = """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . 1 . .
        . . . . . . #
        . . . . . # 2
    """
    s = board(TrapGame(), text, me)
    won = s.child(SE)
    assert won.is_terminal() and won.current_player() == TERMINAL and won.winner() == me
    assert won.returns()[me] == 1 and won.returns()[1 - me] == -1
    assert won.legal_actions() == [] and won.phase == "move" and won.target is None
    assert won.mobility(1 - me) == 0 and won.traps.sum() == 2
    with pytest.raises(IllegalActionError):
        won.child(throw_at("a1"))
    # any other step leaves f6 open and the mover throws
    other = s.child(S)
    assert not other.is_terminal() and other.phase == "throw" and other.current_player() == me


@pytest.mark.parametrize("me", [0, 1])
def test_a_landing_that_encloses_the_opponent_wins(me):
    #     a b c d e f g
    #  4  . . . 1 . . .     the mover on d4 throws at f7, the opponent's last exit:
    #  5  . . . . . . .     a = 3 + 2 = 5, p = 0.80; e6 e7 f6# g6# share 0.20 (not g7, a player)
    #  6  . . . . . # #
    #  7  . . . . . v 2
    text = """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . 1 . . .
        . . . . . . .
        . . . . . # #
        . . . . . . 2
    """
    s = board(TrapGame(), text, me, phase="throw").child(throw_at("f7"))
    assert_distribution(s, {sq("f7"): 0.80, sq("e6"): 0.05, sq("e7"): 0.05, sq("f6"): 0.05, sq("g6"): 0.05})
    hit = s.child(sq("f7"))
    assert hit.winner() == me and hit.is_terminal() and hit.returns()[me] == 1 and hit.legal_actions() == []
    for miss in ("e7", "f6"):  # a miss (onto an empty cell or a trap) hands the turn over
        after = s.child(sq(miss))
        assert not after.is_terminal() and after.current_player() == 1 - me and after.phase == "move"
        assert after.mobility(1 - me) == 1 and after.legal_actions() == [W]


@pytest.mark.parametrize("me", [0, 1])
def test_enclosing_yourself_loses_only_after_the_opponents_move(me):
    #     a b c d e f g
    #  1  1 # . . . . .     the mover on a1 throws at b2 (a = 2) and its trap lands there:
    #  2  # v . . . . .     a1 is now enclosed, but the mover does not lose at once
    #  7  . . . 2 . . .
    text = """
        1 # . . . . .
        # . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . 2 . . .
    """
    s = board(TrapGame(), text, me, phase="throw").child(throw_at("b2")).child(sq("b2"))
    assert not s.is_terminal() and s.winner() is None and s.returns().tolist() == [0, 0]
    assert s.mobility(me) == 0 and s.current_player() == 1 - me and s.phase == "move"
    # the opponent steps N (d7 -> d6): the mover is still enclosed, so the opponent wins at once
    won = s.child(N)
    assert won.is_terminal() and won.winner() == 1 - me and won.phase == "move"
    assert won.returns()[1 - me] == 1


@pytest.mark.parametrize("me", [0, 1])
def test_the_opponents_step_can_free_a_self_enclosed_player(me):
    #     a b c d e f g
    #  1  1 2 . . . . .     the mover on a1 throws at b2 and it lands: a1 is walled in by
    #  2  # v . . . . .     b1 (the opponent, a wall), a2# and b2#
    s = (
        board(
            TrapGame(),
            """
        1 2 . . . . .
        # . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """,
            me,
            phase="throw",
        )
        .child(throw_at("b2"))
        .child(sq("b2"))
    )
    assert s.mobility(me) == 0 and s.mobility(1 - me) == 2 and not s.is_terminal()
    # every step of the opponent leaves b1, which frees a1: the game goes on, the opponent throws
    assert s.legal_actions() == [E, SE]
    freed = s.child(E)
    assert not freed.is_terminal() and freed.phase == "throw" and freed.mobility(me) == 1
    # ... and the opponent's trap onto b1 (from c1, a = 1, p = 1) closes a1 again: it wins
    back = freed.child(throw_at("b1"))
    assert back.chance_outcomes() == [(sq("b1"), 1.0)]
    assert back.child(sq("b1")).winner() == 1 - me
    # a trap elsewhere lets the enclosed player's turn come: it has exactly the step to b1
    on = freed.child(throw_at("g7")).child(sq("g7"))
    assert on.current_player() == me and on.legal_actions() == [E]


@pytest.mark.parametrize("me", [0, 1])
def test_both_enclosed_after_a_landing_the_thrower_wins(me):
    #     a b c d e f g
    #  1  1 2 # . . . .     b2 is the last exit of both players (each is a wall for the other);
    #  2  # v # . . . .     the mover's trap lands on b2: both enclosed, the thrower wins
    s = board(
        TrapGame(),
        """
        1 2 # . . . .
        # . # . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """,
        me,
        phase="throw",
    )
    assert s.mobility(me) == 1 and s.mobility(1 - me) == 1
    landing = s.child(throw_at("b2"))
    # a = 2, p = 0.95; a2# c1# c2# a3 b3 c3 share 0.05 (a1 and b1 hold players)
    assert_distribution(landing, {sq("b2"): 0.95, **{sq(c): 0.05 / 6 for c in ("c1", "a2", "c2", "a3", "b3", "c3")}})
    done = landing.child(sq("b2"))
    assert done.mobility(0) == done.mobility(1) == 0
    assert done.is_terminal() and done.winner() == me and done.returns()[me] == 1


# -- turn cap -----------------------------------------------------------------------------------


def test_turn_cap_ends_in_a_draw_after_k_completed_turns():
    game = TrapGame(turn_cap=2)
    # turn 1: player 0 d1 -> d2, throws at a7, lands there; turn 2: player 1 d7 -> d6, throws at g1
    s = game.new_initial_state()
    s = s.child(S).child(throw_at("a7")).child(sq("a7"))
    assert s.turns == 1 and not s.is_terminal() and s.current_player() == 1
    s = s.child(N).child(throw_at("g1"))
    assert not s.is_terminal()
    s = s.child(sq("g1"))
    assert s.turns == 2 and s.is_terminal() and s.current_player() == TERMINAL
    assert s.winner() is None and s.returns().tolist() == [0.0, 0.0] and s.legal_actions() == []
    assert "draw (turn cap 2)" in s.to_text()
    assert game.spec.max_game_length == 6


def test_a_win_on_the_last_turn_beats_the_draw():
    #  same corner as the landing win: hit -> player 0 wins, miss -> the cap of 1 turn draws
    s = (
        TrapGame(turn_cap=1)
        .from_board(
            """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . 1 . . .
        . . . . . . .
        . . . . . # #
        . . . . . . 2
    """,
            phase="throw",
        )
        .child(throw_at("f7"))
    )
    assert s.child(sq("f7")).winner() == 0
    miss = s.child(sq("e7"))
    assert miss.is_terminal() and miss.winner() is None and miss.returns().tolist() == [0, 0]


@pytest.mark.parametrize("cap", [1, 3, 7])
def test_random_games_stop_at_the_cap(cap):
    game = TrapGame(turn_cap=cap)
    for seed in range(40):
        actions, s = random_game(game, seed)
        assert len(actions) <= 3 * cap
        if s.winner() is None:
            assert s.turns == cap and len(actions) == 3 * cap and s.returns().tolist() == [0, 0]
        else:
            assert s.turns < cap


# -- invalid actions ----------------------------------------------------------------------------


def test_illegal_steps_are_named():
    s = TrapGame().new_initial_state()  # player 0 on d1, the top edge
    with pytest.raises(IllegalActionError, match=r"illegal action 0\b.*\[2, 3, 4, 5, 6\]"):
        s.child(N)  # off the board
    with pytest.raises(IllegalActionError, match="'n'"):
        s.string_to_action("n")
    #  1  . . . 1 . . .      S runs onto the trap on d2, SE onto the opponent on e2
    #  2  . . . # 2 . .
    s = TrapGame().from_board("""
        . . . 1 . . .
        . . . # 2 . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    assert s.legal_actions() == [E, SW, W]
    for bad in (S, SE, N, NE, NW):
        with pytest.raises(IllegalActionError, match=rf"illegal action {bad}\b"):
            s.child(bad)
    assert issubclass(IllegalActionError, ValueError)


def test_throws_at_players_and_wrong_phase_actions_are_illegal():
    s = TrapGame().new_initial_state()
    with pytest.raises(IllegalActionError, match=f"illegal action {throw_at('a1')}"):
        s.child(throw_at("a1"))  # a throw in the move phase
    t = s.child(S)  # player 0 now on d2, player 1 on d7
    for cell in ("d2", "d7"):
        with pytest.raises(IllegalActionError, match=f"illegal action {throw_at(cell)}"):
            t.child(throw_at(cell))
    with pytest.raises(IllegalActionError, match=r"illegal action 4\b"):
        t.child(S)  # a step in the throw phase
    with pytest.raises(IllegalActionError):
        t.string_to_action("d7")
    assert t.child(throw_at("d1")).target == sq("d1")  # the cell just left is a fine target
    landing = t.child(throw_at("a7"))
    with pytest.raises(IllegalActionError, match=f"illegal action {sq('d4')}"):
        landing.child(sq("d4"))  # not a landing cell of a throw at a7
    with pytest.raises(IllegalActionError):
        landing.child(throw_at("a7"))
    for bad in (-1, 8 + 49, 2.5, "S", None):
        with pytest.raises(IllegalActionError):
            s.child(bad)


def test_bad_options_and_boards():
    for kwargs in ({"n": 2}, {"n": 9}, {"turn_cap": 0}, {"first_player": 2}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            TrapGame(**kwargs)
    with pytest.raises(ValueError):
        TrapGame(n=3).from_board("1 . .\n. . .\n. . .")  # no player 2
    with pytest.raises(ValueError):
        TrapGame(n=3).from_board("1 . .\n. . 2")  # two rows


# -- setup, determinism, keys, push/pop -----------------------------------------------------------


def test_setup_of_the_spec():
    s = TrapGame().new_initial_state()
    assert s.position(0) == (0, 3) and s.position(1) == (6, 3) and not s.traps.any()
    assert s.current_player() == 0 and s.phase == "move" and s.turns == 0
    assert s.legal_actions() == [E, SE, S, SW, W]
    assert TrapGame(first_player=1).new_initial_state().current_player() == 1
    assert TrapGame(n=4).new_initial_state().position(1) == (3, 2)
    spec = TrapGame().spec
    assert spec.num_actions == 8 + 49 and spec.max_game_length == 600 and spec.chance


def test_seeded_games_repeat_exactly():
    for game in (TrapGame(), TrapGame(n=4, first_player=1)):
        a1, s1 = random_game(game, 5)
        a2, s2 = random_game(game, 5)
        assert a1 == a2 and np.array_equal(s1.array, s2.array) and s1.key() == s2.key() and s1 == s2
        assert random_game(game, 6)[0] != a1


def test_transposed_throws_reach_the_same_key():
    # player 0 traps a7 then g6 while player 1 traps b4, or g6 then a7: same position, same key
    def line(first, second):
        s = TrapGame().new_initial_state()
        for a in (S, throw_at(first), sq(first), N, throw_at("b4"), sq("b4"), N, throw_at(second), sq(second)):
            s = s.child(a)
        return s

    x, y = line("a7", "g6"), line("g6", "a7")
    assert x.key() == y.key() and x.to_text() == y.to_text()
    assert x.key() == TrapGame().from_board(drawing(x), to_move=1).key()
    assert x.key() != line("a7", "g5").key()


def test_keys_tell_apart_what_a_search_must():
    # the same board with either player to move or to throw: four positions, four keys
    game = TrapGame()
    text = drawing(game.new_initial_state())
    keys = {game.from_board(text, to_move=p, phase=ph).key() for p in (0, 1) for ph in ("move", "throw")}
    assert len(keys) == 4
    # a trap in the air at each target: every chance node has its own key, unlike its parent's
    t = game.new_initial_state().child(S)
    assert len({t.child(a).key() for a in t.legal_actions()} | {t.key()}) == len(t.legal_actions()) + 1
    # a trap that lands where one lay already gives the position before the throw, other mover
    s = game.from_board(text.replace(". . . . . . .", "# . . . . . .", 1), to_move=0, phase="throw")
    assert s.traps[1, 0] and s.traps.sum() == 1  # a2
    again = s.child(throw_at("a2")).child(sq("a2"))
    assert again.key() == game.from_board(drawing(s), to_move=1).key()


def test_observation_planes():
    s = TrapGame().new_initial_state().child(S).child(throw_at("a7")).child(sq("a7"))
    obs = s.observation(1)  # player 1 to move: own cell d7, opponent on d2, a trap on a7
    assert obs.shape == (5, 7, 7) and obs.dtype == np.float32
    assert obs[0, 6, 3] == 1 and obs[0].sum() == 1 and obs[1, 1, 3] == 1 and obs[1].sum() == 1
    assert obs[2, 6, 0] == 1 and obs[2].sum() == 1
    assert not obs[3].any() and obs[4].all() and not s.observation(0)[4].any()
    assert s.child(N).observation(1)[3].all()  # the throw phase


GAMES = [TrapGame(), TrapGame(n=3), TrapGame(n=4, turn_cap=5), TrapGame(n=5, first_player=1), TrapGame(n=8)]


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(range(len(GAMES))), st.booleans(), st.lists(st.integers(0, 2**16), max_size=150))
def test_push_pop_restores_the_array_and_keys_follow_the_position(which, course, choices):
    game = GAMES[which]
    k = KERNELS
    arr = game.new_initial_state().array
    arr[MODE] = COURSE if course else GAME  # the search's reduced game undoes the same way
    state = TrapState(game, arr.copy())
    history = []
    for i in choices:
        if state.is_terminal():
            break
        legal = [c for c, _ in state.chance_outcomes()] if state.current_player() == CHANCE else state.legal_actions()
        a = legal[i % len(legal)]
        history.append(arr.copy())
        k.push(arr, a)
        state = state.child(a)
        assert np.array_equal(arr, state.array) and int(k.key(arr)) == state.key()
        if not state.is_terminal() and state.phase != "landing":
            # the same position drawn from scratch (no history) has the same key
            again = game.from_board(drawing(state), to_move=state.mover, phase=state.phase)
            assert again.key() == state.key() and again.legal_actions() == state.legal_actions()
    for before in reversed(history):
        k.pop(arr)
        np.testing.assert_array_equal(arr, before)
    assert arr[PLY] == 0


# -- candidate throws of the search -------------------------------------------------------------


def candidates(state: TrapState, cap: int) -> list[int]:
    arr = state.array
    arr[CAND] = cap
    out = np.empty(state.game.spec.num_actions, dtype=np.int64)
    return out[: SEARCH_KERNELS.moves(arr, out)].tolist()


def test_candidates_by_hand():
    #     a b c d e f g
    #  1  1 . . . . . .     player 0 to throw; the opponent on g7
    #  5  . . . . 3 3 3     ring 1 of g7: g6 f7 (f6 is trapped)      -> marked 2
    #  6  . . . . 3 # 2     ring 2: e5 f5 g5 e6 e7 (row-major)        -> marked 3
    #  7  . . . . 3 2 P     then the region breadth-first: g4 f4 ...
    s = TrapGame().from_board(
        """
        1 . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . # .
        . . . . . . 2
    """,
        phase="throw",
    )
    names = ["g6", "f7", "e5", "f5", "g5", "e6", "e7", "g4", "f4"]
    assert candidates(s, 9) == [throw_at(c) for c in names]
    assert candidates(s, 3) == [throw_at(c) for c in names[:3]]
    assert candidates(s, 1) == [throw_at("g6")]
    everything = candidates(s, 0)  # no cap: every empty cell (all reachable here)
    assert len(everything) == 49 - 3 and everything[:9] == [throw_at(c) for c in names]
    # outside the throw phase the search tries exactly the legal actions
    assert candidates(TrapGame().new_initial_state(), 2) == [E, SE, S, SW, W]


@settings(max_examples=150, deadline=None)
@given(st.integers(3, 8), st.data())
def test_candidates_are_capped_empty_cells_starting_at_the_opponents_exits(n, data):
    cells = data.draw(st.lists(st.integers(0, n * n - 1), min_size=2, max_size=2, unique=True))
    traps = data.draw(st.sets(st.integers(0, n * n - 1)))
    me, opp = cells
    rows = [["#" if c in traps else "." for c in range(r * n, r * n + n)] for r in range(n)]
    rows[me // n][me % n], rows[opp // n][opp % n] = "1", "2"
    s = TrapGame(n=n).from_board("\n".join(" ".join(r) for r in rows), phase="throw")
    empty = {c for c in range(n * n) if c not in traps and c not in cells}
    exits = [c for c in ring(n, opp) if c in empty]
    legal = set(s.legal_actions())
    # the opponent's region: empty cells reachable from it by king steps through empty cells
    region, frontier = set(), [opp]
    while frontier:
        nxt = [c for f in frontier for c in ring(n, f) if c in empty and c not in region]
        region.update(nxt)
        frontier = nxt
    second = {c for c in empty if max(abs(c // n - opp // n), abs(c % n - opp % n)) == 2}
    for cap in (0, 1, 2, 5, 12, 100):
        got = candidates(s, cap)
        targets = [a - NUM_DIRS for a in got]
        assert len(set(got)) == len(got) and set(got) <= legal and len(got) <= len(legal)
        assert set(targets) <= empty
        assert cap == 0 or len(got) <= cap
        if cap and cap < len(exits):
            assert set(targets) < set(exits) and len(targets) == cap
        else:
            assert set(targets[: len(exits)]) == set(exits)  # the exits come first, all of them
        if cap == 0 or cap >= len(empty):
            assert set(targets) == set(exits) | second | region


# -- random-play soak against the reference model ---------------------------------------------------


def soak(game: TrapGame, games: int, seed: int) -> Counter:
    """Random games (uniform legal decisions, landings by their probabilities) on the compact
    state, each step checked against a model written from rules/trap.md. Returns outcome counts."""
    rng = np.random.default_rng(seed)
    n, cap = game.n, game.turn_cap
    k = KERNELS
    out = np.empty(game.spec.num_actions, dtype=np.int64)
    counts: Counter = Counter()
    for _ in range(games):
        s = game.new_initial_state().array
        traps: set[int] = set()
        pos = [int(s[POS0]), int(s[POS0 + 1])]
        mover, phase, turns, target, length = game.first_player, "move", 0, -1, 0
        while True:
            outcome = int(k.outcome(s))
            # the compact state agrees with the model
            assert [int(s[POS0]), int(s[POS0 + 1])] == pos and int(s[TURNS]) == turns
            assert set(np.flatnonzero(s[HDR : HDR + n * n]).tolist()) == traps
            assert pos[0] != pos[1] and pos[0] not in traps and pos[1] not in traps
            if outcome != ONGOING:
                break
            assert int(s[TO_MOVE]) == mover and int(s[PHASE]) == ("move", "throw", "landing").index(phase)
            players = (pos[0], pos[1])
            if phase == "landing":
                assert int(k.to_move(s)) == CHANCE
                got = TrapState(game, s).chance_outcomes()
                want = ref_landing(n, pos[mover], target, players)
                assert [c for c, _ in got] == list(want) and got[0][0] == target
                assert all(abs(p - want[c]) < 1e-12 for c, p in got) and abs(sum(p for _, p in got) - 1) < 1e-12
                cells, probs = zip(*got)
                a = cells[rng.choice(len(cells), p=probs)]
            else:
                legal = out[: k.moves(s, out)].tolist()
                if phase == "move":
                    assert legal == ref_steps(n, traps, players, pos[mover]) and legal  # never stuck
                else:
                    assert legal == [NUM_DIRS + c for c in range(n * n) if c not in players]
                a = legal[rng.integers(len(legal))]
            k.push(s, a)
            length += 1
            assert length <= 3 * cap
            # the spec's next position
            opp = 1 - mover
            if phase == "move":
                pos[mover] += OFFSETS[a][0] * n + OFFSETS[a][1]
                if not ref_steps(n, traps, (pos[0], pos[1]), pos[opp]):
                    want_outcome = mover
                else:
                    phase, want_outcome = "throw", ONGOING
            elif phase == "throw":
                phase, target, want_outcome = "landing", a - NUM_DIRS, ONGOING
            else:
                traps.add(a)
                if not ref_steps(n, traps, (pos[0], pos[1]), pos[opp]):
                    want_outcome = mover
                else:
                    turns += 1
                    mover, phase, target = opp, "move", -1
                    want_outcome = DRAW if turns == cap else ONGOING
            assert int(k.outcome(s)) == want_outcome
        counts[outcome] += 1
        if outcome == DRAW:
            assert turns == cap and length == 3 * cap
    return counts


def test_random_play_soak_on_7x7_and_4x4():
    big = soak(TrapGame(), 700, seed=1)
    small = soak(TrapGame(n=4, turn_cap=30), 1300, seed=2)
    first = soak(TrapGame(n=5, first_player=1), 300, seed=3)
    print(f"\nturn cap reached: 7x7 cap 200 {big[DRAW]}/700, 4x4 cap 30 {small[DRAW]}/1300, 5x5 {first[DRAW]}/300")
    for counts in (big, small, first):
        assert counts[0] > 0 and counts[1] > 0  # both seats win sometimes
    assert small[DRAW] > 0  # the cap really triggers (and is checked) in random play
    assert big[DRAW] < 700 * 0.05  # random 7x7 games almost always end before 200 turns


# -- the generic contract -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game, games", [(TrapGame(n=7), 3), (TrapGame(n=4, turn_cap=10), 20), (TrapGame(n=7, first_player=1), 3)]
)
def test_conformance(game, games):
    report = check_game(game, games=games, seed=0)
    assert report.games == games and report.states > games
    assert report.max_length <= game.spec.max_game_length
