"""LearnedEvaluator: a trained ValueMLP as a leaf evaluator, in Python and in the compiled search.

The network's weights are packed into one float64 vector (tablegym.models.netkernel) and
evaluated by ``mlp_value``, a numba kernel over the game's compact state, so the alpha-beta
kernel calls it like any hand-made heuristic. Its first layer is kept incrementally between
the leaves of a search (exactly: see netkernel). Each game needs a short module-level wrapper binding its own feature
kernel (numba caches module-level functions, not closures): its ``VALUE_KERNEL``, which the
game's registry record names (``learned``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numba import njit

from tablegym.envs.core import DRAW, KEY, ONGOING, Game
from tablegym.envs.evaluator import Evaluator
from tablegym.models.checkpoint import CheckpointError, declared_widths, load_checkpoint, rebuild
from tablegym.models.netkernel import cached_value, forward_binary, forward_mixed, index_buffer, remember_value
from tablegym.models.value_net import NetConfig, ValueMLP

CHECKPOINT_DIR = Path(__file__).parent / "checkpoints"


@njit(cache=True)
def mlp_forward_mixed(dense, active, n, params):
    """A network vector (``ValueMLP.export``) applied to real inputs ``dense`` (features
    0..len-1) plus the binary features ``active[:n]`` (value for the mover)."""
    return forward_mixed(dense, active, n, params, active, 0)


@njit(cache=True)
def mlp_value(outcome, mover, player, active, n, params):
    """Exact +-1/0 at a finished game (``outcome``), else the network's value on the binary
    features ``active[:n]`` (first layer kept per mover between calls), seen by ``player``.

    Takes the game's kernel results rather than its kernels (a glue that takes kernels, as
    ``feature_value`` does, must be inlined into a module-level kernel to be cached).
    """
    return keyed_mlp_value(outcome, mover, player, 0, active, n, params)


@njit(cache=True)
def keyed_mlp_value(outcome, mover, player, key, active, n, params):
    """``mlp_value`` that remembers the value of position ``key`` in the network's value cache
    (netkernel; key 0: not remembered). It does not look there first: a game's kernel asks
    ``remembered_value`` before it lists the features this needs."""
    if outcome != ONGOING:
        if outcome == DRAW:
            return 0.0
        return 1.0 if outcome == player else -1.0
    v = remember_value(params, key, forward_binary(active, n, mover, params))
    return v if mover == player else -v


@njit(cache=True, inline="always")
def feature_value(s, player, params, outcome, to_move, features):
    """The glue between a game's kernels and its ValueMLP over binary features (``learned`` of its
    record): the value of position ``s[KEY]`` from the network's value cache when it is there,
    else the network on the features of the player to move, seen by ``player``; +-1/0 once over.
    A game's value kernel calls this with its own kernels (one compiled, cached copy a game)."""
    v = remembered_value(outcome(s), to_move(s), player, s[KEY], params)
    if v == v:
        return v
    active = feature_buffer(params)
    n = features(s, active) if outcome(s) == ONGOING else 0
    return keyed_mlp_value(outcome(s), to_move(s), player, s[KEY], active, n, params)


@njit(cache=True)
def remembered_value(outcome, mover, player, key, params):
    """The value of an unfinished position ``key`` from the network's value cache, seen by
    ``player``; NaN when it is not there (or the game is over). A game's kernel asks this before
    it lists the position's features: a hit needs neither them nor the network."""
    if outcome != ONGOING:
        return np.nan
    v = cached_value(params, key)
    return v if mover == player else -v


@njit(cache=True)
def feature_buffer(params):
    """Where a game's learned kernel lets its feature kernel write: the network's own scratch
    (no allocation at every leaf)."""
    return index_buffer(params)


def value_kernel(game_name: str) -> tuple:
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

    def __init__(self, model: ValueMLP, game_name: str, name: str = "learned", *, options: dict | None = None) -> None:
        self.model = model.eval()
        self.name = name
        self.game = game_name
        self.options = options
        self.inputs = "features"
        self.kernel, self.win_value = value_kernel(game_name)
        self.bound = self.win_value
        self.params = model.export()


def default_checkpoint(game_name: str) -> Path:
    """The checkpoint shipped with the package for ``game_name`` (``--eval learned``)."""
    return CHECKPOINT_DIR / f"{game_name}.pt"


def load_model(path: str | os.PathLike, game: Game) -> tuple[ValueMLP, dict]:
    """Rebuild the network saved at ``path``, checking it was trained for ``game``'s rules."""
    payload = load_checkpoint(path, game=game.spec.name, options=game.spec.options)
    meta, state = payload["metadata"], payload["model"]
    what = f"checkpoint {str(path)!r}"
    try:
        net = meta["net"]
        config = NetConfig(int(net["num_features"]), declared_widths(net["hidden"], what, most=len(state)))
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{what} does not match its network description: {exc}") from None
    return rebuild(lambda: ValueMLP(config), state, what), meta


def mlp_evaluator(game: Game, path: Path) -> LearnedEvaluator:
    """A ValueMLP checkpoint as the evaluator of the game's compiled searches (the game's
    record names its kernel, ``learned``)."""
    model, _ = load_model(path, game)
    return LearnedEvaluator(model, game.spec.name, name=f"learned:{path}", options=dict(game.spec.options))


def load_evaluator(
    game: Game, path: str | os.PathLike | None = None, *, default: str | os.PathLike | None = None, trust_code: bool | None = None
):
    """The one front door to learned evaluators: the network at ``path`` (or the checkpoint
    shipped for ``game``: ``default`` when given, else ``models/checkpoints/<game>.pt``) as the
    evaluator ``game``'s searches take.

    The game's record says how its networks are rebuilt (``loader``: a function
    ``(game, path) -> evaluator``; ValueMLP by default); each loader reads the checkpoint's
    metadata and refuses, with a ``CheckpointError`` naming the file and the problem, one that
    is missing, corrupt, made for another game or rules, or holds another kind of network.
    A network saved by tablegym.models.export.save loads as that (any game with a compiled
    observation kernel), and so does the network in the ``checkpoint.pt`` of a run of ``tablegym
    train GAME --algo ppo|imitate|dqn|negamax-dqn`` (tablegym.models.policy.run_evaluator). A ``.zip`` is a Stable-Baselines3 model, read as data
    (tablegym.models.export.load_sb3_evaluator; ``trust_code=True``: SB3's own loader). No path
    here runs code a file carries unless ``trust_code`` says so.
    """
    from tablegym.envs import load, plugin
    from tablegym.models.checkpoint import peek_metadata
    from tablegym.models.export import is_exported, load_exported
    from tablegym.models.policy import run_evaluator

    if path in (None, ""):
        path = default if default is not None else default_checkpoint(game.spec.name)
    path = Path(path)
    if path.suffix == ".zip":  # a Stable-Baselines3 model: its critic or Q-network, exported
        from tablegym.models.export import load_sb3_evaluator

        return load_sb3_evaluator(game, path, trust_code=trust_code)
    meta = peek_metadata(path) if path.is_file() else None
    if meta is not None and is_exported(meta):
        return load_exported(game, path)
    if meta is not None and (from_run := run_evaluator(game, path, meta)) is not None:
        return from_run  # a vector trainer's run checkpoint: its critic, max Q or V
    loader = plugin(game.spec.name).loader
    return (load(loader) if loader else mlp_evaluator)(game, path)
