"""Generic deep-RL baselines for Trap: sb3-contrib MaskablePPO or SB3 DQN, trained against one
opponent or a league, then evaluated against one opponent (Medium by default) in both seats.

    python -m tablegym.experiments.trap.sb3 --timesteps 200000 --seed 0 \\
        --run-dir runs/trap-sb3-maskableppo --eval-games 400 --opponent medium --out results/trap/sb3.md
    python -m tablegym.experiments.trap.sb3 --algo dqn --timesteps 500000 --seed 0 \\
        --run-dir runs/trap-sb3-dqn --eval-games 400 --opponent random,easy,medium,hard \\
        --eval-opponent medium --out results/trap/sb3_dqn.md
    python -m tablegym.experiments.trap.sb3 --eval-only --run-dir runs/trap-sb3-maskableppo \\
        --eval-games 400 --eval-opponent medium --out results/trap/sb3.md

What the learner sees (``make_env``), outermost last:

1. ``gymnasium.make("tablegym/Trap-v0", opponent=OPPONENT, agent_seat="alternate",
   illegal_action=...)``: the 7 x 7 game with its 200-turn cap, ``OPPONENT`` in the other seat,
   and the env's own seat option: the agent plays seat 0 (moving first) in the first episode
   after a seeded reset, then seat 1, and so on, switching at every reset. So the learner plays
   BOTH seats, exactly half of the episodes in each, in every one of the ``--n-envs`` envs. The
   observation carries no seat: its planes are from the agent's point of view whichever seat it
   holds.

   ``--opponent`` is one agent spec of models/trap/agents.py (``medium`` by default: Medium with
   random tie-breaks), passed as is, or a comma-separated LEAGUE such as
   ``random,easy,medium,hard``, passed as a list: the env (``TrapEnv``'s ``League``) then draws
   one member uniformly for each episode with its own seeded rng, independently of the seat,
   and names it in ``reset``'s ``info["opponent"]`` (the learner never sees it: the observation
   is the board only). Every member is built once before training, so a misspelt one is an
   error at once (``parse_league``). A league is the "alternative Q-learning route" of the Trap
   learning issue: against Medium alone a sparse-reward learner almost never wins early on, so
   it gets almost no positive signal; Random and Easy give it wins to learn from, while Medium
   and Hard keep its targets honest, and playing several opponents discourages a policy
   over-fitted to one opponent's habits.

   Illegal actions: MaskablePPO trains with ``illegal_action="raise"`` and samples among
   ``action_masks()`` only. DQN cannot mask, so it trains with ``illegal_action="penalty"``, as
   experiments/threes/sb3.py's DQN does: an illegal action ends the episode at once with reward
   -1, the same as a loss. The one ``Discrete(57)`` serves both phases, so in the move phase
   all 49 throws are illegal too and at most 8 (usually 5 or fewer) of the 57 actions are
   legal; in the throw phase only the 8 steps and the two players' cells are illegal. A
   uniformly random action is thus illegal over 90% of the time in the move phase: while
   epsilon is near 1, almost every episode ends on its first step, which teaches the Q-values of illegal moves within a few thousand steps;
   greedy play then avoids them, but every later epsilon-greedy random move is still an
   instant loss about 90% of the time, which is why the final epsilon below is small.
2. ``Monitor``: episode statistics of the true outcome. The reward is +1 for a win, -1 for a
   loss (or, for DQN, an illegal action), 0 for a draw and on every other step (no shaping), so
   TensorBoard's ``rollout/ep_rew_mean`` is (wins - losses) / games over the last 100 episodes,
   against the league's mix of opponents.

The observation is the env's five 7 x 7 planes (agent, opponent, traps, throw phase, to
decide), already in {0, 1}. The policy flattens them (SB3's ``MlpPolicy``) into a [256, 256]
ReLU MLP (MaskablePPO: for the policy and value heads; DQN: for the Q-network and its target),
as the Threes baselines do. ``--net cnn`` puts a small CNN (two padded 3 x 3 convolutions of 32
and 64 channels, then 256 ReLU units, shared by PPO's two heads; DQN puts its Q-head on top) in
its place (results/trap/NOTES.md: slower, and no stronger).

MaskablePPO hyper-parameters: 8 envs x 256 steps per rollout (2,048 steps), 10 epochs of
64-sample minibatches (SB3's PPO defaults for those two), learning rate 3e-4,
gamma 0.99, GAE lambda 0.95, clip 0.2, entropy 0.01, value coefficient 0.5, one torch thread,
CPU. The reward is sparse (one +-1 per game, about 28 agent steps long).

DQN hyper-parameters (``build_model``), one env by default (DQN learns from a replay buffer, so
it gains nothing from batching envs, as in threes_sb3), one torch thread, CPU: learning rate
1e-4, replay buffer 100,000 transitions (about 3,500 games: old enough to mix opponents and
seats, recent enough to follow the policy), 5,000 random steps before learning, minibatches of
128, one gradient step every 4 env steps, gamma 0.99 (a game lasts about 28 agent steps, so the
final +-1 reaches the opening discounted to about 0.75), target network copied every 2,000 steps
(about 70 games), gradient norm clipped at 10, and epsilon-greedy exploration from 1.0 down to
0.01 over the first 10% of the steps (then constant). The final epsilon is smaller, and reached
sooner, than a typical Atari setting because of the penalty: with about 14 move decisions a
game, epsilon 0.01 already ends about one training game in eight on an exploration step, and
0.05 would end about half of them so, rather than on the play being learned. The price is
little exploration among LEGAL moves: beyond the first 10%, DQN explores mostly through its own
changing Q-values and the league's varied opponents and landings.

Evaluation (``evaluate``) plays ``--eval-games`` games (an even number) against
``--eval-opponent`` (one spec, ``medium`` by default, whatever the training league) with
``experiments/match.py``'s ``play_match`` on the rules core, no random opening plies: games come
in pairs, the agent as player 0 then as player 1, and each game's rng (the opponent's ties, the
traps' landings) is spawned from ``SeedSequence(seed, spawn_key=(0, pair))`` as match.py does,
so one ``--seed`` fixes the evaluation. The agent (``SB3Agent``) sees
``state.observation(player)`` (the env's observation: a test checks it) and always picks a
legal action (the rules core raises on any other), deterministically: MaskablePPO plays
``predict(obs, action_masks=mask, deterministic=True)``; DQN takes the argmax of ``model.q_net``
over the LEGAL actions only (threes_sb3's ``make_policy`` / ``legal_argmax``, shared), so an
illegal action is never played even where its Q-value is the highest. The table reports W/D/L
overall and per seat, the win rate with its 95% Wilson interval (experiments/stats.py), the
score (draws half) with its 95% interval, the timesteps and seconds of training, and the exact
command; its title names the algorithm, the network and the training opponents. It is printed
and written to ``--out``. ``--eval-only`` loads ``run-dir/model.zip`` (and its ``train.json``;
``--algo`` must match the saved model's).
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import gymnasium
import numpy as np
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from tablegym.experiments.stats import MatchResult, wilson_interval
from tablegym.training import sb3
from tablegym.training.files import RunFolderError, exit_refused
from tablegym.training.flags import OneLineParser
from tablegym.training.sb3 import learn_and_save, load_meta, make_policy, write_report

ENV_ID = "tablegym/Trap-v0"
ALGOS = ("maskableppo", "dqn")
TITLES = {"maskableppo": "MaskablePPO", "dqn": "DQN"}
NETS = ("mlp", "cnn")
PROG = "python -m tablegym.experiments.trap.sb3"


def agent_name(algo: str) -> str:
    """The evaluated agent's name in the results: ``sb3-maskableppo`` or ``sb3-dqn``."""
    if algo not in ALGOS:
        raise ValueError(f"algo must be one of {ALGOS}, got {algo!r}")
    return f"sb3-{algo}"


AGENT = agent_name("maskableppo")


# -- the env the learner sees -------------------------------------------------------------------


def check_opponent(opponent: str) -> str:
    """Build the Trap agent named by ``opponent`` once, so a bad name fails at once with the list
    of known agents (a ``ValueError``) rather than deep inside env construction."""
    from tablegym.envs.trap.core import TrapGame
    from tablegym.models.agents import make_agent

    if not isinstance(opponent, str) or not opponent.strip():
        raise ValueError(f"the opponent must be a Trap agent spec such as 'medium', got {opponent!r}")
    make_agent(TrapGame(), opponent)
    return opponent


def parse_league(opponents: str | Sequence[str]) -> list[str]:
    """The league named by ``opponents``: a comma-separated string (``"random,easy,medium,hard"``)
    or a list of Trap agent specs, each checked by ``check_opponent`` (a ``ValueError`` naming
    the bad member). One name is a league of one."""
    names = [name.strip() for name in opponents.split(",")] if isinstance(opponents, str) else list(opponents)
    if not names:
        raise ValueError("the opponent league is empty")
    for name in names:
        try:
            check_opponent(name)
        except ValueError as err:
            if len(names) == 1:
                raise
            raise ValueError(f"league member {name!r} of {opponents!r}: {err}") from None
    return names


def make_env(opponent: str | Sequence[str] = "medium", algo: str = "maskableppo") -> gymnasium.Env:
    """The training env: Trap-v0 against ``opponent`` (one spec, or a league: a comma-separated
    string or a list, one member drawn per episode), the agent's seat alternating per episode,
    illegal actions raising (MaskablePPO) or losing at once (DQN), Monitor."""
    import tablegym.envs  # noqa: F401  (registers tablegym/Trap-v0)
    from stable_baselines3.common.monitor import Monitor

    league = parse_league(opponent)
    illegal = "penalty" if algo == "dqn" else "raise"
    # a single opponent stays a plain spec: the same env (and rng stream) as before leagues existed
    spec: str | list[str] = league[0] if len(league) == 1 else league
    return Monitor(gymnasium.make(ENV_ID, opponent=spec, agent_seat="alternate", illegal_action=illegal))


# -- the policy network ---------------------------------------------------------------------------


class TrapCNN(BaseFeaturesExtractor):
    """Two padded 3 x 3 convolutions (32, 64 channels) over the planes, then 256 ReLU units."""

    def __init__(self, observation_space: gymnasium.spaces.Box, features_dim: int = 256) -> None:
        super().__init__(observation_space, features_dim)
        channels, rows, cols = observation_space.shape
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(channels, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
            torch.nn.Linear(64 * rows * cols, features_dim), torch.nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net(observations)


def build_model(env, *, algo: str = "maskableppo", net: str = "mlp", seed: int, tensorboard_log: str | None):
    """MaskablePPO or DQN with this baseline's hyper-parameters (see the module doc)."""
    if net == "mlp":
        policy_kwargs: dict[str, Any] = dict(net_arch=[256, 256], activation_fn=torch.nn.ReLU)
    elif net == "cnn":
        policy_kwargs = dict(features_extractor_class=TrapCNN, net_arch=[], activation_fn=torch.nn.ReLU,
                             normalize_images=False)
    else:
        raise ValueError(f"net must be one of {NETS}, got {net!r}")
    if algo == "maskableppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO("MlpPolicy", env, learning_rate=3e-4, n_steps=256, batch_size=64, n_epochs=10,
                           gamma=0.99, gae_lambda=0.95, clip_range=0.2, ent_coef=0.01, vf_coef=0.5,
                           policy_kwargs=policy_kwargs, tensorboard_log=tensorboard_log, seed=seed, device="cpu",
                           verbose=0)
    if algo == "dqn":
        from stable_baselines3 import DQN

        return DQN("MlpPolicy", env, learning_rate=1e-4, buffer_size=100_000, learning_starts=5_000,
                   batch_size=128, gamma=0.99, train_freq=4, gradient_steps=1, target_update_interval=2_000,
                   exploration_fraction=0.1, exploration_initial_eps=1.0, exploration_final_eps=0.01,
                   max_grad_norm=10.0, policy_kwargs=policy_kwargs, tensorboard_log=tensorboard_log, seed=seed,
                   device="cpu", verbose=0)
    raise ValueError(f"algo must be one of {ALGOS}, got {algo!r}")


# -- training -----------------------------------------------------------------------------------


def default_n_envs(algo: str) -> int:
    """8 envs for MaskablePPO (its rollouts batch over them), 1 for DQN (as the Threes baseline)."""
    return 8 if algo == "maskableppo" else 1


def train(*, timesteps: int, seed: int, run_dir: str, opponent: str | Sequence[str] = "medium",
          algo: str = "maskableppo", net: str = "mlp", n_envs: int | None = None, progress: bool = True) -> dict:
    """Train for ``timesteps`` env steps against ``opponent`` (one spec or a league); save
    run_dir/model.zip, run_dir/train.json, TensorBoard logs (run ``ALGO_1``)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    agent_name(algo)
    league = parse_league(opponent)
    n_envs = n_envs or default_n_envs(algo)
    torch.set_num_threads(1)
    venv = DummyVecEnv([lambda: make_env(league, algo) for _ in range(n_envs)])
    model = build_model(venv, algo=algo, net=net, seed=seed, tensorboard_log=run_dir)
    meta = learn_and_save(model, timesteps=timesteps, run_dir=run_dir, tb_log_name=algo, progress=progress,
                          algo=algo, env=ENV_ID, opponent=",".join(league), net=net, seed=seed, n_envs=n_envs)
    venv.close()
    return meta


def load_model(algo: str, run_dir: str):
    """The model ``train`` saved in ``run_dir``, rebuilt by ``build_model`` (its ``net`` from
    train.json) with the file's weights; nothing in the file is unpickled."""
    saved = Path(run_dir) / "train.json"
    net = json.loads(saved.read_text()).get("net", "mlp") if saved.exists() else "mlp"
    return sb3.load_model(algo, run_dir, make_env("random", algo),
                      build=lambda env: build_model(env, algo=algo, net=net, seed=0, tensorboard_log=None))


# -- evaluation: both seats, legal deterministic play --------------------------------------------


class SB3Agent:
    """A trained model as a Trap agent ``(state, rng) -> action``, deterministic and always legal:
    MaskablePPO predicts with the legal mask, DQN takes the argmax of its Q-values over legal
    actions (threes_sb3.make_policy)."""

    def __init__(self, model, algo: str = "maskableppo") -> None:
        self.name = agent_name(algo)
        self.policy = make_policy(algo, model)

    def __call__(self, state, rng: np.random.Generator | None = None) -> int:
        player = state.current_player()
        return self.policy(state.observation(player), state.legal_action_mask().astype(bool))


def evaluate(model, *, games: int, seed: int, opponent: str = "medium", algo: str = "maskableppo",
             progress: bool = False) -> MatchResult:
    """``games`` games of the model against ``opponent``, half in each seat (match.play_match)."""
    from tablegym.models.agents import make_agent
    from tablegym.experiments.match import play_match

    if not isinstance(games, int) or games < 2 or games % 2:
        raise ValueError(f"eval games must be a positive even number (half in each seat), got {games!r}")
    check_opponent(opponent)
    name = agent_name(algo)
    torch.set_num_threads(1)

    def factory(game, spec: str):
        return SB3Agent(model, algo) if spec == name else make_agent(game, spec)

    return play_match("trap", name, opponent, games=games, opening_plies=0, seed=seed, workers=1,
                      progress=progress, agent_factory=factory)


def results_table(result: MatchResult, meta: dict) -> str:
    """The markdown table: W/D/L (overall, per seat), win rate [95% Wilson], score, training budget."""
    lo, hi = wilson_interval(result.wins, result.games)
    s_lo, s_hi = result.interval
    seats = " / ".join(f"{s.wins}/{s.draws}/{s.losses}" for s in result.seats)
    header = ["agent", "opponent", "games", "W/D/L", "W/D/L as p0 / as p1", "win rate [95% Wilson]",
              "score [95%]", "timesteps", "train s"]
    cells = [f"`{result.agent_a}`", f"`{result.agent_b}`", str(result.games),
             f"{result.wins}/{result.draws}/{result.losses}", seats,
             f"{result.wins / result.games:.3f} [{lo:.3f}, {hi:.3f}]", f"{result.score:.3f} [{s_lo:.3f}, {s_hi:.3f}]",
             f"{meta['timesteps']:,}", f"{meta['train_seconds']:.1f}"]
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|",
                      "| " + " | ".join(cells) + " |"])


def report(result: MatchResult, meta: dict, command: str) -> str:
    """The whole markdown report: a title, the table, the command that made it."""
    algo = meta.get("algo", "maskableppo")
    trained = f", trained vs {meta['opponent']}" if meta.get("opponent") else ""
    title = f"## Trap: {TITLES.get(algo, algo)} ({meta.get('net', 'mlp')}{trained}) vs {result.agent_b}"
    return f"{title}\n\n{results_table(result, meta)}\n\nCommand:\n\n```\n{command}\n```\n"


# -- command line -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> str:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--algo", choices=ALGOS, default="maskableppo",
                        help="MaskablePPO (masked sampling) or DQN (illegal actions lose; legal argmax at evaluation)")
    parser.add_argument("--timesteps", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0, help="training seed and evaluation game seed")
    parser.add_argument("--run-dir", help="model.zip, train.json, TB logs (default runs/trap-sb3-ALGO)")
    parser.add_argument("--eval-games", type=int, default=400, help="an even number: half in each seat")
    parser.add_argument("--opponent", default="medium",
                        help="training opponent: a Trap agent spec (random, easy, medium, hard, search:..), or a "
                             "comma-separated league such as random,easy,medium,hard (one drawn per episode)")
    parser.add_argument("--eval-opponent", default="medium", help="the one Trap agent spec evaluated against")
    parser.add_argument("--out", help="write the markdown results here (and print them)")
    parser.add_argument("--net", choices=NETS, default="mlp", help="MLP over the flattened planes, or a small CNN")
    parser.add_argument("--n-envs", type=int, help="training envs stepped in this process (default: 8 for "
                                                   "maskableppo, 1 for dqn)")
    parser.add_argument("--eval-only", action="store_true", help="load run-dir/model.zip instead of training")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    run_dir = args.run_dir or f"runs/trap-sb3-{args.algo}"
    try:
        league = parse_league(args.opponent)
    except ValueError as err:
        parser.error(f"--opponent: {err}")
    try:
        check_opponent(args.eval_opponent)
    except ValueError as err:
        parser.error(f"--eval-opponent: {err}")
    if args.eval_games < 2 or args.eval_games % 2:
        parser.error(f"--eval-games must be a positive even number (half in each seat), got {args.eval_games}")
    if args.n_envs is not None and args.n_envs < 1:
        parser.error(f"--n-envs must be at least 1, got {args.n_envs}")
    if args.eval_only:
        if not (Path(run_dir) / "model.zip").exists():
            parser.error(f"--eval-only: no model at {Path(run_dir) / 'model.zip'}")
        saved = Path(run_dir) / "train.json"
        saved_algo = json.loads(saved.read_text()).get("algo", args.algo) if saved.exists() else args.algo
        if saved_algo != args.algo:
            parser.error(f"--eval-only: {run_dir} holds a {saved_algo} model; pass --algo {saved_algo}")
    torch.set_num_threads(1)

    if args.eval_only:
        model = load_model(args.algo, run_dir)
        meta = load_meta(run_dir, model)
    else:
        try:
            meta = train(timesteps=args.timesteps, seed=args.seed, run_dir=run_dir, opponent=league, algo=args.algo,
                         net=args.net, n_envs=args.n_envs, progress=not args.no_progress)
        except RunFolderError as err:  # another training holds the run folder, or it is a link: one line, exit 2
            exit_refused(PROG, err)
        print(f"trained {args.algo} ({args.net}) vs {meta['opponent']}: {meta['timesteps']:,} steps in "
              f"{meta['train_seconds']:.0f} s ({meta['steps_per_s']:,.0f} steps/s); saved {run_dir}/model.zip",
              flush=True)
        model = load_model(args.algo, run_dir)
    start = time.perf_counter()
    result = evaluate(model, games=args.eval_games, seed=args.seed, opponent=args.eval_opponent, algo=args.algo,
                      progress=not args.no_progress)
    print(f"evaluated {result.games} games in {time.perf_counter() - start:.0f} s", flush=True)
    text = report(result, meta, f"{PROG} {shlex.join(argv)}")
    return write_report(text, args.out)


if __name__ == "__main__":
    # the imported module's main: a model trained with --net cnn then names TrapCNN by module, which
    # the safe loader accepts (as __main__'s class it would be pickled as code and refused)
    from tablegym.experiments.trap import sb3 as module

    module.main()
