"""PPO as a starship designer (PCGRL) against the staged generator, random edits and the start ship.

    python -m tablegym.experiments.starship.rl --timesteps 300000 --representation narrow \\
        --start partial --seed 0 --episodes 200 --run-dir runs/starship-ppo --out results/starship/rl.md
    python -m tablegym.experiments.starship.rl --eval-only --run-dir runs/starship-ppo \\
        --episodes 200 --out results/starship/rl.md
    tensorboard --logdir runs/starship-ppo

Read it top to bottom (CleanRL style): the arguments (``Args``), the env the learner sees, the
policy's network, training with its TensorBoard charts, evaluation, the report.

1. Training: stable-baselines3 PPO on ``tablegym/Starship-v0`` (``--representation``,
   ``--start``; the env's own change budget, patience and step limit), ``--n-envs`` envs in one
   process, one torch thread, CPU, for exactly ``--timesteps`` env steps (rounded up to whole
   rollouts). Plain PPO, not sb3-contrib's MaskablePPO: the env does expose ``action_masks()``,
   but every action is legal (a write that does not fit is a no-op), so the mask is all ones and
   masking would change nothing. The reward is the env's: the change of the quality score plus
   the validity bonus, so an episode's return is ``phi(end) - phi(start)``.
   Saved in ``--run-dir``: ``model.zip`` (``PPO.load``-able; ``--eval-only`` evaluates it),
   ``train.json`` (the budget, seconds and steps/s: the experiments/sb3_baseline.py format) and
   one TensorBoard run ``ppo_N`` written by one ``SummaryWriter``: ``charts/`` (each finished
   training episode's return, length, final quality, validity and changes; SPS; learning
   rate) and ``losses/`` (PPO's value, policy and entropy losses, approximate KL, clip
   fraction, explained variance), all indexed by the global env step.
2. Evaluation, over the same seeds ``--eval-seed .. --eval-seed + --episodes - 1`` for every
   row (held out from training, whose envs are seeded ``--seed .. --seed + n_envs - 1`` once
   and then run on their own rng):

   - ``ppo``: the trained policy, deterministic (``predict(deterministic=True)``), for one
     episode from ``env.reset(seed=s)`` to its end;
   - ``staged``: the full 14-stage generator (``Pipeline.generate(s)``, the env's pipeline).
     With ``--start partial`` the env's start ship for seed ``s`` IS the generator's ship
     after stage 6 for the same seed (both draw from ``numpy.random.default_rng(s)``), so this
     row finishes exactly the ship the other rows start from;
   - ``random``: a uniformly random action among those the env's mask allows (all of them
     without ``--masks``; ``action_space.sample(mask)``, the space seeded from
     ``(--seed, s)``) at every step of one episode in the same env: same start, same change
     budget, same step limit;
   - ``start``: the start ship itself, no edits (the reference).

   Each row reports the validity rate with its 95% Wilson interval (experiments/stats.py), the
   mean final quality score with a 95% normal interval (1.96 standard errors), the mean of
   every quality term (each in [0, 1], 1 best; ``quality.QUALITY_WEIGHTS``), the mean number of
   grid changes and steps, and seconds per episode. Episodes are recorded in
   ``run-dir/eval_episodes.jsonl`` as they finish (experiments/game_runs.py), so a rerun skips
   the episodes already there for the same row, env and model (a retrained model is a new
   model); ``--workers`` plays them in that many processes.
3. Output: the markdown report (budget and wall time, the table, the command) printed and
   written to ``--out``, and one picture per row of the first evaluation seed's final ship
   next to it (``results/starship/rl_ppo.png``, ``_staged``, ``_random``, ``_start``).

The network (``CursorView``): a narrow or turtle agent edits the one tile under the cursor, so
the policy sees the 9 x 9 tiles centred on the cursor (all channels; zero outside the grid, as
PCGRL crops its observation around the agent) and the whole grid average-pooled 2 x 2 (17 x 16
x 16: where the ship, its parts and the cursor are), flattened together into 256 ReLU units
shared by the policy and value heads (128 ReLU units each). For "wide" (no cursor) the crop is
all zeros (results/starship/NOTES.md: the networks it was chosen over).

PPO hyper-parameters: 8 envs x 256 steps per rollout (2,048 steps), 4 epochs of 256-sample
minibatches, learning rate 3e-4, gamma 0.99, GAE lambda 0.95, clip 0.2, entropy 0.01, value
coefficient 0.5, max gradient norm 0.5 (SB3's defaults except the minibatch size, the epochs
and the entropy bonus, as in experiments/sb3_baseline.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import random
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback, CheckpointCallback
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch.utils.tensorboard import SummaryWriter

from tablegym.envs.rates import per_second
from tablegym.envs.starship.env import MASKS, REPRESENTATIONS, REWARDS, STARTS
from tablegym.envs.starship.quality import QUALITY_WEIGHTS, quality, validate
from tablegym.envs.starship.ship import PART_FIELDS, Ship
from tablegym.experiments.game_runs import recorded, run_tasks
from tablegym.experiments.stats import Z95, wilson_interval
from tablegym.models.checkpoint import CheckpointError, load_checkpoint
from tablegym.models.starship.learned import GAME, LearnedGenerator, crop, export, num_inputs, policy_inputs, policy_linears
from tablegym.training.files import (
    RunFolderError,
    event_file_suffix,
    exit_refused,
    lock_run_dir,
    open_append,
    prepare_run_dir,
    real_folder,
    write_bytes_atomic,
    write_text_atomic,
)
from tablegym.training.flags import OneLineParser
from tablegym.training.runs import field_help
from tablegym.training.sb3 import load_meta, no_log_folder, progress_callbacks, save_model, write_report

ENV_ID = "tablegym/Starship-v0"
MAKE_ID = f"tablegym.envs:{ENV_ID}"
TARGETS_ENV_ID = "tablegym/StarshipTargets-v0"
TARGETS_MAKE_ID = f"tablegym.envs:{TARGETS_ENV_ID}"
"""``gymnasium.make(MAKE_ID)`` imports tablegym.envs (which registers the env) first."""
PROG = "python -m tablegym.experiments.starship.rl"
ROWS = ("ppo", "staged", "random", "start")
VECS = ("dummy", "subproc")
ROW_TITLES = {
    "ppo": "PPO (deterministic policy)",
    "staged": "staged generator (14 stages)",
    "random": "random edits",
    "start": "start ship (no edits)",
}


@dataclass
class Args:
    timesteps: int = 300_000
    """PPO's training budget in env steps (rounded up to whole rollouts of n_envs * n_steps)"""
    representation: str = "narrow"
    """the env's action representation: narrow, turtle or wide"""
    start: str = "partial"
    """the env's start ship: partial (the generator's stages 1-6), empty (hull only) or random"""
    size: int = 32
    """the grid's side in tiles"""
    max_steps: int | None = None
    """the env's step limit per episode (default: the env's, 4 * size * size)"""
    reward: str = "potential"
    """the env's reward: potential (quality + validity bonus) or gated (quality only once valid)"""
    targets: bool = False
    """ask for targets (StarshipTargets-v0: thrust points, weapon points and forward firepower drawn per episode; the policy sees them and how far the ship is from them)"""
    target_weight: float = 1.0
    """with --targets: the weight of the closeness to the targets in the reward"""
    target_caps: bool = False
    """with --targets: the mask forbids thrusters, weapons and forward weapons past their targets (conditioned.TargetStarshipEnv's caps)"""
    masks: str = "none"
    """the env's action masks, learned with sb3-contrib's MaskablePPO: none, repairable (--masks alone: no no-op writes, no second cockpit or reactor), build (also: cockpit and reactor kept, no emptying, writes on the ship or next to it) or safe (build, and no part or door sealed off from the cockpit)"""
    seed: int = 0
    """seeds python, numpy and torch, the training envs, PPO, and the random-edits policy"""
    episodes: int = 200
    """evaluation episodes per row, one per seed"""
    eval_seed: int = 10_000
    """the first evaluation seed (rows use seeds eval_seed .. eval_seed + episodes - 1)"""
    n_envs: int = 8
    """training envs"""
    vec: str = "dummy"
    """how the training envs run: dummy (all in this process) or subproc (SB3's SubprocVecEnv, one process each)"""
    n_steps: int = 256
    """steps per env per rollout"""
    batch_size: int = 256
    """PPO minibatch size"""
    n_epochs: int = 4
    """PPO epochs over each rollout"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.99
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO's clipping of the probability ratio"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    save_every: int = 500_000
    """env steps between snapshots of the model in run_dir (model_<steps>_steps.zip)"""
    crop_radius: int = 4
    """the policy sees the (2 r + 1)^2 tiles around the cursor"""
    run_dir: str = "runs/starship-ppo"
    """model.zip, train.json, eval_episodes.jsonl and the TensorBoard run live here"""
    out: str = "results/starship/rl.md"
    """the markdown report; the pictures go next to it as <stem>_<row>.png"""
    workers: int = 1
    """processes playing the evaluation episodes"""
    pictures: int = 4
    """the first seeds whose ships every row keeps for the side-by-side picture (<out's stem>_seeds.png)"""
    eval_only: bool = False
    """load run_dir/model.zip (or --model) instead of training"""
    resume: bool = False
    """train run_dir/model.zip (policy, value head and optimizer) --timesteps more steps; train.json adds up"""
    init_from: str = ""
    """start from this saved model (policy, value head, optimizer) instead of a new network, e.g. one trained under other masks (a curriculum), or from an exported generator (.pt: its policy; the value head is new, and the inputs it lacks, such as the targets, start with zero weights); steps count from 0"""
    value_warmup: int = 0
    """the first this many of --timesteps train the value head only (the policy stays as --init-from gave it)"""
    model: str = ""
    """with --eval-only: the SB3 model to evaluate (default run_dir/model.zip; e.g. a snapshot run_dir/model_<steps>_steps.zip)"""
    progress: bool = True
    """show progress bars"""


def parse_args(argv: list[str] | None = None) -> Args:
    """``Args`` from command-line flags named after its fields (``--n-envs 8``, ``--no-progress``)."""
    parser = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    docs = field_help(Args)
    choices = {"representation": REPRESENTATIONS, "start": STARTS, "reward": REWARDS, "masks": MASKS, "vec": VECS}
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.name == "masks":
            parser.add_argument(flag, nargs="?", const="repairable", default=f.default, choices=MASKS, help=docs[f.name])
        elif isinstance(f.default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=docs[f.name])
        else:
            kind = {"int": int, "int | None": int, "float": float}.get(str(f.type), str)
            parser.add_argument(flag, type=kind, default=f.default, choices=choices.get(f.name), help=docs[f.name])
    args = Args(**vars(parser.parse_args(argv)))
    for name in ("timesteps", "episodes", "n_envs", "n_steps", "batch_size", "n_epochs", "workers", "size", "pictures"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    model = Path(args.model or Path(args.run_dir) / "model.zip")
    if args.eval_only and not model.exists():
        parser.error(f"--eval-only: no model at {model}")
    if args.resume and (args.eval_only or not (Path(args.run_dir) / "train.json").exists()):
        parser.error(
            f"--resume continues a finished training run in --run-dir ({args.run_dir} has no train.json), "
            "and does not go with --eval-only"
        )
    if args.value_warmup < 0 or args.value_warmup >= args.timesteps:
        parser.error(f"--value-warmup must be in 0..{args.timesteps - 1} (a part of --timesteps), got {args.value_warmup}")
    if args.target_weight < 0 or (args.target_weight != 1.0 and not args.targets):
        parser.error(f"--target-weight must be >= 0 and goes with --targets, got {args.target_weight}")
    if args.target_caps and (not args.targets or args.masks == "none"):
        parser.error("--target-caps goes with --targets and action masks (--masks repairable, build or safe)")
    if args.init_from and (args.resume or args.eval_only or not Path(args.init_from).is_file()):
        parser.error(
            f"--init-from needs a saved model (no file {args.init_from!r}?) and goes with neither --resume nor --eval-only"
        )
    if args.model and not args.eval_only:
        parser.error("--model is the model --eval-only evaluates (training writes run_dir/model.zip)")
    return args


# -- the env the learner sees -------------------------------------------------------------------


def env_kwargs(args: Args) -> dict[str, Any]:
    """The keyword arguments of ``gymnasium.make(ENV_ID, ...)`` for training and evaluation."""
    kwargs: dict[str, Any] = {"representation": args.representation, "start": args.start, "size": args.size}
    if args.max_steps is not None:
        kwargs["max_steps"] = args.max_steps
    if args.reward != "potential":
        kwargs["reward"] = args.reward
    if args.masks != "none":
        kwargs["masks"] = True if args.masks == "repairable" else args.masks
    return kwargs


def make_env(kwargs: dict[str, Any], targets: bool = False, target_weight: float = 1.0, caps: bool = False) -> gymnasium.Env:
    """The training env: Starship-v0 (StarshipTargets-v0 with ``targets``, rewarding closeness
    with ``target_weight``, its targets upper bounds with ``caps``) with ``kwargs``, under
    Monitor (episode return and length)."""
    from stable_baselines3.common.monitor import Monitor

    if targets:
        return Monitor(gymnasium.make(TARGETS_MAKE_ID, target_weight=target_weight, caps=caps, **kwargs))
    return Monitor(gymnasium.make(MAKE_ID, **kwargs))


# -- the policy's network -----------------------------------------------------------------------


class CursorView(BaseFeaturesExtractor):
    """The tiles around the cursor and the whole grid pooled, into ``features_dim`` ReLU units.

    The crop is the ``(2 r + 1)^2`` window centred on the cursor (the observation's last
    channel), every channel, zero outside the grid and zero when there is no cursor ("wide").
    """

    def __init__(
        self,
        observation_space: gymnasium.spaces.Box | gymnasium.spaces.Dict,
        radius: int = 4,
        pool: int = 2,
        features_dim: int = 256,
    ) -> None:
        super().__init__(observation_space, features_dim)
        self.radius, self.pool = radius, pool
        self.fc = torch.nn.Sequential(torch.nn.Linear(num_inputs(observation_space, radius, pool), features_dim), torch.nn.ReLU())

    def crop(self, obs: torch.Tensor) -> torch.Tensor:
        """The (B, C, 2r + 1, 2r + 1) window of ``obs`` centred on each cursor."""
        return crop(obs, self.radius)

    def forward(self, obs: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor:
        return self.fc(policy_inputs(obs, self.radius, self.pool))


def policy_kwargs(radius: int) -> dict[str, Any]:
    """The policy's network: ``CursorView`` into 256 units, then 128 for each head."""
    return dict(
        features_extractor_class=CursorView,
        features_extractor_kwargs=dict(radius=radius),
        net_arch=dict(pi=[128], vf=[128]),
        activation_fn=torch.nn.ReLU,
        normalize_images=False,
    )


def build_model(env, args: Args):
    """PPO with this experiment's network and hyper-parameters (see the module doc)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    algo = MaskablePPO if args.masks != "none" else PPO
    return no_log_folder(
        algo(
            "MultiInputPolicy" if args.targets else "MlpPolicy",
            env,
            learning_rate=args.learning_rate,
            n_steps=args.n_steps,
            batch_size=args.batch_size,
            n_epochs=args.n_epochs,
            gamma=args.gamma,
            gae_lambda=args.gae_lambda,
            clip_range=args.clip_range,
            ent_coef=args.ent_coef,
            vf_coef=args.vf_coef,
            policy_kwargs=policy_kwargs(args.crop_radius),
            seed=args.seed,
            device="cpu",
            verbose=0,
        )
    )


def load_generator_policy(model: Any, path: str | Path) -> None:
    """Set ``model``'s policy (shared features, policy layers, action logits) to the exported
    generator at ``path``. Inputs the generator did not have (the targets and deficits after the
    grid's inputs) get zero weights, so the new model starts out acting as the generator did."""
    payload = load_checkpoint(path, game=GAME)
    state = {k: v.float() for k, v in payload["model"].items()}
    layers = policy_linears(model)
    if len(state) != 2 * len(layers):
        raise ValueError(f"it has {len(state) // 2} linear layers, this policy {len(layers)}")
    with torch.no_grad():
        for i, layer in enumerate(layers):
            weight, bias = state[f"{2 * i}.weight"], state[f"{2 * i}.bias"]
            rows, cols = weight.shape
            wider = i == 0 and cols < layer.in_features  # the first layer may gain inputs
            if rows != layer.out_features or (cols != layer.in_features and not wider):
                raise ValueError(f"its layer {i} is {cols} -> {rows}, this policy's {layer.in_features} -> {layer.out_features}")
            layer.weight.zero_()
            layer.weight[:, :cols] = weight
            layer.bias.copy_(bias)


def train_policy(model: Any, on: bool) -> None:
    """Let PPO's updates change the policy (and the shared features) or, with ``on`` false,
    only the value head: Adam skips parameters left without gradients."""
    policy = model.policy
    for module in (policy.features_extractor, policy.mlp_extractor.policy_net, policy.action_net):
        module.requires_grad_(on)


# -- training -----------------------------------------------------------------------------------

LOSS_TAGS = {
    "train/value_loss": "losses/value_loss",
    "train/policy_gradient_loss": "losses/policy_loss",
    "train/entropy_loss": "losses/entropy",
    "train/approx_kl": "losses/approx_kl",
    "train/clip_fraction": "losses/clipfrac",
    "train/explained_variance": "losses/explained_variance",
    "train/learning_rate": "charts/learning_rate",
}
"""SB3's names of what PPO.train() records, and their TensorBoard tags (CleanRL's names)."""


class TensorBoardCharts(BaseCallback):
    """Writes ``charts/`` and ``losses/`` scalars to ``writer``, indexed by the global env step.

    SB3's VecEnv resets a finished env at once; the finished episode's last ``info`` (with
    Monitor's "episode" record and the env's "quality", "valid", "changes") comes back in the
    same step. PPO records its losses in its logger during ``train()``; they are read at the
    next rollout's start (and at the end of training), after SB3 has handled them.
    """

    def __init__(self, writer: SummaryWriter) -> None:
        super().__init__()
        self.writer = writer
        self.started = time.perf_counter()

    def _on_step(self) -> bool:
        step = self.num_timesteps
        for done, info in zip(self.locals["dones"], self.locals["infos"]):
            if done and "episode" in info:
                self.writer.add_scalar("charts/episodic_return", info["episode"]["r"], step)
                self.writer.add_scalar("charts/episodic_length", info["episode"]["l"], step)
                self.writer.add_scalar("charts/episode_quality", info["quality"], step)
                self.writer.add_scalar("charts/episode_valid", float(info["valid"]), step)
                self.writer.add_scalar("charts/episode_changes", info["changes"], step)
                if "closeness" in info:
                    self.writer.add_scalar("charts/episode_closeness", info["closeness"], step)
        return True

    def _log_update(self) -> None:
        step = self.num_timesteps
        values = self.model.logger.name_to_value
        for key, tag in LOSS_TAGS.items():
            if key in values:
                self.writer.add_scalar(tag, values[key], step)
        self.writer.add_scalar("charts/SPS", per_second(step, time.perf_counter() - self.started), step)

    def _on_rollout_start(self) -> None:
        if self.num_timesteps:
            self._log_update()

    def _on_training_end(self) -> None:
        self._log_update()
        self.writer.flush()


class Snapshots(CheckpointCallback):
    """SB3's ``CheckpointCallback`` (``model_<steps>_steps.zip`` every ``save_freq`` calls) saving
    atomically (training.sb3.save_model): a link at a snapshot's name is replaced, not written through."""

    def _on_step(self) -> bool:
        if self.n_calls % self.save_freq == 0:
            save_model(self.model, self._checkpoint_path(extension="zip"))
        return True


def seed_everything(seed: int) -> None:
    """Seed python's, numpy's and torch's global generators (PPO seeds its envs itself)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train(args: Args) -> dict[str, Any]:
    """Train PPO for ``args.timesteps`` env steps; save model.zip, train.json and the TensorBoard run
    (the run folder locked meanwhile, every file written atomically: training.files)."""
    lock = lock_run_dir(prepare_run_dir(args.run_dir))
    try:
        return _train(args, Path(args.run_dir))
    finally:
        lock.release()


def _train(args: Args, run_dir: Path) -> dict[str, Any]:
    from stable_baselines3.common.utils import get_latest_run_id
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    seed_everything(args.seed)
    torch.set_num_threads(1)
    kwargs = env_kwargs(args)
    envs = [functools.partial(make_env, kwargs, args.targets, args.target_weight, args.target_caps) for _ in range(args.n_envs)]
    venv = SubprocVecEnv(envs, start_method="forkserver") if args.vec == "subproc" else DummyVecEnv(envs)
    before = json.loads((run_dir / "train.json").read_text()) if args.resume else {}
    start_from = run_dir / "model.zip" if args.resume else args.init_from
    if start_from and Path(start_from).suffix == ".pt":  # an exported generator: its policy in a new model
        model = build_model(venv, args)
        try:
            load_generator_policy(model, start_from)
        except (CheckpointError, ValueError) as err:
            venv.close()
            raise SystemExit(f"{PROG}: error: cannot start from {start_from}: {err}") from None
    elif start_from:  # the saved policy, value head and optimizer, stepping these envs
        try:
            model = load_model(str(start_from), args, env=venv)
        except (ValueError, TypeError, KeyError, RuntimeError, OSError) as err:
            venv.close()
            algo = "MaskablePPO" if args.masks != "none" else "PPO"
            raise SystemExit(
                f"{PROG}: error: cannot continue {start_from} as {algo} "
                f"(--masks {args.masks}; a model trained with masks needs masks and one without none): {err}"
            ) from None
        model.set_random_seed(args.seed)
    else:
        model = build_model(venv, args)

    tb_dir = real_folder(run_dir / f"ppo_{get_latest_run_id(str(run_dir), 'ppo') + 1}")
    writer = SummaryWriter(str(tb_dir), filename_suffix=event_file_suffix())
    writer.add_text(
        "hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items())
    )

    started = time.perf_counter()
    # a snapshot every save_every steps (model_<steps>_steps.zip): a long run can be evaluated before it ends
    snapshots = Snapshots(max(1, args.save_every // args.n_envs), str(run_dir), name_prefix="model")
    callbacks = [TensorBoardCharts(writer), snapshots, *progress_callbacks(args.progress)]
    if args.value_warmup:  # the value head learns the returns of the policy it was given before the policy moves
        train_policy(model, False)
        model.learn(total_timesteps=args.value_warmup, callback=callbacks, reset_num_timesteps=not args.resume)
        train_policy(model, True)
    model.learn(
        total_timesteps=args.timesteps - args.value_warmup,
        callback=callbacks,
        reset_num_timesteps=not (args.resume or args.value_warmup),
    )
    seconds = time.perf_counter() - started + before.get("train_seconds", 0.0)
    writer.close()
    venv.close()

    save_model(model, run_dir / "model.zip")
    meta = {
        "algo": "ppo",
        "env": TARGETS_ENV_ID if args.targets else ENV_ID,
        "env_kwargs": kwargs,
        "seed": args.seed,
        "n_envs": args.n_envs,
        "rollout": args.n_envs * args.n_steps,
        "budget": args.timesteps + before.get("budget", 0),
        "timesteps": int(model.num_timesteps),
        "train_seconds": seconds,
        "steps_per_s": per_second(model.num_timesteps, seconds),
        "tensorboard": str(tb_dir),
        "init_from": before.get("init_from", args.init_from or None),
    }
    write_text_atomic(run_dir / "train.json", json.dumps(meta, indent=1) + "\n")
    return meta


# -- evaluation ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=2)
def _env(kwargs_json: str) -> gymnasium.Env:
    """One evaluation env per configuration and process."""
    return gymnasium.make(MAKE_ID, **json.loads(kwargs_json))


@functools.lru_cache(maxsize=2)
def _generator(path: str) -> LearnedGenerator:
    """The exported generator, loaded once per process."""
    torch.set_num_threads(1)
    return LearnedGenerator.load(path)


def export_generator(args: Args, model: Any, model_path: Path) -> Path:
    """The policy of ``model`` (saved at ``model_path``) as a generator checkpoint beside it:
    ``generator.pt`` for model.zip, ``generator_<steps>.pt`` for a snapshot."""
    steps = int(model.num_timesteps)
    name = "generator.pt" if model_path.name == "model.zip" else f"generator_{steps}.pt"
    return export(
        model,
        env_kwargs(args),
        model_path.with_name(name),
        radius=args.crop_radius,
        targets=args.targets,
        caps=args.target_caps,
        metadata={"timesteps": steps, "model": model_path.name, "command": f"{PROG} {shlex.join(sys.argv[1:])}"},
    )


def load_model(path: str, args: Args, env: Any = None):
    """A saved PPO (or MaskablePPO) model, stepping ``env`` if given (else one env of ``args``):
    the network built here by ``build_model`` from ``args`` (this module's ``CursorView``), then
    the file's weights, optimizer state and step count (tablegym.models.sb3_files.restore).
    Nothing in the file is unpickled, so a model from elsewhere cannot run code."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from tablegym.models.sb3_files import restore

    if env is None:
        env = DummyVecEnv([functools.partial(make_env, env_kwargs(args), args.targets, args.target_weight, args.target_caps)])
    return restore(build_model(env, args), path)


_MODELS: dict[str, Any] = {}


def _model(path: str, args: Args):
    """The saved model for evaluation, loaded once per process and file."""
    torch.set_num_threads(1)
    if path not in _MODELS:
        _MODELS[path] = load_model(path, args)
    return _MODELS[path]


def run_episode(env: gymnasium.Env, seed: int, policy: Callable[[np.ndarray], Any] | None) -> tuple[Ship, dict]:
    """Reset ``env`` to ``seed`` and play ``policy`` (None: no steps) to the episode's end."""
    obs, info = env.reset(seed=seed)
    done = policy is None
    while not done:
        obs, _, terminated, truncated, info = env.step(policy(obs))
        done = terminated or truncated
    return env.unwrapped.ship, info


def random_action(env: gymnasium.Env) -> Any:
    """A uniformly random action among those the env's mask allows (all of them without masks)."""
    space, mask = env.action_space, env.unwrapped.action_masks().astype(np.int8)
    if env.unwrapped.masks == "none":
        return space.sample()
    if isinstance(space, gymnasium.spaces.Discrete):
        return space.sample(mask)
    return space.sample(tuple(np.split(mask, np.cumsum(space.nvec)[:-1])))


def policy_seed(seed: int, episode_seed: int) -> int:
    """The random-edits policy's seed for one episode, from the run's seed and the episode's."""
    return int(np.random.SeedSequence((seed, episode_seed)).generate_state(1)[0])


def play_one(task: tuple[dict, int, str, str, int, bool]) -> dict:
    """One evaluation episode ``(ident, seed, env kwargs JSON, model path, run seed, keep ship)``:
    its record, ``ident`` (the row, the env, the model) included; the final ship if ``keep``."""
    ident, seed, kwargs_json, generator_path, run_seed, keep = task
    row = ident["row"]
    env = _env(kwargs_json)
    start = time.perf_counter()
    if row == "staged":
        ship, info = env.unwrapped.pipeline.generate(seed), {}
    elif row == "start":
        ship, info = run_episode(env, seed, None)
    elif row == "random":
        env.action_space.seed(policy_seed(run_seed, seed))
        ship, info = run_episode(env, seed, lambda obs: random_action(env))
    elif row == "ppo":  # the exported policy (float16 weights): what the shipped checkpoint builds
        ship, info = _generator(generator_path).generate(seed)
    else:
        raise ValueError(f"row must be one of {ROWS}, got {row!r}")
    seconds = time.perf_counter() - start
    v, q = validate(ship), quality(ship)
    rec = {
        "game": seed,
        **ident,
        "seed": seed,
        "valid": v.ok,
        "reasons": v.reasons,
        "quality": q.score,
        "terms": q.terms,
        "changes": info.get("changes"),
        "steps": info.get("steps"),
        "seconds": seconds,
    }
    if keep:
        rec["ship"] = {"tiles": ship.tiles.tolist(), "part": ship.part.tolist(), "parts": ship.parts.tolist()}
    return rec


def ship_of(rec: dict) -> Ship:
    """The ship kept in an episode record."""
    s = rec["ship"]
    return Ship(
        np.array(s["tiles"], np.int8), np.array(s["part"], np.int16), np.array(s["parts"], np.int16).reshape(-1, PART_FIELDS)
    )


def evaluate(args: Args, meta: dict, generator_path: Path) -> dict[str, list[dict]]:
    """Every row's episode records over the evaluation seeds, by row (resuming
    run_dir/eval_episodes.jsonl); the first seed's records keep the final ship."""
    torch.set_num_threads(1)
    kwargs_json = json.dumps(env_kwargs(args), sort_keys=True)
    seeds = range(args.eval_seed, args.eval_seed + args.episodes)
    out = str(Path(prepare_run_dir(args.run_dir)) / "eval_episodes.jsonl")
    open_append(out).close()  # made now, and refused if a link (run_tasks appends to it by name)
    model_id = {
        "ppo": f"{generator_path.name}: {meta['timesteps']} steps in {meta['train_seconds']:.3f} s",
        "random": f"seed {args.seed}",
    }
    results = {}
    for row in ROWS:
        ident = {
            "row": row,
            "env": kwargs_json,
            "model": model_id.get(row, ""),
            **({"targets": "drawn from the seed"} if args.targets and row == "ppo" else {}),
        }
        done = recorded(out, **ident)
        # the first seed's record keeps its ship for the pictures (replayed if an older run did not)
        pictured = set(seeds[: args.pictures])
        todo = [s for s in seeds if s not in done or (s in pictured and "ship" not in done[s])]
        tasks = [(ident, s, kwargs_json, str(generator_path), args.seed, s in pictured) for s in todo]
        start = time.perf_counter()
        run_tasks(
            play_one,
            tasks,
            done,
            total=len(seeds),
            workers=args.workers,
            out=out,
            label=row,
            progress=args.progress,
            postfix="quality",
        )
        if tasks:
            print(f"evaluated {row}: {len(tasks)} episodes in {time.perf_counter() - start:.0f} s", flush=True)
        results[row] = [done[s] for s in seeds]
    return results


# -- the report ---------------------------------------------------------------------------------


def summarise(records: list[dict]) -> dict[str, Any]:
    """A row's numbers: validity with its Wilson interval, mean quality +- 95%, mean terms, effort."""
    n = len(records)
    valid = sum(r["valid"] for r in records)
    scores = np.array([r["quality"] for r in records], float)
    changes = [r["changes"] for r in records if r["changes"] is not None]
    steps = [r["steps"] for r in records if r["steps"] is not None]
    return {
        "episodes": n,
        "valid": valid,
        "validity": valid / n,
        "wilson": wilson_interval(valid, n),
        "quality": float(scores.mean()),
        "quality_ci": float(Z95 * scores.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan,
        "terms": {k: float(np.mean([r["terms"][k] for r in records])) for k in QUALITY_WEIGHTS},
        "changes": float(np.mean(changes)) if changes else math.nan,
        "steps": float(np.mean(steps)) if steps else math.nan,
        "seconds": float(np.mean([r["seconds"] for r in records])),
    }


def _num(x: float, digits: int = 1) -> str:
    return "-" if math.isnan(x) else f"{x:,.{digits}f}"


def results_table(summaries: dict[str, dict[str, Any]]) -> str:
    """The markdown table: one row per generator."""
    header = [
        "row",
        "generator",
        "episodes",
        "valid",
        "validity [95% Wilson]",
        "quality ± 95%",
        *QUALITY_WEIGHTS,
        "changes",
        "steps",
        "s/episode",
        "ships/s",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row, s in summaries.items():
        lo, hi = s["wilson"]
        cells = [
            f"`{row}`",
            ROW_TITLES[row],
            str(s["episodes"]),
            f"{s['valid']}/{s['episodes']}",
            f"{s['validity']:.3f} [{lo:.3f}, {hi:.3f}]",
            f"{s['quality']:.4f} ± {_num(s['quality_ci'], 4)}",
            *(f"{s['terms'][k]:.3f}" for k in QUALITY_WEIGHTS),
            _num(s["changes"]),
            _num(s["steps"]),
            f"{s['seconds']:.3f}",
            f"{1 / s['seconds']:,.1f}" if s["seconds"] > 0 else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def image_paths(out: str) -> dict[str, Path]:
    """Where each row's picture goes: next to ``out``, named ``<out's stem>_<row>.png``; the
    side-by-side picture of every row and pictured seed is ``<out's stem>_seeds.png``."""
    path = Path(out)
    return {row: path.with_name(f"{path.stem}_{row}.png") for row in (*ROWS, "seeds")}


def write_images(results: dict[str, list[dict]], out: str) -> dict[str, Path]:
    """One picture per row: the final ship of the first evaluation seed, titled with its numbers."""
    from tablegym.envs.starship.render import draw_ship, draw_ships, encode_png

    paths = image_paths(out)
    paths["seeds"].parent.mkdir(parents=True, exist_ok=True)
    for row in ROWS:
        rec = results[row][0]
        title = f"{row} seed {rec['seed']} q={rec['quality']:.3f} {'valid' if rec['valid'] else 'invalid'}"
        write_bytes_atomic(paths[row], encode_png(draw_ship(ship_of(rec), title=title)))
    pictured = [[rec for rec in results[row] if "ship" in rec] for row in ROWS]
    titled = [
        (f"{rec['row']} {rec['seed']} q {rec['quality']:.2f} {'valid' if rec['valid'] else 'invalid'}", ship_of(rec))
        for recs in pictured
        for rec in recs
    ]
    write_bytes_atomic(paths["seeds"], encode_png(draw_ships(titled, cell=6, columns=max(1, len(pictured[0])))))
    return paths


def report(args: Args, meta: dict, results: dict[str, list[dict]], images: dict[str, Path], command: str) -> str:
    """The whole markdown report: what was trained and how long, the table, the pictures, the command."""
    kwargs = meta.get("env_kwargs", env_kwargs(args))
    env_text = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    steps, train_s = meta["timesteps"], meta["train_seconds"]
    budget = meta.get("budget", steps)
    taken = "" if budget == steps else f" ({steps:,} taken: whole rollouts of {meta.get('rollout', '?'):,} steps)"
    if math.isnan(train_s):
        budget, taken = steps, " (a snapshot taken during a longer run)"
    timing = (
        ""
        if math.isnan(train_s)
        else f": {train_s:,.0f} s of wall time ({train_s / 60:.1f} min, {steps / train_s:,.0f} steps/s; one process, one torch thread)"
    )
    eval_s = sum(r["seconds"] for recs in results.values() for r in recs)
    lines = [
        f"## Starship: PPO ({kwargs['representation']}, start {kwargs['start']}) vs the staged generator",
        "",
        f"PPO (stable-baselines3, network `CursorView`) trained on `{TARGETS_ENV_ID if args.targets else ENV_ID}` ({env_text}), seed "
        f"{meta.get('seed', args.seed)}, for a budget of {budget:,} env steps{taken}{timing}; "
        "the `ppo` row plays the policy exported in float16 (`learned.py`), deterministic and masked. "
        f"Evaluated on seeds {args.eval_seed}..{args.eval_seed + args.episodes - 1}, the same {args.episodes} "
        f"for every row ({eval_s / 60:.1f} min of episodes). Term columns: the mean of each quality term in [0, 1] "
        "(1 best); the quality score is their weighted mean. Changes and steps: per episode, as the env counts them.",
        "",
        results_table({row: summarise(recs) for row, recs in results.items()}),
        "",
        f"Pictures (seed {args.eval_seed}): "
        + ", ".join(f"[{row}]({images[row].name})" for row in ROWS)
        + f"; every row side by side on seeds {args.eval_seed}..{args.eval_seed + args.pictures - 1}: "
        f"[{images['seeds'].name}]({images['seeds'].name})",
        "",
        "Command:",
        "",
        f"```\n{command}\n```",
    ]
    return "\n".join(lines) + "\n"


# -- command line -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> str:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    try:  # training and evaluation both write the run folder: it is this command's until it ends
        lock = lock_run_dir(prepare_run_dir(args.run_dir))
    except RunFolderError as err:
        exit_refused(PROG, err)
    try:
        return _train_and_report(args, argv)
    finally:
        lock.release()


def _train_and_report(args: Args, argv: list[str]) -> str:
    torch.set_num_threads(1)
    model_path = Path(args.model or Path(args.run_dir) / "model.zip")
    if args.eval_only:
        model = _model(str(model_path), args)
        meta = load_meta(args.run_dir, model)
        if int(model.num_timesteps) != meta["timesteps"]:  # a snapshot taken during training
            meta = {**meta, "timesteps": int(model.num_timesteps), "train_seconds": math.nan}
    else:
        meta = train(args)
        model = _model(str(model_path), args)
        print(
            f"trained PPO: {meta['timesteps']:,} steps in {meta['train_seconds']:.0f} s "
            f"({meta['steps_per_s']:,.0f} steps/s); saved {args.run_dir}/model.zip",
            flush=True,
        )
    results = evaluate(args, meta, export_generator(args, model, model_path))
    images = write_images(results, args.out)
    text = report(args, meta, results, images, f"{PROG} {shlex.join(argv)}")
    return write_report(text, args.out)


if __name__ == "__main__":
    # Run the imported module's main, not this __main__ copy: the network class pickled into
    # model.zip (CursorView) is then named tablegym.experiments.starship.rl.CursorView, which the safe
    # loader (models/sb3_files.restore) accepts; __main__'s class would be pickled as code.
    from tablegym.experiments.starship import rl as module

    module.main()
