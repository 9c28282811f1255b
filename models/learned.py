"""LearnedEvaluator: a trained ValueMLP as a leaf evaluator, in Python and in the compiled search.

The network's weights are exported to one float64 vector and evaluated by ``mlp_value``, a
numba kernel over the game's compact state, so the alpha-beta kernel calls it like any
hand-made heuristic. Each game needs a short module-level wrapper binding its own feature
kernel (numba caches module-level functions, not closures): its ``VALUE_KERNEL``, which the
game's registry record names (``learned``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numba import njit

from tablegym.envs.core import DRAW, ONGOING, Game
from tablegym.models.checkpoint import CheckpointError, load_checkpoint
from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.search.evaluator import Evaluator

CHECKPOINT_DIR = Path(__file__).parent / "checkpoints"


@njit(cache=True, fastmath=True)
def mlp_head(hid, params):
    """The layers after the first: ``hid`` holds the first layer's pre-activations."""
    h1 = int(params[1])
    h2 = int(params[2])
    off = 3 + int(params[0]) * h1 + h1
    for j in range(h1):
        if hid[j] < 0.0:
            hid[j] = 0.0
    if h2 > 0:
        b2 = off + h1 * h2
        hid2 = params[b2:b2 + h2].copy()
        for i in range(h1):
            x = hid[i]
            if x != 0.0:
                row = off + i * h2
                for j in range(h2):
                    hid2[j] += x * params[row + j]
        for j in range(h2):
            if hid2[j] < 0.0:
                hid2[j] = 0.0
        hid = hid2
        h1 = h2
        off = b2 + h2
    out = params[off + h1]
    for j in range(h1):
        out += hid[j] * params[off + j]
    return np.tanh(out)


@njit(cache=True, fastmath=True)
def mlp_forward_mixed(dense, active, n, params):
    """The ValueMLP export applied to real inputs ``dense`` (features 0..len-1) plus the binary
    features ``active[:n]`` (value for the mover)."""
    h1 = int(params[1])
    b1 = 3 + int(params[0]) * h1
    hid = params[b1:b1 + h1].copy()
    for k in range(dense.shape[0]):
        v = dense[k]
        if v != 0.0:
            row = 3 + k * h1
            for j in range(h1):
                hid[j] += v * params[row + j]
    for k in range(n):
        row = 3 + active[k] * h1
        for j in range(h1):
            hid[j] += params[row + j]
    return mlp_head(hid, params)


_NO_DENSE = np.zeros(0)


@njit(cache=True)
def mlp_forward(active, n, params):
    """The ValueMLP export applied to binary features ``active[:n]`` (value for the mover)."""
    return mlp_forward_mixed(_NO_DENSE, active, n, params)


@njit(cache=True)
def mlp_value(outcome, mover, player, active, n, params):
    """Exact +-1/0 at a finished game (``outcome``), else the network's value, seen by ``player``.

    Takes the game's kernel results rather than its kernels: numba caches functions of plain
    values, not functions specialised on other functions.
    """
    if outcome != ONGOING:
        if outcome == DRAW:
            return 0.0
        return 1.0 if outcome == player else -1.0
    v = mlp_forward(active, n, params)
    return v if mover == player else -v


def _kernel_for(game_name: str) -> tuple:
    """The game's learned-value kernel and its scale (search units per unit of network value),
    named by the ``learned`` field of its registry record."""
    from tablegym.envs import load, plugin

    kernel = plugin(game_name).learned
    if kernel is None:
        raise ValueError(f"no learned-evaluator kernel for game {game_name!r}")
    return load(kernel)


class LearnedEvaluator(Evaluator):
    """A ValueMLP as an evaluator: +-``win_value`` at finished games, its tanh value times
    ``win_value`` elsewhere (1 except for games whose search wants a larger scale); ``bound``
    tells the expectiminimax the same."""

    def __init__(self, model: ValueMLP, game_name: str, name: str = "learned") -> None:
        self.model = model.eval()
        self.name = name
        self.kernel, self.win_value = _kernel_for(game_name)
        self.bound = self.win_value
        self.params = model.export()


def default_checkpoint(game_name: str) -> Path:
    """The checkpoint shipped with the package for ``game_name`` (``--eval learned``)."""
    return CHECKPOINT_DIR / f"{game_name}.pt"


def load_model(path: str | os.PathLike, game: Game) -> tuple[ValueMLP, dict]:
    """Rebuild the network saved at ``path``, checking it was trained for ``game``'s rules."""
    payload = load_checkpoint(path, game=game.spec.name, options=game.spec.options)
    meta = payload["metadata"]
    try:
        config = NetConfig.from_dict(meta["net"])
        model = ValueMLP(config)
        model.load_state_dict(payload["model"])
    except (KeyError, RuntimeError, TypeError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} does not match its network description: {exc}") from None
    return model, meta


def mlp_evaluator(game: Game, path: Path) -> LearnedEvaluator:
    """A ValueMLP checkpoint as the evaluator of the game's compiled searches (the game's
    record names its kernel, ``learned``)."""
    model, _ = load_model(path, game)
    return LearnedEvaluator(model, game.spec.name, name=f"learned:{path}")


def load_evaluator(game: Game, path: str | os.PathLike | None = None, *, default: str | os.PathLike | None = None):
    """The one front door to learned evaluators: the network at ``path`` (or the checkpoint
    shipped for ``game``: ``default`` when given, else ``models/checkpoints/<game>.pt``) as the
    evaluator ``game``'s searches take.

    The game's record says how its networks are rebuilt (``loader``: a function
    ``(game, path) -> evaluator``; ValueMLP by default); each loader reads the checkpoint's
    metadata and refuses, with a ``CheckpointError`` naming the file and the problem, one that
    is missing, corrupt, made for another game or rules, or holds another kind of network.
    """
    from tablegym.envs import load, plugin

    if path in (None, ""):
        path = default if default is not None else default_checkpoint(game.spec.name)
    path = Path(path)
    loader = plugin(game.spec.name).loader
    return (load(loader) if loader else mlp_evaluator)(game, path)
