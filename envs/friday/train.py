"""Iterated self-play for Friday: a ValueMLP learns the return of a state, then searches with it.

Read it top to bottom (CleanRL style). Each iteration:

1. play ``games_per_iter`` games, levels in turn, in parallel processes, with a search that has
   the CURRENT network at its leaves (``--planner``):

   - ``bestfirst``: Fridai's best-first search, ``nodes`` states per decision; the first
     iteration, with no network yet, uses Fridai's own score;
   - ``mc``: Monte-Carlo planning (envs/friday/rollout.py), ``rollouts`` rollouts per legal
     action cut after ``horizon`` turns, where the network values them; the first iteration
     plays the rollouts to the end. Why: this planner wins, so its games teach what a win
     looks like, which Fridai's search (0 wins) never could.

   Every decision state is recorded as its input vector (models/learned_friday.py);
2. the target of every state is the Monte-Carlo return of its game (``--target``): the final
   score, or only its progress terms, plus 100 for a win, or the ``outcome`` value (score + 10
   per step reached + 100 for a win); see models/learned_friday.py for why not P(win) alone.
   Before fitting, the
   network's predictions on these new games are compared with what happened (a held-out loss
   and a 10-bin calibration table in TensorBoard);
3. fit the network on a replay buffer of recent states (Adam, MSE on return / SCALE), either
   ``epochs`` buffers' worth of samples or a fixed ``steps_per_iter``. Why the cap: every state
   of a game shares one noisy return, so many passes over a few thousand games memorise them (the
   held-out loss of the Monte-Carlo planner's games rose after about 1,000 steps). Beside it
   a second network of the same shape learns the probability of winning (cross-entropy on
   won/lost); the search does not use it (it cannot rank two states of a level where almost
   every game is lost), but its calibration on the new games, predicted against observed win
   rate in 10 bins, is logged and written to ``calibration.md`` with the return's;
4. save the network of this iteration (``nets/iterNNNN.pt``, what the next iteration's searches
   load), the checkpoint and the buffer: a rerun with the same ``run_dir`` resumes;
5. every ``eval_every`` iterations play ``eval_games`` games per level with the learned and with
   Fridai's evaluator in the same search, at the same budget, on the same deals and log both win
   rates and mean scores.

    tablegym train friday --minutes 30 --workers 2 --run-dir runs/friday-value
    tablegym train friday --planner mc --target outcome --minutes 60 --run-dir runs/friday-mc
    tensorboard --logdir runs
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from tablegym.envs.friday.core import FridayGame, deal, sample_chance
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import CheckpointError, first_line, load_checkpoint, save_checkpoint
from tablegym.envs.friday.learned import NUM_FEATURES, RETURNS, SCALE, TARGETS, features_of, load_friday_model, target_of
from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.training.runs import ReplayBuffer, metadata, parse_dataclass_args, start_or_resume
from tablegym.training.parallel import InProcessExecutor, executor

TRAIN_SEED_OFFSET = 1_000_003
"""Self-play deals come from seed + this, so they never repeat the evaluation deals (seed 0...)."""


@dataclass
class Args:
    game: str = "friday"
    """only friday (the positional game name of ``tablegym train``)"""
    game_options: dict = field(default_factory=dict)
    """rule options: only the defaults (the learned evaluator checks them when it loads)"""
    seed: int = 0
    """seeds torch, numpy and the self-play deals"""
    minutes: float | None = 10.0
    """stop after this much wall time (None: only iterations count)"""
    iterations: int = 1_000
    """stop after this many iterations"""
    games_per_iter: int = 200
    """self-play games per iteration (levels 1-4 in turn)"""
    planner: str = "bestfirst"
    """the search that plays with the network: bestfirst (Fridai's) or mc (Monte-Carlo planning)"""
    nodes: int = 2_000
    """bestfirst: states the self-play search polls per decision"""
    worlds: int = 1
    """bestfirst: sampled worlds the search averages over (agents.BestFirstAgent)"""
    rollouts: int = 64
    """mc: rollouts per legal action, in self-play and in the evaluations"""
    horizon: int = 2
    """mc: turns a rollout plays before the network values it"""
    target: str = "score"
    """the return learned: score (+100 a win), progress (without the cards owned) or outcome"""
    workers: int = 1
    """processes (or Ray tasks in flight) playing the self-play games"""
    backend: str = "process"
    """where the games run: process or ray (the network travels with the games)"""
    address: str | None = None
    """with backend ray: the cluster to join (auto, HOST:PORT); default a local Ray instance"""
    hidden: tuple[int, ...] = (64, 32)
    """hidden layer sizes of the ValueMLP"""
    lr: float = 1e-3
    """Adam learning rate"""
    batch_size: int = 256
    """states per gradient step"""
    epochs: float = 4.0
    """passes over the buffer's size worth of states after each iteration"""
    steps_per_iter: int = 0
    """if > 0: exactly this many Adam steps after each iteration instead of ``epochs``"""
    buffer_size: int = 200_000
    """replay buffer of the most recent states"""
    eval_every: int = 0
    """iterations between learned-vs-Fridai evaluations (0: never)"""
    eval_games: int = 20
    """games per level in each evaluation (same deals for both evaluators)"""
    eval_nodes: int = 10_000
    """bestfirst: states per decision in the evaluations"""
    run_dir: str = "runs/friday-value"
    """TensorBoard logs, checkpoint.pt, buffer.npz and nets/ live here"""
    out: str | None = None
    """also copy the final network here (e.g. models/checkpoints/friday.pt)"""
    progress: bool = True
    """show a progress bar"""


# ---- 1. self-play ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _agent(spec: str):
    """One agent per spec and process (a learned one loads its network once)."""
    return make_agent(FridayGame(), spec)


def play_recorded(task: tuple[str, int, int, int]) -> dict:
    """One game of agent ``spec`` at ``level``: its decision states' inputs and every return."""
    spec, level, seed, index = task
    agent = _agent(spec)
    state, rng = deal(FridayGame(level=level), seed, index)
    rows = []
    start = time.perf_counter()
    while not state.is_terminal():
        rows.append(features_of(state.array))
        state = sample_chance(state.child(agent(state, rng)), rng)
    return {"level": level, "game": index, "x": np.array(rows, dtype=np.float32).reshape(-1, NUM_FEATURES),
            **{f"{name}_return": float(kernel(state.array)) for name, kernel in RETURNS.items()},
            "score": state.score, "won": bool(state.won),
            "seconds": time.perf_counter() - start}


PLANNERS = ("bestfirst", "mc")


def search_spec(args: Args, net_path: Path | None, *, evaluating: bool = False) -> str:
    """The agent that plays with the network at ``net_path``; with ``None``, the same search with
    Fridai's score (the evaluation's baseline), or in mc self-play the rollouts to the end."""
    if args.planner == "mc":
        if net_path is None and not evaluating:
            return f"mc:rollouts={args.rollouts}"
        return f"mc:rollouts={args.rollouts},horizon={args.horizon},eval=" + (f"learned:{net_path}" if net_path else "fridai")
    nodes = args.eval_nodes if evaluating else args.nodes
    return (f"bestfirst:nodes={nodes}" + (f",eval=learned:{net_path}" if net_path else "")
            + (f",worlds={args.worlds}" if args.worlds > 1 and (net_path or not evaluating) else ""))


def play_games(runner, spec: str, levels: list[int], seed: int, first: int, count: int,
               net_path: Path | None = None) -> list[dict]:
    """Games ``first..first+count-1``, game i at level ``levels[i % len(levels)]``, on ``runner``
    (training.parallel: here, worker processes or Ray tasks; None: here). The network at
    ``net_path`` (named in ``spec``) travels with the games, once per call on Ray, so workers on
    other machines need no shared disk."""
    tasks = [(spec, levels[i % len(levels)], seed, i) for i in range(first, first + count)]
    shared = (str(net_path), Path(net_path).read_bytes()) if net_path else ("", b"")
    return (runner or InProcessExecutor()).map_shared(_play_with_network, shared, tasks)


def _play_with_network(shared: tuple[str, bytes], task: tuple[str, int, int, int]) -> dict:
    """``play_recorded`` with the network file named in the spec replaced by this machine's copy."""
    path, data = shared
    if path:
        spec, level, seed, index = task
        task = (spec.replace(path, _local_copy(path, data)), level, seed, index)
    return play_recorded(task)


@functools.lru_cache(maxsize=4)
def _local_copy(path: str, data: bytes) -> str:
    """The network's bytes as a file of this machine, named by their hash (written once)."""
    local = Path(tempfile.gettempdir()) / f"tablegym-net-{hashlib.sha1(data).hexdigest()[:16]}{Path(path).suffix}"
    if not local.exists():
        tmp = local.with_name(f"{local.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, local)
    return str(local)


# ---- 2. what the network predicted --------------------------------------------------------------

def calibration(predicted: np.ndarray, observed: np.ndarray, won: np.ndarray, bins: int = 10) -> list[dict]:
    """Predicted vs observed return (and the observed win rate) in ``bins`` equal-count bins of
    the prediction: a calibrated network's two means agree in every bin."""
    order = np.argsort(predicted, kind="stable")
    rows = []
    for part in np.array_split(order, bins):
        if len(part):
            rows.append({"n": int(len(part)), "predicted": float(predicted[part].mean()),
                         "observed": float(observed[part].mean()), "win_rate": float(won[part].mean())})
    return rows


def calibration_table(rows: list[dict]) -> str:
    lines = ["| bin | states | predicted return | observed return | observed win rate |", "|---|---|---|---|---|"]
    lines += [f"| {i + 1} | {r['n']} | {r['predicted']:.1f} | {r['observed']:.1f} | {100 * r['win_rate']:.1f}% |"
              for i, r in enumerate(rows)]
    return "\n".join(lines)


def win_calibration_table(rows: list[dict]) -> str:
    lines = ["| bin | states | predicted P(win) | observed win rate |", "|---|---|---|---|"]
    lines += [f"| {i + 1} | {r['n']} | {100 * r['predicted']:.1f}% | {100 * r['win_rate']:.1f}% |"
              for i, r in enumerate(rows)]
    return "\n".join(lines)


def predict(model: ValueMLP, x: np.ndarray) -> np.ndarray:
    """The network's returns (score units) for input rows ``x``."""
    with torch.no_grad():
        return SCALE * model(torch.from_numpy(x)).numpy()


def win_probability(model: ValueMLP, x: np.ndarray) -> np.ndarray:
    """The win network's P(win) for input rows ``x``: its tanh output mapped onto [0, 1]."""
    with torch.no_grad():
        return (1.0 + model(torch.from_numpy(x)).numpy()) / 2.0


# ---- 3. fitting ------------------------------------------------------------------------------------

def mse(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.mse_loss(output, target)


def win_cross_entropy(output: torch.Tensor, won: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of P(win) = (1 + tanh) / 2 = sigmoid(2 x pre-activation) against won (1/0)."""
    return torch.nn.functional.binary_cross_entropy(((1.0 + output) / 2.0).clamp(1e-6, 1 - 1e-6), won)


def fit(model: ValueMLP, optimizer: torch.optim.Optimizer, buffer: ReplayBuffer, steps: int, batch_size: int,
        rng: np.random.Generator, loss_fn=mse) -> float:
    """``steps`` Adam steps of ``loss_fn`` (MSE on return / SCALE) over random buffer samples; mean loss."""
    model.train()
    losses = []
    for _ in range(steps):
        x, y = buffer.sample(rng, batch_size)
        loss = loss_fn(model(torch.from_numpy(x)), torch.from_numpy(y))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return float(np.mean(losses)) if losses else float("nan")


def save_buffer(path: Path, buffer: ReplayBuffer) -> None:
    """Atomically write the buffer's states oldest first (a crash mid-save keeps the old file)."""
    order = (buffer.pos + np.arange(buffer.n)) % buffer.n if buffer.n == len(buffer.y) else np.arange(buffer.n)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp.npz")
    os.close(fd)
    try:
        np.savez(tmp, x=buffer.x[order], y=buffer.y[order])
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_buffer(path: Path, buffer: ReplayBuffer) -> None:
    """Refill ``buffer`` with the newest states saved at ``path`` (if any)."""
    if path.exists():
        try:
            with np.load(path, allow_pickle=False) as data:  # plain arrays only: an object array is refused
                x, y = data["x"], data["y"]
        except (OSError, ValueError, KeyError) as err:
            raise CheckpointError(f"cannot resume: replay buffer {str(path)!r} is corrupt or holds other than "
                                  f"plain arrays x, y ({first_line(err)})") from None
        buffer.add(x, y)


# ---- 5. learned vs Fridai --------------------------------------------------------------------------

def evaluate(runner, net_path: Path, args: Args, levels: list[int]) -> dict[str, dict[int, tuple[float, float]]]:
    """(win rate, mean score) per level of both evaluators over the same ``eval_games`` deals."""
    out = {}
    for name, spec in (("learned", search_spec(args, net_path, evaluating=True)),
                       ("fridai", search_spec(args, None, evaluating=True))):
        out[name] = {}
        for level in levels:
            games = play_games(runner, spec, [level], args.seed, 0, args.eval_games,
                               net_path if name == "learned" else None)
            out[name][level] = (float(np.mean([g["won"] for g in games])), float(np.mean([g["score"] for g in games])))
    return out


# ---- the loop ----------------------------------------------------------------------------------------

def train(args: Args, levels: tuple[int, ...] = (1, 2, 3, 4)) -> Path:
    """Run (or resume) a training run; returns the path of the checkpoint."""
    if args.game != "friday":
        raise ValueError(f"training/friday_value.py trains Friday only, not {args.game!r}")
    if args.game_options:
        raise ValueError(f"the Friday value network trains under the default rule options only, got {args.game_options}")
    if args.target not in TARGETS:
        raise ValueError(f"unknown target {args.target!r}; known: {', '.join(TARGETS)}")
    if args.planner not in PLANNERS:
        raise ValueError(f"unknown planner {args.planner!r}; known: {', '.join(PLANNERS)}")
    if args.planner == "mc" and (args.rollouts < 1 or args.horizon < 1):
        raise ValueError(f"the mc planner needs rollouts >= 1 and horizon >= 1, got {args.rollouts} and {args.horizon}")
    game = FridayGame()
    run_dir = Path(args.run_dir)
    (run_dir / "nets").mkdir(parents=True, exist_ok=True)
    ckpt_path, buffer_path = run_dir / "checkpoint.pt", run_dir / "buffer.npz"
    net_config = NetConfig(NUM_FEATURES, tuple(args.hidden))
    model, optimizer, iteration, games_done, seconds_done, rng = start_or_resume(ckpt_path, game, net_config, args)
    if iteration and target_of(load_friday_model(ckpt_path)[1]) != args.target:
        raise ValueError(f"{ckpt_path} learns another return than --target {args.target}; use a new --run-dir")
    buffer = ReplayBuffer(args.buffer_size, NUM_FEATURES, dtype=np.float32)
    load_buffer(buffer_path, buffer)
    # the P(win) network: its own checkpoint and buffer (won 1/0); a run begun without it starts one
    win_path, win_buffer_path = run_dir / "win.pt", run_dir / "win_buffer.npz"
    win_model = ValueMLP(net_config)
    win_optimizer = torch.optim.Adam(win_model.parameters(), lr=args.lr)
    if win_path.exists():
        payload = load_checkpoint(win_path, game=game.spec.name, options=game.spec.options)
        win_model.load_state_dict(payload["model"])
        win_optimizer.load_state_dict(payload["optimizer"])
    win_buffer = ReplayBuffer(args.buffer_size, NUM_FEATURES, dtype=np.float32)
    load_buffer(win_buffer_path, win_buffer)
    writer = SummaryWriter(str(run_dir))
    writer.add_text("args", json.dumps(dataclasses.asdict(args), default=list, indent=1))
    runner = executor(args.backend, args.workers, args.address)
    t_start = time.perf_counter() - seconds_done
    deadline = None if args.minutes is None else args.minutes * 60.0
    net_path = run_dir / "nets" / f"iter{iteration:04d}.pt" if iteration else None
    bar = tqdm(initial=games_done, disable=not args.progress, unit="game", desc="friday value")

    def save() -> None:
        meta = metadata(args, game, net_config, iteration, games_done, time.perf_counter() - t_start)
        save_checkpoint(ckpt_path, model=model, metadata=meta, optimizer=optimizer)
        save_buffer(buffer_path, buffer)
        # target "win" is no return: loading it as a search evaluator fails with a clear error
        win_meta = {**meta, "args": {**meta["args"], "target": "win"}}
        save_checkpoint(win_path, model=win_model, metadata=win_meta, optimizer=win_optimizer)
        save_buffer(win_buffer_path, win_buffer)

    try:
        while iteration < args.iterations and (deadline is None or time.perf_counter() - t_start < deadline):
            # 1. self-play with the current network (Fridai's score before the first fit)
            t0 = time.perf_counter()
            games = play_games(runner, search_spec(args, net_path), list(levels),
                               args.seed + TRAIN_SEED_OFFSET, games_done, args.games_per_iter, net_path)
            gen_seconds = time.perf_counter() - t0
            games_done += len(games)
            iteration += 1
            step = games_done
            x = np.concatenate([g["x"] for g in games])
            y = np.concatenate([np.full(len(g["x"]), g[f"{args.target}_return"], dtype=np.float32) for g in games])
            won = np.concatenate([np.full(len(g["x"]), g["won"], dtype=np.float32) for g in games])
            # 2. the network's predictions on games it has not been fitted on
            if net_path is not None:
                pred = predict(model, x)
                writer.add_scalar("losses/heldout_mse", float(np.mean((pred - y) ** 2) / SCALE ** 2), step)
                tables = {"return": calibration_table(calibration(pred, y, won)),
                          "P(win)": win_calibration_table(calibration(win_probability(win_model, x), won, won))}
                for name, table in tables.items():
                    writer.add_text(f"calibration/{name}", table, step)
                (run_dir / "calibration.md").write_text(
                    f"Calibration on the {len(games)} self-play games of iteration {iteration} ({len(y)} states), "
                    "predicted before the networks were fitted on them.\n\n"
                    + "\n\n".join(f"{name}:\n\n{table}" for name, table in tables.items()) + "\n")
            for level in levels:
                mine = [g for g in games if g["level"] == level]
                if mine:
                    writer.add_scalar(f"selfplay/win_rate_L{level}", float(np.mean([g["won"] for g in mine])), step)
                    writer.add_scalar(f"selfplay/score_L{level}", float(np.mean([g["score"] for g in mine])), step)
            writer.add_scalar("charts/games_per_s", len(games) / gen_seconds, step)
            writer.add_scalar("charts/decisions_per_game", len(y) / len(games), step)
            # 3. fit on the replay buffer
            buffer.add(x, np.clip(y / SCALE, -0.99, 0.99).astype(np.float32))
            steps = args.steps_per_iter or int(args.epochs * buffer.n / args.batch_size)
            loss = fit(model, optimizer, buffer, steps, args.batch_size, rng)
            writer.add_scalar("losses/mse", loss, step)
            win_buffer.add(x, won)
            win_loss = fit(win_model, win_optimizer, win_buffer, steps, args.batch_size, rng, win_cross_entropy)
            writer.add_scalar("losses/win_cross_entropy", win_loss, step)
            # 4. this iteration's network, for the next self-play
            net_path = run_dir / "nets" / f"iter{iteration:04d}.pt"
            save_checkpoint(net_path, model=model,
                            metadata=metadata(args, game, net_config, iteration, games_done, time.perf_counter() - t_start))
            save()
            # 5. learned vs Fridai on the same deals
            postfix = {"loss": f"{loss:.4f}", "score": f"{np.mean([g['score'] for g in games]):.1f}",
                       "won": f"{np.mean([g['won'] for g in games]):.1%}"}
            if args.eval_every and iteration % args.eval_every == 0:
                results = evaluate(runner, net_path, args, list(levels))
                for name, per_level in results.items():
                    for level, (rate, score) in per_level.items():
                        writer.add_scalar(f"eval/{name}_win_rate_L{level}", rate, step)
                        writer.add_scalar(f"eval/{name}_score_L{level}", score, step)
                postfix["vs_fridai"] = " ".join(f"{results['learned'][lv][1] - results['fridai'][lv][1]:+.1f}"
                                                for lv in levels)
            bar.update(len(games))
            bar.set_postfix(postfix)
            if not args.progress:  # a log line per iteration for runs in the background
                print(f"iteration {iteration}: {games_done} games, {gen_seconds:.0f} s self-play, "
                      + ", ".join(f"{k} {v}" for k, v in postfix.items()), flush=True)
    finally:
        bar.close()
        runner.shutdown()
        writer.close()
    save()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(net_path if net_path else ckpt_path, args.out)
    return ckpt_path


def parse_args(argv: list[str] | None = None) -> Args:
    return parse_dataclass_args(Args, argv, "tablegym train friday", __doc__.split("\n\n")[0])


def cli_main(argv: list[str] | None = None) -> int:
    print(f"checkpoint: {train(parse_args(argv))}")
    return 0


if __name__ == "__main__":
    cli_main()
