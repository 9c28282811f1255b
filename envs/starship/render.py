"""Ship images: tiles and parts in colours, thruster nozzles and weapon barrels pointing where they
face, a legend; a strip of the ship after each stage; a small PNG writer.

numpy only (like ``tablegym.envs.render``): an image is an H x W x 3 uint8 array. ``write_png``
encodes one with zlib, so saving a picture needs no imaging library.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tablegym.envs.render import FONT, _stamp
from tablegym.envs.starship import ship as S
from tablegym.envs.starship.ship import Ship

COLOURS = np.zeros((S.NUM_TILE_KINDS, 3), np.uint8)
COLOURS[S.EMPTY] = (18, 22, 36)
COLOURS[S.CORRIDOR] = (205, 205, 195)
COLOURS[S.ARMOR] = (92, 102, 118)
COLOURS[S.DOOR] = (205, 140, 55)
COLOURS[S.COCKPIT] = (60, 195, 235)
COLOURS[S.REACTOR] = (245, 215, 40)
COLOURS[S.THRUSTER] = (235, 105, 40)
COLOURS[S.WEAPON] = (205, 40, 60)
COLOURS[S.AMMO] = (160, 95, 210)
COLOURS[S.POWER] = (70, 185, 95)
COLOURS[S.QUARTERS] = (70, 110, 225)
COLOURS[S.BUNK] = (140, 185, 240)
"""RGB colour of each tile kind (index = tile code)."""
INK = np.array([20, 20, 20], np.uint8)
TEXT = np.array([235, 235, 235], np.uint8)
OUTLINE = np.array([10, 10, 10], np.uint8)
LEGEND_LABELS = (
    "EMPTY",
    "CORRIDOR",
    "ARMOR",
    "DOOR",
    "COCKPIT",
    "REACTOR",
    "THRUSTER",
    "WEAPON",
    "AMMO SUPPLY",
    "POWER STORAGE",
    "CREW QUARTERS",
    "BUNK ROOM",
)

_LETTERS = {
    "A": "010 101 111 101 101",
    "B": "110 101 110 101 110",
    "C": "011 100 100 100 011",
    "D": "110 101 101 101 110",
    "E": "111 100 110 100 111",
    "F": "111 100 110 100 100",
    "G": "011 100 101 101 011",
    "H": "101 101 111 101 101",
    "I": "111 010 010 010 111",
    "J": "001 001 001 101 010",
    "K": "101 101 110 101 101",
    "L": "100 100 100 100 111",
    "M": "101 111 111 101 101",
    "N": "110 101 101 101 101",
    "O": "010 101 101 101 010",
    "P": "110 101 110 100 100",
    "Q": "010 101 101 110 011",
    "R": "110 101 110 101 101",
    "S": "011 100 010 001 110",
    "T": "111 010 010 010 010",
    "U": "101 101 101 101 111",
    "V": "101 101 101 101 010",
    "W": "101 101 111 111 101",
    "X": "101 101 010 101 101",
    "Y": "101 101 010 010 010",
    "Z": "111 001 010 100 111",
    "-": "000 000 111 000 000",
    ".": "000 000 000 000 010",
    ":": "000 010 000 010 000",
    "=": "000 111 000 111 000",
    "_": "000 000 000 000 111",
}
GLYPHS = {**FONT, **{ch: np.array([[c == "1" for c in row] for row in rows.split()]) for ch, rows in _LETTERS.items()}}
"""The shared 3 x 5 font (digits, '+', '/', '?', space) with capital letters and a little punctuation."""


def label_mask(text: str, scale: int = 1) -> np.ndarray:
    """``text`` (upper-cased) in the 3 x 5 font as a bool mask, one blank column between glyphs."""
    glyphs = [GLYPHS.get(ch, GLYPHS["?"]) for ch in text.upper()] or [GLYPHS[" "]]
    gap = np.zeros((5, 1), bool)
    row = np.concatenate([part for g in glyphs for part in (g, gap)][:-1], axis=1)
    return np.kron(row, np.ones((scale, scale), bool)).astype(bool)


def _write(img: np.ndarray, text: str, y: int, x: int, scale: int, colour: np.ndarray) -> None:
    """Text with its top-left corner at pixel (y, x)."""
    mask = label_mask(text, scale)
    _stamp(img, mask, y + mask.shape[0] // 2, x + mask.shape[1] // 2, colour)


def _facing_mask(ph: int, pw: int, facing: int, kind: int) -> np.ndarray:
    """A thruster's nozzle (widening towards the exhaust) or a weapon's turret and barrel
    (towards the firing side) over a ph x pw pixel footprint."""
    ii, jj = np.mgrid[0:ph, 0:pw].astype(float)
    u = (jj + 0.5) / pw  # 0 at the left edge, 1 at the right
    v = (ii + 0.5) / ph  # 0 at the top, 1 at the bottom
    along = (u, v, 1 - u, 1 - v)[facing]  # 0 at the back, 1 at the facing side
    across = 2 * ((v, u, v, u)[facing]) - 1
    length = (pw, ph, pw, ph)[facing]
    width = (ph, pw, ph, pw)[facing]
    if kind == S.THRUSTER:
        return (np.abs(across) <= 0.2 + 0.65 * along) & (along >= 0.2) & (along <= 0.95)
    bore = 0.22 * min(1.0, 1.6 * length / width)
    turret = (along - 0.4) ** 2 * (length / width) ** 2 + across**2 <= 0.45**2
    return turret | ((np.abs(across) <= bore) & (along >= 0.4))


def draw_ship(
    ship: Ship, *, cell: int = 12, legend: bool = True, title: str | None = None, bbox: tuple[int, int, int, int] | None = None
) -> np.ndarray:
    """The ship as an RGB image: ``cell`` pixels per tile, each part outlined, thrusters drawn as
    nozzles opening towards their exhaust and weapons as turrets with a barrel towards their
    firing side; a legend to the right and a ``title`` above, if asked.

    ``bbox = (y0, x0, y1, x1)`` draws only those tiles (end exclusive; ``ship_bbox`` gives the
    ship's own). Without a legend or title the image is ``(rows * cell) x (cols * cell) x 3``;
    with a legend, it is at least as tall as the legend.
    """
    H, W = ship.shape
    y0, x0, y1, x1 = (0, 0, H, W) if bbox is None else bbox
    rows, cols = y1 - y0, x1 - x0
    img = np.kron(COLOURS[ship.tiles[y0:y1, x0:x1]], np.ones((cell, cell, 1), np.uint8)).astype(np.uint8)
    if cell >= 4:  # a faint tile grid on walls and corridors
        shade = (ship.tiles[y0:y1, x0:x1] == S.ARMOR) | (ship.tiles[y0:y1, x0:x1] == S.CORRIDOR)
        edge = np.zeros((cell, cell), bool)
        edge[-1, :] = edge[:, -1] = True
        lines = np.kron(shade, edge).astype(bool)
        img[lines] = (img[lines] * 0.85).astype(np.uint8)
    for row in ship.parts:
        kind, _, facing, py, px, ph, pw = (int(v) for v in row)
        ty, tx = py - y0, px - x0
        if ty + ph <= 0 or tx + pw <= 0 or ty >= rows or tx >= cols:
            continue
        box = np.zeros((ph * cell, pw * cell), bool)
        box[[0, -1], :] = box[:, [0, -1]] = True
        if kind in (S.THRUSTER, S.WEAPON):
            box |= _facing_mask(ph * cell, pw * cell, facing, kind)
        full = np.zeros((rows * cell, cols * cell), bool)
        ys, xs = slice(max(ty, 0) * cell, min(ty + ph, rows) * cell), slice(max(tx, 0) * cell, min(tx + pw, cols) * cell)
        full[ys, xs] = box[ys.start - ty * cell : ys.stop - ty * cell, xs.start - tx * cell : xs.stop - tx * cell]
        img[full] = OUTLINE if kind not in (S.THRUSTER, S.WEAPON) else INK
        if kind in (S.THRUSTER, S.WEAPON):
            outline = np.zeros_like(box)
            outline[[0, -1], :] = outline[:, [0, -1]] = True
            full[:] = False
            full[ys, xs] = outline[ys.start - ty * cell : ys.stop - ty * cell, xs.start - tx * cell : xs.stop - tx * cell]
            img[full] = OUTLINE
    if title is not None:
        img = _with_title(img, title, max(1, cell // 6))
    if legend:
        img = _side_by_side(img, legend_panel(cell))
    return img


def _side_by_side(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Two images next to each other, the shorter padded at the bottom with the background."""
    height = max(left.shape[0], right.shape[0])
    return np.concatenate([_pad_rows(left, height), _pad_rows(right, height)], axis=1)


def ship_bbox(ship: Ship, margin: int = 1) -> tuple[int, int, int, int]:
    """(y0, x0, y1, x1) of the ship's tiles grown by ``margin`` (the whole grid if it is empty)."""
    H, W = ship.shape
    ys, xs = np.nonzero(ship.tiles != S.EMPTY)
    if not len(ys):
        return 0, 0, H, W
    return (
        max(int(ys.min()) - margin, 0),
        max(int(xs.min()) - margin, 0),
        min(int(ys.max()) + 1 + margin, H),
        min(int(xs.max()) + 1 + margin, W),
    )


def _pad_rows(img: np.ndarray, height: int) -> np.ndarray:
    if img.shape[0] >= height:
        return img
    pad = np.empty((height - img.shape[0], img.shape[1], 3), np.uint8)
    pad[:] = COLOURS[S.EMPTY]
    return np.concatenate([img, pad], axis=0)


def _with_title(img: np.ndarray, title: str, scale: int) -> np.ndarray:
    band = np.empty((7 * scale + 4, img.shape[1], 3), np.uint8)
    band[:] = COLOURS[S.EMPTY]
    _write(band, title, 2 + scale, 2, scale, TEXT)
    return np.concatenate([band, img], axis=0)


def legend_panel(cell: int = 12) -> np.ndarray:
    """Swatches and names of every tile kind, one a line (thruster and weapon drawn facing forward)."""
    scale = max(1, min(2, cell // 6))
    line = max(cell, 5 * scale) + 4
    width = cell + 8 + max(label_mask(t, scale).shape[1] for t in LEGEND_LABELS) + 6
    panel = np.empty((line * S.NUM_TILE_KINDS + 6, width, 3), np.uint8)
    panel[:] = COLOURS[S.EMPTY]
    for kind, text in enumerate(LEGEND_LABELS):
        y = 4 + kind * line
        swatch = np.empty((cell, cell, 3), np.uint8)
        swatch[:] = COLOURS[kind]
        if kind in (S.THRUSTER, S.WEAPON):
            swatch[_facing_mask(cell, cell, S.FORWARD, kind)] = INK
        swatch[[0, -1], :] = swatch[:, [0, -1]] = OUTLINE if kind != S.EMPTY else TEXT
        panel[y : y + cell, 4 : 4 + cell] = swatch
        _write(panel, text, y + (cell - 5 * scale) // 2, cell + 10, scale, TEXT)
    return panel


def draw_stages(snapshots: Sequence[tuple[str, Ship]], *, cell: int = 6, columns: int = 7, legend: bool = True) -> np.ndarray:
    """A strip of ``(name, ship)`` pictures (the ship after each stage), ``columns`` a row, each
    titled with its number and name, all cropped to the last ship's bounding box."""
    if not snapshots:
        raise ValueError("draw_stages needs at least one (name, ship) snapshot")
    bbox = ship_bbox(snapshots[-1][1])
    titled = [(f"{i + 1} {name.replace('_', ' ')}", ship) for i, (name, ship) in enumerate(snapshots)]
    return draw_ships(titled, cell=cell, columns=columns, legend=legend, bbox=bbox)


def draw_ships(
    titled: Sequence[tuple[str, Ship]],
    *,
    cell: int = 6,
    columns: int = 7,
    legend: bool = True,
    bbox: tuple[int, int, int, int] | None = None,
) -> np.ndarray:
    """``(title, ship)`` pictures in rows of ``columns`` (the same crop ``bbox`` for all, default
    the whole grid), with the legend on the right."""
    if not titled:
        raise ValueError("draw_ships needs at least one (title, ship)")
    panels = [draw_ship(ship, cell=cell, legend=False, title=title, bbox=bbox) for title, ship in titled]
    ph, pw = panels[0].shape[:2]
    gap = max(cell, 4)
    columns = max(1, min(columns, len(panels)))
    rows = -(-len(panels) // columns)
    img = np.empty((rows * ph + (rows + 1) * gap, columns * pw + (columns + 1) * gap, 3), np.uint8)
    img[:] = (40, 44, 60)
    for i, panel in enumerate(panels):
        r, c = divmod(i, columns)
        img[gap + r * (ph + gap) : gap + r * (ph + gap) + ph, gap + c * (pw + gap) : gap + c * (pw + gap) + pw] = panel
    if legend:
        img = _side_by_side(img, legend_panel(max(cell, 10)))
    return img


# -- PNG ---------------------------------------------------------------------------------------


def encode_png(img: np.ndarray) -> bytes:
    """An H x W x 3 uint8 image as PNG bytes (8-bit RGB, no filtering, zlib level 6)."""
    img = np.ascontiguousarray(img)
    if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
        raise ValueError(f"encode_png needs an H x W x 3 uint8 array, got shape {img.shape} and dtype {img.dtype}")
    h, w = img.shape[:2]
    raw = np.concatenate([np.zeros((h, 1), np.uint8), img.reshape(h, w * 3)], axis=1).tobytes()

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


def write_png(path: str | Path, img: np.ndarray) -> Path:
    """Write ``img`` (H x W x 3 uint8) to ``path`` as a PNG; returns the path."""
    path = Path(path)
    path.write_bytes(encode_png(img))
    return path
