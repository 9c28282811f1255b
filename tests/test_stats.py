"""Match statistics against hand-computed values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablegym.experiments.stats import (
    MatchResult,
    SeatRecord,
    elo_from_score,
    elo_interval,
    format_elo,
    score_from_elo,
    score_interval,
    wilson_interval,
)


def test_wilson_8_of_10():
    # p = 0.8, n = 10, z = 1.96: centre 0.7167, half-width 0.2266.
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4)
    assert hi == pytest.approx(0.9433, abs=1e-4)


def test_wilson_zero_successes_has_positive_upper_bound():
    # Upper bound z^2 / (n + z^2) = 3.8415 / 13.8415.
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0
    assert hi == pytest.approx(0.2775, abs=1e-4)


def test_wilson_no_trials_is_uninformative():
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(11, 10)


def test_score_interval_by_hand():
    # 6 wins, 2 draws, 2 losses: score 0.7; E[x^2] = (6 + 2/4) / 10 = 0.65; variance 0.16;
    # standard error sqrt(0.016) = 0.12649; half-width 1.96 * 0.12649 = 0.24792.
    score, lo, hi = score_interval(6, 2, 2)
    assert score == pytest.approx(0.7)
    assert lo == pytest.approx(0.45208, abs=1e-4)
    assert hi == pytest.approx(0.94792, abs=1e-4)


def test_identical_results_fall_back_to_wilson():
    # Zero sample variance must not mean certainty: 4-0 gets Wilson's interval for 4 of 4.
    score, lo, hi = score_interval(4, 0, 0)
    assert (score, hi) == (1.0, 1.0)
    assert lo == pytest.approx(wilson_interval(4, 4)[0]) and lo == pytest.approx(0.5101, abs=1e-4)
    score, lo, hi = score_interval(0, 10, 0)  # all draws: Wilson for 5 of 10
    assert score == 0.5
    assert (lo, hi) == pytest.approx(wilson_interval(5, 10))


def test_score_interval_is_clipped():
    # 9-1: score 0.9, half-width 1.96 * sqrt(0.09 / 10) = 0.186 -> upper bound clipped to 1.
    score, lo, hi = score_interval(9, 0, 1)
    assert score == pytest.approx(0.9)
    assert lo == pytest.approx(0.9 - 0.18594, abs=1e-4)
    assert hi == 1.0


def test_elo_known_values():
    assert elo_from_score(0.75) == pytest.approx(190.85, abs=0.01)
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.25) == pytest.approx(-190.85, abs=0.01)
    assert elo_from_score(1.0) == math.inf
    assert elo_from_score(0.0) == -math.inf


def test_elo_rejects_scores_outside_unit_interval():
    with pytest.raises(ValueError, match="score"):
        elo_from_score(1.5)


def test_elo_interval_is_inf_safe():
    elo, lo, hi = elo_interval(10, 0, 0)
    assert elo == math.inf and hi == math.inf
    assert lo == pytest.approx(elo_from_score(wilson_interval(10, 10)[0]))
    assert format_elo(elo) == "+inf"
    elo, lo, hi = elo_interval(0, 0, 10)
    assert elo == -math.inf and format_elo(lo) == "-inf"


def test_elo_interval_brackets_estimate():
    elo, lo, hi = elo_interval(30, 10, 20)
    assert lo < elo < hi
    assert elo == pytest.approx(elo_from_score(35 / 60))


@given(st.floats(min_value=-2000, max_value=2000))
def test_score_from_elo_inverts_elo_from_score(elo):
    assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo, abs=1e-6)


@given(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50))
def test_intervals_contain_the_estimate(wins, draws, losses):
    score, lo, hi = score_interval(wins, draws, losses)
    assert 0.0 <= lo <= score <= hi <= 1.0
    n = wins + draws + losses
    wlo, whi = wilson_interval(wins, n)
    assert 0.0 <= wlo <= whi <= 1.0
    if n:
        assert wlo <= wins / n <= whi


def test_match_result_counts_and_row():
    r = MatchResult(
        game="trilobite-tiny",
        agent_a="a",
        agent_b="b",
        wins=6,
        draws=2,
        losses=2,
        seats=(SeatRecord(0, 5, 4, 1, 0), SeatRecord(1, 5, 2, 1, 2)),
        seconds_per_move=(0.01, 0.02),
    )
    assert r.games == 10
    assert r.score == pytest.approx(0.7)
    assert r.interval == pytest.approx(score_interval(6, 2, 2)[1:])
    assert r.elo == pytest.approx(elo_from_score(0.7))
    row = r.as_row()
    assert row["wins"] + row["draws"] + row["losses"] == row["games"] == 10
    assert row["seat0_wdl"] == "4/1/0" and row["seat1_wdl"] == "2/1/2"
    assert row["sec_per_move_b"] == 0.02


def test_match_result_rejects_seats_that_do_not_add_up():
    with pytest.raises(ValueError, match="per-seat"):
        MatchResult("g", "a", "b", 1, 0, 1, seats=(SeatRecord(0, 1, 1, 0, 0), SeatRecord(1, 2, 0, 0, 2)))
