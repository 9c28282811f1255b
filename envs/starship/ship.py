"""A starship as compact numpy arrays: a tile grid, a part-index grid and a part table.

The ship faces +x ("forward" is to the right of the drawings); +y is starboard (down), -y port
(up). Rows are y, columns are x, row 0 at the top::

          x ->  0 1 2 3 ...
    y  0        . . . . . . . .         port (-y)
    |  1        . # # # # . . .            ^
    v  2        < : : C C # . .   backward < + > forward (+x)
       3        . # : C C # . .            v
       4        . . # # # . . .         starboard (+y)

``Ship.tiles[y, x]`` (int8) holds the tile kind below; ``Ship.part[y, x]`` (int16) the index of
the part covering the tile in ``Ship.parts`` (-1: none); ``Ship.parts`` (int16, one row per
part) holds ``kind, variant, facing, y, x, h, w``: the part's kind, size variant, facing, the
top-left (anchor) tile of its footprint and the footprint's height and width.

Walkable tiles are corridors and doors; crew walk between them in 4-neighbour steps. Parts are
not walkable: a part is reached from a walkable tile next to its footprint (its "access").

Footprints: tablegym's choices, except the thruster and weapon sizes, which the spec gives
(``footprint_table()`` prints this table from the code's own data). h x w is rows (along y)
x columns (along x); a thruster is as deep as it is along its exhaust axis and as wide across
it, so a medium one is 2 tiles across its exhaust and 1 deep. Points (thrusters and weapons)
are the footprint's tile count.

| part          | code | text                   | variant | footprint h x w, facing forward/backward | facing starboard/port | points |
|---------------|------|------------------------|---------|------------------------------------------|-----------------------|--------|
| cockpit       | 4    | `C`                    |         | 2 x 2                                    | 2 x 2                 |        |
| reactor       | 5    | `R`                    |         | 2 x 2                                    | 2 x 2                 |        |
| thruster      | 6    | `>` `v` `<` `^`        | small   | 1 x 1                                    | 1 x 1                 | 1      |
| thruster      | 6    | (exhaust direction)    | medium  | 2 x 1                                    | 1 x 2                 | 2      |
| thruster      | 6    |                        | big     | 2 x 2                                    | 2 x 2                 | 4      |
| weapon        | 7    | `F` `S` `B` `P`        | small   | 1 x 1                                    | 1 x 1                 | 1      |
| weapon        | 7    | (side it fires to)     | large   | 2 x 2                                    | 2 x 2                 | 4      |
| ammo supply   | 8    | `A`                    |         | 1 x 1                                    | 1 x 1                 |        |
| power storage | 9    | `E`                    |         | 1 x 1                                    | 1 x 1                 |        |
| crew quarters | 10   | `Q`                    |         | 2 x 2                                    | 2 x 2                 |        |
| bunk room     | 11   | `K`                    | along x | 2 x 3                                    | 2 x 3                 |        |
| bunk room     | 11   |                        | along y | 3 x 2                                    | 3 x 2                 |        |

A thruster's facing is the direction its exhaust points (a thruster facing backward pushes the
ship forward); a weapon's facing is the direction it fires. Parts other than thrusters and
weapons have no facing (it is stored as 0). Text: '.' empty, ':' corridor, '#' armor, '+' door,
one character per tile (``LEGEND``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# -- tiles ---------------------------------------------------------------------------------

EMPTY, CORRIDOR, ARMOR, DOOR, COCKPIT, REACTOR, THRUSTER, WEAPON, AMMO, POWER, QUARTERS, BUNK = range(12)
NUM_TILE_KINDS = 12
FIRST_PART = COCKPIT
"""Tile codes >= FIRST_PART are parts (they have a row in ``Ship.parts``)."""
TILE_NAMES = (
    "empty",
    "corridor",
    "armor",
    "door",
    "cockpit",
    "reactor",
    "thruster",
    "weapon",
    "ammo supply",
    "power storage",
    "crew quarters",
    "bunk room",
)
PART_KINDS = tuple(range(FIRST_PART, NUM_TILE_KINDS))

# -- directions ----------------------------------------------------------------------------

FORWARD, STARBOARD, BACKWARD, PORT = range(4)
DIRECTION_NAMES = ("forward", "starboard", "backward", "port")
DY = (0, 1, 0, -1)
DX = (1, 0, -1, 0)
FACED = (THRUSTER, WEAPON)
"""The part kinds with a facing (for every other kind the facing is 0 and means nothing)."""

# -- footprints ----------------------------------------------------------------------------

SMALL, MEDIUM, BIG = 0, 1, 2
LARGE = 1
ALONG_X, ALONG_Y = 0, 1
_FIXED = {COCKPIT: [(2, 2)], REACTOR: [(2, 2)], AMMO: [(1, 1)], POWER: [(1, 1)], QUARTERS: [(2, 2)], BUNK: [(2, 3), (3, 2)]}
_FACED_SIZES = {THRUSTER: [(1, 1), (1, 2), (2, 2)], WEAPON: [(1, 1), (2, 2)]}
"""kind -> per variant, (along the facing, across it)."""
NUM_VARIANTS = {**{k: len(v) for k, v in _FIXED.items()}, **{k: len(v) for k, v in _FACED_SIZES.items()}}
VARIANT_NAMES = {THRUSTER: ("small", "medium", "big"), WEAPON: ("small", "large"), BUNK: ("along x", "along y")}

_TEXT = {
    EMPTY: ".",
    CORRIDOR: ":",
    ARMOR: "#",
    DOOR: "+",
    COCKPIT: "C",
    REACTOR: "R",
    AMMO: "A",
    POWER: "E",
    QUARTERS: "Q",
    BUNK: "K",
}
THRUSTER_TEXT = ">v<^"
"""A thruster tile's character by facing: the exhaust direction as an arrow."""
WEAPON_TEXT = "FSBP"
"""A weapon tile's character by facing: the side it fires to."""
LEGEND = (
    ". empty   : corridor   # armor   + door   C cockpit   R reactor   A ammo supply   E power storage\n"
    "Q crew quarters   K bunk room   > v < ^ thruster (exhaust forward/starboard/backward/port)\n"
    "F S B P weapon (firing forward/starboard/backward/port)"
)


def footprint(kind: int, variant: int = 0, facing: int = 0) -> tuple[int, int]:
    """(h, w) of a part's footprint: rows (along y) x columns (along x).

    >>> footprint(THRUSTER, MEDIUM, BACKWARD), footprint(THRUSTER, MEDIUM, PORT)
    ((2, 1), (1, 2))
    >>> footprint(BUNK, ALONG_X)
    (2, 3)
    """
    if kind in _FACED_SIZES:
        along, across = _FACED_SIZES[kind][variant]
        return (across, along) if facing in (FORWARD, BACKWARD) else (along, across)
    return _FIXED[kind][variant]


def points(kind: int, variant: int) -> int:
    """Thruster and weapon points: the footprint's tile count (small 1, medium 2, big/large 4)."""
    h, w = footprint(kind, variant)
    return h * w


_TEXT_NOTE = {THRUSTER: ("`>` `v` `<` `^`", "(exhaust direction)"), WEAPON: ("`F` `S` `B` `P`", "(side it fires to)")}


def footprint_table() -> str:
    """Every part's footprints as the markdown table of this module's docstring."""
    head = ("part", "code", "text", "variant", "footprint h x w, facing forward/backward", "facing starboard/port", "points")
    widths = (13, 4, 22, 7, 40, 21, 6)
    rows = []
    for kind in PART_KINDS:
        for variant in range(NUM_VARIANTS[kind]):
            if kind in _TEXT_NOTE:
                text = _TEXT_NOTE[kind][variant] if variant < 2 else ""
            else:
                text = f"`{_TEXT[kind]}`" if variant == 0 else ""
            name = VARIANT_NAMES[kind][variant] if kind in VARIANT_NAMES else ""
            (h1, w1), (h2, w2) = footprint(kind, variant, FORWARD), footprint(kind, variant, PORT)
            pts = str(points(kind, variant)) if kind in FACED else ""
            rows.append((TILE_NAMES[kind], str(kind), text, name, f"{h1} x {w1}", f"{h2} x {w2}", pts))
    line = lambda cells: "| " + " | ".join(c.ljust(n) for c, n in zip(cells, widths)) + " |"  # noqa: E731
    return "\n".join([line(head), "|" + "|".join("-" * (n + 2) for n in widths) + "|", *map(line, rows)])


def part_name(kind: int, variant: int = 0, facing: int = 0) -> str:
    """A tile or part as people say it, e.g. "big thruster facing backward"."""
    name = TILE_NAMES[kind]
    if kind in VARIANT_NAMES:
        name = f"{VARIANT_NAMES[kind][variant]} {name}"
    if kind in FACED:
        name += f" facing {DIRECTION_NAMES[facing]}"
    return name


class PlacementError(ValueError):
    """A part that does not fit where it was asked to go."""


class Part(NamedTuple):
    """One row of ``Ship.parts``, readable."""

    kind: int
    variant: int
    facing: int
    y: int
    x: int
    h: int
    w: int

    def __str__(self) -> str:
        return f"{part_name(self.kind, self.variant, self.facing)} at (y={self.y}, x={self.x})"


PART_FIELDS = 7
KIND, VARIANT, FACING, PY, PX, PH, PW = range(PART_FIELDS)


class Ship:
    """A ship under construction: ``tiles`` (int8), ``part`` (int16) and ``parts`` (int16) arrays.

    The arrays are public for the compiled kernels and the generator's stages, which edit them
    in place through ``_stamp``/``_erase``; ``add_part``/``remove_part`` are the checked way.

    >>> ship = Ship.from_text('''
    ... . # # # .
    ... . : C C #
    ... < : C C #
    ... . # # # .''')
    >>> [str(p) for p in ship.part_list()]
    ['cockpit at (y=1, x=2)', 'small thruster facing backward at (y=2, x=0)']
    """

    __slots__ = ("tiles", "part", "parts")

    def __init__(self, tiles: np.ndarray, part: np.ndarray, parts: np.ndarray) -> None:
        self.tiles = tiles
        self.part = part
        self.parts = parts

    @classmethod
    def empty(cls, height: int = 32, width: int | None = None) -> Ship:
        """An all-empty grid, ``height`` x ``width`` (square when width is None)."""
        width = height if width is None else width
        if height < 1 or width < 1:
            raise ValueError(f"a ship grid needs a positive size, got {height} x {width}")
        return cls(
            np.zeros((height, width), np.int8), np.full((height, width), -1, np.int16), np.zeros((0, PART_FIELDS), np.int16)
        )

    @property
    def shape(self) -> tuple[int, int]:
        return self.tiles.shape  # type: ignore[return-value]

    def copy(self) -> Ship:
        return Ship(self.tiles.copy(), self.part.copy(), self.parts.copy())

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Ship)
            and np.array_equal(self.tiles, other.tiles)
            and np.array_equal(self.part, other.part)
            and np.array_equal(self.parts, other.parts)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        h, w = self.shape
        return f"<Ship {h}x{w}, {int((self.tiles != EMPTY).sum())} tiles, {len(self.parts)} parts>"

    # -- parts -----------------------------------------------------------------------------

    def part_list(self) -> list[Part]:
        return [Part(*map(int, row)) for row in self.parts]

    def parts_of(self, kind: int) -> np.ndarray:
        """Indices (into ``parts``) of the parts of ``kind``."""
        return np.flatnonzero(self.parts[:, KIND] == kind)

    def fits(self, kind: int, variant: int, facing: int, y: int, x: int) -> bool:
        """Whether the footprint lies in the grid and covers no tile of another part."""
        h, w = footprint(kind, variant, facing)
        H, W = self.shape
        if y < 0 or x < 0 or y + h > H or x + w > W:
            return False
        return bool((self.part[y : y + h, x : x + w] < 0).all())

    def add_part(self, kind: int, variant: int, facing: int, y: int, x: int) -> int:
        """Stamp a part with its anchor (top-left tile) at (y, x); returns its index.

        Raises ``PlacementError`` if the kind, variant or facing is unknown, or the footprint
        leaves the grid or covers another part. Walls and corridors under it are replaced.
        """
        if kind not in PART_KINDS:
            raise PlacementError(
                f"{kind!r} is not a part kind; parts are {list(PART_KINDS)} ({', '.join(TILE_NAMES[FIRST_PART:])})"
            )
        if not 0 <= variant < NUM_VARIANTS[kind]:
            raise PlacementError(f"{TILE_NAMES[kind]} has variants 0..{NUM_VARIANTS[kind] - 1}, got {variant!r}")
        if not 0 <= facing < 4:
            raise PlacementError(f"facing must be 0..3 ({', '.join(DIRECTION_NAMES)}), got {facing!r}")
        if not self.fits(kind, variant, facing, y, x):
            h, w = footprint(kind, variant, facing)
            raise PlacementError(
                f"a {h}x{w} {TILE_NAMES[kind]} at (y={y!r}, x={x!r}) leaves the {self.shape[0]}x{self.shape[1]} "
                "grid or covers another part"
            )
        return self._stamp(kind, variant, facing if kind in FACED else 0, y, x)

    def _stamp(self, kind: int, variant: int, facing: int, y: int, x: int) -> int:
        """``add_part`` without the checks."""
        h, w = footprint(kind, variant, facing)
        index = len(self.parts)
        self.parts = np.vstack([self.parts, np.array([[kind, variant, facing, y, x, h, w]], np.int16)])
        self.tiles[y : y + h, x : x + w] = kind
        self.part[y : y + h, x : x + w] = index
        return index

    def remove_part(self, index: int, *, floor: int = CORRIDOR) -> None:
        """Take part ``index`` out, leaving ``floor`` tiles; later parts' indices shift down by one."""
        if not 0 <= index < len(self.parts):
            raise IndexError(f"part index {index!r} out of range for {len(self.parts)} parts")
        _, _, _, y, x, h, w = map(int, self.parts[index])
        self.tiles[y : y + h, x : x + w] = floor
        self.part[y : y + h, x : x + w] = -1
        self.parts = np.delete(self.parts, index, axis=0)
        self.part[self.part > index] -= 1

    # -- text ------------------------------------------------------------------------------

    def to_text(self, *, legend: bool = False) -> str:
        """One character per tile (see ``LEGEND``), rows top to bottom."""
        chars = np.array([_TEXT.get(k, "?") for k in range(NUM_TILE_KINDS)])
        grid = chars[self.tiles]
        for _, _, facing, y, x, h, w in self.part_list():
            kind = int(self.tiles[y, x])
            if kind == THRUSTER:
                grid[y : y + h, x : x + w] = THRUSTER_TEXT[facing]
            elif kind == WEAPON:
                grid[y : y + h, x : x + w] = WEAPON_TEXT[facing]
        text = "\n".join("".join(row) for row in grid)
        return text + "\n\n" + LEGEND if legend else text

    @classmethod
    def from_text(cls, text: str) -> Ship:
        """Parse ``to_text``'s drawing (spaces between characters are ignored).

        Parts are read greedily in row-major order, the largest variant whose footprint is
        all the same character first; so two touching parts of one kind and facing may read as
        one bigger part (the arrays, not the text, are the ship's exact record).
        """
        rows = [line.replace(" ", "") for line in text.strip("\n").splitlines() if line.strip()]
        if not rows or len({len(r) for r in rows}) != 1:
            raise ValueError(f"a ship drawing needs equal non-empty rows, got row lengths {[len(r) for r in rows]}")
        ship = cls.empty(len(rows), len(rows[0]))
        grid = np.array([list(r) for r in rows])
        reverse = {ch: k for k, ch in _TEXT.items()}
        for ch in "".join(rows):
            if ch not in reverse and ch not in THRUSTER_TEXT and ch not in WEAPON_TEXT:
                raise ValueError(f"unknown ship character {ch!r}; the legend is:\n{LEGEND}")
        for y in range(grid.shape[0]):
            for x in range(grid.shape[1]):
                ch = grid[y, x]
                if ship.part[y, x] >= 0:
                    continue
                if ch in THRUSTER_TEXT or ch in WEAPON_TEXT:
                    kind = THRUSTER if ch in THRUSTER_TEXT else WEAPON
                    facing = (THRUSTER_TEXT if kind == THRUSTER else WEAPON_TEXT).index(ch)
                elif reverse[ch] >= FIRST_PART:
                    kind, facing = reverse[ch], 0
                else:
                    ship.tiles[y, x] = reverse[ch]
                    continue
                for variant in reversed(range(NUM_VARIANTS[kind])):
                    h, w = footprint(kind, variant, facing)
                    block = grid[y : y + h, x : x + w]
                    if block.shape == (h, w) and (block == ch).all() and ship.fits(kind, variant, facing, y, x):
                        ship._stamp(kind, variant, facing, y, x)
                        break
                else:
                    raise ValueError(f"{ch!r} at (y={y}, x={x}) does not start a whole {TILE_NAMES[kind]}")
        return ship

    def __str__(self) -> str:
        return self.to_text()
