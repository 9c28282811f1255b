"""Starship's batched envs: ``gymnasium.make_vec("tablegym/Starship-v0", num_envs=N)`` (and
``"tablegym/StarshipTargets-v0"``) edit N ships in one compiled call a step, each as
``StarshipEnv`` (``TargetStarshipEnv``) with the same seed.

A board is a ship as ``ship.py`` keeps it (``tiles``, ``part`` and the part table, at most one
part a tile), its cursor and the episode's counters, all rows of batch arrays. Everything the
single env does in Python runs here in numba: the edit (``apply_edit``), the scoring (the same
compiled ``scoring.score``), the reward, the episode end, the masks (``brush_mask``,
``seal_mask``) and the observation (``env._observe``); and at every (auto-)reset the start ship,
drawn from the board's stream (envs/streams.py) as the generator draws it from ``np_random``:
stages 1-6 of ``stages_hull.py`` (shape, fill gaps, cockpit, reactor and their armor: the default
``start="partial"``), stages 1-2 (``start="empty"``) or the random start. The targets variant
keeps a second stream a board, seeded alike, for the targets the wrapper draws from its own
``np_random``.

What is not batched (a ``ValueError`` says so): ``representation="wide"`` (its actions are
triples) and ``start="partial"`` with ``partial_stages`` above 6 (the thruster, weapon,
supply, crew, fill and door stages run only in Python). ``info`` holds "action_mask",
"quality", "terms", "valid", "rules_passed", "changes" and "steps" (and for the targets variant
"targets", "measures" and "closeness"), one entry a board; "reasons" (words) and "cursor"
(tuples) are the single env's only.

Speed: a step costs what scoring a changed ship costs (``scoring.score_given``: the walk from the
cockpit, the lines of fire, a pass over the tiles; the crew's walks where the walkable tiles
changed), and half of random steps change the ship. The piece count and hull distances are kept
up to date by the edit (``kept.py``), the crew's walks until a tile they read changes its
walkability or the crew's parts change (``scoring.walks_read``: a third of the edits that change
the walkable tiles leave what the walks read alone), and the observation is redrawn only where a
step changed it.

    >>> import gymnasium, numpy as np, tablegym.envs
    >>> envs = gymnasium.make_vec("tablegym/Starship-v0", num_envs=2, size=12, max_steps=30)
    >>> obs, info = envs.reset(seed=0)
    >>> obs.shape, obs.dtype, info["action_mask"].shape
    ((2, 17, 12, 12), dtype('uint8'), (2, 32))
    >>> obs, rewards, terminations, truncations, info = envs.step(np.array([2, 0]))
    >>> info["steps"].tolist(), info["terms"]["armor_fraction"].shape
    ([1, 1], (2,))
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from numba import njit, prange, types

from tablegym.envs.core import IllegalActionError
from tablegym.envs.starship import kept
from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.conditioned import _BRUSH_POINTS, TARGETS, TargetStarshipEnv, asked_targets
from tablegym.envs.starship.env import NUM_BRUSHES, OBS_CHANNELS, StarshipEnv, _observe, brush_mask, seal_mask
from tablegym.envs.starship.quality import VALIDITY_RULES
from tablegym.envs.starship.scoring import (
    NO_PART,
    TERMS,
    _count,
    all_reached,
    crew_counts,
    crew_kind,
    crew_mean,
    crew_steps_of,
    crew_total,
    score_given,
    seen_size,
    walks_read,
)
from tablegym.envs.starship.ship import (
    COCKPIT,
    DX,
    DY,
    EMPTY,
    FACING,
    FIRST_PART,
    KIND,
    NUM_TILE_KINDS,
    PART_FIELDS,
    PH,
    PW,
    PX,
    PY,
    REACTOR,
    THRUSTER,
    WEAPON,
    Ship,
)
from tablegym.envs.starship.start_ship import _BRUSH, _apply_edit, _generator_params, _start_ship
from tablegym.envs.streams import integers, stream_rows
from tablegym.envs.vector import KernelVectorEnv
from tablegym.envs.vector_step import CompiledKernel, _function_at, copy_rows, unowned

# -- fixed tables ------------------------------------------------------------------------------

_POINTS = np.array(_BRUSH_POINTS, np.float64)
"""Per brush: the thrust, weapon and forward-weapon points it places (the targets' caps)."""
_TOP = np.array([hi for _, hi in TARGETS.values()], np.float64)
_LOW = np.array([lo for lo, _ in TARGETS.values()], np.int64)
_DYA, _DXA = np.array(DY, np.int64), np.array(DX, np.int64)
NUM_RULES = len(VALIDITY_RULES)
# the env's options, one int64 array (``_options``)
O_TURTLE, O_MASKS, O_GATED, O_MAX_CHANGES, O_PATIENCE, O_MAX_STEPS, O_TARGETS, O_CAPS, O_SIZE = range(9)
MASK_NONE, MASK_REPAIRABLE, MASK_BUILD, MASK_SAFE = range(4)
# a board's integer and float counters
I_CY, I_CX, I_CHANGES, I_STEPS, I_STALE, I_PASSED, I_VALID, I_NPARTS, I_PIECES, I_HULL_MAX, I_SIZE = range(11)
F_QUALITY, F_BEST, F_FIREPOWER, F_TPHI, F_CLOSENESS, F_CREW, F_SIZE = range(7)
# (I_PIECES, I_HULL_MAX with the board's hull keys (kept.py), and F_CREW, the crew's summed steps: the scoring's
# walks, kept up to date by each edit or until an edit changes what they read)
CREW_KEPT, CREW_AGAIN, CREW_ADDED = range(3)
"""How a step leaves the crew's summed steps: as they were, walked again, or plus the pairs of the part it added."""


# -- one board -----------------------------------------------------------------------------------


@njit(cache=True)
def _scratch(H, W):
    """The arrays a board's step works in, made once a batch: the tiles an edit may change, the
    kept hull distances' queue (``kept.replay_occupancy``), and the reachability walk's
    distances and queue (``scoring.all_reached``)."""
    return (
        np.empty(H * W, np.int8),
        np.empty(H * W, np.int64),
        np.empty((H, W), np.int32),
        np.empty(H * W, np.int64),
        np.empty(H * W, np.int64),
    )


@njit(cache=True)
def _score_board(tiles, parts, n, iv, fv, terms, keys, seen, anew, crew, scratch):
    """Score the ship (``StarshipEnv._score``) into the board's counters: ``scoring.score``'s
    numbers, its walks made again only where the edit could change them (``anew``: the piece
    count and hull distances from scratch, at a reset; a step keeps them up to date itself,
    ``kept.replay_occupancy``; ``crew``: ``CREW_AGAIN`` where a tile the crew's walks read
    (``seen``: ``scoring.walks_read``) changed its walkability or a crew room or destination
    went, ``CREW_ADDED`` where one came (the last part) and nothing they read changed: only its
    own pairs are walked). Most edits change little. ``scratch``: ``_scratch``'s arrays."""
    if anew:
        iv[I_PIECES] = K.count_pieces(tiles)
        kept.hull_all(tiles, keys)
        iv[I_HULL_MAX] = kept.hull_top(keys)
    if crew == CREW_AGAIN:
        fv[F_CREW] = crew_total(tiles, parts[:n], seen)
    elif crew == CREW_ADDED:
        fv[F_CREW] += crew_steps_of(tiles, parts[:n], n - 1, seen)
    crew_raw, crew_value = crew_mean(fv[F_CREW], *crew_counts(parts[:n]))
    n_cockpits, c = _count(parts[:n], COCKPIT)  # (the first cockpit's least hull distance, as score_given reads it)
    low = kept.hull_low(keys, parts[c, PY], parts[c, PX], parts[c, PH], parts[c, PW]) if n_cockpits else 0
    _, _, dist, qy, qx = scratch
    reachable = all_reached(tiles, parts[:n], NO_PART, dist, qy, qx)
    rules, raw, t, total, _ = score_given(tiles, parts[:n], iv[I_PIECES], low, iv[I_HULL_MAX], crew_raw, crew_value, reachable)
    passed = 0
    for k in range(rules.shape[0]):
        passed += rules[k]
    iv[I_PASSED] = passed
    iv[I_VALID] = passed == rules.shape[0]
    fv[F_QUALITY] = total
    fv[F_FIREPOWER] = raw[3]
    terms[:] = t


@njit(cache=True)
def _potential(iv, fv, bonus, gated):
    """``StarshipEnv.potential``."""
    rules = bonus * iv[I_PASSED] / NUM_RULES
    if gated and not iv[I_VALID]:
        return rules
    return fv[F_QUALITY] + rules


@njit(cache=True)
def _measure(parts, n, iv, fv, targets, got, weight):
    """``TargetStarshipEnv._measured``: the measures, their closeness and phi's target part."""
    thrust, weapons = 0, 0
    for p in range(n):
        if parts[p, KIND] == THRUSTER:
            thrust += parts[p, 5] * parts[p, 6]
        elif parts[p, KIND] == WEAPON:
            weapons += parts[p, 5] * parts[p, 6]
    got[0] = float(thrust)
    got[1] = float(weapons)
    got[2] = fv[F_FIREPOWER]
    near = (
        1.0 - ((abs(got[0] - targets[0]) / _TOP[0] + abs(got[1] - targets[1]) / _TOP[1]) + abs(got[2] - targets[2]) / _TOP[2]) / 3
    )
    fv[F_CLOSENESS] = near
    return weight * near if iv[I_VALID] else 0.0


@njit(cache=True)
def _observe_rect(tiles, part, parts, obs, y0, x0, h, w):
    """``_observe``'s tile and facing channels again on the tiles of one rectangle (those an
    edit changed); the cursor channel is left alone."""
    for y in range(y0, y0 + h):
        for x in range(x0, x0 + w):
            obs[: OBS_CHANNELS - 1, y, x] = 0
            obs[tiles[y, x], y, x] = 1
            p = part[y, x]
            if p >= 0 and (parts[p, KIND] == THRUSTER or parts[p, KIND] == WEAPON):
                obs[NUM_TILE_KINDS + parts[p, FACING], y, x] = 1


@njit(cache=True)
def _finish(tiles, part, parts, n, iv, o, obs, full, mask, act_mask, targets, got, tobs):
    """The board's masks after a reset or a step (``_update_mask``; with targets their
    observation and the caps), and with ``full`` its whole observation (``_observation``)."""
    cy, cx = iv[I_CY], iv[I_CX]
    if full:
        obs[:] = 0
        _observe(tiles, parts[:n], cy, cx, obs)
    first = 4 if o[O_TURTLE] else 1
    if o[O_MASKS] != MASK_NONE:
        has_cockpit, has_reactor = False, False
        for p in range(n):
            has_cockpit |= parts[p, KIND] == COCKPIT
            has_reactor |= parts[p, KIND] == REACTOR
        brush_mask(tiles, part, parts[:n], cy, cx, has_cockpit, has_reactor, o[O_MASKS] != MASK_REPAIRABLE, mask[first:])
        if o[O_MASKS] == MASK_SAFE:
            seal_mask(tiles, part, parts[:n], cy, cx, mask[first:])
    act_mask[:] = mask
    if o[O_TARGETS]:
        for k in range(3):
            asked = np.float32(targets[k])
            top = np.float32(_TOP[k])
            tobs[k] = asked / top
            tobs[3 + k] = min(max((asked - np.float32(got[k])) / top, np.float32(-1.0)), np.float32(1.0))
        if o[O_CAPS]:
            for b in range(NUM_BRUSHES):
                if (
                    _POINTS[b, 0] > targets[0] - got[0]
                    or _POINTS[b, 1] > targets[1] - got[1]
                    or _POINTS[b, 2] > targets[2] - got[2]
                ):
                    act_mask[first + b] = 0


@njit(cache=True)
def _reset_board(tiles, part, parts, iv, fv, terms, keys, seen, row, trow, g, circle, o, given, weight, targets, got, scratch):
    """``StarshipEnv.reset`` (and the targets wrapper's) of one board."""
    H, W = tiles.shape
    iv[I_NPARTS] = n = _start_ship(tiles, part, parts, row, g, circle)
    if o[O_TURTLE]:
        iv[I_CY] = integers(row, H)
        iv[I_CX] = integers(row, W)
    else:
        iv[I_CY] = iv[I_CX] = 0
    _score_board(tiles, parts, n, iv, fv, terms, keys, seen, True, CREW_AGAIN, scratch)
    fv[F_BEST] = fv[F_QUALITY]
    iv[I_STALE] = iv[I_CHANGES] = iv[I_STEPS] = 0
    if o[O_TARGETS]:
        for k in range(3):
            targets[k] = given[k] if given[k] >= 0 else float(_LOW[k] + integers(trow, int(_TOP[k]) - _LOW[k] + 1))
        fv[F_TPHI] = _measure(parts, n, iv, fv, targets, got, weight)


@njit(cache=True)
def _step_board(tiles, part, parts, iv, fv, terms, keys, seen, a, o, bonus, weight, targets, got, obs, scratch):
    """``StarshipEnv.step`` (and the targets wrapper's) of one board: (reward, terminated,
    truncated); the observation is redrawn where the edit and the cursor changed it.
    ``scratch``: ``_scratch``'s arrays."""
    before_tiles, queue, _, _, _ = scratch
    H, W = tiles.shape
    y, x = iv[I_CY], iv[I_CX]
    gated = o[O_GATED] != 0
    before = _potential(iv, fv, bonus, gated)
    move, brush = -1, a - 1
    if o[O_TURTLE]:
        move, brush = (a, -1) if a < 4 else (-1, a - 4)
    changed = occupancy = False
    crew = CREW_KEPT
    n = iv[I_NPARTS]
    if brush >= 0:
        p = part[y, x]  # what the edit may change: the brush's footprint, or the part a tile replaces
        if _BRUSH[brush, 0] >= FIRST_PART:
            ry, rx, rh, rw = y, x, min(_BRUSH[brush, 3], H - y), min(_BRUSH[brush, 4], W - x)
        elif p >= 0:
            ry, rx, rh, rw = parts[p, 3], parts[p, 4], parts[p, 5], parts[p, 6]
        else:
            ry, rx, rh, rw = y, x, 1, 1
        gone = parts[p, KIND] if p >= 0 and _BRUSH[brush, 0] < FIRST_PART else EMPTY  # the part a tile replaces
        for k in range(rh * rw):
            before_tiles[k] = tiles[ry + k // rw, rx + k % rw]
        n, changed = _apply_edit(tiles, part, parts, n, brush, y, x)
        iv[I_NPARTS] = n
        if changed:
            _observe_rect(tiles, part, parts, obs, ry, rx, rh, rw)
            walkable = False  # (where the crew's walks read it: elsewhere they walk as before)
            for k in range(rh * rw):
                old, new = before_tiles[k], tiles[ry + k // rw, rx + k % rw]
                occupancy |= (old == EMPTY) != (new == EMPTY)
                if K.walkable(old) != K.walkable(new):
                    walkable |= walks_read(seen, W, ry + k // rw, rx + k % rw)
            if walkable or crew_kind(gone):
                crew = CREW_AGAIN
            elif crew_kind(_BRUSH[brush, 0]):  # a part brush: its part is the last
                crew = CREW_ADDED
            if occupancy:
                iv[I_PIECES], iv[I_HULL_MAX] = kept.replay_occupancy(
                    tiles, keys, iv[I_PIECES], iv[I_HULL_MAX], ry, rx, rh, rw, before_tiles, queue
                )
    if not o[O_TURTLE]:
        i = (y * W + x + 1) % (H * W)
        iv[I_CY], iv[I_CX] = i // W, i % W
    elif move >= 0:
        iv[I_CY] = min(max(y + _DYA[move], 0), H - 1)
        iv[I_CX] = min(max(x + _DXA[move], 0), W - 1)
    obs[OBS_CHANNELS - 1, y, x] = 0
    obs[OBS_CHANNELS - 1, iv[I_CY], iv[I_CX]] = 1
    if changed:
        iv[I_CHANGES] += 1
        _score_board(tiles, parts, n, iv, fv, terms, keys, seen, False, crew, scratch)
    iv[I_STEPS] += 1
    reward = _potential(iv, fv, bonus, gated) - before
    if fv[F_QUALITY] > fv[F_BEST] + 1e-12:
        fv[F_BEST] = fv[F_QUALITY]
        iv[I_STALE] = 0
    else:
        iv[I_STALE] += 1
    terminated = bool(iv[I_VALID]) and (iv[I_CHANGES] >= o[O_MAX_CHANGES] or iv[I_STALE] >= o[O_PATIENCE])
    truncated = not terminated and iv[I_STEPS] >= o[O_MAX_STEPS]
    if o[O_TARGETS]:
        phi = _measure(parts, n, iv, fv, targets, got, weight)
        reward += phi - fv[F_TPHI]
        fv[F_TPHI] = phi
    return reward, terminated, truncated


# -- the batch -----------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def reset_boards(
    tiles,
    part,
    parts,
    iv,
    fv,
    terms,
    keys,
    seen,
    streams,
    tstreams,
    which,
    g,
    circle,
    o,
    given,
    weight,
    targets,
    got,
    obs,
    masks,
    act_masks,
    tobs,
):
    """Deal a new ship on every board ``i`` with ``which[i]``."""
    tiles, part, parts, iv, fv, terms, keys, seen = (
        unowned(tiles),
        unowned(part),
        unowned(parts),
        unowned(iv),
        unowned(fv),
        unowned(terms),
        unowned(keys),
        unowned(seen),
    )  # no counts: envs/vector.py
    streams, tstreams, targets, got = unowned(streams), unowned(tstreams), unowned(targets), unowned(got)
    obs, masks, act_masks, tobs = unowned(obs), unowned(masks), unowned(act_masks), unowned(tobs)
    scratch = _scratch(tiles.shape[1], tiles.shape[2])
    for i in range(tiles.shape[0]):
        if which[i]:
            _reset_board(
                tiles[i],
                part[i],
                parts[i],
                iv[i],
                fv[i],
                terms[i],
                keys[i],
                seen[i],
                streams[i],
                tstreams[i],
                g,
                circle,
                o,
                given,
                weight,
                targets[i],
                got[i],
                scratch,
            )
            _finish(
                tiles[i],
                part[i],
                parts[i],
                iv[i, I_NPARTS],
                iv[i],
                o,
                obs[i],
                True,
                masks[i],
                act_masks[i],
                targets[i],
                got[i],
                tobs[i],
            )


_B3, _H3, _I3 = types.int8[:, :, ::1], types.int16[:, :, ::1], types.int32[:, :, ::1]
_I1, _I2, _U2 = types.int64[::1], types.int64[:, ::1], types.uint64[:, ::1]
_F, _F1, _F2, _BOOL1, _M2 = types.float64, types.float64[::1], types.float64[:, ::1], types.boolean[::1], types.int8[:, ::1]
STEP_BOARDS_T = types.FunctionType(
    types.none(
        _B3,
        _H3,
        _H3,
        _I2,
        _F2,
        _F2,
        _I3,
        types.uint8[:, ::1],
        _U2,
        _U2,
        _BOOL1,
        _I1,
        _I1,
        _F,
        _I1,
        _F,
        _F,
        _F2,
        _F2,
        types.uint8[:, :, :, ::1],
        _M2,
        _M2,
        types.float32[:, ::1],
        _F1,
        _BOOL1,
        _BOOL1,
    )
)
"""``step_boards``' type: the envs' arrays (``StarshipVectorEnv.__init__``), compiled once for
them, so that its address steps the boards in slices (``step_boards_slices``)."""


@njit(STEP_BOARDS_T.signature, cache=True, nogil=True)
def step_boards(
    tiles,
    part,
    parts,
    iv,
    fv,
    terms,
    keys,
    seen,
    streams,
    tstreams,
    pending,
    actions,
    g,
    circle,
    o,
    bonus,
    weight,
    targets,
    got,
    obs,
    masks,
    act_masks,
    tobs,
    rewards,
    terms_out,
    truncs,
):
    """One step of every board; a board that ended on the last step is dealt again instead (its
    action ignored: Gymnasium's next-step auto-reset). ``pending`` becomes the boards that ended."""
    tiles, part, parts, iv, fv, terms, keys, seen = (
        unowned(tiles),
        unowned(part),
        unowned(parts),
        unowned(iv),
        unowned(fv),
        unowned(terms),
        unowned(keys),
        unowned(seen),
    )  # no counts: envs/vector.py
    streams, tstreams, targets, got = unowned(streams), unowned(tstreams), unowned(targets), unowned(got)
    obs, masks, act_masks, tobs = unowned(obs), unowned(masks), unowned(act_masks), unowned(tobs)
    no_targets = np.full(3, -1.0)
    scratch = _scratch(tiles.shape[1], tiles.shape[2])
    for i in range(tiles.shape[0]):
        full = pending[i]
        if full:
            _reset_board(
                tiles[i],
                part[i],
                parts[i],
                iv[i],
                fv[i],
                terms[i],
                keys[i],
                seen[i],
                streams[i],
                tstreams[i],
                g,
                circle,
                o,
                no_targets,
                weight,
                targets[i],
                got[i],
                scratch,
            )
            rewards[i] = 0.0
            terms_out[i] = truncs[i] = pending[i] = False
        else:
            rewards[i], terms_out[i], truncs[i] = _step_board(
                tiles[i],
                part[i],
                parts[i],
                iv[i],
                fv[i],
                terms[i],
                keys[i],
                seen[i],
                actions[i],
                o,
                bonus,
                weight,
                targets[i],
                got[i],
                obs[i],
                scratch,
            )
            pending[i] = terms_out[i] or truncs[i]
        _finish(
            tiles[i],
            part[i],
            parts[i],
            iv[i, I_NPARTS],
            iv[i],
            o,
            obs[i],
            full,
            masks[i],
            act_masks[i],
            targets[i],
            got[i],
            tobs[i],
        )


_step_boards_at = _function_at(STEP_BOARDS_T)


@njit(cache=True, parallel=True, nogil=True)
def step_boards_slices(
    bounds,
    copy,
    obs_out,
    entry,
    tiles,
    part,
    parts,
    iv,
    fv,
    terms,
    keys,
    seen,
    streams,
    tstreams,
    pending,
    actions,
    g,
    circle,
    o,
    bonus,
    weight,
    targets,
    got,
    obs,
    masks,
    act_masks,
    tobs,
    rewards,
    terms_out,
    truncs,
):
    """``step_boards`` (at the address ``entry``) on the boards ``bounds[t]:bounds[t + 1]``, one
    slice a thread of numba's, as envs/vector.py's ``step_two_player_slices``."""
    step = _step_boards_at(entry)
    for t in prange(bounds.size - 1):
        lo, hi = bounds[t], bounds[t + 1]
        step(
            tiles[lo:hi],
            part[lo:hi],
            parts[lo:hi],
            iv[lo:hi],
            fv[lo:hi],
            terms[lo:hi],
            keys[lo:hi],
            seen[lo:hi],
            streams[lo:hi],
            tstreams[lo:hi],
            pending[lo:hi],
            actions[lo:hi],
            g,
            circle,
            o,
            bonus,
            weight,
            targets[lo:hi],
            got[lo:hi],
            obs[lo:hi],
            masks[lo:hi],
            act_masks[lo:hi],
            tobs[lo:hi],
            rewards[lo:hi],
            terms_out[lo:hi],
            truncs[lo:hi],
        )
        if copy:
            copy_rows(obs_out, obs, lo, hi)


STEP_BOARDS_SLICES = (step_boards_slices, CompiledKernel(step_boards, STEP_BOARDS_T).address)
"""``step_boards`` in slices, as ``KernelVectorEnv._run_boards`` takes it."""


class StarshipVectorEnv(KernelVectorEnv):
    """``num_envs`` ships of ``StarshipEnv`` edited in one compiled call a step.

    Arguments: ``StarshipEnv``'s (``representation`` "narrow" or "turtle", ``start``, ``size``,
    ``partial_stages`` up to 6, ``generator``, ``validity_bonus``, ``reward``, ``masks``,
    ``max_changes``, ``patience``, ``max_steps``), ``num_envs``, ``autoreset_mode``, ``copy`` and
    ``threads`` (as for ``KernelVectorEnv``);
    ``render_mode`` "ansi" or None. Every action in range is accepted, as the single env
    accepts it (a masked one too); one out of range raises ``IllegalActionError``. ``info``:
    see the module docstring.
    """

    single_env: ClassVar[Any] = StarshipEnv
    BOARD_ARRAYS: ClassVar[tuple[str, ...]] = (
        "_tiles", "_part", "_parts", "_iv", "_fv", "_terms", "_keys", "_seen", "_streams", "_tstreams", "_targets",
        "_got", "_tobs", "_obs", "_masks", "_act_masks", "_pending", "_illegal", "_rewards", "_terms_out", "_truncs",
    )  # fmt: skip
    """The arrays that hold one row a board (``take_boards`` copies them)."""

    def __init__(
        self,
        num_envs: int = 1,
        *,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        threads: int | str = 1,
        **kwargs: Any,
    ) -> None:
        self._checked_options(num_envs, autoreset_mode, render_mode, copy)
        proto = self._prototype(**kwargs)
        inner = proto.env if isinstance(proto, TargetStarshipEnv) else proto
        if inner.representation == "wide":
            raise ValueError(
                "the compiled Starship vector env takes representation 'narrow' or 'turtle'; "
                "'wide' (actions are triples) runs as SyncVectorEnv (vectorization_mode='sync')"
            )
        if inner.reward == "audit":
            raise ValueError(
                "the compiled Starship vector env pays the 'potential' and 'gated' rewards; reward='audit' "
                "(an audit at each episode's end) runs in the single env (vectorization_mode='sync')"
            )
        self.proto = proto
        self.game = None
        self.illegal_action = "raise"
        self.single_observation_space = proto.observation_space
        self.single_action_space = proto.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._g, self._circle = _generator_params(inner.pipeline, inner.start, inner.partial_stages)
        H, W = inner.pipeline.size
        if not kept.fits(H, W):
            raise ValueError(
                f"the compiled Starship vector env takes grids up to 724 x 724 (its hull keys are "
                f"int32), got size {H} x {W}; larger grids run as SyncVectorEnv "
                f"(vectorization_mode='sync')"
            )
        o = np.zeros(O_SIZE, np.int64)
        o[O_TURTLE] = inner.representation == "turtle"
        o[O_MASKS] = ("none", "repairable", "build", "safe").index(inner.masks)
        o[O_GATED] = inner.reward == "gated"
        o[O_MAX_CHANGES], o[O_PATIENCE], o[O_MAX_STEPS] = inner.max_changes, inner.patience, inner.max_steps
        o[O_TARGETS] = isinstance(proto, TargetStarshipEnv)
        o[O_CAPS] = bool(getattr(proto, "caps", False))
        self._o = o
        self._bonus = float(inner.validity_bonus)
        self._weight = float(getattr(proto, "target_weight", 0.0))
        n = self.num_envs
        self._num_actions = int(self.single_action_space.n)
        self._tiles = np.zeros((n, H, W), np.int8)
        self._part = np.full((n, H, W), -1, np.int16)
        self._parts = np.zeros((n, H * W, PART_FIELDS), np.int16)
        self._iv = np.zeros((n, I_SIZE), np.int64)
        self._fv = np.zeros((n, F_SIZE))
        self._terms = np.zeros((n, len(TERMS)))
        self._keys = np.zeros((n, H, W), np.int32)  # the hull distances' keys (kept.py)
        self._seen = np.zeros((n, seen_size(H, W)), np.uint8)  # where the crew's walks went (scoring._steps_to)
        self._streams: np.ndarray | None = None
        self._tstreams = np.zeros_like(stream_rows([0] * n))
        self._targets = np.zeros((n, 3))
        self._got = np.zeros((n, 3))
        self._tobs = np.zeros((n, 6), np.float32)
        self._obs = np.zeros((n, OBS_CHANNELS, H, W), np.uint8)
        self._masks = np.ones((n, self._num_actions), np.int8)
        self._act_masks = np.ones((n, self._num_actions), np.int8)
        self._pending = np.zeros(n, dtype=bool)
        self._illegal = np.zeros(n, dtype=bool)
        self._dealt = False  # every board dealt once (a partial reset comes after that)
        self._rewards = np.zeros(n)
        self._terms_out = np.zeros(n, dtype=bool)
        self._truncs = np.zeros(n, dtype=bool)
        self._start_threads(threads)

    def _prototype(self, **kwargs: Any) -> gymnasium.Env:
        """The single env these boards copy (its spaces and options)."""
        return StarshipEnv(**kwargs)

    # -- Gymnasium API ---------------------------------------------------------------------

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Deal every board again (or those of ``options["reset_mask"]``, Gymnasium's partial reset)."""
        fresh = self._streams is None
        if self._seed(seed) or fresh:
            self._tstreams = self._streams.copy() if seed is not None else stream_rows([None] * self.num_envs)
        which = self._boards_to_reset(options)
        given = self._given_targets(options)
        self._run_boards(
            reset_boards,
            (
                self._tiles,
                self._part,
                self._parts,
                self._iv,
                self._fv,
                self._terms,
                self._keys,
                self._seen,
                self._streams,
                self._tstreams,
                which,
                self._g,
                self._circle,
                self._o,
                given,
                self._weight,
                self._targets,
                self._got,
                self._obs,
                self._masks,
                self._act_masks,
                self._tobs,
            ),
        )
        self._reset_done(which)
        return self._observations(), self._info()

    def _given_targets(self, options: dict[str, Any] | None) -> np.ndarray:
        return np.full(3, -1.0)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        a = self._actions(actions)
        self._run_boards(
            step_boards,
            (
                self._tiles,
                self._part,
                self._parts,
                self._iv,
                self._fv,
                self._terms,
                self._keys,
                self._seen,
                self._streams,
                self._tstreams,
                self._pending,
                a,
                self._g,
                self._circle,
                self._o,
                self._bonus,
                self._weight,
                self._targets,
                self._got,
                self._obs,
                self._masks,
                self._act_masks,
                self._tobs,
                self._rewards,
                self._terms_out,
                self._truncs,
            ),
            STEP_BOARDS_SLICES,
        )
        return self._stepped(self._rewards.copy(), self._terms_out.copy(), self._truncs.copy())

    def _actions(self, actions: Any) -> np.ndarray:
        """The actions as int64: one integer a board, in the action space (masks are not enforced,
        as ``StarshipEnv`` does not enforce them)."""
        a = self._integer_actions(actions).copy()
        bad = (a < 0) | (a >= self._num_actions)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise IllegalActionError(int(a[i]), range(self._num_actions), f"on board {i}")
        return a

    def _observations(self) -> Any:
        return self._obs_out

    def _info(self) -> dict[str, Any]:
        n = self.num_envs
        everywhere = np.ones(n, dtype=bool)
        info: dict[str, Any] = {
            "quality": self._fv[:, F_QUALITY].copy(),
            "terms": {k: self._terms[:, j].copy() for j, k in enumerate(TERMS)},
            "valid": self._iv[:, I_VALID].astype(bool),
            "rules_passed": self._iv[:, I_PASSED].copy(),
            "changes": self._iv[:, I_CHANGES].copy(),
            "steps": self._iv[:, I_STEPS].copy(),
            "action_mask": self._masks.copy(),
        }
        for key in list(info):
            if isinstance(info[key], dict):
                info[key].update({"_" + k: everywhere for k in list(info[key])})
            info["_" + key] = everywhere
        return info

    def action_masks(self) -> np.ndarray:
        """``(num_envs, num_actions)`` bools to sample the next actions from: each board's mask
        (all ones without ``masks``), every action on a board waiting for its auto-reset."""
        masks = self._act_masks.astype(bool)
        masks[self._pending] = True
        return masks

    def take_boards(self, src: np.ndarray) -> Any:
        """Board ``i`` becomes a copy of board ``src[i]``: its ship, counters, streams, mask and
        observation, so that a search can branch a ship into several continuations and keep the
        best (``models/starship/search.py``). Returns the boards' observations, as ``reset`` does."""
        src = np.asarray(src, np.int64)
        if src.shape != (self.num_envs,) or (src < 0).any() or (src >= self.num_envs).any():
            raise ValueError(f"take_boards needs one board index in 0..{self.num_envs - 1} a board, got {src.tolist()}")
        for name in self.BOARD_ARRAYS:
            value = getattr(self, name)
            value[:] = value[src]
        self._obs_out = self._obs.copy() if self.copy else self._obs
        return self._observations()

    def ship(self, i: int) -> Ship:
        """Board ``i``'s ship (a copy)."""
        n = int(self._iv[i, I_NPARTS])
        return Ship(self._tiles[i].copy(), self._part[i].copy(), self._parts[i, :n].copy())

    def game_state(self, i: int) -> Ship:
        """Board ``i``'s ship (a copy): Starship has no rules-core ``State``."""
        return self.ship(i)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} num_envs={self.num_envs} {self.proto!r}>"


class StarshipTargetsVectorEnv(StarshipVectorEnv):
    """``num_envs`` ships of ``TargetStarshipEnv`` edited in one compiled call a step.

    Arguments: ``TargetStarshipEnv``'s (``target_weight``, ``caps``, and ``StarshipEnv``'s as
    for ``StarshipVectorEnv``). ``reset(options={"targets": {...}})`` asks every board for the
    given targets (the others drawn); auto-resets draw them all, as the single env's do.
    ``action_masks()`` has the caps; ``info["action_mask"]`` is the inner env's mask, as there.
    """

    single_env: ClassVar[Any] = TargetStarshipEnv

    def _prototype(self, **kwargs: Any) -> gymnasium.Env:
        return TargetStarshipEnv(**kwargs)

    def _given_targets(self, options: dict[str, Any] | None) -> np.ndarray:
        given = asked_targets(options)
        return np.array([given.get(k, -1.0) for k in TARGETS])

    def _observations(self) -> Any:
        grid = self._obs_out
        return {"grid": grid, "targets": self._tobs[:, :3].copy(), "deficits": self._tobs[:, 3:].copy()}

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        everywhere = np.ones(self.num_envs, dtype=bool)
        for key, values in (("targets", self._targets), ("measures", self._got)):
            info[key] = {k: values[:, j].copy() for j, k in enumerate(TARGETS)}
            info[key].update({"_" + k: everywhere for k in TARGETS})
            info["_" + key] = everywhere
        info["closeness"] = self._fv[:, F_CLOSENESS].copy()
        info["_closeness"] = everywhere
        return info
