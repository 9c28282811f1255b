"""How often a Sim evaluator's sign agrees with the solved value, over every canonical position.

The 2,250 positions of K6 that can occur before any triangle (one per isomorphism class) are
enumerated breadth-first; the canonical-form solver gives each its exact value for the player
to move (+1 win, -1 loss; K6 has no draws), and the evaluator must say the same by its sign.
``python -m tablegym.experiments.sim.agreement`` prints it; TD training logs it
(``training_metrics``, named by Sim's registry record).
"""

from __future__ import annotations

import numpy as np

from tablegym.envs.evaluator import Evaluator
from tablegym.envs.sim.canonical import canonical_key, k_canonical
from tablegym.envs.sim.core import KERNELS, SimGame, SimState
from tablegym.search.solver import Solver
from tablegym.training.flags import OneLineParser


def canonical_positions(n: int = 6) -> list[SimState]:
    """One unfinished position per isomorphism class, in order of the number of coloured edges."""
    level = [SimGame(n).new_initial_state()]
    out: list[SimState] = []
    while level:
        out.extend(level)
        seen: dict[int, SimState] = {}
        for s in level:
            for a in s.legal_actions():
                c = s.child(a)
                if not c.is_terminal():
                    seen.setdefault(canonical_key(c), c)
        level = list(seen.values())
    return out


def sign_agreement(evaluator: Evaluator, n: int = 6, positions: list[SimState] | None = None) -> tuple[int, int]:
    """(positions where sign(evaluator) == solved value, positions); a draw needs |value| < 0.5."""
    positions = positions if positions is not None else canonical_positions(n)
    solver = Solver(KERNELS, key_fn=k_canonical)
    agree = 0
    for s in positions:
        truth = solver.value(s)
        v = evaluator(s, s.current_player())
        agree += int((truth == 0 and abs(v) < 0.5) or (truth != 0 and np.sign(v) == truth))
    return agree, len(positions)


def training_metrics(game: SimGame, evaluator: Evaluator) -> dict[str, float]:
    """What TD training logs for Sim: on K6, the share of canonical positions where the
    evaluator's sign agrees with the solver (nothing on other boards: no exact table)."""
    if game.n != 6:
        return {}
    agree, total = sign_agreement(evaluator)
    return {"charts/solver_sign_agreement": agree / total}


def main(argv: list[str] | None = None) -> None:
    """``python -m tablegym.experiments.sim.agreement [--eval learned]``: one line per evaluator."""
    from tablegym.models.agents import make_evaluator

    parser = OneLineParser(prog="python -m tablegym.experiments.sim.agreement", description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval", default="learned", help="evaluator name (learned, learned:PATH, safe-moves)")
    args = parser.parse_args(argv)
    agree, total = sign_agreement(make_evaluator(SimGame(6), args.eval))
    print(f"{args.eval}: sign agrees with the solver on {agree}/{total} canonical K6 positions ({agree / total:.2%})")


if __name__ == "__main__":
    main()
