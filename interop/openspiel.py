"""tablegym's games as OpenSpiel games, and OpenSpiel's Python MCTS as a tablegym agent.

Importing this module registers every game of the registry that has rules (the starship
generator has none) as a pyspiel Python game named ``python_tablegym_<name>`` (a '-' in the name
becomes '_'), its rule options as game parameters with the game's own defaults (Threes'
``hint="+"`` is spelled ``hint=plus``: OpenSpiel reads a value starting with '+' as a number)::

    >>> import pyspiel, tablegym.interop.openspiel
    >>> game = pyspiel.load_game("python_tablegym_trilobite(width=5,height=4)")
    >>> game.num_distinct_actions(), game.max_game_length()
    (5, 20)
    >>> state = game.new_initial_state()
    >>> state.apply_action(2); state.current_player()
    1

The states run on the game's one rules core (a tablegym ``State`` inside each): nothing is
written twice. What OpenSpiel learns of a game comes from its ``GameSpec``:

- sequential moves, terminal rewards (a finished game's ``returns()``; zeros before, Threes'
  running score included, so that the Python MCTS, which wants terminal rewards, applies);
- explicit stochastic chance where the spec has chance (Trap's landing cell, Threes' card and
  insertion line, Friday's draws), with the core's outcome probabilities; deterministic
  otherwise;
- perfect information for every game: Friday's hidden stack order is not in the state at all
  (its draws are chance nodes weighted by the cards left), so no player ever holds a secret;
- zero-sum for the two-player games (+1/-1, 0 for a draw), general-sum for the single-player
  ones; the utility range, the number of actions and of chance outcomes and the maximum game
  length are the spec's (Trap's and Friday's lengths are the spec's upper bounds: Trap's counts
  its landings too, Friday's is the soft cap its env truncates at).

Legal actions and chance outcomes are listed in increasing order, as OpenSpiel wants; the
observation tensor is the core's ``observation(player)`` (its shape is the spec's), the
observation string its ``to_text()``. ``clone()`` shares the immutable tablegym state.

A state string is the action history and nothing else: ``state.serialize()`` writes one action a
line, chance outcomes included (OpenSpiel's own history form), and ``game.deserialize_state(text)``
replays it from the first position, each action checked against the legal ones, at most
``max_game_length`` of them (``max_actions=`` raises the budget); the rule options travel as the
game's parameters, in the game string. OpenSpiel's own writer and reader of Python states pickle
the state's attributes into a ``__dict__=`` field and unpickle it, so a forged string runs code;
tablegym's refuse that field like any string they cannot read (``StateStringError``, one line).
Importing this module puts tablegym's pair in front of ``pyspiel.serialize_game_and_state`` and
``pyspiel.deserialize_game_and_state`` for strings that name a tablegym game (other games' go
straight to OpenSpiel). OpenSpiel's C++ code calls its own pair, which Python cannot override, so
these still pickle and unpickle: ``pyspiel.random_sim_test(serialize=True)``, pickling or copying
a state (pybind11's ``__getstate__``/``__setstate__``), the unbound bindings
``pyspiel.State.serialize`` and ``pyspiel.Game.deserialize_state``, and the C++
``pyspiel.deserialize_game_and_state`` (its ``__wrapped__`` now) held from before this module was
imported: never give them a string from outside.

``TablegymGame.new_initial_state(state)`` also wraps a position reached outside OpenSpiel (a
match's state): its OpenSpiel history then starts there, so it has no state string
(``UnserializableStateError``). ``MCTSAgent`` is how the agent spec
``openspiel-mcts`` (tablegym.interop) plays: OpenSpiel's ``MCTSBot`` with random rollouts or a
tablegym evaluator as its value function, on that wrapped position.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from tablegym.envs import GamePlugin, make_game, plugin, plugins
from tablegym.envs.core import CHANCE, TERMINAL, Game, State

__all__ = [
    "GAMES",
    "MCTSAgent",
    "StateStringError",
    "TablegymGame",
    "TablegymState",
    "UnserializableStateError",
    "deserialize_game_and_state",
    "game_type",
    "openspiel_game",
    "register_games",
    "serialize_game_and_state",
    "short_name",
]

PREFIX = "python_tablegym_"

_PLAYER = {CHANCE: pyspiel.PlayerId.CHANCE, TERMINAL: pyspiel.PlayerId.TERMINAL}
"""tablegym's special players -> OpenSpiel's (the numbers agree; the mapping says so)."""


def short_name(name: str) -> str:
    """The OpenSpiel name of tablegym game ``name``: ``python_tablegym_trilobite_tiny``."""
    return PREFIX + name.replace("-", "_")


_SPELLED = {"+": "plus"}
"""Option values OpenSpiel's game-string parser cannot read back, and their parameter spelling
(a value starting with '+' is taken for a number: Threes' ``hint="+"`` is ``hint=plus``)."""
_UNSPELLED = {v: k for k, v in _SPELLED.items()}


def _params(options: Mapping[str, Any], record: GamePlugin) -> dict[str, Any]:
    """A game's rule options as OpenSpiel parameters (the record's options only)."""
    return {k: _SPELLED.get(v, v) if isinstance(v, str) else v for k, v in options.items() if k in record.options}


def _options(params: Mapping[str, Any]) -> dict[str, Any]:
    """OpenSpiel parameters as the game's rule options."""
    return {k: _UNSPELLED.get(v, v) if isinstance(v, str) else v for k, v in params.items()}


def _defaults(record: GamePlugin) -> dict[str, Any]:
    """The record's rule options, as parameters, with the values its default game has."""
    return _params(make_game(record.name).spec.options, record)


def game_type(record: GamePlugin, spec=None) -> pyspiel.GameType:
    """The ``GameType`` of a registered game (``spec``: its default game's, when not given)."""
    spec = spec or make_game(record.name).spec
    two = spec.num_players == 2
    return pyspiel.GameType(
        short_name=short_name(record.name),
        long_name=f"tablegym {record.name}: {record.doc}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=(
            pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC if spec.chance else pyspiel.GameType.ChanceMode.DETERMINISTIC
        ),
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if two else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=spec.num_players,
        min_num_players=spec.num_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_defaults(record),
    )


class TablegymGame(pyspiel.Game):
    """A tablegym game under OpenSpiel's API; one subclass per registry record (``record``)."""

    record: GamePlugin

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        params = {**_defaults(self.record), **(params or {})}
        game = make_game(self.record.name, **_options(params))
        spec = game.spec
        info = pyspiel.GameInfo(
            num_distinct_actions=spec.num_actions,
            max_chance_outcomes=spec.max_chance_outcomes,
            num_players=spec.num_players,
            min_utility=spec.min_utility,
            max_utility=spec.max_utility,
            utility_sum=0.0 if spec.num_players == 2 else None,
            max_game_length=spec.max_game_length,
        )
        super().__init__(game_type(self.record, spec), info, params)
        self.tablegym_game: Game = game
        """The tablegym game (rules core) the states run on."""

    def new_initial_state(self, state: State | None = None) -> TablegymState:
        """The position before the first move, or the tablegym position ``state`` of this game
        (its OpenSpiel history starts there)."""
        return TablegymState(self, state)

    def deserialize_state(self, text: str, *, max_actions: int | None = None) -> TablegymState:
        """The state whose ``serialize()`` is ``text``: its action history (one action a line,
        chance outcomes included) replayed from the first position, each action checked against
        the legal ones. OpenSpiel's own reader unpickles a ``__dict__=`` field (code, in a forged
        string); this one reads integers only, at most ``max_actions`` of them (default the
        game's ``max_game_length``, which bounds every history, chance included), and raises
        ``StateStringError`` on anything else."""
        limit = self.max_game_length() if max_actions is None else max_actions
        state = self.new_initial_state()
        for line, action in enumerate(_history(text, limit), 1):
            legal = state.legal_actions()
            if action not in legal:
                there = f"; legal: {legal}" if legal else ": the game is over"
                raise StateStringError(f"line {line} of the state string plays {action}, which is not legal there{there}")
            state.apply_action(action)
        return state

    def make_py_observer(self, iig_obs_type=None, params=None):
        """The observer of the core's observation tensor; the history for perfect-recall
        information states (a perfect-information game's public information)."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return Observer(self.tablegym_game.spec.observation_shape, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class _Shared:
    """A tablegym state held by OpenSpiel states: immutable by convention, so ``clone()`` (a deep
    copy of the Python attributes) shares it instead of copying its game."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict) -> _Shared:
        return self

    def __reduce__(self):
        return (_Shared, (self.state,))


class TablegymState(pyspiel.State):
    """An OpenSpiel state over a tablegym ``State`` (``tablegym_state``)."""

    def __init__(self, game: TablegymGame, state: State | None = None) -> None:
        super().__init__(game)
        if state is not None and state.game.spec != game.tablegym_game.spec:
            raise ValueError(f"a state of {state.game!r} given to the OpenSpiel game of {game.tablegym_game!r}")
        self._held = _Shared(game.tablegym_game.new_initial_state() if state is None else state)
        self._from_start = state is None
        """Whether the OpenSpiel history starts at the game's first position (a wrapped
        position's starts where it was wrapped, so it has no state string)."""

    @property
    def tablegym_state(self) -> State:
        """The tablegym position (immutable: apply actions to this OpenSpiel state instead)."""
        return self._held.state

    def current_player(self) -> int:
        player = self._held.state.current_player()
        return _PLAYER.get(player, player)

    def is_terminal(self) -> bool:
        return self._held.state.is_terminal()

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self._held.state.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return sorted(self._held.state.chance_outcomes())

    def _apply_action(self, action: int) -> None:
        self._held = _Shared(self._held.state.child(int(action)))

    def _action_to_string(self, player: int, action: int) -> str:
        return self._held.state.action_to_string(int(action))

    def returns(self) -> list[float]:
        state = self._held.state
        if not state.is_terminal():
            return [0.0] * state.game.spec.num_players
        return [float(r) for r in state.returns()]

    def __str__(self) -> str:
        return self._held.state.to_text()

    def serialize(self) -> str:
        """The action history, one action a line (chance outcomes included): what
        ``TablegymGame.deserialize_state`` replays. No Python attribute is written, so no reader
        ever has a pickle to load (OpenSpiel's own form for Python states pickles them)."""
        if not self._from_start:
            raise UnserializableStateError(
                f"a position wrapped from outside OpenSpiel ({self.get_game()}.new_initial_state(state)) has no history "
                "from the first position, so no state string; serialise the game's own actions from its start instead"
            )
        return "\n".join(map(str, self.history())) + "\n"


# ---- state strings: the action history, never a pickle -----------------------------------------


class StateStringError(ValueError):
    """A state string (or game-and-state string) tablegym does not read: a ``__dict__=`` field, a
    line that is not an action, an illegal action, more lines than the budget. The message names
    the problem and what is read instead."""


class UnserializableStateError(ValueError):
    """A state with no state string: a position wrapped from outside OpenSpiel, whose history does
    not start at the game's first position."""


_PICKLED = "__dict__="
"""The field in which OpenSpiel's C++ writer puts a Python state's attributes, pickled."""

_READ = "a tablegym state string is its action history, one action (an integer) per line"

_DIGITS = 19
"""The most digits of an action (an int64's)."""

_ACTION = re.compile(f"[0-9]{{1,{_DIGITS}}}")
"""An action as a line of a state string: ASCII digits only (``int()`` would also take signs,
spaces, underscores and other scripts' digits)."""


def _shown(text: str, width: int = 40) -> str:
    """``repr`` of ``text``, cut to ``width`` characters (a forged line can be megabytes)."""
    return repr(text) if len(text) <= width else f"{text[:width]!r}... ({len(text)} characters)"


def _history(text: str, max_actions: int) -> list[int]:
    """The actions of state string ``text``, sized up before it is split: at most
    ``max_actions`` lines of at most ``_DIGITS`` digits each."""
    if not isinstance(text, str):
        raise StateStringError(f"a state string is a str, not {type(text).__name__}: {_READ}")
    if _PICKLED in text:
        raise StateStringError(f"a state string with a {_PICKLED!r} field (pickled Python attributes) is refused: {_READ}")
    lines = text.count("\n")
    if lines > max_actions + 1 or len(text) > (max_actions + 1) * (_DIGITS + 1):
        raise StateStringError(
            f"a state string of {lines} lines ({len(text)} characters) is longer than the game's "
            f"longest history, {max_actions} actions; pass a larger max_actions to read it"
        )
    body = text.rstrip("\n")
    actions = body.split("\n") if body else []
    if len(actions) > max_actions:
        raise StateStringError(
            f"a state string of {len(actions)} lines is longer than the game's longest history, "
            f"{max_actions} actions; pass a larger max_actions to read it"
        )
    for line, action in enumerate(actions, 1):
        if not _ACTION.fullmatch(action):
            raise StateStringError(f"line {line} of the state string is {_shown(action)}, not an action: {_READ}")
    return [int(a) for a in actions]


_SECTIONS = ("[Meta]", "[Game]", "[State]")
"""The section headers of an OpenSpiel game-and-state string, in their order."""


def _sections(data: str) -> tuple[str, str]:
    """The game string and the state string of game-and-state string ``data``, its lines read as
    OpenSpiel's ``DeserializeGameAndState`` reads them (blank lines and '#' comments skipped, the
    headers in order) up to the [State] header; the state string is the rest, as written."""
    section, start, number = -1, 0, 0
    game: list[str] = []
    while start <= len(data):
        end = data.find("\n", start)
        end = len(data) if end < 0 else end
        line, number = data[start:end], number + 1
        if line and line[0] != "#":
            if line in _SECTIONS:
                if _SECTIONS.index(line) != section + 1:
                    raise StateStringError(
                        f"section {line} out of order at line {number}: a game-and-state string has "
                        f"the sections {', '.join(_SECTIONS)}, in that order"
                    )
                section += 1
                if section == 2:
                    return "\n".join(game), data[end + 1 :]
            elif section < 0:
                raise StateStringError(
                    f"line {number} of the game-and-state string, {_shown(line)}, comes before the "
                    f"[Meta] section: a game-and-state string has the sections {', '.join(_SECTIONS)}"
                )
            elif section == 1:
                game.append(line)
        start = end + 1
    raise StateStringError(
        f"no [State] section in the game-and-state string: it has the sections {', '.join(_SECTIONS)}, in that order"
    )


_OPENSPIEL_SERIALIZE = getattr(pyspiel.serialize_game_and_state, "__wrapped__", pyspiel.serialize_game_and_state)
_OPENSPIEL_DESERIALIZE = getattr(pyspiel.deserialize_game_and_state, "__wrapped__", pyspiel.deserialize_game_and_state)


def serialize_game_and_state(game: pyspiel.Game, state: pyspiel.State) -> str:
    """``pyspiel.serialize_game_and_state`` (this module puts it there): a tablegym state's
    string is its ``serialize()``, the history (OpenSpiel's C++ writer would pickle the state's
    Python attributes); other games' strings are OpenSpiel's."""
    if not isinstance(state, TablegymState):
        return _OPENSPIEL_SERIALIZE(game, state)
    return (
        f"# Automatically generated by OpenSpiel SerializeGameAndState\n[Meta]\nVersion: 1\n\n"
        f"[Game]\n{game.serialize()}\n[State]\n{state.serialize()}\n"
    )


def deserialize_game_and_state(data: str | bytes, *, max_actions: int | None = None) -> tuple[pyspiel.Game, pyspiel.State]:
    """``pyspiel.deserialize_game_and_state`` (this module puts it there): a string naming a
    tablegym game is read by its ``deserialize_state`` (``max_actions`` passed on), never by
    OpenSpiel's C++ reader, which unpickles the ``__dict__=`` field of Python states; a string
    naming none goes to OpenSpiel's. Bytes (which OpenSpiel's binding also takes) are read as
    UTF-8."""
    if isinstance(data, (bytes, bytearray)):
        if PREFIX.encode() not in data:
            return _OPENSPIEL_DESERIALIZE(data)
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StateStringError(
                f"a game-and-state string of bytes that are not UTF-8 ({exc.reason} at byte "
                f"{exc.start}): it is text, its sections {', '.join(_SECTIONS)}"
            ) from None
    elif not isinstance(data, str) or PREFIX not in data:
        return _OPENSPIEL_DESERIALIZE(data)
    game_text, state_text = _sections(data)
    game = pyspiel.deserialize_game(game_text)
    if isinstance(game, TablegymGame):
        return game, game.deserialize_state(state_text, max_actions=max_actions)
    # an OpenSpiel game over a tablegym one (a transform): its C++ reader replays the history
    lines = [line for line in state_text.split("\n") if line and line[0] != "#"]
    return game, game.deserialize_state("\n".join(lines))


serialize_game_and_state.__wrapped__ = _OPENSPIEL_SERIALIZE  # type: ignore[attr-defined]
deserialize_game_and_state.__wrapped__ = _OPENSPIEL_DESERIALIZE  # type: ignore[attr-defined]


class Observer:
    """The PyObserver of a tablegym game: ``tensor`` is ``observation(player)`` flattened,
    ``dict["observation"]`` the same memory in the spec's shape."""

    def __init__(self, shape: tuple[int, ...], params: Mapping[str, Any] | None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: TablegymState, player: int) -> None:
        self.tensor[:] = state.tablegym_state.observation(player).ravel()

    def string_from(self, state: TablegymState, player: int) -> str:
        return str(state)


def register_games() -> dict[str, type[TablegymGame]]:
    """Register with pyspiel every registry game with rules not registered yet (this module
    does so on import; call it again after ``tablegym.envs.register`` adds a game); returns the
    new games' classes by tablegym name (also added to ``GAMES``)."""
    classes = {}
    for record in plugins():
        if not record.game or short_name(record.name) in pyspiel.registered_names():
            continue
        title = "".join(part.capitalize() for part in record.name.split("-"))
        cls = type(
            f"{title}OpenSpielGame",
            (TablegymGame,),
            {"record": record, "__doc__": f"tablegym's {record.name} as an OpenSpiel game."},
        )
        pyspiel.register_game(game_type(record), cls)
        classes[record.name] = cls
    GAMES.update(classes)
    return classes


GAMES: dict[str, type[TablegymGame]] = {}
"""The OpenSpiel game class of each registered tablegym game, by its tablegym name."""
register_games()
# Python callers of pyspiel's pair (OpenSpiel's rl_environment and mcts_agent among them) get
# tablegym's for tablegym games: OpenSpiel's would unpickle a state string's __dict__= field.
pyspiel.serialize_game_and_state = serialize_game_and_state
pyspiel.deserialize_game_and_state = deserialize_game_and_state


def openspiel_game(game: Game) -> TablegymGame:
    """The OpenSpiel game of tablegym ``game``'s rules (its record's options as parameters)."""
    record = plugin(game.spec.name)
    return pyspiel.load_game(short_name(record.name), _params(game.spec.options, record))


# ---- OpenSpiel's MCTS as a tablegym agent --------------------------------------------------------


class ValueFunction(mcts.Evaluator):
    """A tablegym evaluator as an MCTS leaf value: ``value / scale`` (evaluator units per unit of
    the game's utility), cut to the game's utility range; the other player's is its negation in
    a two-player game. A leaf at a chance node is valued at one sampled outcome."""

    def __init__(self, evaluator, spec, *, scale: float, random_state: np.random.RandomState) -> None:
        self.evaluator = evaluator
        self.spec = spec
        self.scale = scale
        self._random = random_state

    def evaluate(self, state: TablegymState) -> np.ndarray:
        s = state.tablegym_state
        while s.current_player() == CHANCE:
            outcomes, probs = zip(*s.chance_outcomes())
            s = s.child(int(self._random.choice(outcomes, p=np.asarray(probs) / sum(probs))))
        if s.is_terminal():
            return np.asarray(s.returns(), dtype=float)
        v = float(np.clip(self.evaluator(s, 0) / self.scale, self.spec.min_utility, self.spec.max_utility))
        return np.array([v, -v]) if self.spec.num_players == 2 else np.array([v])

    def prior(self, state: TablegymState) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(legal)) for a in legal]


class _OutOfTime(Exception):
    pass


class TimedMCTSBot(mcts.MCTSBot):
    """OpenSpiel's ``MCTSBot`` that also stops once ``time_limit`` seconds have passed (after
    the simulation under way, and not before the root has children: two simulations)."""

    def __init__(self, *args, time_limit: float | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.time_limit = time_limit
        self._deadline = math.inf
        self._root = None

    def mcts_search(self, state):
        self._deadline = math.inf if self.time_limit is None else time.perf_counter() + self.time_limit
        try:
            return super().mcts_search(state)
        except _OutOfTime:
            return self._root

    def _apply_tree_policy(self, root, state):
        if root.children and time.perf_counter() > self._deadline:
            self._root = root
            raise _OutOfTime
        return super()._apply_tree_policy(root, state)


class MCTSAgent:
    """A tablegym agent playing OpenSpiel's Python MCTS (``MCTSBot``, UCT constant ``uct_c``)
    on the OpenSpiel game of its tablegym game: ``sims`` simulations a move (None: no cap) and
    at most ``time_limit`` seconds, leaves valued by ``rollouts`` random playouts
    (``RandomRolloutEvaluator``) or by ``evaluator`` (``ValueFunction``: ``scale`` evaluator
    units make one unit of utility; default its ``win_value`` where it has one, else 1). Each
    decision seeds OpenSpiel's generators from the match's ``rng``."""

    def __init__(
        self,
        game: Game,
        *,
        sims: int | None = 1000,
        rollouts: int = 1,
        evaluator=None,
        scale: float | None = None,
        time_limit: float | None = None,
        uct_c: float = 2.0,
        name: str = "openspiel-mcts",
    ) -> None:
        if sims is None and time_limit is None:
            raise ValueError("an OpenSpiel MCTS needs a budget: sims or time")
        self.openspiel_game = openspiel_game(game)
        self.sims = sims
        self.rollouts = rollouts
        self.evaluator = evaluator
        self.scale = float(scale) if scale else float(getattr(evaluator, "win_value", 1.0))
        self.time_limit = time_limit
        self.uct_c = uct_c
        self.name = name
        self.last_simulations = 0
        """How many simulations the last decision made."""

    def _leaf_values(self, random_state: np.random.RandomState) -> mcts.Evaluator:
        if self.evaluator is None:
            return mcts.RandomRolloutEvaluator(n_rollouts=self.rollouts, random_state=random_state)
        return ValueFunction(self.evaluator, self.openspiel_game.tablegym_game.spec, scale=self.scale, random_state=random_state)

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        random_state = np.random.RandomState(int(rng.integers(2**32)))
        bot = TimedMCTSBot(
            self.openspiel_game,
            self.uct_c,
            self.sims or 2**62,
            self._leaf_values(random_state),
            random_state=random_state,
            time_limit=self.time_limit,
        )
        root = bot.mcts_search(self.openspiel_game.new_initial_state(state))
        self.last_simulations = root.explore_count
        return int(root.best_child().action)
