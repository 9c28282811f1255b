"""No runaway from numbers: a count of games is streamed (memory does not grow with the games
asked for, only with those played), and a search budget beyond what its searcher supports (a
depth its compiled stack cannot hold, ``time=1e300``) is refused when the spec is read, in one
line, by every route: ``make_agent``, ``tablegym eval``/``play`` (exit status 2) and an env's
opponent; never a traceback from a worker or a search that runs for hours without a word.
"""

from __future__ import annotations

import gymnasium
import pytest

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs import ENV_IDS, make_game, plugin, plugins
from tablegym.models.agents import game_evaluators, make_agent
from tablegym.search.searchers import SEARCHERS, BudgetError, Key
from tests.cli_errors import assert_one_error_line
from tests.hostile import run_limited

HUGE = "100000000000000"
"""The number of games of the report (10**14)."""
GAMES = [p.name for p in plugins() if p.agents]


def _beyond(key: Key) -> list[str]:
    """Values of ``key`` past its bound: the bound + 1, and the report's own."""
    if key.kind == "seconds":
        return ["1e300", f"{key.upper + 1:g}"]
    if key.kind != "int":
        return []
    values = [int(key.upper) + 1] + ([40, 64, 100, 1000] if key.name == "depth" else [])
    return [str(v) for v in sorted(set(v for v in values if v > key.upper))]


def over_budget() -> list:
    """(game, spec) for every game x searcher its record lists x key with a bound x a value past it."""
    cases = []
    for name in GAMES:
        for searcher in plugin(name).searchers:
            for key in SEARCHERS[searcher].keys:
                for value in _beyond(key):
                    spec = f"{searcher}:{key.name}={value}"
                    cases.append(pytest.param(name, spec, id=f"{name}-{spec}"))
    return cases


def at_bound() -> list:
    """(game, spec) at each bound, which is still taken (with the game's hand-made evaluator)."""
    cases = []
    for name in GAMES:
        record = plugin(name)
        hand = None
        for searcher in record.searchers:
            hand = record.defaults.get(searcher, {}).get("eval") or sorted(game_evaluators(make_game(name)))[0]
            for key in SEARCHERS[searcher].keys:
                if key.kind in ("int", "seconds"):
                    value = f"{key.upper:g}" if key.kind == "seconds" else str(int(key.upper))
                    spec = f"{searcher}:eval={hand},{key.name}={value}"
                    if key.name == "worlds":
                        spec += f",nodes={value}"  # worlds split the nodes
                    cases.append(pytest.param(name, spec, id=f"{name}-{searcher}-{key.name}"))
    return cases


@pytest.mark.parametrize("name, spec", over_budget())
def test_make_agent_refuses_a_budget_past_the_searchers_bound(name, spec):
    with pytest.raises(BudgetError, match=r"must be at most [\d,.]+( seconds a move)? in .*, got '[^']+': ") as info:
        make_agent(make_game(name), spec)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name, spec", at_bound())
def test_the_bound_itself_is_taken(name, spec):
    assert make_agent(make_game(name), spec) is not None


@pytest.mark.parametrize("name, spec", over_budget())
def test_tablegym_eval_refuses_it_in_one_line(name, spec, capsys):
    two_player = make_game(name).spec.num_players == 2
    assert_one_error_line(
        ["eval", name, spec, *(["random"] if two_player else []), "--games", "2", "--no-progress"], "must be at most", capsys
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "trilobite", "--agent", "alphabeta", "--depth", "64"],
        ["play", "sim", "--depth", "1000"],
        ["play", "trap", "--agent", "search", "--time", "1e300"],
        ["play", "threes", "--agent", "expectimax", "--depth", "40"],
        ["play", "friday", "--agent", "expectimax", "--depth", "40"],
        ["eval", "trilobite", "alphabeta:eval=advanced,depth=100", "random", "--workers", "2", "--games", "2"],
    ],
    ids=lambda argv: "-".join(argv[:2] + argv[3:5]),
)
def test_tablegym_play_and_a_pool_refuse_it_before_a_game(argv, capsys):
    assert_one_error_line(argv, "must be at most", capsys)


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
@pytest.mark.parametrize("budget", ["depth=1000", "depth=64", "time=1e300"])
def test_an_env_opponent_is_refused_when_the_env_is_made(env_id, budget):
    game = next(p for p in plugins() if env_id in p.gym)
    searcher = next(iter(game.searchers))
    with pytest.raises(BudgetError, match="must be at most"):
        gymnasium.make(env_id, opponent=f"{searcher}:{budget}")


# ---------------------------------------------------------------------------------- counts


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "trilobite", "random", "random", "--workers", "1"],
        ["eval", "trilobite", "random", "random", "--workers", "2"],
        ["eval", "trap", "random", "easy", "medium", "--n", "5"],
    ],
    ids=["match", "match-2-workers", "round-robin"],
)
def test_ten_to_the_fourteen_games_are_streamed_in_bounded_memory(argv, tmp_path):
    journal = tmp_path / "j.jsonl"
    argv = [*argv, "--games", HUGE, "--stop-after", "0.02", "--no-progress", "--journal", str(journal)]
    out = run_limited(
        f"""
        from tablegym.experiments.cli import main
        status = main({argv!r})
        assert status == 0, status
    """,
        timeout=600,
    )
    assert out.ok, out.message + out.trace
    assert out.grew_mb < 400, out  # the old list of 10**14 games died of MemoryError under the 3 GB limit
    assert len(journal.read_bytes().splitlines()) < 10_000  # the games played in 1.2 s, no more


@pytest.mark.parametrize("workers", [1, 2])
def test_a_single_player_run_draws_its_games_as_workers_free_up(workers):
    """An endless stream of tasks: 100 games, then a task that fails (``dict(None)``); the run
    plays the games and stops at the failure without ever listing the stream."""
    out = run_limited(
        f"""
        import itertools
        from tablegym.experiments.game_runs import run_tasks
        tasks = itertools.chain(({{"game": i}} for i in range(100)), itertools.repeat(None))
        done = {{}}
        try:
            run_tasks(dict, tasks, done, total={HUGE}, workers={workers}, progress=False)
        except TypeError:
            pass
        assert 90 <= len(done) <= 100, len(done)
    """,
        timeout=600,
    )
    assert out.ok, out.message + out.trace
    assert out.grew_mb < 400, out


@pytest.mark.parametrize(
    "module, argv, words",
    [
        (
            "tablegym.experiments.cli",
            ["eval", "trilobite", "random", "random", "--games", str(2**53 + 1)],
            "--games: must be at most 9,007,199,254,740,992",
        ),
        (
            "tablegym.experiments.cli",
            ["eval", "trilobite", "random", "random", "--games", "2", "--workers", "100000"],
            "--workers: must be at most 1,024",
        ),
        ("tablegym.experiments.threes.evaluate", ["random", "--games", str(2**53 + 1)], "--games: must be at most"),
        ("tablegym.experiments.friday.evaluate", ["random", "--workers", "5000"], "--workers: must be at most 1,024"),
    ],
    ids=["eval-games", "eval-workers", "threes-games", "friday-workers"],
)
def test_a_count_past_the_bound_is_an_argument_error_naming_it(module, argv, words):
    """In a child under a memory limit: a count that was taken used to list its games first."""
    out = run_limited(
        f"""
        import contextlib, io
        from {module} import main
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                status = main({argv!r})
            except SystemExit as exit_:
                status = exit_.code
        lines = [line for line in err.getvalue().splitlines() if "error:" in line]
        assert status == 2 and len(lines) == 1 and {words!r} in lines[0], (status, err.getvalue()[-500:])
    """,
        timeout=600,
    )
    assert out.ok, out.message + out.trace


def test_play_match_refuses_more_games_than_it_counts():
    out = run_limited(
        """
        from tablegym.experiments.match import play_match
        try:
            play_match("trilobite", "random", "random", games=2**53 + 1, progress=False)
        except ValueError as err:
            assert "games must be at most 9,007,199,254,740,992" in str(err), err
        else:
            raise AssertionError("played")
    """,
        timeout=600,
    )
    assert out.ok, out.message + out.trace
