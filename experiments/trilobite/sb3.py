"""MaskablePPO (sb3-contrib) on tablegym/Trilobite-v0, and its critic as alpha-beta's leaf evaluator.

    python -m tablegym.experiments.trilobite.sb3 train --timesteps 500000 --run-dir runs/trilobite-ppo
    tablegym eval trilobite "alphabeta:eval=learned:runs/trilobite-ppo/model.zip,depth=5" \\
        "alphabeta:eval=advanced,depth=5" --games 200 --workers 2 --seed 0      (make trilobite-ppo)

The learner plays the 8 x 7 game in both seats (``agent_seat="alternate"``) in four envs, each
against its own opponent (random, then the hand-made ``advanced`` evaluator searched 1, 2 and 3
plies deep), so it meets easy wins and honest losses in every rollout. The reward is +1 / -1 / 0
at the end of the game and nothing before, so the critic ``V(obs)`` estimates the result for the
player to move from the env's observation (own chips, opponent chips, to-move plane), which is
what a negamax leaf evaluator needs.

``eval=learned:PATH.zip`` reads the critic from the zip as data (``tablegym.models.sb3_files``:
nothing in the file is unpickled) into a compiled evaluator over the game's observation kernel, so ``tablegym eval`` plays it inside alpha-beta
against ``advanced`` and the shipped TD network, both seats.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch

from tablegym.envs.rates import per_second
from tablegym.training.files import RunFolderError, exit_refused, lock_run_dir, prepare_run_dir, write_text_atomic
from tablegym.training.flags import OneLineParser

OPPONENTS = ("random", "alphabeta:eval=advanced,depth=1", "alphabeta:eval=advanced,depth=2",
             "alphabeta:eval=advanced,depth=3")


def make_vec_env(seed: int):
    import gymnasium
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    import tablegym.envs  # noqa: F401  (registers the ids)

    def factory(opponent: str):
        return lambda: Monitor(gymnasium.make("tablegym/Trilobite-v0", opponent=opponent, agent_seat="alternate"))

    env = DummyVecEnv([factory(o) for o in OPPONENTS])
    env.seed(seed)
    return env


def train(timesteps: int, run_dir: str, seed: int) -> dict:
    """MaskablePPO with separate [128, 128] ReLU policy and value networks, ``timesteps`` env steps;
    the run folder is locked meanwhile and written atomically (training.files)."""
    from sb3_contrib import MaskablePPO

    from tablegym.training.sb3 import save_model

    torch.set_num_threads(1)
    lock = lock_run_dir(prepare_run_dir(run_dir))
    try:
        env = make_vec_env(seed)
        model = MaskablePPO("MlpPolicy", env, learning_rate=3e-4, n_steps=512, batch_size=256, n_epochs=4,
                            gamma=0.99, gae_lambda=0.95, clip_range=0.2, ent_coef=0.01, vf_coef=0.5,
                            policy_kwargs=dict(net_arch=dict(pi=[128, 128], vf=[128, 128]),
                                               activation_fn=torch.nn.ReLU),
                            tensorboard_log=run_dir, seed=seed, device="cpu", verbose=0)
        start = time.perf_counter()
        model.learn(total_timesteps=timesteps, tb_log_name="maskableppo", progress_bar=False)
        seconds = time.perf_counter() - start
        save_model(model, Path(run_dir) / "model.zip")
        meta = {"timesteps": int(model.num_timesteps), "train_seconds": seconds, "seed": seed,
                "steps_per_s": per_second(model.num_timesteps, seconds), "opponents": list(OPPONENTS)}
        write_text_atomic(Path(run_dir) / "train.json", json.dumps(meta, indent=1) + "\n")
    finally:
        lock.release()
    return meta


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(prog="python -m tablegym.experiments.trilobite.sb3", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train MaskablePPO and save RUN_DIR/model.zip")
    t.add_argument("--timesteps", type=int, default=600_000)
    t.add_argument("--run-dir", default="runs/trilobite-ppo")
    t.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "train":
        try:
            meta = train(args.timesteps, args.run_dir, args.seed)
        except RunFolderError as err:  # another training holds the run folder, or it is a link: one line, exit 2
            exit_refused(f"{parser.prog} train", err)
        print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main()
