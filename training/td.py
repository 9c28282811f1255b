"""Self-play TD-leaf(lambda) for two-player games: train a ValueMLP leaf evaluator.

Read it top to bottom (CleanRL style):

1. play a batch of games with the compiled alpha-beta searching ``depth`` plies and the
   current network at its leaves (epsilon-random moves for exploration);
2. turn each game into TD-leaf(lambda) targets (training/selfplay.py);
3. fit the network on a replay buffer of recent positions (Adam, MSE), with the board's
   symmetries as free extra data;
4. every ``eval_every`` iterations, play a match against the hand-made evaluator in the SAME
   search at the same depth and log the score; every ``save_every`` iterations checkpoint.

Killed and restarted with the same ``run_dir``, it resumes from the last checkpoint (network,
optimizer, iteration, games played); the replay buffer refills within a few iterations.

    tablegym train trilobite --minutes 5 --run-dir runs/trilobite-td
    tensorboard --logdir runs
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from tablegym.envs.core import Game, KernelState
from tablegym.models.checkpoint import load_checkpoint, save_checkpoint
from tablegym.models.learned import LearnedEvaluator
from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.training.selfplay import SelfPlayBatch, play_selfplay, td_leaf_targets
from tablegym.training.symmetry import feature_symmetries


@dataclass
class Args:
    game: str = "trilobite"
    """game name (tablegym.envs.make_game): trilobite, trilobite-tiny, sim"""
    game_options: dict = field(default_factory=dict)
    """rule options passed to the game (e.g. {"n": 6} for sim)"""
    seed: int = 1
    """seeds torch, numpy and the compiled self-play"""
    minutes: float | None = 5.0
    """stop after this much wall time (None: only total_games counts)"""
    total_games: int = 1_000_000
    """stop after this many self-play games"""
    games_per_iter: int = 200
    """self-play games per iteration"""
    depth: int = 2
    """alpha-beta depth of the self-play searcher (the TD-leaf target's search)"""
    epsilon: float = 0.1
    """probability of a uniformly random move (exploration)"""
    lam: float = 0.7
    """TD(lambda) trace: 0 bootstraps on the search value only, 1 is Monte Carlo"""
    hidden: tuple[int, ...] = (128, 64)
    """hidden layer sizes of the ValueMLP"""
    lr: float = 1e-3
    """Adam learning rate"""
    batch_size: int = 512
    """positions per gradient step"""
    updates_per_iter: int = 40
    """gradient steps after each batch of games"""
    buffer_size: int = 200_000
    """replay buffer of the most recent positions"""
    eval_every: int = 10
    """iterations between matches against the hand-made evaluator (0: never)"""
    eval_games: int = 40
    """games per evaluation match (both seats, 2 random opening plies)"""
    eval_depth: int = 5
    """search depth of both sides in evaluation matches"""
    eval_baseline: str = "advanced"
    """the hand-made evaluator to measure against"""
    save_every: int = 10
    """iterations between checkpoints"""
    run_dir: str = "runs/trilobite-td"
    """TensorBoard logs and checkpoint.pt live here"""
    out: str | None = None
    """also copy the final checkpoint here (e.g. models/checkpoints/trilobite.pt)"""
    progress: bool = True
    """show a progress bar"""


def make_game(args: Args) -> Game:
    from tablegym.envs import make_game as registry

    return registry(args.game, **args.game_options)


class ReplayBuffer:
    """A ring buffer of (features, target) pairs (binary features by default)."""

    def __init__(self, size: int, num_features: int, dtype: type = np.uint8) -> None:
        self.x = np.zeros((size, num_features), dtype=dtype)
        self.y = np.zeros(size, dtype=np.float32)
        self.n = 0
        self.pos = 0

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        for i in range(0, len(y), len(self.y)):
            xs, ys = x[i:i + len(self.y)], y[i:i + len(self.y)]
            idx = (self.pos + np.arange(len(ys))) % len(self.y)
            self.x[idx], self.y[idx] = xs, ys
            self.pos = int((self.pos + len(ys)) % len(self.y))
            self.n = min(self.n + len(ys), len(self.y))

    def sample(self, rng: np.random.Generator, batch: int) -> tuple[np.ndarray, np.ndarray]:
        idx = rng.integers(self.n, size=batch)
        return self.x[idx], self.y[idx]


def evaluation_match(game: Game, learned: LearnedEvaluator, baseline: str, *, games: int, depth: int,
                     seed: int) -> float:
    """Score of the learned evaluator against ``baseline`` in the same search (win 1, draw 1/2)."""
    from tablegym.models.agents import make_evaluator
    from tablegym.search.play import play_game
    from tablegym.search.agents import AlphaBetaAgent

    ours = AlphaBetaAgent(learned, depth=depth)
    theirs = AlphaBetaAgent(make_evaluator(game, baseline), depth=depth)
    rng = np.random.default_rng(seed)
    score = 0.0
    for i in range(games):
        seats = (ours, theirs) if i % 2 == 0 else (theirs, ours)
        record = play_game(game, seats, rng, opening_plies=2)
        me = i % 2
        score += 1.0 if record.winner == me else (0.5 if record.winner is None else 0.0)
    return score / games


def game_metrics(game: Game, evaluator: LearnedEvaluator) -> dict[str, float]:
    """Exact measures some games allow (Sim's agreement with the solver over all positions):
    the ``training_metrics`` function named by the game's registry record."""
    from tablegym.envs import load, plugin

    metrics = plugin(game.spec.name).training_metrics
    return load(metrics)(game, evaluator) if metrics else {}


def metadata(args: Args, game: Game, net: NetConfig, iteration: int, games: int, seconds: float) -> dict:
    return {
        "game": game.spec.name,
        "options": dict(game.spec.options),
        "net": net.to_dict(),
        "iteration": iteration,
        "games": games,
        "train_seconds": seconds,
        "args": json.loads(json.dumps(dataclasses.asdict(args), default=list)),
    }


def start_or_resume(ckpt_path: Path, game: Game, net_config: NetConfig, args) -> tuple:
    """A fresh network and optimizer, or those of the checkpoint at ``ckpt_path`` (which must
    hold the same network): (model, optimizer, iteration, games, train seconds, rng)."""
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = ValueMLP(net_config)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    if not ckpt_path.exists():
        return model, optimizer, 0, 0, 0.0, rng
    payload = load_checkpoint(ckpt_path, game=game.spec.name, options=game.spec.options)
    if NetConfig.from_dict(payload["metadata"]["net"]) != net_config:
        raise ValueError(f"{ckpt_path} holds another network ({payload['metadata']['net']}); "
                         f"use a new --run-dir or the same --hidden")
    model.load_state_dict(payload["model"])
    if "optimizer" in payload:
        optimizer.load_state_dict(payload["optimizer"])
    meta = payload["metadata"]
    iteration = meta["iteration"]
    print(f"resuming {ckpt_path} at iteration {iteration} ({meta['games']} games)")
    return (model, optimizer, iteration, meta["games"], meta.get("train_seconds", 0.0),
            np.random.default_rng([args.seed, iteration]))


def td_update(model: ValueMLP, optimizer: torch.optim.Optimizer, buffer: ReplayBuffer, batch: SelfPlayBatch,
              args, rng: np.random.Generator, symmetries: list[np.ndarray]) -> tuple[float, float]:
    """Add the batch's TD-leaf(lambda) targets to the buffer and fit the network on the buffer,
    each minibatch under a random symmetry of the board: (TD error before the update, mean MSE)."""
    targets = td_leaf_targets(batch, args.lam)
    with torch.no_grad():
        before = model(torch.from_numpy(batch.features).float()).numpy()
    td_error = float(np.mean(np.abs(targets - before)))
    buffer.add(batch.features, targets.astype(np.float32))
    model.train()
    losses = []
    for _ in range(args.updates_per_iter):
        x, y = buffer.sample(rng, args.batch_size)
        perm = symmetries[rng.integers(len(symmetries))]
        loss = torch.nn.functional.mse_loss(model(torch.from_numpy(x[:, perm]).float()), torch.from_numpy(y))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return td_error, float(np.mean(losses))


def train(args: Args) -> Path:
    """Run (or resume) a training run; returns the path of the final checkpoint."""
    game = make_game(args)
    start = game.new_initial_state()
    if not isinstance(start, KernelState):
        raise ValueError(f"TD self-play needs a compiled game; {game.spec.name} has no kernels")
    run_dir = Path(args.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    ckpt_path = run_dir / "checkpoint.pt"

    net_config = NetConfig(start.num_features, tuple(args.hidden))
    model, optimizer, iteration, games_done, seconds_done, rng = start_or_resume(ckpt_path, game, net_config, args)

    writer = SummaryWriter(str(run_dir))
    writer.add_text("args", json.dumps(dataclasses.asdict(args), default=list, indent=1))
    symmetries = feature_symmetries(game)
    buffer = ReplayBuffer(args.buffer_size, start.num_features)
    t_start = time.perf_counter() - seconds_done
    deadline = None if args.minutes is None else args.minutes * 60.0
    # Under a time budget the game count is open-ended: the bar then shows games and rate only.
    bar = tqdm(total=None if deadline else args.total_games, initial=games_done, disable=not args.progress,
               unit="game")

    def save() -> None:
        meta = metadata(args, game, net_config, iteration, games_done, time.perf_counter() - t_start)
        save_checkpoint(ckpt_path, model=model, metadata=meta, optimizer=optimizer)

    while games_done < args.total_games and (deadline is None or time.perf_counter() - t_start < deadline):
        iteration += 1
        # 1. self-play with the current network at the leaves of the search
        t0 = time.perf_counter()
        evaluator = LearnedEvaluator(model, game.spec.name)
        batch = play_selfplay(start, evaluator, games=args.games_per_iter, depth=args.depth,
                              epsilon=args.epsilon, seed=int(rng.integers(2**31)))
        gen_seconds = time.perf_counter() - t0
        games_done += args.games_per_iter
        # 2.-3. TD-leaf(lambda) targets, then fit on the replay buffer
        td_error, mse = td_update(model, optimizer, buffer, batch, args, rng, symmetries)
        step = games_done
        writer.add_scalar("losses/mse", mse, step)
        writer.add_scalar("losses/td_error", td_error, step)
        writer.add_scalar("charts/games_per_s", args.games_per_iter / gen_seconds, step)
        writer.add_scalar("charts/positions_per_game", len(batch) / args.games_per_iter, step)
        writer.add_scalar("charts/first_player_score", float(np.mean(batch.result[np.r_[0, np.flatnonzero(np.diff(batch.game)) + 1]] * 0.5 + 0.5)), step)
        # 4. evaluation and checkpoints
        if args.eval_every and iteration % args.eval_every == 0:
            score = evaluation_match(game, LearnedEvaluator(model, game.spec.name), args.eval_baseline,
                                     games=args.eval_games, depth=args.eval_depth, seed=iteration)
            writer.add_scalar(f"charts/score_vs_{args.eval_baseline}", score, step)
            for tag, value in game_metrics(game, LearnedEvaluator(model, game.spec.name)).items():
                writer.add_scalar(tag, value, step)
            bar.set_postfix(td=f"{td_error:.3f}", score=f"{score:.2f}")
        else:
            bar.set_postfix(td=f"{td_error:.3f}")
        if iteration % args.save_every == 0:
            save()
        bar.update(args.games_per_iter)
    bar.close()
    save()
    writer.close()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ckpt_path, args.out)
    return ckpt_path


def parse_dataclass_args(cls: type, argv: list[str] | None, prog: str, description: str):
    """Command-line flags named after the fields of the ``Args`` dataclass ``cls``
    (``--games-per-iter 100``), a positional game name and repeatable ``--option KEY=VALUE``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("game", nargs="?", default=cls.game)
    for f in dataclasses.fields(cls):
        if f.name in ("game", "game_options"):
            continue
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        if f.type in ("bool",) or isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default)
        elif f.name == "hidden":
            parser.add_argument(flag, type=int, nargs="+", default=list(default))
        elif f.name in ("minutes",):
            parser.add_argument(flag, type=float, default=default)
        elif f.name == "out":
            parser.add_argument(flag, type=str, default=default)
        else:
            parser.add_argument(flag, type=type(default), default=default)
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a rule option of the game (e.g. n=6)")
    ns = parser.parse_args(argv)
    options = {}
    for item in ns.option:
        key, eq, value = item.partition("=")
        if not eq:
            parser.error(f"--option takes KEY=VALUE, got {item!r}")
        options[key] = int(value) if value.lstrip("-").isdigit() else value
    values = {f.name: getattr(ns, f.name) for f in dataclasses.fields(cls) if f.name != "game_options"}
    values["hidden"] = tuple(values["hidden"])
    if ns.game != cls.game and ns.run_dir == cls.run_dir:
        values["run_dir"] = f"runs/{ns.game}-td"
    return cls(**values, game_options=options)


def parse_args(argv: list[str] | None = None) -> Args:
    return parse_dataclass_args(Args, argv, "tablegym train", __doc__.split("\n\n")[0])


def cli_main(argv: list[str] | None = None) -> None:
    path = train(parse_args(argv))
    print(f"checkpoint: {path}")


if __name__ == "__main__":
    cli_main()
