"""Trap's learned evaluator: a small ValueMLP over the hand-made terms and the players' cells.

Why these inputs: a Trap position is won or lost on space (exits, reachable regions, cut
cells), which the hand-made terms of envs/trap/heuristics.py already measure exactly and
cheaply. The network gets each term for BOTH players separately (not only their difference,
as the composite does), the phase, and the two players' cells, and learns by self-play how
they combine: which matters more before and after the throw, when a small region is already
lost, how the edges hurt. The trap cells themselves are left out: ~20 extra rows per leaf
would make the network several times slower than the composite in the search, and the region
terms already say what the traps do to each player.

All inputs are seen by the player to MOVE (the one deciding; the thrower while a trap is in
the air). Layout (``num_inputs(n)`` entries, n = board side):

    0  throw phase (1 while the mover has stepped and must throw)
    1  exits m(me) / 8                 2  m(opp) / 8
    3  OCLS(me) / 32                   4  OCLS(opp) / 32
    5  Voronoi cells mine / 16         6  Voronoi cells theirs / 16
    7  vulnerability(me) / 16          8  vulnerability(opp) / 16
    9  region size(me) / 16            10 region size(opp) / 16
    11 the players still share a region (1/0)
    12 king-step distance / (n - 1)    13 centre distance(me) / (n - 1)  14 (opp)
    15 traps on the board / 16         16 the mover has no exit (1/0)
    17 + c       the mover stands on cell c
    17 + n*n + c the opponent stands on cell c

The search sees values ``SCALE * tanh(net)``: with the win worth ``bound + MAX_PLY - ply`` in
search/expectiminimax_search.py, a bound of ``SCALE`` keeps the win close above every network value, so
Star1's chance-node windows stay as tight as with the hand-made evaluators.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs.core import DRAW, KEY, ONGOING, OUTCOME, TO_MOVE
from tablegym.envs.evaluator import KernelEvaluator
from tablegym.envs.trap.core import N_, PHASE, POS0, THROW, flat_observation, k_moves, k_outcome, k_to_move
from tablegym.envs.trap.heuristics import (
    _bit,
    _grow,
    centre_distance,
    exits,
    free_board,
    one_cell_lookahead,
    player_distance,
    popcount,
    region,
    voronoi,
    vulnerability,
)
from tablegym.models.learned import mlp_forward_mixed
from tablegym.models.netkernel import cached_value, remember_value
from tablegym.models.netkernel import network_value as net_value

NUM_SCALARS = 17
SCALE = 1000.0
"""Search units per unit of network value (see the module docstring)."""


def num_inputs(n: int) -> int:
    """Length of the input vector on an n x n board."""
    return NUM_SCALARS + 2 * n * n


@njit(cache=True)
def trap_scalars(s, x):
    """Fill ``x[:NUM_SCALARS]`` with the hand-made terms seen by the player to move."""
    n = s[N_]
    me = s[TO_MOVE]
    op = 1 - me
    free = free_board(s)
    me_cell = s[POS0 + me]
    op_cell = s[POS0 + op]
    x[0] = 1.0 if s[PHASE] == THROW else 0.0
    m_me = exits(free, me_cell, n)
    x[1] = m_me / 8.0
    x[2] = exits(free, op_cell, n) / 8.0
    x[3] = one_cell_lookahead(s, me, free) / 32.0
    x[4] = one_cell_lookahead(s, op, free) / 32.0
    mine, theirs = voronoi(s, me, free)
    x[5] = mine / 16.0
    x[6] = theirs / 16.0
    x[7] = vulnerability(s, me, free) / 16.0
    x[8] = vulnerability(s, op, free) / 16.0
    mine_region = region(_bit(me_cell), free, n)
    x[9] = (popcount(mine_region) - 1) / 16.0
    x[10] = (popcount(region(_bit(op_cell), free, n)) - 1) / 16.0
    x[11] = 1.0 if _grow(mine_region, n) & _bit(op_cell) else 0.0
    x[12] = player_distance(s) / (n - 1.0)
    x[13] = centre_distance(s, me) / (n - 1.0)
    x[14] = centre_distance(s, op) / (n - 1.0)
    x[15] = (n * n - 2 - popcount(free)) / 16.0
    x[16] = 1.0 if m_me == 0 else 0.0


@njit(cache=True)
def trap_cells(s, active):
    """The two active cell inputs (mover's cell, opponent's cell) as feature indices."""
    nn = s[N_] * s[N_]
    me = s[TO_MOVE]
    active[0] = NUM_SCALARS + s[POS0 + me]
    active[1] = NUM_SCALARS + nn + s[POS0 + 1 - me]


@njit(cache=True)
def trap_inputs(s, x):
    """Fill ``x`` (length ``num_inputs(n)``) with the inputs seen by the player to move."""
    x[:] = 0.0
    trap_scalars(s, x)
    cells = np.empty(2, dtype=np.int64)
    trap_cells(s, cells)
    x[cells[0]] = 1.0
    x[cells[1]] = 1.0


@njit(cache=True)
def trap_value(s, player, params):
    """``SCALE`` times the network's value for ``player`` (+-``SCALE`` or 0 at a finished game)."""
    out = s[OUTCOME]
    if out != ONGOING:
        if out == DRAW:
            return 0.0
        return SCALE if out == player else -SCALE
    v = cached_value(params, s[KEY])
    if v != v:
        scalars = np.empty(NUM_SCALARS, dtype=np.float64)
        trap_scalars(s, scalars)
        cells = np.empty(2, dtype=np.int64)
        trap_cells(s, cells)
        v = remember_value(params, s[KEY], mlp_forward_mixed(scalars, cells, 2, params))
    v *= SCALE
    return v if s[TO_MOVE] == player else -v


def evaluator_of(params: np.ndarray, name: str = "learned") -> KernelEvaluator:
    """The network export ``params`` as a search evaluator (what worker processes receive)."""
    ev = KernelEvaluator(name, trap_value, params, game="trap")
    ev.win_value = ev.bound = SCALE
    return ev


def input_symmetries(n: int) -> list[np.ndarray]:
    """The 8 symmetries of the square as permutations of the inputs (identity first).

    King steps and Manhattan distances look the same in every rotation and reflection of the
    board, so a position and its images have one value; only the cell inputs move.
    """
    rows, cols = np.divmod(np.arange(n * n), n)
    maps = []
    for r, c in ((rows, cols), (cols, n - 1 - rows), (n - 1 - rows, n - 1 - cols), (n - 1 - cols, rows)):
        maps.append(r * n + c)
        maps.append(r * n + (n - 1 - c))
    perms = []
    for cell_map in maps:
        perm = np.arange(num_inputs(n))
        # input at index new must come from the cell that maps onto it
        inverse = np.argsort(cell_map)
        perm[NUM_SCALARS : NUM_SCALARS + n * n] = NUM_SCALARS + inverse
        perm[NUM_SCALARS + n * n :] = NUM_SCALARS + n * n + inverse
        perms.append(perm)
    return perms


VALUE_KERNEL = (trap_value, SCALE)
"""The kernel ``LearnedEvaluator`` calls and its scale (search units per unit of network value)."""


@njit(cache=True)
def network_value(s, player, params):
    """An exported network (tablegym.models.export) on the observation of the player to decide
    (the thrower while a trap is in the air, as ``trap_value`` sees it), seen by ``player``; +-1/0
    once the game is over. A Q-network takes no legal decision at a chance node: -inf there."""
    return net_value(s, player, params, k_moves, k_outcome, k_to_move, flat_observation)
