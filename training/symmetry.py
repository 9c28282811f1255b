"""Symmetries of a game's input features: permutations that leave the game unchanged.

Training applies a random one to each batch, so the network sees mirrored positions for free.
"""

from __future__ import annotations

import numpy as np

from tablegym.envs.core import Game


def feature_symmetries(game: Game) -> list[np.ndarray]:
    """Feature permutations ``perm`` with value(x[perm]) == value(x); the identity first."""
    start = game.new_initial_state()
    identity = np.arange(start.num_features)
    if game.spec.name == "trilobite":
        # Mirror the columns: feature 2 * cell + k -> 2 * mirrored cell + k.
        w, h = game.width, game.height
        cells = np.arange(w * h)
        mirrored = (cells // w) * w + (w - 1 - cells % w)
        perm = np.empty_like(identity)
        perm[0::2] = 2 * mirrored
        perm[1::2] = 2 * mirrored + 1
        return [identity, perm]
    return [identity]
