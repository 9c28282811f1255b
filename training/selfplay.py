"""Compiled self-play: games of a searcher against itself, recorded for TD-leaf learning.

Each move runs the compiled alpha-beta root search (search/alphabeta_search.py) with the current
network as leaf evaluator; the root value is the TD-leaf target of the position, and with
probability epsilon a uniformly random move is played instead (exploration). Everything runs
inside one numba call per batch of games, so generation costs little next to the search.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch
from numba import njit, types

from tablegym.envs.core import DRAW, FEATURES_T, ONGOING, STATE_T, KernelState
from tablegym.envs.evaluator import Evaluator
from tablegym.models.value_net import ValueMLP
from tablegym.search.alphabeta_search import KERNELS_T, MAX_PLY, TABLES_T, AlphaBetaTables, search_root
from tablegym.training.args import SelfPlayArgs, require_at_least, require_share
from tablegym.training.runs import ReplayBuffer, module_device

_I = types.int64
_F1 = types.float64[::1]
_SIG = types.UniTuple(_I, 2)(
    STATE_T,
    _I,
    _I,
    types.float64,
    _I,
    KERNELS_T,
    FEATURES_T,
    TABLES_T,
    types.uint8[:, ::1],
    _F1,
    types.int64[::1],
    types.boolean[::1],
    _F1,
)


@njit(_SIG, cache=True)
def _play(s0, n_games, depth, epsilon, seed, kernels, features, tables, feats, value, game, explored, result):
    np.random.seed(seed)
    moves, push, _, to_move, outcome, _ = kernels[0]
    bufs = tables[3]
    active = np.empty(feats.shape[1], dtype=np.int64)
    root_values = np.empty(bufs.shape[1], dtype=np.float64)
    counters = np.zeros(3, dtype=np.int64)
    n = 0
    for g in range(n_games):
        s = s0.copy()
        start = n
        while outcome(s) == ONGOING:
            if n >= feats.shape[0]:
                return n, g
            k = features(s, active)
            for i in range(k):
                feats[n, active[i]] = 1
            counters[:] = 0
            best, val, nm = search_root(s, depth, kernels, tables, counters, 1 << 62, root_values)
            m = best
            explored[n] = False
            if np.random.random() < epsilon:
                nm = moves(s, bufs[0])
                m = bufs[0][np.random.randint(nm)]
                explored[n] = m != best
            value[n] = val
            game[n] = g
            result[n] = to_move(s)  # the mover, turned into the result below
            push(s, m)
            n += 1
        out = outcome(s)
        for i in range(start, n):
            result[i] = 0.0 if out == DRAW else (1.0 if out == result[i] else -1.0)
    return n, n_games


@dataclass
class TDArgs(SelfPlayArgs):
    """The arguments of TD-leaf self-play training. Each trainer's ``Args`` subclasses it,
    redeclaring the fields whose default (or meaning) differs for its game and adding its own;
    ``parse_dataclass_args`` turns the fields into flags, their docstrings into help lines."""

    total_games: int = 1_000_000
    """stop after this many self-play games"""
    depth: int = 2
    """search depth of the self-play searcher (the TD-leaf target's search)"""
    epsilon: float = 0.1
    """probability of a uniformly random move (exploration)"""
    lam: float = 0.7
    """TD(lambda) trace: 0 bootstraps on the search value only, 1 is Monte Carlo"""
    updates_per_iter: int = 40
    """gradient steps after each batch of games"""
    eval_depth: int = 5
    """search depth of both sides in evaluation matches"""
    eval_baseline: str = ""
    """the hand-made evaluator to measure against"""
    save_every: int = 10
    """iterations between checkpoints"""

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least(self, 1, ("total_games", "depth", "updates_per_iter", "eval_depth"))
        require_at_least(self, 0, ("save_every",))
        require_share(self, ("epsilon", "lam"))


@dataclass
class SelfPlayBatch:
    """Positions of a batch of games, in play order, each seen by its player to move."""

    features: np.ndarray  # uint8 [N, F] binary inputs
    search_value: np.ndarray  # root value of the search at the position (TD-leaf target)
    game: np.ndarray  # game index of each position
    explored: np.ndarray  # a random move (not the search's) was played from here
    result: np.ndarray  # final result for the player to move at the position
    mover: np.ndarray | None = None  # player to move; None: players alternate every position

    def __len__(self) -> int:
        return len(self.search_value)


def play_selfplay(
    start: KernelState, evaluator: Evaluator, *, games: int, depth: int, epsilon: float, seed: int, tt_bits: int = 16
) -> SelfPlayBatch:
    """Play ``games`` self-play games from ``start`` and record every position."""
    k = start.kernels
    spec = start.game.spec
    tables = AlphaBetaTables(spec.num_actions, tt_bits=tt_bits)
    cap = games * spec.max_game_length
    feats = np.zeros((cap, start.num_features), dtype=np.uint8)
    value = np.zeros(cap)
    game = np.zeros(cap, dtype=np.int64)
    explored = np.zeros(cap, dtype=np.bool_)
    result = np.zeros(cap)
    depth = min(depth, MAX_PLY - 2)
    kernels = (k.rules(), evaluator.kernel, evaluator.params)
    n, _ = _play(
        start.array, games, depth, epsilon, seed, kernels, k.features, tables.arrays, feats, value, game, explored, result
    )
    return SelfPlayBatch(feats[:n], value[:n], game[:n], explored[:n], result[:n])


def merge(batches: list[SelfPlayBatch]) -> SelfPlayBatch:
    """One batch from several (chunks played side by side), game indices kept distinct."""
    columns = {
        f.name: None if getattr(batches[0], f.name) is None else np.concatenate([getattr(b, f.name) for b in batches])
        for f in dataclasses.fields(SelfPlayBatch)
    }
    offsets = np.cumsum([0] + [int(b.game.max()) + 1 if len(b) else 0 for b in batches[:-1]])
    columns["game"] = np.concatenate([b.game + o for b, o in zip(batches, offsets)])
    return SelfPlayBatch(**columns)


def chunks(games: int, workers: int) -> list[int]:
    """``games`` split into at most ``workers`` near-equal chunks (none empty)."""
    return [int(k) for k in np.diff(np.linspace(0, games, max(workers, 1) + 1).astype(int)) if k]


def td_leaf_targets(batch: SelfPlayBatch, lam: float) -> np.ndarray:
    """TD-leaf(lambda) targets, each for the player to move at its position.

    target_t = (1 - lam) * search_value_t + lam * (-target_{t+1}), with the final result closing
    each game; the trace is cut after an exploratory move, whose continuation says nothing about
    the position's value under the searcher's own play. With ``batch.mover`` given (games whose
    players do not alternate, like Trap's move then throw), the next target is negated only when
    the next position has the other player to move.
    """
    v, res, g, ex = batch.search_value, batch.result, batch.game, batch.explored
    out = np.empty_like(v)
    for t in range(len(v) - 1, -1, -1):
        last = t == len(v) - 1 or g[t + 1] != g[t]
        if ex[t]:
            out[t] = v[t]
        else:
            sign = -1.0 if batch.mover is None or batch.mover[t + 1 - last] != batch.mover[t] else 1.0
            nxt = res[t] if last else sign * out[t + 1]
            out[t] = (1.0 - lam) * v[t] + lam * nxt
    return out


def td_update(
    model: ValueMLP,
    optimizer: torch.optim.Optimizer,
    buffer: ReplayBuffer,
    batch: SelfPlayBatch,
    args,
    rng: np.random.Generator,
    symmetries: list[np.ndarray],
) -> tuple[float, float]:
    """Add the batch's TD-leaf(lambda) targets to the buffer and fit the network on the buffer,
    each minibatch under a random symmetry of the board: (TD error before the update, mean MSE)."""
    targets = td_leaf_targets(batch, args.lam)
    device = module_device(model)
    with torch.no_grad():
        before = model(torch.from_numpy(batch.features).to(device).float()).cpu().numpy()
    td_error = float(np.mean(np.abs(targets - before)))
    buffer.add(batch.features, targets.astype(np.float32))
    model.train()
    losses = []
    for _ in range(args.updates_per_iter):
        x, y = buffer.sample(rng, args.batch_size)
        perm = symmetries[rng.integers(len(symmetries))]
        loss = torch.nn.functional.mse_loss(
            model(torch.from_numpy(x[:, perm]).to(device).float()), torch.from_numpy(y).to(device)
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return td_error, float(np.mean(losses))
