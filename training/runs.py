"""What every trainer repeats, in one place: the run directory and its checkpoint (a rerun
resumes), the TensorBoard writer, the budget (games or minutes), the progress bar, the eval and
save schedule, the final copy to ``--out``, a replay buffer, and command-line flags made from an
``Args`` dataclass with a help line per field (its attribute docstring).

A trainer keeps only its algorithm and reads top to bottom::

    run = Run(args, game, net_config, total=args.total_games)
    while run.next_iteration():
        batch = ...                       # 1. play
        run.played(len_of_games)          # counts games, moves the bar
        run.log({"losses/mse": ...})      # 2. learn, then log
        if run.due(args.eval_every): ...  # 3. evaluate
        if run.due(args.save_every): run.save()
    return run.finish()
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import shutil
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from tablegym.envs.core import Game
from tablegym.models.checkpoint import load_checkpoint, save_checkpoint
from tablegym.models.value_net import NetConfig, ValueMLP

__all__ = ["ReplayBuffer", "Run", "field_help", "metadata", "parse_dataclass_args", "start_or_resume"]


class Run:
    """One training run of a ValueMLP: ``run_dir/checkpoint.pt`` (resumed when it exists),
    TensorBoard logs beside it, and a budget of ``total`` games or ``args.minutes`` minutes."""

    def __init__(self, args: Any, game: Game, net_config: NetConfig, *, total: int) -> None:
        self.args, self.game, self.net_config, self.total = args, game, net_config, total
        self.dir = Path(args.run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.checkpoint = self.dir / "checkpoint.pt"
        (self.model, self.optimizer, self.iteration, self.games, seconds_done,
         self.rng) = start_or_resume(self.checkpoint, game, net_config, args)
        self.writer = SummaryWriter(str(self.dir))
        self.writer.add_text("args", json.dumps(dataclasses.asdict(args), default=list, indent=1))
        self.t_start = time.perf_counter() - seconds_done
        self.deadline = None if args.minutes is None else args.minutes * 60.0
        # Under a time budget the game count is open-ended: the bar then shows games and rate only.
        self.bar = tqdm(total=None if self.deadline else total, initial=self.games,
                        disable=not getattr(args, "progress", True), unit="game")

    def next_iteration(self) -> bool:
        """Start the next iteration while games and time are left."""
        if self.games >= self.total or (self.deadline is not None and self.seconds() >= self.deadline):
            return False
        self.iteration += 1
        return True

    def seconds(self) -> float:
        """Training time so far, resumed runs included."""
        return time.perf_counter() - self.t_start

    def played(self, games: int) -> None:
        self.games += games

    def log(self, scalars: dict[str, float]) -> None:
        """TensorBoard scalars by tag, at the current game count."""
        for tag, value in scalars.items():
            self.writer.add_scalar(tag, value, self.games)

    def due(self, every: int) -> bool:
        """Whether this iteration is one of every ``every`` (0: never)."""
        return bool(every) and self.iteration % every == 0

    def save(self) -> None:
        meta = metadata(self.args, self.game, self.net_config, self.iteration, self.games, self.seconds())
        save_checkpoint(self.checkpoint, model=self.model, metadata=meta, optimizer=self.optimizer)

    def finish(self) -> Path:
        """Close the bar, save, close the logs and copy the checkpoint to ``args.out``."""
        self.bar.close()
        self.save()
        self.writer.close()
        if self.args.out:
            Path(self.args.out).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.checkpoint, self.args.out)
        return self.checkpoint


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


def metadata(args: Any, game: Game, net: NetConfig, iteration: int, games: int, seconds: float) -> dict:
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


def field_help(cls: type) -> dict[str, str]:
    """The attribute docstrings of dataclass ``cls`` (the string under each field), by field;
    a field a subclass redeclares without one keeps its base class's."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body
        for node, after in zip(body, body[1:]):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                out[node.target.id] = " ".join(after.value.value.split())
    return out


def parse_dataclass_args(cls: type, argv: list[str] | None, prog: str, description: str):
    """Command-line flags named after the fields of the ``Args`` dataclass ``cls``
    (``--games-per-iter 100``), a positional game name and repeatable ``--option KEY=VALUE``."""
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    helps = field_help(cls)
    parser.add_argument("game", nargs="?", default=cls.game, help=helps.get("game", "the game to train"))
    for f in dataclasses.fields(cls):
        if f.name in ("game", "game_options"):
            continue
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        text = helps.get(f.name, " ")
        if f.type in ("bool",) or isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=text)
        elif f.name == "hidden":
            parser.add_argument(flag, type=int, nargs="+", default=list(default), help=text)
        elif f.name in ("minutes",):
            parser.add_argument(flag, type=float, default=default, help=text)
        elif f.name in ("out", "address"):
            parser.add_argument(flag, type=str, default=default, help=text)
        elif f.name == "backend":
            parser.add_argument(flag, choices=("process", "ray"), default=default, help=text)
        else:
            parser.add_argument(flag, type=type(default), default=default, help=text)
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a rule option of the game (e.g. n=6)")
    ns = parser.parse_args(argv)
    if hasattr(ns, "backend"):
        from tablegym.training.parallel import BackendError, check_backend

        try:
            check_backend(ns.backend, ns.address)
        except BackendError as err:
            parser.error(str(err))
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


