"""A single-player run stops a game at its record's ``max_decisions`` (Friday: the env's
``max_steps``): an agent that goes round in circles cannot hang ``tablegym eval``."""

from __future__ import annotations

import numpy as np

from tablegym.envs import make_game, plugin
from tablegym.envs.friday.env import DEFAULT_MAX_STEPS
from tablegym.experiments import solo
from tablegym.search.play import play_game


class Counting:
    """The first legal move, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, state, rng) -> int:
        self.calls += 1
        return state.legal_actions()[0]


def test_play_game_stops_after_max_decisions_unfinished():
    game, agent = make_game("friday"), Counting()
    played = play_game(game, [agent], np.random.default_rng(0), max_decisions=7)
    assert agent.calls == 7 == played.move_counts[0] and not played.final.is_terminal()
    assert played.returns == (0.0,)  # Friday's return of an unfinished game, as its env at truncation


def test_a_friday_run_caps_games_at_the_env_s_max_steps_and_records_the_truncation(monkeypatch):
    record = plugin("friday")
    assert record.max_decisions == DEFAULT_MAX_STEPS
    whole = solo.play_deal(make_game("friday"), Counting(), seed=0, index=0)  # under the record's cap: played out
    assert "truncated" not in whole and whole["decisions"] < DEFAULT_MAX_STEPS
    monkeypatch.setattr("tablegym.experiments.solo.plugin", lambda name: type(record)(**{**record.__dict__, "max_decisions": 5}))
    out = solo.play_deal(make_game("friday"), Counting(), seed=0, index=0)
    assert out["decisions"] == 5 and out["truncated"] and not out["won"] and out["return"] == 0.0
