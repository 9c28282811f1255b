"""A conformance checker for the rules-core contract (pgx's api_test, OpenSpiel's random_sim_test).

``check_game(game)`` plays seeded random games and, in every position it meets, checks what
envs and searches rely on without re-checking:

- masks: ``legal_action_mask()`` is int8 over ``num_actions`` and equals ``legal_actions()``;
  legal actions are distinct and in range;
- illegal input: every other action in range, -1, ``num_actions``, a float and a string make
  ``child`` raise ``IllegalActionError``; the same for ``string_to_action``, whose round trip
  with ``action_to_string`` gives each legal action back;
- purity: ``child`` leaves its parent unchanged (key, text, legal actions, observations, array);
- terminals: no legal actions, an all-zero mask, ``current_player() == TERMINAL``, returns in
  the utility range that sum to 0 for zero-sum games; non-terminal returns are all zero;
- observations: ``spec.observation_shape``, float32, finite, for every player;
- keys: an int in the 64-bit range, equal for equal positions (copies, pickles, replays, and
  transpositions that give identical observations and text), and equal states hash alike;
- pickling: states and the game round trip;
- determinism: the same seed replays the same game, move for move;
- kernels (``KernelState``): ``moves``/``to_move``/``outcome``/``key`` agree with the object API,
  ``push`` gives ``child``'s array, and ``pop`` restores the compact array exactly;
- length: no game is longer than ``spec.max_game_length``.

It raises ``ConformanceError`` (an ``AssertionError``) at the first failure, with the move
sequence that leads there, and returns a ``ConformanceReport`` otherwise.
"""

from __future__ import annotations

import pickle
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tablegym.envs.core import CHANCE, TERMINAL, Game, IllegalActionError, KernelState, State, sample_outcome


class ConformanceError(AssertionError):
    """A game broke the contract; the message says which check, where, and how to get there."""


@dataclass
class ConformanceReport:
    """What ``check_game`` saw: enough to tell a real run from one that checked nothing."""

    game: str
    games: int
    states: int
    max_length: int
    outcomes: Counter = field(default_factory=Counter)
    """Final returns of player 0 (for two-player games: 1 win, -1 loss, 0 draw) -> count."""
    transpositions: int = 0
    """Transposed move orders found and checked for equal keys."""


def _fail(check: str, history: list[int], detail: str) -> ConformanceError:
    return ConformanceError(f"{check} after moves {history}: {detail}")


def _snapshot(state: State, players: int) -> tuple[Any, ...]:
    """Everything observable about a state, to tell whether something changed it."""
    arr = state.array.tobytes() if isinstance(state, KernelState) else b""
    obs = tuple(state.observation(p).tobytes() for p in range(players))
    return (state.key(), state.to_text(), tuple(state.legal_actions()), state.current_player(), obs, arr)


def _check_state(game: Game, state: State, history: list[int], zero_sum: bool) -> None:
    spec = game.spec
    player = state.current_player()
    if not (player in (CHANCE, TERMINAL) or 0 <= player < spec.num_players):
        raise _fail("current_player", history, f"{player!r} is neither a player, CHANCE nor TERMINAL")
    legal = state.legal_actions()
    # At a chance node the actions (if a game lists them) are chance outcomes, which have their
    # own id space (``max_chance_outcomes``); the action mask is for players only.
    top = max(spec.num_actions, spec.max_chance_outcomes) if player == CHANCE else spec.num_actions
    if len(set(legal)) != len(legal) or not all(isinstance(a, int) and 0 <= a < top for a in legal):
        raise _fail("legal_actions", history, f"{legal!r} are not distinct ints in 0..{top - 1}")
    mask = np.zeros(spec.num_actions, dtype=np.int8)
    if player != CHANCE:
        mask = state.legal_action_mask()
        if mask.dtype != np.int8 or mask.shape != (spec.num_actions,):
            raise _fail("mask", history, f"dtype {mask.dtype} shape {mask.shape}, want int8 ({spec.num_actions},)")
        want = np.zeros(spec.num_actions, dtype=np.int8)
        want[legal] = 1
        if not np.array_equal(mask, want):
            raise _fail("mask", history, f"mask {mask.tolist()} disagrees with legal_actions {legal}")

    for p in range(spec.num_players):
        obs = state.observation(p)
        if not isinstance(obs, np.ndarray) or obs.shape != spec.observation_shape or obs.dtype != np.float32:
            raise _fail(
                "observation",
                history,
                f"player {p}: {type(obs).__name__} {getattr(obs, 'shape', None)} {getattr(obs, 'dtype', None)}, want float32 {spec.observation_shape}",
            )
        if not np.isfinite(obs).all():
            raise _fail("observation", history, f"player {p}: not finite")

    key = state.key()
    if not isinstance(key, (int, bytes)) or (isinstance(key, int) and not -(2**63) <= key < 2**64):
        raise _fail("key", history, f"{key!r} is not a 64-bit int or bytes")

    returns = np.asarray(state.returns(), dtype=np.float64)
    if returns.shape != (spec.num_players,):
        raise _fail("returns", history, f"shape {returns.shape}, want ({spec.num_players},)")
    if player == TERMINAL:
        if legal or mask.any():
            raise _fail("terminal", history, f"a finished game has legal actions {legal}")
        if not state.is_terminal():
            raise _fail("terminal", history, "is_terminal() is False at TERMINAL")
        if (returns < spec.min_utility).any() or (returns > spec.max_utility).any():
            raise _fail("returns", history, f"{returns.tolist()} outside [{spec.min_utility}, {spec.max_utility}]")
        if zero_sum and abs(returns.sum()) > 1e-9:
            raise _fail("returns", history, f"{returns.tolist()} do not sum to 0 in a zero-sum game")
    else:
        if state.is_terminal():
            raise _fail("terminal", history, "is_terminal() is True before the end")
        if spec.num_players > 1 and returns.any():  # a single player's returns may be a running score
            raise _fail("returns", history, f"{returns.tolist()} before the end, want zeros")
        if player != CHANCE and not legal:
            raise _fail("legal_actions", history, "a player to move has no legal action")

    # Illegal input: every illegal action in range, out of range, and not an integer at all.
    bad: list[Any] = [a for a in range(spec.num_actions) if not mask[a]]
    bad += [-1, spec.num_actions, 0.5, "x"]
    if player == CHANCE:
        bad = [-1, 0.5, "x"]
    for action in bad:
        try:
            state.child(action)
        except IllegalActionError as err:
            if not isinstance(err, ValueError):
                raise _fail("illegal action", history, "IllegalActionError is not a ValueError") from None
        except Exception as err:  # noqa: BLE001 -- the wrong exception type is the finding
            raise _fail(
                "illegal action", history, f"child({action!r}) raised {type(err).__name__}: {err}, want IllegalActionError"
            ) from None
        else:
            raise _fail("illegal action", history, f"child({action!r}) did not raise")
    if player >= 0:
        for action in legal:
            text = state.action_to_string(action)
            back = state.string_to_action(text)
            if back != action:
                raise _fail("action strings", history, f"{action} -> {text!r} -> {back!r}")
        for action in bad:
            if isinstance(action, int) and 0 <= action < spec.num_actions:
                try:
                    state.string_to_action(state.action_to_string(action))
                except IllegalActionError:
                    continue
                raise _fail("action strings", history, f"string_to_action accepted illegal {action}")

    if player == CHANCE:
        outcomes = state.chance_outcomes()
        total = sum(p for _, p in outcomes)
        if not outcomes or abs(total - 1.0) > 1e-9 or any(p < 0 for _, p in outcomes):
            raise _fail("chance", history, f"outcome probabilities {[p for _, p in outcomes]} are not a distribution")


def _check_children(game: Game, state: State, history: list[int]) -> None:
    """Purity of ``child`` and, for kernel states, push/pop against the object API."""
    players = game.spec.num_players
    before = _snapshot(state, players)
    actions = [a for a, _ in state.chance_outcomes()] if state.current_player() == CHANCE else state.legal_actions()
    kernel = isinstance(state, KernelState)
    if kernel:
        k = state.kernels
        arr = state.array
        original = arr.copy()
        out = np.empty(max(game.spec.num_actions, game.spec.max_chance_outcomes), dtype=np.int64)
        n = k.moves(arr, out)
        if out[:n].tolist() != state.legal_actions():
            raise _fail("kernels.moves", history, f"{out[:n].tolist()} vs legal_actions {state.legal_actions()}")
        if int(k.key(arr)) != state.key():
            raise _fail("kernels.key", history, "differs from key()")
        if state.current_player() >= 0 and int(k.to_move(arr)) != state.current_player():
            raise _fail("kernels.to_move", history, f"{k.to_move(arr)} vs current_player {state.current_player()}")
    for action in actions:
        child = state.child(action)
        if kernel and state.current_player() != CHANCE:
            k.push(arr, action)
            if not np.array_equal(arr, child.array):
                raise _fail("kernels.push", history + [action], "push gives another array than child()")
            if int(k.key(arr)) != child.key():
                raise _fail("kernels.key", history + [action], "key after push differs from child().key()")
            try:
                k.pop(arr)
            except NotImplementedError:  # a game whose states are copied, not undone (Threes)
                arr[:] = original
            if not np.array_equal(arr, original):
                raise _fail("kernels.pop", history + [action], "pop does not restore the array exactly")
    if _snapshot(state, players) != before:
        raise _fail("child purity", history, "child() changed its parent")


def _copies_agree(game: Game, state: State, history: list[int]) -> None:
    """Pickled copies and a replay of the moves are the same position with the same key."""
    copy = pickle.loads(pickle.dumps(state))
    players = game.spec.num_players
    if type(copy) is not type(state) or _snapshot(copy, players) != _snapshot(state, players):
        raise _fail("pickle", history, "the unpickled state differs")
    if type(state).__eq__ is not object.__eq__ and (copy != state or hash(copy) != hash(state)):
        raise _fail("pickle", history, "the unpickled state is not == the original, or hashes differently")
    replay = game.new_initial_state()
    for action in history:
        replay = replay.child(action)
    if _snapshot(replay, players) != _snapshot(state, players):
        raise _fail("replay", history, "replaying the moves gives another position or key")


def _play(game: Game, rng: np.random.Generator) -> tuple[list[State], list[int]]:
    """One random game: the states met (first to last) and the actions taken."""
    state = game.new_initial_state()
    states, actions = [state], []
    while not state.is_terminal():
        if state.current_player() == CHANCE:
            action = sample_outcome(state, rng)
        else:
            legal = state.legal_actions()
            action = legal[int(rng.integers(len(legal)))]
        state = state.child(action)
        states.append(state)
        actions.append(int(action))
    return states, actions


def _signature(state: State, players: int) -> tuple[Any, ...]:
    """What a player can see of a position (its text and every observation)."""
    return (state.to_text(), state.current_player(), tuple(state.observation(p).tobytes() for p in range(players)))


def _check_transposition(game: Game, state: State, history: list[int], rng: np.random.Generator) -> int:
    """Swap the mover's two moves around a fixed reply (a1 b a2 c vs a2 b a1 c): if both
    orders reach positions that look identical (text and observations), their keys must match."""
    found = 0
    legal = state.legal_actions()
    if state.current_player() < 0 or len(legal) < 2:
        return 0
    a1, a2 = (int(a) for a in rng.choice(legal, size=2, replace=False))
    players = game.spec.num_players
    try:
        x = state.child(a1)
        b = x.legal_actions()[0]
        x = x.child(b).child(a2)
        c = x.legal_actions()[0]
        x = x.child(c)
        y = state.child(a2).child(b).child(a1).child(c)
    except (IllegalActionError, IndexError):
        return 0
    if _signature(x, players) == _signature(y, players):
        found = 1
        if x.key() != y.key():
            raise _fail(
                "key", history, f"moves {[a1, b, a2, c]} and {[a2, b, a1, c]} reach the same position with different keys"
            )
    return found


def check_game(
    game: Game, *, games: int = 20, seed: int = 0, zero_sum: bool | None = None, transpositions: bool = True
) -> ConformanceReport:
    """Play ``games`` seeded random games of ``game`` and check the contract in every position.

    ``zero_sum`` defaults to "two players and ``min_utility == -max_utility``".
    ``transpositions=False`` skips the equal-keys-for-transposed-move-orders check, for a game
    whose key deliberately depends on more than what the players see.
    """
    spec = game.spec
    if zero_sum is None:
        zero_sum = spec.num_players == 2 and spec.min_utility == -spec.max_utility
    again = pickle.loads(pickle.dumps(game))
    if again.spec != spec or type(again) is not type(game):
        raise ConformanceError(f"{game!r} does not survive pickling")
    report = ConformanceReport(game=repr(game), games=games, states=0, max_length=0)
    for g in range(games):
        rng = np.random.default_rng([seed, g])
        states, actions = _play(game, rng)
        replay_states, replay_actions = _play(game, np.random.default_rng([seed, g]))
        if replay_actions != actions or [s.key() for s in replay_states] != [s.key() for s in states]:
            raise ConformanceError(f"game {g} with seed {seed} did not replay: {actions} then {replay_actions}")
        if len(actions) > spec.max_game_length:
            raise _fail("max_game_length", actions, f"{len(actions)} moves > {spec.max_game_length}")
        for ply, state in enumerate(states):
            history = actions[:ply]
            _check_state(game, state, history, zero_sum)
            _check_children(game, state, history)
            _copies_agree(game, state, history)
            if transpositions:
                report.transpositions += _check_transposition(game, state, history, rng)
        report.states += len(states)
        report.max_length = max(report.max_length, len(actions))
        report.outcomes[float(states[-1].returns()[0])] += 1
    return report
