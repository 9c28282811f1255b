"""Batched envs: N boards of one game in one ``int64`` array, stepped by one compiled call.

A game whose rules core has ``Kernels`` (envs/core.py) gets a ``gymnasium.vector.VectorEnv``
here without a rule written twice: ``step`` hands every board, every action and every board's
random stream to one numba function, which plays the agent's move, the chance nodes and the
other seat (a uniformly random legal move, a compiled search, or nobody: self-play) through the
game's own kernels, auto-resets the boards that ended on the step before, and writes the batched
observations, rewards, terminations and legal-action masks. Python runs once per step, never
once per board. A search as the other seat is the searcher's own compiled root search
(search/alphabeta_search.py, search/expectiminimax_search.py) with the evaluator kernel and depth of the agent
that the same ``opponent`` spec builds by the one route (``SearchOpponent``, in
tablegym.search.batch_opponent: the search layer hands the batch its move function).

The steps of a two-player batch against a random seat or in self-play are compiled for each
game, its kernels inlined (a ``KernelSet``, envs/kernel_sets.py; with the batch helpers inlined,
1.1-1.7x faster in one thread: results/bench/vec/table.md); the other entry
points take the kernels' addresses and serve every game from one compile.

Large batches may step in several of numba's threads at once (``threads=N`` or "auto"), a
contiguous slice of the boards each (the ``*_slices`` entry points: a board touches only its own
rows, so the results do not depend on the number of threads); one thread by default, and always
where a search opponent's tables serve every board.

Board ``i`` of a batch seeded ``s`` plays exactly the game of the game's single env seeded
``s + i`` (``SyncVectorEnv``'s convention): each board keeps NumPy's PCG64 stream as a row of
``uint64`` words and draws from it with envs/streams.py, which repeats NumPy's draws bit for bit.

A game declares its batched env in its record (``vector`` of its ``game.toml``), a small subclass
in its folder naming its single env and its compiled ``observation(s, player, out)``; so
``gymnasium.make_vec(id, num_envs=N)`` builds it (the ``vector_entry_point`` mode, Gymnasium's
default for an id that has one)::

    >>> import gymnasium, numpy as np, tablegym.envs
    >>> envs = gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=4)
    >>> obs, info = envs.reset(seed=0)
    >>> obs.shape, info["action_mask"].shape
    ((4, 3, 3, 3), (4, 3))
    >>> rng = np.random.default_rng(0)
    >>> for _ in range(20):  # a random legal action on every board; ended boards start again
    ...     masks = envs.unwrapped.action_masks()
    ...     actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
    ...     obs, rewards, terminations, truncations, info = envs.step(actions)
    >>> rewards.shape, terminations.dtype
    ((4,), dtype('bool'))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from tablegym.envs.core import (
    CHANCE_T,
    INT_OF_STATE_T,
    MOVES_T,
    OUTCOME,
    PUSH_T,
    TO_MOVE,
    Game,
    IllegalActionError,
    k_outcome,
    k_to_move,
    no_chance,
)
from tablegym.envs.kernel_sets import KernelSet
from tablegym.envs.streams import choice, stream_rows
from tablegym.envs.vector_afterstates import children_of, grandchildren_of, outcomes_of
from tablegym.envs.vector_step import (
    ALTERNATE,
    DRAW_T,
    INFO_T,
    OBSERVE_T,
    RANDOM,
    SCORE_T,
    SEARCH,
    SELF_PLAY,
    STEP_SINGLE_SLICES,
    CompiledKernel,
    MoverOpponent,
    first_illegal,
    no_info,
    reset_single,
    reset_two_player,
    step_single,
    step_two_player,
    step_two_player_slices,
)
from tablegym.envs.vector_threads import BoardThreads, _check_threads


def _check_num_envs(num_envs: Any) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
    return int(num_envs)


def _check_autoreset(mode: Any) -> AutoresetMode:
    """An ``AutoresetMode``, or its value or name as a string in any case ("SameStep", "same_step")."""
    spelled = {m.value.lower(): m for m in AutoresetMode} | {m.name.lower(): m for m in AutoresetMode}
    checked = spelled.get(mode.lower()) if isinstance(mode, str) else mode
    if checked not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        raise ValueError(
            f"autoreset_mode must be AutoresetMode.NEXT_STEP (the default; 'next_step') or "
            f"AutoresetMode.SAME_STEP ('same_step'), got {mode!r}"
        )
    return checked


def _rows_of(info: dict[str, Any], rows: np.ndarray) -> dict[str, Any]:
    """``info`` as SyncVectorEnv gathers the infos of only the envs ``rows`` (its ``final_info``):
    each entry zero outside those rows, each ``_key`` mask true only on them."""
    out: dict[str, Any] = {}
    for key, value in info.items():
        if key.startswith("_"):
            continue
        has = info.get("_" + key, np.ones(rows.shape[0], dtype=bool)) & rows
        if not has.any():
            continue
        if isinstance(value, dict):
            out[key] = _rows_of(value, has)
        else:
            out[key] = np.where(has.reshape(-1, *[1] * (value.ndim - 1)), value, np.zeros_like(value))
        out["_" + key] = has
    return out


def _check_copy(copy: Any) -> bool:
    if not isinstance(copy, (bool, np.bool_)):
        raise ValueError(f"copy must be True (observations copied, the default) or False (the env's own buffer), got {copy!r}")
    return bool(copy)


class KernelVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` boards of a kernel game stepped in one compiled call (the shared part).

    A subclass names its game's single env (``single_env``, built once with the same keyword
    arguments as a prototype: spaces, rules and options come from it) and its compiled
    ``observation(s, player, out)``. ``actions`` is an integer array of shape ``(num_envs,)``;
    an action illegal on its board raises ``IllegalActionError`` (a ``ValueError``) naming the
    board, the action and the legal set, unless the env was made with
    ``illegal_action="penalty"`` (the default of a registered id, ``gymnasium.make_vec(id)``:
    the board's episode ends with the single env's penalty and ``info["illegal_action"]``). Boards that ended on the last step start again on this one,
    their action ignored (``metadata["autoreset_mode"]`` is ``AutoresetMode.NEXT_STEP``). With
    ``autoreset_mode="same_step"`` a board that ends is dealt again within the step that ended it,
    as Gymnasium's ``SyncVectorEnv`` does in that mode: the step returns its new observation and
    info, and the last ones in ``info["final_obs"]`` and ``info["final_info"]`` (a partial reset
    after the compiled step, so the boards' games and streams are those of the next-step mode).

    ``info["action_mask"]`` (int8, ``(num_envs, num_actions)``) is each board's mask as the single
    env gives it (all zeros once a board is over); ``action_masks()`` is the mask to sample the
    next actions from: it allows every action on a board waiting for its auto-reset (the action
    is ignored there), so no board is left without a legal action.

    ``copy=False`` (as for Gymnasium's ``SyncVectorEnv``): ``reset`` and ``step`` return the
    env's own observation buffer, not a copy, valid until the next call; a training loop that
    copies the observations into its own buffer anyway saves one copy of the batch a step.

    ``threads``: how many of numba's threads step the boards, each a contiguous slice of them
    at once (``BoardThreads``; a board reads and writes only its own rows, so the results are the
    same for any number). 1 by default: threads pay on idle cores only, and two processes each
    stepping in two threads on 2 cores ran 4-40x slower than in one thread each. "auto" times one
    thread against one per ``BOARDS_A_THREAD`` (128) boards, at most one per core, on the first
    steps and now and then, and keeps the faster (for one process on a machine of its own).
    Resets step in the calling thread.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}
    single_env: ClassVar[Callable[..., gymnasium.Env]]
    """The game's single env class (its keyword arguments are this env's)."""
    observation_kernel: ClassVar[Any]
    """Compiled ``observation(s, player, out)``: ``State.observation(player)`` flattened."""
    draw_kernel: ClassVar[Any] = choice
    """Compiled ``draw(row, probs, n)``: how the single env picks a chance outcome from its
    ``np_random`` (``Generator.choice`` over the outcomes, as ``sample_outcome`` does)."""

    def _checked_options(self, num_envs: Any, autoreset_mode: Any, render_mode: str | None, copy: bool) -> None:
        """The options every vector env takes, checked and kept (Starship's too, whose batch is
        its own)."""
        self.num_envs = _check_num_envs(num_envs)
        self.copy = _check_copy(copy)
        self._autoreset(autoreset_mode)
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode of a vector env must be 'ansi' or None, got {render_mode!r}")
        self.render_mode = render_mode

    def _setup(
        self,
        num_envs: Any,
        game: Game,
        proto: gymnasium.Env,
        autoreset_mode: Any,
        illegal_action: str,
        render_mode: str | None,
        copy: bool,
    ) -> None:
        """The batch arrays, spaces and kernels shared by every kernel game."""
        self._checked_options(num_envs, autoreset_mode, render_mode, copy)
        self.game = game
        self.illegal_action = illegal_action
        self.single_observation_space = proto.observation_space
        self.single_action_space = proto.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        state = game.new_initial_state()
        self._state_class = type(state)
        self._init = state.array
        spec = game.spec
        self._num_actions = spec.num_actions
        self._width = max(spec.num_actions, spec.max_chance_outcomes, 1)
        self._obs_shape = tuple(self.single_observation_space.shape)
        n = self.num_envs
        self._states = np.tile(self._init, (n, 1))
        self._streams: np.ndarray | None = None
        self._dealt = False  # every board dealt once (a partial reset comes after that)
        self._pending = np.zeros(n, dtype=bool)
        self._obs = np.zeros((n, int(np.prod(self._obs_shape))), dtype=np.float32)
        self._masks = np.zeros((n, spec.num_actions), dtype=np.int8)
        self._illegal = np.zeros(n, dtype=bool)
        k = state.kernels
        observe = type(self).observation_kernel  # read off the class: off an instance it is a bound method
        self._compiled = (
            CompiledKernel(k.moves, MOVES_T),
            CompiledKernel(k.push, PUSH_T),
            CompiledKernel(k.to_move, INT_OF_STATE_T),
            CompiledKernel(k.outcome, INT_OF_STATE_T),
            CompiledKernel(no_chance if k.chance is None else k.chance, CHANCE_T),
            CompiledKernel(type(self).draw_kernel, DRAW_T),
            CompiledKernel(observe, OBSERVE_T),
        )
        """The kernels in ``_kernels_at``'s order: moves, push, to_move, outcome, chance, draw,
        observation."""
        self._kernels = self._addresses()
        """Their addresses, as the batch entry points take them (``_kernels_at``)."""

    def _addresses(self) -> np.ndarray:
        """``_compiled``'s addresses as the batch entry points take them: the seven game kernels,
        the header slots that to_move and outcome read (-1 where the game has kernels of its own:
        ``_read``), then any more kernels (a one-player game's score and info)."""
        k = self._state_class.kernels
        slots = [TO_MOVE if k.to_move is k_to_move else -1, OUTCOME if k.outcome is k_outcome else -1]
        addresses = [kernel.address for kernel in self._compiled]
        return np.array(addresses[:7] + slots + addresses[7:], dtype=np.int64)

    # -- what the subclasses run ---------------------------------------------------------

    def _autoreset(self, mode: Any) -> None:
        """Check and keep the auto-reset mode (in this env's ``metadata``, which wrappers read)."""
        self.autoreset_mode = _check_autoreset(mode)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}

    def _stepped(
        self, rewards: np.ndarray, terms: np.ndarray, truncs: np.ndarray
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """A step's return after the compiled step; in the same-step mode the boards that ended
        are dealt again now (``_pending`` holds them), their last observation and info kept."""
        if self.autoreset_mode is AutoresetMode.NEXT_STEP or not self._pending.any():
            return self._observations(), rewards, terms, truncs, self._info()
        ended = self._pending.copy()
        last, last_info = self._observations(), self._info()
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(ended):
            final_obs[i] = {k: v[i].copy() for k, v in last.items()} if isinstance(last, dict) else last[i].copy()
        obs, info = self.reset(options={"reset_mask": ended})
        info.update({"final_obs": final_obs, "_final_obs": ended, "final_info": _rows_of(last_info, ended), "_final_info": ended})
        return obs, rewards, terms, truncs, info

    def _seed(self, seed: int | list[int | None] | None) -> bool:
        """Seed the boards' streams as ``SyncVectorEnv`` seeds its envs (``seed + i``, or one
        seed a board); unseeded, a stream continues (or starts from fresh entropy). True if seeded."""
        n = self.num_envs
        if seed is None:
            if self._streams is None:
                self._streams = stream_rows([None] * n)
            return False

        def whole(x: Any) -> bool:
            return isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x >= 0

        if whole(seed):
            seeds: list[int | None] = [int(seed) + i for i in range(n)]
        elif isinstance(seed, (list, tuple)) and len(seed) == n and all(s is None or whole(s) for s in seed):
            seeds = [None if s is None else int(s) for s in seed]
        else:
            raise ValueError(
                f"seed must be None, an int >= 0 or a list of {n} such seeds (one a board, None for fresh entropy), got {seed!r}"
            )
        self._streams = stream_rows(seeds)
        return True

    def _integer_actions(self, actions: Any) -> np.ndarray:
        """The actions as int64, one integer a board (one-line errors otherwise)."""
        if self._streams is None:
            raise RuntimeError("reset() was never called; call reset() first")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({self.num_envs},), one action a board; "
                f"got {a.dtype} of shape {a.shape}"
            )
        return a.astype(np.int64, copy=False)

    def _actions(self, actions: Any) -> np.ndarray:
        """The actions as int64, checked: one integer a board, each legal on its board (a board
        waiting for its auto-reset takes any), unless illegal actions are penalised."""
        a = np.ascontiguousarray(self._integer_actions(actions))
        if self.illegal_action == "penalty":
            return a
        i = first_illegal(a, self._masks, self._pending)
        if i >= 0:
            raise IllegalActionError(int(a[i]), np.flatnonzero(self._masks[i]).tolist(), f"on board {i}")
        return a

    def _boards_to_reset(self, options: dict[str, Any] | None) -> np.ndarray:
        """Every board, or those of ``options["reset_mask"]`` (Gymnasium's partial reset: a bool
        array, one entry a board); the other boards keep their games, observations and masks."""
        mask = (options or {}).get("reset_mask")
        if mask is None:
            return np.ones(self.num_envs, dtype=bool)
        which = np.asarray(mask)
        if which.shape != (self.num_envs,) or which.dtype != bool:
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), got {mask!r}")
        if not self._dealt and not which.all():
            raise ValueError("the first reset() deals every board; options['reset_mask'] comes after it")
        return np.ascontiguousarray(which)

    def _reset_done(self, which: np.ndarray) -> None:
        """After the boards ``which`` were dealt again: a board over at once restarts on the next step."""
        self._pending[which] = ~self._masks[which].any(axis=1)
        self._illegal[which] = False
        self._dealt = True

    def _observations(self) -> np.ndarray:
        return self._obs_out.reshape((self.num_envs, *self._obs_shape))

    def _info(self) -> dict[str, Any]:
        everywhere = np.ones(self.num_envs, dtype=bool)
        info: dict[str, Any] = {"action_mask": self._masks.copy(), "_action_mask": everywhere}
        if self._illegal.any():
            info["illegal_action"] = self._illegal.copy()
            info["_illegal_action"] = self._illegal.copy()
        return info

    # -- Gymnasium API ---------------------------------------------------------------------

    def action_masks(self) -> np.ndarray:
        """``(num_envs, num_actions)`` bools to sample the next actions from: each board's legal
        actions, every action on a board waiting for its auto-reset (sb3-contrib's hook)."""
        masks = self._masks.astype(bool)
        masks[self._pending] = True
        return masks

    def game_state(self, i: int) -> Any:
        """Board ``i``'s position as the rules core's ``State`` (a copy: safe to keep or search)."""
        return self._state_class(self.game, self._states[i].copy())

    def render(self) -> tuple[str, ...] | None:
        """Every board's text drawing ("ansi"), or None."""
        if self.render_mode != "ansi":
            return None
        return tuple(self.game_state(i).to_text() for i in range(self.num_envs))

    def _start_threads(self, threads: Any, shared_tables: bool = False) -> None:
        self._boards = BoardThreads(self.num_envs, *_check_threads(threads, self.num_envs, shared_tables))
        self._obs_out = self._obs

    def _run_boards(self, entry: Callable[..., None], args: tuple, slices: tuple | None = None) -> None:
        """``entry(*args)`` over every board in this thread (a reset always; a step with a search
        opponent), or, where ``BoardThreads`` says, in several threads with ``slices`` (a
        ``*_slices`` entry point, then any arguments of its own before ``args``, such as the
        address of ``entry``): ``slices[0](bounds, copy, obs_out, *slices[1:], *args)``. With ``copy`` the observations go
        to a new array ``_obs_out``, copied in each slice's thread (a large batch's copy is a share
        of the step: Starship's 17 kB a board)."""

        def call(bounds: np.ndarray | None) -> None:
            if bounds is None:
                entry(*args)
                self._obs_out = self._obs.copy() if self.copy else self._obs
            else:
                self._obs_out = np.empty_like(self._obs) if self.copy else self._obs
                slices[0](bounds, self.copy, self._obs_out, *slices[1:], *args)

        if slices is None:
            call(None)
        else:
            self._boards.run(call)

    @property
    def threads(self) -> int:
        """The number of threads stepping the boards now (an automatic count may change)."""
        return self._boards.threads

    @property
    def choosing_threads(self) -> bool:
        """Whether the next steps are timed to choose ``threads`` (``threads="auto"``)."""
        return self._boards.choosing

    def __repr__(self) -> str:
        return f"<{type(self).__name__} num_envs={self.num_envs} {self.game!r}>"


def _seat_modes(agent_seat: Any, n: int) -> np.ndarray:
    """``agent_seat`` as one seat mode a board (0, 1 or ``ALTERNATE``)."""
    seats = [agent_seat] * n if isinstance(agent_seat, (str, int, np.integer)) else list(agent_seat)
    if len(seats) != n or any(isinstance(s, bool) or s not in (0, 1, "alternate") for s in seats):
        raise ValueError(f"agent_seat must be 0, 1, 'alternate' or a sequence of {n} of them (one a board), got {agent_seat!r}")
    return np.array([ALTERNATE if s == "alternate" else int(s) for s in seats], dtype=np.int64)


class TwoPlayerVectorEnv(KernelVectorEnv):
    """A two-player game's batch: the agent plays one seat of every board (``TwoPlayerEnv``).

    Arguments: those of the game's single env (rules, ``illegal_action``, ``opening_plies``: random
    moves of both seats at every reset, drawn from the board's stream as the single env draws
    them), and:

    - ``num_envs``: the number of boards.
    - ``agent_seat``: 0, 1 or "alternate" (as the single env), or a sequence of ``num_envs`` of
      them: the agent's seat on each board.
    - ``opponent``: "random" (default, the single env's default: a uniformly random legal move,
      drawn from the board's stream); a compiled search at a depth, by the spec the single env
      takes (``alphabeta:eval=advanced,depth=2``; Trap's ``search:eval=composite,depth=2``, its
      move filter's keys included; ``eval`` any compiled evaluator: hand-made, ``learned``,
      ``learned:PATH``) or the agent that spec builds (``SearchOpponent``); a reference player
      the game compiles for its batch (``reference_opponents``: Trap's "medium" and "hard"); or
      None: self-play.
      With None nobody else moves: each step plays the action for the player to move, the
      observation is that of the player to move next (``info["seat"]``; the observation carries
      whose turn it is), and the reward is the mover's (+1 when its move won). At the end the
      seat stays the last mover's.
    - ``autoreset_mode``: ``AutoresetMode.NEXT_STEP`` (the only one).
    - ``threads``: as ``KernelVectorEnv``'s; 1 with a search or reference player as the other seat
      (its tables serve every board).

    A search opponent runs inside the step's compiled call. Alpha-beta plays the moves of the
    single env with the same ``opponent`` (its move does not depend on the tables it keeps).
    Expectiminimax plays the move of a fresh search of the position (``expectiminimax()`` with new
    tables, as ``ExpectiminimaxAgent.search`` makes on its first call). The single env's agent
    keeps its 40 MB transposition table from one decision to the next, and a kept entry may
    decide between moves of equal value (it orders the root, and its stored win distances count
    from an older root): the batch would repeat that only with such a table a board, so the
    same moves as the single env's are likely (none differed in 300 steps of 4 Trap boards at
    depths 2 and 3) but not promised.

    ``info`` holds "action_mask" and "seat" (the single env's "opponent_actions" is left out).
    """

    reference_opponents: ClassVar[dict[str, tuple[Any, int]]] = {}
    """The game's reference players that play a batch's other seat by name, compiled: ``name ->
    (mover, depth)``, ``mover`` a kernel with ``MOVER_T``'s arguments (``MoverOpponent``) that makes
    the single env's opponent of that name's choices."""
    _outcome_sizes: tuple[int, int] | None = None
    """The rows and positions ``outcomes()`` last needed room for (its arrays start that long)."""

    @property
    def has_chance(self) -> bool:
        """Whether the game has chance nodes: its children are then ``outcomes()``, not ``children()``."""
        return self._state_class.kernels.chance is not None

    def __init__(
        self,
        num_envs: int = 1,
        *,
        opponent: Any = "random",
        agent_seat: Any = 0,
        illegal_action: str = "raise",
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        threads: int | str = 1,
        **kwargs: Any,
    ) -> None:
        n = _check_num_envs(num_envs)
        one_seat = isinstance(agent_seat, (str, int, np.integer))
        proto = self.single_env(agent_seat=agent_seat if one_seat else 0, illegal_action=illegal_action, **kwargs)
        self._seat_modes = _seat_modes(agent_seat, n)
        self._setup(n, proto.game, proto, autoreset_mode, illegal_action, render_mode, copy)
        self._kernel_set = KernelSet(self.game.spec.name, tuple(kernel.kernel for kernel in self._compiled))
        """The game's kernels for the entry points compiled for it (envs/kernel_sets.py)."""
        self.opponent = opponent
        self._search: Any = None
        if opponent is None:
            self._opponent = SELF_PLAY
        elif isinstance(opponent, str) and opponent == "random":
            self._opponent = RANDOM
        elif isinstance(opponent, str) and opponent in self.reference_opponents:
            mover, depth = self.reference_opponents[opponent]
            self._search = MoverOpponent(self.game, opponent, mover, depth)
            self._opponent = SEARCH
        else:
            from tablegym.envs import above  # the search layer, on demand

            self._search = above("search_opponent")(self.game, opponent, tuple(self.reference_opponents))
            self._opponent = SEARCH
        self._start_threads(threads, shared_tables=self._search is not None)
        self._opening = proto.opening_plies
        self._seats = np.zeros(n, dtype=np.int64)
        self._episodes = np.zeros(n, dtype=np.int64)
        self._rewards = np.zeros(n)
        self._terms = np.zeros(n, dtype=bool)

    @property
    def opponent_agent(self) -> Any:
        """The compiled search or reference player playing the other seat (None: random or self-play)."""
        return self._search

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every board again (or those of ``options["reset_mask"]``); ``options={"seat": s}``
        seats the agent at ``s`` (0 or 1, or a sequence of ``num_envs`` of them) for this episode."""
        if self._seed(seed):
            self._episodes[:] = 0
        seat_modes = self._seat_modes
        seat = (options or {}).get("seat")
        if seat is not None:
            seats = [seat] * self.num_envs if isinstance(seat, (int, np.integer)) else list(seat)
            if len(seats) != self.num_envs or any(isinstance(s, bool) or s not in (0, 1) for s in seats):
                raise ValueError(f"options['seat'] must be 0, 1 or a sequence of {self.num_envs} of them, got {seat!r}")
            seat_modes = np.array(seats, dtype=np.int64)
        which = self._boards_to_reset(options)
        args = (
            self._states,
            self._streams,
            self._seats,
            self._episodes,
            self._init,
            which,
            seat_modes,
            self._opponent,
            self._opening,
            self._obs,
            self._masks,
        )
        if self._search is None:
            self._run_boards(reset_two_player, (*args, self._kernel_set, self._width))
        else:
            self._run_boards(self._search.reset, (*args, self._kernels, self._width))
        self._reset_done(which)
        return self._observations(), self._info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        a = self._actions(actions)
        penalty = self.illegal_action == "penalty"
        args = (
            self._states,
            self._streams,
            self._seats,
            self._episodes,
            self._init,
            self._pending,
            a,
            self._seat_modes,
            self._opponent,
            self._opening,
            penalty,
            -1.0,
            self._obs,
            self._rewards,
            self._terms,
            self._illegal,
            self._masks,
        )
        if self._search is None:
            self._run_boards(step_two_player, (*args, self._kernel_set, self._width), (step_two_player_slices,))
        else:
            self._run_boards(self._search.step, (*args, self._kernels, self._width))
        return self._stepped(self._rewards.copy(), self._terms.copy(), np.zeros(self.num_envs, dtype=bool))

    def children(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every board's children, for learners that value positions rather than moves
        (training/negamax_dqn.py): ``(obs, ended, result, legal)`` of shapes ``(N, A, *obs)``,
        ``(N, A)``, ``(N, A)``, ``(N, A)``: for each legal move of the player to move, the next
        position as its new mover observes it; whether the move ends the game, and then the
        result for the player who moved (+1, -1, 0). A board waiting for its auto-reset has no
        legal move. Games with chance nodes are refused (their children are distributions)."""
        self._no_chance("children")
        n, a = self.num_envs, self._num_actions
        obs = np.zeros((n, a, self._obs.shape[1]), dtype=np.float32)
        ended, result = np.zeros((n, a), dtype=bool), np.zeros((n, a))
        legal = self._masks.astype(bool)
        children_of(self._states, self._masks, obs, ended, result, self._kernels)
        return obs.reshape((n, a, *self._obs_shape)), ended, result, legal

    def grandchildren(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every board's positions two moves on (a search of two plies in one compiled call):
        ``(obs, ended, result, legal)`` of shapes ``(N, A, A, *obs)`` and ``(N, A, A)``: for each
        legal move ``a`` that does not end the game (``children()`` tells those) and each legal
        reply ``b``, the position after both as the board's mover observes it, whether the reply
        ends the game, and then the result for the board's mover."""
        self._no_chance("grandchildren")
        n, a = self.num_envs, self._num_actions
        obs = np.zeros((n, a, a, self._obs.shape[1]), dtype=np.float32)
        ended, result, legal = np.zeros((n, a, a), dtype=bool), np.zeros((n, a, a)), np.zeros((n, a, a), dtype=bool)
        grandchildren_of(self._states, self._masks, obs, ended, result, legal, self._kernels, self._width)
        return obs.reshape((n, a, a, *self._obs_shape)), ended, result, legal

    def outcomes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every board's children in a game with chance nodes, for learners that value positions
        (training/negamax_dqn.py): ``(obs, index, weight, position, result, legal)``. ``legal``
        is ``(N, A)`` as in ``children()``; ``obs`` the distinct positions reached, each as its
        player to move observes it; the others one row per (move, chance outcome): ``index =
        board * A + move``, the outcome's probability (negative where the mover's opponent is to
        move there), the row of ``obs`` reached (-1 where the game ended) and then the result for
        the mover. A move's expected value for the mover is ``sum over its rows of |weight| *
        result`` where the game ended, ``weight * V(obs[position])`` elsewhere. Games without
        chance give one row a move."""
        rows, places = self._outcome_sizes or (4 * self.num_envs * self._num_actions, self.num_envs * self._num_actions)
        while True:
            obs = np.empty((places, self._obs.shape[1]), dtype=np.float32)
            keys = np.empty(places, dtype=np.int64)
            index, weight = np.empty(rows, dtype=np.int64), np.empty(rows)
            position, result = np.empty(rows, dtype=np.int64), np.empty(rows)
            need_rows, need_places = outcomes_of(
                self._states, self._masks, obs, keys, index, weight, position, result, self._kernels, self._width
            )
            if need_rows <= rows and need_places <= places:
                self._outcome_sizes = (rows, places)
                return (
                    obs[:need_places].reshape((need_places, *self._obs_shape)),
                    index[:need_rows],
                    weight[:need_rows],
                    position[:need_rows],
                    result[:need_rows],
                    self._masks.astype(bool),
                )
            rows, places = max(rows, 2 * need_rows), max(places, 2 * need_places)

    def _no_chance(self, what: str) -> None:
        if self.has_chance:
            raise ValueError(
                f"{what}(): {self.game.spec.name} has chance nodes; only games without chance have one position a move"
            )

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        info["seat"] = self._seats.copy()
        info["_seat"] = np.ones(self.num_envs, dtype=bool)
        return info


class SinglePlayerVectorEnv(KernelVectorEnv):
    """A single-player game's batch (``SinglePlayerEnv``): the agent decides, each board's stream
    plays the chance nodes, a step's reward is the change of the game's compiled ``score``.

    Arguments: those of the game's single env, ``num_envs``, ``autoreset_mode``, ``copy`` and
    ``threads`` (as ``KernelVectorEnv``'s). A subclass
    also names ``score_kernel`` and the integer ``info`` entries (``info_keys``, written by
    ``info_kernel(s, out)``), and ``limit_keyword``, the single env's episode-limit argument.
    """

    score_kernel: ClassVar[Any]
    info_kernel: ClassVar[Any] = no_info
    info_keys: ClassVar[tuple[str, ...]] = ()
    limit_keyword: ClassVar[str | None] = None
    illegal_reward: ClassVar[float] = 0.0
    score_from_start: ClassVar[bool] = False
    """Whether the first step's reward counts from the dealt position's score (else from 0)."""

    def __init__(
        self,
        num_envs: int = 1,
        *,
        illegal_action: str = "raise",
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        threads: int | str = 1,
        **kwargs: Any,
    ) -> None:
        proto = self.single_env(illegal_action=illegal_action, **kwargs)
        self._setup(num_envs, proto.game, proto, autoreset_mode, illegal_action, render_mode, copy)
        self._start_threads(threads)
        cls = type(self)
        self._compiled += (CompiledKernel(self._score_kernel(proto), SCORE_T), CompiledKernel(cls.info_kernel, INFO_T))
        self._kernels = self._addresses()
        limit = getattr(proto, self.limit_keyword) if self.limit_keyword else None  # the single env's default too
        self._limit = 0 if limit is None else int(limit)
        n = self.num_envs
        self._steps = np.zeros(n, dtype=np.int64)
        self._last_score = np.zeros(n)
        self._info_values = np.zeros((n, len(self.info_keys)), dtype=np.int64)
        self._rewards = np.zeros(n)
        self._terms = np.zeros(n, dtype=bool)
        self._truncs = np.zeros(n, dtype=bool)

    def _score_kernel(self, proto: gymnasium.Env) -> Any:
        """The ``score`` kernel for the single env ``proto`` (a game may choose by its reward)."""
        return type(self).score_kernel

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every board again (or those of ``options["reset_mask"]``)."""
        self._seed(seed)
        which = self._boards_to_reset(options)
        self._run_boards(
            reset_single,
            (
                self._states,
                self._streams,
                self._steps,
                self._last_score,
                self._init,
                which,
                self.score_from_start,
                self._obs,
                self._masks,
                self._info_values,
                self._kernels,
                self._width,
            ),
        )
        self._reset_done(which)
        return self._observations(), self._info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        a = self._actions(actions)
        penalty = self.illegal_action == "penalty"
        self._run_boards(
            step_single,
            (
                self._states,
                self._streams,
                self._steps,
                self._last_score,
                self._init,
                self._pending,
                self.score_from_start,
                a,
                self._limit,
                penalty,
                self.illegal_reward,
                self._obs,
                self._rewards,
                self._terms,
                self._truncs,
                self._illegal,
                self._masks,
                self._info_values,
                self._kernels,
                self._width,
            ),
            STEP_SINGLE_SLICES,
        )
        return self._stepped(self._rewards.copy(), self._terms.copy(), self._truncs.copy())

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        for k, key in enumerate(self.info_keys):
            info[key] = self._info_values[:, k].copy()
            info["_" + key] = np.ones(self.num_envs, dtype=bool)
        return info
