"""Every game's rules core against the contract checker (envs/conformance.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tablegym.envs.conformance import ConformanceError, check_game
from tablegym.envs.core import IllegalActionError
from tablegym.envs.friday.core import FridayGame
from tablegym.envs.sim.core import SimGame
from tablegym.envs.trilobite.core import TrilobiteGame

GAMES = {
    "trilobite-standard": lambda: TrilobiteGame(),
    "trilobite-tiny": lambda: TrilobiteGame.tiny(),
    "trilobite-5x4-L3": lambda: TrilobiteGame(5, 4, 3),
    "trilobite-first-player-1": lambda: TrilobiteGame(first_player=1),
    **{f"sim-K{n}": (lambda n=n: SimGame(n)) for n in range(3, 9)},
    **{f"friday-level{k}": (lambda k=k: FridayGame(level=k)) for k in (1, 2, 3, 4)},
    "friday-all-options": lambda: FridayGame(
        level=4, abilities="after_free", aging_life="when_drawn", empty_aging="lose", max_life_level4=20
    ),
}


@pytest.mark.parametrize("name", GAMES)
def test_conformance(name):
    game = GAMES[name]()
    report = check_game(game, games=20, seed=0)
    assert report.games == 20 and report.states > 20
    assert report.max_length <= game.spec.max_game_length
    assert sum(report.outcomes.values()) == 20


def test_games_end_both_ways():
    """The checker really reaches terminals of every kind the game has."""
    assert set(check_game(TrilobiteGame.tiny(), games=30).outcomes) == {-1.0, 0.0, 1.0}
    assert set(check_game(SimGame(6), games=10).outcomes) <= {-1.0, 1.0}  # no draws on K6
    assert check_game(SimGame(6), games=10).transpositions > 0


class _LeakyMaskState:
    """Wraps a real state but reports a mask with one extra legal action (a deliberate bug)."""

    def __init__(self, inner):
        self._inner = inner
        self.game = inner.game

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def legal_action_mask(self):
        mask = self._inner.legal_action_mask()
        mask[:] = 1
        return mask

    def child(self, action):
        return _LeakyMaskState(self._inner.child(action))

    def __reduce__(self):
        return (_LeakyMaskState, (self._inner,))


class _LeakyMaskGame:
    def __init__(self):
        self._game = TrilobiteGame.tiny()
        self.spec = self._game.spec

    def new_initial_state(self):
        return _LeakyMaskState(self._game.new_initial_state())


def test_checker_catches_a_bad_mask():
    """Regression guard for the checker itself: a mask that disagrees with legal_actions fails."""
    with pytest.raises(ConformanceError, match="mask"):
        check_game(_LeakyMaskGame(), games=2)


def test_illegal_action_error_is_a_value_error():
    state = SimGame(4).new_initial_state().child(0)
    with pytest.raises(ValueError):
        state.child(0)
    assert issubclass(IllegalActionError, ValueError)
    assert np.array_equal(state.legal_action_mask()[:2], [0, 1])
