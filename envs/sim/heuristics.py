"""The opponents of the original Sim app ("Cassis", 2012), a hand-made evaluator, and the solve.

Agents follow search/agents.py (``name``, ``__call__(state, rng) -> action``):

- ``DumbAgent``: the first free edge.
- ``EasyAgent``: the first free edge that does not close an own triangle (else the first free).
- ``MediumAgent``: a uniformly random free edge.
- ``ExpertAgent``: perfect play from the exact solver (first move of best value in edge order).

``SAFE_MOVES`` scores a position by how many safe moves (free edges that do not close an own
triangle) each side has left: running out of safe moves is what loses Sim.
"""

from __future__ import annotations


import numpy as np
from numba import njit

from tablegym.envs.core import DRAW, ONGOING
from tablegym.envs.sim.canonical import k_canonical
from tablegym.envs.sim.core import E_, HDR, OUTCOME, SimGame, SimState, closes_own_triangle
from tablegym.search.agents import RandomAgent
from tablegym.envs.evaluator import KernelEvaluator
from tablegym.search.solver import Solver, SolveResult, solve


@njit(cache=True)
def k_safe_moves(s, player):
    """How many free edges ``player`` could colour without closing a triangle of their own."""
    m = 0
    for e in range(s[E_]):
        if s[HDR + e] == 0 and not closes_own_triangle(s, e, player):
            m += 1
    return m


@njit(cache=True)
def k_first_safe(s, player):
    """The first free edge that ``player`` can colour safely, else the first free edge (-1 if none)."""
    first = -1
    for e in range(s[E_]):
        if s[HDR + e] == 0:
            if not closes_own_triangle(s, e, player):
                return e
            if first < 0:
                first = e
    return first


@njit(cache=True)
def safe_moves_kernel(s, player, params):
    """+1/-1/0 once the game is over, else (safe moves of player - of opponent) / E / 2."""
    o = s[OUTCOME]
    if o != ONGOING:
        if o == DRAW:
            return 0.0
        return 1.0 if o == player else -1.0
    diff = k_safe_moves(s, player) - k_safe_moves(s, 1 - player)
    return 0.5 * diff / s[E_]


SAFE_MOVES = KernelEvaluator("safe-moves", safe_moves_kernel, np.zeros(1), game="sim")
EVALUATORS = {"safe-moves": SAFE_MOVES}


class DumbAgent:
    """The app's "Dumb" level: the first free edge."""

    name = "dumb"

    def __call__(self, state: SimState, rng: np.random.Generator) -> int:
        return int(state.legal_actions()[0])


class EasyAgent:
    """The app's "Easy" level: the first free edge that does not close an own triangle."""

    name = "easy"

    def __call__(self, state: SimState, rng: np.random.Generator) -> int:
        return int(k_first_safe(state._s, state.current_player()))


class MediumAgent(RandomAgent):
    """The app's "Medium" level: a uniformly random free edge."""

    name = "medium"


class ExpertAgent:
    """The app's "Expert" level: perfect play, the first edge of best exact value.

    One solver table per board size is kept for the agent's life (canonical keys, exact
    values), so after the first move every decision is a handful of table lookups.
    """

    name = "expert"

    def __init__(self) -> None:
        self._solvers: dict[int, Solver] = {}

    def _solver(self, n: int) -> Solver:
        if n not in self._solvers:
            self._solvers[n] = Solver(SimState.kernels, key_fn=k_canonical)
        return self._solvers[n]

    def action_values(self, state: SimState) -> dict[int, int]:
        """The exact value of each free edge for the player to move."""
        return self._solver(state.game.n).action_values(state)

    def __call__(self, state: SimState, rng: np.random.Generator) -> int:
        values = self.action_values(state)
        best = max(values.values())
        return next(a for a, v in values.items() if v == best)


AGENTS = {"dumb": DumbAgent, "easy": EasyAgent, "medium": MediumAgent, "expert": ExpertAgent}


def solve_sim(n: int = 6) -> SolveResult:
    """Solve Sim on K_n from the empty board with canonical keys (K6: -1, the second player wins)."""
    return solve(SimGame(n).new_initial_state(), key_fn=k_canonical, table_bits=12)


def solve_game(game: SimGame) -> SolveResult:
    """Sim's record ``solver``: ``solve_sim`` at the game's size (canonical keys)."""
    return solve_sim(game.n)
