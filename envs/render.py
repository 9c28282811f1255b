"""Small numpy-only drawings of game positions, for the "rgb_array" render mode.

No pygame or PIL: an image is an H x W x 3 uint8 array built from masks, which is all that
gymnasium's RecordVideo and a notebook need. Envs import this module lazily, only when an image
is asked for.
"""

from __future__ import annotations

from typing import Sequence

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


def draw_sim(n: int, edges: Sequence[tuple[int, int]], colours: Sequence[int], *, size: int = 256, last_edge: int = -1) -> np.ndarray:
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
