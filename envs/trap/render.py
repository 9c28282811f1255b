"""Trap positions as small numpy images (the "rgb_array" render mode), imported lazily.

Layout of a ``draw_trap`` image (``cell`` pixels a square)::

    +---------------------------+  status strip (cell / 2 high): the colour of the player to
    |  colour of the mover   +  |  decide ('+' while it is about to throw), of the winner at
    +---+---+---+---+---+---+---+  the end, grey for a draw
    |   |   |   | 1 |   |   |   |  the board, row 0 at the top: light squares, traps dark,
    |   |###|   |   |   |   |   |  player 0 a red disc, player 1 a blue disc; in the throw
    |   |   |   | 2 |   |   |   |  phase a dark ring around the mover, a trap in the air a
    +---+---+---+---+---+---+---+  cross on its target
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tablegym.envs.render import GREY, MARK_COLOUR, SIM_COLOURS, _disc, _stamp, text_mask

TRAP_PLAYER_COLOURS = SIM_COLOURS
"""Player 0 red, player 1 blue: both stand out on the light squares and the dark traps."""
SQUARE_COLOUR = np.array([236, 236, 228], dtype=np.uint8)
LINE_COLOUR = np.array([150, 150, 150], dtype=np.uint8)
TRAP_COLOUR = np.array([45, 45, 45], dtype=np.uint8)
TARGET_COLOUR = np.array([255, 140, 0], dtype=np.uint8)


def _ring(size: int, inner: float, outer: float) -> np.ndarray:
    """A size x size mask of the centred annulus between two radii."""
    return _disc(size, outer) & ~_disc(size, inner)


def _cross(size: int, width: int) -> np.ndarray:
    """A size x size mask of the two diagonals, ``width`` pixels thick."""
    yy, xx = np.mgrid[0:size, 0:size]
    return (np.abs(yy - xx) < width) | (np.abs(yy + xx - (size - 1)) < width)


def draw_trap(
    traps: np.ndarray,
    positions: Sequence[tuple[int, int]],
    *,
    status: int | None,
    throwing: bool = False,
    target: int | None = None,
    cell: int = 32,
) -> np.ndarray:
    """A Trap board as an ``(cell // 2 + N * cell) x (N * cell) x 3`` uint8 image.

    ``traps`` is the N x N bool array of trapped cells (``TrapState.traps``), ``positions``
    the (row, col) of player 0 and player 1. ``status`` colours the strip above the board:
    the player to decide (or the winner), or None for grey (a draw). ``throwing`` marks the
    throw phase (a ring around the player of ``status`` and a '+' in the strip); ``target``
    is the row-major cell of a trap in the air, drawn as a cross.

    >>> draw_trap(np.zeros((3, 3), bool), [(0, 1), (2, 1)], status=0).shape
    (112, 96, 3)
    """
    traps = np.asarray(traps, dtype=bool)
    n = traps.shape[0]
    if traps.shape != (n, n) or len(positions) != 2:
        raise ValueError(f"draw_trap needs an N x N trap array and two positions, got {traps.shape} and {positions!r}")
    strip = cell // 2
    tile = np.empty((cell, cell, 3), dtype=np.uint8)
    tile[:] = SQUARE_COLOUR
    tile[0, :] = tile[-1, :] = tile[:, 0] = tile[:, -1] = LINE_COLOUR
    trap_tile = tile.copy()
    margin = max(cell // 10, 1)
    trap_tile[margin:-margin, margin:-margin] = TRAP_COLOUR
    # tiles[r, c] is the cell_x_cell picture of square (r, c)
    tiles = np.where(traps[:, :, None, None, None], trap_tile, tile)
    disc = _disc(cell, cell * 0.36)
    for player, (r, c) in enumerate(positions):
        tiles[r, c][disc] = TRAP_PLAYER_COLOURS[player]
    if throwing and status is not None:
        r, c = positions[status]
        tiles[r, c][_ring(cell, cell * 0.40, cell * 0.48)] = MARK_COLOUR
    if target is not None:
        r, c = divmod(int(target), n)
        tiles[r, c][_cross(cell, max(cell // 12, 1)) & ~_disc(cell, cell * 0.12)] = TARGET_COLOUR
    board = tiles.transpose(0, 2, 1, 3, 4).reshape(n * cell, n * cell, 3)
    img = np.empty((strip + n * cell, n * cell, 3), dtype=np.uint8)
    img[:strip] = GREY if status is None else TRAP_PLAYER_COLOURS[status]
    img[strip:] = board
    if throwing:
        plus = text_mask("+", max(strip // 5, 1))
        _stamp(img, plus, strip // 2, n * cell - strip, MARK_COLOUR)
    return img
