"""Afterstate TD learning of the Threes n-tuple network (models/threes/ntuple_net.py), read top to bottom.

The agent plays greedily on afterstates: from each position it takes the swipe maximising
(score of the shifted board) + V(shifted board, card about to enter). With afterstates
``a_t`` and ``a_{t+1}`` chosen this way, TD(0) moves V(a_t) towards

    score(a_{t+1}) - score(a_t) + V(a_{t+1}),   or   final score - score(a_t) at the game's end,

so V(a) learns the score still to come and ``score + V`` the expected final score. No
exploration is needed: the chance events (the new card's line, the next card) vary the games
enough. With ``lam > 0`` the update is TD(lambda) done as in the 2048 literature: the game's
afterstates are kept and, once it ends, each is moved towards its lambda-return computed
backwards over the episode (forward view), which spreads the final outcome faster.

Games, rules and updates all run in one numba function over the compact Threes state (the
rules core's own chance kernel draws every card), so training runs at tens of games per
second on one core. Every ``log_every`` games the driver logs to TensorBoard (mean score,
mean |TD error|, % of games reaching 768/1536/3072, games/s) and every ``save_minutes`` saves a
checkpoint atomically; a rerun with the same ``--run-dir`` resumes from it and trains
``--minutes`` (or ``--games``) more. The run directory, resume, logs, budget and ``--out`` are
training.Run's; what is Threes' to save is ``NTupleLearner``'s.

    tablegym train threes --minutes 60 --run-dir runs/threes --out models/checkpoints/threes.pt
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from numba import njit

from tablegym.envs.core import ONGOING, OUTCOME
from tablegym.envs.limits import load_npy
from tablegym.envs.rates import per_second
from tablegym.envs.threes.board import board_score, highest_rank, swipe
from tablegym.envs.threes.core import BOARD, HINT, NUM_OUTCOMES, PHASE, PLAY, ThreesGame, k_chance, k_push
from tablegym.envs.threes.ntuple import (
    DEFAULT_TUPLES,
    NTupleConfig,
    layout,
    ntuple_update,
    ntuple_update_tc,
    ntuple_value,
    parse_tuple,
)
from tablegym.models.checkpoint import CheckpointError
from tablegym.models.threes.ntuple_net import NTupleNet, load_ntuple_with_metadata, restage, save_ntuple
from tablegym.training.args import TrainerArgs
from tablegym.training.files import open_atomic
from tablegym.training.runs import Learner, Run, trainer_cli

MILESTONE_RANKS = {"768": 11, "1536": 12, "3072": 13}
MAX_MOVES = 200_000  # far beyond any game (a 12288 card takes ~6,000 moves): a guard against a rules bug


def _tuple_arg(text: str) -> tuple[int, ...]:
    """One n-tuple from the command line: cells 0..15 (or h) joined by commas."""
    try:
        return parse_tuple(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


@dataclass
class Args(TrainerArgs):
    CPU_ONLY = "the n-tuple network learns in compiled CPU code over its tables, one update a move"

    game: str = "threes"
    """only threes (the positional game name of ``tablegym train``)"""
    game_options: dict = field(default_factory=dict)
    """rule options: only the defaults (the network reads the '+' hint)"""
    run_dir: str = "runs/threes-ntuple"
    """TensorBoard logs, args.json, checkpoint.pt (and coherence.npy) live here (a rerun resumes)"""
    minutes: float = 10.0
    """wall-clock budget, all training of the run folder (0: until --games)"""
    games: int = 0
    """games to play, all runs of the run folder (0: until --minutes)"""
    alpha: float = 0.1
    """TD step shared over the active entries"""
    lam: float = 0.0
    """TD(lambda): 0 = TD(0), online"""
    seed: int = 0
    """seeds the games (each chunk's seed comes from it and the games before the chunk)"""
    stage_ranks: tuple[int, ...] = field(default=(11,), metadata={"nargs": "*"})
    """highest-card ranks starting a new stage (11 = 768); none for one stage"""
    log_every: int = 1000
    """games per TensorBoard point (and per chunk a worker plays)"""
    workers: int = 1
    """processes learning into one shared table (lock-free, Hogwild); 1 is deterministic"""
    backend: str = "process"
    """process: workers share the table (Hogwild); ray: each chunk learns on a copy of the current table
    sent through Ray's object store, and its changes are added here"""
    address: str | None = None
    """with backend ray: the cluster to join (auto, HOST:PORT)"""
    save_minutes: float = 5.0
    """minutes between checkpoints"""
    out: str | None = None
    """also write the final network here (float16, small entries pruned; e.g. the shipped checkpoint)"""
    out_prune: float = 20.0
    """leave entries below this magnitude out of --out (halves the file, README; 0 keeps all)"""
    out_compact: bool = False
    """write --out quantised to int16 and lzma-packed (a quarter of the float16 file; the shipped form)"""
    tuples: tuple[tuple[int, ...], ...] = field(default=DEFAULT_TUPLES, metadata={"type": _tuple_arg, "metavar": "CELLS"})
    """the n-tuples, cells 0..15 row-major from the top-left joined by commas, h = the card about to enter"""
    init_from: str | None = None
    """a new run starts from this network (same tuples; its stages are copied onto --stage-ranks)"""
    tc: bool = False
    """temporal coherence learning: each entry's step shrinks as its errors stop agreeing (give --alpha about 1)"""
    restart: float = 0.0
    """share of games started from a late position of an earlier game (restart shaping; 0: every game fresh)"""
    restart_rank: int = 12
    """with --restart: positions whose highest card has this rank (12 = 1536) or more are replayed"""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.minutes < 0 or self.games < 0 or (self.minutes == 0 and self.games == 0):
            raise ValueError("give a positive --minutes or --games budget")
        if not 0.0 <= self.lam <= 1.0 or self.alpha <= 0 or self.workers < 1:
            raise ValueError("--lam must lie in [0, 1], --alpha be positive and --workers at least 1")
        if not 0.0 <= self.restart < 1.0 or not 1 <= self.restart_rank <= 15:
            raise ValueError("--restart must lie in [0, 1) and --restart-rank in 1..15")
        NTupleConfig(tuples=tuple(map(tuple, self.tuples)), stage_ranks=tuple(self.stage_ranks))  # refuses bad cells


_NO_COHERENCE = np.zeros((2, 0), dtype=np.float32)  # play_and_learn's "constant step" (no TC accumulators)


# ---- the compiled game loop --------------------------------------------------------------------


@njit(cache=True)
def _resolve_chance(s, ids, probs):
    """Draw every chance node with numba's generator until the player is to move or it is over."""
    while s[OUTCOME] == ONGOING and s[PHASE] != PLAY:
        n = k_chance(s, ids, probs)
        u = np.random.random()
        i = 0
        acc = probs[0]
        while acc < u and i < n - 1:
            i += 1
            acc += probs[i]
        k_push(s, ids[i])


@njit(cache=True)
def _learn(board, hint, weights, coherence, cells, offsets, stage_ranks, step, delta):
    """One TD update: a constant step, or temporal coherence when ``coherence`` has columns."""
    if coherence.shape[1] == 0:
        ntuple_update(board, hint, weights, cells, offsets, stage_ranks, step * delta)
    else:
        ntuple_update_tc(board, hint, weights, coherence, cells, offsets, stage_ranks, step, delta)


@njit(cache=True)
def play_and_learn(
    n_games,
    seed,
    alpha,
    lam,
    template,
    weights,
    cells,
    offsets,
    stage_ranks,
    stats,
    coherence,
    restart=0.0,
    restart_rank=16,
    pool_size=1000,
):
    """Play ``n_games`` greedy games from ``template`` (a fresh game), learning when alpha > 0.

    ``stats[g]`` gets (final score, highest rank, swipes, sum of |TD error|, TD updates) and,
    where it has a sixth column, 1 for a game started mid-game (0 for a fresh one).
    ``coherence``: (2, entries) accumulators for temporal coherence learning, or (2, 0) for
    TD with the constant step.

    Restart shaping (``restart`` > 0): each game offers one of its positions whose highest card
    has reached ``restart_rank`` (drawn uniformly, reservoir sampling) to a pool of
    ``pool_size``; a game then starts from a pooled position with probability ``restart``.
    Why: a greedy player reaches 3072 in a few games in a thousand, so the end game's entries
    learn from almost nothing; restarts replay the late positions the player does reach
    (Jaskowski's carousel shaping, Yeh et al.'s restarts for Threes). With ``restart`` 0 no
    extra random number is drawn: the games are those of plain TD.
    """
    np.random.seed(seed)
    ids = np.empty(NUM_OUTCOMES, dtype=np.int64)
    probs = np.empty(NUM_OUTCOMES, dtype=np.float64)
    step = alpha / (cells.shape[0] * cells.shape[1])
    boards = np.empty(MAX_MOVES, dtype=np.int64)  # the game's afterstates, for TD(lambda)
    hints = np.empty(MAX_MOVES, dtype=np.int64)
    totals = np.empty(MAX_MOVES + 1, dtype=np.float64)  # score + V of each chosen afterstate
    pool = np.empty((pool_size if restart > 0.0 else 0, template.shape[0]), dtype=template.dtype)
    pooled = 0
    offer = template.copy()  # this game's offer to the pool
    for g in range(n_games):
        restarted = pooled > 0 and np.random.random() < restart
        if restarted:
            s = pool[np.random.randint(pooled)].copy()
        else:
            s = template.copy()
            _resolve_chance(s, ids, probs)
        t = 0
        err = 0.0
        late = 0  # positions seen at restart_rank or above (the reservoir's count)
        while s[OUTCOME] == ONGOING and t < MAX_MOVES:
            board = s[BOARD]
            hint = s[HINT]
            if restart > 0.0 and highest_rank(board) >= restart_rank:
                late += 1
                if np.random.randint(late) == 0:
                    offer[:] = s
            best = -np.inf
            best_d = -1
            best_after = board
            for d in range(4):
                after, moved = swipe(board, d)
                if moved == 0:
                    continue
                v = board_score(after) + ntuple_value(after, hint, weights, cells, offsets, stage_ranks)
                if v > best:
                    best, best_d, best_after = v, d, after
            boards[t] = best_after
            hints[t] = hint
            totals[t] = best
            if t > 0 and alpha > 0.0 and lam == 0.0:  # TD(0), online
                prev_score = board_score(boards[t - 1])
                delta = best - prev_score - ntuple_value(boards[t - 1], hints[t - 1], weights, cells, offsets, stage_ranks)
                err += abs(delta)
                _learn(boards[t - 1], hints[t - 1], weights, coherence, cells, offsets, stage_ranks, step, delta)
            k_push(s, best_d)
            _resolve_chance(s, ids, probs)
            t += 1
        final = board_score(s[BOARD])
        totals[t] = final  # the end: nothing more to come
        if t > 0 and alpha > 0.0:
            if lam == 0.0:
                delta = (
                    final
                    - board_score(boards[t - 1])
                    - ntuple_value(boards[t - 1], hints[t - 1], weights, cells, offsets, stage_ranks)
                )
                err += abs(delta)
                _learn(boards[t - 1], hints[t - 1], weights, coherence, cells, offsets, stage_ranks, step, delta)
            else:  # forward-view TD(lambda) over the finished game, last afterstate first
                ret = final
                for i in range(t - 1, -1, -1):
                    # lambda-return of the total (score + value) after afterstate i
                    ret = (1.0 - lam) * totals[i + 1] + lam * ret if i < t - 1 else final
                    own = board_score(boards[i])
                    delta = ret - own - ntuple_value(boards[i], hints[i], weights, cells, offsets, stage_ranks)
                    err += abs(delta)
                    _learn(boards[i], hints[i], weights, coherence, cells, offsets, stage_ranks, step, delta)
        stats[g, 0] = final
        stats[g, 1] = highest_rank(s[BOARD])
        stats[g, 2] = t
        stats[g, 3] = err
        stats[g, 4] = t
        if stats.shape[1] > 5:
            stats[g, 5] = 1.0 if restarted else 0.0
        if late > 0:
            if pooled < pool.shape[0]:
                pool[pooled] = offer
                pooled += 1
            else:
                pool[np.random.randint(pooled)] = offer


# ---- the driver --------------------------------------------------------------------------------


def _summary(stats: np.ndarray) -> dict[str, float]:
    """What a chunk logs: the scores, moves and milestones of its fresh games only (a restarted
    game's score is not a player's), the TD error over all, and the share restarted."""
    fresh = stats[stats[:, 5] == 0]
    out = {
        "td_error/mean_abs": float(stats[:, 3].sum() / max(1.0, stats[:, 4].sum())),
        "restart/share": float(stats[:, 5].mean()),
    }
    if len(fresh):
        out.update(
            {
                "score/mean": float(fresh[:, 0].mean()),
                "score/median": float(np.median(fresh[:, 0])),
                "moves/mean": float(fresh[:, 2].mean()),
            }
        )
        for name, rank in MILESTONE_RANKS.items():
            out[f"reached/{name}"] = float(100.0 * np.mean(fresh[:, 1] >= rank))
    return out


def _chunk_seed(seed: int, games_before: int) -> int:
    """One seed per chunk, from the run seed and the games played before it: a resumed run
    does not replay the games it has learned from."""
    return int(np.random.SeedSequence([seed, games_before]).generate_state(1)[0] % (2**31))


@dataclass(frozen=True)
class TDRule:
    """What every chunk of a run plays by: the TD step and lambda, and restart shaping."""

    alpha: float
    lam: float
    restart: float
    restart_rank: int

    @classmethod
    def of(cls, args: Args) -> TDRule:
        return cls(args.alpha, args.lam, args.restart, args.restart_rank)


def _run_chunk(
    n: int, seed: int, rule: TDRule, weights: np.ndarray, config: NTupleConfig, coherence: np.ndarray
) -> tuple[np.ndarray, float]:
    """``n`` games learning into ``weights`` (and ``coherence``): their stats and the seconds they took."""
    cells, offsets, _ = layout(config)
    stats = np.zeros((n, 6))
    t0 = time.perf_counter()
    play_and_learn(
        n,
        seed,
        rule.alpha,
        rule.lam,
        ThreesGame().new_initial_state().array,
        weights,
        cells,
        offsets,
        np.array(config.stage_ranks, dtype=np.int64),
        stats,
        coherence,
        rule.restart,
        rule.restart_rank,
    )
    return stats, time.perf_counter() - t0


def _play_chunk(task: tuple) -> tuple[np.ndarray, float]:
    """``_run_chunk`` in a worker process, learning into the weights in shared memory (Hogwild:
    workers update one table without locks; a lost update now and then is harmless)."""
    from multiprocessing import shared_memory

    shm_name, size, config, n, seed, rule, tc = task
    shm = shared_memory.SharedMemory(name=shm_name)
    try:
        block, weights, coherence = _shared_views(shm.buf, size, tc)
        result = _run_chunk(n, seed, rule, weights, config, coherence)
        del weights, coherence, block
        return result
    finally:
        shm.close()


def _delta_chunk(
    weights: np.ndarray, coherence: np.ndarray, config: NTupleConfig, n: int, seed: int, rule: TDRule
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """``_run_chunk`` as a Ray task: it learns on its own copy of the weights it was sent (from the
    object store) and returns what it changed, which the learner adds to the current table."""
    w, c = weights.copy(), coherence.copy()
    stats, dt = _run_chunk(n, seed, rule, w, config, c)
    return stats, dt, w - weights, c - coherence


class _RayChunk:
    """A chunk running on Ray, with the interface of the pool's AsyncResult; ``get`` adds its
    changes to the learner's weights (and coherence accumulators)."""

    def __init__(self, ray, ref, weights: np.ndarray, coherence: np.ndarray) -> None:
        self.ray, self.ref, self.weights, self.coherence = ray, ref, weights, coherence

    def get(self) -> tuple[np.ndarray, float]:
        stats, dt, dw, dc = self.ray.get(self.ref)
        self.weights += dw
        if self.coherence.size:
            self.coherence += dc
        return stats, dt


def _shared_views(buf, size: int, tc: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The one layout of the shared block: the weights, then (with tc) the two coherence rows."""
    block = np.ndarray((3 if tc else 1, size), dtype=np.float32, buffer=buf)
    return block, block[0], block[1:] if tc else _NO_COHERENCE


class NTupleLearner(Learner):
    """The n-tuple network (``checkpoint.pt``: its non-zero entries) and, with ``--tc``, its
    temporal-coherence accumulators (``coherence.npy``, half of what it learned); ``--out`` gets
    the network in float16 without its entries below ``out_prune``. A new run starts from zero or
    from ``--init-from``."""

    def __init__(self, args: Args) -> None:
        self.args = args
        self.config = NTupleConfig(tuples=tuple(map(tuple, args.tuples)), stage_ranks=tuple(args.stage_ranks))
        self.coherence_file = Path(args.run_dir) / "coherence.npy"
        self.net: NTupleNet | None = None
        """the network (from ``start``)"""
        self.coherence = _NO_COHERENCE
        """the TC accumulators (2, entries), or (2, 0): TD with the constant step"""

    def start(self, checkpoint: Path | None) -> dict:
        meta: dict = {}
        if checkpoint is None:
            self.net = _warm_start(Path(self.args.init_from), self.config) if self.args.init_from else NTupleNet(self.config)
        else:
            self.net, meta = load_ntuple_with_metadata(checkpoint)
            if self.net.config != self.config:
                raise CheckpointError(f"{checkpoint} holds a network of another shape ({self.net.config}); use a new --run-dir")
            if bool(meta.get("tc", False)) != self.args.tc:
                raise CheckpointError(
                    f"{checkpoint} was trained {'with' if meta.get('tc') else 'without'} --tc; "
                    "resume it the same way or use a new --run-dir"
                )
        size = self.net.tables().weights.shape[0]
        if self.args.tc:
            self.coherence = np.zeros((2, size), dtype=np.float32)
            if meta.get("games"):
                self.coherence[:] = _load_coherence(self.coherence_file, size)
        return meta

    def metadata(self, progress: dict) -> dict:
        return {
            "games": progress["games"],
            "train_seconds": progress["train_seconds"],
            "alpha": self.args.alpha,
            "lam": self.args.lam,
            "seed": self.args.seed,
            "tc": self.args.tc,
            "restart": self.args.restart,
            "restart_rank": self.args.restart_rank,
        }

    def save(self, path: Path, progress: dict) -> None:
        if self.args.tc:  # accumulators first: a checkpoint never outruns its coherence
            with open_atomic(self.coherence_file) as f:
                np.save(f, self.coherence)
        save_ntuple(path, self.net, self.metadata(progress))

    def export(self, checkpoint: Path, out: Path, progress: dict) -> None:
        """The file to ship: float16 or packed int16, small entries pruned (the run's checkpoint stays exact)."""
        save_ntuple(
            out,
            self.net,
            self.metadata(progress),
            half=not self.args.out_compact,
            prune=self.args.out_prune,
            compact=self.args.out_compact,
        )


def train(args: Args, progress: bool | None = None) -> Path:
    """Train (or resume) in ``args.run_dir``; returns the path of the network written (``--out``'s
    when given); ``progress`` overrides ``args.progress``."""
    if progress is not None:
        args = dataclasses.replace(args, progress=progress)
    if args.game != "threes":
        raise ValueError(f"training/threes/train.py trains Threes only, not {args.game!r}")
    if args.game_options:
        raise ValueError(f"the Threes n-tuple network trains under the default rule options only, got {args.game_options}")
    learner = NTupleLearner(args)
    with Run(args, ThreesGame(), learner, total=args.games or None, desc="threes TD", budget=f"--games {args.games}") as run:
        net, config = learner.net, learner.config
        size = net.tables().weights.shape[0]

        pool, shm, ray = None, None, None
        if args.backend == "ray":  # chunks learn on copies sent through the object store; deltas come back
            from tablegym.training.parallel import connect

            ray = connect(args.workers, args.address)
            remote_chunk = ray.remote(max_retries=3, num_cpus=1)(_delta_chunk)
        elif args.workers > 1:  # the tables move to shared memory, the module keeps viewing them
            from multiprocessing import shared_memory

            from tablegym.training.parallel import ignore_interrupts, process_context

            shm = shared_memory.SharedMemory(create=True, size=(3 if args.tc else 1) * size * 4)
            block, shared_weights, shared_coherence = _shared_views(shm.buf, size, args.tc)
            shared_weights[:] = net.tables().weights
            shared_coherence[:] = learner.coherence
            net.table.weight.data = torch.from_numpy(shared_weights).view(-1, 1)
            learner.coherence = shared_coherence
            del shared_weights, shared_coherence
            pool = process_context().Pool(args.workers, initializer=ignore_interrupts)
        weights, coherence = net.tables().weights, learner.coherence
        rule = TDRule.of(args)

        def submit(n: int, seed: int):
            if ray is not None:  # the current weights, once per chunk
                ref = remote_chunk.remote(ray.put(weights), ray.put(coherence), config, n, seed, rule)
                return _RayChunk(ray, ref, weights, coherence)
            if pool is None:
                return _Done(_run_chunk(n, seed, rule, weights, config, coherence))
            return pool.apply_async(_play_chunk, ((shm.name, size, config, n, seed, rule, args.tc),))

        chunk = max(1, args.log_every)
        submitted, pending = run.games, []  # games handed out (played or in flight)
        try:
            while True:
                while run.in_budget(submitted) and len(pending) < max(1, args.workers):
                    n = chunk if run.total is None else min(chunk, run.total - submitted)
                    pending.append(submit(n, _chunk_seed(args.seed, submitted)))
                    submitted += n
                if not pending:
                    break
                stats, dt = pending.pop(0).get()
                n = stats.shape[0]
                run.played(n)
                summary = _summary(stats)
                summary["speed/games_per_s"] = per_second(n * max(1, args.workers), dt)
                summary["speed/moves_per_s"] = per_second(float(stats[:, 2].sum() * max(1, args.workers)), dt)
                run.log(summary)
                run.bar.set_postfix(
                    mean=f"{summary.get('score/mean', np.nan):,.0f}",
                    r1536=f"{summary.get('reached/1536', np.nan):.0f}%",
                    gps=f"{summary['speed/games_per_s']:.1f}",
                )
                if run.due_minutes(args.save_minutes):
                    run.save()
            path = run.finish()
        finally:
            if pool is not None:
                pool.terminate()
                net.table.weight.data = net.table.weight.data.clone()  # off the shared buffer before it goes
                learner.coherence = np.array(learner.coherence)
                del block, coherence
                shm.close()
                shm.unlink()
        path = Path(args.out) if args.out else path
        return path


def _load_coherence(path: Path, size: int) -> np.ndarray:
    """The TC accumulators a resumed run saved (they are half of what it learned)."""
    try:
        coherence = load_npy(path)  # a plain array, its header checked before anything is read
    except (OSError, ValueError) as e:
        raise CheckpointError(f"cannot resume temporal coherence learning: {path} is missing or corrupt ({e})") from None
    if coherence.shape != (2, size):
        raise CheckpointError(f"{path} holds accumulators of shape {coherence.shape}, the network needs (2, {size})")
    return coherence


def _warm_start(path: Path, config: NTupleConfig) -> NTupleNet:
    """The network at ``path`` split at ``config``'s stages (its tuples must be ``config``'s)."""
    old, meta = load_ntuple_with_metadata(path)
    if old.config.tuples != config.tuples or old.config.symmetric != config.symmetric:
        raise CheckpointError(
            f"--init-from {path} holds other tuples ({old.config.tuples}); a warm start can only change the stages"
        )
    print(f"starting from {path} ({int(meta.get('games', 0)):,} games), stages split at {config.stage_ranks}")
    return restage(old, config.stage_ranks)


class _Done:
    """A finished in-process chunk, with the interface of the pool's AsyncResult."""

    def __init__(self, result):
        self.result = result

    def get(self):
        return self.result


parse_args, cli_main = trainer_cli(Args, train, "tablegym train threes", __doc__, report=False)


if __name__ == "__main__":
    raise SystemExit(cli_main())
