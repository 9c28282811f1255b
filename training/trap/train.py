"""Self-play TD-leaf(lambda) for Trap: a ValueMLP learns to replace the hand-made evaluator.

Read it top to bottom (CleanRL style). The loop is training/td.py's (``train_selfplay``); what
is Trap's is the search it plays and evaluates with, the expectiminimax: the throw lands by
chance, and a turn is two decisions of the same player.

1. play a batch of self-play games, in parallel processes: at every decision the compiled
   expectiminimax (joint recipe, fixed depth, candidate throws) searches with the current
   network at its leaves; its root value is the TD-leaf target of the position; with
   probability epsilon a uniformly random candidate is played instead (exploration);
2. turn each game into TD-leaf(lambda) targets (training/selfplay.py, with the mover recorded,
   since a move and the throw after it belong to the same player);
3. fit the network on a replay buffer of recent positions (Adam, MSE), each batch under a
   random symmetry of the square board;
4. every ``eval_every`` iterations, play the learned searcher against the best hand-made one
   (same search, same depth) and against the course's Hard player; log both win rates;
   every ``save_every`` iterations checkpoint (resumable: rerun with the same ``run_dir``).

    tablegym train trap --minutes 30 --workers 2 --run-dir runs/trap-td
    tensorboard --logdir runs
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from tablegym.envs.core import CHANCE, k_key, k_outcome
from tablegym.envs.trap.core import CAND, TrapGame, TrapState, k_candidates, k_chance, k_pop, k_push, k_to_move
from tablegym.models.trap.learned import SCALE, evaluator_of, input_symmetries, num_inputs, trap_inputs, trap_value
from tablegym.models.value_net import ValueMLP
from tablegym.search.expectiminimax_search import SearchTables, root_search
from tablegym.training.parallel import InProcessExecutor
from tablegym.training.runs import trainer_cli
from tablegym.training.selfplay import SelfPlayBatch, TDArgs, merge
from tablegym.training.td import SelfPlay, train_selfplay


@dataclass
class Args(TDArgs):
    """training/selfplay.py's ``TDArgs`` with Trap's defaults, and the throws its search tries."""

    game: str = "trap"
    """only trap (the positional game name of ``tablegym train``)"""
    games_per_iter: int = 100
    depth: int = 2
    """decisions searched by the self-play searcher (a move and a throw are one each)"""
    candidates: int = 10
    """throws tried per throw node of the self-play search"""
    hidden: tuple[int, ...] = (64,)
    eval_depth: int = 3
    eval_baseline: str = "composite"
    run_dir: str = "runs/trap-td"


@njit  # not cached: numba cannot cache code holding other functions' addresses (~1 s to compile)
def _search(s, depth, params, tables):
    """Iterative deepening to ``depth`` with the learned evaluator: (best move, its value).

    The kernels are bound here, inside compiled code: passed from Python, the search's function
    arguments cost ~0.6 ms per call to convert, more than a shallow search.
    """
    counters = np.zeros(4, dtype=np.int64)
    root_values = np.empty(tables[2].shape[1], dtype=np.float64)
    kernels = ((k_candidates, k_push, k_pop, k_to_move, k_outcome, k_key), k_chance, trap_value, params)
    best, value = -1, 0.0
    for d in range(1, depth + 1):
        best, value, _ = root_search(s, d, kernels, tables, counters, SCALE, 1 << 62, root_values)
    return best, value


def play_selfplay(
    params: np.ndarray, *, games: int, depth: int, epsilon: float, seed: int, n: int = 7, candidates: int = 10
) -> SelfPlayBatch:
    """``games`` self-play games of the searcher with network ``params`` (a ValueMLP export)."""
    game = TrapGame(n)
    rng = np.random.default_rng(seed)
    rows: list[np.ndarray] = []
    values, movers, game_ids, explored, results = [], [], [], [], []
    buf = np.empty(game.spec.num_actions, dtype=np.int64)
    for g in range(games):
        arr = game.new_initial_state().array
        arr[CAND] = candidates
        state = TrapState(game, arr)
        t = SearchTables(game.spec.num_actions, tt_bits=14)
        start = len(values)
        while not state.is_terminal():
            player = state.current_player()
            if player == CHANCE:
                outcomes = state.chance_outcomes()
                pick = rng.choice(len(outcomes), p=[p for _, p in outcomes])
                state = state.child(outcomes[pick][0])
                continue
            x = np.empty(num_inputs(n))
            trap_inputs(state.array, x)
            best, value = _search(state.array, depth, params, t.arrays)
            action = int(best)
            is_random = False
            if rng.random() < epsilon:
                choices = buf[: k_candidates(state.array, buf)]
                action = int(choices[rng.integers(len(choices))])
                is_random = action != best
            rows.append(x)
            values.append(float(np.clip(value / SCALE, -1.0, 1.0)))
            movers.append(player)
            game_ids.append(g)
            explored.append(is_random)
            state = state.child(action)
        returns = state.returns()
        for i in range(start, len(values)):
            results.append(float(np.sign(returns[movers[i]])))
    return SelfPlayBatch(
        np.array(rows, dtype=np.float32).reshape(-1, num_inputs(n)),
        np.array(values),
        np.array(game_ids),
        np.array(explored, dtype=bool),
        np.array(results),
        np.array(movers),
    )


def _play_chunk(params: np.ndarray, kwargs: dict) -> SelfPlayBatch:
    """One chunk of self-play games with the network ``params`` (shared by every chunk)."""
    return play_selfplay(params, **kwargs)


def _match_games(params: np.ndarray, task: tuple) -> float:
    """Points of the learned searcher (network ``params``) in games ``first..last-1``; even
    games it plays player 0, odd games player 1; each game seeded by (seed, index)."""
    from tablegym.models.agents import make_agent
    from tablegym.models.trap.agents import SearchAgent
    from tablegym.search.play import play_game

    opponent, first, last, depth, seed, n = task
    game = TrapGame(n)
    learned = evaluator_of(params)
    points = 0.0
    for i in range(first, last):
        ours, theirs = SearchAgent(learned, depth=depth), make_agent(game, opponent)
        seats = (ours, theirs) if i % 2 == 0 else (theirs, ours)
        record = play_game(game, seats, np.random.default_rng([seed, i]))
        points += 1.0 if record.winner == i % 2 else (0.5 if record.winner is None else 0.0)
    return points


def evaluation_match(
    params: np.ndarray,
    opponent: str,
    *,
    games: int,
    depth: int,
    seed: int,
    n: int = 7,
    runner: InProcessExecutor | None = None,
    workers: int = 1,
) -> float:
    """Score of the learned searcher against ``opponent`` (a Trap agent spec), win 1, draw 1/2,
    half the games in each seat, in ``workers`` chunks on ``runner`` (training.parallel) if given."""
    cuts = np.linspace(0, games, max(workers, 1) + 1).astype(int)
    tasks = [(opponent, int(a), int(b), depth, seed, n) for a, b in zip(cuts, cuts[1:]) if b > a]
    return sum((runner or InProcessExecutor()).map_shared(_match_games, params, tasks)) / games


def train(args: Args) -> Path:
    """Run (or resume) a training run; returns the path of the final checkpoint."""
    if args.game != "trap":
        raise ValueError(f"training/trap/train.py trains Trap only, not {args.game!r}")
    game = TrapGame(**args.game_options)
    n = game.n

    def play(model: ValueMLP, jobs: list[dict], runner: InProcessExecutor) -> SelfPlayBatch:
        params = model.export()
        jobs = [dict(job, depth=args.depth, epsilon=args.epsilon, n=n, candidates=args.candidates) for job in jobs]
        return merge(runner.map_shared(_play_chunk, params, jobs))

    def evaluate(model: ValueMLP, iteration: int, runner: InProcessExecutor) -> dict[str, float]:
        params = model.export()
        return {
            f"charts/score_vs_{name}": evaluation_match(
                params,
                spec,
                games=args.eval_games,
                depth=args.eval_depth,
                seed=iteration,
                n=n,
                runner=runner,
                workers=args.workers,
            )
            for name, spec in (
                (args.eval_baseline, f"search:eval={args.eval_baseline},depth={args.eval_depth}"),
                ("hard", "hard"),
            )
        }

    def charts(batch: SelfPlayBatch) -> dict[str, float]:
        return {"charts/decisions_per_game": len(batch) / args.games_per_iter}

    return train_selfplay(
        args, SelfPlay(game, num_inputs(n), input_symmetries(n), play, evaluate, charts, feature_dtype=np.float32)
    )


parse_args, cli_main = trainer_cli(Args, train, "tablegym train trap", __doc__)


if __name__ == "__main__":
    cli_main()
