"""The main job end to end on built-in defaults (``make demo``).

1. Solve Sim on K3..K6 with the canonical-form solver.
2. Train a small Trilobite value network by self-play TD-leaf for a few minutes
   (TensorBoard logs under runs/).
3. Put it into the depth-5 alpha-beta search in place of the original "advanced" heuristic and
   play a match against that heuristic in the same search, both seats, random 2-ply openings.
4. Threes: a minute of afterstate TD learning of an n-tuple network from scratch, then the
   shipped network against Threesus's OpennessMatthew in the same 2-swipe expectimax.
"""

from __future__ import annotations

from tablegym.experiments.match import markdown_table, play_match
from tablegym.training.flags import OneLineParser
from tablegym.training.td import Args, train


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(prog="python -m tablegym.experiments.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0, help="Trilobite training time")
    parser.add_argument("--games", type=int, default=100, help="games in the final match")
    parser.add_argument("--depth", type=int, default=5, help="search depth of both sides")
    parser.add_argument("--workers", type=int, default=2, help="processes for the match")
    parser.add_argument("--run-dir", default="runs/demo-trilobite", help="TensorBoard logs and checkpoint")
    parser.add_argument("--threes-minutes", type=float, default=1.0, help="Threes n-tuple training time")
    parser.add_argument("--threes-games", type=int, default=20, help="Threes games per evaluator")
    args = parser.parse_args(argv)

    from tablegym.models.sim.agents import solve_sim

    print("== 1. Sim solved with the canonical-form solver")
    solve_sim(3)  # loads the compiled solver, so the times below are solves alone
    for n in (3, 4, 5, 6):
        r = solve_sim(n)
        verdict = {1: "first player wins", 0: "draw", -1: "second player wins"}[int(r.value)]
        print(f"K{n}: {verdict:18s} positions stored {r.positions_stored:6d}  nodes {r.nodes:7d}  {r.seconds * 1000:8.1f} ms")

    print(f"\n== 2. Trilobite value network: self-play TD-leaf for {args.minutes} min (logs: {args.run_dir})")
    ckpt = train(Args(minutes=args.minutes, run_dir=args.run_dir, eval_every=10, eval_games=20))

    print(f"\n== 3. Depth-{args.depth} alpha-beta: learned evaluator vs the original 'advanced' heuristic")
    result = play_match(
        "trilobite",
        f"alphabeta:eval=learned:{ckpt},depth={args.depth}",
        f"alphabeta:eval=advanced,depth={args.depth}",
        games=args.games,
        opening_plies=2,
        workers=args.workers,
        seed=0,
    )
    print(markdown_table([result], elo=True))

    from tablegym.experiments.threes import evaluate as threes_eval
    from tablegym.training.threes import train as ntuple_td

    print(f"\n== 4. Threes n-tuple network: afterstate TD(0.5) from scratch for {args.threes_minutes} min")
    ntuple_td.train(ntuple_td.Args(run_dir="runs/demo-threes", minutes=args.threes_minutes, lam=0.5))
    print(f"\nthe shipped network vs OpennessMatthew, 2-swipe expectimax, {args.threes_games} games each:")
    rows = []
    for spec in ("expectimax:depth=2,eval=learned", "expectimax:depth=2"):
        records = threes_eval.run(spec, games=args.threes_games, workers=args.workers, seed=0, progress=False)
        rows.append(threes_eval.markdown_row(spec, threes_eval.summarise(records), "+"))
    print("\n".join([threes_eval.HEADER, *rows]))


if __name__ == "__main__":
    main()
