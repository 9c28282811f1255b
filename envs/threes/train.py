"""Afterstate TD learning of the Threes n-tuple network (models/ntuple.py), read top to bottom.

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
mean |TD error|, % of games reaching 768/1536/3072, games/s) and every few minutes saves a
checkpoint atomically; a rerun with the same ``--run-dir`` resumes from it.

    tablegym train threes --minutes 60 --run-dir runs/threes --out models/checkpoints/threes.pt
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from numba import njit

from tablegym.envs.core import ONGOING, OUTCOME
from tablegym.envs.threes.board import board_score, highest_rank, swipe
from tablegym.envs.threes.core import BOARD, HINT, NUM_OUTCOMES, PHASE, PLAY, ThreesGame, k_chance, k_push
from tablegym.models.checkpoint import CheckpointError
from tablegym.envs.threes.ntuple import (DEFAULT_TUPLES, HINT_CELL, NTupleConfig, NTupleNet, layout,
                                    load_ntuple_with_metadata, ntuple_update, ntuple_update_tc, ntuple_value, restage,
                                    save_ntuple)

MILESTONE_RANKS = {"768": 11, "1536": 12, "3072": 13}
MAX_MOVES = 200_000  # far beyond any game (a 12288 card takes ~6,000 moves): a guard against a rules bug


@dataclass
class Args:
    run_dir: str = "runs/threes-ntuple"
    minutes: float = 10.0  # wall-clock budget of this run (0: stop after --games)
    games: int = 0  # games to play in this run (0: until --minutes)
    alpha: float = 0.1  # TD step, shared out over the network's active entries
    lam: float = 0.0  # TD(lambda); 0 is TD(0)
    seed: int = 0
    stage_ranks: tuple[int, ...] = (11,)
    log_every: int = 1000  # games per TensorBoard point (and per chunk a worker plays)
    workers: int = 1  # processes learning into one shared table (Hogwild); 1 is deterministic
    backend: str = "process"  # process (Hogwild, shared memory) or ray (chunks learn on a copy, deltas added here)
    address: str | None = None  # with backend ray: the cluster to join
    save_minutes: float = 5.0
    out: str | None = None  # also write the final network here (e.g. the shipped checkpoint)
    out_prune: float = 20.0  # ... without the entries smaller than this (halves the file, README)
    tuples: tuple[tuple[int, ...], ...] = field(default=DEFAULT_TUPLES)
    init_from: str | None = None  # a new run starts from this network's weights (re-staged)
    tc: bool = False  # temporal coherence: a per-entry step |sum of errors| / sum of |errors| (alpha ~ 1)


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
def play_and_learn(n_games, seed, alpha, lam, template, weights, cells, offsets, stage_ranks, stats, coherence):
    """Play ``n_games`` greedy games from ``template`` (a fresh game), learning when alpha > 0.

    ``stats[g]`` gets (final score, highest rank, swipes, sum of |TD error|, TD updates).
    ``coherence``: (2, entries) accumulators for temporal coherence learning, or (2, 0) for
    TD with the constant step.
    """
    np.random.seed(seed)
    ids = np.empty(NUM_OUTCOMES, dtype=np.int64)
    probs = np.empty(NUM_OUTCOMES, dtype=np.float64)
    step = alpha / (cells.shape[0] * cells.shape[1])
    boards = np.empty(MAX_MOVES, dtype=np.int64)  # the game's afterstates, for TD(lambda)
    hints = np.empty(MAX_MOVES, dtype=np.int64)
    totals = np.empty(MAX_MOVES + 1, dtype=np.float64)  # score + V of each chosen afterstate
    for g in range(n_games):
        s = template.copy()
        _resolve_chance(s, ids, probs)
        t = 0
        err = 0.0
        while s[OUTCOME] == ONGOING and t < MAX_MOVES:
            board = s[BOARD]
            hint = s[HINT]
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
                delta = best - prev_score - ntuple_value(boards[t - 1], hints[t - 1], weights, cells, offsets,
                                                         stage_ranks)
                err += abs(delta)
                _learn(boards[t - 1], hints[t - 1], weights, coherence, cells, offsets, stage_ranks, step, delta)
            k_push(s, best_d)
            _resolve_chance(s, ids, probs)
            t += 1
        final = board_score(s[BOARD])
        totals[t] = final  # the end: nothing more to come
        if t > 0 and alpha > 0.0:
            if lam == 0.0:
                delta = final - board_score(boards[t - 1]) - ntuple_value(boards[t - 1], hints[t - 1], weights, cells,
                                                                           offsets, stage_ranks)
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


# ---- the driver --------------------------------------------------------------------------------

def _summary(stats: np.ndarray) -> dict[str, float]:
    out = {"score/mean": float(stats[:, 0].mean()), "score/median": float(np.median(stats[:, 0])),
           "td_error/mean_abs": float(stats[:, 3].sum() / max(1.0, stats[:, 4].sum())),
           "moves/mean": float(stats[:, 2].mean())}
    for name, rank in MILESTONE_RANKS.items():
        out[f"reached/{name}"] = float(100.0 * np.mean(stats[:, 1] >= rank))
    return out


def _chunk_seed(seed: int, games_before: int) -> int:
    """One seed per chunk, from the run seed and the games played before it: a resumed run
    does not replay the games it has learned from."""
    return int(np.random.SeedSequence([seed, games_before]).generate_state(1)[0] % (2**31))


def _run_chunk(n: int, seed: int, alpha: float, lam: float, weights: np.ndarray, config: NTupleConfig,
               coherence: np.ndarray) -> tuple[np.ndarray, float]:
    """``n`` games learning into ``weights`` (and ``coherence``): their stats and the seconds they took."""
    cells, offsets, _ = layout(config)
    stats = np.zeros((n, 5))
    t0 = time.perf_counter()
    play_and_learn(n, seed, alpha, lam, ThreesGame().new_initial_state().array, weights, cells, offsets,
                   np.array(config.stage_ranks, dtype=np.int64), stats, coherence)
    return stats, time.perf_counter() - t0


def _play_chunk(task: tuple) -> tuple[np.ndarray, float]:
    """``_run_chunk`` in a worker process, learning into the weights in shared memory (Hogwild:
    workers update one table without locks; a lost update now and then is harmless)."""
    from multiprocessing import shared_memory

    shm_name, size, config, n, seed, alpha, lam, tc = task
    shm = shared_memory.SharedMemory(name=shm_name)
    try:
        block, weights, coherence = _shared_views(shm.buf, size, tc)
        result = _run_chunk(n, seed, alpha, lam, weights, config, coherence)
        del weights, coherence, block
        return result
    finally:
        shm.close()


def _delta_chunk(weights: np.ndarray, coherence: np.ndarray, config: NTupleConfig, n: int, seed: int, alpha: float,
                 lam: float) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """``_run_chunk`` as a Ray task: it learns on its own copy of the weights it was sent (from the
    object store) and returns what it changed, which the learner adds to the current table."""
    w, c = weights.copy(), coherence.copy()
    stats, dt = _run_chunk(n, seed, alpha, lam, w, config, c)
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


def train(args: Args, progress: bool = True) -> Path:
    """Train (or resume) in ``args.run_dir``; returns the path of the checkpoint written."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    ckpt = run_dir / "checkpoint.pt"
    coherence_file = run_dir / "coherence.npy"  # the TC accumulators, saved beside the checkpoint
    config = NTupleConfig(tuples=tuple(map(tuple, args.tuples)), stage_ranks=tuple(args.stage_ranks))
    games_done, seconds_done = 0, 0.0
    if ckpt.exists():
        net, meta = load_ntuple_with_metadata(ckpt)
        if net.config != config:
            raise CheckpointError(f"{ckpt} holds a network of another shape ({net.config}); use a new --run-dir")
        games_done, seconds_done = int(meta.get("games", 0)), float(meta.get("train_seconds", 0.0))
        if bool(meta.get("tc", False)) != args.tc:
            raise CheckpointError(f"{ckpt} was trained {'with' if meta.get('tc') else 'without'} --tc; "
                                  "resume it the same way or use a new --run-dir")
        print(f"resuming {ckpt}: {games_done:,} games, {seconds_done / 60:.1f} min trained")
    elif args.init_from:
        net = _warm_start(Path(args.init_from), config)
    else:
        net = NTupleNet(config)
    size = net.tables().weights.shape[0]
    coherence = np.zeros((2, size), dtype=np.float32) if args.tc else _NO_COHERENCE
    if args.tc and games_done:
        coherence[:] = _load_coherence(coherence_file, size)
    writer = SummaryWriter(str(run_dir))
    (run_dir / "args.json").write_text(json.dumps(asdict(args), indent=1))

    def save(path: Path, half: bool = False, prune: float = 0.0) -> Path:
        meta = {"games": games_done, "train_seconds": seconds_done, "alpha": args.alpha, "lam": args.lam,
                "seed": args.seed, "tc": args.tc}
        if args.tc and path == ckpt:  # accumulators first: a checkpoint never outruns its coherence
            tmp = coherence_file.with_suffix(".tmp")
            with open(tmp, "wb") as f:
                np.save(f, coherence)
            os.replace(tmp, coherence_file)
        return save_ntuple(path, net, meta, half=half, prune=prune)

    pool, shm, ray = None, None, None
    if args.backend == "ray":  # chunks learn on copies sent through the object store; deltas come back
        from tablegym.training.parallel import connect

        ray = connect(args.workers, args.address)
        remote_chunk = ray.remote(max_retries=3, num_cpus=1)(_delta_chunk)
    elif args.workers > 1:  # the tables move to shared memory, the module keeps viewing them
        import multiprocessing as mp
        from multiprocessing import shared_memory

        shm = shared_memory.SharedMemory(create=True, size=(3 if args.tc else 1) * size * 4)
        block, shared_weights, shared_coherence = _shared_views(shm.buf, size, args.tc)
        shared_weights[:] = net.tables().weights
        shared_coherence[:] = coherence
        net.table.weight.data = torch.from_numpy(shared_weights).view(-1, 1)
        coherence = shared_coherence
        del shared_weights, shared_coherence
        pool = mp.get_context("forkserver").Pool(args.workers)
    weights = net.tables().weights

    def submit(n: int, seed: int):
        if ray is not None:  # the current weights, once per chunk
            ref = remote_chunk.remote(ray.put(weights), ray.put(coherence), config, n, seed, args.alpha, args.lam)
            return _RayChunk(ray, ref, weights, coherence)
        if pool is None:
            return _Done(_run_chunk(n, seed, args.alpha, args.lam, weights, config, coherence))
        return pool.apply_async(_play_chunk, ((shm.name, size, config, n, seed, args.alpha, args.lam, args.tc),))

    start = last_save = time.perf_counter()
    chunk = max(1, args.log_every)
    bar = tqdm(total=args.games or None, disable=not progress, unit="game", desc="threes TD")
    submitted, pending, games_before = 0, [], games_done

    def in_budget() -> bool:
        return ((not args.games or submitted < args.games)
                and (not args.minutes or time.perf_counter() - start < 60 * args.minutes))

    try:
        while True:
            while in_budget() and len(pending) < max(1, args.workers):
                n = min(chunk, args.games - submitted) if args.games else chunk
                pending.append(submit(n, _chunk_seed(args.seed, games_before + submitted)))
                submitted += n
            if not pending:
                break
            stats, dt = pending.pop(0).get()
            n = stats.shape[0]
            games_done += n
            seconds_done += dt / max(1, args.workers)  # wall-clock seconds of training
            summary = _summary(stats)
            summary["speed/games_per_s"] = n * max(1, args.workers) / dt
            summary["speed/moves_per_s"] = float(stats[:, 2].sum() * max(1, args.workers) / dt)
            for key, value in summary.items():
                writer.add_scalar(key, value, games_done)
            bar.update(n)
            bar.set_postfix(mean=f"{summary['score/mean']:,.0f}", r1536=f"{summary['reached/1536']:.0f}%",
                            gps=f"{summary['speed/games_per_s']:.1f}")
            if time.perf_counter() - last_save >= 60 * args.save_minutes:
                save(ckpt)
                last_save = time.perf_counter()
        bar.close()
        writer.close()
        path = save(ckpt)
        if args.out:  # the file to ship: float16, small entries pruned (the run's checkpoint stays exact)
            path = save(Path(args.out), half=True, prune=args.out_prune)
    finally:
        if pool is not None:
            pool.terminate()
            net.table.weight.data = net.table.weight.data.clone()  # off the shared buffer before it goes
            del block, coherence
            shm.close()
            shm.unlink()
    print(f"{games_done:,} games, {seconds_done / 60:.1f} min of training in all; saved {path}")
    return path


def _load_coherence(path: Path, size: int) -> np.ndarray:
    """The TC accumulators a resumed run saved (they are half of what it learned)."""
    try:
        coherence = np.load(path, allow_pickle=False)  # a plain array: an object array is refused
    except (OSError, ValueError) as e:
        raise CheckpointError(f"cannot resume temporal coherence learning: {path} is missing or corrupt ({e})") from None
    if coherence.shape != (2, size):
        raise CheckpointError(f"{path} holds accumulators of shape {coherence.shape}, the network needs (2, {size})")
    return coherence


def _warm_start(path: Path, config: NTupleConfig) -> NTupleNet:
    """The network at ``path`` split at ``config``'s stages (its tuples must be ``config``'s)."""
    old, meta = load_ntuple_with_metadata(path)
    if old.config.tuples != config.tuples or old.config.symmetric != config.symmetric:
        raise CheckpointError(f"--init-from {path} holds other tuples ({old.config.tuples}); "
                              "a warm start can only change the stages")
    print(f"starting from {path} ({int(meta.get('games', 0)):,} games), stages split at {config.stage_ranks}")
    return restage(old, config.stage_ranks)


class _Done:
    """A finished in-process chunk, with the interface of the pool's AsyncResult."""

    def __init__(self, result):
        self.result = result

    def get(self):
        return self.result


def parse_args(argv: list[str] | None = None) -> Args:
    d = Args()
    p = argparse.ArgumentParser(prog="tablegym train threes", description=__doc__.split("\n\n")[0])
    p.add_argument("--run-dir", default=d.run_dir, help="TensorBoard logs and checkpoint.pt (a rerun resumes)")
    p.add_argument("--minutes", type=float, default=d.minutes, help="wall-clock budget (0: until --games)")
    p.add_argument("--games", type=int, default=d.games, help="games to play (0: until --minutes)")
    p.add_argument("--alpha", type=float, default=d.alpha, help="TD step shared over the active entries")
    p.add_argument("--lam", type=float, default=d.lam, help="TD(lambda): 0 = TD(0), online")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--stage-ranks", type=int, nargs="*", default=list(d.stage_ranks),
                   help="highest-card ranks starting a new stage (11 = 768); none for one stage")
    p.add_argument("--tuples", nargs="+", metavar="CELLS", default=[_tuple_text(t) for t in d.tuples],
                   help="the n-tuples, cells 0..15 row-major from the top-left joined by commas, h = the card "
                        "about to enter (default: %(default)s)")
    p.add_argument("--init-from", metavar="CHECKPOINT",
                   help="a new run starts from this network (same tuples; its stages are copied onto --stage-ranks)")
    p.add_argument("--tc", action="store_true",
                   help="temporal coherence learning: each entry's step shrinks as its errors stop agreeing "
                        "(give --alpha about 1)")
    p.add_argument("--log-every", type=int, default=d.log_every)
    p.add_argument("--workers", type=int, default=d.workers,
                   help="processes learning into one shared table (lock-free); 1 = deterministic")
    p.add_argument("--backend", choices=("process", "ray"), default=d.backend,
                   help="process: workers share the table (Hogwild); ray: each chunk learns on a copy of the "
                        "current table sent through Ray's object store, and its changes are added here")
    p.add_argument("--address", help="with --backend ray: the cluster to join (auto, HOST:PORT)")
    p.add_argument("--save-minutes", type=float, default=d.save_minutes)
    p.add_argument("--out", help="also write the final network here (float16, small entries pruned)")
    p.add_argument("--out-prune", type=float, default=d.out_prune,
                   help="leave entries below this magnitude out of --out (default %(default)s; 0 keeps all)")
    a = p.parse_args(argv)
    if a.minutes < 0 or a.games < 0 or (a.minutes == 0 and a.games == 0):
        p.error("give a positive --minutes or --games budget")
    if not 0.0 <= a.lam <= 1.0 or a.alpha <= 0 or a.workers < 1:
        p.error("--lam must lie in [0, 1], --alpha be positive and --workers at least 1")
    from tablegym.training.parallel import BackendError, check_backend

    try:
        check_backend(a.backend, a.address)
    except BackendError as err:
        p.error(str(err))
    return Args(run_dir=a.run_dir, minutes=a.minutes, games=a.games, alpha=a.alpha, lam=a.lam, seed=a.seed,
                stage_ranks=tuple(a.stage_ranks), log_every=a.log_every, workers=a.workers, backend=a.backend,
                address=a.address,
                save_minutes=a.save_minutes, out=a.out, out_prune=a.out_prune,
                tuples=tuple(_parse_tuple(p, t) for t in a.tuples), init_from=a.init_from, tc=a.tc)


def _tuple_text(t: tuple[int, ...]) -> str:
    return ",".join("h" if c == HINT_CELL else str(c) for c in t)


def _parse_tuple(parser: argparse.ArgumentParser, text: str) -> tuple[int, ...]:
    try:
        return tuple(HINT_CELL if c.strip() == "h" else int(c) for c in text.split(","))
    except ValueError:
        parser.error(f"bad tuple {text!r}: give cells 0..15 (or h) joined by commas")


def cli_main(argv: list[str] | None = None) -> int:
    train(parse_args(argv))
    return 0


def train_main(argv: list[str]) -> int:
    """``tablegym train threes ...``: the arguments as typed, the game's name first (this
    trainer has only the one game, so its own parser takes no game)."""
    return cli_main(argv[1:])


if __name__ == "__main__":
    raise SystemExit(cli_main())
