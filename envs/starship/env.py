"""Starship design as a PCGRL env (Khalifa et al., 2020): the agent edits a ship's tile grid."""

from __future__ import annotations

from typing import Any, NamedTuple

import gymnasium
import numpy as np
from gymnasium import spaces
from numba import njit

from tablegym.envs.core import IllegalActionError
from tablegym.envs.starship import ship as S
from tablegym.envs.starship.pipeline import Pipeline
from tablegym.envs.starship.quality import VALIDITY_RULES, Quality, Validity
from tablegym.envs.starship.scoring import NO_PART, all_reached, border_reached, scored
from tablegym.envs.starship.ship import Ship, footprint, part_name
from tablegym.envs.twoplayer import as_action


class Brush(NamedTuple):
    """What one write puts on the grid: a tile kind, or a part with its variant and facing."""

    kind: int
    variant: int = 0
    facing: int = 0

    def __str__(self) -> str:
        return part_name(self.kind, self.variant, self.facing)


BRUSHES: tuple[Brush, ...] = (
    *(Brush(k) for k in (S.EMPTY, S.CORRIDOR, S.ARMOR, S.DOOR, S.COCKPIT, S.REACTOR, S.AMMO, S.POWER, S.QUARTERS)),
    Brush(S.BUNK, 0),
    Brush(S.BUNK, 1),
    *(Brush(S.THRUSTER, v, f) for v in range(S.NUM_VARIANTS[S.THRUSTER]) for f in range(4)),
    *(Brush(S.WEAPON, v, f) for v in range(S.NUM_VARIANTS[S.WEAPON]) for f in range(4)),
)
"""Every write the agent can make (31): 4 tiles, 7 unfaced parts (bunk rooms both ways round),
12 thrusters (3 sizes x 4 facings) and 8 weapons (2 sizes x 4 facings)."""
NUM_BRUSHES = len(BRUSHES)
FIRST_BRUSH_PART = next(i for i, b in enumerate(BRUSHES) if b.kind >= S.FIRST_PART)
_BRUSH_KIND = np.array([b.kind for b in BRUSHES], np.int64)
_BRUSH_H = np.array([footprint(b.kind, b.variant, b.facing)[0] if b.kind >= S.FIRST_PART else 1 for b in BRUSHES], np.int64)
_BRUSH_W = np.array([footprint(b.kind, b.variant, b.facing)[1] if b.kind >= S.FIRST_PART else 1 for b in BRUSHES], np.int64)
REPRESENTATIONS = ("narrow", "turtle", "wide")
_MAX_SIDE = int(max(_BRUSH_H.max(), _BRUSH_W.max()))
_COCKPIT_BRUSH, _REACTOR_BRUSH, _EMPTY_BRUSH = (BRUSHES.index(Brush(k)) for k in (S.COCKPIT, S.REACTOR, S.EMPTY))
REWARDS = ("potential", "gated", "audit")
MASKS = ("none", "repairable", "build", "safe")
STARTS = ("empty", "random", "partial")
OBS_CHANNELS = S.NUM_TILE_KINDS + 4 + 1
"""Tile kind one-hot (12), facing one-hot of thruster/weapon tiles (4), the cursor (1)."""


def apply_edit(ship: Ship, brush: Brush, y: int, x: int) -> bool:
    """Write ``brush`` at (y, x); True if the ship changed.

    A tile brush replaces the tile; on a part's tile it first takes the whole part out (the
    rest of its footprint becomes corridor). A part brush puts the part's anchor (the top-left
    tile of its footprint) at (y, x) if the footprint lies in the grid and covers no other
    part's tile (walls, corridors and empty tiles under it are replaced); otherwise nothing
    happens.
    """
    kind, variant, facing = brush
    if kind < S.FIRST_PART:
        p = int(ship.part[y, x])
        if p >= 0:
            ship.remove_part(p, floor=S.CORRIDOR)
        elif ship.tiles[y, x] == kind:
            return False
        ship.tiles[y, x] = kind
        return True
    if not ship.fits(kind, variant, facing, y, x):
        return False
    ship._stamp(kind, variant, facing if kind in S.FACED else 0, y, x)
    return True


@njit(cache=True)
def brush_mask(tiles, part, parts, y, x, has_cockpit, has_reactor, build, out):
    """``out[b]``: whether brush ``b`` at (y, x) changes the ship and can still lead to a valid
    one: a tile brush that writes another tile (or takes a part out), a part brush whose footprint
    fits, except a second cockpit or reactor (a ship with two never becomes valid by adding).

    With ``build`` also: nothing is written on the cockpit or the reactor (the ship keeps the
    ones it has), no tile is emptied, and a write lands on the ship or next to it (a write
    away from it would start a second piece)."""
    H, W = tiles.shape
    p = part[y, x]
    if build and p >= 0 and (parts[p, S.KIND] == S.COCKPIT or parts[p, S.KIND] == S.REACTOR):
        out[:] = False
        return
    near = tiles[y, x] != S.EMPTY
    if build and not near:
        for d in range(4):
            yy, xx = y + S.DY[d], x + S.DX[d]
            if 0 <= yy < H and 0 <= xx < W and tiles[yy, xx] != S.EMPTY:
                near = True
    for b in range(out.shape[0]):
        kind = _BRUSH_KIND[b]
        if kind < S.FIRST_PART:
            out[b] = (p >= 0 or tiles[y, x] != kind) and not (build and (kind == S.EMPTY or not near))
            continue
        h = _BRUSH_H[b]
        w = _BRUSH_W[b]
        ok = y + h <= H and x + w <= W and not (kind == S.COCKPIT and has_cockpit) and not (kind == S.REACTOR and has_reactor)
        touches = not build
        if ok:
            for yy in range(max(y - 1, 0), min(y + h + 1, H)):
                for xx in range(max(x - 1, 0), min(x + w + 1, W)):
                    rows, cols = y <= yy < y + h, x <= xx < x + w
                    if rows and cols and part[yy, xx] >= 0:
                        ok = False
                    if (rows or cols) and tiles[yy, xx] != S.EMPTY:  # on the footprint or 4-next to it
                        touches = True
        out[b] = ok and touches


@njit(cache=True)
def seal_mask(tiles, part, parts, y, x, out):
    """Take out of ``out`` (the allowed brushes at (y, x)) those whose write would leave a part
    or door unreachable from the cockpit, when every one is reachable now (a write that seals a
    part in); nothing changes while the rule already fails.

    Only three kinds of write can break the rule, and the others are let through unchecked: a
    wall written over a walkable tile, a door (it must be reached itself) and a part (it needs a
    reached tile next to it, and it may cover walkable ones). A door, or a part that covers no
    walkable tile, needs only the walking steps of the ship as it is; a write that takes
    walkable tiles away is made on a copy and the rule checked again. Taking a part out (a tile
    written over it) or writing corridor only adds walkable tiles.

    A ship with no cockpit yet (built from an empty hull) has nothing to be reached from: its
    writes are let through until the cockpit is placed."""
    H, W = tiles.shape
    if not (parts[:, S.KIND] == S.COCKPIT).any():
        return
    dist, scratch = np.empty((H, W), np.int32), np.empty((H, W), np.int32)
    qy, qx = np.empty(H * W, np.int64), np.empty(H * W, np.int64)
    if not all_reached(tiles, parts, NO_PART, dist, qy, qx):  # (the walk it made stays in dist)
        return
    walk = tiles[y, x] == S.CORRIDOR or tiles[y, x] == S.DOOR
    # a part's kind does not matter to the rule (no cockpit is ever added): one answer per footprint
    known = np.full((_MAX_SIDE + 1, _MAX_SIDE + 1), -1, np.int8)
    for b in range(out.shape[0]):
        if not out[b]:
            continue
        kind = _BRUSH_KIND[b]
        if kind < S.FIRST_PART:
            if part[y, x] >= 0 or kind == S.CORRIDOR or (kind != S.DOOR and not walk):
                continue
            if kind == S.DOOR:  # reached if its tile was, or a tile next to it
                out[b] = (walk and dist[y, x] >= 0) or border_reached(dist, y, x, 1, 1)
                continue
            trial = tiles.copy()
            trial[y, x] = kind
            out[b] = all_reached(trial, parts, NO_PART, scratch, qy, qx)
            continue
        h, w = _BRUSH_H[b], _BRUSH_W[b]
        if known[h, w] >= 0:
            out[b] = known[h, w] == 1
            continue
        covers = False
        for yy in range(y, y + h):
            for xx in range(x, x + w):
                if tiles[yy, xx] == S.CORRIDOR or tiles[yy, xx] == S.DOOR:
                    covers = True
        if not covers:  # the part needs a reached walkable tile next to it
            out[b] = known[h, w] = border_reached(dist, y, x, h, w)
            continue
        trial = tiles.copy()
        trial[y : y + h, x : x + w] = kind
        footprint = np.array([y, x, h, w], np.int64)
        out[b] = all_reached(trial, parts, footprint, scratch, qy, qx)
        known[h, w] = out[b]


def observe(ship: Ship, cursor: tuple[int, int] | None) -> np.ndarray:
    """The (17, H, W) uint8 observation of ``ship`` (see ``StarshipEnv``)."""
    H, W = ship.shape
    obs = np.zeros((OBS_CHANNELS, H, W), np.uint8)
    cy, cx = (-1, -1) if cursor is None else cursor
    _observe(ship.tiles, ship.parts, cy, cx, obs)
    return obs


@njit(cache=True)
def _observe(tiles, parts, cy, cx, obs):
    H, W = tiles.shape
    for y in range(H):
        for x in range(W):
            obs[tiles[y, x], y, x] = 1
    for p in range(parts.shape[0]):
        if parts[p, S.KIND] == S.THRUSTER or parts[p, S.KIND] == S.WEAPON:
            for y in range(parts[p, S.PY], parts[p, S.PY] + parts[p, S.PH]):
                for x in range(parts[p, S.PX], parts[p, S.PX] + parts[p, S.PW]):
                    obs[S.NUM_TILE_KINDS + parts[p, S.FACING], y, x] = 1
    if cy >= 0:
        obs[OBS_CHANNELS - 1, cy, cx] = 1


class StarshipEnv(gymnasium.Env[np.ndarray, Any]):
    """Starship: edit a ship's tile grid towards a valid, high-quality design (PCGRL).

    ## Description

    The level-design-as-RL framing of PCGRL (Khalifa et al., 2020) on the starship grid of
    rules/starship.md (``envs/starship/ship.py``: tiles, parts and their footprints). Each
    step writes one "brush" (``BRUSHES``: a tile, or a part of a given size and facing) or
    moves a cursor; the reward is the change of the hand-made score of ``quality.py`` plus a
    validity bonus. The staged generator (``pipeline.Pipeline``) is the baseline and makes the
    starting ships.

    Multi-tile parts: the agent writes a part's anchor (the top-left tile of its footprint);
    the whole footprint is stamped when it lies in the grid and covers no other part, and
    otherwise the write changes nothing. Writing a tile over any tile of a part takes the whole
    part out first (``apply_edit``).

    ## Action Space

    By ``representation``:

    - "narrow": ``Discrete(32)``: the env visits the tiles in row-major order, one per step
      (wrapping round); 0 leaves the current tile alone, ``1 + b`` writes ``BRUSHES[b]`` there.
    - "turtle": ``Discrete(35)``: 0-3 move the cursor one tile forward (+x), starboard (+y),
      backward (-x) or port (-y) (not past the grid's edge); ``4 + b`` writes ``BRUSHES[b]``
      at the cursor.
    - "wide": ``MultiDiscrete([H, W, 31])``: (y, x, b) writes ``BRUSHES[b]`` at (y, x).

    ``BRUSHES``: 0 empty, 1 corridor, 2 armor, 3 door, 4 cockpit, 5 reactor, 6 ammo supply,
    7 power storage, 8 crew quarters, 9-10 bunk room (along x, along y), 11-22 thrusters
    (small, medium, big; each facing forward, starboard, backward, port), 23-30 weapons
    (small, large; each facing forward, starboard, backward, port).
    Every action is legal (a write that does not fit is a no-op); ``info["action_mask"]`` and
    ``action_masks()`` are all ones (for "wide", one entry per value of each dimension, the
    sb3-contrib MultiDiscrete layout). With ``masks="repairable"`` (or ``True``) they allow only
    the writes that change the ship and can still lead to a valid one: no write of the tile
    already there, no part that does not fit, no second cockpit or reactor (for "wide": the last
    two only). ``masks="build"`` also keeps the ship's cockpit and reactor (no write on their
    tiles), never empties a tile, and writes only on the ship or 4-next to it (for "wide": no
    empty brush). ``masks="safe"`` is "build" that also seals nothing in: no write that leaves a
    part or door unreachable from the cockpit while all are reachable (``seal_mask``; for
    "wide": as "build"). From the generator's start every "safe" write keeps three of the four
    validity rules; only the backward thruster is left to the agent. A masked action is still
    accepted (the env does not enforce masks). An action outside the space raises a ``ValueError``.

    ## Observation Space

    ``Box(0, 1, (17, H, W), uint8)``:

    | Channel | Meaning                                                                   |
    |---------|---------------------------------------------------------------------------|
    | 0-11    | tile kind one-hot: empty, corridor, armor, door, cockpit, reactor,        |
    |         | thruster, weapon, ammo supply, power storage, crew quarters, bunk room    |
    | 12-15   | facing one-hot of thruster and weapon tiles: forward, starboard,          |
    |         | backward, port (a thruster faces where its exhaust points)                |
    | 16      | the cursor: the tile the next write goes to ("narrow", "turtle"); all 0   |
    |         | for "wide"                                                                |

    ## Rewards

    ``r_t = phi(s_t) - phi(s_{t-1})`` with ``phi = quality score + validity_bonus * (rules
    passed) / 4``: the change of the weighted quality score (in [0, 1], ``quality.quality``)
    plus the validity bonus, paid in quarters as each of the four validity rules starts to
    hold (and taken back when one breaks). The return of an episode is ``phi(end) -
    phi(start)``; ``info["quality"]`` and ``info["valid"]`` give the two parts. With
    ``reward="gated"`` the quality score counts in ``phi`` only while the ship is valid, so no
    quality term pays for a ship that breaks a rule. ``reward="audit"`` is "gated" with, at the
    episode's end (terminated or truncated), quality v2 in place of the quality score
    (``audit.layout_quality``: the score times the share of the audit's 13 layout rules the ship
    passes), so the return is ``phi_v2(end) - phi(start)`` and ``info["layout_quality"]`` gives
    it; the audit (about 7 ms) runs once an episode.

    ## Starting State

    By ``start``: "partial" (default): the staged generator run up to stage
    ``partial_stages`` (default 6: hull, cockpit, reactor and their armor; the agent adds the
    rest); "empty": an empty hull (stages 1-2: the shape filled with corridor); "random": every
    tile empty, corridor or armor at random (probabilities 0.35, 0.5, 0.15), then ``H * W // 32``
    random part brushes stamped where they fit. "narrow" starts at tile (0, 0), "turtle" at a
    random tile. All from ``np_random``.

    ## Episode End

    Terminates when the ship is valid and either the change budget is spent (``max_changes``
    writes that changed the grid) or the quality score has not improved for ``patience``
    steps. An invalid ship is never terminal: the agent may keep editing past the budget.
    Truncates after ``max_steps`` steps.

    ## Arguments

    ```python
    gymnasium.make("tablegym/Starship-v0")
    gymnasium.make("tablegym/Starship-v0", representation="wide", start="empty", size=16,
                   partial_stages=6, generator=None, validity_bonus=1.0, max_changes=None,
                   patience=None, max_steps=None, render_mode="rgb_array")
    ```

    - ``representation``: "narrow" (default), "turtle" or "wide" (see Action Space).
    - ``start``: "partial" (default), "empty" or "random" (see Starting State).
    - ``size``: grid side (default 32) or (height, width).
    - ``partial_stages``: stages (1-14) the generator runs for ``start="partial"``.
    - ``reward``: "potential" (default), "gated" or "audit" (see Rewards).
    - ``masks``: "none" (default, or False), "repairable" (or True), "build" or "safe" (see Action Space).
    - ``generator``: keyword options of the generator ``Pipeline`` (stage parameters; ``size``
      comes from ``size``).
    - ``validity_bonus``: weight of validity in the reward (default 1.0).
    - ``max_changes``: the change budget (default ``H * W // 5``, PCGRL's 20%).
    - ``patience``: steps without a quality improvement that end a valid episode (default
      ``H * W``, one narrow sweep).
    - ``max_steps``: truncation (default ``4 * H * W``).
    - ``render_mode``: None, "ansi" (``Ship.to_text``) or "rgb_array" (``render.draw_ship``,
      12 pixels a tile, with the legend).

    ``info`` holds "quality" (the score), "terms" (each quality term in [0, 1]), "valid",
    "rules_passed", "reasons" (why the ship is invalid), "changes", "steps", "cursor" and
    "action_mask".

    ## Version History

    - v0: initial release.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 30}

    def __init__(
        self,
        *,
        representation: str = "narrow",
        start: str = "partial",
        size: int | tuple[int, int] = 32,
        partial_stages: int = 6,
        generator: dict[str, Any] | None = None,
        validity_bonus: float = 1.0,
        reward: str = "potential",
        masks: bool | str = False,
        max_changes: int | None = None,
        patience: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if representation not in REPRESENTATIONS:
            raise ValueError(f"representation must be one of {REPRESENTATIONS}, got {representation!r}")
        if start not in STARTS:
            raise ValueError(f"start must be one of {STARTS}, got {start!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        if isinstance(masks, bool):
            masks = "repairable" if masks else "none"
        if masks not in MASKS:
            raise ValueError(f"masks must be one of {MASKS} (or False / True for none / repairable), got {masks!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if not 1 <= partial_stages <= 14:
            raise ValueError(f"partial_stages must be a stage number 1..14, got {partial_stages!r}")
        generator = dict(generator or {})
        if "size" in generator:
            raise ValueError("give the grid size as StarshipEnv(size=...), not in generator")
        self.pipeline = Pipeline(size=size, **generator)
        H, W = self.pipeline.size
        for name, value in (("max_changes", max_changes), ("patience", patience), ("max_steps", max_steps)):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be None or >= 1, got {value!r}")
        self.representation = representation
        self.start = start
        self.partial_stages = partial_stages
        self.validity_bonus = float(validity_bonus)
        self.reward = reward
        self.masks = masks
        self.max_changes = H * W // 5 if max_changes is None else int(max_changes)
        self.patience = H * W if patience is None else int(patience)
        self.max_steps = 4 * H * W if max_steps is None else int(max_steps)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0, 1, (OBS_CHANNELS, H, W), np.uint8)
        if representation == "narrow":
            self.action_space: spaces.Space = spaces.Discrete(1 + NUM_BRUSHES)
        elif representation == "turtle":
            self.action_space = spaces.Discrete(4 + NUM_BRUSHES)
        else:
            self.action_space = spaces.MultiDiscrete([H, W, NUM_BRUSHES])
        n_mask = int(self.action_space.n) if isinstance(self.action_space, spaces.Discrete) else int(self.action_space.nvec.sum())
        self._mask = np.ones(n_mask, np.int8)
        self._ship = self.pipeline.new_ship()
        self._cursor = (0, 0)
        self._validity, self._quality = scored(self._ship)
        self._best = self._quality.score
        self._stale = 0
        self._changes = 0
        self._steps = 0
        self._done = True

    # -- the ship ------------------------------------------------------------------------

    @property
    def ship(self) -> Ship:
        """A copy of the ship as it stands."""
        return self._ship.copy()

    @property
    def validity(self) -> Validity:
        return self._validity

    @property
    def quality(self) -> Quality:
        return self._quality

    def potential(self) -> float:
        """phi: the quality score plus the validity bonus for the rules that hold; with
        ``reward="gated"`` or "audit", the quality score counts only once the ship is valid (see Rewards)."""
        rules = self.validity_bonus * self._validity.passed / len(VALIDITY_RULES)
        if self.reward != "potential" and not self._validity.ok:
            return rules
        return self._quality.score + rules

    def action_masks(self) -> np.ndarray:
        """The legal actions (sb3-contrib MaskablePPO's hook): all True, or with ``masks`` the
        writes that change the ship and can still lead to a valid one (see Action Space)."""
        return self._mask.astype(bool)

    @property
    def brush_offset(self) -> int:
        """The index of the first brush in the action mask: after "narrow"'s keep action,
        "turtle"'s four moves, or "wide"'s rows and columns."""
        return {"narrow": 1, "turtle": 4}.get(self.representation, sum(self.pipeline.size))

    def _update_mask(self) -> None:
        if self.masks == "none":
            return
        kinds = self._ship.parts[:, S.KIND]
        has_cockpit, has_reactor = bool((kinds == S.COCKPIT).any()), bool((kinds == S.REACTOR).any())
        first = self.brush_offset
        if self.representation == "wide":  # one entry per value of each dimension: the brush only
            self._mask[:first] = 1
            self._mask[first + _COCKPIT_BRUSH] = not has_cockpit
            self._mask[first + _REACTOR_BRUSH] = not has_reactor
            self._mask[first + _EMPTY_BRUSH] = self.masks == "repairable"
            return
        # the keep / move actions stay allowed
        brush_mask(
            self._ship.tiles,
            self._ship.part,
            self._ship.parts,
            self._cursor[0],
            self._cursor[1],
            has_cockpit,
            has_reactor,
            self.masks != "repairable",
            self._mask[first:],
        )
        if self.masks == "safe":
            seal_mask(self._ship.tiles, self._ship.part, self._ship.parts, self._cursor[0], self._cursor[1], self._mask[first:])

    def _start_ship(self) -> Ship:
        rng = self.np_random
        if self.start == "partial":
            return self.pipeline.generate(rng, until=self.partial_stages)
        if self.start == "empty":
            return self.pipeline.generate(rng, until=2)
        H, W = self.pipeline.size
        ship = self.pipeline.new_ship()
        ship.tiles[:] = rng.choice(np.array([S.EMPTY, S.CORRIDOR, S.ARMOR], np.int8), size=(H, W), p=[0.35, 0.5, 0.15])
        for _ in range(H * W // 32):
            apply_edit(
                ship, BRUSHES[int(rng.integers(FIRST_BRUSH_PART, NUM_BRUSHES))], int(rng.integers(H)), int(rng.integers(W))
            )
        return ship

    def _observation(self) -> np.ndarray:
        return observe(self._ship, None if self.representation == "wide" else self._cursor)

    def _info(self) -> dict[str, Any]:
        return {
            "quality": self._quality.score,
            "terms": dict(self._quality.terms),
            "valid": self._validity.ok,
            "rules_passed": self._validity.passed,
            "reasons": self._validity.reasons,
            "changes": self._changes,
            "steps": self._steps,
            "cursor": None if self.representation == "wide" else self._cursor,
            "action_mask": self._mask.copy(),
        }

    def _score(self) -> None:
        self._validity, self._quality = scored(self._ship)  # validate() and quality(), in one compiled pass

    # -- Gymnasium API ----------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._ship = self._start_ship()
        H, W = self.pipeline.size
        if self.representation == "turtle":
            self._cursor = (int(self.np_random.integers(H)), int(self.np_random.integers(W)))
        else:
            self._cursor = (0, 0)
        self._score()
        self._best = self._quality.score
        self._stale = self._changes = self._steps = 0
        self._done = False
        self._update_mask()
        return self._observation(), self._info()

    def _decode(self, action: Any) -> tuple[int, int, int, int]:
        """(move direction or -1, brush index or -1, y, x) of an action; raises ValueError if it is not one."""
        H, W = self.pipeline.size
        if self.representation == "wide":
            try:
                a = np.asarray(action)
                ok = (
                    a.shape == (3,)
                    and np.issubdtype(a.dtype, np.integer)
                    and bool((a >= 0).all() and (a < self.action_space.nvec).all())
                )
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError(
                    f"illegal action {action!r}: a wide action is (y, x, brush) with 0 <= y < {H}, "
                    f"0 <= x < {W} and 0 <= brush < {NUM_BRUSHES}"
                )
            return -1, int(a[2]), int(a[0]), int(a[1])
        n = int(self.action_space.n)
        a = as_action(action)
        if not 0 <= a < n:
            raise IllegalActionError(action, range(n), f"({self.representation} actions are 0..{n - 1})")
        y, x = self._cursor
        if self.representation == "narrow":
            return -1, a - 1, y, x
        return (a, -1, y, x) if a < 4 else (-1, a - 4, y, x)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("the episode is over (or reset() was never called); call reset() first")
        move, brush, y, x = self._decode(action)
        H, W = self.pipeline.size
        before = self.potential()
        changed = brush >= 0 and apply_edit(self._ship, BRUSHES[brush], y, x)
        if self.representation == "narrow":
            i = (y * W + x + 1) % (H * W)
            self._cursor = (i // W, i % W)
        elif move >= 0:
            self._cursor = (min(max(y + S.DY[move], 0), H - 1), min(max(x + S.DX[move], 0), W - 1))
        if changed:
            self._changes += 1
            self._score()
        self._steps += 1
        reward = self.potential() - before
        if self._quality.score > self._best + 1e-12:
            self._best = self._quality.score
            self._stale = 0
        else:
            self._stale += 1
        terminated = self._validity.ok and (self._changes >= self.max_changes or self._stale >= self.patience)
        truncated = not terminated and self._steps >= self.max_steps
        self._done = terminated or truncated
        self._update_mask()
        info = self._info()
        if self._done and self.reward == "audit":
            from tablegym.envs.starship.layout import layout_quality

            v2 = layout_quality(self._ship, score=self._quality.score)
            info["layout_quality"] = v2
            if self._validity.ok:
                reward += v2 - self._quality.score
        return self._observation(), float(reward), terminated, truncated, info

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "ansi":
            return self._ship.to_text()
        if self.render_mode == "rgb_array":
            from tablegym.envs.starship.render import draw_ship

            return draw_ship(self._ship)
        return None

    def __repr__(self) -> str:
        H, W = self.pipeline.size
        return f"<{type(self).__name__} {self.representation} {H}x{W} start={self.start!r}>"
