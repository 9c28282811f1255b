"""A torch MLP fitted to Sim's exact solver values, checked by sign agreement, then searched.

    python -m tablegym.experiments.sim.regress --hidden 64 --epochs 300 --seed 0 --out results/sim/regress.md
    (make sim-regress)

Bring your own network, the plain supervised way: no self-play, no TD, just regression on the
truth. Read it top to bottom (CleanRL style): the arguments (``Args``), then ``run``:

1. Data: the 2,250 canonical K6 positions (experiments/sim/agreement.py, one per isomorphism class),
   each with its exact value for the player to move (+1 / -1; the canonical-form solver). The
   classes are split at random, ``--holdout`` of them kept out of training, so that agreement
   on them measures generalisation and not memory. The input is what ``from_torch``'s compiled
   kernel reads: ``state.observation(mover)`` flattened (mover's edges, opponent's edges, the
   to-move plane; 3 x 15). That view is not invariant under renaming the six points, so every
   epoch also trains on ``--variants`` randomly relabelled copies of each training position
   (same value, other edge numbers): games reach their positions under any labelling.
2. Fit: ``Sequential(Linear(45, hidden), ReLU, Linear(hidden, 1), Tanh)``, plain MSE to the
   solver value, Adam with a cosine step size, one CPU thread.
3. Export: ``from_torch(net, SimGame(6))``; the compiled evaluator must equal the torch forward
   pass (within 1e-5) on held-out positions and their relabellings.
4. Agreement: ``sign_agreement`` of the exported network, the same network untrained, the
   hand-made ``safe-moves`` and the shipped TD network (``eval=learned``, which reads
   canonical-form features and so never sees a labelling) on the held-out classes, the held-out
   classes under a random relabelling each, and all 2,250.
5. Match: the exported network in depth-``--depth`` alpha-beta against ``safe-moves`` (Sim's
   only hand-made evaluator) in the same search, ``--games`` games with ``--opening-plies``
   random plies, both seats, through ``tablegym.experiments.match.play_match`` (what
   ``tablegym eval`` plays).
6. Output: the markdown report (tables, exact command, seconds per phase) printed and written
   to ``--out``; with ``--save PATH`` the weights as a tablegym checkpoint, read back by
   ``from_state_dict(load_checkpoint(PATH)["model"], LAYERS, SimGame(6))``; with ``--run-dir``
   one TensorBoard run (``losses/mse`` per epoch, ``charts/`` agreements).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from tablegym.envs.core import Game
from tablegym.envs.evaluator import Evaluator
from tablegym.envs.sim.canonical import EDGE_ID, edges_of, k_canonical, relabel
from tablegym.envs.sim.core import KERNELS, SimGame, SimState
from tablegym.experiments.match import play_match
from tablegym.experiments.sim.agreement import canonical_positions, sign_agreement
from tablegym.experiments.stats import MatchResult, wilson_interval
from tablegym.models.export import NetEvaluator, from_torch
from tablegym.search.agents import Agent, AlphaBetaAgent, parse_spec
from tablegym.search.solver import Solver
from tablegym.training.flags import OneLineParser

PROG = "python -m tablegym.experiments.sim.regress"
LAYERS = ["linear", "relu", "linear", "tanh"]
"""The network's layer list, as ``from_state_dict`` reads a saved one."""
REGRESS = "regress"
"""The ``eval=`` name of the exported network in this script's match specs."""
N = 6


@dataclass
class Args:
    hidden: int = 64
    """hidden units of the one hidden layer"""
    epochs: int = 300
    """passes over the training positions (each with fresh relabelled variants)"""
    lr: float = 3e-3
    """Adam's initial step size (cosine-annealed to 0 over the epochs)"""
    batch_size: int = 64
    """positions per Adam step"""
    variants: int = 1
    """randomly relabelled copies of every training position per epoch, besides the position itself"""
    holdout: float = 0.2
    """share of the canonical classes kept out of training"""
    seed: int = 0
    """seeds the split, the relabellings, torch's initialisation and the match's openings"""
    depth: int = 3
    """alpha-beta depth (plies) of both sides in the match"""
    games: int = 100
    """games in the match, half with the network as player 0"""
    opening_plies: int = 2
    """uniformly random plies before the agents play, shared by the two games of a pair"""
    out: str = "results/sim/regress.md"
    """where the markdown report is written"""
    save: str = ""
    """if set, write the trained weights here (a tablegym checkpoint)"""
    run_dir: str = ""
    """if set, a TensorBoard run here"""


def point_symmetries(n: int = N) -> np.ndarray:
    """(n!, E) gather indices: row k renames the points of K_n by the k-th permutation, so
    ``x[..., g]`` is a per-edge array of the relabelled board (``canonical.relabel``'s map)."""
    edges = edges_of(n)
    out = np.empty((math.factorial(n), len(edges)), dtype=np.int64)
    for k, perm in enumerate(itertools.permutations(range(n))):
        for e, (i, j) in enumerate(edges):
            out[k, EDGE_ID[n, perm[i], perm[j]]] = e
    return out


def solved_dataset(positions: list[SimState]) -> tuple[np.ndarray, np.ndarray]:
    """(observations of the mover, n x 3 x E float32; exact values for the mover, float32)."""
    solver = Solver(KERNELS, key_fn=k_canonical)
    x = np.stack([s.observation(s.current_player()) for s in positions])
    y = np.array([solver.value(s) for s in positions], dtype=np.float32)
    return x, y


def relabelled(x: np.ndarray, gathers: np.ndarray) -> np.ndarray:
    """Observations ``x`` (n x 3 x E) with row i's points renamed by ``gathers[i]``."""
    return np.take_along_axis(x, np.repeat(gathers[:, None, :], x.shape[1], axis=1), axis=2)


def make_net(inputs: int, hidden: int) -> nn.Sequential:
    """The regressor: one ReLU hidden layer, a tanh value in [-1, 1] like the solver's."""
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, 1), nn.Tanh())


def fit(
    net: nn.Sequential,
    x: np.ndarray,
    y: np.ndarray,
    args: Args,
    rng: np.random.Generator,
    log: Callable[[str, float, int], None] | None = None,
) -> float:
    """Plain MSE regression of ``net`` on (x, y) plus fresh relabelled variants every epoch;
    returns the last epoch's mean loss. ``log(tag, value, epoch)`` sees each epoch's loss."""
    gathers = point_symmetries()
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(args.epochs, 1))
    targets = torch.from_numpy(np.tile(y, args.variants + 1))
    loss_mean = float("nan")
    for epoch in range(args.epochs):
        copies = [x] + [relabelled(x, gathers[rng.integers(len(gathers), size=len(x))]) for _ in range(args.variants)]
        inputs = torch.from_numpy(np.concatenate(copies).reshape(len(targets), -1))
        order = torch.from_numpy(rng.permutation(len(targets)))
        total = 0.0
        for start in range(0, len(order), args.batch_size):
            batch = order[start : start + args.batch_size]
            loss = ((net(inputs[batch]).squeeze(1) - targets[batch]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(batch)
        schedule.step()
        loss_mean = total / len(order)
        if log is not None:
            log("losses/mse", loss_mean, epoch)
    return loss_mean


def relabel_positions(positions: list[SimState], rng: np.random.Generator) -> list[SimState]:
    """Each position with its points renamed by a random permutation (same value, other edges)."""
    game = SimGame(N)
    return [game.from_colours(relabel(s.colours, rng.permutation(N), N)) for s in positions]


def export_error(net: nn.Sequential, evaluator: Evaluator, positions: list[SimState]) -> float:
    """Largest |compiled evaluator - torch forward pass| over ``positions``, for the mover."""
    x = np.stack([s.observation(s.current_player()).reshape(-1) for s in positions])
    with torch.no_grad():
        torch_values = net(torch.from_numpy(x)).squeeze(1).double().numpy()
    compiled = np.array([evaluator(s, s.current_player()) for s in positions])
    return float(np.max(np.abs(compiled - torch_values)))


def agent_factory(evaluator: Evaluator) -> Callable[[Game, str], Agent]:
    """``(game, spec) -> Agent`` for ``play_match``: ``tablegym eval``'s specs, plus
    ``alphabeta:eval=regress,depth=D`` for the exported network (one process: no pickling)."""
    from tablegym.models.agents import make_agent

    def build(game: Game, spec: str) -> Agent:
        _, options = parse_spec(spec)
        if options.get("eval") == REGRESS:
            return AlphaBetaAgent(evaluator, depth=int(options["depth"]), name=spec)
        return make_agent(game, spec)

    return build


def fraction(pair: tuple[int, int]) -> str:
    """``agree/total (share)``, the count first: exact, the share for reading."""
    agree, total = pair
    return f"{agree}/{total} ({agree / total:.1%})"


def match_table(result: MatchResult) -> str:
    """Per seat and overall: games, W/D/L of the network, its win rate with a 95% Wilson interval."""
    lines = ["| network plays | games | wins | draws | losses | win rate [95% Wilson] |", "|---|---|---|---|---|---|"]
    rows = [
        (f"player {s.seat}" + (" (first)" if s.seat == 0 else " (second)"), s.games, s.wins, s.draws, s.losses)
        for s in result.seats
    ]
    rows.append(("both seats", result.games, result.wins, result.draws, result.losses))
    for label, games, wins, draws, losses in rows:
        lo, hi = wilson_interval(wins, games)
        rate = f"{wins / games:.3f} [{lo:.3f}, {hi:.3f}]" if games else "-"
        lines.append(f"| {label} | {games} | {wins} | {draws} | {losses} | {rate} |")
    return "\n".join(lines)


@dataclass
class Report:
    """What one run produced: the network, its export, the agreements, the match, the report."""

    net: nn.Sequential
    evaluator: NetEvaluator
    export_error: float
    agreement: dict[str, dict[str, tuple[int, int]]]
    """evaluator name -> position set -> (positions where the sign agrees, positions)"""
    match: MatchResult
    seconds: dict[str, float]
    markdown: str


def run(args: Args, command: str = PROG) -> Report:
    """Fit, export, check, measure and play (the module docstring's steps 1-6)."""
    from tablegym.envs.sim.heuristics import SAFE_MOVES
    from tablegym.models.learned import load_evaluator

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    writer = None
    if args.run_dir:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(args.run_dir)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    # 1. data: canonical classes, split; exact values for the mover
    positions = canonical_positions(N)
    x, y = solved_dataset(positions)
    order = rng.permutation(len(positions))
    cut = int(round(args.holdout * len(positions)))
    held, train = np.sort(order[:cut]), np.sort(order[cut:])
    held_out = [positions[i] for i in held]
    sets = {"held-out": held_out, "held-out, relabelled": relabel_positions(held_out, rng), "all 2,250": positions}
    seconds["data"] = time.perf_counter() - clock

    # 2. fit
    clock = time.perf_counter()
    net = make_net(x[0].size, args.hidden)
    untrained = copy.deepcopy(net)
    log = writer.add_scalar if writer is not None else None
    loss = fit(net, x[train], y[train], args, rng, log)
    net.eval()
    seconds["train"] = time.perf_counter() - clock

    # 3. export, held to the torch forward pass
    clock = time.perf_counter()
    game = SimGame(N)
    evaluator = from_torch(net, game, name=REGRESS)
    error = export_error(net, evaluator, sets["held-out"][:50] + sets["held-out, relabelled"][:50])
    assert error < 1e-5, f"the compiled export differs from the torch forward pass by {error}"

    # 4. sign agreement with the solver
    evaluators = {
        f"MLP {args.hidden}, regressed (exported)": evaluator,
        f"MLP {args.hidden}, untrained": from_torch(untrained, game, name="untrained"),
        "safe-moves (hand-made)": SAFE_MOVES,
        "learned (shipped TD network)": load_evaluator(game),
    }
    agreement = {name: {label: sign_agreement(ev, positions=ps) for label, ps in sets.items()} for name, ev in evaluators.items()}
    seconds["export + agreement"] = time.perf_counter() - clock

    # 5. match: the network against the hand-made evaluator in the same search, both seats
    clock = time.perf_counter()
    spec_a = f"alphabeta:eval={REGRESS},depth={args.depth}"
    spec_b = f"alphabeta:eval=safe-moves,depth={args.depth}"
    match = play_match(
        "sim",
        spec_a,
        spec_b,
        games=args.games,
        opening_plies=args.opening_plies,
        seed=args.seed,
        progress=False,
        agent_factory=agent_factory(evaluator),
    )
    seconds["match"] = time.perf_counter() - clock

    # 6. report
    majority = max(np.mean(y == 1), np.mean(y == -1))
    lines = [
        f"# Sim K6: an MLP regressed on solver values, exported into alpha-beta (seed {args.seed})",
        "",
        f"`Sequential(Linear({x[0].size}, {args.hidden}), ReLU, Linear({args.hidden}, 1), Tanh)` on "
        f"`observation(mover)`, MSE to the exact value, Adam (lr {args.lr}, cosine), {args.epochs} epochs "
        f"of {len(train)} canonical positions + {args.variants} random relabelling(s) each; final train MSE "
        f"{loss:.4f}. {len(held)} classes held out. Compiled export vs torch forward pass: max |diff| "
        f"{error:.1e}.",
        "",
        "## Sign agreement with the solver",
        "",
        "| evaluator | " + " | ".join(sets) + " |",
        "|---|" + "---|" * len(sets),
        *(f"| {name} | " + " | ".join(fraction(a) for a in row.values()) + " |" for name, row in agreement.items()),
        "",
        f"The MLPs' training classes are the other {len(train)}, so their all-2,250 column is mostly recall; "
        'the held-out columns measure generalisation, "relabelled" with each board\'s points renamed at random '
        "(as games present positions). safe-moves and the shipped network (canonical-form features) do not see "
        f"labellings. Always answering the majority value (+1) agrees on {majority:.1%} of all 2,250.",
        "",
        f"## `{spec_a}` (the exported MLP) vs `{spec_b}`",
        "",
        match_table(match),
        "",
        f"{match.games} games ({match.distinct_games} distinct), {args.opening_plies} random opening plies, seed "
        f"{args.seed}; seconds per move: network {match.seconds_per_move[0]:.2g}, safe-moves "
        f"{match.seconds_per_move[1]:.2g}. K6 has no draws, and the second player wins with perfect play.",
        "",
        "## Command and time",
        "",
        f"    {command}",
        "",
        "Seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()) + f"; total {sum(seconds.values()):.1f}"
        " (one torch thread, CPU).",
    ]
    if writer is not None:
        for label, (agree, total) in agreement[next(iter(evaluators))].items():
            writer.add_scalar(f"charts/sign_agreement_{label.replace(' ', '_').replace(',', '')}", agree / total, args.epochs)
        writer.close()
    if args.save:
        from tablegym.models.checkpoint import save_checkpoint

        save_checkpoint(
            args.save,
            model=net,
            metadata={"game": "sim", "options": dict(game.spec.options), "layers": LAYERS, "args": dataclasses.asdict(args)},
        )
    return Report(net, evaluator, error, agreement, match, seconds, "\n".join(lines) + "\n")


def parse_args(argv: list[str] | None = None) -> Args:
    """``Args`` from flags named after its fields (``--batch-size 64``)."""
    from tablegym.training.runs import field_help

    parser = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    helps = field_help(Args)
    for f in dataclasses.fields(Args):
        parser.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default, help=helps[f.name])
    args = Args(**vars(parser.parse_args(argv)))
    if args.epochs < 0 or args.games < 1 or args.depth < 1 or args.hidden < 1 or not 0 < args.holdout < 1:
        parser.error("need --epochs >= 0, --games, --depth and --hidden >= 1, and 0 < --holdout < 1")
    return args


def main(argv: list[str] | None = None) -> Report:
    """Run with command-line flags; write the report to ``--out``, print it and return it."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    report = run(args, shlex.join([*PROG.split(), *argv]))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(report.markdown)
    print(report.markdown, end="")
    return report


if __name__ == "__main__":
    main()
