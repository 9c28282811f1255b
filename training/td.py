"""Self-play TD-leaf(lambda) for two-player games: train a ValueMLP leaf evaluator.

Read it top to bottom (CleanRL style):

1. play a batch of games with the compiled alpha-beta searching ``depth`` plies and the
   current network at its leaves (epsilon-random moves for exploration);
2. turn each game into TD-leaf(lambda) targets (training/selfplay.py);
3. fit the network on a replay buffer of recent positions (Adam, MSE), with the board's
   symmetries as free extra data;
4. every ``eval_every`` iterations, play a match against the hand-made evaluator in the SAME
   search at the same depth and log the score; every ``save_every`` iterations checkpoint.

Killed and restarted with the same ``run_dir``, it resumes from the last checkpoint (network,
optimizer, iteration, games played); the replay buffer refills within a few iterations.

The loop (``train_selfplay``) is every self-play TD-leaf trainer's: a game with its own search
(Trap's expectiminimax, training/trap/train.py) passes in how it plays and evaluates (``SelfPlay``).

    tablegym train trilobite --minutes 5 --run-dir runs/trilobite-td
    tensorboard --logdir runs
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tablegym.envs.core import Game, KernelState
from tablegym.envs.rates import per_second
from tablegym.models.learned import LearnedEvaluator
from tablegym.models.value_net import NetConfig, ValueMLP
from tablegym.training.parallel import InProcessExecutor, executor
from tablegym.training.runs import ReplayBuffer, Run, ValueLearner, parse_dataclass_args, train_command
from tablegym.training.selfplay import SelfPlayBatch, TDArgs, chunks, merge, play_selfplay, td_update
from tablegym.training.symmetry import feature_symmetries


@dataclass
class Args(TDArgs):
    """training/selfplay.py's ``TDArgs`` for a game with compiled kernels (trilobite,
    trilobite-tiny, sim), Trilobite's by default."""

    game: str = "trilobite"
    eval_baseline: str = "advanced"
    run_dir: str = "runs/trilobite-td"


def make_game(args: Args) -> Game:
    from tablegym.envs import make_game as registry

    return registry(args.game, **args.game_options)


def evaluation_match(game: Game, learned: LearnedEvaluator, baseline: str, *, games: int, depth: int, seed: int) -> float:
    """Score of the learned evaluator against ``baseline`` in the same search (win 1, draw 1/2),
    half the games in each seat, each from 2 random opening plies."""
    from tablegym.models.agents import make_evaluator
    from tablegym.search.agents import AlphaBetaAgent
    from tablegym.search.play import play_game

    ours = AlphaBetaAgent(learned, depth=depth)
    theirs = AlphaBetaAgent(make_evaluator(game, baseline), depth=depth)
    rng = np.random.default_rng(seed)
    score = 0.0
    for i in range(games):
        seats = (ours, theirs) if i % 2 == 0 else (theirs, ours)
        record = play_game(game, seats, rng, opening_plies=2)
        me = i % 2
        score += 1.0 if record.winner == me else (0.5 if record.winner is None else 0.0)
    return score / games


def game_metrics(game: Game, evaluator: LearnedEvaluator) -> dict[str, float]:
    """Exact measures some games allow (Sim's agreement with the solver over all positions):
    the ``training_metrics`` function named by the game's registry record."""
    from tablegym.envs import load, plugin

    metrics = plugin(game.spec.name).training_metrics
    return load(metrics)(game, evaluator) if metrics else {}


def _selfplay_chunk(shared: tuple, job: dict):
    """One chunk of self-play games in a worker: the game and the current network (its exported
    weights, ``shared`` by every chunk of the iteration) rebuilt here."""
    from tablegym.envs import make_game as registry
    from tablegym.envs.evaluator import KernelEvaluator
    from tablegym.models.learned import value_kernel

    game_name, options, params = shared
    game = registry(game_name, **options)
    kernel, win_value = value_kernel(game_name)
    evaluator = KernelEvaluator("learned", kernel, params)
    evaluator.win_value = evaluator.bound = win_value
    return play_selfplay(game.new_initial_state(), evaluator, **job)


@dataclass
class SelfPlay:
    """What a game brings to the TD-leaf(lambda) loop (``train_selfplay``): its search plays and
    evaluates; the loop seeds, fits, logs, evaluates on schedule and checkpoints."""

    game: Game
    """the game (its name and rule options go into the checkpoint)"""
    num_features: int
    """inputs of the ValueMLP"""
    symmetries: list[np.ndarray]
    """input permutations that keep the value (the identity first): fitting draws one per minibatch"""
    play: Callable[[ValueMLP, list[dict], InProcessExecutor], SelfPlayBatch]
    """one iteration's self-play with the current network: jobs of ``games`` games and a ``seed``
    each, run on the executor, merged into one batch"""
    evaluate: Callable[[ValueMLP, int, InProcessExecutor], dict[str, float]]
    """TensorBoard scalars of an evaluation at an iteration (its seed); each ``charts/score_vs_NAME``
    also shows on the progress bar"""
    charts: Callable[[SelfPlayBatch], dict[str, float]] = lambda batch: {}
    """the game's own TensorBoard scalars of a self-play batch"""
    feature_dtype: type = np.uint8
    """the replay buffer's input type (binary features by default)"""


def train_selfplay(args: TDArgs, selfplay: SelfPlay) -> Path:
    """Run (or resume) TD-leaf(lambda) self-play training; returns the path of the final checkpoint."""
    learner = ValueLearner(args, selfplay.game, NetConfig(selfplay.num_features, tuple(args.hidden)))
    with Run(args, selfplay.game, learner, total=args.total_games, budget=f"--total-games {args.total_games}") as run:
        model, rng = learner.model, learner.rng
        buffer = ReplayBuffer(args.buffer_size, selfplay.num_features, dtype=selfplay.feature_dtype)
        runner = executor(args.backend, args.workers, args.address)

        while run.next_iteration():
            # 1. self-play with the current network at the leaves of the search
            t0 = time.perf_counter()
            jobs = [dict(games=k, seed=int(rng.integers(2**31))) for k in chunks(args.games_per_iter, args.workers)]
            batch = selfplay.play(model, jobs, runner)
            gen_seconds = time.perf_counter() - t0
            run.played(args.games_per_iter)
            # 2.-3. TD-leaf(lambda) targets, then fit on the replay buffer
            td_error, mse = td_update(model, learner.optimizer, buffer, batch, args, rng, selfplay.symmetries)
            run.log(
                {
                    "losses/mse": mse,
                    "losses/td_error": td_error,
                    "charts/games_per_s": per_second(args.games_per_iter, gen_seconds),
                    **selfplay.charts(batch),
                }
            )
            # 4. evaluation and checkpoints
            postfix = {"td": f"{td_error:.3f}"}
            if run.due(args.eval_every):
                scalars = selfplay.evaluate(model, run.iteration, runner)
                run.log(scalars)
                postfix.update(
                    {
                        tag.removeprefix("charts/score_vs_"): f"{value:.2f}"
                        for tag, value in scalars.items()
                        if tag.startswith("charts/score_vs_")
                    }
                )
            run.bar.set_postfix(postfix)
            if run.due(args.save_every):
                run.save()
        runner.shutdown()
        return run.finish()


def train(args: Args) -> Path:
    """Run (or resume) a training run; returns the path of the final checkpoint."""
    game = make_game(args)
    start = game.new_initial_state()
    if not isinstance(start, KernelState):
        raise ValueError(f"TD self-play needs a compiled game; {game.spec.name} has no kernels")

    def play(model: ValueMLP, jobs: list[dict], runner: InProcessExecutor) -> SelfPlayBatch:
        jobs = [dict(job, depth=args.depth, epsilon=args.epsilon) for job in jobs]
        if len(jobs) == 1 and args.backend == "process":
            return play_selfplay(start, LearnedEvaluator(model, game.spec.name), **jobs[0])
        # chunks side by side; the weights go to the workers once per iteration
        shared = (args.game, dict(args.game_options), model.export())
        return merge(runner.map_shared(_selfplay_chunk, shared, jobs))

    def evaluate(model: ValueMLP, iteration: int, runner: InProcessExecutor) -> dict[str, float]:
        learned = LearnedEvaluator(model, game.spec.name)
        score = evaluation_match(game, learned, args.eval_baseline, games=args.eval_games, depth=args.eval_depth, seed=iteration)
        return {f"charts/score_vs_{args.eval_baseline}": score, **game_metrics(game, learned)}

    def charts(batch: SelfPlayBatch) -> dict[str, float]:
        firsts = np.r_[0, np.flatnonzero(np.diff(batch.game)) + 1]
        return {
            "charts/positions_per_game": len(batch) / args.games_per_iter,
            "charts/first_player_score": float(np.mean(batch.result[firsts] * 0.5 + 0.5)),
        }

    return train_selfplay(args, SelfPlay(game, start.num_features, feature_symmetries(game), play, evaluate, charts))


def parse_args(argv: list[str] | None = None) -> Args:
    game = argv[0] if argv and not argv[0].startswith("-") else None
    prog = f"tablegym train {game}" if game else "tablegym train"
    return parse_dataclass_args(Args, argv, prog, __doc__.split("\n\n")[0])


def cli_main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return train_command(train, args, f"tablegym train {args.game}")


if __name__ == "__main__":
    cli_main()
