"""Imitation: PPO's policy and critic fitted to a teacher's games, as a start for PPO.

``tablegym train GAME --algo imitate --teacher SPEC [--games N] [--workers W] [--run-dir D]``: the
teacher (any agent spec of the game: a Monte-Carlo planner, a search) plays N seeded games, and
every decision it makes is written down: the mover's observation, the legal moves, the move
chosen, and the game's final return for the mover. The actor of training/ppo.py is then fitted
to choose the teacher's move (cross-entropy over the legal moves only) and its critic to predict
the return. ``run_dir/checkpoint.pt`` is in PPO's format: ``policy:path=RUN/checkpoint.pt`` plays
it, and ``tablegym train GAME --algo ppo --run-dir RUN`` goes on from it by reinforcement (its
``--minutes`` count the teacher's games and the fit too: they are this run's training time).

Why: where a random policy never wins (Friday: no win in 5,600 random games) PPO from scratch
settles in a local optimum; a planner's games show the policy what winning play looks like.

The games are kept in ``run_dir/demos/``, a file per chunk of games, so a rerun plays only the
chunks that are missing; the last tenth of the chunks is held out to measure how often the fitted
policy picks the teacher's move on games it did not see. The script reads top to bottom:
arguments, the recording, the data, the fit, the save.
"""

from __future__ import annotations

import json
import sys
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from torch.nn import functional as F

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs import load, make_game, plugin
from tablegym.envs.core import Game, State
from tablegym.envs.limits import load_npz
from tablegym.models.policy import MASKED
from tablegym.training.args import TrainerArgs, require_at_least, require_positive, require_widths
from tablegym.training.files import RunFolderError, open_atomic, real_folder
from tablegym.training.ppo import PPOLearner
from tablegym.training.runs import Run, module_device, parse_dataclass_args
from tablegym.training.vector_rl import env_id_of, evaluate


@dataclass
class Args(TrainerArgs):
    RUN_SUFFIX = "imitate"  # runs/GAME-imitate unless --run-dir says otherwise

    game: str = "friday"
    algo: str = "imitate"
    """the algorithm (this trainer: imitate)"""
    teacher: str = ""
    """the agent whose moves are imitated: any agent spec of the game (mc:rollouts=64,horizon=2,eval=learned)"""
    games: int = 200
    """teacher games to record (those already in run_dir/demos count)"""
    chunk: int = 10
    """games a demonstration file holds (the unit a stopped recording resumes from)"""
    workers: int = 1
    """processes playing the teacher's games"""
    record_minutes: float = 0.0
    """wall-clock budget for the recording (0: none): chunks not begun by then are not played"""
    opening_plies: int = 2
    """two-player games: random moves for both seats at the start of each game, so that a
    deterministic teacher does not play one game again and again"""
    seed: int = 1
    """seed of the deals (evaluations use seed 0, so the policy is judged on other deals) and of
    the network"""
    epochs: int = 20
    """passes over the demonstrations (a rerun goes on to this many)"""
    batch_size: int = 512
    """decisions a gradient step"""
    lr: float = 1e-3
    """Adam's step size in the fit"""
    ppo_lr: float = 3e-4
    """Adam's step size the checkpoint hands on (tablegym train --algo ppo resumes with it)"""
    vf_coef: float = 0.5
    """weight of the critic's loss"""
    hidden: tuple[int, ...] = (128, 128)
    """hidden layer widths of the actor and of the critic (ReLU; PPO resumes only the same)"""
    eval_games: int = 200
    """games of the greedy policy after each epoch (0: none): its mean return on the vector env
    (a single-player game's score, or the return against a random player)"""
    threads: int = 1
    """torch threads"""
    minutes: float = 0.0
    """wall-clock budget for the whole run, recording included (0: none)"""
    run_dir: str = "runs/friday-imitate"
    """run directory: demos/, checkpoint.pt (PPO's format), TensorBoard logs"""
    out: str | None = None
    """where to write the critic as a tablegym checkpoint for eval=learned:PATH"""

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.teacher:
            raise ValueError("--teacher is required: the agent spec to imitate (e.g. mc:rollouts=64,horizon=2,eval=learned)")
        require_at_least(self, 1, ("games", "chunk", "workers", "epochs", "batch_size", "threads"))
        require_at_least(self, 0, ("record_minutes", "minutes", "opening_plies", "eval_games"))
        require_positive(self, ("lr", "ppo_lr"))
        require_widths(self)


# --------------------------------------------------------------------------------------------
# 1. The recording: the teacher plays, a recorder writes down each of its decisions
# --------------------------------------------------------------------------------------------


class Recorder:
    """The teacher as an agent that also keeps what it saw (observation, legal moves) and chose."""

    def __init__(self, teacher: Any, actions: int) -> None:
        self.teacher, self.actions = teacher, actions
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.moves: list[int] = []
        self.players: list[int] = []

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        player = state.current_player()
        move = int(self.teacher(state, rng))
        mask = np.zeros(self.actions, dtype=bool)
        mask[np.asarray(state.legal_actions(), dtype=np.int64)] = True
        self.obs.append(np.asarray(state.observation(player), dtype=np.float32).ravel())
        self.masks.append(mask)
        self.moves.append(move)
        self.players.append(player)
        return move


def record_chunk(task: tuple[str, str, str, int, int, int, int, int]) -> dict[str, np.ndarray]:
    """Games ``first .. first+count-1`` of the deals seeded ``seed``, played by the teacher in
    every seat (stopped at the record's ``max_decisions``, as single-player runs are): the
    decisions' arrays, each with the mover's final return (a module-level function so that it
    runs in a worker process)."""
    from tablegym.envs import deal
    from tablegym.models.agents import make_agent
    from tablegym.search.play import play_game

    name, options, teacher, seed, first, count, opening_plies, actions = task
    game = make_game(name, **json.loads(options))
    record = plugin(name)
    chance = load(record.chance) if record.chance else None
    recorder = Recorder(make_agent(game, teacher), actions)
    returns, results, games = [], [], []
    for index in range(first, first + count):
        start, rng = deal(game, seed, index)
        before = len(recorder.moves)
        played = play_game(
            game,
            [recorder] * game.spec.num_players,
            rng,
            opening_plies if game.spec.num_players > 1 else 0,
            start=start,
            chance=chance,
            max_decisions=record.max_decisions,
        )
        returns += [played.returns[p] for p in recorder.players[before:]]
        games += [index - first] * (len(recorder.moves) - before)
        results.append(played.returns[0])
    return {
        "obs": np.stack(recorder.obs),
        "masks": np.stack(recorder.masks),
        "moves": np.asarray(recorder.moves, dtype=np.int64),
        "players": np.asarray(recorder.players, dtype=np.int64),
        "returns": np.asarray(returns, dtype=np.float32),
        "games": np.asarray(games, dtype=np.int64),
        "game_returns": np.asarray(results, dtype=np.float32),
    }


def record(args: Args, run: Run, actions: int) -> None:
    """The chunks of ``args.games`` not yet in ``run_dir/demos``, played in ``args.workers``
    processes and written as each finishes (np.savez; a file appears only whole)."""
    demos = real_folder(run.dir / "demos")
    options = json.dumps(args.game_options, sort_keys=True)
    todo = [
        (args.game, options, args.teacher, args.seed, first, min(args.chunk, args.games - first), args.opening_plies, actions)
        for first in range(0, args.games, args.chunk)
        if not _chunk_path(demos, first).exists()
    ]
    deadline = time.perf_counter() + 60 * args.record_minutes if args.record_minutes else None
    with ProcessPoolExecutor(args.workers) as pool:
        pending = {}
        queue = iter(todo)

        def submit() -> None:
            task = next(queue, None)
            if task is not None and (deadline is None or time.perf_counter() < deadline) and run.in_budget():
                pending[pool.submit(record_chunk, task)] = task

        for _ in range(args.workers):
            submit()
        while pending:
            done = next(as_completed(pending))
            task = pending.pop(done)
            arrays = done.result()
            with open_atomic(_chunk_path(demos, task[4])) as f:
                np.savez(f, **arrays)
            run.played(task[5])
            run.log({"teacher/mean_return": float(arrays["game_returns"].mean())})
            submit()


def _chunk_path(demos: Path, first: int) -> Path:
    return demos / f"games_{first:07d}.npz"


# --------------------------------------------------------------------------------------------
# 2. The data: every recorded chunk, the last tenth held out
# --------------------------------------------------------------------------------------------


def load_demos(demos: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], int]:
    """The decisions of the training chunks, those of the held-out chunks (the last tenth, rounded
    down: none under ten chunks) and the number of games recorded."""
    files = sorted(demos.glob("games_*[0-9].npz"))
    if not files:
        raise ValueError(f"no demonstrations in {demos}")
    held = len(files) // 10
    chunks = []
    for f in files:  # plain arrays, their headers and sizes checked before they are read (LimitError)
        try:
            chunks.append(load_npz(f))
        except (OSError, zipfile.BadZipFile) as err:
            raise ValueError(f"demonstrations {str(f)!r} are damaged: {err}") from None
    games = sum(len(c["game_returns"]) for c in chunks)

    def join(part: list[dict]) -> dict[str, np.ndarray]:
        return {k: np.concatenate([c[k] for c in part]) for k in ("obs", "masks", "moves", "returns")} if part else {}

    return join(chunks[: len(chunks) - held]), join(chunks[len(chunks) - held :]), games


def agreement(net: torch.nn.Module, data: dict[str, np.ndarray]) -> float:
    """The share of decisions where the greedy masked policy picks the teacher's move."""
    device = module_device(net)
    with torch.no_grad():
        obs, masks = torch.as_tensor(data["obs"], device=device), torch.as_tensor(data["masks"], device=device)
        logits = net.actor(obs).masked_fill(~masks, MASKED)
        return float((logits.argmax(-1).cpu().numpy() == data["moves"]).mean())


# --------------------------------------------------------------------------------------------
# 3. The fit and the save
# --------------------------------------------------------------------------------------------


class ImitationLearner(PPOLearner):
    """PPO's actor-critic, saved with a fresh Adam at ``--ppo-lr`` (what PPO resumes with); the
    fit has an Adam of its own."""

    def __init__(self, args: Args, game: Game, inputs: int, actions: int) -> None:
        super().__init__(args, game, inputs, actions)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=args.ppo_lr, eps=1e-5)
        self.fit = torch.optim.Adam(self.net.parameters(), lr=args.lr)


def main(argv: list[str] | None = None) -> int:
    args = parse_dataclass_args(Args, argv, "tablegym train GAME --algo imitate", __doc__.splitlines()[0])
    try:
        env_id = env_id_of(args.game)
        game = make_game(args.game, **args.game_options)
        from tablegym.models.agents import make_agent

        make_agent(game, args.teacher)  # a bad spec is one line now, not a traceback in a worker
    except (ValueError, TypeError) as err:
        print(f"tablegym train GAME --algo imitate: error: {err}", file=sys.stderr)
        return 2
    shapes = gymnasium.make_vec(env_id, num_envs=1, **args.game_options)  # PPO's network: the vector env's sizes
    inputs, actions = int(np.prod(shapes.single_observation_space.shape)), int(shapes.single_action_space.n)
    shapes.close()
    learner = ImitationLearner(args, game, inputs, actions)
    net = learner.net
    try:
        run = Run(
            args,
            game,
            learner,
            iterations=args.epochs,
            desc=f"imitate {args.game}",
            budget=f"--epochs {args.epochs}",
            unit="epoch",
        )
    except ValueError as err:  # the run folder in use by another training, or a checkpoint of another network
        print(f"tablegym train GAME --algo imitate: error: {err}", file=sys.stderr)
        return 2

    with run:
        try:
            record(args, run, actions)
        except RunFolderError as err:  # run_dir/demos is a link, not the run's own folder
            print(f"tablegym train GAME --algo imitate: error: {err}", file=sys.stderr)
            return 2
        try:
            train, held, games = load_demos(run.dir / "demos")
        except ValueError as err:  # a demonstrations file over a budget (tablegym.envs.limits), forged or damaged
            print(f"tablegym train GAME --algo imitate: error: {err}", file=sys.stderr)
            return 2
        run.games = games
        run.bar.write(
            f"{games} teacher games, {len(train['moves']):,} decisions to fit"
            + (f", {len(held['moves']):,} held out" if held else "")
        )
        dev = learner.device  # the demonstrations go where the network learns
        x, masks = torch.as_tensor(train["obs"], device=dev), torch.as_tensor(train["masks"], device=dev)
        moves, returns = torch.as_tensor(train["moves"], device=dev), torch.as_tensor(train["returns"], device=dev)
        rng = torch.Generator().manual_seed(args.seed)
        while run.next_iteration():
            order = torch.randperm(len(moves), generator=rng)
            for start in range(0, len(order), args.batch_size):
                b = order[start : start + args.batch_size].to(dev)  # drawn on the CPU: the same order on any device
                logits = net.actor(x[b]).masked_fill(~masks[b], MASKED)
                policy_loss = F.cross_entropy(logits, moves[b])
                value_loss = F.mse_loss(net.value(x[b]), returns[b])
                learner.fit.zero_grad()
                (policy_loss + args.vf_coef * value_loss).backward()
                learner.fit.step()
            scalars = {
                "losses/policy": policy_loss.item(),
                "losses/value": value_loss.item(),
                "imitation/agreement_train": agreement(net, train),
            }
            if held:
                scalars["imitation/agreement_held_out"] = agreement(net, held)
            if args.eval_games:
                scalars["eval/greedy_return"] = evaluate(net, env_id, args.eval_games, seed=0, options=dict(args.game_options))
            run.log(scalars)
            run.bar.write(f"epoch {run.iteration}: " + ", ".join(f"{k.split('/')[1]} {v:.3f}" for k, v in scalars.items()))
            run.save()
        run.finish()
        return 0


if __name__ == "__main__":
    sys.exit(main())
