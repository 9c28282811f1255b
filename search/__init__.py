"""Game-independent searches over the rules-core contract: alpha-beta, expectiminimax with
chance nodes, expectimax, best-first, the exact solver, the agents that play with them and
the one game loop.

Everything listed in ``__all__`` is importable from here, each name loading its module on first
use (``tablegym.envs.exports``).
"""

from tablegym.envs.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    agents=[
        "Agent",
        "RandomAgent",
        "FunctionAgent",
        "AlphaBetaAgent",
        "ExpectiminimaxAgent",
        "ExpectimaxAgent",
        "BestFirstAgent",
        "parse_spec",
        "check_options",
        "is_learned",
        "learned_path",
    ],
    searchers=["SEARCHERS", "Searcher", "Key", "MoveFilter", "searcher_named"],
    alphabeta_search=["alphabeta", "SearchResult", "AlphaBetaTables", "root_search", "TABLE_TYPES"],
    expectiminimax_search=["expectiminimax", "ExpectiminimaxResult", "SearchTables", "reference_expectiminimax"],
    expectimax_search=["expectimax", "ExpectimaxResult"],
    bestfirst=["best_first", "best_first_search", "reference_best_first", "BestFirstResult"],
    solver=["solve", "solved_values", "Solver", "SolveResult"],
    play=["play_game", "GameRecord", "random_opening", "sample_outcome"],
    elsewhere={"tablegym.envs.evaluator": ["Evaluator", "KernelEvaluator", "WrongGameError", "check_game", "position_evaluator"]},
)
