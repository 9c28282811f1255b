"""The rules-core contract every game implements (modelled on OpenSpiel's Game/State split).

A ``Game`` holds the fixed facts of one rule set (``GameSpec``) and makes initial states.
A ``State`` is an immutable-by-convention position: ``child(action)`` returns a new state.
Envs, searchers and trainers talk to games only through this contract.

Games whose hot paths are compiled also expose ``KernelState``: the position is a compact
``int64`` array and a ``Kernels`` record of numba functions works on it in place
(``push``/``pop``), so a search can run millions of nodes per second without Python objects.
The object API stays the public face; the kernels are the unchecked fast path underneath
(``State.child`` validates, ``Kernels.push`` does not).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.core.errors import NumbaExperimentalFeatureWarning

CHANCE = -1
"""``current_player()`` at a chance node (Trap landing cell, Threes card, Friday shuffle)."""
TERMINAL = -4
"""``current_player()`` once the game is over (OpenSpiel's value)."""

ONGOING = -1
"""``Kernels.outcome`` while nobody has won yet."""
DRAW = 2
"""``Kernels.outcome`` of a drawn two-player game (0 and 1 name the winner)."""

# Every compact state array starts with these slots; a game's own slots follow from HEADER.
TO_MOVE, PLY, OUTCOME, KEY, LAST = range(5)
HEADER = 5


@njit(cache=True)
def k_to_move(s):
    """The player to move, read from the common header (a ``Kernels.to_move`` for any game)."""
    return s[TO_MOVE]


@njit(cache=True)
def k_outcome(s):
    """``ONGOING``, the winner or ``DRAW``, from the common header (a ``Kernels.outcome``)."""
    return s[OUTCOME]


@njit(cache=True)
def terminal_value(s, player, win):
    """What the finished game ``s`` is worth to ``player`` on a scale of ``win``: ``win`` when the
    header's outcome names them, ``-win`` when it names the other player, 0 at a draw (every
    two-player evaluator owns its win scale, so it passes its own)."""
    out = s[OUTCOME]
    if out == DRAW:
        return 0.0
    return win if out == player else -win


@njit(cache=True)
def win_loss(s, player, params):
    """The evaluator kernel that knows only the rules: +1 won, -1 lost, 0 otherwise (a search's
    baseline, and a whole solver for a game searched to the end)."""
    if s[OUTCOME] != ONGOING:
        return terminal_value(s, player, 1.0)
    return 0.0


@njit(cache=True)
def cell_features(s, first, cells, out):
    """The binary features of a board kept in ``s[first:first + cells]`` (0 empty, ``p + 1`` a
    piece of player ``p``), seen by the player to move, so that a network reads every position
    from the side that decides: feature ``2 * cell`` is their piece, ``2 * cell + 1`` the
    opponent's. Written to ``out`` in cell order; returns how many."""
    me = s[TO_MOVE] + 1
    n = 0
    for c in range(cells):
        v = s[first + c]
        if v != 0:
            out[n] = 2 * c + (0 if v == me else 1)
            n += 1
    return n


@njit(cache=True)
def k_key(s):
    """The position key kept in the common header (a ``Kernels.key``)."""
    return s[KEY]


@njit(cache=True)
def splitmix_uniform(state):
    """A uniform number in [0, 1) from the splitmix64 generator kept in ``state[0]`` (advanced).

    Compiled searches take their randomness this way: an int64 array passes through numba's
    first-class function types, a numpy Generator does not."""
    z = np.uint64(state[0]) + np.uint64(0x9E3779B97F4A7C15)
    state[0] = np.int64(z)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def pick_outcome(outcomes, probs, n, u):
    """The outcome among ``outcomes[:n]`` that the uniform number ``u`` falls on, the
    probabilities ``probs[:n]`` laid end to end (the last one if rounding leaves ``u`` past them):
    how compiled code samples a chance node."""
    acc = 0.0
    for i in range(n):
        acc += probs[i]
        if u < acc:
            return outcomes[i]
    return outcomes[n - 1]


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this position."""

    def __init__(self, action: Any, legal: Sequence[int], where: str = "") -> None:
        self.action = action
        self.legal = list(legal)
        place = f" {where}" if where else ""
        super().__init__(f"illegal action {action!r}{place}; legal actions are {self.legal}")


@dataclass(frozen=True)
class GameSpec:
    """The fixed facts of one rule set: what a search, an env or a network needs up front."""

    name: str
    num_players: int
    num_actions: int
    max_game_length: int
    min_utility: float
    max_utility: float
    observation_shape: tuple[int, ...]
    options: dict[str, Any] = field(default_factory=dict)
    chance: bool = False
    max_chance_outcomes: int = 0
    """Largest chance outcome id + 1 (chance outcomes have their own id space)."""


class Game(ABC):
    """A rule set: its spec and its initial state."""

    spec: GameSpec

    @abstractmethod
    def new_initial_state(self) -> State:
        """Return the position before the first move."""

    def feature_symmetries(self) -> list[np.ndarray]:
        """Permutations ``perm`` of the states' input features with value(x[perm]) == value(x),
        the identity first; training applies a random one to each batch. Only the identity
        unless a game knows its symmetries."""
        return [np.arange(kernel_state(self.new_initial_state()).num_features)]

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.spec.options.items())
        return f"{type(self).__name__}({opts})"


class State(ABC):
    """One position. Never mutated after construction; ``child`` makes the next one."""

    game: Game

    @abstractmethod
    def current_player(self) -> int:
        """0..n-1, ``CHANCE`` or ``TERMINAL``."""

    @abstractmethod
    def legal_actions(self) -> list[int]:
        """Legal actions, in the game's own order (searches use it to break ties)."""

    def legal_action_mask(self) -> np.ndarray:
        """An int8 mask over ``num_actions`` (the sb3-contrib MaskablePPO convention)."""
        mask = np.zeros(self.game.spec.num_actions, dtype=np.int8)
        mask[self.legal_actions()] = 1
        return mask

    @abstractmethod
    def child(self, action: int) -> State:
        """The position after ``action``; raises ``IllegalActionError`` if it is not legal."""

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(outcome, probability) pairs at a chance node."""
        raise ValueError(f"{type(self).__name__} has no chance nodes")

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    @abstractmethod
    def returns(self) -> np.ndarray:
        """Utility per player (zeros until the game is over)."""

    @abstractmethod
    def observation(self, player: int) -> np.ndarray:
        """The float32 tensor of ``spec.observation_shape`` seen by ``player``."""

    @abstractmethod
    def key(self) -> int:
        """A 64-bit identity of the position, for transposition tables."""

    @abstractmethod
    def to_text(self) -> str:
        """A deterministic drawing of the position for terminals and logs."""

    def action_to_string(self, action: int) -> str:
        return str(action)

    def string_to_action(self, text: str) -> int:
        """Parse a move as people write it; raises ``IllegalActionError`` on bad input."""
        action = self._number(text, text.strip(), "(not a number)")
        if action not in self.legal_actions():
            raise IllegalActionError(action, self.legal_actions())
        return action

    def _number(self, text: str, word: str, hint: str) -> int:
        """``word``, read from ``text``, as an action number; else an ``IllegalActionError`` naming
        ``text`` with ``hint`` (what to type), the one message every game's parser gives."""
        try:
            return int(word)
        except ValueError:
            raise IllegalActionError(text, self.legal_actions(), hint) from None

    def __str__(self) -> str:
        return self.to_text()


class Kernels(NamedTuple):
    """Compiled (numba ``@njit``) functions over a game's compact ``int64`` state array ``s``.

    They mutate ``s`` in place and never validate: the object API does that.

    - ``moves(s, out) -> n``: write the legal actions, in the game's own order, to ``out[:n]``
      (``n = 0`` once the game is over).
    - ``push(s, action)``: play ``action``; ``pop(s)`` takes the last pushed action back.
    - ``to_move(s) -> int``: the player to move (0/1) even when the game is over.
    - ``outcome(s) -> int``: ``ONGOING``, the winner (0/1) or ``DRAW``.
    - ``key(s) -> int64``: the position's hash (kept incrementally by push/pop).
    - ``features(s, out) -> n``: indices of the active binary input features, seen by the
      player to move; a value network's first layer sums its columns over them.
    - ``chance(s, outcomes, probs) -> n``: at a chance node (``to_move`` is ``CHANCE``), its
      outcomes (actions for ``push``) and their probabilities; 0 at a decision node. ``None``
      for games without chance. Every searcher with chance nodes reads it from here.
    - ``undo``: False when ``pop`` is not implemented (the state is small enough to copy, as
      Threes' is); searchers then copy the state before each push instead.
    - ``sample(s, rng_state)``: resolve pending chance in place with the splitmix64 numbers of
      ``rng_state`` (``splitmix_uniform``), a game's own sampler; ``None``: searches that sample
      draw through ``chance`` and ``pick_outcome``.
    - ``determinize(s, rng_state)``: fix what is hidden in ``s`` to one sampled world (Friday's
      shuffled stack put in order) before a search from it; ``None``: nothing to fix.
    """

    moves: Any
    push: Any
    pop: Any
    to_move: Any
    outcome: Any
    key: Any
    features: Any
    chance: Any = None
    undo: bool = True
    sample: Any = None
    determinize: Any = None

    def rules(self, moves: Any = None) -> tuple[Any, Any, Any, Any, Any, Any]:
        """(moves, push, pop, to_move, outcome, key) as the compiled searches take them, one
        argument of type ``RULES_T``; ``moves`` stands in for the move generator (a narrower
        candidate generator, Trap's)."""
        return (self.moves if moves is None else moves, self.push, self.pop, self.to_move, self.outcome, self.key)


# First-class function types are how compiled searches take kernels (below). numba prints a notice
# that they are experimental wherever it meets a tuple of them (building a tuple type, typing a
# tuple of kernels at a call), once a process on stderr; only that notice is silenced, for every
# user of the package, whose command-line errors and warnings are meant to be one line each.
warnings.filterwarnings(
    "ignore", message=".*First-class function type feature is experimental", category=NumbaExperimentalFeatureWarning
)

# Numba types of the kernels. Compiled searches take kernels as arguments of these first-class
# function types (declared in explicit signatures) rather than as dispatcher objects: numba's
# on-disk cache cannot save a function specialised on dispatcher arguments once a second
# specialisation exists ("underlying object has vanished"), while one signature over function
# types is compiled once, cached, and serves every game and evaluator.
STATE_T = types.int64[::1]
MOVES_T = types.FunctionType(types.int64(STATE_T, types.int64[::1]))
PUSH_T = types.FunctionType(types.none(STATE_T, types.int64))
POP_T = types.FunctionType(types.none(STATE_T))
INT_OF_STATE_T = types.FunctionType(types.int64(STATE_T))
FEATURES_T = MOVES_T
EVAL_T = types.FunctionType(types.float64(STATE_T, types.int64, types.float64[::1]))
"""``evaluator.kernel(s, player, params) -> value for player``."""
CHANCE_T = types.FunctionType(types.int64(STATE_T, types.int64[::1], types.float64[::1]))
"""``kernels.chance(s, outcomes, probs) -> n``: a chance node's outcomes and their probabilities."""

RULES_T = types.Tuple((MOVES_T, PUSH_T, POP_T, INT_OF_STATE_T, INT_OF_STATE_T, INT_OF_STATE_T))
"""``Kernels.rules()``: the kernels a compiled search walks the tree with, one argument, so the
searches' recursive calls stay short."""


@njit(cache=True)
def no_chance(s, outcomes, probs):
    """The ``chance`` kernel a compiled search or batch is given for a game without one: never
    a chance outcome."""
    return 0


def sample_outcome(state: State, rng: np.random.Generator) -> int:
    """One outcome of chance node ``state``, drawn from its distribution with ``rng`` (the one
    draw every env, game loop and checker makes, so seeded games agree everywhere)."""
    outcomes = state.chance_outcomes()
    probs = np.array([p for _, p in outcomes], dtype=float)
    return int(outcomes[rng.choice(len(outcomes), p=probs / probs.sum())][0])


class KernelState(State):
    """A State stored as a compact int64 array that ``Kernels`` can search in place."""

    kernels: Kernels
    num_features: int
    observe: Any = None
    """The compiled ``observe(s, player, out)`` that fills ``observation``'s float32 planes (a
    game's ``k_observation``, set as a ``staticmethod``); a game whose observation is more than
    one kernel call overrides ``observation`` instead."""

    def __init__(self, game: Game, array: np.ndarray) -> None:
        self.game = game
        self._s = array

    def observation(self, player: int) -> np.ndarray:
        """The planes of ``spec.observation_shape`` seen by ``player`` (the class's ``observe``)."""
        if self.observe is None:
            raise NotImplementedError(f"{type(self).__name__} has no observation kernel")
        obs = np.empty(self.game.spec.observation_shape, dtype=np.float32)
        self.observe(self._s, player, obs)
        return obs

    @property
    def array(self) -> np.ndarray:
        """A copy of the compact state (the search mutates its own copy)."""
        return self._s.copy()

    def _moves(self) -> np.ndarray:
        spec = self.game.spec
        out = np.empty(max(spec.num_actions, spec.max_chance_outcomes), dtype=np.int64)
        n = self.kernels.moves(self._s, out)
        return out[:n]

    def legal_actions(self) -> list[int]:
        return self._moves().tolist()

    def current_player(self) -> int:
        if self.kernels.outcome(self._s) != ONGOING:
            return TERMINAL
        return int(self.kernels.to_move(self._s))

    def winner(self) -> int | None:
        """The winning player, or None for a draw or an unfinished game."""
        out = int(self.kernels.outcome(self._s))
        return out if out in (0, 1) else None

    def status_line(self, marks: str) -> str:
        """The line under a two-player board's drawing: who won, a draw, or who is to move, each
        player by its mark (``marks[player + 1]``) and its number."""
        out = self.winner()
        if out is not None:
            return f"{marks[out + 1]} (player {out}) wins"
        if self.is_terminal():
            return "draw"
        p = self.current_player()
        return f"{marks[p + 1]} (player {p}) to move"

    def returns(self) -> np.ndarray:
        out = int(self.kernels.outcome(self._s))
        if out in (0, 1):
            r = np.full(2, -1.0)
            r[out] = 1.0
            return r
        return np.zeros(2)

    def child(self, action: int) -> KernelState:
        try:
            a = int(action)
        except (TypeError, ValueError):
            raise IllegalActionError(action, self.legal_actions(), "(not an integer)") from None
        if a != action or a not in self._moves():
            raise IllegalActionError(action, self.legal_actions(), self._why_illegal(a))
        return self._unchecked_child(a)

    def _why_illegal(self, action: int) -> str:
        """What an illegal ``action`` ran into, for its error message (a game's rules can say
        more than "not legal": the game is over, a card is being drawn)."""
        return ""

    def _unchecked_child(self, action: int) -> KernelState:
        s = self._s.copy()
        self.kernels.push(s, action)
        return type(self)(self.game, s)

    def key(self) -> int:
        return int(self.kernels.key(self._s))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(outcome, probability) pairs at a chance node, from the ``chance`` kernel."""
        if self.kernels.chance is None:
            raise ValueError(f"{type(self).__name__} has no chance nodes")
        if self.current_player() != CHANCE:
            raise ValueError("chance_outcomes() called at a decision node")
        out = np.empty(max(self.game.spec.max_chance_outcomes, 1), dtype=np.int64)
        probs = np.empty(len(out))
        n = self.kernels.chance(self._s, out, probs)
        return list(zip(out[:n].tolist(), probs[:n].tolist()))

    def active_features(self) -> np.ndarray:
        """Indices of the binary features seen by the player to move (a network's input)."""
        out = np.empty(self.num_features, dtype=np.int64)
        n = self.kernels.features(self._s, out)
        return out[:n]

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and np.array_equal(self._s, other._s)

    def __hash__(self) -> int:
        return self.key()

    def __reduce__(self):
        return (type(self), (self.game, self._s.copy()))


def kernel_state(state: State) -> KernelState:
    """``state`` as the KernelState that compiled code steps in place; a ValueError (as a search
    gives for a state it has no compiled path for) where its game has no kernels."""
    if not isinstance(state, KernelState):
        raise ValueError(f"{type(state).__name__} is not a KernelState: its game has no compiled kernels")
    return state
