"""Same wall clock, same network: tablegym's masked PPO and DQN against sb3-contrib's MaskablePPO and SB3's DQN.

Why: ``tablegym bench rl`` compares steps per second; what a user gets from a training budget is
strength. Each trainer gets ``--minutes`` of wall clock on one torch thread (run the two side by
side, one core each, or one after the other on a quiet machine), the same actor and critic
(separate ReLU MLPs of ``--hidden`` widths), the same boards and rollout shape (``--num-envs`` x
``--num-steps``, 4 minibatches, 4 epochs), each its own route to the game:

- ``tablegym``: training/ppo.py as ``tablegym train GAME --algo ppo`` runs it (two-player games:
  self-play on 3/4 of the boards, a random player on 1/4);
- ``sb3``: MaskablePPO over the same compiled vector env through ``SB3VecEnv``; SB3 has no
  self-play, so a two-player game's boards all face a random player (seats alternating).

``--algo dqn``: the two Q-learners, the same Q-network (a ReLU MLP of ``--hidden`` widths), the
same boards (``--num-envs``, one step of each an iteration), replay buffer (100k), batch (256),
step size (5e-4), discount (0.99), learning start (5k transitions), one gradient step an
iteration, the target network copied every 250 iterations, and epsilon decaying from 1 to 0.05
over the first half of the wall clock:

- ``tablegym``: training/dqn.py as ``tablegym train GAME --algo dqn`` runs it (masked acting and
  targets, 3-step Double DQN targets; two-player games by self-play on 3/4 of the boards);
- ``sb3``: SB3's DQN over the same compiled vector env through ``SB3VecEnv``, its own 1-step
  targets; DQN cannot mask, so its boards run with ``illegal_action="penalty"`` (an illegal move
  loses the game, or ends a single-player one) and two-player boards face a random player.

Both see rewards times ``--reward-scale`` (Threes' score changes run to hundreds).

Then both greedy masked policies (for SB3's DQN: the largest Q over the legal actions) play
``--games`` games (both seats) against a random player and against ``--opponent`` (a compiled
search in the batch), scored +1 a win, -1 a loss, 0 a draw, with a 95% normal interval;
single-player games report the mean return under the env's own reward.

    python -m tablegym.experiments.rl_same_budget trap --minutes 15 --trainer tablegym --run-dir runs/same-budget
    python -m tablegym.experiments.rl_same_budget trap --minutes 15 --trainer sb3 --run-dir runs/same-budget
    python -m tablegym.experiments.rl_same_budget trap --report --opponent "search:eval=composite,depth=1" \
        --run-dir runs/same-budget --out results/rl/same_budget_trap.md
    python -m tablegym.experiments.rl_same_budget threes --algo dqn --minutes 15 --trainer tablegym --reward-scale 0.01
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch

import tablegym.envs
from tablegym.envs import make_game
from tablegym.envs.rates import per_second
from tablegym.experiments.rl_bench import sb3_model
from tablegym.experiments.stats import mean_interval
from tablegym.models.checkpoint import load_checkpoint
from tablegym.models.policy import MASKED, load_actor_critic, load_qnet
from tablegym.training import dqn, ppo, vector_rl
from tablegym.training.flags import OneLineParser
from tablegym.training.sb3 import no_log_folder

PROG = "python -m tablegym.experiments.rl_same_budget"
TRAINERS = ("tablegym", "sb3")
ALGOS = ("ppo", "dqn")


def run_ours(
    train: Callable[[list[str]], int], game: str, minutes: float, run_dir: Path, flags: list[str], steps_an_iteration: int
) -> dict:
    """One of tablegym's trainers (``train``: its ``main``) for ``minutes``, with ``flags``."""
    start = time.perf_counter()
    status = train(
        [
            game,
            "--minutes",
            str(minutes),
            "--total-steps",
            str(10**12),
            *flags,
            "--eval-every",
            "0",
            "--no-progress",
            "--run-dir",
            str(run_dir),
        ]
    )
    if status:
        raise SystemExit(status)
    iteration = load_checkpoint(run_dir / "checkpoint.pt", game=make_game(game).spec.name)["metadata"]["iteration"]
    return {"seconds": time.perf_counter() - start, "steps": iteration * steps_an_iteration}


def learn_sb3(model: Any, minutes: float, run_dir: Path, exclude: list[str] | None = None) -> dict:
    """An SB3 model's ``learn`` until ``minutes`` have passed; saved as run_dir/model.zip."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Deadline(BaseCallback):
        def __init__(self, end: float) -> None:
            super().__init__()
            self.end = end

        def _on_step(self) -> bool:
            return time.perf_counter() < self.end

    start = time.perf_counter()
    model.learn(total_timesteps=10**12, callback=Deadline(start + 60 * minutes))
    run_dir.mkdir(parents=True, exist_ok=True)
    model.save(run_dir / "model.zip", exclude=exclude)
    return {"seconds": time.perf_counter() - start, "steps": int(model.num_timesteps)}


def train_tablegym(
    game: str, minutes: float, run_dir: Path, num_envs: int, num_steps: int, hidden: tuple[int, ...], seed: int
) -> dict:
    flags = ["--num-envs", str(num_envs), "--num-steps", str(num_steps), "--hidden", *map(str, hidden), "--seed", str(seed)]
    return run_ours(ppo.main, game, minutes, run_dir, flags, num_envs * num_steps)


def train_sb3(
    game: str, minutes: float, run_dir: Path, num_envs: int, num_steps: int, hidden: tuple[int, ...], seed: int
) -> dict:
    model = sb3_model(vector_rl.env_id_of(game), num_envs, num_steps, ppo.Args.minibatches, hidden, single=False, seed=seed)
    return learn_sb3(model, minutes, run_dir)


def train_tablegym_dqn(
    game: str, minutes: float, run_dir: Path, num_envs: int, hidden: tuple[int, ...], seed: int, reward_scale: float
) -> dict:
    flags = ["--num-envs", str(num_envs), "--hidden", *map(str, hidden), "--seed", str(seed), "--reward-scale", str(reward_scale)]
    return run_ours(dqn.main, game, minutes, run_dir, flags, num_envs)


def sb3_dqn(game: str, num_envs: int, hidden: tuple[int, ...], seed: int, reward_scale: float, minutes: float) -> Any:
    """SB3's DQN with training/dqn.py's settings (module docstring) over the compiled vector env."""
    from gymnasium.wrappers.vector import TransformReward
    from stable_baselines3 import DQN

    from tablegym.training.sb3_vec import SB3VecEnv

    d = dqn.Args()
    env_id = vector_rl.env_id_of(game)
    kw = {"opponent": "random", "agent_seat": "alternate"} if env_id in tablegym.envs.ENV_IDS else {}
    venv = SB3VecEnv(
        TransformReward(gymnasium.make_vec(env_id, num_envs=num_envs, illegal_action="penalty", **kw), lambda r: r * reward_scale)
    )
    model = DQN(
        "MlpPolicy",
        venv,
        learning_rate=d.lr,
        buffer_size=d.buffer_size,
        learning_starts=d.learning_starts,
        batch_size=d.batch_size,
        gamma=d.gamma,
        train_freq=(1, "step"),
        gradient_steps=d.updates,
        target_update_interval=d.target_every * num_envs,
        exploration_initial_eps=d.eps_start,
        exploration_final_eps=d.eps_end,
        max_grad_norm=d.max_grad_norm,
        policy_kwargs={"net_arch": list(hidden), "activation_fn": torch.nn.ReLU},
        seed=seed,
        verbose=0,
        device="cpu",
    )
    no_log_folder(model)
    start = time.perf_counter()
    decay = 60 * minutes * d.eps_fraction  # epsilon by the wall clock, as training/dqn.py under --minutes
    model.exploration_schedule = lambda _: (
        d.eps_start + min(1.0, (time.perf_counter() - start) / decay) * (d.eps_end - d.eps_start)
    )
    return model


def train_sb3_dqn(
    game: str, minutes: float, run_dir: Path, num_envs: int, hidden: tuple[int, ...], seed: int, reward_scale: float
) -> dict:
    model = sb3_dqn(game, num_envs, hidden, seed, reward_scale, minutes)
    return learn_sb3(model, minutes, run_dir, exclude=["exploration_schedule"])  # (a function of the clock: code)


def greedy_tablegym_dqn(run_dir: Path) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    qnet = load_qnet(run_dir / "checkpoint.pt")
    return lambda obs, masks: dqn.act(qnet, obs, masks, 0.0, np.random.default_rng(0))


def greedy_sb3_dqn(game: str, run_dir: Path, hidden: tuple[int, ...]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The saved DQN rebuilt here with the same network and given the file's weights; it acts by
    the largest Q-value over the legal actions."""
    from tablegym.models.sb3_files import restore

    model = restore(sb3_dqn(game, num_envs=1, hidden=hidden, seed=0, reward_scale=1.0, minutes=1.0), run_dir / "model.zip")

    def choose(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            q = model.q_net(torch.as_tensor(obs.reshape((len(obs), -1)), dtype=torch.float32))
        return q.masked_fill(~torch.as_tensor(masks.astype(bool)), MASKED).argmax(-1).numpy()

    return choose


def greedy_tablegym(game: str, run_dir: Path) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return vector_rl.greedy_policy(load_actor_critic(run_dir / "checkpoint.pt", make_game(game)))


def greedy_sb3(game: str, run_dir: Path, hidden: tuple[int, ...]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The saved MaskablePPO, rebuilt here with the same network and given the file's weights
    (models/sb3_files.restore: nothing in the file is unpickled)."""
    from tablegym.models.sb3_files import restore

    model = restore(sb3_model(vector_rl.env_id_of(game), 1, 8, 1, hidden, single=False), run_dir / "model.zip")

    def choose(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        shaped = obs.reshape((len(obs), *model.observation_space.shape))
        return model.predict(shaped, action_masks=masks.astype(bool), deterministic=True)[0]

    return choose


def score(choose: Callable, env_id: str, games: int, seed: int, opponent: str) -> tuple[float, float]:
    """Mean return over ``games`` (both seats) against ``opponent`` and the half-width of its 95% interval."""
    options = {"opponent": opponent} if env_id in tablegym.envs.ENV_IDS and opponent != "random" else {}
    return mean_interval(vector_rl.episode_returns(choose, env_id, games, seed, options))


def folder_of(run_dir: Path, trainer: str, algo: str) -> Path:
    return run_dir / (trainer if algo == "ppo" else f"{trainer}-{algo}")


def greedy(trainer: str, algo: str, game: str, folder: Path, hidden: tuple[int, ...]) -> Callable:
    if algo == "ppo":
        return greedy_tablegym(game, folder) if trainer == "tablegym" else greedy_sb3(game, folder, hidden)
    return greedy_tablegym_dqn(folder) if trainer == "tablegym" else greedy_sb3_dqn(game, folder, hidden)


def report(game: str, run_dir: Path, games: int, opponent: str | None, algo: str = "ppo") -> str:
    env_id = vector_rl.env_id_of(game)
    opponents = ["random"] + ([opponent] if opponent else [])
    names = {"ppo": "tablegym PPO and SB3 MaskablePPO", "dqn": "tablegym DQN and SB3 DQN"}[algo]
    if env_id in tablegym.envs.ENV_IDS:
        about = f"{games} games each (both seats), scored +1 win, -1 loss, 0 draw (mean +- 1.96 se)"
        columns = [f"vs `{o}`" for o in opponents]
    else:  # alone: the mean return under the env's own reward (Threes: the score)
        about, columns, opponents = f"{games} games each, the mean return (mean +- 1.96 se)", ["mean return"], ["random"]
    lines = [
        f"# Same wall clock, same network: {names} on {game}",
        "",
        f"Greedy masked policies, {about}.",
        "",
        "| trainer | minutes | env steps | steps/s | " + " | ".join(columns) + " |",
        "|---|---|---|---|" + "---|" * len(columns),
    ]
    commands = []
    for trainer in TRAINERS:
        folder = folder_of(run_dir, trainer, algo)
        meta = json.loads((folder / "budget.json").read_text())
        choose = greedy(trainer, algo, game, folder, tuple(meta["hidden"]))
        cells = ["{:+.3f} +- {:.3f}".format(*score(choose, env_id, games, 10_000, o)) for o in opponents]
        lines.append(
            f"| {trainer} | {meta['seconds'] / 60:.1f} | {meta['steps']:,} | {per_second(meta['steps'], meta['seconds']):,.0f} | "
            + " | ".join(cells)
            + " |"
        )
        if "command" in meta:
            commands.append(meta["command"])
    return "\n".join(lines + ["", "Trained by:", "", "```", *commands, "```"] if commands else lines)


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("game", help="a game with a compiled vector env")
    p.add_argument("--trainer", choices=TRAINERS, help="train this one for --minutes")
    p.add_argument("--algo", choices=ALGOS, default="ppo", help="compare the PPOs or the DQNs")
    p.add_argument("--report", action="store_true", help="evaluate both trained policies and print the table")
    p.add_argument("--minutes", type=float, default=15.0)
    p.add_argument("--num-envs", type=int, help="boards (default: 256 for PPO, 64 for DQN)")
    p.add_argument("--num-steps", type=int, default=32)
    p.add_argument("--hidden", type=int, nargs="+", default=[128, 128])
    p.add_argument("--reward-scale", type=float, default=1.0, help="DQN: rewards are multiplied by this for both")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--games", type=int, default=400, help="evaluation games per opponent (even)")
    p.add_argument(
        "--opponent",
        help="a second evaluation opponent: a compiled search the vector env plays in "
        "the batch, e.g. Trap's search:eval=composite,depth=1 (default: none)",
    )
    p.add_argument("--run-dir", default="runs/same-budget")
    p.add_argument("--out", help="also write the report here")
    args = p.parse_args(argv)
    if bool(args.trainer) == args.report:
        p.error("give either --trainer tablegym|sb3 or --report")
    if args.minutes <= 0 or args.games < 2 or args.games % 2:
        p.error(f"--minutes must be > 0 and --games an even number >= 2; got {args.minutes}, {args.games}")
    if args.num_envs is None:
        args.num_envs = 256 if args.algo == "ppo" else dqn.Args.num_envs
    if args.num_envs < 1 or not args.reward_scale > 0:
        p.error(f"--num-envs must be >= 1 and --reward-scale > 0; got {args.num_envs}, {args.reward_scale}")
    try:
        env_id = vector_rl.env_id_of(args.game)
        if args.report and args.opponent and env_id in tablegym.envs.ENV_IDS:
            gymnasium.make_vec(env_id, num_envs=1, opponent=args.opponent).close()
    except ValueError as err:
        p.error(str(err))
    if args.algo == "dqn" and args.trainer != "tablegym":  # SB3's DQN trains (and is rebuilt) on penalty boards
        try:
            gymnasium.make_vec(env_id, num_envs=1, illegal_action="penalty").close()
        except (TypeError, ValueError):
            p.error(
                f"{env_id} has no illegal_action='penalty' boards, which SB3's DQN needs (it cannot mask); "
                f"compare the DQNs on a board game, Threes or Friday"
            )
    torch.set_num_threads(1)
    run_dir = Path(args.run_dir)
    if args.trainer:
        folder = folder_of(run_dir, args.trainer, args.algo)
        if args.algo == "ppo":
            train = train_tablegym if args.trainer == "tablegym" else train_sb3
            meta = train(args.game, args.minutes, folder, args.num_envs, args.num_steps, tuple(args.hidden), args.seed)
        else:
            train = train_tablegym_dqn if args.trainer == "tablegym" else train_sb3_dqn
            meta = train(args.game, args.minutes, folder, args.num_envs, tuple(args.hidden), args.seed, args.reward_scale)
        command = " ".join([PROG, *(argv if argv is not None else sys.argv[1:])])
        (folder / "budget.json").write_text(
            json.dumps({**meta, "minutes": args.minutes, "hidden": args.hidden, "command": command})
        )
        print(f"{args.trainer}: {meta['steps']:,} env steps in {meta['seconds']:.0f} s")
        return 0
    missing = [t for t in TRAINERS if not (folder_of(run_dir, t, args.algo) / "budget.json").is_file()]
    if missing:
        p.error(f"{run_dir} has no trained {' or '.join(missing)}: run --trainer first")
    text = report(args.game, run_dir, args.games, args.opponent, args.algo)
    print(text)
    if args.out:
        Path(args.out).write_text(text + f"\n\nThe report: `{PROG} {' '.join(argv if argv is not None else sys.argv[1:])}`\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
