"""Small numpy-only drawings of game positions, for the "rgb_array" render mode.

No pygame or PIL: an image is an H x W x 3 uint8 array built from masks, which is all that
gymnasium's RecordVideo and a notebook need. Envs import this module lazily, only when an image
is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

PLAYER_COLOURS = np.array([[214, 39, 40], [250, 200, 20]], dtype=np.uint8)
"""Player 0 (red, "X") and player 1 (yellow, "O"), in both games."""
SIM_COLOURS = np.array([[214, 39, 40], [31, 119, 180]], dtype=np.uint8)
"""Sim edges: player 0 red, player 1 blue (yellow lines are hard to see on white)."""
BOARD_COLOUR = np.array([20, 60, 160], dtype=np.uint8)
HOLE_COLOUR = np.array([235, 235, 235], dtype=np.uint8)
MARK_COLOUR = np.array([25, 25, 25], dtype=np.uint8)
BACKGROUND = np.array([255, 255, 255], dtype=np.uint8)
GREY = np.array([190, 190, 190], dtype=np.uint8)


def _disc(size: int, radius: float) -> np.ndarray:
    """A size x size boolean mask of a centred disc."""
    c = (size - 1) / 2.0
    yy, xx = np.mgrid[0:size, 0:size]
    return (yy - c) ** 2 + (xx - c) ** 2 <= radius * radius


def draw_trilobite(board: np.ndarray, *, last_cell: int = -1, cell: int = 32) -> np.ndarray:
    """A gravity board as an image: coloured discs in a blue frame, the last chip marked.

    ``board`` is H x W with 0 empty, 1 player 0, 2 player 1, row 0 at the top (the
    ``TrilobiteState.board`` layout); ``last_cell`` is a row-major cell index or -1.
    Returns an ``(H * cell) x (W * cell) x 3`` uint8 array.
    """
    board = np.asarray(board)
    h, w = board.shape
    palette = np.stack([HOLE_COLOUR, PLAYER_COLOURS[0], PLAYER_COLOURS[1]])
    disc = _disc(cell, cell * 0.4)
    # tiles[y, x, i, j] is pixel (i, j) of cell (y, x)
    tiles = np.where(disc[None, None, :, :, None], palette[board][:, :, None, None, :], BOARD_COLOUR)
    if 0 <= last_cell < h * w:
        y, x = divmod(int(last_cell), w)
        tiles[y, x][_disc(cell, cell * 0.12)] = MARK_COLOUR
    return np.ascontiguousarray(tiles.transpose(0, 2, 1, 3, 4).reshape(h * cell, w * cell, 3).astype(np.uint8))


def _segment_mask(yy: np.ndarray, xx: np.ndarray, p: np.ndarray, q: np.ndarray, width: float) -> np.ndarray:
    """Pixels within ``width / 2`` of the segment p-q (points as (x, y))."""
    d = q - p
    t = ((xx - p[0]) * d[0] + (yy - p[1]) * d[1]) / max(float(d @ d), 1e-9)
    t = np.clip(t, 0.0, 1.0)
    dx = xx - (p[0] + t * d[0])
    dy = yy - (p[1] + t * d[1])
    return dx * dx + dy * dy <= (width / 2.0) ** 2


def draw_sim(
    n: int, edges: Sequence[tuple[int, int]], colours: Sequence[int], *, size: int = 256, last_edge: int = -1
) -> np.ndarray:
    """K_n as an image: points on a circle, coloured edges as thick lines, free edges thin grey.

    ``edges[e] = (i, j)`` and ``colours[e]`` is 0 (uncoloured), 1 (player 0) or 2 (player 1),
    the ``SimState.colours`` layout. ``last_edge`` (if >= 0) is drawn a little thicker.
    Returns a ``size x size x 3`` uint8 array.
    """
    colours = np.asarray(colours)
    if len(edges) != len(colours):
        raise ValueError(f"draw_sim needs one colour per edge, got {len(edges)} edges and {len(colours)} colours")
    img = np.empty((size, size, 3), dtype=np.uint8)
    img[:] = BACKGROUND
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n  # point 0 at the top, clockwise
    radius = size * 0.40
    centre = (size - 1) / 2.0
    points = np.stack([centre + radius * np.cos(angle), centre - radius * np.sin(angle)], axis=1)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    order = sorted(range(len(edges)), key=lambda e: colours[e] != 0)  # free edges underneath
    for e in order:
        i, j = edges[e]
        c = int(colours[e])
        width = size / 128 if c == 0 else size / 40
        if e == last_edge:
            width *= 1.6
        img[_segment_mask(yy, xx, points[i], points[j], width)] = GREY if c == 0 else SIM_COLOURS[c - 1]
    dot = size / 28
    for x, y in points:
        img[(xx - x) ** 2 + (yy - y) ** 2 <= dot * dot] = MARK_COLOUR
    return img


# -- Threes -------------------------------------------------------------------------------------

THREES_BACKGROUND = np.array([187, 217, 217], dtype=np.uint8)
THREES_EMPTY = np.array([204, 230, 230], dtype=np.uint8)
THREES_ONE = np.array([102, 204, 255], dtype=np.uint8)
THREES_TWO = np.array([255, 102, 128], dtype=np.uint8)
THREES_CARD = np.array([255, 255, 255], dtype=np.uint8)
THREES_INK = np.array([30, 30, 30], dtype=np.uint8)

# A 3 x 5 bitmap font: each glyph is five rows of three bits, most significant bit on the left.
_FONT_ROWS = {
    "0": ("111", "101", "101", "101", "111"),
    "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"),
    "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"),
    "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"),
    "7": ("111", "001", "010", "010", "010"),
    "8": ("111", "101", "111", "101", "111"),
    "9": ("111", "101", "111", "001", "111"),
    "+": ("000", "010", "111", "010", "000"),
    "/": ("001", "001", "010", "100", "100"),
    "?": ("111", "001", "011", "000", "010"),
    " ": ("000", "000", "000", "000", "000"),
}
FONT = {ch: np.array([[c == "1" for c in row] for row in rows]) for ch, rows in _FONT_ROWS.items()}
"""Glyph -> 5 x 3 bool mask (digits, '+', '/', '?', space): enough for card values and hints."""


def text_mask(text: str, scale: int = 1) -> np.ndarray:
    """``text`` in the 3 x 5 font as a bool mask, one blank column between glyphs, each pixel
    a ``scale x scale`` block. Characters outside ``FONT`` are drawn as '?'.

    >>> text_mask("12").shape
    (5, 7)
    """
    glyphs = [FONT.get(ch, FONT["?"]) for ch in text] or [FONT[" "]]
    gap = np.zeros((5, 1), dtype=bool)
    row = np.concatenate([part for g in glyphs for part in (g, gap)][:-1], axis=1)
    return np.kron(row, np.ones((scale, scale), dtype=bool)).astype(bool)


def _stamp(img: np.ndarray, mask: np.ndarray, cy: int, cx: int, colour: np.ndarray) -> None:
    """Paint ``mask`` centred on pixel (cy, cx) of ``img`` (clipped to the image)."""
    h, w = mask.shape
    y0, x0 = cy - h // 2, cx - w // 2
    ys, xs = slice(max(y0, 0), min(y0 + h, img.shape[0])), slice(max(x0, 0), min(x0 + w, img.shape[1]))
    sub = mask[ys.start - y0 : ys.stop - y0, xs.start - x0 : xs.stop - x0]
    img[ys, xs][sub] = colour


def _fitting_scale(text: str, width: int, height: int) -> int:
    """The largest font scale (at least 1) at which ``text`` fits in width x height pixels."""
    cols = 4 * max(len(text), 1) - 1
    return max(1, min(width // cols, height // 5))


def _card_colours(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(face, ink) of a card showing ``text``: 1 blue, 2 red (white ink), anything else white."""
    if text == "1":
        return THREES_ONE, THREES_CARD
    if text == "2":
        return THREES_TWO, THREES_CARD
    return THREES_CARD, THREES_INK


def draw_threes(values: np.ndarray, hint_text: str, *, score: int | None = None, cell: int = 48, gap: int = 6) -> np.ndarray:
    """A Threes board as an image: coloured cards with their values, the next-card hint above.

    ``values`` is the 4 x 4 array of card values (0 empty; the ``ThreesState.values`` layout,
    row 0 at the top); ``hint_text`` is ``ThreesState.hint`` ("1", "2", "3", "+" or candidates
    such as "6/12/24"), drawn as a card in a strip above the board, coloured like the card it
    announces; ``score``, if given, is written at the right of that strip. Cards follow the
    game's colours: 1 blue, 2 red, 3 and up white. Returns an
    ``(strip + 4 * cell + 5 * gap) x (4 * cell + 5 * gap) x 3`` uint8 array (strip = cell + 2 * gap).
    """
    values = np.asarray(values)
    if values.shape != (4, 4):
        raise ValueError(f"draw_threes needs a 4 x 4 array of card values, got shape {values.shape}")
    side = 4 * cell + 5 * gap
    strip = cell + 2 * gap
    img = np.empty((strip + side, side, 3), dtype=np.uint8)
    img[:] = THREES_BACKGROUND
    pad = max(cell // 16, 2)

    def card(y: int, x: int, w: int, text: str) -> None:
        face, ink = _card_colours(text)
        img[y : y + cell, x : x + w] = face
        scale = _fitting_scale(text, w - 2 * pad, cell // 2)
        _stamp(img, text_mask(text, scale), y + cell // 2, x + w // 2, ink)

    hint_scale = _fitting_scale("6/12/24", side // 2 - 2 * pad, cell // 2)
    hint_w = max(cell, text_mask(hint_text, hint_scale).shape[1] + 2 * pad)
    card(gap, gap, hint_w, hint_text)
    if score is not None:
        text = str(int(score))
        mask = text_mask(text, _fitting_scale(text, side - hint_w - 4 * gap, cell // 3))
        _stamp(img, mask, gap + cell // 2, side - gap - mask.shape[1] // 2 - 1, THREES_INK)
    for r in range(4):
        for c in range(4):
            y, x = strip + gap + r * (cell + gap), gap + c * (cell + gap)
            v = int(values[r, c])
            if v == 0:
                img[y : y + cell, x : x + cell] = THREES_EMPTY
            else:
                card(y, x, cell, str(v))
    return img
