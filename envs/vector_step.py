"""The compiled steps of the batched envs (envs/vector.py): one numba call resets or steps every
board of a batch, the agent's move, the chance nodes and the other seat (a random legal move, a
compiled search, or nobody: self-play) through the game's own kernels, and writes the batched
observations, rewards, terminations and legal-action masks.

The two-player steps against a random seat or in self-play are compiled for each game, its
kernels inlined (a ``KernelSet``, envs/kernel_sets.py); the other entry points take the kernels'
addresses and serve every game from one compile. The ``*_slices`` entry points step a contiguous
slice of the boards in each of numba's threads (envs/vector_threads.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, prange, types
from numba.core import cgutils
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.extending import intrinsic

from tablegym.envs.core import (
    CHANCE,
    CHANCE_T,
    EVAL_T,
    INT_OF_STATE_T,
    MOVES_T,
    ONGOING,
    POP_T,
    PUSH_T,
    STATE_T,
    Game,
    kernel_state,
    no_chance,
)
from tablegym.envs.kernel_sets import chance_of, draw_of, has_chance_of, moves_of, observe_of, outcome_of, push_of, to_move_of
from tablegym.envs.streams import integers

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
    return (
        _moves_at(k[0]),
        _push_at(k[1]),
        (_int_of_state_at(k[2]), k[7]),
        (_int_of_state_at(k[3]), k[8]),
        _chance_at(k[4]),
        _draw_at(k[5]),
        _observe_at(k[6]),
    )


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
def _reset_two_player(
    states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks, kernels, buf, probs, search
):
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
def _reset_boards(
    states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks, kernels, width, search
):
    buf = np.empty(width, np.int64)
    probs = np.empty(width)
    for i in range(states.shape[0]):
        if which[i]:
            _reset_two_player(
                states, streams, seats, episodes, init, i, seat_modes, opponent, opening, obs, masks, kernels, buf, probs, search
            )


@njit(cache=True)
def _step_boards(
    states,
    streams,
    seats,
    episodes,
    init,
    pending,
    actions,
    seat_modes,
    opponent,
    opening,
    penalty,
    illegal_reward,
    obs,
    rewards,
    terms,
    illegal,
    masks,
    kernels,
    width,
    search,
):
    buf = np.empty(width, np.int64)
    probs = np.empty(width)
    for i in range(states.shape[0]):
        s = states[i]
        illegal[i] = False
        if pending[i]:
            _reset_two_player(
                states, streams, seats, episodes, init, i, seat_modes, opponent, opening, obs, masks, kernels, buf, probs, search
            )
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
_STEP_ARGS = (_I2, _U2, _I1, _I1, _I1, _B1, _I1, _I1, _I, _I, types.boolean, _F, _F2, _F1, _B1, _B1, _M2, _I1, _I)
"""The argument types of the entry points with a search as the other seat (``*_search``, which add
its own); the game's kernels come as one array of addresses (``kernels``: ``_kernels_at``).
``reset_two_player`` and ``step_two_player`` take the same arguments with a ``KernelSet``."""


@njit(cache=True, nogil=True)
def reset_two_player(states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks, kernels, width):
    """Start a new game on every board ``i`` with ``which[i]``: ``opening`` random moves of both
    seats (the single env's ``opening_plies``), then the other seat (random or nobody) moving
    first when it is to move (``seat_modes[i]``: 0, 1 or ``ALTERNATE`` by the board's episode
    count). Compiled for each game's ``KernelSet`` (``kernels``), its kernels inlined."""
    states, streams, obs, masks = unowned(states), unowned(streams), unowned(obs), unowned(masks)
    _reset_boards(states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks, kernels, width, None)


@njit(cache=True, nogil=True)
def step_two_player(
    states,
    streams,
    seats,
    episodes,
    init,
    pending,
    actions,
    seat_modes,
    opponent,
    opening,
    penalty,
    illegal_reward,
    obs,
    rewards,
    terms,
    illegal,
    masks,
    kernels,
    width,
):
    """One step of every board: a board that ended on the last step starts again (its action is
    ignored: Gymnasium's next-step auto-reset); the others play their action, then chance and
    the other seat (random or nobody). ``pending`` becomes the boards that ended now. With
    ``penalty`` an illegal action ends its board with ``illegal_reward`` (``illegal[i]``); else
    actions are legal. Compiled for each game's ``KernelSet`` (``kernels``), its kernels inlined."""
    states, streams, obs, masks = unowned(states), unowned(streams), unowned(obs), unowned(masks)
    _step_boards(
        states,
        streams,
        seats,
        episodes,
        init,
        pending,
        actions,
        seat_modes,
        opponent,
        opening,
        penalty,
        illegal_reward,
        obs,
        rewards,
        terms,
        illegal,
        masks,
        kernels,
        width,
        None,
    )


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
def step_two_player_slices(
    bounds,
    copy,
    obs_out,
    states,
    streams,
    seats,
    episodes,
    init,
    pending,
    actions,
    seat_modes,
    opponent,
    opening,
    penalty,
    illegal_reward,
    obs,
    rewards,
    terms,
    illegal,
    masks,
    kernels,
    width,
):
    """``step_two_player`` on the boards ``bounds[t]:bounds[t + 1]``, one slice a thread of
    numba's (``BoardThreads``); with ``copy`` each slice's observations are then copied into
    ``obs_out`` in its own thread."""
    for t in prange(bounds.size - 1):
        lo, hi = bounds[t], bounds[t + 1]
        step_two_player(
            states[lo:hi],
            streams[lo:hi],
            seats[lo:hi],
            episodes[lo:hi],
            init,
            pending[lo:hi],
            actions[lo:hi],
            seat_modes[lo:hi],
            opponent,
            opening,
            penalty,
            illegal_reward,
            obs[lo:hi],
            rewards[lo:hi],
            terms[lo:hi],
            illegal[lo:hi],
            masks[lo:hi],
            kernels,
            width,
        )
        if copy:
            copy_rows(obs_out, obs, lo, hi)


SEARCH_KERNELS_T = (MOVES_T, PUSH_T, POP_T, INT_OF_STATE_T, INT_OF_STATE_T, INT_OF_STATE_T, CHANCE_T, EVAL_T)
"""Numba types of a search opponent's kernels: moves (the move filter's), push, pop, to_move,
outcome, key, chance, evaluator."""
SEARCH_DATA_T = types.Tuple(
    (
        _I,
        _I,
        _F,
        _F1,
        _I1,
        _I1,
        _I1,
        _I2,
        types.float64[:, ::1],
        _I2,
        _I2,
        _I2,
        _I2,
        _F1,
        _I2,
        types.float64[:, ::1],
        _I2,
        _I1,
        _I2,
        types.float64[:, ::1],
        _I1,
        _F1,
    )
)
"""Numba type of ``SearchOpponent.data``: kind, depth, bound, evaluator params, the root's
scratch copy, the settings' words and values, then the tables (the transposition table's five
arrays with a row a root player, killers, history, bufs, scores, pv, pv_len, chance outcomes and
probabilities, counters, root values)."""
(
    DATA_KIND,
    DATA_DEPTH,
    DATA_BOUND,
    DATA_PARAMS,
    DATA_ROOT,
    DATA_SETTINGS_AT,
    DATA_SETTINGS,
    DATA_TT_KEY,
    DATA_TT_VAL,
    DATA_TT_DEPTH,
    DATA_TT_FLAG,
    DATA_TT_MOVE,
    DATA_KILLERS,
    DATA_HISTORY,
    DATA_BUFS,
    DATA_SCORES,
    DATA_PV,
    DATA_PV_LEN,
    DATA_OUTS,
    DATA_PROBS,
    DATA_COUNTERS,
    DATA_VALUES,
) = range(22)
"""The fields of ``SEARCH_DATA_T`` by name, for a mover that reads a few of them
(``data[DATA_ROOT]``: the root's scratch copy); numba reads these globals as constants."""
MOVER_T = types.FunctionType(types.int64(STATE_T, *SEARCH_KERNELS_T, SEARCH_DATA_T))
"""``move(s, moves, push, pop, to_move, outcome, key, chance, evaluate, data)``: the other seat's
move by a compiled search (tablegym.search.batch_opponent.searched_move)."""


_mover_at, _pop_at, _eval_at = _function_at(MOVER_T), _function_at(POP_T), _function_at(EVAL_T)


@njit(cache=True)
def _search_at(k, data):
    """The other seat's search as ``_opponent_move`` takes it, from the addresses ``k`` (``mover``,
    then ``SEARCH_KERNELS_T``'s kernels: ``BatchOpponent.addresses``) and its ``data``."""
    return (
        _mover_at(k[0]),
        _moves_at(k[1]),
        _push_at(k[2]),
        _pop_at(k[3]),
        _int_of_state_at(k[4]),
        _int_of_state_at(k[5]),
        _int_of_state_at(k[6]),
        _chance_at(k[7]),
        _eval_at(k[8]),
        data,
    )


@_quiet_njit(types.none(*_RESET_ARGS, _I1, SEARCH_DATA_T))
def reset_two_player_search(
    states, streams, seats, episodes, init, which, seat_modes, opponent, opening, obs, masks, kernels, width, search_kernels, data
):
    """``reset_two_player`` with a compiled search as the other seat (``search_kernels``: its
    mover, tablegym.search.batch_opponent.searched_move, and its kernels, as addresses)."""
    search = _search_at(search_kernels, data)
    states, streams, obs, masks = unowned(states), unowned(streams), unowned(obs), unowned(masks)
    _reset_boards(
        states,
        streams,
        seats,
        episodes,
        init,
        which,
        seat_modes,
        opponent,
        opening,
        obs,
        masks,
        _kernels_at(kernels),
        width,
        search,
    )


@_quiet_njit(types.none(*_STEP_ARGS, _I1, SEARCH_DATA_T))
def step_two_player_search(
    states,
    streams,
    seats,
    episodes,
    init,
    pending,
    actions,
    seat_modes,
    opponent,
    opening,
    penalty,
    illegal_reward,
    obs,
    rewards,
    terms,
    illegal,
    masks,
    kernels,
    width,
    search_kernels,
    data,
):
    """``step_two_player`` with a compiled search as the other seat (``search_kernels`` as for
    ``reset_two_player_search``)."""
    search = _search_at(search_kernels, data)
    states, streams, obs, masks = unowned(states), unowned(streams), unowned(obs), unowned(masks)
    _step_boards(
        states,
        streams,
        seats,
        episodes,
        init,
        pending,
        actions,
        seat_modes,
        opponent,
        opening,
        penalty,
        illegal_reward,
        obs,
        rewards,
        terms,
        illegal,
        masks,
        _kernels_at(kernels),
        width,
        search,
    )


@njit(cache=True)
def no_eval(s, player, params):
    """The evaluator kernel a reference player's batch is handed (``MoverOpponent``): never called."""
    return 0.0


def search_kernels(state: Any, moves: Any, evaluate: Any) -> tuple:
    """``SEARCH_KERNELS_T``'s kernels for the batch kernels: ``moves`` (the game's, or its move
    filter's), the game's push, pop, to_move, outcome, key and chance kernels, and ``evaluate``."""
    k = state.kernels
    return (
        CompiledKernel(moves, MOVES_T),
        CompiledKernel(k.push, PUSH_T),
        CompiledKernel(k.pop, POP_T),
        CompiledKernel(k.to_move, INT_OF_STATE_T),
        CompiledKernel(k.outcome, INT_OF_STATE_T),
        CompiledKernel(k.key, INT_OF_STATE_T),
        CompiledKernel(no_chance if k.chance is None else k.chance, CHANCE_T),
        CompiledKernel(evaluate, EVAL_T),
    )


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
        state = kernel_state(game.new_initial_state())
        self.name = name
        self.mover = CompiledKernel(mover, MOVER_T)
        self.kernels = search_kernels(state, state.kernels.moves, no_eval)
        i1, i2 = np.zeros(1, dtype=np.int64), np.zeros((1, 1), dtype=np.int64)
        f1, f2 = np.zeros(1), np.zeros((1, 1))
        bufs = np.zeros((1, game.spec.num_actions), dtype=np.int64)
        self.data = (
            0,
            int(depth),
            0.0,
            f1,
            state.array.copy(),
            i1,
            i1,
            i2,
            f2,
            i2,
            i2,
            i2,
            i2,
            f1,
            bufs,
            f2,
            i2,
            i1,
            i2,
            f2,
            i1,
            f1,
        )


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


_STEP_SINGLE_ARGS = (
    _I2,
    _U2,
    _I1,
    _F1,
    _I1,
    _B1,
    types.boolean,
    _I1,
    _I,
    types.boolean,
    _F,
    _F2,
    _F1,
    _B1,
    _B1,
    _B1,
    _M2,
    _I2,
    _I1,
    _I,
)


@_quiet_njit(types.none(*_STEP_SINGLE_ARGS), nogil=True)
def step_single(
    states,
    streams,
    steps,
    last_score,
    init,
    pending,
    from_start,
    actions,
    limit,
    penalty,
    illegal_reward,
    obs,
    rewards,
    terms,
    truncs,
    illegal,
    masks,
    info,
    kernels,
    width,
):
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
def step_single_slices(
    bounds,
    copy,
    obs_out,
    entry,
    states,
    streams,
    steps,
    last_score,
    init,
    pending,
    from_start,
    actions,
    limit,
    penalty,
    illegal_reward,
    obs,
    rewards,
    terms,
    truncs,
    illegal,
    masks,
    info,
    kernels,
    width,
):
    """``step_single`` (at the address ``entry``) in slices of the boards, one a thread (as
    ``step_two_player_slices``). Called by its address, the entry point is not compiled into this
    function again (Starship's took 34 s so)."""
    step = _step_single_at(entry)
    for t in prange(bounds.size - 1):
        lo, hi = bounds[t], bounds[t + 1]
        step(
            states[lo:hi],
            streams[lo:hi],
            steps[lo:hi],
            last_score[lo:hi],
            init,
            pending[lo:hi],
            from_start,
            actions[lo:hi],
            limit,
            penalty,
            illegal_reward,
            obs[lo:hi],
            rewards[lo:hi],
            terms[lo:hi],
            truncs[lo:hi],
            illegal[lo:hi],
            masks[lo:hi],
            info[lo:hi],
            kernels,
            width,
        )
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
        compiled = types.CompileResultWAP(kernel.get_compile_result(kind.signature))
        self.address = compiled.address  # type: ignore[attr-defined]  # set in __init__, not in numba's stubs

    def __wrapper_address__(self) -> int:
        return self.address


STEP_SINGLE_SLICES = (step_single_slices, CompiledKernel(step_single, STEP_SINGLE_T).address)
"""What ``KernelVectorEnv._run_boards`` takes to step the boards in slices: the entry point in
slices and the address of the entry point it calls."""
