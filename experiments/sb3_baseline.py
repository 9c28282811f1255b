"""Stable-Baselines3 baselines (sb3-contrib MaskablePPO, SB3 DQN) for every game configured in
experiments/sb3_games.py: train on the game's Gymnasium env, save the model, evaluate the policy.

    python -m tablegym.experiments.sb3_baseline threes --algo dqn --timesteps 500000 --seed 0 \\
        --run-dir runs/threes-sb3-dqn --eval-games 200 --out results/threes/sb3.jsonl
    python -m tablegym.experiments.sb3_baseline friday --timesteps 200000 --seed 0 --eval-games 500 \\
        --levels 1 2 3 4 --workers 2 --out results/friday/sb3.jsonl
    python -m tablegym.experiments.sb3_baseline trap --algo dqn --opponent random,easy,medium,hard \\
        --eval-opponent medium --eval-games 400 --out results/trap/sb3_dqn.md
    python -m tablegym.experiments.sb3_baseline trap eval --run-dir runs/trap-sb3-maskableppo --eval-games 400
    python -m tablegym.experiments.sb3_baseline trilobite train --timesteps 500000 --run-dir runs/trilobite-ppo

``GAME [run|train|eval]``: ``run`` (the default) trains and then evaluates what it saved; ``train``
only trains; ``eval`` (or ``--eval-only``) evaluates ``RUN_DIR/model.zip``, with the ``--algo`` and
network recorded in its ``train.json``.

Training (``train``): ``--n-envs`` copies of the game's env in one ``DummyVecEnv``, each made by
``make_env``: the registered env with the configured keywords (env i of a game with ``per_env``
keywords, such as Friday's levels or Trilobite's opponents, gets value i modulo their number),
illegal actions raising for MaskablePPO (it samples among ``action_masks()`` only) and losing the
episode at once for DQN (it cannot mask), ``Monitor`` (so TensorBoard's ``rollout/ep_rew_mean``
is the true return), then the configured wrappers. A two-player game's ``--opponent`` is one
agent spec, or a comma-separated league (one member drawn per episode by the env, each member
built once first, so a misspelt one is an error at once). The model is training/sb3.py's
``build_model`` with the game's overrides, seeded by ``--seed`` (SB3 seeds Python, numpy, torch
and the envs from it), one torch thread, CPU. The run folder is locked while it trains, and
``model.zip`` and ``train.json`` (the settings, the budget and seconds) are written atomically
(training.files); the TensorBoard run is ``RUN_DIR/ALGO_N``.

Evaluation never uses the training reward. The model is rebuilt by the same constructor and given
the file's weights (nothing in the file is unpickled), and plays on the rules core as an
``SB3Agent`` (training/sb3.py): deterministic, legal only (MaskablePPO predicts with the legal
mask, DQN takes the argmax of its Q-values over the legal actions), seeing
``state.observation(player)`` through the training env's observation wrappers (a test checks it
is the env's observation).

- A single-player game plays ``--eval-games`` games per value of its variant flag (Threes'
  ``--hint``, Friday's ``--levels``), each seeded as the game's own evaluation script seeds it,
  appending the game's records (plus ``timesteps`` and ``train_seconds``) as JSON lines to
  ``--out``; a rerun skips the games already recorded for the same trained model. It prints the
  game's results table.
- A two-player game plays a match against ``--eval-opponent`` through experiments/match.py's
  ``play_match``, no random opening plies, half the games in each seat, each pair's rng spawned
  from ``--seed``; the markdown report (W/D/L overall and per seat, the win rate with its 95%
  Wilson interval, the score, the training budget and the command) is printed and written to
  ``--out``.
"""

from __future__ import annotations

import argparse
import functools
import json
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch

from tablegym.experiments.game_runs import RecordsError, recorded, run_tasks
from tablegym.experiments.sb3_games import GAMES, SB3Game
from tablegym.experiments.stats import MatchResult, wilson_interval
from tablegym.models.checkpoint import CheckpointError
from tablegym.training import sb3
from tablegym.training.files import RunFolderError, exit_refused, open_append
from tablegym.training.flags import OneLineParser, check_appendable
from tablegym.training.sb3 import ALGOS, SB3Agent, build_model, learn_and_save, write_report

PROG = "python -m tablegym.experiments.sb3_baseline"
COMMANDS = ("run", "train", "eval")
TITLES = {"maskableppo": "MaskablePPO", "dqn": "DQN"}


def config(game: str) -> SB3Game:
    """The game's SB3 configuration; a ValueError naming the games that have one."""
    if game in GAMES:
        return GAMES[game]
    from tablegym.envs import known_games

    have = ", ".join(GAMES)
    if game in known_games():
        raise ValueError(f"{game} has no SB3 baseline configuration (experiments/sb3_games.py); games with one: {have}")
    raise ValueError(f"unknown game {game!r}; games with an SB3 baseline: {have}")


def check_algo(cfg: SB3Game, game: str, algo: str) -> None:
    """A ValueError unless ``game`` offers ``algo``."""
    if algo not in cfg.algos:
        raise ValueError(f"algo must be one of {cfg.algos} for {game}, got {algo!r}")


# -- opponents of a two-player game ---------------------------------------------------------------


def check_opponent(game: str, opponent: str) -> str:
    """Build the agent named by ``opponent`` once, so a bad name fails at once with the list of
    known agents (a ``ValueError``) rather than deep inside env construction."""
    from tablegym.envs import make_game
    from tablegym.models.agents import make_agent

    if not isinstance(opponent, str) or not opponent.strip():
        raise ValueError(f"the opponent must be an agent spec of {game} such as 'random', got {opponent!r}")
    make_agent(make_game(game), opponent)
    return opponent


def split_league(text: str) -> list[str]:
    """The members of a comma-separated league; a ``key=value`` item continues the member before
    it, so ``random,alphabeta:eval=advanced,depth=2`` is two members."""
    names: list[str] = []
    for item in text.split(","):
        key, eq, _ = item.partition("=")
        if names and ":" in names[-1] and eq and ":" not in key:
            names[-1] += "," + item
        else:
            names.append(item)
    return [name.strip() for name in names]


def parse_league(game: str, opponents: str | Sequence[str]) -> list[str]:
    """The league named by ``opponents``: a comma-separated string (``"random,easy,medium,hard"``)
    or a list of agent specs, each checked by ``check_opponent`` (a ``ValueError`` naming the bad
    member). One name is a league of one."""
    names = split_league(opponents) if isinstance(opponents, str) else list(opponents)
    if not names:
        raise ValueError("the opponent league is empty")
    for name in names:
        try:
            check_opponent(game, name)
        except ValueError as err:
            if len(names) == 1:
                raise
            raise ValueError(f"league member {name!r} of {opponents!r}: {err}") from None
    return names


# -- the env the learner sees -----------------------------------------------------------------------


def make_env(game: str, algo: str = "maskableppo", **kwargs: Any) -> gymnasium.Env:
    """One training env of ``game``: its configured env with ``kwargs`` over the configured
    keywords (``opponent``: one spec, or a league as a comma-separated string or a list), illegal
    actions raising (MaskablePPO) or losing at once (DQN), ``Monitor``, the configured wrappers."""
    from stable_baselines3.common.monitor import Monitor

    import tablegym.envs  # noqa: F401  (registers the env ids)

    cfg = config(game)
    kwargs = {**cfg.env_kwargs, **kwargs}
    if "opponent" in kwargs:
        league = parse_league(game, kwargs["opponent"])
        kwargs["opponent"] = league[0] if len(league) == 1 else league  # one opponent: the plain env
    illegal = "penalty" if algo == "dqn" else "raise"
    env: gymnasium.Env = Monitor(gymnasium.make(cfg.env_id, **kwargs, illegal_action=illegal))
    for wrap in cfg.wrappers:
        env = wrap(env)
    return env


def observer(env: gymnasium.Env):
    """``observe(obs)``: what ``env``'s observation wrappers make of its inner env's observation
    (None when it has none), so an agent on the rules core sees what the learner saw."""
    chain = []
    while isinstance(env, gymnasium.Wrapper):
        if isinstance(env, gymnasium.ObservationWrapper):
            chain.append(env)
        env = env.env
    if not chain:
        return None

    def observe(obs: np.ndarray) -> np.ndarray:
        for wrapper in reversed(chain):
            obs = wrapper.observation(obs)
        return obs

    return observe


def env_settings(game: str, n_envs: int, options: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The keywords of each training env, and what train.json says of them: ``options`` for every
    env and, unless ``options`` sets it, the configured ``per_env`` keyword cycled over the envs
    (a ValueError unless ``n_envs`` is a multiple of its values)."""
    cfg = config(game)
    settings = [dict(options) for _ in range(n_envs)]
    recorded_as: dict[str, Any] = dict(options)
    if cfg.per_env and cfg.per_env[0] not in options:
        key, values = cfg.per_env
        if n_envs < 1 or n_envs % len(values):
            raise ValueError(
                f"--n-envs must be a multiple of {len(values)} (env i plays {key} "
                f"{list(values)}[i % {len(values)}]), got {n_envs}"
            )
        for i, setting in enumerate(settings):
            setting[key] = values[i % len(values)]
        recorded_as[key + "s"] = [setting[key] for setting in settings]
    return settings, recorded_as


# -- the model ----------------------------------------------------------------------------------------


def build(game: str, algo: str, env, *, net: str | None = None, seed: int, tensorboard_log: str | None):
    """``algo``'s model for ``game``: training/sb3.py's hyper-parameters with the game's overrides,
    the network ``net`` of the game's ``nets`` (default: its first)."""
    cfg = config(game)
    check_algo(cfg, game, algo)
    net = net or next(iter(cfg.nets))
    if net not in cfg.nets:
        raise ValueError(f"net must be one of {tuple(cfg.nets)} for {game}, got {net!r}")
    return build_model(
        algo, env, seed=seed, tensorboard_log=tensorboard_log, policy_kwargs=cfg.nets[net], **cfg.hyper.get(algo, {})
    )


def read_meta(run_dir: str) -> dict:
    """run_dir/train.json, or nothing when there is none."""
    path = Path(run_dir) / "train.json"
    return json.loads(path.read_text()) if path.exists() else {}


def load_model(game: str, algo: str, run_dir: str):
    """The model ``train`` saved in ``run_dir``, rebuilt by ``build`` (the network and the variant
    from train.json) on a training env, with the file's weights; nothing in the file is unpickled."""
    cfg, meta = config(game), read_meta(run_dir)
    variant = cfg.variant
    kwargs = {variant.name: meta[variant.name]} if variant and variant.trains and variant.name in meta else {}
    return sb3.load_model(
        algo,
        run_dir,
        make_env(game, algo, **kwargs),
        build=lambda env: build(game, algo, env, net=meta.get("net"), seed=0, tensorboard_log=None),
    )


def policy_agent(game: str, model, algo: str = "maskableppo", *, max_decisions: int | None = None) -> SB3Agent:
    """``model`` as an agent of ``game`` on the rules core, seeing what its training env showed it."""
    return SB3Agent(model, algo, observe=observer(make_env(game, algo)), max_decisions=max_decisions)


# -- training -----------------------------------------------------------------------------------------


def train(
    game: str,
    algo: str = "maskableppo",
    *,
    timesteps: int,
    seed: int,
    run_dir: str,
    n_envs: int | None = None,
    net: str | None = None,
    progress: bool = True,
    **options: Any,
) -> dict:
    """Train ``algo`` on ``game`` for ``timesteps`` env steps; save run_dir/model.zip, run_dir/train.json
    and TensorBoard logs. ``options``: env keywords set for every env (Threes' ``hint``, a
    two-player game's ``opponent``); None leaves the configured one."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    cfg = config(game)
    check_algo(cfg, game, algo)
    options = {k: v for k, v in options.items() if v is not None}
    if "opponent" in options:
        options["opponent"] = ",".join(parse_league(game, options["opponent"]))
    n_envs = n_envs or cfg.n_envs[algo]
    settings, recorded_as = env_settings(game, n_envs, options)
    net = net or next(iter(cfg.nets))
    torch.set_num_threads(1)
    venv = DummyVecEnv([functools.partial(make_env, game, algo, **setting) for setting in settings])
    model = build(game, algo, venv, net=net, seed=seed, tensorboard_log=run_dir)
    meta = learn_and_save(
        model,
        timesteps=timesteps,
        run_dir=run_dir,
        tb_log_name=algo,
        progress=progress,
        game=game,
        algo=algo,
        env=cfg.env_id,
        net=net,
        seed=seed,
        n_envs=n_envs,
        **cfg.env_kwargs,
        **recorded_as,
        **cfg.meta,
    )
    venv.close()
    return meta


# -- evaluation: a single-player game's seeded games ------------------------------------------------


@functools.lru_cache(maxsize=2)
def _agent(game: str, algo: str, run_dir: str, train_seconds: float, max_decisions: int | None) -> SB3Agent:
    """One agent per trained model and process (train_seconds tells two trainings in one run_dir apart)."""
    torch.set_num_threads(1)
    return policy_agent(game, load_model(game, algo, run_dir), algo, max_decisions=max_decisions)


def play_one(task: tuple) -> dict:
    """A worker's game (game_runs.run_tasks): the game's record plus the model's training budget."""
    game, algo, run_dir, value, seed, index, timesteps, train_seconds, max_decisions = task
    rec = config(game).play(_agent(game, algo, run_dir, train_seconds, max_decisions), value, seed, index)
    return {**rec, "timesteps": timesteps, "train_seconds": train_seconds}


def evaluate_solo(
    game: str,
    algo: str = "maskableppo",
    *,
    run_dir: str,
    games: int,
    seed: int = 0,
    values: Sequence[Any] | None = None,
    out: str | None = None,
    workers: int = 1,
    progress: bool = True,
) -> dict[Any, list[dict]]:
    """Play games 0..games-1 for each value of the game's variant (default: the configured ones)
    with run_dir's model, appending records to ``out`` (a plain file in a folder that exists: a
    link there is refused) and skipping those already there for this model; all records per value."""
    cfg = config(game)
    variant = cfg.variant
    meta = json.loads((Path(run_dir) / "train.json").read_text())
    timesteps, train_seconds = meta["timesteps"], meta["train_seconds"]
    name = f"sb3-{algo}"
    if out:
        open_append(out).close()  # made now, and refused if a link (the records are appended by name)
    results = {}
    for value in values or variant.default:
        done = recorded(out, agent=name, **{variant.name: value}, seed=seed, timesteps=timesteps, train_seconds=train_seconds)
        tasks = [
            (game, algo, run_dir, value, seed, i, timesteps, train_seconds, meta.get("max_steps"))
            for i in range(games)
            if i not in done
        ]
        run_tasks(
            play_one,
            tasks,
            done,
            total=games,
            workers=workers,
            out=out,
            label=f"{name} {variant.name} {value}",
            progress=progress,
        )
        results[value] = [done[i] for i in sorted(done) if i < games]
    return results


# -- evaluation: a two-player game's match ----------------------------------------------------------


def evaluate_match(
    game: str, model, algo: str = "maskableppo", *, games: int, seed: int, opponent: str | None = None, progress: bool = False
) -> MatchResult:
    """``games`` games of the model against ``opponent`` (default: the configured one), half in
    each seat (match.play_match), no random opening plies."""
    from tablegym.experiments.match import play_match
    from tablegym.models.agents import make_agent

    if not isinstance(games, int) or games < 2 or games % 2:
        raise ValueError(f"eval games must be a positive even number (half in each seat), got {games!r}")
    opponent = check_opponent(game, opponent or config(game).eval_opponent)
    agent = policy_agent(game, model, algo)
    torch.set_num_threads(1)

    def factory(g, spec: str):
        return agent if spec == agent.name else make_agent(g, spec)

    return play_match(
        game, agent.name, opponent, games=games, opening_plies=0, seed=seed, workers=1, progress=progress, agent_factory=factory
    )


def results_table(result: MatchResult, meta: dict) -> str:
    """The markdown table: W/D/L (overall, per seat), win rate [95% Wilson], score, training budget."""
    lo, hi = wilson_interval(result.wins, result.games)
    s_lo, s_hi = result.interval
    seats = " / ".join(f"{s.wins}/{s.draws}/{s.losses}" for s in result.seats)
    header = [
        "agent",
        "opponent",
        "games",
        "W/D/L",
        "W/D/L as p0 / as p1",
        "win rate [95% Wilson]",
        "score [95%]",
        "timesteps",
        "train s",
    ]
    cells = [
        f"`{result.agent_a}`",
        f"`{result.agent_b}`",
        str(result.games),
        f"{result.wins}/{result.draws}/{result.losses}",
        seats,
        f"{result.wins / result.games:.3f} [{lo:.3f}, {hi:.3f}]",
        f"{result.score:.3f} [{s_lo:.3f}, {s_hi:.3f}]",
        f"{meta['timesteps']:,}",
        f"{meta['train_seconds']:.1f}",
    ]
    return "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|", "| " + " | ".join(cells) + " |"]
    )


def report(game: str, result: MatchResult, meta: dict, command: str) -> str:
    """The whole markdown report: a title (algorithm, network, training opponents), the table, the command."""
    algo = meta.get("algo", "maskableppo")
    trained_vs = meta.get("opponent") or ",".join(meta.get("opponents", []))
    trained = f", trained vs {trained_vs}" if trained_vs else ""
    title = f"## {game.capitalize()}: {TITLES.get(algo, algo)} ({meta.get('net', 'mlp')}{trained}) vs {result.agent_b}"
    return f"{title}\n\n{results_table(result, meta)}\n\nCommand:\n\n```\n{command}\n```\n"


# -- command line -------------------------------------------------------------------------------------


def _parser(cfg: SB3Game | None) -> OneLineParser:
    """The flags of every game, and those of ``cfg``'s game (its variant, opponents, networks)."""
    parser = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help=f"the game: {', '.join(GAMES)}")
    parser.add_argument(
        "command",
        nargs="?",
        choices=COMMANDS,
        default="run",
        help="run: train, then evaluate (default); train; eval: evaluate RUN_DIR/model.zip",
    )
    algos = cfg.algos if cfg else ALGOS
    parser.add_argument(
        "--algo",
        choices=algos,
        default=algos[0],
        help="MaskablePPO (masked sampling) or DQN (illegal actions lose; legal argmax at evaluation)",
    )
    parser.add_argument("--timesteps", type=int, default=cfg.timesteps if cfg else None, help="training env steps")
    parser.add_argument("--seed", type=int, default=0, help="training seed and evaluation game seed")
    parser.add_argument("--run-dir", help="model.zip, train.json and TensorBoard logs (default runs/GAME-sb3-ALGO)")
    parser.add_argument(
        "--eval-games",
        "--games",
        type=int,
        default=cfg.eval_games if cfg else None,
        help="evaluation games (per variant value; a two-player game: an even number, half a seat)",
    )
    parser.add_argument(
        "--out",
        help="single-player: append the games here (JSON lines), a rerun resumes; two-player: write the markdown report here",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes for a single-player game's evaluation")
    parser.add_argument("--n-envs", type=int, help="training envs (default: the game's for the algorithm)")
    parser.add_argument("--eval-only", action="store_true", help="the eval command")
    parser.add_argument("--no-progress", action="store_true")
    if cfg is None:
        return parser
    if len(cfg.nets) > 1:
        parser.add_argument("--net", choices=tuple(cfg.nets), default=next(iter(cfg.nets)), help="the policy network")
    if cfg.variant:
        v = cfg.variant
        parser.add_argument(
            v.flag,
            dest="variant",
            nargs="+" if v.many else None,
            type=type(v.choices[0]),
            default=list(v.default) if v.many else v.default[0],
            help=f"the {v.name}{'s' if v.many else ''} evaluated, among {list(v.choices)}"
            + (" (the training envs' too)" if v.trains else ""),
        )
    else:
        parser.add_argument(
            "--opponent",
            default=cfg.opponent,
            help="training opponent: an agent spec, or a comma-separated league (one drawn per "
            "episode)" + ("" if cfg.opponent else f"; default: env i plays {cfg.per_env[1]}[i]"),
        )
        parser.add_argument("--eval-opponent", default=cfg.eval_opponent, help="the agent spec evaluated against")
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line, checked before anything is trained: every bad value exits 2 in one line."""
    game = argv[0] if argv and not argv[0].startswith("-") else None
    try:
        cfg = config(game) if game is not None else None
    except ValueError as err:
        _parser(None).error(str(err))
    parser = _parser(cfg)
    args = parser.parse_args(argv)
    args.command = "eval" if args.eval_only else args.command
    args.run_dir = args.run_dir or f"runs/{args.game}-sb3-{args.algo}"
    for flag in ("timesteps", "eval_games", "workers", "n_envs"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            parser.error(
                f"--{flag.replace('_', '-')}{'/--games' if flag == 'eval_games' else ''} must be at least 1, got {value}"
            )
    if args.seed < 0:
        parser.error(f"--seed must be >= 0 (a SeedSequence entropy), got {args.seed}")
    if cfg.variant:
        flag, values = cfg.variant.flag, args.variant if cfg.variant.many else [args.variant]
        bad = [value for value in values if value not in cfg.variant.choices]
        if bad:
            parser.error(f"{flag} must be among {list(cfg.variant.choices)}, got {bad}")
        if len(set(values)) != len(values):
            parser.error(f"{flag} repeats a {cfg.variant.name}: {values}")
        if args.out:
            check_appendable(parser, "--out", args.out)
    else:
        for flag, value in (("--opponent", args.opponent), ("--eval-opponent", args.eval_opponent)):
            try:
                if value is not None:
                    parse_league(args.game, value) if flag == "--opponent" else check_opponent(args.game, value)
            except ValueError as err:
                parser.error(f"{flag}: {err}")
        if args.eval_games % 2:
            parser.error(f"--eval-games must be a positive even number (half in each seat), got {args.eval_games}")
        if args.workers > 1:
            parser.error(f"--workers: a two-player game's match is played in this process, got {args.workers}")
    if args.command != "eval":
        try:
            env_settings(
                args.game,
                args.n_envs or cfg.n_envs[args.algo],
                {"opponent": args.opponent} if not cfg.variant and args.opponent else {},
            )
        except ValueError as err:
            parser.error(str(err))
    else:
        run = Path(args.run_dir)
        for name in ("model.zip",) if not cfg.variant else ("model.zip", "train.json"):
            if not (run / name).exists():
                parser.error(
                    f"eval needs a trained run-dir: no model at {run / 'model.zip'}"
                    if name == "model.zip"
                    else f"eval needs a trained run-dir: {run} has no train.json"
                )
        meta = read_meta(args.run_dir)
        if meta.get("game", args.game) != args.game:
            parser.error(f"eval: {args.run_dir} holds a model of {meta['game']}, not of {args.game}")
        if meta.get("algo", args.algo) != args.algo:
            parser.error(f"eval: {args.run_dir} holds a {meta['algo']} model; pass --algo {meta['algo']}")
    return args


def main(argv: list[str] | None = None) -> str:
    """Train and/or evaluate as the command line says; the printed results (a two-player game's report)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    cfg = config(args.game)
    progress = not args.no_progress
    torch.set_num_threads(1)
    try:
        if args.command != "eval":
            options = (
                ({cfg.variant.name: args.variant} if cfg.variant.trains else {}) if cfg.variant else {"opponent": args.opponent}
            )
            meta = train(
                args.game,
                args.algo,
                timesteps=args.timesteps,
                seed=args.seed,
                run_dir=args.run_dir,
                n_envs=args.n_envs,
                net=getattr(args, "net", None),
                progress=progress,
                **options,
            )
            print(
                f"trained {args.algo} ({meta['net']}) on {args.game}: {meta['timesteps']:,} steps in "
                f"{meta['train_seconds']:.0f} s ({meta['steps_per_s']:,.0f} steps/s); saved {args.run_dir}/model.zip",
                flush=True,
            )
            if args.command == "train":
                return ""
        start = time.perf_counter()
        if cfg.variant:
            values = args.variant if cfg.variant.many else [args.variant]
            results = evaluate_solo(
                args.game,
                args.algo,
                run_dir=args.run_dir,
                games=args.eval_games,
                seed=args.seed,
                values=values,
                out=args.out,
                workers=args.workers,
                progress=progress,
            )
            print(f"evaluated {sum(map(len, results.values()))} games in {time.perf_counter() - start:.0f} s", flush=True)
            text = "\n".join([cfg.header, *(cfg.row(f"sb3-{args.algo}", v, recs) for v, recs in results.items())])
            print(text, flush=True)
            return text + "\n"
        model = load_model(args.game, args.algo, args.run_dir)
        meta = sb3.load_meta(args.run_dir, model)
        result = evaluate_match(
            args.game, model, args.algo, games=args.eval_games, seed=args.seed, opponent=args.eval_opponent, progress=progress
        )
    except (RunFolderError, RecordsError, CheckpointError) as err:  # one line, exit 2
        exit_refused(PROG, err)
    print(f"evaluated {result.games} games in {time.perf_counter() - start:.0f} s", flush=True)
    return write_report(report(args.game, result, meta, f"{PROG} {shlex.join(argv)}"), args.out)


if __name__ == "__main__":
    main()
