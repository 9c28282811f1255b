"""Game records checked as data: a record read from a file (a match journal line) must be a
game the rules give, replayed on the rules core action by action before it counts.

A record's fields are typed and bounded first (``read_record``), then its actions are replayed
(``replay_problems``): each must be legal in turn (a chance outcome at a chance node, which the
records hold), the last one must end the game, and the returns, winner and decisions per player
after the opening must be the ones it claims. Many games of one compiled rule set are replayed
in one compiled call, so checking a long journal costs little beside reading it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tablegym.envs.core import ONGOING, Game, KernelState
from tablegym.search.play import GameRecord, winner_of

_RECORD_FIELDS = ("actions", "opening_plies", "winner", "returns", "move_counts", "move_seconds")
"""A record's fields, each required."""


class ReplayError(ValueError):
    """A line shaped like a game whose game is not one the rules allow (or not the one it claims)."""


def is_int(x: Any) -> bool:
    """An integer, not a bool (JSON's true and false are not counts)."""
    return type(x) is int


def _is_number(x: Any) -> bool:
    return type(x) in (int, float)


def _short(values: Sequence[Any], most: int = 12) -> str:
    """``values`` as a list, its middle left out when long (a line may be megabytes)."""
    if len(values) <= most:
        return repr(list(values))
    return f"[{', '.join(map(repr, values[:most]))}, ... ({len(values):,} in all)]"


def read_record(rec: Mapping[str, Any], game: Game, key_opening: int) -> GameRecord:
    """The record's fields, typed and in range for ``game`` (no replay yet)."""
    missing = [f for f in _RECORD_FIELDS if f not in rec]
    if missing:
        raise KeyError(missing[0])
    spec = game.spec
    n = spec.num_players
    actions, opening, winner = rec["actions"], rec["opening_plies"], rec["winner"]
    returns, counts, seconds = rec["returns"], rec["move_counts"], rec["move_seconds"]
    width = max(spec.num_actions, spec.max_chance_outcomes)
    if (
        not isinstance(actions, list)
        or {type(a) for a in actions} - {int}
        or (actions and not 0 <= min(actions) <= max(actions) < width)
    ):
        raise ReplayError(
            f"actions must be a list of action numbers 0..{width - 1} of {spec.name}, got "
            f"{_short(actions) if isinstance(actions, list) else repr(actions)[:200]}"
        )
    for name, value, kind in (
        ("returns", returns, _is_number),
        ("move_counts", counts, is_int),
        ("move_seconds", seconds, _is_number),
    ):
        if not isinstance(value, list) or len(value) != n or not all(kind(x) for x in value):
            what = "integers" if kind is is_int else "numbers"
            raise ReplayError(f"{name} must be {n} {what}, one per player, got {repr(value)[:200]}")
    if not all(math.isfinite(x) for x in returns):
        raise ReplayError(f"returns {returns!r} are not all finite")
    if not all(math.isfinite(x) and x >= 0 for x in seconds):
        raise ReplayError(f"move_seconds {seconds!r} must be finite and >= 0")
    if not all(x >= 0 for x in counts):
        raise ReplayError(f"move_counts {counts!r} must be >= 0")
    if winner is not None and not (is_int(winner) and 0 <= winner < n):
        raise ReplayError(f"winner {winner!r} is not a player of {spec.name} (0..{n - 1}, or null for a draw)"[:300])
    if not is_int(opening) or not 0 <= opening <= min(len(actions), key_opening):
        raise ReplayError(
            f"opening_plies {opening!r} must be an integer in 0..{min(len(actions), key_opening)} "
            f"(the key's opening_plies, and no more than the actions)"[:300]
        )
    claimed = winner_of(returns)
    if winner != claimed:
        raise ReplayError(
            f"winner {winner!r} does not match returns {returns!r} "
            f"({'a draw' if claimed is None else f'player {claimed} has the most'})"
        )
    return GameRecord(
        tuple(actions), opening, winner, tuple(float(x) for x in returns), tuple(counts), tuple(float(x) for x in seconds)
    )


def _replay_batch(states, actions, starts, openings, moves, push, to_move, outcome, buf, counts, bad):  # pragma: no cover
    """Replay game ``g`` (``actions[starts[g]:starts[g + 1]]``) on row ``g`` of ``states`` in place,
    each action first checked against the legal moves there (the chance outcomes at a chance
    node); ``counts[g, p]``: the decisions of player ``p`` after the first ``openings[g]``
    actions; ``bad[g]``: the index of the first action that is not legal or comes after the
    end, -1 when all were played. Compiled (``_replay_kernel``): one call replays many games."""
    for g in range(states.shape[0]):
        s = states[g]
        bad[g] = -1
        for i in range(starts[g], starts[g + 1]):
            if outcome(s) != ONGOING:
                bad[g] = i - starts[g]
                break
            n = moves(s, buf)
            a = actions[i]
            legal = False
            for k in range(n):
                if buf[k] == a:
                    legal = True
                    break
            if not legal:
                bad[g] = i - starts[g]
                break
            player = to_move(s)
            if i - starts[g] >= openings[g] and player >= 0:
                counts[g, player] += 1
            push(s, a)


_REPLAY: list[Any] = []
"""``_replay_batch`` compiled, once a journal needs it (importing this module compiles nothing)."""
_REPLAY_CHUNK = 1024
"""Games replayed a compiled call: each call costs about 0.5 ms to bind the game's kernels, and
the chunk's states (Trap: 5 kB each) are all the memory a replay holds."""
_COMPILED_FROM = 20_000
"""Actions of one game's records from which they are replayed compiled: the object API takes
about 20 us an action (0.4 s for these), the first compiled call 1-3 s to set up numba's
function pointers (measured, Trap), then about 0.1 us an action."""


def _replay_kernel() -> Any:
    if not _REPLAY:
        from numba import njit, types

        from tablegym.envs.core import INT_OF_STATE_T, MOVES_T, PUSH_T

        i1, i2 = types.int64[::1], types.int64[:, ::1]
        signature = types.void(i2, i1, i1, i1, MOVES_T, PUSH_T, INT_OF_STATE_T, INT_OF_STATE_T, i1, i2, i1)
        _REPLAY.append(njit(signature, cache=True)(_replay_batch))
    return _REPLAY[0]


def _replay_python(game: Game, record: GameRecord) -> tuple[int, Any, list[int]]:
    """The object-API replay: (index of the first action that is not legal or -1, the position
    reached, each player's decisions after the opening)."""
    state = game.new_initial_state()
    counts = [0] * game.spec.num_players
    for i, a in enumerate(record.actions):
        player = state.current_player()
        if state.is_terminal():
            return i, state, counts
        try:
            after = state.child(a)
        except ValueError:  # IllegalActionError: not legal there (a chance outcome at a chance node)
            return i, state, counts
        if i >= record.opening_plies and player >= 0:
            counts[player] += 1
        state = after
    return -1, state, counts


def _replay_problem(record: GameRecord, bad: int, state: Any, counts: Sequence[int]) -> str | None:
    """What is wrong with ``record`` given its replay (see ``replay_problems``), or None."""
    if bad >= 0:
        action = record.actions[bad]
        if state.is_terminal():
            return f"action {bad} ({action}) comes after the end of the game"
        legal = state.legal_actions() if state.current_player() >= 0 else [o for o, _ in state.chance_outcomes()]
        return f"action {bad} ({action}) is not legal there; legal: {_short(legal)}"
    if not state.is_terminal():
        return f"the game does not end with its {len(record.actions)} actions"
    returns = tuple(float(x) for x in state.returns())
    if returns != record.returns:
        return f"returns {list(record.returns)} are not the game's, {list(returns)}"
    if tuple(counts) != record.move_counts:
        return f"move_counts {list(record.move_counts)} are not the players' decisions after the opening, {list(counts)}"
    if any(c == 0 and t != 0 for c, t in zip(record.move_counts, record.move_seconds)):
        return f"move_seconds {list(record.move_seconds)} count time of a player who made no move"
    return None


def replay_problems(games: Sequence[tuple[Game, GameRecord]]) -> list[str | None]:
    """For each (rules, record): None when the record replays on the rules core (every action
    legal in turn, the last one ending the game, with the returns and decisions per player
    after the opening that it claims), else what is wrong. Games with compiled kernels are
    replayed ``_REPLAY_CHUNK`` at a time in one compiled call when there are many of them."""
    problems: list[str | None] = [None] * len(games)
    by_game: dict[int, list[int]] = {}
    for i, (game, _) in enumerate(games):
        by_game.setdefault(id(game), []).append(i)
    for indices in by_game.values():
        game = games[indices[0]][0]
        start = game.new_initial_state()
        if not isinstance(start, KernelState) or sum(len(games[i][1].actions) for i in indices) < _COMPILED_FROM:
            for i in indices:
                problems[i] = _replay_problem(games[i][1], *_replay_python(game, games[i][1]))
            continue
        spec, k = game.spec, start.kernels
        buf = np.empty(max(spec.num_actions, spec.max_chance_outcomes, 1), dtype=np.int64)
        for at in range(0, len(indices), _REPLAY_CHUNK):
            chunk = indices[at : at + _REPLAY_CHUNK]
            records = [games[i][1] for i in chunk]
            states = np.ascontiguousarray(np.tile(start.array, (len(chunk), 1)))
            starts = np.zeros(len(chunk) + 1, dtype=np.int64)
            starts[1:] = np.cumsum([len(r.actions) for r in records])
            actions = np.fromiter(itertools.chain.from_iterable(r.actions for r in records), np.int64, int(starts[-1]))
            openings = np.array([r.opening_plies for r in records], dtype=np.int64)
            counts = np.zeros((len(chunk), spec.num_players), dtype=np.int64)
            bad = np.empty(len(chunk), dtype=np.int64)
            _replay_kernel()(states, actions, starts, openings, k.moves, k.push, k.to_move, k.outcome, buf, counts, bad)
            for j, i in enumerate(chunk):
                problems[i] = _replay_problem(records[j], int(bad[j]), type(start)(game, states[j]), counts[j].tolist())
    return problems
