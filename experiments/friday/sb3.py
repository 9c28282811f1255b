"""Generic deep-RL baseline for Friday: sb3-contrib MaskablePPO, trained once on all four levels, evaluated per level.

    python -m tablegym.experiments.friday.sb3 --timesteps 200000 --seed 0 \\
        --run-dir runs/friday-sb3-maskableppo --games 500 --levels 1 2 3 4 --workers 2 \\
        --out results/friday/sb3.jsonl
    python -m tablegym.experiments.friday.evaluate --report results/friday/sb3.jsonl

The Threes baseline (experiments/threes/sb3.py) with Friday's env, reward and evaluation; the
model, its hyper-parameters ([256, 256] ReLU MLP, 8 envs x 256-step rollouts), the timed
training and the masked deterministic policy are threes_sb3's, imported, not copied.

What the learner sees (``make_env``), outermost last:

1. ``gymnasium.make("tablegym/Friday-v1", level=L, reward="score")``. The win/loss reward
   (+1/-1) carries no signal: no agent so far has won a single game (not even Fridai at
   100,000 states), so every episode would return -1. The score reward pays each step's change
   of the game's score (won hazards, card values, -5 per aging card, -3 per undefeated hazard),
   dense and graded. The env truncates after ``max_steps`` decisions (2000), so an episode in
   which the policy cycles through exchange or below-the-pile abilities still ends.
2. ``Monitor``: episode statistics of the TRUE return (final score - starting score - 1), so
   TensorBoard's ``rollout/ep_rew_mean`` shows the score gained per training game.
3. ``ScaleFridayObservation``: threes_sb3's ``ScaleObservation`` (divide by the Box's high),
   with the Box it declares corrected: Friday's Box has negative lows (a fighting total below
   zero, a table card of negative value), so the entries lie in [low / high, 1], within
   [-1.25, 1], not in [0, 1]. Dividing by the high (rather than min-max) keeps 0 meaning
   "absent" for the 40 table slots.
4. ``ScaleReward``: reward / 10. A game's return lies between about -40 and +60 (random play
   gains +7 on average, the rule-based agent about +37: from -90 at level 1 to -53) and a step
   changes the score by a few points (random play: -5 to +5); divided by 10 the returns are a
   few units, which keeps the value loss well conditioned (as threes_sb3's log reward does for
   Threes) without changing which actions are better.

The level: ``n_envs`` envs in one ``DummyVecEnv``, env i playing level 1 + i % 4, so every
rollout has the same number of steps from each level (a per-episode random level would only add
variance). The observation does not name the level; the policy infers it (life, aging cards).

Evaluation never uses the transformed reward: for each level it plays ``--games`` games on the
rules core through ``records.play_game`` itself (seed ``SeedSequence(seed, spawn_key=(level,
game))``), the trained policy wrapped as a Friday agent (``SB3FridayAgent``, name
``sb3-maskableppo``) that feeds the network ``state.observation() / high`` (the vector the
wrapped env gives; a test checks it) and calls ``predict(obs, action_masks=mask,
deterministic=True)``, so it only ever plays legal actions. A deterministic policy can cycle
forever on the rules core (no truncation there), so the agent stops a game after the env's
``max_steps`` decisions, as training does: the record is the position reached (not won, its
score), with ``truncated: true``. Records are friday_eval's JSON lines plus ``timesteps``,
``train_seconds`` and ``truncated``; a rerun (e.g. ``--eval-only``, which loads
``run-dir/model.zip``) skips the games already recorded for the same trained model (same agent,
level, seed, timesteps and train_seconds).
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path

import gymnasium
import numpy as np
import torch

from tablegym.experiments.game_runs import recorded, run_tasks
from tablegym.training import sb3
from tablegym.training.files import RunFolderError, exit_refused, open_append
from tablegym.training.flags import OneLineParser, check_appendable
from tablegym.training.sb3 import ScaleObservation, build_model, learn_and_save, make_policy

ALGO = "maskableppo"
AGENT = f"sb3-{ALGO}"
ENV_ID = "tablegym/Friday-v1"
LEVELS = (1, 2, 3, 4)
REWARD_SCALE = 10.0
DEFAULT_RUN_DIR = "runs/friday-sb3-maskableppo"


def default_max_steps() -> int:
    """The env's truncation limit (decisions per game), shared by training and evaluation."""
    from tablegym.envs.friday.env import DEFAULT_MAX_STEPS

    return DEFAULT_MAX_STEPS


# -- the env the learner sees -------------------------------------------------------------------


class ScaleFridayObservation(ScaleObservation):
    """threes_sb3's division by the Box's high, declaring the true bounds [low / high, 1]."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        low = (env.observation_space.low / self.high).astype(np.float32)
        self.observation_space = gymnasium.spaces.Box(low, np.ones_like(low), env.observation_space.shape, np.float32)


class ScaleReward(gymnasium.RewardWrapper):
    """Reward / ``REWARD_SCALE``: score changes of a few units, returns of a few units (module doc)."""

    def reward(self, reward: float) -> float:
        return float(reward) / REWARD_SCALE


def make_env(level: int, max_steps: int | None = None) -> gymnasium.Env:
    """The training env at ``level``: score reward, Monitor (true return), scaled obs and reward."""
    import tablegym.envs  # noqa: F401  (registers tablegym/Friday-v1)
    from stable_baselines3.common.monitor import Monitor

    env = gymnasium.make(ENV_ID, level=level, reward="score", max_steps=max_steps or default_max_steps())
    return ScaleReward(ScaleFridayObservation(Monitor(env)))


def obs_high() -> np.ndarray:
    """The observation Box's upper bounds (the divisor of ``ScaleFridayObservation``)."""
    from tablegym.envs.friday.env import FridayEnv

    return FridayEnv().observation_space.high.astype(np.float32)


# -- training -----------------------------------------------------------------------------------


def train(*, timesteps: int, seed: int, run_dir: str, n_envs: int = 8, max_steps: int | None = None,
          progress: bool = True) -> dict:
    """Train one MaskablePPO on all levels (env i plays level 1 + i % 4) for ``timesteps`` env steps;
    save run_dir/model.zip, run_dir/train.json and TensorBoard logs (run_dir/maskableppo_N)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    if n_envs < 1 or n_envs % len(LEVELS):
        raise ValueError(f"n_envs must be a positive multiple of {len(LEVELS)} (one level per env), got {n_envs}")
    torch.set_num_threads(1)
    levels = [LEVELS[i % len(LEVELS)] for i in range(n_envs)]
    venv = DummyVecEnv([functools.partial(make_env, level, max_steps) for level in levels])
    model = build_model(ALGO, venv, seed=seed, tensorboard_log=run_dir)
    meta = learn_and_save(model, timesteps=timesteps, run_dir=run_dir, tb_log_name=ALGO, progress=progress,
                          algo=ALGO, seed=seed, n_envs=n_envs, levels=levels, reward="score",
                          reward_scale=REWARD_SCALE, max_steps=max_steps or default_max_steps())
    venv.close()
    return meta


# -- evaluation: the policy as a Friday agent on the rules core ---------------------------------


class Truncated(Exception):
    """Raised by ``SB3FridayAgent`` when a game has used its ``max_steps`` decisions."""

    def __init__(self, state) -> None:
        super().__init__("the game reached max_steps decisions")
        self.state = state


class SB3FridayAgent:
    """A trained MaskablePPO as a Friday agent ``(state, rng) -> action`` for records.play_game.

    Deterministic, legal only (threes_sb3.make_policy: ``predict`` with the legal mask). It counts
    the decisions of the current game, a game being one ``rng`` (play_game makes one per game; the
    agent holds the last, so a new one is never mistaken for it), and raises ``Truncated`` when asked
    for decision ``max_steps + 1``: the env's truncation, which the rules core does not have.
    """

    name = AGENT

    def __init__(self, model, *, high: np.ndarray | None = None, max_steps: int | None = None) -> None:
        self.policy = make_policy(ALGO, model)
        self.high = obs_high() if high is None else high
        self.max_steps = max_steps or default_max_steps()
        self.decisions = 0
        self._game_rng: np.random.Generator | None = None

    def observe(self, state) -> np.ndarray:
        """What the network sees: the observation the wrapped training env gives in ``state``."""
        return (state.observation() / self.high).astype(np.float32)

    def __call__(self, state, rng: np.random.Generator | None = None) -> int:
        if rng is None or rng is not self._game_rng:
            self._game_rng, self.decisions = rng, 0
        if self.decisions >= self.max_steps:
            raise Truncated(state)
        self.decisions += 1
        return self.policy(self.observe(state), state.legal_action_mask().astype(bool))


def play_game(agent: SB3FridayAgent, level: int, seed: int, index: int) -> dict:
    """Game ``index`` at ``level`` via records.play_game; a truncated game's record is the
    position reached (same fields), and every record says whether it was truncated."""
    from tablegym.envs.friday.core import FridayGame
    from tablegym.experiments.friday import records

    start = time.perf_counter()
    try:
        rec = records.play_game(agent, level, seed, index)
    except Truncated as stop:
        s = stop.state
        rec = {"game": index, "agent": agent.name, "level": level, "seed": seed,
               "options": FridayGame(level=level).spec.options, "won": False, "score": s.score, "life": s.life,
               "step": s.step, "pirates_beaten": s.pirates_beaten, "decisions": agent.decisions,
               "seconds": time.perf_counter() - start, "polled": 0, "truncated": True}
    else:
        rec["truncated"] = False
    return rec


def load_model(algo: str, run_dir: str):
    """The model ``train`` saved in ``run_dir``, rebuilt by ``build_model`` on a training env
    with the file's weights; nothing in the file is unpickled."""
    return sb3.load_model(algo, run_dir, make_env(1))


@functools.lru_cache(maxsize=2)
def _agent(run_dir: str, train_seconds: float, max_steps: int) -> SB3FridayAgent:
    """One agent per trained model and process (train_seconds tells two trainings in one run_dir apart)."""
    torch.set_num_threads(1)
    return SB3FridayAgent(load_model(ALGO, run_dir), max_steps=max_steps)


def play_one(task: tuple[str, int, int, int, int, float, int]) -> dict:
    """A worker's game (game_runs.run_tasks): the record plus the model's training budget."""
    run_dir, level, seed, index, timesteps, train_seconds, max_steps = task
    rec = play_game(_agent(run_dir, train_seconds, max_steps), level, seed, index)
    return {**rec, "timesteps": timesteps, "train_seconds": train_seconds}


def load_meta(run_dir: str) -> dict:
    """run_dir/train.json: what ``train`` recorded (the model's identity for resuming)."""
    return json.loads((Path(run_dir) / "train.json").read_text())


def evaluate(*, run_dir: str, levels: list[int] | tuple[int, ...] = LEVELS, games: int, seed: int = 0,
             out: str | None = None, workers: int = 1, max_steps: int | None = None,
             progress: bool = True) -> dict[int, list[dict]]:
    """Play games 0..games-1 at each level with run_dir's model, appending records to ``out`` and
    skipping those already there for this model; all records per level. ``out`` is a plain file
    in a folder that exists (a link there is refused, training.files.open_append)."""
    meta = load_meta(run_dir)
    timesteps, train_seconds = meta["timesteps"], meta["train_seconds"]
    max_steps = max_steps or meta.get("max_steps") or default_max_steps()
    if out:
        open_append(out).close()  # made now, and refused if a link (the records are appended by name)
    results = {}
    for level in levels:
        done = recorded(out, agent=AGENT, level=level, seed=seed, timesteps=timesteps, train_seconds=train_seconds)
        tasks = [(run_dir, level, seed, i, timesteps, train_seconds, max_steps) for i in range(games) if i not in done]
        run_tasks(play_one, tasks, done, total=games, workers=workers, out=out, label=f"{AGENT} L{level}",
                  progress=progress)
        results[level] = [done[i] for i in sorted(done) if i < games]
    return results


# -- command line -------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, checked: every bad value is an argparse error naming it."""
    parser = OneLineParser(prog="python -m tablegym.experiments.friday.sb3",
                           description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=200_000, help="training env steps")
    parser.add_argument("--seed", type=int, default=0, help="training seed and evaluation game seed")
    parser.add_argument("--run-dir", default=DEFAULT_RUN_DIR, help="model.zip, train.json and TensorBoard logs")
    parser.add_argument("--games", type=int, default=500, help="evaluation games per level")
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS), help="levels to evaluate")
    parser.add_argument("--workers", type=int, default=1, help="processes for evaluation games")
    parser.add_argument("--out", help="append evaluation games here (friday_eval JSON lines); a rerun resumes")
    parser.add_argument("--n-envs", type=int, default=8,
                        help="training envs, a multiple of 4 (env i plays level 1 + i %% 4)")
    parser.add_argument("--eval-only", action="store_true", help="load run-dir/model.zip instead of training")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    for name in ("timesteps", "games", "workers", "n_envs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.seed < 0:
        parser.error(f"--seed must be >= 0 (a SeedSequence entropy), got {args.seed}")
    bad = [level for level in args.levels if level not in LEVELS]
    if bad:
        parser.error(f"--levels must be among {list(LEVELS)}, got {bad}")
    if len(set(args.levels)) != len(args.levels):
        parser.error(f"--levels repeats a level: {args.levels}")
    if args.n_envs % len(LEVELS):
        parser.error(f"--n-envs must be a multiple of {len(LEVELS)} (env i plays level 1 + i % 4), got {args.n_envs}")
    if args.out:
        check_appendable(parser, "--out", args.out)
    if args.eval_only:
        missing = [f for f in ("model.zip", "train.json") if not (Path(args.run_dir) / f).exists()]
        if missing:
            parser.error(f"--eval-only needs a trained run-dir: {args.run_dir} has no {' or '.join(missing)}")
    return args


def main(argv: list[str] | None = None) -> None:
    from tablegym.experiments.friday.records import HEADER, markdown_row, options_text, summarise

    args = parse_args(argv)
    torch.set_num_threads(1)
    if not args.eval_only:
        try:
            meta = train(timesteps=args.timesteps, seed=args.seed, run_dir=args.run_dir, n_envs=args.n_envs,
                         progress=not args.no_progress)
        except RunFolderError as err:  # another training holds the run folder, or it is a link: one line, exit 2
            exit_refused("python -m tablegym.experiments.friday.sb3", err)
        print(f"trained {AGENT}: {meta['timesteps']:,} steps in {meta['train_seconds']:.0f} s "
              f"({meta['steps_per_s']:,.0f} steps/s); saved {args.run_dir}/model.zip", flush=True)
    start = time.perf_counter()
    results = evaluate(run_dir=args.run_dir, levels=args.levels, games=args.games, seed=args.seed, out=args.out,
                       workers=args.workers, progress=not args.no_progress)
    print(f"evaluated {sum(map(len, results.values()))} games in {time.perf_counter() - start:.0f} s", flush=True)
    print(HEADER)
    for level, records in results.items():
        truncated = sum(r["truncated"] for r in records)
        print(markdown_row(AGENT, level, summarise(records), options_text(records[0]["options"]))
              + (f" {truncated} truncated" if truncated else ""), flush=True)


if __name__ == "__main__":
    main()
