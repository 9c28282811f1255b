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

   Every decision state is recorded as its input vector (models/friday/learned.py);
2. the target of every state is the Monte-Carlo return of its game (``--target``): the final
   score, or only its progress terms, plus 100 for a win, or the ``outcome`` value (score + 10
   per step reached + 100 for a win); see models/friday/learned.py for why not P(win) alone.
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
   load), the checkpoint and the buffer (``FridayLearner``): a rerun with the same ``run_dir``
   resumes (training.Run keeps the run directory, logs, budget and ``--out``);
5. every ``eval_every`` iterations play ``eval_games`` games per level with the learned and with
   Fridai's evaluator in the same search, at the same budget, on the same deals and log both win
   rates and mean scores.

    tablegym train friday --minutes 30 --workers 2 --run-dir runs/friday-value
    tablegym train friday --planner mc --target outcome --minutes 60 --run-dir runs/friday-mc
    tensorboard --logdir runs
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from tablegym.envs.friday.core import FridayGame, deal, sample_chance
from tablegym.envs.limits import load_npz
from tablegym.envs.rates import per_second
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import CheckpointError, first_line, load_checkpoint, save_checkpoint
from tablegym.models.friday.learned import NUM_FEATURES, RETURNS, SCALE, TARGETS, features_of, target_of
from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.training.args import SelfPlayArgs, require_at_least, require_positive
from tablegym.training.files import open_atomic, real_folder, write_bytes_atomic, write_text_atomic
from tablegym.training.parallel import InProcessExecutor, executor
from tablegym.training.runs import ReplayBuffer, Run, ValueLearner, module_device, trainer_cli

TRAIN_SEED_OFFSET = 1_000_003
"""Self-play deals come from seed + this, so they never repeat the evaluation deals (seed 0...)."""


@dataclass
class Args(SelfPlayArgs):
    """training/args.py's ``SelfPlayArgs`` with Friday's defaults, and what is Friday's: the
    planner that plays with the network, the return it learns, how long it fits."""

    game: str = "friday"
    """only friday (the positional game name of ``tablegym train``)"""
    game_options: dict = field(default_factory=dict)
    """rule options: only the defaults (the learned evaluator checks them when it loads)"""
    seed: int = 0
    minutes: float | None = 10.0
    """stop after this much training time, resumed runs included (None or 0: only iterations count)"""
    iterations: int = 1_000
    """stop after this many iterations"""
    planner: str = "bestfirst"
    """the search that plays with the network: bestfirst (Fridai's) or mc (Monte-Carlo planning)"""
    nodes: int = 2_000
    """bestfirst: states the self-play search polls per decision"""
    worlds: int = 1
    """bestfirst: sampled worlds the search averages over (tablegym.search.agents.BestFirstAgent)"""
    rollouts: int = 64
    """mc: rollouts per legal action, in self-play and in the evaluations"""
    horizon: int = 2
    """mc: turns a rollout plays before the network values it"""
    target: str = "score"
    """the return learned: score (+100 a win), progress (without the cards owned) or outcome"""
    hidden: tuple[int, ...] = (64, 32)
    batch_size: int = 256
    epochs: float = 4.0
    """passes over the buffer's size worth of states after each iteration"""
    steps_per_iter: int = 0
    """if > 0: exactly this many Adam steps after each iteration instead of ``epochs``"""
    eval_every: int = 0
    """iterations between learned-vs-Fridai evaluations (0: never)"""
    eval_games: int = 20
    """games per level in each evaluation (same deals for both evaluators)"""
    eval_nodes: int = 10_000
    """bestfirst: states per decision in the evaluations"""
    run_dir: str = "runs/friday-value"
    """TensorBoard logs, checkpoint.pt, buffer.npz and nets/ live here"""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.target not in TARGETS:
            raise ValueError(f"unknown target {self.target!r}; known: {', '.join(TARGETS)}")
        if self.planner not in PLANNERS:
            raise ValueError(f"unknown planner {self.planner!r}; known: {', '.join(PLANNERS)}")
        require_at_least(self, 1, ("iterations", "nodes", "worlds", "rollouts", "eval_nodes"))
        require_at_least(self, 0, ("horizon", "steps_per_iter"))
        if self.planner == "mc" and self.horizon < 1:
            raise ValueError(f"the mc planner needs --horizon >= 1, got {self.horizon}")
        require_positive(self, ("epochs",))


PLANNERS = ("bestfirst", "mc")
"""How the self-play games choose their moves (``--planner``)."""


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
    return {
        "level": level,
        "game": index,
        "x": np.array(rows, dtype=np.float32).reshape(-1, NUM_FEATURES),
        **{f"{name}_return": float(kernel(state.body)) for name, kernel in RETURNS.items()},
        "score": state.score,
        "won": bool(state.won),
        "seconds": time.perf_counter() - start,
    }


def search_spec(args: Args, net_path: Path | None, *, evaluating: bool = False) -> str:
    """The agent that plays with the network at ``net_path``; with ``None``, the same search with
    Fridai's score (the evaluation's baseline), or in mc self-play the rollouts to the end."""
    if args.planner == "mc":
        if net_path is None and not evaluating:
            return f"mc:rollouts={args.rollouts}"
        return f"mc:rollouts={args.rollouts},horizon={args.horizon},eval=" + (f"learned:{net_path}" if net_path else "fridai")
    nodes = args.eval_nodes if evaluating else args.nodes
    return (
        f"bestfirst:nodes={nodes}"
        + (f",eval=learned:{net_path}" if net_path else "")
        + (f",worlds={args.worlds}" if args.worlds > 1 and (net_path or not evaluating) else "")
    )


def play_games(
    runner, spec: str, levels: list[int], seed: int, first: int, count: int, net_path: Path | None = None
) -> list[dict]:
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
    """The network's bytes as a file of this machine, named by their SHA-256 in this user's own
    cache folder (``_cache_folder``): reused only when it is a plain file holding exactly these
    bytes, written anew otherwise (a temporary file and ``os.replace``, which replaces a link
    planted there rather than writing through it)."""
    digest = hashlib.sha256(data).hexdigest()
    local = _cache_folder() / f"tablegym-net-{digest[:32]}{Path(path).suffix}"
    if _sha256_of(local) != digest:
        write_bytes_atomic(local, data)
    return str(local)


def _cache_folder() -> Path:
    """``TMPDIR/tablegym-UID``: a folder of this user's alone (mode 0700), so no other user can
    put a file where a worker looks for its network; if that name is taken by anything else (a
    link, another user's folder), a new private folder for this process."""
    uid = os.getuid() if hasattr(os, "getuid") else 0  # (no user ids on Windows: st_uid is 0 there)
    folder = Path(tempfile.gettempdir()) / f"tablegym-{uid}"
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(folder)
    if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077:
        return folder
    return Path(_private_folder())


@functools.lru_cache(maxsize=1)
def _private_folder() -> str:
    return tempfile.mkdtemp(prefix="tablegym-")


def _sha256_of(path: Path) -> str | None:
    """The SHA-256 of the plain file at ``path`` (None: missing, a link or not a plain file)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return hashlib.file_digest(f, "sha256").hexdigest()


# ---- 2. what the network predicted --------------------------------------------------------------


def calibration(predicted: np.ndarray, observed: np.ndarray, won: np.ndarray, bins: int = 10) -> list[dict]:
    """Predicted vs observed return (and the observed win rate) in ``bins`` equal-count bins of
    the prediction: a calibrated network's two means agree in every bin."""
    order = np.argsort(predicted, kind="stable")
    rows = []
    for part in np.array_split(order, bins):
        if len(part):
            rows.append(
                {
                    "n": int(len(part)),
                    "predicted": float(predicted[part].mean()),
                    "observed": float(observed[part].mean()),
                    "win_rate": float(won[part].mean()),
                }
            )
    return rows


def calibration_table(rows: list[dict]) -> str:
    lines = ["| bin | states | predicted return | observed return | observed win rate |", "|---|---|---|---|---|"]
    lines += [
        f"| {i + 1} | {r['n']} | {r['predicted']:.1f} | {r['observed']:.1f} | {100 * r['win_rate']:.1f}% |"
        for i, r in enumerate(rows)
    ]
    return "\n".join(lines)


def win_calibration_table(rows: list[dict]) -> str:
    lines = ["| bin | states | predicted P(win) | observed win rate |", "|---|---|---|---|"]
    lines += [f"| {i + 1} | {r['n']} | {100 * r['predicted']:.1f}% | {100 * r['win_rate']:.1f}% |" for i, r in enumerate(rows)]
    return "\n".join(lines)


def predict(model: ValueMLP, x: np.ndarray) -> np.ndarray:
    """The network's returns (score units) for input rows ``x``."""
    with torch.no_grad():
        return SCALE * model(torch.from_numpy(x).to(module_device(model))).cpu().numpy()


def win_probability(model: ValueMLP, x: np.ndarray) -> np.ndarray:
    """The win network's P(win) for input rows ``x``: its tanh output mapped onto [0, 1]."""
    with torch.no_grad():
        return (1.0 + model(torch.from_numpy(x).to(module_device(model))).cpu().numpy()) / 2.0


# ---- 3. fitting ------------------------------------------------------------------------------------


def mse(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.mse_loss(output, target)


def win_cross_entropy(output: torch.Tensor, won: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of P(win) = (1 + tanh) / 2 = sigmoid(2 x pre-activation) against won (1/0)."""
    return torch.nn.functional.binary_cross_entropy(((1.0 + output) / 2.0).clamp(1e-6, 1 - 1e-6), won)


def fit(
    model: ValueMLP,
    optimizer: torch.optim.Optimizer,
    buffer: ReplayBuffer,
    steps: int,
    batch_size: int,
    rng: np.random.Generator,
    loss_fn=mse,
) -> float:
    """``steps`` Adam steps of ``loss_fn`` (MSE on return / SCALE) over random buffer samples; mean loss."""
    model.train()
    losses = []
    device = module_device(model)
    for _ in range(steps):
        x, y = buffer.sample(rng, batch_size)
        loss = loss_fn(model(torch.from_numpy(x).to(device)), torch.from_numpy(y).to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return float(np.mean(losses)) if losses else float("nan")


def save_buffer(path: Path, buffer: ReplayBuffer) -> None:
    """Atomically write the buffer's states oldest first (a crash mid-save keeps the old file)."""
    order = (buffer.pos + np.arange(buffer.n)) % buffer.n if buffer.n == len(buffer.y) else np.arange(buffer.n)
    with open_atomic(path) as f:
        np.savez(f, x=buffer.x[order], y=buffer.y[order])


def load_buffer(path: Path, buffer: ReplayBuffer) -> None:
    """Refill ``buffer`` with the newest states saved at ``path`` (if any)."""
    if path.exists():
        try:
            data = load_npz(path)  # plain arrays only, their headers checked before anything is inflated
            x, y = data["x"], data["y"]
        except (OSError, ValueError, KeyError) as err:
            raise CheckpointError(
                f"cannot resume: replay buffer {str(path)!r} is corrupt or holds other than plain arrays x, y ({first_line(err)})"
            ) from None
        buffer.add(x, y)


# ---- 5. learned vs Fridai --------------------------------------------------------------------------


def evaluate(runner, net_path: Path, args: Args, levels: list[int]) -> dict[str, dict[int, tuple[float, float]]]:
    """(win rate, mean score) per level of both evaluators over the same ``eval_games`` deals."""
    out = {}
    for name, spec in (
        ("learned", search_spec(args, net_path, evaluating=True)),
        ("fridai", search_spec(args, None, evaluating=True)),
    ):
        out[name] = {}
        for level in levels:
            games = play_games(runner, spec, [level], args.seed, 0, args.eval_games, net_path if name == "learned" else None)
            out[name][level] = (float(np.mean([g["won"] for g in games])), float(np.mean([g["score"] for g in games])))
    return out


# ---- 4. what a run saves -----------------------------------------------------------------------------


class FridayLearner(ValueLearner):
    """The return network and its optimizer (``checkpoint.pt``) and, beside them, the P(win)
    network of the same shape (``win.pt``), both replay buffers (``buffer.npz``, ``win_buffer.npz``)
    and each iteration's network (``nets/iterNNNN.pt``, the one ``--out`` copies)."""

    def __init__(self, args: Args, game: FridayGame, net_config: NetConfig) -> None:
        super().__init__(args, game, net_config)
        run_dir = Path(args.run_dir)
        self.nets = run_dir / "nets"
        self.net_path: Path | None = None
        """the network of the last iteration, which the next self-play searches with (None: none yet)"""
        self.buffer_path, self.win_path, self.win_buffer_path = (
            run_dir / "buffer.npz",
            run_dir / "win.pt",
            run_dir / "win_buffer.npz",
        )
        self.buffer = ReplayBuffer(args.buffer_size, NUM_FEATURES, dtype=np.float32)
        # the P(win) network: its own checkpoint and buffer (won 1/0); a run begun without it starts one
        self.win_model = ValueMLP(net_config).to(self.device)
        self.win_optimizer = torch.optim.Adam(self.win_model.parameters(), lr=args.lr)
        self.win_buffer = ReplayBuffer(args.buffer_size, NUM_FEATURES, dtype=np.float32)

    def start(self, checkpoint: Path | None) -> dict:
        real_folder(self.nets)  # the run's own folder: a link there is refused before any game
        meta = super().start(checkpoint)
        if meta.get("iteration") and target_of(meta) != self.args.target:
            raise ValueError(f"{checkpoint} learns another return than --target {self.args.target}; use a new --run-dir")
        if meta.get("iteration"):
            self.net_path = self.nets / f"iter{meta['iteration']:04d}.pt"
        load_buffer(self.buffer_path, self.buffer)
        if self.win_path.exists():
            payload = load_checkpoint(self.win_path, game=self.game.spec.name, options=self.game.spec.options)
            self.win_model.load_state_dict(payload["model"])
            self.win_optimizer.load_state_dict(payload["optimizer"])
        load_buffer(self.win_buffer_path, self.win_buffer)
        return meta

    def save_net(self, progress: dict) -> None:
        """This iteration's network, for the next self-play."""
        self.net_path = self.nets / f"iter{progress['iteration']:04d}.pt"
        save_checkpoint(self.net_path, model=self.model, metadata=self.metadata(progress))

    def save(self, path: Path, progress: dict) -> None:
        meta = self.metadata(progress)
        save_checkpoint(path, model=self.model, metadata=meta, optimizer=self.optimizer)
        save_buffer(self.buffer_path, self.buffer)
        # target "win" is no return: loading it as a search evaluator fails with a clear error
        win_meta = {**meta, "args": {**meta["args"], "target": "win"}}
        save_checkpoint(self.win_path, model=self.win_model, metadata=win_meta, optimizer=self.win_optimizer)
        save_buffer(self.win_buffer_path, self.win_buffer)

    def export(self, checkpoint: Path, out: Path, progress: dict) -> None:
        """The last iteration's network (no optimizer), or the checkpoint before any."""
        super().export(self.net_path or checkpoint, out, progress)


# ---- the loop ----------------------------------------------------------------------------------------


def train(args: Args, levels: tuple[int, ...] = (1, 2, 3, 4)) -> Path:
    """Run (or resume) a training run; returns the path of the checkpoint."""
    if args.game != "friday":
        raise ValueError(f"training/friday/train.py trains Friday only, not {args.game!r}")
    if args.game_options:
        raise ValueError(f"the Friday value network trains under the default rule options only, got {args.game_options}")
    game = FridayGame()
    learner = FridayLearner(args, game, NetConfig(NUM_FEATURES, tuple(args.hidden)))
    with Run(
        args,
        game,
        learner,
        iterations=args.iterations,
        desc="friday value",
        budget=f"--iterations {args.iterations}",
        unit="iteration",
    ) as run:
        model, win_model, rng = learner.model, learner.win_model, learner.rng
        runner = executor(args.backend, args.workers, args.address)

        try:
            while run.next_iteration():
                # 1. self-play with the current network (Fridai's score before the first fit)
                t0 = time.perf_counter()
                net_path = learner.net_path
                games = play_games(
                    runner,
                    search_spec(args, net_path),
                    list(levels),
                    args.seed + TRAIN_SEED_OFFSET,
                    run.games,
                    args.games_per_iter,
                    net_path,
                )
                gen_seconds = time.perf_counter() - t0
                run.played(len(games))
                x = np.concatenate([g["x"] for g in games])
                y = np.concatenate([np.full(len(g["x"]), g[f"{args.target}_return"], dtype=np.float32) for g in games])
                won = np.concatenate([np.full(len(g["x"]), g["won"], dtype=np.float32) for g in games])
                # 2. the network's predictions on games it has not been fitted on
                if net_path is not None:
                    pred = predict(model, x)
                    run.log({"losses/heldout_mse": float(np.mean((pred - y) ** 2) / SCALE**2)})
                    tables = {
                        "return": calibration_table(calibration(pred, y, won)),
                        "P(win)": win_calibration_table(calibration(win_probability(win_model, x), won, won)),
                    }
                    for name, table in tables.items():
                        run.writer.add_text(f"calibration/{name}", table, run.games)
                    write_text_atomic(
                        run.dir / "calibration.md",
                        f"Calibration on the {len(games)} self-play games of iteration {run.iteration} ({len(y)} states), "
                        "predicted before the networks were fitted on them.\n\n"
                        + "\n\n".join(f"{name}:\n\n{table}" for name, table in tables.items())
                        + "\n",
                    )
                for level in levels:
                    mine = [g for g in games if g["level"] == level]
                    if mine:
                        run.log(
                            {
                                f"selfplay/win_rate_L{level}": float(np.mean([g["won"] for g in mine])),
                                f"selfplay/score_L{level}": float(np.mean([g["score"] for g in mine])),
                            }
                        )
                run.log(
                    {"charts/games_per_s": per_second(len(games), gen_seconds), "charts/decisions_per_game": len(y) / len(games)}
                )
                # 3. fit on the replay buffer
                learner.buffer.add(x, np.clip(y / SCALE, -0.99, 0.99).astype(np.float32))
                steps = args.steps_per_iter or int(args.epochs * learner.buffer.n / args.batch_size)
                loss = fit(model, learner.optimizer, learner.buffer, steps, args.batch_size, rng)
                run.log({"losses/mse": loss})
                learner.win_buffer.add(x, won)
                win_loss = fit(
                    win_model, learner.win_optimizer, learner.win_buffer, steps, args.batch_size, rng, win_cross_entropy
                )
                run.log({"losses/win_cross_entropy": win_loss})
                # 4. this iteration's network, for the next self-play; the checkpoint
                learner.save_net(run.progress())
                run.save()
                # 5. learned vs Fridai on the same deals
                postfix = {
                    "loss": f"{loss:.4f}",
                    "score": f"{np.mean([g['score'] for g in games]):.1f}",
                    "won": f"{np.mean([g['won'] for g in games]):.1%}",
                }
                if run.due(args.eval_every):
                    results = evaluate(runner, learner.net_path, args, list(levels))
                    run.log(
                        {
                            f"eval/{name}_{kind}_L{level}": value
                            for name, per_level in results.items()
                            for level, pair in per_level.items()
                            for kind, value in zip(("win_rate", "score"), pair)
                        }
                    )
                    postfix["vs_fridai"] = " ".join(
                        f"{results['learned'][lv][1] - results['fridai'][lv][1]:+.1f}" for lv in levels
                    )
                run.bar.set_postfix(postfix)
                if not args.progress:  # a log line per iteration for runs in the background
                    print(
                        f"iteration {run.iteration}: {run.games} games, {gen_seconds:.0f} s self-play, "
                        + ", ".join(f"{k} {v}" for k, v in postfix.items()),
                        flush=True,
                    )
        finally:
            runner.shutdown()
        return run.finish()


parse_args, cli_main = trainer_cli(Args, train, "tablegym train friday", __doc__)


if __name__ == "__main__":
    cli_main()
