"""Generic deep-RL baselines for Threes!: SB3 DQN and sb3-contrib MaskablePPO, trained then evaluated.

    python -m tablegym.experiments.threes.sb3 maskableppo --timesteps 500000 --seed 0 \\
        --run-dir runs/threes-sb3-maskableppo --eval-games 200 --out results/threes/sb3.jsonl
    python -m tablegym.experiments.threes.sb3 dqn --timesteps 500000 --seed 0 \\
        --run-dir runs/threes-sb3-dqn --eval-games 200 --out results/threes/sb3.jsonl
    python -m tablegym.experiments.threes.evaluate --report results/threes/sb3.jsonl

What the learner sees (``make_env``), outermost last:

1. ``gymnasium.make("tablegym/Threes-v0", hint=..., illegal_action=...)``. MaskablePPO trains
   with ``illegal_action="raise"``: it samples among ``action_masks()`` only, so it never swipes
   illegally. DQN cannot mask, so it trains with ``illegal_action="penalty"``: an illegal swipe
   ends the episode (the lost future score is the penalty).
2. ``Monitor``: episode statistics of the TRUE game score (the env's return equals the final
   score), so TensorBoard's ``rollout/ep_rew_mean`` is the mean score of the training games.
3. ``ScaleObservation``: the 25 observation entries divided by the Box's ``high`` (ranks by 15,
   deck counts by 4), so every input lies in [0, 1].
4. ``LogReward``: reward ``log2(1 + r)`` for a score increase ``r``. Threes' score grows
   geometrically (a card of 3 * 2^k scores 3^(k+1)), so raw per-step rewards span 0 to
   hundreds of thousands; the log keeps each reward within a few units (returns within a few
   hundred), which keeps the value and Q losses well conditioned, while still ranking bigger
   merges above smaller ones.

Both learners use a [256, 256] ReLU MLP. (With SB3's default tanh for PPO the value net's
second layer saturated: its value was one constant over all states, explained variance 0.)

Evaluation never uses the transformed reward: it plays ``--eval-games`` games directly on the
rules core, each seeded like ``evaluate.play_one`` (``SeedSequence(seed, spawn_key=(game,))``),
feeds the agent ``state.observation() / high`` (the same vector the wrapped env gives; a test
checks it), and records the true final score. At evaluation BOTH agents choose among the legal
swipes only: DQN takes the argmax of its Q-values over legal actions (``model.q_net``), and
MaskablePPO calls ``predict(obs, action_masks=mask, deterministic=True)``. Records are the JSON
lines of ``threes_eval`` (agent ``sb3-dqn`` / ``sb3-maskableppo``) plus ``timesteps`` and
``train_seconds``; a rerun (e.g. ``--eval-only``, which loads ``run-dir/model.zip``) skips games
already recorded for the same trained model (same agent, hint, seed, timesteps and train_seconds).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

import gymnasium
import numpy as np
import torch

from tablegym.experiments.game_runs import recorded
from tablegym.training import sb3
from tablegym.training.files import RunFolderError, exit_refused, open_append
from tablegym.training.flags import OneLineParser, check_appendable
from tablegym.training.parallel import process_context
from tablegym.training.sb3 import (ALGOS, ScaleObservation, build_model, learn_and_save, make_policy)

ENV_ID = "tablegym/Threes-v0"


# -- the env the learner sees -------------------------------------------------------------------


def obs_high(hint: str = "+") -> np.ndarray:
    """The observation Box's upper bounds (the scale of ``ScaleObservation``)."""
    import tablegym.envs  # noqa: F401  (registers tablegym/Threes-v0)

    env = gymnasium.make(ENV_ID, hint=hint)
    high = env.observation_space.high.astype(np.float32)
    env.close()
    return high


class LogReward(gymnasium.RewardWrapper):
    """Reward log2(1 + r) for a score increase r >= 0 (see the module doc)."""

    def reward(self, reward: float) -> float:
        return float(np.log2(1.0 + reward))


def make_env(algo: str, hint: str = "+") -> gymnasium.Env:
    """The training env for ``algo``: the registered env, Monitor (true score), scaled obs, log reward."""
    import tablegym.envs  # noqa: F401  (registers tablegym/Threes-v0)
    from stable_baselines3.common.monitor import Monitor

    illegal = "penalty" if algo == "dqn" else "raise"
    env = gymnasium.make(ENV_ID, hint=hint, illegal_action=illegal)
    return LogReward(ScaleObservation(Monitor(env)))


def load_model(algo: str, run_dir: str):
    """The model ``train`` saved in ``run_dir``, rebuilt by ``build_model`` on its training env
    (the hint rule from train.json) with the file's weights; nothing in the file is unpickled."""
    saved = Path(run_dir) / "train.json"
    hint = json.loads(saved.read_text()).get("hint", "+") if saved.exists() else "+"
    return sb3.load_model(algo, run_dir, make_env(algo, hint))


# -- training -----------------------------------------------------------------------------------


def train(algo: str, *, timesteps: int, seed: int, run_dir: str, hint: str = "+", n_envs: int | None = None,
          progress: bool = True) -> dict:
    """Train ``algo`` for ``timesteps`` env steps; save run_dir/model.zip and run_dir/train.json."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    n_envs = n_envs or (8 if algo == "maskableppo" else 1)  # PPO batches its rollouts over 8 envs
    venv = DummyVecEnv([lambda: make_env(algo, hint) for _ in range(n_envs)])
    model = build_model(algo, venv, seed=seed, tensorboard_log=run_dir)
    meta = learn_and_save(model, timesteps=timesteps, run_dir=run_dir, tb_log_name=algo, progress=progress,
                          algo=algo, seed=seed, hint=hint, n_envs=n_envs)
    venv.close()
    return meta


# -- evaluation: legal swipes only, true score --------------------------------------------------


def play_game(policy: Callable[[np.ndarray, np.ndarray], int], *, seed: int, index: int, hint: str,
              high: np.ndarray) -> dict:
    """One game on the rules core, seeded like evaluate.play_one; the records.play_game record."""
    from tablegym.experiments.threes.records import play_game as play

    def agent(state, rng=None) -> int:  # child() raises on an illegal swipe
        return policy((state.observation() / high).astype(np.float32), state.legal_action_mask().astype(bool))

    rec = play(agent, "", hint, seed, index)
    del rec["agent"]
    return rec


_WORKER: dict = {}


def _init_worker(algo: str, run_dir: str, hint: str) -> None:
    torch.set_num_threads(1)
    _WORKER["policy"] = make_policy(algo, load_model(algo, run_dir))
    _WORKER["high"] = obs_high(hint)


def _play_task(task: tuple[int, int, str]) -> dict:
    seed, index, hint = task
    return play_game(_WORKER["policy"], seed=seed, index=index, hint=hint, high=_WORKER["high"])


def evaluate(algo: str, *, run_dir: str, games: int, seed: int, hint: str = "+", out: str | None = None,
             workers: int = 1, model=None, meta: dict | None = None) -> list[dict]:
    """Play games 0..games-1 with the model of run_dir (or ``model``), appending records to ``out``
    (a plain file in a folder that exists: a link there is refused, training.files.open_append)."""
    torch.set_num_threads(1)
    agent = f"sb3-{algo}"
    if meta is None:
        meta = json.loads((Path(run_dir) / "train.json").read_text())
    extra = {"timesteps": meta["timesteps"], "train_seconds": meta["train_seconds"]}
    done = recorded(out, agent=agent, hint=hint, seed=seed, **extra)
    tasks = [(seed, i, hint) for i in range(games) if i not in done]
    sink = open_append(out) if out else None
    try:
        if workers > 1:
            pool = process_context().Pool(workers, _init_worker, (algo, run_dir, hint))
            results = pool.imap_unordered(_play_task, tasks)
        else:
            pool = None
            policy = make_policy(algo, model if model is not None else load_model(algo, run_dir))
            high = obs_high(hint)
            results = (play_game(policy, seed=s, index=i, hint=h, high=high) for s, i, h in tasks)
        for rec in results:
            rec = {"game": rec["game"], "agent": agent, **{k: v for k, v in rec.items() if k != "game"}, **extra}
            done[rec["game"]] = rec
            if sink:
                sink.write(json.dumps(rec) + "\n")
                sink.flush()
        if pool is not None:
            pool.close()
            pool.join()
    finally:
        if sink:
            sink.close()
    return [done[i] for i in sorted(done) if i < games]


# -- command line -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    from tablegym.experiments.threes.records import HEADER, markdown_row, summarise

    parser = OneLineParser(prog="python -m tablegym.experiments.threes.sb3", description=__doc__.split("\n\n")[0])
    parser.add_argument("algo", choices=ALGOS)
    parser.add_argument("--timesteps", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0, help="training seed and evaluation game seed")
    parser.add_argument("--run-dir", help="model.zip, train.json and TensorBoard logs (default runs/threes-sb3-ALGO)")
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--out", help="append evaluation games here (threes_eval JSON lines)")
    parser.add_argument("--workers", type=int, default=1, help="processes for evaluation games")
    parser.add_argument("--n-envs", type=int, help="training envs (default: 8 for maskableppo, 1 for dqn)")
    parser.add_argument("--hint", choices=("+", "candidates"), default="+")
    parser.add_argument("--eval-only", action="store_true", help="load run-dir/model.zip instead of training")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    run_dir = args.run_dir or f"runs/threes-sb3-{args.algo}"
    if args.out:
        check_appendable(parser, "--out", args.out)
    torch.set_num_threads(1)

    if not args.eval_only:
        try:
            meta = train(args.algo, timesteps=args.timesteps, seed=args.seed, run_dir=run_dir, hint=args.hint,
                         n_envs=args.n_envs, progress=not args.no_progress)
        except RunFolderError as err:  # another training holds the run folder, or it is a link: one line, exit 2
            exit_refused(parser.prog, err)
        print(f"trained {args.algo}: {meta['timesteps']:,} steps in {meta['train_seconds']:.0f} s "
              f"({meta['steps_per_s']:,.0f} steps/s); saved {run_dir}/model.zip", flush=True)
    start = time.perf_counter()
    try:
        records = evaluate(args.algo, run_dir=run_dir, games=args.eval_games, seed=args.seed, hint=args.hint,
                           out=args.out, workers=args.workers)
    except RunFolderError as err:  # --out is a link: records are not appended through it
        exit_refused(parser.prog, err)
    print(f"evaluated {len(records)} games in {time.perf_counter() - start:.0f} s", flush=True)
    print(HEADER)
    print(markdown_row(f"sb3-{args.algo}", summarise(records), args.hint))


if __name__ == "__main__":
    main()
