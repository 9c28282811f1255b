"""Match statistics: intervals for scores and Elo differences, and the record of one match.

A match between two agents is reported as wins/draws/losses of agent A, a score
``(wins + draws / 2) / games`` with a 95% interval, and the Elo difference that score implies.
The point of the intervals is honesty: "the learned evaluator scores 0.56" means little unless
the table also says whether 0.5 lies inside the interval.

>>> lo, hi = wilson_interval(8, 10)
>>> round(lo, 4), round(hi, 4)
(0.4902, 0.9433)
>>> round(elo_from_score(0.75), 1)
190.8
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""

MAX_GAMES = 2**53
"""The most games a match or run takes: the largest count a float holds exactly, and the scores,
means and intervals here are computed in floats."""


def mean_interval(values: Any) -> tuple[float, float]:
    """The mean of ``values`` and the half-width of its 95% normal interval (1.96 standard
    errors; nan for fewer than two values): scores of single-player games, paired differences."""
    x = np.asarray(values, dtype=float)
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else float("nan")
    return float(x.mean()), float(half)


def wilson_interval(successes: int, trials: int, *, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (sound near 0 and 1, unlike the normal interval).

    With no trials nothing is known, so the interval is all of [0, 1].
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got successes={successes!r}, trials={trials!r}")
    return _wilson(successes, trials, z=z)


def _wilson(successes: float, trials: int, *, z: float = Z95) -> tuple[float, float]:
    """``wilson_interval`` for a possibly fractional success count (a score with draws)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials)) / (1 + z2n)
    lo = 0.0 if p == 0 else max(0.0, centre - half)
    hi = 1.0 if p == 1 else min(1.0, centre + half)
    return lo, hi


def score_interval(wins: int, draws: int, losses: int, *, z: float = Z95) -> tuple[float, float, float]:
    """Score ``(wins + draws/2) / games`` and its normal-approximation interval, clipped to [0, 1].

    The variance is the per-game score variance (each game scores 1, 1/2 or 0), so draws
    shrink the interval as they should. When every game ended alike that variance is 0, and
    the Wilson interval of ``score * games`` successes is used instead (a 4-0 sweep is not a
    certainty). Returns ``(score, low, high)``; with no games the score is 0.5 and the interval [0, 1].
    """
    if min(wins, draws, losses) < 0:
        raise ValueError(f"counts must be >= 0, got wins={wins!r}, draws={draws!r}, losses={losses!r}")
    n = wins + draws + losses
    if n == 0:
        return 0.5, 0.0, 1.0
    score = (wins + draws / 2) / n
    if wins == n or draws == n or losses == n:
        # Every game alike: the sample variance is 0 and the normal interval would claim
        # certainty after four games. Wilson's interval for score * n of n stays honest.
        return (score, *_wilson(score * n, n, z=z))
    variance = max(0.0, (wins + draws / 4) / n - score * score)
    half = z * math.sqrt(variance / n)
    return score, max(0.0, score - half), min(1.0, score + half)


def elo_from_score(score: float) -> float:
    """Elo difference whose expected score is ``score``: ``400 log10(s / (1 - s))``; +-inf at 1/0."""
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"score must be in [0, 1], got {score!r}")
    if score == 1.0:
        return math.inf
    if score == 0.0:
        return -math.inf
    return 400.0 * math.log10(score / (1.0 - score))


def score_from_elo(elo: float) -> float:
    """Expected score of a player ``elo`` points stronger (the inverse of ``elo_from_score``)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_interval(wins: int, draws: int, losses: int, *, z: float = Z95) -> tuple[float, float, float]:
    """Elo difference of a result and its interval, mapped through the score interval.

    Returns ``(elo, low, high)``; a perfect score gives ``inf`` (and an infinite upper bound)
    rather than an error, since 10-0 is a legitimate, if uninformative, result.
    """
    score, lo, hi = score_interval(wins, draws, losses, z=z)
    return elo_from_score(score), elo_from_score(lo), elo_from_score(hi)


def format_elo(elo: float) -> str:
    """Elo as a signed whole number, or +inf / -inf."""
    if math.isinf(elo):
        return "+inf" if elo > 0 else "-inf"
    return f"{elo:+.0f}"


@dataclass(frozen=True)
class SeatRecord:
    """Agent A's results while it played one seat (player index)."""

    seat: int
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0


@dataclass(frozen=True)
class MatchResult:
    """Outcome of a match between agents A and B, counted from A's side.

    ``seats[i]`` holds A's results as player ``i``; ``seconds_per_move`` is the mean thinking
    time per own move of (A, B), opening plies and chance moves excluded. ``records`` keeps the
    individual games (see ``tablegym.search.play.GameRecord``) for inspection.

    ``distinct`` holds A's wins, draws and losses over the distinct games: a game played again
    move for move, A in the same seat, counts once. Deterministic agents replay an opening
    identically, so 400 games from 64 openings are 128 games of evidence, not 400; the score,
    its interval and the Elo difference are computed over the distinct games when they are
    known (``counted``), over all games otherwise.
    """

    game: str
    agent_a: str
    agent_b: str
    wins: int
    draws: int
    losses: int
    seats: tuple[SeatRecord, ...] = ()
    seconds_per_move: tuple[float, float] = (math.nan, math.nan)
    records: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    distinct: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        if min(self.wins, self.draws, self.losses) < 0:
            raise ValueError(f"counts must be >= 0, got {self.wins}/{self.draws}/{self.losses}")
        if self.seats and sum(s.games for s in self.seats) != self.games:
            raise ValueError("per-seat games do not add up to the match's games")
        if self.distinct is not None and (
            min(self.distinct) < 0 or any(d > n for d, n in zip(self.distinct, (self.wins, self.draws, self.losses)))
        ):
            raise ValueError(f"distinct games {self.distinct} must be counts within {self.wins}/{self.draws}/{self.losses}")

    @property
    def counted(self) -> tuple[int, int, int]:
        """The wins, draws and losses of A the score and its interval are computed over: those
        of the distinct games when known, else of all games."""
        return self.distinct if self.distinct is not None else (self.wins, self.draws, self.losses)

    @property
    def method(self) -> str:
        """What the score's games are, for a table's caption."""
        return "distinct games" if self.distinct is not None else "all games"

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def distinct_games(self) -> int:
        """Different games (move sequences, A's seat) among those played: deterministic agents
        repeat games that start from the same opening, so this says how much independent
        evidence there is."""
        if self.distinct is not None:
            return sum(self.distinct)
        return len({tuple(r.actions) for r in self.records})

    @property
    def score(self) -> float:
        """A's score over the ``counted`` games."""
        return score_interval(*self.counted)[0]

    @property
    def interval(self) -> tuple[float, float]:
        """95% interval of A's score, over the ``counted`` games."""
        _, lo, hi = score_interval(*self.counted)
        return lo, hi

    @property
    def elo(self) -> float:
        """Elo of A minus Elo of B implied by the score."""
        return elo_from_score(self.score)

    @property
    def elo_interval(self) -> tuple[float, float]:
        _, lo, hi = elo_interval(*self.counted)
        return lo, hi

    def as_row(self) -> dict[str, Any]:
        """A flat dict for CSV files and tables (numbers stay numbers)."""
        lo, hi = self.interval
        elo_lo, elo_hi = self.elo_interval
        row: dict[str, Any] = {
            "game": self.game,
            "agent_a": self.agent_a,
            "agent_b": self.agent_b,
            "games": self.games,
            "distinct_games": self.distinct_games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": self.score,
            "score_over": self.method,
            "score_low": lo,
            "score_high": hi,
            "elo": self.elo,
            "elo_low": elo_lo,
            "elo_high": elo_hi,
            "sec_per_move_a": self.seconds_per_move[0],
            "sec_per_move_b": self.seconds_per_move[1],
        }
        for s in self.seats:
            row[f"seat{s.seat}_wdl"] = f"{s.wins}/{s.draws}/{s.losses}"
        return row
