"""The opponents of the original Sim app ("Cassis", 2012) and Sim's exact solve, for the one route
(tablegym.models.agents.make_agent); they sit above the search layer because the expert plays
by the exact solver.

Agents follow search/agents.py (``name``, ``__call__(state, rng) -> action``):

- ``DumbAgent``: the first free edge.
- ``EasyAgent``: the first free edge that does not close an own triangle (else the first free).
- ``MediumAgent``: a uniformly random free edge.
- ``ExpertAgent``: perfect play from the exact solver (first move of best value in edge order).
"""

from __future__ import annotations

import numpy as np

from tablegym.envs.sim.canonical import k_canonical
from tablegym.envs.sim.core import SimGame, SimState
from tablegym.envs.sim.heuristics import EVALUATORS, SAFE_MOVES, k_first_safe
from tablegym.search.agents import RandomAgent
from tablegym.search.solver import Solver, SolveResult, solve

__all__ = [
    "AGENTS",
    "EVALUATORS",
    "SAFE_MOVES",
    "DumbAgent",
    "EasyAgent",
    "ExpertAgent",
    "MediumAgent",
    "solve_game",
    "solve_sim",
]


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
