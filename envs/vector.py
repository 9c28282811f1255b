"""Batched envs: N boards of one game in one ``int64`` array, stepped by one compiled call.

A game whose rules core has ``Kernels`` (envs/core.py) gets a ``gymnasium.vector.VectorEnv``
here without a rule written twice: ``step`` hands every board, every action and every board's
random stream to one numba function, which plays the agent's move, the chance nodes and the
other seat (a uniformly random legal move, a compiled search, or nobody: self-play) through the
game's own kernels, auto-resets the boards that ended on the step before, and writes the batched
observations, rewards, terminations and legal-action masks. Python runs once per step, never
once per board. A search as the other seat is the searcher's own compiled root search
(search/alphabeta.py, search/expectiminimax.py) with the evaluator kernel and depth of the agent
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

import os
import threading
import time
import warnings
from typing import Any, Callable, ClassVar

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.core.errors import NumbaExperimentalFeatureWarning

from tablegym.envs.core import (CHANCE, CHANCE_T, EVAL_T, INT_OF_STATE_T, KEY, MOVES_T, ONGOING, OUTCOME, POP_T, PUSH_T,
                                STATE_T, TO_MOVE, Game, IllegalActionError, k_outcome, k_to_move, no_chance)
from tablegym.envs.kernel_sets import (KernelSet, chance_of, draw_of, has_chance_of, moves_of, observe_of, outcome_of,
                                      push_of, to_move_of)
from tablegym.envs.streams import choice, integers, stream_rows

OBSERVE_T = types.FunctionType(types.none(STATE_T, types.int64, types.float32[::1]))
"""``observation(s, player, out)``: the single env's observation of ``player``, flattened into ``out``."""
SCORE_T = types.FunctionType(types.float64(STATE_T))
"""``score(s)``: a single-player game's score; a step's reward is its change."""
INFO_T = types.FunctionType(types.none(STATE_T, types.int64[::1]))
"""``info(s, out)``: the integer ``info`` entries of a single-player env (``info_keys``), into ``out``."""
DRAW_T = types.FunctionType(types.int64(types.uint64[::1], types.float64[::1], types.int64))
"""``draw(row, probs, n)``: the index of the chance outcome drawn from stream ``row`` as the single
env draws it (``streams.choice`` by default)."""

_I, _F = types.int64, types.float64
_I1, _I2, _U2 = types.int64[::1], types.int64[:, ::1], types.uint64[:, ::1]
_B1, _F1, _F2, _M2 = types.boolean[::1], types.float64[::1], types.float32[:, ::1], types.int8[:, ::1]
_B2, _B3, _D2, _D3 = types.boolean[:, ::1], types.boolean[:, :, ::1], types.float64[:, ::1], types.float64[:, :, ::1]

RANDOM, SELF_PLAY, SEARCH = 0, 1, 3
"""How the other seat of a two-player batch moves (the kernel's ``opponent`` argument)."""
ALTERNATE = 2
"""``agent_seat="alternate"`` as the kernel's ``seat_mode`` (0 and 1 are the seats)."""


def _function_at(kind: types.FunctionType) -> Any:
    """A compiled cast: the int64 address of a kernel's C wrapper (``CompiledKernel.address``) as
    a first-class function of type ``kind``. Why: numba unboxes a first-class function argument
    through Python at every call (some 6 us each, the GIL held), so the batch entry points take
    the game's kernels as one int64 array of addresses and make the functions inside."""

    @intrinsic
    def function_at(typingctx: Any, address: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            fn = cgutils.create_struct_proxy(kind)(context, builder)  # zero-filled: no Python object, no jit address
            fn.c_addr = builder.inttoptr(args[0], context.get_value_type(types.voidptr))
            return fn._getvalue()

        return kind(types.int64), codegen

    return function_at


@intrinsic
def unowned(typingctx: Any, array: Any) -> Any:
    """``array`` without its reference count (no meminfo): the batch entry points take each
    board's rows as views of such arrays, and a view of a counted array adds to and takes from
    its count, an atomic operation each (11% of Trilobite's step, and in threads stepping slices
    of one batch a counter the threads share). The caller keeps ``array`` alive for the call."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        src = context.make_array(array)(context, builder, value=args[0])
        out = context.make_array(array)(context, builder)
        for field in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(out, field, getattr(src, field))
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()

    return array(array), codegen


def _quiet_njit(signature: Any, **options: Any) -> Callable[[Callable], Any]:
    """``njit(signature, cache=True, **options)`` without numba's notice that first-class function
    types are experimental: the entry points hold the game's kernels (and a search opponent's
    move) as such on purpose, and their eager compile would print the notice to every user at
    the first import."""
    def compile_(fn: Callable) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaExperimentalFeatureWarning)
            return njit(signature, cache=True, **options)(fn)
    return compile_


_moves_at, _push_at, _int_of_state_at = _function_at(MOVES_T), _function_at(PUSH_T), _function_at(INT_OF_STATE_T)
_chance_at, _draw_at, _observe_at = _function_at(CHANCE_T), _function_at(DRAW_T), _function_at(OBSERVE_T)
_score_at, _info_at = _function_at(SCORE_T), _function_at(INFO_T)


@njit(cache=True)
def _kernels_at(k):
    """The kernels at the addresses ``k`` (``KernelVectorEnv._kernels``' order): moves, push,
    to_move, outcome, chance, draw, observation; to_move and outcome as ``(kernel, slot)`` for
    ``_read``, their slots in ``k[7]`` and ``k[8]``."""
    return (_moves_at(k[0]), _push_at(k[1]), (_int_of_state_at(k[2]), k[7]), (_int_of_state_at(k[3]), k[8]),
            _chance_at(k[4]), _draw_at(k[5]), _observe_at(k[6]))


@njit(inline="always")
def _resolve_chance(s, row, kernels, outcomes, probs):
    """Sample chance nodes from the stream ``row`` until a player (or the end) is to move, one
    ``draw(row, probs, n)`` a node (the single env's draw: ``sample_outcome``'s one
    ``Generator.choice``, unless the game samples otherwise)."""
    if not has_chance_of(kernels):
        return
    while outcome_of(kernels, s) == ONGOING and to_move_of(kernels, s) == CHANCE:
        n = chance_of(kernels, s, outcomes, probs)
        push_of(kernels, s, outcomes[draw_of(kernels, row, probs, n)])


@njit(inline="always")
def _advance(s, row, seat, opponent, kernels, buf, probs, search):
    """Chance, then the other seat, until ``seat`` is to move or the game is over (the single
    env's ``_advance_opponent``): a uniformly random legal move (``legal[rng.integers(len(legal))]``)
    when ``search`` is None, else the move of the compiled search it holds."""
    _resolve_chance(s, row, kernels, buf, probs)
    if opponent == SELF_PLAY:
        return
    while outcome_of(kernels, s) == ONGOING and to_move_of(kernels, s) != seat:
        push_of(kernels, s, _opponent_move(s, row, kernels, buf, search))
        _resolve_chance(s, row, kernels, buf, probs)


@njit(inline="always")
def _opponent_move(s, row, kernels, buf, search):
    """The other seat's move: random from the board's stream (``search`` None: numba compiles
    only this branch for the random opponent), or the compiled search ``search`` (``MOVER_T``
    first, then its kernels and tables: tablegym.search.batch_opponent)."""
    if search is None:
        n = moves_of(kernels, s, buf)
        return buf[integers(row, n)]
    mover, s_moves, s_push, s_pop, s_to_move, s_outcome, s_key, s_chance, s_eval, data = search
    return mover(s, s_moves, s_push, s_pop, s_to_move, s_outcome, s_key, s_chance, s_eval, data)


@njit(inline="always")
def _finish(s, i, seat, kernels, obs, masks, buf):
    """Board ``i``'s observation by ``seat`` and its legal mask (all zeros once over)."""
    observe_of(kernels, s, seat, obs[i])
    masks[i, :] = 0
    if outcome_of(kernels, s) == ONGOING:
        for k in range(moves_of(kernels, s, buf)):
            masks[i, buf[k]] = 1


@njit(inline="always")
def _reward_of(s, seat, kernels):
    """``State.returns()[seat]``: +1 won, -1 lost, 0 drawn or unfinished."""
    out = outcome_of(kernels, s)
    if out == 0 or out == 1:
        return 1.0 if out == seat else -1.0
    return 0.0


@njit(inline="always")
def _reset_two_player(states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks,
                      kernels, buf, probs, search):
    i = which
    s = states[i]
    s[:] = init
    seat = episodes[i] % 2 if seat_modes[i] == ALTERNATE else seat_modes[i]
    episodes[i] += 1
    _resolve_chance(s, streams[i], kernels, buf, probs)
    for _ in range(opening):  # the single env's opening plies: random moves for both seats
        if outcome_of(kernels, s) != ONGOING:
            break
        push_of(kernels, s, _opponent_move(s, streams[i], kernels, buf, None))
        _resolve_chance(s, streams[i], kernels, buf, probs)
    if opponent == SELF_PLAY:
        seat = to_move_of(kernels, s)
    else:
        _advance(s, streams[i], seat, opponent, kernels, buf, probs, search)
    seats[i] = seat
    _finish(s, i, seat, kernels, obs, masks, buf)


@njit(cache=True)
def _reset_boards(states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks,
                  kernels, width, search):
    buf = np.empty(width, np.int64)
    probs = np.empty(width)
    for i in range(states.shape[0]):
        if which[i]:
            _reset_two_player(states, streams, seats, episodes, init, i, seat_modes, opponent, opening, obs, masks,
                              kernels, buf, probs, search)


@njit(cache=True)
def _step_boards(states, streams, seats, episodes, init, pending, actions, seat_modes, opponent, opening, penalty,
                 illegal_reward, obs, rewards, terms, illegal, masks, kernels, width, search):
    buf = np.empty(width, np.int64)
    probs = np.empty(width)
    for i in range(states.shape[0]):
        s = states[i]
        illegal[i] = False
        if pending[i]:
            _reset_two_player(states, streams, seats, episodes, init, i, seat_modes, opponent, opening, obs, masks,
                              kernels, buf, probs, search)
            rewards[i] = 0.0
            terms[i] = False
            pending[i] = outcome_of(kernels, s) != ONGOING
            continue
        a = actions[i]
        if penalty and (a < 0 or a >= masks.shape[1] or masks[i, a] == 0):
            illegal[i] = True
            observe_of(kernels, s, seats[i], obs[i])
            masks[i, :] = 0
            rewards[i] = illegal_reward
            terms[i] = True
            pending[i] = True
            continue
        mover = seats[i]
        push_of(kernels, s, a)
        if opponent == SELF_PLAY:
            _resolve_chance(s, streams[i], kernels, buf, probs)
            if outcome_of(kernels, s) == ONGOING:
                seats[i] = to_move_of(kernels, s)
        else:
            _advance(s, streams[i], mover, opponent, kernels, buf, probs, search)
        done = outcome_of(kernels, s) != ONGOING
        rewards[i] = _reward_of(s, mover, kernels) if done else 0.0
        terms[i] = done
        pending[i] = done
        _finish(s, i, seats[i], kernels, obs, masks, buf)


_RESET_ARGS = (_I2, _U2, _I1, _I1, _I1, _B1, _I1, _I, _I, _F2, _M2, _I1, _I)
_STEP_ARGS = (_I2, _U2, _I1, _I1, _I1, _B1, _I1, _I1, _I, _I, types.boolean, _F, _F2, _F1, _B1, _B1, _M2, _I1,
              _I)
"""The argument types of the entry points with a search as the other seat (``*_search``, which add
its own); the game's kernels come as one array of addresses (``kernels``: ``_kernels_at``).
``reset_two_player`` and ``step_two_player`` take the same arguments with a ``KernelSet``."""


@njit(cache=True, nogil=True)
def reset_two_player(states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks, kernels,
                     width):
    """Start a new game on every board ``i`` with ``which[i]``: ``opening`` random moves of both
    seats (the single env's ``opening_plies``), then the other seat (random or nobody) moving
    first when it is to move (``seat_modes[i]``: 0, 1 or ``ALTERNATE`` by the board's episode
    count). Compiled for each game's ``KernelSet`` (``kernels``), its kernels inlined."""
    states, streams, obs, masks = unowned(states), unowned(streams), unowned(obs), unowned(masks)
    _reset_boards(states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks,
                  kernels, width, None)


@njit(cache=True, nogil=True)
def step_two_player(states, streams, seats, episodes, init, pending, actions, seat_modes, opponent, opening, penalty,
                    illegal_reward, obs, rewards, terms, illegal, masks, kernels, width):
    """One step of every board: a board that ended on the last step starts again (its action is
    ignored: Gymnasium's next-step auto-reset); the others play their action, then chance and
    the other seat (random or nobody). ``pending`` becomes the boards that ended now. With
    ``penalty`` an illegal action ends its board with ``illegal_reward`` (``illegal[i]``); else
    actions are legal. Compiled for each game's ``KernelSet`` (``kernels``), its kernels inlined."""
    states, streams, obs, masks = unowned(states), unowned(streams), unowned(obs), unowned(masks)
    _step_boards(states, streams, seats, episodes, init, pending, actions, seat_modes, opponent, opening, penalty,
                 illegal_reward, obs, rewards, terms, illegal, masks, kernels, width, None)


@intrinsic
def _copy_items(typingctx: Any, out: Any, src: Any, start: Any, count: Any) -> Any:
    """``memcpy`` of ``count`` items from item ``start`` of C-contiguous ``src`` to ``out`` (same dtype)."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        dst = context.make_array(signature.args[0])(context, builder, value=args[0])
        source = context.make_array(signature.args[1])(context, builder, value=args[1])
        size = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(out.dtype)))
        offset = builder.mul(args[2], size)
        to = builder.gep(builder.bitcast(dst.data, cgutils.voidptr_t), [offset])
        frm = builder.gep(builder.bitcast(source.data, cgutils.voidptr_t), [offset])
        cgutils.raw_memcpy(builder, to, frm, builder.mul(args[3], size), 1)
        return context.get_dummy_value()

    return types.none(out, src, types.intp, types.intp), codegen


@njit(cache=True, nogil=True)
def copy_rows(out, src, lo, hi):
    """``out[lo:hi] = src[lo:hi]`` for C-contiguous arrays of one shape and dtype, as one
    ``memcpy`` (numba's slice assignment copies item by item: Starship's 17 MB of uint8 planes
    took 15 ms against NumPy's 2)."""
    row = src.size // src.shape[0] if src.shape[0] else 0
    _copy_items(out, src, lo * row, (hi - lo) * row)


@njit(cache=True, parallel=True, nogil=True)
def step_two_player_slices(bounds, copy, obs_out, states, streams, seats, episodes, init, pending, actions, seat_modes,
                           opponent, opening, penalty, illegal_reward, obs, rewards, terms, illegal, masks, kernels,
                           width):
    """``step_two_player`` on the boards ``bounds[t]:bounds[t + 1]``, one slice a thread of
    numba's (``BoardThreads``); with ``copy`` each slice's observations are then copied into
    ``obs_out`` in its own thread."""
    for t in prange(bounds.size - 1):
        lo, hi = bounds[t], bounds[t + 1]
        step_two_player(states[lo:hi], streams[lo:hi], seats[lo:hi], episodes[lo:hi], init, pending[lo:hi],
                        actions[lo:hi], seat_modes[lo:hi], opponent, opening, penalty, illegal_reward, obs[lo:hi],
                        rewards[lo:hi], terms[lo:hi], illegal[lo:hi], masks[lo:hi], kernels, width)
        if copy:
            copy_rows(obs_out, obs, lo, hi)


SEARCH_KERNELS_T = (MOVES_T, PUSH_T, POP_T, INT_OF_STATE_T, INT_OF_STATE_T, INT_OF_STATE_T, CHANCE_T, EVAL_T)
"""Numba types of a search opponent's kernels: moves (the move filter's), push, pop, to_move,
outcome, key, chance, evaluator."""
SEARCH_DATA_T = types.Tuple((_I, _I, _F, _F1, _I1, _I1, _I1, _I2, types.float64[:, ::1], _I2, _I2, _I2, _I2, _F1,
                             _I2, types.float64[:, ::1], _I2, _I1, _I2, types.float64[:, ::1], _I1, _F1))
"""Numba type of ``SearchOpponent.data``: kind, depth, bound, evaluator params, the root's
scratch copy, the settings' words and values, then the tables (the transposition table's five
arrays with a row a root player, killers, history, bufs, scores, pv, pv_len, chance outcomes and
probabilities, counters, root values)."""
MOVER_T = types.FunctionType(types.int64(STATE_T, *SEARCH_KERNELS_T, SEARCH_DATA_T))
"""``move(s, moves, push, pop, to_move, outcome, key, chance, evaluate, data)``: the other seat's
move by a compiled search (tablegym.search.batch_opponent.searched_move)."""


_mover_at, _pop_at, _eval_at = _function_at(MOVER_T), _function_at(POP_T), _function_at(EVAL_T)


@njit(cache=True)
def _search_at(k, data):
    """The other seat's search as ``_opponent_move`` takes it, from the addresses ``k`` (``mover``,
    then ``SEARCH_KERNELS_T``'s kernels: ``BatchOpponent.addresses``) and its ``data``."""
    return (_mover_at(k[0]), _moves_at(k[1]), _push_at(k[2]), _pop_at(k[3]), _int_of_state_at(k[4]),
            _int_of_state_at(k[5]), _int_of_state_at(k[6]), _chance_at(k[7]), _eval_at(k[8]), data)


@_quiet_njit(types.none(*_RESET_ARGS, _I1, SEARCH_DATA_T))
def reset_two_player_search(states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks,
                            kernels, width, search_kernels, data):
    """``reset_two_player`` with a compiled search as the other seat (``search_kernels``: its
    mover, tablegym.search.batch_opponent.searched_move, and its kernels, as addresses)."""
    search = _search_at(search_kernels, data)
    states, streams, obs, masks = unowned(states), unowned(streams), unowned(obs), unowned(masks)
    _reset_boards(states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks,
                  _kernels_at(kernels), width, search)


@_quiet_njit(types.none(*_STEP_ARGS, _I1, SEARCH_DATA_T))
def step_two_player_search(states, streams, seats, episodes, init, pending, actions, seat_modes, opponent, opening,
                           penalty, illegal_reward, obs, rewards, terms, illegal, masks, kernels, width, search_kernels,
                           data):
    """``step_two_player`` with a compiled search as the other seat (``search_kernels`` as for
    ``reset_two_player_search``)."""
    search = _search_at(search_kernels, data)
    states, streams, obs, masks = unowned(states), unowned(streams), unowned(obs), unowned(masks)
    _step_boards(states, streams, seats, episodes, init, pending, actions, seat_modes, opponent, opening, penalty,
                 illegal_reward, obs, rewards, terms, illegal, masks, _kernels_at(kernels), width, search)


@njit(cache=True)
def no_eval(s, player, params):
    """The evaluator kernel a reference player's batch is handed (``MoverOpponent``): never called."""
    return 0.0


def search_kernels(state: Any, moves: Any, evaluate: Any) -> tuple:
    """``SEARCH_KERNELS_T``'s kernels for the batch kernels: ``moves`` (the game's, or its move
    filter's), the game's push, pop, to_move, outcome, key and chance kernels, and ``evaluate``."""
    k = state.kernels
    return (CompiledKernel(moves, MOVES_T), CompiledKernel(k.push, PUSH_T), CompiledKernel(k.pop, POP_T),
            CompiledKernel(k.to_move, INT_OF_STATE_T), CompiledKernel(k.outcome, INT_OF_STATE_T),
            CompiledKernel(k.key, INT_OF_STATE_T),
            CompiledKernel(no_chance if k.chance is None else k.chance, CHANCE_T), CompiledKernel(evaluate, EVAL_T))


class BatchOpponent:
    """The other seat of a batch as the ``*_search`` batch kernels take it: ``mover`` (``MOVER_T``),
    ``kernels`` (``SEARCH_KERNELS_T``) and ``data`` (``SEARCH_DATA_T``), filled by
    ``SearchOpponent`` (a compiled search, in the search layer) or ``MoverOpponent`` (a game's own
    compiled reference player)."""

    name: str
    mover: CompiledKernel
    kernels: tuple
    data: tuple

    @property
    def addresses(self) -> np.ndarray:
        """``mover`` and ``kernels`` as the ``*_search`` entry points take them (``_search_at``)."""
        if getattr(self, "_addresses", None) is None:
            self._addresses = np.array([k.address for k in (self.mover, *self.kernels)], dtype=np.int64)
        return self._addresses

    def reset(self, *args: Any) -> None:
        """``reset_two_player``'s arguments, the game's kernels as addresses (``_kernels_at``): its
        boards dealt with this opponent as the other seat."""
        reset_two_player_search(*args, self.addresses, self.data)

    def step(self, *args: Any) -> None:
        """``step_two_player``'s arguments, the game's kernels as addresses: one step of its boards
        with this opponent as the other seat."""
        step_two_player_search(*args, self.addresses, self.data)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class MoverOpponent(BatchOpponent):
    """A game's reference player, compiled, as the other seat of a batch (Trap's course Medium and
    Hard: its vector env lists them in ``reference_opponents``). ``mover`` has ``MOVER_T``'s
    arguments and reads only the board, ``data``'s depth (its second item) and ``data``'s scratch
    copy of a board (its fifth); the search tables it would hold are left empty."""

    def __init__(self, game: Game, name: str, mover: Any, depth: int = 0) -> None:
        state = game.new_initial_state()
        self.name = name
        self.mover = CompiledKernel(mover, MOVER_T)
        self.kernels = search_kernels(state, state.kernels.moves, no_eval)
        i1, i2 = np.zeros(1, dtype=np.int64), np.zeros((1, 1), dtype=np.int64)
        f1, f2 = np.zeros(1), np.zeros((1, 1))
        bufs = np.zeros((1, game.spec.num_actions), dtype=np.int64)
        self.data = (0, int(depth), 0.0, f1, state.array.copy(), i1, i1, i2, f2, i2, i2, i2, i2, f1, bufs, f2, i2, i1,
                     i2, f2, i1, f1)


@_quiet_njit(types.none(_I2, _U2, _I1, _F1, _I1, _B1, types.boolean, _F2, _M2, _I2, _I1, _I), nogil=True)
def reset_single(states, streams, steps, last_score, init, which, from_start, obs, masks, info, kernels, width):
    """Deal a new game on every board ``i`` with ``which[i]`` (chance resolved); a step's reward is
    the change of ``score`` from the dealt position's (``from_start``) or from 0 (``kernels``:
    ``_kernels_at``'s, then score and info)."""
    kern = _kernels_at(kernels)
    score, info_fn = _score_at(kernels[9]), _info_at(kernels[10])
    states, streams, obs, masks, info = unowned(states), unowned(streams), unowned(obs), unowned(masks), unowned(info)
    buf = np.empty(width, np.int64)
    probs = np.empty(width)
    for i in range(states.shape[0]):
        if which[i]:
            s = states[i]
            s[:] = init
            _resolve_chance(s, streams[i], kern, buf, probs)
            steps[i] = 0
            last_score[i] = score(s) if from_start else 0.0
            _finish(s, i, 0, kern, obs, masks, buf)
            info_fn(s, info[i])


_STEP_SINGLE_ARGS = (_I2, _U2, _I1, _F1, _I1, _B1, types.boolean, _I1, _I, types.boolean, _F, _F2, _F1, _B1, _B1, _B1,
                     _M2, _I2, _I1, _I)


@_quiet_njit(types.none(*_STEP_SINGLE_ARGS), nogil=True)
def step_single(states, streams, steps, last_score, init, pending, from_start, actions, limit, penalty,
                illegal_reward, obs, rewards, terms, truncs, illegal, masks, info, kernels, width):
    """One step of every board of a single-player game (``SinglePlayerEnv.step``): the reward
    is the change of ``score`` (the first step's counts from the dealt position's score with
    ``from_start``, else from 0), a board truncates after
    ``limit`` steps (0: never), and a board that ended on the last step is dealt again."""
    kern = _kernels_at(kernels)
    score, info_fn = _score_at(kernels[9]), _info_at(kernels[10])
    states, streams, obs, masks, info = unowned(states), unowned(streams), unowned(obs), unowned(masks), unowned(info)
    buf = np.empty(width, np.int64)
    probs = np.empty(width)
    for i in range(states.shape[0]):
        s = states[i]
        illegal[i] = False
        truncs[i] = False
        if pending[i]:
            s[:] = init
            _resolve_chance(s, streams[i], kern, buf, probs)
            steps[i] = 0
            last_score[i] = score(s) if from_start else 0.0
            rewards[i] = 0.0
            terms[i] = False
            pending[i] = False
        else:
            a = actions[i]
            if penalty and (a < 0 or a >= masks.shape[1] or masks[i, a] == 0):
                illegal[i] = True
                observe_of(kern, s, 0, obs[i])
                masks[i, :] = 0
                info_fn(s, info[i])
                rewards[i] = illegal_reward
                terms[i] = True
                pending[i] = True
                continue
            push_of(kern, s, a)
            _resolve_chance(s, streams[i], kern, buf, probs)
            steps[i] += 1
            now = score(s)
            rewards[i] = now - last_score[i]
            last_score[i] = now
            terms[i] = outcome_of(kern, s) != ONGOING
            truncs[i] = not terms[i] and limit > 0 and steps[i] >= limit
            pending[i] = terms[i] or truncs[i]
        _finish(s, i, 0, kern, obs, masks, buf)
        info_fn(s, info[i])


STEP_SINGLE_T = types.FunctionType(types.none(*_STEP_SINGLE_ARGS))
_step_single_at = _function_at(STEP_SINGLE_T)


@njit(cache=True, parallel=True, nogil=True)
def step_single_slices(bounds, copy, obs_out, entry, states, streams, steps, last_score, init, pending, from_start,
                       actions, limit, penalty, illegal_reward, obs, rewards, terms, truncs, illegal, masks, info,
                       kernels, width):
    """``step_single`` (at the address ``entry``) in slices of the boards, one a thread (as
    ``step_two_player_slices``). Called by its address, the entry point is not compiled into this
    function again (Starship's took 34 s so)."""
    step = _step_single_at(entry)
    for t in prange(bounds.size - 1):
        lo, hi = bounds[t], bounds[t + 1]
        step(states[lo:hi], streams[lo:hi], steps[lo:hi], last_score[lo:hi], init, pending[lo:hi], from_start,
             actions[lo:hi], limit, penalty, illegal_reward, obs[lo:hi], rewards[lo:hi], terms[lo:hi], truncs[lo:hi],
             illegal[lo:hi], masks[lo:hi], info[lo:hi], kernels, width)
        if copy:
            copy_rows(obs_out, obs, lo, hi)


@njit(types.int64(_I1, _M2, _B1), cache=True)
def first_illegal(actions, masks, pending):
    """The first board whose action is not in its mask (a board waiting for its auto-reset takes
    any), or -1: the check of every step, one pass in compiled code (NumPy's fancy indexing for
    it cost a tenth of a small game's step)."""
    for i in range(actions.shape[0]):
        a = actions[i]
        if not pending[i] and (a < 0 or a >= masks.shape[1] or masks[i, a] != 1):
            return i
    return -1


@njit(cache=True)
def no_info(s, out):
    """The ``info`` kernel of an env with no integer ``info`` entries."""


class CompiledKernel:
    """A kernel compiled for the first-class function type ``kind``: its C wrapper's ``address``,
    found once, which the batch entry points take in an int64 array (``_function_at``); passed
    itself as a first-class function argument (the opponent bench's root search), it is typed
    by ``_numba_type_`` instead of numba looking the dispatcher up again at every call."""

    __slots__ = ("_numba_type_", "address", "kernel")

    def __init__(self, kernel: Any, kind: types.FunctionType) -> None:
        self.kernel = kernel
        self._numba_type_ = kind
        self.address = types.CompileResultWAP(kernel.get_compile_result(kind.signature)).address

    def __wrapper_address__(self) -> int:
        return self.address


_CHILDREN_ARGS = (_I2, _M2, types.float32[:, :, ::1], _B2, _D2, _I1)


@_quiet_njit(types.none(*_CHILDREN_ARGS))
def children_of(states, masks, obs, ended, result, kernels):
    """Each board's children: for every legal move ``a`` of board ``i`` (``masks``), the position
    after it, as the observation of the player to move there (``obs[i, a]``), whether the move
    ended the game (``ended[i, a]``) and then the game's result for the board's mover
    (``result[i, a]``: +1 won, -1 lost, 0 drawn). Games without chance only: the mover's
    opponent is to move in every unfinished child. What an afterstate learner values
    (training/negamax_dqn.py); the boards are left as they were."""
    kern = _kernels_at(kernels)
    child = np.empty(states.shape[1], np.int64)
    for i in range(states.shape[0]):
        s = states[i]
        mover = to_move_of(kern, s)
        for a in range(masks.shape[1]):
            ended[i, a] = False
            result[i, a] = 0.0
            if masks[i, a] == 0:
                continue
            child[:] = s
            push_of(kern, child, a)
            if outcome_of(kern, child) != ONGOING:
                ended[i, a] = True
                result[i, a] = _reward_of(child, mover, kern)
            else:
                observe_of(kern, child, to_move_of(kern, child), obs[i, a])


_GRANDCHILDREN_ARGS = (_I2, _M2, types.float32[:, :, :, ::1], _B3, _D3, _B3, _I1, _I)


@_quiet_njit(types.none(*_GRANDCHILDREN_ARGS))
def grandchildren_of(states, masks, obs, ended, result, legal, kernels, width):
    """Each board's positions two moves on: for every legal move ``a`` of board ``i`` that does
    not end the game and every legal reply ``b`` (``legal[i, a, b]``), the position after both,
    as its player to move (the board's mover again) observes it (``obs[i, a, b]``), whether the
    reply ended the game (``ended[i, a, b]``) and then the result for the board's mover
    (``result[i, a, b]``). Games without chance only (``children_of``)."""
    kern = _kernels_at(kernels)
    child = np.empty(states.shape[1], np.int64)
    grandchild = np.empty(states.shape[1], np.int64)
    buf = np.empty(width, np.int64)
    for i in range(states.shape[0]):
        s = states[i]
        mover = to_move_of(kern, s)
        for a in range(masks.shape[1]):
            legal[i, a, :] = False
            ended[i, a, :] = False
            result[i, a, :] = 0.0
            if masks[i, a] == 0:
                continue
            child[:] = s
            push_of(kern, child, a)
            if outcome_of(kern, child) != ONGOING:
                continue
            for k in range(moves_of(kern, child, buf)):
                b = buf[k]
                legal[i, a, b] = True
                grandchild[:] = child
                push_of(kern, grandchild, b)
                if outcome_of(kern, grandchild) != ONGOING:
                    ended[i, a, b] = True
                    result[i, a, b] = _reward_of(grandchild, mover, kern)
                else:
                    observe_of(kern, grandchild, to_move_of(kern, grandchild), obs[i, a, b])


_OUTCOMES_ARGS = (_I2, _M2, _F2, _I1, _I1, _F1, _I1, _F1, _I1, _I)


@_quiet_njit(types.UniTuple(_I, 2)(*_OUTCOMES_ARGS))
def outcomes_of(states, masks, obs, keys, index, weight, position, result, kernels, width):
    """Each board's children in a game with chance, as rows: for every legal move ``a`` of board
    ``i`` and, where the move leads to a chance node, every outcome of it: ``index[r] = i * A +
    a``; ``weight[r]`` the outcome's probability, negative where the player to move there is
    the board's mover's opponent (so ``sum weight * V`` is the move's expected value for the
    mover); ``position[r]`` the row of ``obs`` holding the position reached, as its player to
    move observes it, or -1 where the game ended, with ``result[r]`` the result for the board's
    mover. A board's positions are kept once (by the header's position key, ``keys``): Trap's
    throws land on the same few cells. A game without chance has one row a move.

    Returns (rows, positions) needed: at most ``len(index)`` rows and ``len(obs)`` positions are
    written, so a caller whose arrays were too short calls again with longer ones. One chance
    node a move at most (a second in a row raises). What training/negamax_dqn.py values."""
    kern = _kernels_at(kernels)
    child = np.empty(states.shape[1], np.int64)
    grandchild = np.empty(states.shape[1], np.int64)
    cells = np.empty(width, np.int64)
    probs = np.empty(width)
    rows, places = index.shape[0], obs.shape[0]
    r = 0
    p = 0
    for i in range(states.shape[0]):
        s = states[i]
        mover = to_move_of(kern, s)
        first = p  # this board's positions start here
        for a in range(masks.shape[1]):
            if masks[i, a] == 0:
                continue
            child[:] = s
            push_of(kern, child, a)
            at_chance = outcome_of(kern, child) == ONGOING and to_move_of(kern, child) == CHANCE
            n = chance_of(kern, child, cells, probs) if at_chance else 1
            for k in range(n):
                grandchild[:] = child
                prob = 1.0
                if at_chance:
                    push_of(kern, grandchild, cells[k])
                    prob = probs[k]
                at = -1
                sign = 1.0
                if outcome_of(kern, grandchild) == ONGOING:
                    player = to_move_of(kern, grandchild)
                    if player == CHANCE:
                        raise ValueError("outcomes_of: two chance nodes in a row")
                    sign = 1.0 if player == mover else -1.0
                    key = grandchild[KEY] * 2 + (player != mover)
                    for j in range(first, min(p, places)):
                        if keys[j] == key:
                            at = j
                            break
                    if at < 0:
                        at = p
                        if p < places:
                            keys[p] = key
                            observe_of(kern, grandchild, player, obs[p])
                        p += 1
                if r < rows:
                    index[r] = i * masks.shape[1] + a
                    weight[r] = sign * prob
                    position[r] = at
                    result[r] = _reward_of(grandchild, mover, kern) if at < 0 else 0.0
                r += 1
    return r, p


STEP_SINGLE_SLICES = (step_single_slices, CompiledKernel(step_single, STEP_SINGLE_T).address)
"""What ``KernelVectorEnv._run_boards`` takes to step the boards in slices: the entry point in
slices and the address of the entry point it calls."""


def _check_num_envs(num_envs: Any) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
    return int(num_envs)


def _check_autoreset(mode: Any) -> AutoresetMode:
    """An ``AutoresetMode``, or its value or name as a string in any case ("SameStep", "same_step")."""
    spelled = {m.value.lower(): m for m in AutoresetMode} | {m.name.lower(): m for m in AutoresetMode}
    checked = spelled.get(mode.lower()) if isinstance(mode, str) else mode
    if checked not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP (the default; 'next_step') or "
                         f"AutoresetMode.SAME_STEP ('same_step'), got {mode!r}")
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


BOARDS_A_THREAD = 128
"""The fewest boards a thread steps when the number of threads is automatic. Measured on 2 idle
cores (results/bench/vec/threads.py), two threads against one: every env id faster from 256
boards (1.10x Friday to 1.89x Starship), 1.38-2.26x at 1024; at 128 boards Trilobite 1.11x."""
TRIAL_CALLS = 8
"""The fewest steps timed with several threads, then with one, before an automatic count chooses."""
TRIAL_SECONDS = 0.25
"""The least time by the clock that each count's timed steps take (more steps are timed until it
has passed). A step of 1024 boards takes 0.3-1 ms and some clocks advance in steps of 20-50 ms
(the development machine's wall clocks): timed one step at a time, both counts' steps read 0 s
and one thread won every tie."""
WAKE_CALLS = 2
"""The first steps of each count left out of its time: numba's threads, asleep after a while
without work, wake up in them (Trap x 1024: 2-18 ms against 1.3 ms once they are awake)."""
RETRIAL_CALLS = 1000
"""Steps, counted from the start of the last trial, after which an automatic count is timed and
chosen again (once ``RETRIAL_SECONDS`` have passed too)."""
RETRIAL_SECONDS = 20.0
"""The least time between two trials, so that trials (``2 * TRIAL_SECONDS``, half of it in the
slower count) take a few percent of the steps' time however short a step is."""


def available_cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity`` where the system has it)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _check_threads(threads: Any, num_envs: int, shared_tables: bool) -> tuple[int, bool]:
    """``threads`` as (the most threads, whether to choose by timing): 1 (or None, the default),
    an integer, or "auto", which tries one thread per ``BOARDS_A_THREAD`` boards, at most one per
    core, against one thread (one thread where the other seat keeps tables the boards share)."""
    if threads is None:
        return 1, False
    if isinstance(threads, str) and threads == "auto":
        most = 1 if shared_tables else max(1, min(available_cores(), num_envs // BOARDS_A_THREAD))
        return most, most > 1
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1 (default 1) or 'auto', got {threads!r}")
    if threads > 1 and shared_tables:
        raise ValueError(f"threads must be 1 with a search or reference player as the other seat "
                         f"(its tables serve every board), got threads={threads!r}")
    return int(min(threads, num_envs)), False


_SLICES_LOCK = threading.Lock()
"""Held around every step in slices: numba's own thread pool may not take two such calls from two
Python threads at once (its ``workqueue`` layer, where OpenMP is missing, ends the process)."""


class BoardThreads:
    """How many of numba's threads step a batch's boards, each a contiguous slice of them (a
    ``*_slices`` entry point given ``bounds``), or one (the entry point itself, in this thread).

    Threads pay only on idle cores: on 2 cores at 1024 boards two threads stepped 1.3-2.2x
    faster than one, but with a second such process beside it 4-40x slower (OpenMP's threads spin
    while they wait, and each step waits for its slowest slice). So an automatic count is timed:
    at least ``TRIAL_CALLS`` steps with ``most`` threads, then with one, by ``clock`` (each count's
    steps in a row: steps alternating with one thread's found the other threads asleep every
    time), and the faster is kept, then timed again once ``RETRIAL_CALLS`` steps and
    ``RETRIAL_SECONDS`` have passed, as other work on the machine comes and goes.

    A count's time a step is the median over stretches of steps that each end when the clock's
    reading changes (a step each where the clock is fine, tens of steps where it advances in
    steps of milliseconds); the steps before the first change are left out, since the clock's
    reading then began at an unknown point of its step. A stretch so read is off by at most one
    step's time, however coarse the clock."""

    def __init__(self, num_envs: int, most: int, choose: bool = False,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.bounds = np.linspace(0, num_envs, most + 1).round().astype(np.int64)
        """The slices' first boards, then ``num_envs``."""
        self.most = most
        self.threads = 1 if choose else most
        """The threads stepping the boards now."""
        self._choose = choose
        self._clock = clock
        self._counts = (most, 1)
        self._phase: int | None = 0 if choose else None
        """The index in ``_counts`` of the count being timed; None once one is chosen."""
        self._calls = 0
        """Steps in this phase, or since the choice."""
        self._chosen_at = 0.0
        self._stretch: tuple[float, int] | None = None
        """The clock's reading and the phase's steps at the start of the stretch being timed."""
        self._aligned = False
        self._times: dict[int, list[float]] = {1: [], most: []}

    def run(self, call: Callable[[np.ndarray | None], None]) -> None:
        """``call(None)`` (every board in this thread) or ``call(bounds)`` (in slices, at once)."""
        if self._phase is None:
            self._run(call, self.threads)
            self._calls += 1
            if (self._choose and self._calls >= RETRIAL_CALLS - 2 * TRIAL_CALLS
                    and self._clock() - self._chosen_at >= RETRIAL_SECONDS):
                self._phase, self._calls = 0, 0
            return
        threads = self._counts[self._phase]
        self._run(call, threads)
        self._calls += 1
        if self._calls < WAKE_CALLS:
            return
        now = self._clock()
        if self._stretch is None:
            self._stretch = (now, self._calls)
            return
        start, calls = self._stretch
        if now == start:
            return
        if self._aligned:
            self._times[threads].append((now - start) / (self._calls - calls))
        self._aligned = True
        self._stretch = (now, self._calls)
        if self._calls >= TRIAL_CALLS and len(self._times[threads]) >= TRIAL_CALLS - WAKE_CALLS - 1:
            self._next_phase()

    def _next_phase(self) -> None:
        self._calls, self._stretch, self._aligned = 0, None, False
        if self._phase == 0:
            self._phase = 1
            return
        times = {n: float(np.median(t)) for n, t in self._times.items()}
        self.threads = min(times, key=lambda n: (times[n], n))
        self._times = {1: [], self.most: []}
        self._phase = None
        self._chosen_at = self._clock()

    @property
    def choosing(self) -> bool:
        """Whether the next steps are timed to choose the number of threads."""
        return self._phase is not None

    def _run(self, call: Callable[[np.ndarray | None], None], threads: int) -> None:
        if threads == 1:
            call(None)
        else:
            with _SLICES_LOCK:
                call(self.bounds)


class KernelVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` boards of a kernel game stepped in one compiled call (the shared part).

    A subclass names its game's single env (``single_env``, built once with the same keyword
    arguments as a prototype: spaces, rules and options come from it) and its compiled
    ``observation(s, player, out)``. ``actions`` is an integer array of shape ``(num_envs,)``;
    an action illegal on its board raises ``IllegalActionError`` (a ``ValueError``) naming the
    board, the action and the legal set, unless the env was made with
    ``illegal_action="penalty"``. Boards that ended on the last step start again on this one,
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

    def _setup(self, num_envs: Any, game: Game, proto: gymnasium.Env, autoreset_mode: Any,
               illegal_action: str, render_mode: str | None, copy: bool) -> None:
        """The batch arrays, spaces and kernels shared by every kernel game."""
        self.num_envs = _check_num_envs(num_envs)
        self.copy = _check_copy(copy)
        self._autoreset(autoreset_mode)
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode of a vector env must be 'ansi' or None, got {render_mode!r}")
        self.game = game
        self.render_mode = render_mode
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
        self._compiled = (CompiledKernel(k.moves, MOVES_T), CompiledKernel(k.push, PUSH_T),
                          CompiledKernel(k.to_move, INT_OF_STATE_T), CompiledKernel(k.outcome, INT_OF_STATE_T),
                          CompiledKernel(no_chance if k.chance is None else k.chance, CHANCE_T),
                          CompiledKernel(type(self).draw_kernel, DRAW_T), CompiledKernel(observe, OBSERVE_T))
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

    def _stepped(self, rewards: np.ndarray, terms: np.ndarray,
                 truncs: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """A step's return after the compiled step; in the same-step mode the boards that ended
        are dealt again now (``_pending`` holds them), their last observation and info kept."""
        if self.autoreset_mode is AutoresetMode.NEXT_STEP or not self._pending.any():
            return self._observations(), rewards, terms, truncs, self._info()
        ended = self._pending.copy()
        last, last_info = self._observations(), self._info()
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(ended):
            final_obs[i] = ({k: v[i].copy() for k, v in last.items()} if isinstance(last, dict) else last[i].copy())
        obs, info = self.reset(options={"reset_mask": ended})
        info.update({"final_obs": final_obs, "_final_obs": ended, "final_info": _rows_of(last_info, ended),
                     "_final_info": ended})
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
            raise ValueError(f"seed must be None, an int >= 0 or a list of {n} such seeds (one a board, None for "
                             f"fresh entropy), got {seed!r}")
        self._streams = stream_rows(seeds)
        return True

    def _integer_actions(self, actions: Any) -> np.ndarray:
        """The actions as int64, one integer a board (one-line errors otherwise)."""
        if self._streams is None:
            raise RuntimeError("reset() was never called; call reset() first")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), one action a board; "
                             f"got {a.dtype} of shape {a.shape}")
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
        raise ValueError(f"agent_seat must be 0, 1, 'alternate' or a sequence of {n} of them (one a board), "
                         f"got {agent_seat!r}")
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

    def __init__(self, num_envs: int = 1, *, opponent: Any = "random", agent_seat: Any = 0,
                 illegal_action: str = "raise", render_mode: str | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, copy: bool = True,
                 threads: int | str = 1, **kwargs: Any) -> None:
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

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
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
        args = (self._states, self._streams, self._seats, self._episodes, self._init, which, seat_modes, self._opponent,
                self._opening, self._obs, self._masks)
        if self._search is None:
            self._run_boards(reset_two_player, (*args, self._kernel_set, self._width))
        else:
            self._run_boards(self._search.reset, (*args, self._kernels, self._width))
        self._reset_done(which)
        return self._observations(), self._info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        a = self._actions(actions)
        penalty = self.illegal_action == "penalty"
        args = (self._states, self._streams, self._seats, self._episodes, self._init, self._pending, a, self._seat_modes,
                self._opponent, self._opening, penalty, -1.0, self._obs, self._rewards, self._terms, self._illegal,
                self._masks)
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
            need_rows, need_places = outcomes_of(self._states, self._masks, obs, keys, index, weight, position, result,
                                                 self._kernels, self._width)
            if need_rows <= rows and need_places <= places:
                self._outcome_sizes = (rows, places)
                return (obs[:need_places].reshape((need_places, *self._obs_shape)), index[:need_rows],
                        weight[:need_rows], position[:need_rows], result[:need_rows], self._masks.astype(bool))
            rows, places = max(rows, 2 * need_rows), max(places, 2 * need_places)

    def _no_chance(self, what: str) -> None:
        if self.has_chance:
            raise ValueError(f"{what}(): {self.game.spec.name} has chance nodes; only games without chance "
                             f"have one position a move")

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

    def __init__(self, num_envs: int = 1, *, illegal_action: str = "raise", render_mode: str | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, copy: bool = True,
                 threads: int | str = 1, **kwargs: Any) -> None:
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

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every board again (or those of ``options["reset_mask"]``)."""
        self._seed(seed)
        which = self._boards_to_reset(options)
        self._run_boards(reset_single, (
            self._states, self._streams, self._steps, self._last_score, self._init, which, self.score_from_start,
            self._obs, self._masks, self._info_values, self._kernels, self._width))
        self._reset_done(which)
        return self._observations(), self._info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        a = self._actions(actions)
        penalty = self.illegal_action == "penalty"
        self._run_boards(step_single, (
            self._states, self._streams, self._steps, self._last_score, self._init, self._pending, self.score_from_start,
            a, self._limit, penalty, self.illegal_reward, self._obs, self._rewards, self._terms, self._truncs,
            self._illegal, self._masks, self._info_values, self._kernels, self._width), STEP_SINGLE_SLICES)
        return self._stepped(self._rewards.copy(), self._terms.copy(), self._truncs.copy())

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        for k, key in enumerate(self.info_keys):
            info[key] = self._info_values[:, k].copy()
            info["_" + key] = np.ones(self.num_envs, dtype=bool)
        return info
