"""The value network of the searching starship generator (``models/starship/search.py``), fitted
to the final scores of the editing policy's own ships.

``python -m tablegym.training.starship.value --policy GENERATOR [--seeds N] [--boards B] [--out PATH]``

Why on the policy's own ships: the search keeps the partial ships whose finished ship, drawn on
by the same policy, is likely to score best; that is the policy's value, V(s) = E[score of the
finished ship | s], and its Monte-Carlo estimate is a finished draw's exact score. For each seed
``--boards`` ships are drawn side by side from the policy (a stream of their own, apart from the
generator's), the value inputs of every partial ship are kept at each segment's end, and once the
ships are finished each input is labelled with its own ship's ``search.score`` less the mean
score of the seed's ships: the search only ever compares branches of one seed, and most of the
spread of the scores is within a seed (the hull's share is learned only by remembering hulls).
The fit is least squares (Adam); the last tenth of the seeds is held out, and its error is
printed beside the error of predicting nothing (0), so a value network that learned nothing
says so.

Seeds: from 20,000 on, apart from the policy's demonstrations (10,000 on), the audit's training
seeds (0-399) and its held-out seeds (2000-2199).
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tablegym.envs.limits import load_npz
from tablegym.models.checkpoint import CheckpointError
from tablegym.models.starship.learned import LearnedGenerator
from tablegym.models.starship.search import MAX_BOARDS, Branches, SearchGenerator, num_value_inputs, score, value_layers
from tablegym.training.files import open_atomic
from tablegym.training.flags import OneLineParser, check_writable

PROG = "python -m tablegym.training.starship.value"
FIRST_SEED = 20_000
ROLLOUT_STREAM = 0x7A1
"""The first word of the rollouts' per-seed streams, apart from the generator's own."""


def rollouts(policy: str, seeds: list[int], boards: int, segment: int) -> dict[str, np.ndarray]:
    """For each seed, ``boards`` ships drawn from the policy at ``policy``: the value inputs at
    every segment's end, each labelled with its ship's final score."""
    torch.set_num_threads(1)
    gen = LearnedGenerator.load(policy)
    b = Branches(gen.net, gen.env_kwargs, gen.radius, gen.pool, boards)
    xs, ys, ss = [], [], []
    for seed in seeds:
        b.reset(seed)
        rng = np.random.default_rng([ROLLOUT_STREAM, seed])
        inputs = []
        while True:
            b.advance(min(segment, b.max_steps - b.steps), rng)
            if b.steps >= b.max_steps:
                break
            inputs.append(b.value_inputs().numpy())
        finals = np.array([score(b.ship(i)) for i in range(boards)], np.float32)
        xs.append(np.concatenate(inputs))
        ys.append(np.tile(finals, len(inputs)))
        ss.append(np.full(len(inputs) * boards, seed, np.int64))
    return {"x": np.concatenate(xs), "y": np.concatenate(ys), "seed": np.concatenate(ss)}


def centred(y: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Each score less the mean score of its seed's ships."""
    _, group = np.unique(seeds, return_inverse=True)
    means = np.bincount(group, weights=y) / np.bincount(group)
    return (y - means[group]).astype(np.float32)


def record(policy: str, seeds: range, boards: int, segment: int, workers: int) -> dict[str, np.ndarray]:
    """``rollouts`` of ``seeds`` in ``workers`` processes."""
    chunks = [list(seeds)[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        parts = list(pool.map(rollouts, [policy] * workers, chunks, [boards] * workers, [segment] * workers))
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def fit(
    net: torch.nn.Sequential,
    x: np.ndarray,
    y: np.ndarray,
    train: np.ndarray,
    *,
    epochs: int,
    batch: int,
    lr: float,
    rng: np.random.Generator,
    on_epoch: Any,
) -> None:
    """Least squares on the rows ``train``, Adam with a one-cycle schedule."""
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=1e-5)
    steps = epochs * ((len(train) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    for epoch in range(epochs):
        net.train()
        order = rng.permutation(train)
        total = 0.0
        for lo in range(0, len(order), batch):
            rows = np.sort(order[lo : lo + batch])
            pred = net(torch.from_numpy(x[rows]).float())[:, 0]
            loss = torch.mean((pred - torch.from_numpy(y[rows])) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(rows)
        on_epoch(epoch, total / len(order))


@torch.no_grad()
def held_out_error(net: torch.nn.Sequential, x: np.ndarray, y: np.ndarray, rows: np.ndarray) -> float:
    """Mean squared error of the network on ``rows``."""
    net.eval()
    pred = np.concatenate([net(torch.from_numpy(x[rows[i : i + 8192]]).float())[:, 0].numpy() for i in range(0, len(rows), 8192)])
    return float(np.mean((pred - y[rows]) ** 2))


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", required=True, help="the fitted editing policy (a generator checkpoint of imitate.py)")
    p.add_argument("--seeds", type=int, default=160, help="seeds drawn (default 160: 20000-20159; the last tenth held out)")
    p.add_argument("--boards", type=int, default=16, help="ships drawn a seed (default 16)")
    p.add_argument("--segment", type=int, default=32, help="cursor steps between the search's choices (default 32: a row)")
    p.add_argument("--beam", type=int, default=4, help="partial ships the search keeps (default 4)")
    p.add_argument("--branch", type=int, default=4, help="continuations drawn from each kept ship (default 4)")
    p.add_argument("--hidden", type=int, nargs="+", default=[64], help="hidden layer sizes (default 64)")
    p.add_argument(
        "--epochs",
        type=int,
        default=6,
        help="passes over the recorded partial ships (default 6; 0: no value network, nothing recorded: the search draws "
        "--branch ships whole and keeps the best finished one, with --beam 1)",
    )
    p.add_argument("--batch", type=int, default=512, help="minibatch size (default 512)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's peak learning rate (default 1e-3)")
    p.add_argument("--workers", type=int, default=2, help="processes drawing the ships (default 2)")
    p.add_argument("--seed", type=int, default=0, help="the fit's random seed (default 0)")
    p.add_argument(
        "--data", default="runs/starship-search/values.npz", help="the recorded rollouts (kept; recorded when missing)"
    )
    p.add_argument("--out", default="runs/starship-search/search.pt", help="the searching generator's checkpoint written")
    args = p.parse_args(argv)
    for name in ("seeds", "boards", "segment", "beam", "branch", "batch", "workers"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.beam * args.branch > MAX_BOARDS or args.boards > MAX_BOARDS:
        p.error(
            f"--beam x --branch and --boards must be at most {MAX_BOARDS} boards, got {args.beam * args.branch} and {args.boards}"
        )
    if args.epochs < 0:
        p.error(f"--epochs must be at least 0, got {args.epochs}")
    if args.epochs == 0 and args.beam != 1:
        p.error(f"--epochs 0 trains no value network, so the search keeps no partial ships: give --beam 1, not {args.beam}")
    if args.seeds < 2:
        p.error("--seeds must be at least 2 (one to hold out)")
    if any(h < 1 for h in args.hidden):
        p.error(f"--hidden sizes must be at least 1, got {args.hidden}")
    if not args.lr > 0:
        p.error(f"--lr must be positive, got {args.lr}")
    for flag, path in (("--data", args.data), ("--out", args.out)):
        if path != p.get_default(flag[2:]):
            check_writable(p, flag, path)
    try:
        policy = LearnedGenerator.load(args.policy)
    except CheckpointError as err:
        p.error(f"--policy: {err}")
    if isinstance(policy, SearchGenerator):
        p.error(f"--policy {args.policy} is a searching generator already: give the policy it was built from")
    torch.manual_seed(args.seed)
    command = " ".join([PROG, *(sys.argv[1:] if argv is None else argv)])
    if args.epochs == 0:
        best_of = SearchGenerator(
            policy.net, None, policy.env_kwargs, policy.radius, policy.pool, policy.metadata, beam=1, branch=args.branch
        )
        best_of.save(args.out, {"value_command": command})
        print(f"no value network: the best of {args.branch} ships drawn whole -> {args.out}", flush=True)
        return 0
    seeds = range(FIRST_SEED, FIRST_SEED + args.seeds)
    start = time.time()
    data_path = Path(args.data)
    if data_path.exists():
        data = load_npz(data_path)
        if not set(seeds).issubset(set(np.unique(data["seed"]).tolist())):
            p.error(f"{data_path} holds other seeds than {seeds.start}-{seeds.stop - 1}: give another --data")
    else:
        data = record(args.policy, seeds, args.boards, args.segment, args.workers)
        data_path.parent.mkdir(parents=True, exist_ok=True)
        with open_atomic(data_path) as f:
            np.savez(f, **data)
        print(f"recorded {len(data['y']):,} partial ships of {args.seeds} seeds ({time.time() - start:.0f} s)", flush=True)
    x, y = data["x"], centred(data["y"].astype(np.float32), data["seed"])
    if x.shape[1] != num_value_inputs(tuple(policy.env.observation_space.shape)):
        p.error(f"{data_path} holds value inputs of another length: give another --data")
    held = seeds.stop - max(1, args.seeds // 10)
    train, test = np.flatnonzero(data["seed"] < held), np.flatnonzero(data["seed"] >= held)
    baseline = float(np.mean(y[test] ** 2))
    value = value_layers(x.shape[1], args.hidden)
    gen = SearchGenerator(
        policy.net, value, policy.env_kwargs, policy.radius, policy.pool, policy.metadata,
        beam=args.beam, branch=args.branch, segment=args.segment,
    )  # fmt: skip

    def on_epoch(epoch: int, loss: float) -> None:
        error = held_out_error(value, x, y, test)
        gen.save(args.out, {"value_seeds": [seeds.start, seeds.stop - 1], "value_held_out_mse": error, "value_command": command})
        print(
            f"epoch {epoch + 1}: loss {loss:.5f}, held-out error {error:.5f} (predicting 0: {baseline:.5f}) "
            f"({time.time() - start:.0f} s) -> {args.out}",
            flush=True,
        )

    fit(
        value,
        x,
        y,
        train,
        epochs=args.epochs,
        batch=args.batch,
        lr=args.lr,
        rng=np.random.default_rng(args.seed),
        on_epoch=on_epoch,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
