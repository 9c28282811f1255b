"""Behaviour kept through restructurings: the games, search values and checkpoint
values recorded in tests/data/behaviour_record.json come out the same (tests/behaviour_record.py)."""

import functools
import json

import pytest

from tests import behaviour_record

RECORDED = json.loads(behaviour_record.PATH.read_text())


@functools.cache
def now():
    """Every case played now (once per test session)."""
    return behaviour_record.record()


def _label(case):
    return f"{case['game']}{case['options'] or ''} {case.get('specs', case.get('evaluator'))} seed {case.get('seed')}"


@pytest.mark.parametrize("index", range(len(RECORDED["games"])), ids=[_label(c) for c in RECORDED["games"]])
def test_agents_play_the_recorded_moves(index):
    before, now_ = RECORDED["games"][index], now()["games"][index]
    assert (now_["game"], now_["specs"], now_["seed"]) == (before["game"], before["specs"], before["seed"])
    assert now_["actions"] == before["actions"]
    assert now_["returns"] == pytest.approx(before["returns"], abs=1e-12)


@pytest.mark.parametrize("index", range(len(RECORDED["evaluations"])), ids=[_label(c) for c in RECORDED["evaluations"]])
def test_evaluators_give_the_recorded_values(index):
    before, now_ = RECORDED["evaluations"][index], now()["evaluations"][index]
    assert len(before["values"]) >= 3
    assert now_["values"] == pytest.approx(before["values"], rel=1e-9, abs=1e-9)


def test_the_starship_generator_builds_the_recorded_ships():
    assert now()["starships"] == RECORDED["starships"]


def test_the_record_covers_every_game():
    from tablegym.experiments.games import GAMES

    assert {c["game"] for c in RECORDED["games"]} == set(GAMES)
    # a game that ends in a draw or a loss every time would pin little: the seats both win somewhere
    two_player = [c for c in RECORDED["games"] if len(c["returns"]) == 2]
    assert {max(range(2), key=lambda p: c["returns"][p]) for c in two_player} == {0, 1}
