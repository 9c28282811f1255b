"""What every trainer repeats, in one place: the run directory and its checkpoint (a rerun
resumes), the TensorBoard writer, the budget (games, iterations or minutes), the progress bar,
the eval and save schedule, the final file for ``--out``, a replay buffer, and command-line flags
made from an ``Args`` dataclass with a help line per field (its attribute docstring); the fields
and checks trainers share are declared in training/args.py.

A trainer keeps only its algorithm and reads top to bottom::

    learner = ValueLearner(args, game, net_config)    # what is trained, saved and resumed
    with Run(args, game, learner, total=args.total_games) as run:
        while run.next_iteration():
            batch = ...                       # 1. play
            run.played(len_of_games)          # counts games, moves the bar
            run.log({"losses/mse": ...})      # 2. learn, then log
            if run.due(args.eval_every): ...  # 3. evaluate
            if run.due(args.save_every): run.save()
        return run.finish()

A trainer of something other than one ValueMLP with Adam (n-tuple tables, a second network,
replay buffers kept across runs) gives its own ``Learner``: how to start or resume it, save it,
and write the ``--out`` file.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import os
import signal
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from tablegym.envs import known_games, make_game
from tablegym.envs.core import Game
from tablegym.models.checkpoint import load_checkpoint, save_checkpoint
from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.training.args import learning_device
from tablegym.training.files import (
    RunFolderError,
    copy_file_atomic,
    event_file_suffix,
    exit_refused,
    lock_run_dir,
    prepare_run_dir,
    run_dir_problem,
    write_text_atomic,
)
from tablegym.training.flags import OneLineParser, unwritable
from tablegym.training.progress import progress_bar

__all__ = [
    "Learner",
    "ReplayBuffer",
    "Run",
    "RunFolderError",
    "ValueLearner",
    "field_help",
    "metadata",
    "parse_dataclass_args",
    "start_or_resume",
]


class Learner:
    """What a run trains, saves and resumes (its networks, optimizer state, buffers...).

    ``Run`` calls ``start`` once, ``save`` at every checkpoint and ``export`` for ``--out``.
    """

    def start(self, checkpoint: Path | None) -> dict:
        """Fresh (``None``) or resumed from ``checkpoint``: that checkpoint's metadata, which
        gives the run's ``iteration``, ``games`` and ``train_seconds`` so far ({}: a fresh start)."""
        raise NotImplementedError

    def save(self, path: Path, progress: dict) -> None:
        """Write the checkpoint ``path`` (atomically); ``progress`` holds the run's ``iteration``,
        ``games`` and ``train_seconds``."""
        raise NotImplementedError

    def export(self, checkpoint: Path, out: Path, progress: dict) -> None:
        """Write the file ``--out`` names, after the last save (at ``progress``), atomically
        (``training.files``): by default a copy of the checkpoint."""
        copy_file_atomic(checkpoint, out)


class TorchLearner(Learner):
    """A trainer's torch ``model`` (its networks in one module) and ``optimizer``, saved and
    resumed together; the checkpoint's metadata keeps the network's ``shape`` under
    ``checkpoint_key``, and a run directory holding another shape is refused (ValueError). The
    vector-env trainers' learners (PPO, DQN, afterstate DQN of two-player games) subclass it."""

    checkpoint_key: str
    args: Any
    game: Game
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    shape: dict

    def start(self, checkpoint: Path | None) -> dict:
        if checkpoint is None:
            return {}
        payload = load_checkpoint(checkpoint, game=self.game.spec.name, options=self.game.spec.options)
        meta = payload["metadata"]
        key = self.checkpoint_key
        if meta.get(key) != self.shape:
            raise ValueError(f"{checkpoint} holds another network ({meta.get(key)}); use a new --run-dir or the same --hidden")
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        return meta

    def save(self, path: Path, progress: dict) -> None:
        meta = {
            "game": self.game.spec.name,
            "options": dict(self.game.spec.options),
            self.checkpoint_key: self.shape,
            "args": dataclasses.asdict(self.args),
            **progress,
        }
        save_checkpoint(path, model=self.model, metadata=meta, optimizer=self.optimizer)


def module_device(module: torch.nn.Module) -> torch.device:
    """Where ``module``'s weights are (``--device``): the batches that it reads go there."""
    return next(module.parameters()).device


class ValueLearner(Learner):
    """A ValueMLP and its Adam optimizer, seeded by ``args.seed`` (``args.lr`` the step) on
    ``args.device`` (the CPU where ``args`` names none: any namespace with a seed and a step will
    do, as ``start_or_resume``'s callers pass), and ``rng``, the numpy generator of the trainer's
    own draws (reseeded by the iteration on resume)."""

    def __init__(self, args: Any, game: Game, net_config: NetConfig) -> None:
        self.args, self.game, self.net_config = args, game, net_config
        torch.manual_seed(args.seed)
        self.rng = np.random.default_rng(args.seed)
        self.device = learning_device(getattr(args, "device", "cpu"))
        self.model = ValueMLP(net_config).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=args.lr)

    def start(self, checkpoint: Path | None) -> dict:
        if checkpoint is None:
            return {}
        payload = load_checkpoint(checkpoint, game=self.game.spec.name, options=self.game.spec.options)
        if NetConfig.from_dict(payload["metadata"]["net"]) != self.net_config:
            raise ValueError(
                f"{checkpoint} holds another network ({payload['metadata']['net']}); use a new --run-dir or the same --hidden"
            )
        self.model.load_state_dict(payload["model"])
        if "optimizer" in payload:
            self.optimizer.load_state_dict(payload["optimizer"])
        meta = payload["metadata"]
        self.rng = np.random.default_rng([self.args.seed, meta["iteration"]])
        return meta

    def metadata(self, progress: dict) -> dict:
        """The checkpoint's metadata record (``metadata``) at ``progress``."""
        return metadata(
            self.args, self.game, self.net_config, progress["iteration"], progress["games"], progress["train_seconds"]
        )

    def save(self, path: Path, progress: dict) -> None:
        save_checkpoint(path, model=self.model, metadata=self.metadata(progress), optimizer=self.optimizer)


class Run:
    """One training run of ``learner``: ``run_dir/checkpoint.pt`` (resumed when it exists),
    TensorBoard logs and ``args.json`` beside it, and a budget: ``total`` games, ``iterations``
    (either may be None: no limit) and ``args.minutes`` minutes (None or 0: no limit). Every
    budget counts the whole run folder, the resumed runs included: a command run again with the
    same flags has nothing left to do and says so. ``budget`` names the flag behind ``total`` or
    ``iterations`` in the messages (``--total-steps 2000000``); ``unit`` what the bar counts.

    The run says what it did: a resume, a budget already spent, why it stopped (a budget, or
    Ctrl-C: the first finishes the iteration, saves and stops; a second stops at once, saving
    nothing) and every path it wrote.

    The run folder is this run's alone: it is locked (``run_dir/.lock``, training.files) from
    the start to ``finish`` or the end of the process, so a second training into it is refused
    (RunFolderError, one line naming the holder) before it reads or writes anything there; a
    symbolic link at ``run_dir`` is refused; every file the run writes there replaces what was
    there (a link included) rather than writing through it.

    A trainer holds it in a ``with`` block: leaving the block by an exception gives back the
    Ctrl-C handler, the bar, the logs and the folder's lock (the last checkpoint stands; nothing
    is saved), so that a caller in the same process (a notebook, a test) gets its Ctrl-C back."""

    def __init__(
        self,
        args: Any,
        game: Game,
        learner: Learner,
        *,
        total: int | None = None,
        iterations: int | None = None,
        desc: str | None = None,
        budget: str | None = None,
        unit: str = "game",
    ) -> None:
        self.args, self.game, self.learner = args, game, learner
        self._closed = False
        self.dir = Path(args.run_dir)
        problem = out_problem(args)
        if problem:
            raise ValueError(problem)
        self.lock = lock_run_dir(prepare_run_dir(self.dir))
        try:
            self.checkpoint = self.dir / "checkpoint.pt"
            meta = learner.start(self.checkpoint if self.checkpoint.exists() else None)
            self.iteration = int(meta.get("iteration", 0))
            self.games = int(meta.get("games", 0))
            seconds_done = float(meta.get("train_seconds", 0.0))
            self.total, self.iterations = total, iterations
            self.budget = budget or (
                f"{total:,} games" if total is not None else f"{iterations:,} iterations" if iterations is not None else ""
            )
            self.unit = unit
            self.writer = SummaryWriter(str(self.dir), filename_suffix=event_file_suffix())
            text = json.dumps(dataclasses.asdict(args), default=list, indent=1)
            self.writer.add_text("args", text)
            write_text_atomic(self.dir / "args.json", text)
            self.t_start = time.perf_counter() - seconds_done
            self.last_save = time.perf_counter()
            self.deadline = args.minutes * 60.0 if args.minutes else None
            self.interrupted = False
            if meta:
                print(
                    f"resuming {self.checkpoint}: {self.games:,} games"
                    + (f" in {self.iteration} iterations" if self.iteration else "")
                    + f", {seconds_done / 60:.1f} min trained"
                )
                if not self.in_budget():
                    print(
                        f"nothing left to do: {self.why_stopped()} was reached by the runs before; "
                        f"raise {self._extend()} to train on"
                    )
            # Under a time budget the game count is open-ended: the bar then shows games and rate only.
            counts, count = (self.total, self.games) if unit == "game" else (self.iterations, self.iteration)
            self.bar = progress_bar(
                total=None if self.deadline else counts,
                initial=count,
                enabled=getattr(args, "progress", True),
                unit=unit,
                desc=desc,
            )
            self._ticked = self.iteration  # iterations the bar has counted
            self._previous_handler = _stop_on_interrupt(self)
        except BaseException:  # refused (another network in the folder...): the folder is free again
            self.lock.release()
            raise

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> None:
        self.close()

    def close(self) -> None:
        """Give back what the run holds (the Ctrl-C handler, the bar, the logs, the folder's lock)
        without saving; once: ``finish`` has done it, and a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self.bar.close()
        _restore(self._previous_handler)
        self.writer.close()
        self.lock.release()

    def in_budget(self, games: int | None = None) -> bool:
        """Whether games, iterations and time are left, counting ``games`` games (default: those
        played; a trainer with games in flight counts those too), and no Ctrl-C came."""
        games = self.games if games is None else games
        return (
            not self.interrupted
            and (self.total is None or games < self.total)
            and (self.iterations is None or self.iteration < self.iterations)
            and (self.deadline is None or self.seconds() < self.deadline)
        )

    def why_stopped(self) -> str:
        """What ended the run (or would end it now): Ctrl-C, the budget of games or iterations,
        the time budget; "" while all are left."""
        if self.interrupted:
            return "Ctrl-C"
        if (
            self.total is not None
            and self.games >= self.total
            or (self.iterations is not None and self.iteration >= self.iterations)
        ):
            return f"the budget of {self.budget}"
        if self.deadline is not None and self.seconds() >= self.deadline:
            return f"the time budget of --minutes {self.args.minutes:g}"
        return ""

    def _extend(self) -> str:
        """The flag that would give the run more to do."""
        if self.deadline is not None and self.seconds() >= self.deadline:
            return "--minutes"
        return self.budget.split(" ")[0] if self.budget.startswith("--") else "the budget"

    def next_iteration(self) -> bool:
        """Start the next iteration while games, iterations and time are left (the bar moves
        by one when it counts iterations)."""
        if not self.in_budget():
            return False
        self._tick()
        self.iteration += 1
        return True

    def _tick(self) -> None:
        """Move a bar of iterations to the iterations done."""
        if self.unit != "game" and self.iteration > self._ticked:
            self.bar.update(self.iteration - self._ticked)
            self._ticked = self.iteration

    def seconds(self) -> float:
        """Training time so far, resumed runs included."""
        return time.perf_counter() - self.t_start

    def played(self, games: int) -> None:
        """Count ``games`` more games (and move the bar when it counts games)."""
        self.games += games
        if self.unit == "game":
            self.bar.update(games)

    def log(self, scalars: dict[str, float]) -> None:
        """TensorBoard scalars by tag, at the current game count."""
        for tag, value in scalars.items():
            self.writer.add_scalar(tag, value, self.games)

    def due(self, every: int) -> bool:
        """Whether this iteration is one of every ``every`` (0: never)."""
        return bool(every) and self.iteration % every == 0

    def due_minutes(self, minutes: float) -> bool:
        """Whether ``minutes`` have passed since the last save (or the start of this run)."""
        return time.perf_counter() - self.last_save >= 60.0 * minutes

    def progress(self) -> dict:
        """The run's ``iteration``, ``games`` and ``train_seconds`` (what a checkpoint records)."""
        return {"iteration": self.iteration, "games": self.games, "train_seconds": self.seconds()}

    def save(self) -> dict:
        """Checkpoint the learner; the progress saved."""
        progress = self.progress()
        self.learner.save(self.checkpoint, progress)
        self.last_save = time.perf_counter()
        return progress

    def finish(self) -> Path:
        """Save, write ``args.out``, give back what the run holds (``close``) and say why the run
        stopped and what it wrote; the checkpoint's path."""
        self._tick()
        why = self.why_stopped() or "the trainer's own end"
        progress = self.save()
        wrote = [str(self.checkpoint)]
        if self.args.out:
            self.learner.export(self.checkpoint, Path(self.args.out), progress)
            wrote.append(f"{self.args.out} (--out)")
        self.close()
        counted = f"{self.games:,} games" + (f" in {self.iteration:,} iterations" if self.iteration else "")
        print(f"stopped by {why}: {counted}, {self.seconds() / 60:.1f} min of training in {self.dir} in all")
        print(
            f"wrote {', '.join(wrote)}; TensorBoard: tensorboard --logdir {self.dir}; "
            f"the same command resumes{' (raise ' + self._extend() + ' to train on)' if why != 'Ctrl-C' else ''}"
        )
        return self.checkpoint


def _stop_on_interrupt(run: Run) -> Any:
    """Make the first Ctrl-C stop ``run`` at the end of its iteration (it then saves) and a second
    one stop at once; the handler it replaced (None off the main thread, where Python takes no
    signal handler)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum: int, frame: Any) -> None:
        if run.interrupted:
            raise KeyboardInterrupt
        run.interrupted = True
        run.bar.write("Ctrl-C: stopping after this iteration, then saving (Ctrl-C again: stop now, unsaved)")

    return signal.signal(signal.SIGINT, stop)


def _restore(handler: Any) -> None:
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)


class ReplayBuffer:
    """A ring buffer of (features, target) pairs (binary features by default)."""

    def __init__(self, size: int, num_features: int, dtype: type = np.uint8) -> None:
        self.x: np.ndarray = np.zeros((size, num_features), dtype=dtype)
        self.y = np.zeros(size, dtype=np.float32)
        self.n = 0
        self.pos = 0

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        for i in range(0, len(y), len(self.y)):
            xs, ys = x[i : i + len(self.y)], y[i : i + len(self.y)]
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
    learner = ValueLearner(args, game, net_config)
    meta = learner.start(Path(ckpt_path) if Path(ckpt_path).exists() else None)
    return (
        learner.model,
        learner.optimizer,
        meta.get("iteration", 0),
        meta.get("games", 0),
        meta.get("train_seconds", 0.0),
        learner.rng,
    )


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
        klass_node = tree.body[0]
        if not isinstance(klass_node, ast.ClassDef):  # the source of a class is its class statement
            continue
        body = klass_node.body
        for node, after in zip(body, body[1:]):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                out[node.target.id] = " ".join(after.value.value.split())
    return out


def parse_dataclass_args(cls: type[Any], argv: list[str] | None, prog: str, description: str) -> Any:
    """Command-line flags named after the fields of the ``Args`` dataclass ``cls``
    (``--games-per-iter 100``), a positional game name and repeatable ``--option KEY=VALUE``.

    A tuple field takes one or more values (``--hidden 64 32``); a field's ``metadata`` may give
    argparse's ``type``, ``nargs`` or ``metavar`` for its flag. An ``Args`` that refuses its
    values (a ``ValueError`` from ``__post_init__``) is a usage error.
    """
    parser = OneLineParser(prog=prog, description=description, formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    helps = field_help(cls)
    parser.add_argument("game", nargs="?", default=cls.game, help=helps.get("game", "the game to train"))
    tuples = set()
    suffix = getattr(cls, "RUN_SUFFIX", "td")
    shown = f"runs/GAME-{suffix}" if cls.run_dir == f"runs/{cls.game}-{suffix}" else cls.run_dir
    for f in dataclasses.fields(cls):
        if f.name in ("game", "game_options"):
            continue
        flag = "--" + f.name.replace("_", "-")
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            raise TypeError(f"{cls.__name__}.{f.name} has no default; every field of an Args dataclass needs one")
        text = helps.get(f.name, " ")
        kw: dict[str, Any]
        if f.type in ("bool",) or isinstance(default, bool):
            kw = dict(action=argparse.BooleanOptionalAction)
        elif isinstance(default, tuple):
            tuples.add(f.name)
            kw = dict(type=type(default[0]) if default else int, nargs="+")
        elif f.name in ("minutes",):
            kw = dict(type=float)
        elif default is None or f.name in ("out", "address"):
            kw = dict(type=str)
        elif f.name == "backend":
            kw = dict(choices=("process", "ray"))
        else:
            kw = dict(type=type(default))
        if f.name == "run_dir":  # its default follows the game trained
            parser.add_argument(flag, default=argparse.SUPPRESS, type=str, metavar="RUN_DIR", help=f"{text} (default: {shown})")
            continue
        parser.add_argument(flag, default=default, help=text, **{**kw, **f.metadata})
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a rule option of the game (e.g. n=6)")
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
    if ns.game in known_games():  # the rules the run trains under, refused now rather than at the first deal
        try:
            make_game(ns.game, **options)
        except (ValueError, TypeError) as err:
            parser.error(str(err))
    values = {f.name: getattr(ns, f.name) for f in dataclasses.fields(cls) if f.name not in ("game_options", "run_dir")}
    values.update({name: tuple(values[name]) for name in tuples})
    default_dir = cls.run_dir if ns.game == cls.game else f"runs/{ns.game}-{suffix}"  # a game's own default folder
    values["run_dir"] = getattr(ns, "run_dir", default_dir)
    try:
        args = cls(**values, game_options=options)
    except ValueError as err:
        parser.error(str(err))
    problem = (args.run_dir and run_dir_problem(args.run_dir)) or out_problem(args)
    if problem:
        parser.error(problem)
    if args.run_dir:
        try:
            check_creatable(Path(args.run_dir))
        except OSError as err:
            parser.error(f"--run-dir {args.run_dir!r} cannot be made: {err.strerror or err}")
    return args


def train_command(train: Callable[[Any], Path], args: Any, prog: str, *, report: bool = True) -> int:
    """``tablegym train GAME``'s run of a game's own trainer: ``train(args)``, then the path of the
    checkpoint it returns (``report``; off for a trainer that says what it wrote itself). A run
    folder another training holds is one line, exit 2 (``training.files.exit_refused``)."""
    try:
        path = train(args)
    except RunFolderError as err:
        exit_refused(prog, err)
    if report:
        print(f"checkpoint: {path}")
    return 0


def trainer_cli(
    cls: type, train: Callable[[Any], Path], prog: str, doc: str, *, report: bool = True
) -> tuple[Callable[[list[str] | None], Any], Callable[[list[str] | None], int]]:
    """A game's own trainer's ``parse_args(argv)`` and ``cli_main(argv)`` (``tablegym train
    GAME``): the flags of ``cls`` under ``prog``, described by the first paragraph of ``doc``,
    and the run through ``train_command``, so that a game's trainer declares only its ``Args``
    and its ``train``."""

    def parse_args(argv: list[str] | None = None) -> Any:
        return parse_dataclass_args(cls, argv, prog, doc.split("\n\n")[0])

    def cli_main(argv: list[str] | None = None) -> int:
        return train_command(train, parse_args(argv), prog, report=report)

    return parse_args, cli_main


def out_problem(args: Any) -> str | None:
    """Why ``args.out`` (when given) could not be written, or None: as ``--csv``'s check
    (training.flags.unwritable), its folder must exist, unless it is the run folder, which the
    run makes. Nothing is made for it: a mistyped folder is refused, not created."""
    out = getattr(args, "out", None)
    if not out:
        return None
    run_dir = getattr(args, "run_dir", None)
    if run_dir and not os.path.isdir(run_dir) and os.path.dirname(os.path.abspath(out)) == os.path.abspath(run_dir):
        return None  # in the run folder the run is about to make
    return unwritable("--out", out)


def check_creatable(folder: Path) -> None:
    """Raise the OSError that making ``folder`` (and its missing parents) would raise, leaving
    nothing behind: a run refuses a folder it cannot write before any work, and a run refused
    later for another reason has made no folder."""
    missing = []
    probe = folder.absolute()
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    finally:
        for made in missing:  # the deepest first
            if made.is_dir():
                made.rmdir()
