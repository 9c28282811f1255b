"""The reference opponents of rules/trap.md (Random, Easy, Medium, Hard), as agents.

An agent is called at each of its two decisions per turn: once in the move phase (it returns
a king step 0..7) and once in the throw phase (it returns ``8 + target cell``). Every choice
is legal in the state's current phase, and randomness comes only from the ``rng`` passed in.

Readings of the spec where it leaves a choice:

* Throws of Random go at a uniformly random EMPTY cell (no trap, no player); Easy's and
  Medium's go at the opponent's empty neighbours. If a position offers no such cell (only in
  positions set up by hand), they fall back to any empty cell, then to any legal target.
* Medium breaks ties at random with ``rng`` by default (the setting behind the README's
  results); ``MediumOpponent(ties="first")`` takes the first best in core's direction order.
  Hard takes the first best action in generation order. The tie rule decides much of the first
  player's edge: over 4000 Medium vs Medium games the first player won 49.7% with random ties,
  59.0% with first-in-direction-order ties and 77.5% with row-major ties (the spec reports 64.5%).
* Hard follows the course's simplified trees (see ``HardOpponent``), with depth counted in
  decisions (chance nodes do not count) and a chance node worth p x V(trap on the target).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from tablegym.envs.core import CHANCE, TERMINAL, TO_MOVE
from tablegym.envs.trap.core import (HDR, N_, NUM_DIRS, PHASE, POS0, THROW, TrapState, free_neighbours,
                                     hit_probability, is_free, mobility, step)

WIN = 1000.0
"""Hard's value of a won position (the course's +-1000)."""
OSL_WEIGHT = 0.5
"""Hard's move leaf: m(me) + OSL_WEIGHT x OSL."""
_TIE = 1e-9
"""A root value must beat the best so far by more than this (float noise of the p scaling)."""

STEP_ME, THROW_OPP, THROW_ME, STEP_OPP = 0, 1, 2, 3
"""Hard's node kinds: its own steps, the opponent's throws at its exits, its own throws at the
opponent's exits, the opponent's steps. ``kind ^ 1`` is the kind of the children."""


def _decision(state: TrapState, who: str) -> tuple[int, str]:
    player = state.current_player()
    if player in (CHANCE, TERMINAL):
        raise ValueError(f"{who} is asked for an action at a {'chance' if player == CHANCE else 'terminal'} node")
    return player, state.phase


def _empty_neighbours(state: TrapState, cell: int) -> list[int]:
    """The empty cells around ``cell``, in core's direction order."""
    s = state._s
    out = []
    for d in range(NUM_DIRS):
        t = int(step(s[N_], cell, d))
        if t >= 0 and is_free(s, t):
            out.append(t)
    return out


def _opponent_cell(state: TrapState, player: int) -> int:
    return int(state._s[POS0 + 1 - player])


def _empty_cells(state: TrapState) -> list[int]:
    s = state._s
    return [c for c in range(state.n * state.n) if is_free(s, c)]


def _throw_anywhere(state: TrapState, rng: np.random.Generator) -> int:
    """A uniformly random empty cell as a throw, or any legal target when the board is full."""
    cells = _empty_cells(state)
    if cells:
        return NUM_DIRS + int(cells[rng.integers(len(cells))])
    legal = state.legal_actions()
    return int(legal[rng.integers(len(legal))])


def _random_step(state: TrapState, rng: np.random.Generator) -> int:
    legal = state.legal_actions()
    return int(legal[rng.integers(len(legal))])


class RandomOpponent:
    """A random legal step; a throw at a uniformly random empty cell."""

    name = "random"

    def __call__(self, state: TrapState, rng: np.random.Generator) -> int:
        _, phase = _decision(state, self.name)
        if phase == "move":
            return _random_step(state, rng)
        return _throw_anywhere(state, rng)


class EasyOpponent:
    """A random legal step; a throw at a random empty neighbour of the opponent (any empty cell
    if it has none)."""

    name = "easy"

    def __call__(self, state: TrapState, rng: np.random.Generator) -> int:
        player, phase = _decision(state, self.name)
        if phase == "move":
            return _random_step(state, rng)
        cells = _empty_neighbours(state, _opponent_cell(state, player))
        if not cells:
            return _throw_anywhere(state, rng)
        return NUM_DIRS + cells[rng.integers(len(cells))]


class MediumOpponent:
    """Greedy without lookahead: step to the cell with the most empty neighbours (counted after
    the step, so the cell just left counts as empty); throw at the opponent's empty neighbour
    that leaves the smallest IS = m(opp) - m(me) from the opponent's view once trapped (a sure
    hit assumed). ``ties="first"`` takes the first best in direction order; ``ties="random"``
    draws among the best with ``rng``."""

    name = "medium"

    def __init__(self, *, ties: str = "random") -> None:
        if ties not in ("first", "random"):
            raise ValueError(f"MediumOpponent ties must be 'first' or 'random', got {ties!r}")
        self.ties = ties
        if ties != "first":
            self.name = f"medium:ties={ties}"

    def __call__(self, state: TrapState, rng: np.random.Generator) -> int:
        player, phase = _decision(state, self.name)
        s = state._s.copy()
        if phase == "move":
            here = s[POS0 + player]
            options, scores = [], []
            for a in state.legal_actions():
                s[POS0 + player] = step(s[N_], here, a)
                options.append(a)
                scores.append(mobility(s, player))
            s[POS0 + player] = here
            return self._pick(options, scores, rng, max(scores))
        cells = _empty_neighbours(state, _opponent_cell(state, player))
        if not cells:
            return _throw_anywhere(state, rng)
        scores = []
        for c in cells:
            s[HDR + c] = 1
            scores.append(mobility(s, 1 - player) - mobility(s, player))
            s[HDR + c] = 0
        return NUM_DIRS + self._pick(cells, scores, rng, min(scores))

    def _pick(self, options: list[int], scores: list[int], rng: np.random.Generator, top: int) -> int:
        best = [o for o, v in zip(options, scores) if v == top]
        return int(best[0] if self.ties == "first" else best[rng.integers(len(best))])


# -- Hard: the course's depth-limited expectiminimax, compiled --------------------------------------

@njit(cache=True)
def osl(s, player):
    """OSL: the sum over all in-board neighbour cells of ``player`` (empty or not) of their
    empty-neighbour counts (``player``'s own cell counts as occupied)."""
    n = s[N_]
    here = s[POS0 + player]
    total = 0
    for d in range(NUM_DIRS):
        c = step(n, here, d)
        if c >= 0:
            total += free_neighbours(s, c)
    return total


@njit(cache=True)
def move_leaf(s, me):
    """Hard's move-search leaf: m(me) + 0.5 OSL(me)."""
    return mobility(s, me) + OSL_WEIGHT * osl(s, me)


@njit(cache=True)
def throw_leaf(s, me):
    """Hard's throw-search leaf: 2 m(me) - m(opp)."""
    return 2.0 * mobility(s, me) - mobility(s, 1 - me)


@njit(cache=True)
def _manhattan(n, a, b):
    return abs(a // n - b // n) + abs(a % n - b % n)


@njit(cache=True)
def _leaf(s, me, kind):
    if kind == STEP_ME or kind == THROW_OPP:
        return move_leaf(s, me)
    return throw_leaf(s, me)


# Explicit signatures, and no literal arguments in the recursive call: numba's on-disk cache
# cannot reload a type-inferred recursive function, nor a second version typed on a literal.
@njit(types.float64(types.int64[::1], types.int64, types.int64, types.int64, types.float64, types.float64,
                    types.boolean, types.int64, types.int64[::1]), cache=True)
def hard_value(s, me, kind, depth, alpha, beta, prune, ply, choice):
    """Negamax value of a node of Hard's trees for the player deciding there (``me`` at STEP_ME
    and THROW_ME, the opponent at THROW_OPP and STEP_OPP); ``s`` is changed and restored.

    The move search alternates STEP_ME and THROW_OPP (the opponent throws at my empty
    neighbours from where it stands); the throw search alternates THROW_ME (at the opponent's
    empty neighbours) and STEP_OPP. A throw's chance node weighs only the intended cell,
    value = p x V(trap on the target), so the window passed below is scaled by 1 / p.
    ``depth`` counts the decisions left, this one included; a leaf is scored for ``me`` by the
    search's own formula (``move_leaf`` or ``throw_leaf``), a win or loss is +-WIN. At the
    root (``ply`` 0) the first best action in generation order is written to ``choice[0]``.
    """
    n = s[N_]
    throw = kind == THROW_OPP or kind == THROW_ME
    mover = me if kind == STEP_ME or kind == THROW_ME else 1 - me
    other = 1 - mover
    sign = 1.0 if mover == me else -1.0
    root = ply == 0
    tie = _TIE if root else 0.0
    origin = s[POS0 + mover]
    centre = s[POS0 + other] if throw else origin  # throws go around the other player
    best = -np.inf
    for d in range(NUM_DIRS):
        c = step(n, centre, d)
        if c < 0 or not is_free(s, c):
            continue
        p = 1.0
        if throw:
            p = hit_probability(_manhattan(n, origin, c))
            s[HDR + c] = 1
        else:
            s[POS0 + mover] = c
        if mobility(s, other) == 0:  # the step or the trap encloses the other player
            v = WIN
        elif depth <= 1:
            v = sign * _leaf(s, me, kind)
        else:
            v = -hard_value(s, me, kind ^ 1, depth - 1, -beta / p, -alpha / p, prune, ply + 1, choice)
        if throw:
            s[HDR + c] = 0
        else:
            s[POS0 + mover] = origin
        v *= p
        if v > best + tie:
            best = v
            if root:
                choice[0] = NUM_DIRS + c if throw else d
        if best > alpha:
            alpha = best
        if prune and alpha >= beta:
            break
    if best == -np.inf:
        # A stepper with no step is enclosed: it lost. A victim with no empty neighbour
        # already is: the thrower won.
        return WIN if throw else -WIN
    return best


@njit(types.int64(types.int64[::1], types.int64, types.boolean), cache=True)
def hard_decision(s, depth, prune):
    """Hard's choice for the player to decide in ``s`` (a step in the move phase, ``8 + cell``
    in the throw phase), the first best in generation order; -1 if its tree offers none.

    ``s`` is a scratch copy: it is changed and restored.
    """
    choice = np.full(1, -1, dtype=np.int64)
    kind = THROW_ME if s[PHASE] == THROW else STEP_ME
    hard_value(s, s[TO_MOVE], kind, depth, -np.inf, np.inf, prune, 0, choice)
    return choice[0]


class HardOpponent:
    """The course's Hard bot: a depth-3 expectiminimax with alpha-beta in each phase.

    Move phase: max over its own steps, min over the opponent's throws at the cells around it
    (the opponent throws from where it stands and does not move in this tree); leaf =
    m(me) + 0.5 x OSL, OSL = the sum over all 8 in-board neighbour cells of their empty-neighbour
    counts. Throw phase: max over its throws at the opponent's empty neighbours, min over the
    opponent's steps; leaf = 2 m(me) - m(opp). A chance node weighs only the intended cell:
    value = p x V(trap on the target), p = 1 - 0.05 (a - 1) over the Manhattan distance a from
    the thrower (the miss branch is dropped, not counted as "no trap"). Win/loss +-1000: a step
    or a landed trap that leaves the other player no empty neighbour, or a stepper with no step.
    ``depth`` counts decisions (chance nodes do not count): depth 3 = step, throw, step in the
    move search and throw, step, throw in the throw search. Deterministic: no ``rng`` is used.
    """

    name = "hard"

    def __init__(self, depth: int = 3, *, prune: bool = True) -> None:
        if depth < 1:
            raise ValueError(f"HardOpponent depth must be at least 1, got {depth!r}")
        self.depth = int(depth)
        self.prune = bool(prune)
        if depth != 3:
            self.name = f"hard:depth={depth}"

    def __call__(self, state: TrapState, rng: np.random.Generator) -> int:
        _decision(state, self.name)
        action = int(hard_decision(state._s.copy(), self.depth, self.prune))
        if action < 0:
            # Only in hand-set positions: no step (already enclosed) or no exit to throw at.
            action = int(state.legal_actions()[0]) if state.phase == "move" else _first_empty_throw(state)
        return action


def _first_empty_throw(state: TrapState) -> int:
    cells = _empty_cells(state)
    return NUM_DIRS + cells[0] if cells else int(state.legal_actions()[0])


OPPONENTS = {cls.name: cls for cls in (RandomOpponent, EasyOpponent, MediumOpponent, HardOpponent)}
"""Reference opponent classes by name ("random", "easy", "medium", "hard")."""
