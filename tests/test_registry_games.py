"""Tests run over the registry: every registered game, and the plugin game
of tests/tictactoe registered through its one record, meets the same checks.

- the rules-core contract (``check_game``) for every game with a ``Game``;
- gymnasium's ``check_env`` and seeded determinism for every registered Gymnasium id;
- a smoke test of the command line for every game: ``play`` (a scripted person; watching an
  agent for single-player games), ``eval`` (a cheap pair of specs; one spec for single-player
  games), ``bench`` (with small sizes), ``solve`` where it applies, and ``train GAME --help``.

Parameters come from the records (``tablegym.envs.plugins()``), so a game added to the
registry is tested here without editing this file. The small per-game tables below only make
runs cheaper (benchmark sizes, spec pairs) or say which games the exact solver is meant for.
"""

from __future__ import annotations

import builtins
import inspect
import pickle
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tablegym.envs import GamePlugin, load, plugins, register, unregister
from tablegym.envs.conformance import check_game
from tablegym.experiments.cli import main
from tests.tictactoe import RECORD as TICTACTOE

ROOT = Path(__file__).resolve().parents[1]

RECORDS: list[GamePlugin] = [*plugins(), TICTACTOE]
"""Every game of the registry at collection time, and the plugin game of tests/tictactoe."""


@contextmanager
def active(record: GamePlugin) -> Iterator[GamePlugin]:
    """``record`` in the registry for the duration (registered here if it is not already)."""
    if any(p.name == record.name for p in plugins()):
        yield record
        return
    register(record)
    try:
        yield record
    finally:
        unregister(record.name)


def games(where=lambda r: True) -> list:
    return [pytest.param(r, id=r.name) for r in RECORDS if where(r)]


def gym_ids() -> list:
    return [pytest.param(r, env_id, id=env_id) for r in RECORDS for env_id in r.gym]


def two_player(record: GamePlugin) -> bool:
    return bool(record.aec)


# ------------------------------------------------------------------------------ rules cores


@pytest.mark.parametrize("record", games(lambda r: r.game is not None))
def test_check_game(record):
    """Every game's rules core passes the contract checker (envs/conformance.py)."""
    with active(record):
        game = load(record.game)()
        report = check_game(game, games=5, seed=0)
    assert report.games == 5 and report.states > 5
    assert report.max_length <= game.spec.max_game_length
    assert sum(report.outcomes.values()) == 5


# ------------------------------------------------------------------------------ Gymnasium envs


def _env_kwargs(record: GamePlugin, env_id: str) -> dict:
    """check_env and the traces below step some actions blind to the mask (check_env samples
    the whole action space); an env that offers the mode made for mask-blind learners,
    ``illegal_action="penalty"``, runs in it (the raise mode is each env's own tests' concern)."""
    entry_point = load(record.gym[env_id][0])
    return {"illegal_action": "penalty"} if "illegal_action" in inspect.signature(entry_point).parameters else {}


@pytest.mark.filterwarnings("error")  # a checker warning is a failure
@pytest.mark.parametrize("record, env_id", gym_ids())
def test_gymnasium_check_env(record, env_id):
    with active(record):
        env = gymnasium.make(env_id, **_env_kwargs(record, env_id))
        check_env(env.unwrapped)


def _trace(env_id: str, kwargs: dict, seed: int, steps: int) -> list[tuple]:
    """Seeded random legal play over episodes: each step's (obs, reward, terminated, truncated,
    mask) as bytes and floats."""
    env = gymnasium.make(env_id, **kwargs)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    space = env.observation_space  # flatten: a Dict observation (StarshipTargets) as one array too
    trace = [(gymnasium.spaces.flatten(space, obs).tobytes(), info["action_mask"].tobytes())]
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append(
            (gymnasium.spaces.flatten(space, obs).tobytes(), float(reward), terminated, truncated, info["action_mask"].tobytes())
        )
        if terminated or truncated:
            obs, info = env.reset()
            trace.append((gymnasium.spaces.flatten(space, obs).tobytes(), info["action_mask"].tobytes()))
    env.close()
    return trace


@pytest.mark.parametrize("record, env_id", gym_ids())
def test_seeded_envs_repeat_exactly(record, env_id):
    """Two envs reset with the same seed and stepped with the same seeded random legal actions
    give identical observations, rewards, ends and masks (chance and opponents included)."""
    with active(record):
        kwargs = _env_kwargs(record, env_id)
        first = _trace(env_id, kwargs, seed=7, steps=60)
        again = _trace(env_id, kwargs, seed=7, steps=60)
    assert len(first) >= 61
    assert first == again


# ------------------------------------------------------------------------------ command line


@contextmanager
def scripted_person(monkeypatch, seed: int = 0, quit_after: int = 2000) -> Iterator[None]:
    """``tablegym play``'s person types a random legal move, by its name, at every prompt
    (``q`` after ``quit_after`` moves): the CLI's own parsing and game loop play a whole game."""
    from tablegym.experiments import human

    seen = {}
    original = human.HumanAgent.__call__

    def watched(self, state, rng):
        seen["state"] = state
        return original(self, state, rng)

    rng = np.random.default_rng(seed)
    typed = [0]

    def fake_input(prompt: str = "") -> str:
        typed[0] += 1
        if typed[0] > quit_after:
            return "q"
        state = seen["state"]
        legal = state.legal_actions()
        return state.action_to_string(legal[int(rng.integers(len(legal)))])

    monkeypatch.setattr(human.HumanAgent, "__call__", watched)
    monkeypatch.setattr(builtins, "input", fake_input)
    yield


@pytest.mark.parametrize("record", games(lambda r: r.game is not None))
def test_cli_play(record, monkeypatch, capsys):
    with active(record):
        if two_player(record):
            for seat in ("0", "1"):
                with scripted_person(monkeypatch, seed=int(seat)):
                    assert main(["play", record.name, "--seat", seat, "--seed", "1"]) == 0
                out = capsys.readouterr().out
                assert f"you are player {seat}" in out and "legal moves:" in out
                assert out.strip().splitlines()[-1] in ("you win", "you lose", "draw")
        else:
            with scripted_person(monkeypatch):
                assert main(["play", record.name, "--seed", "1"]) == 0
            out = capsys.readouterr().out
            assert ": you play" in out and "legal moves" in out
            assert out.strip().splitlines()[-1].startswith("final score ")
            assert main(["play", record.name, "--agent", "random", "--seed", "1", "--quiet"]) == 0
            out = capsys.readouterr().out
            assert "watching 'random'" in out and out.strip().splitlines()[-1].startswith("final score ")


EVAL_SPECS = {"threes": ("random", "greedy"), "friday": ("random", "rules"), "tictactoe": ("perfect", "random")}
"""A cheap pair of agent specs per game; ``random random`` for any other."""


def _table_rows(out: str) -> list[str]:
    lines = out.strip().splitlines()
    assert any(line.startswith("|---") for line in lines), out
    return [line for line in lines if line.startswith("| ") and not line.startswith("|---")]


@pytest.mark.parametrize("record", games(lambda r: r.game is not None))
def test_cli_eval_a_pair(record, capsys):
    a, b = EVAL_SPECS.get(record.name, ("random", "random"))
    with active(record):
        assert main(["eval", record.name, a, b, "--games", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    rows = _table_rows(out)
    assert len(rows) >= 2  # a header and at least one result row
    assert b in out and "Traceback" not in out


@pytest.mark.parametrize("record", games(lambda r: r.game is not None and r.single_player))
def test_cli_eval_one_spec_of_a_single_player_game(record, capsys):
    spec = EVAL_SPECS.get(record.name, ("random",))[0]
    with active(record):
        assert main(["eval", record.name, spec, "--games", "2", "--no-progress"]) == 0
    rows = _table_rows(capsys.readouterr().out)
    assert len(rows) == 2 and rows[1].startswith(f"| {spec} |")


BENCH_ARGS = {
    "search": ["--param", "depth=3", "--repeats", "1"],
    "sim-solve": ["--n", "4", "--repeats", "1"],
    "trap": ["--param", "budgets=0.05", "--param", "baseline_depth=1"],
    "threes": ["--param", "positions=2"],
    "friday": ["--param", "positions=1"],
    "starship": ["--param", "seeds=5"],
    "tictactoe": ["--repeats", "1"],
}
"""Small sizes for each benchmark (a few seconds each, most of it loading compiled code)."""


@pytest.mark.parametrize("record", games(lambda r: r.bench is not None))
def test_cli_bench(record, capsys):
    name = record.bench_name or record.name
    with active(record):
        assert main(["bench", name, *BENCH_ARGS.get(name, [])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| ") and "|---|" in out


SOLVE = {
    "trilobite-tiny": ([], None),
    "sim": (["--n", "5"], "draw"),
    "tictactoe": ([], "draw"),
}
"""Games the exact solver is meant for (argv, known verdict). No record says so (see the report)."""


@pytest.mark.parametrize("record", games(lambda r: r.name in SOLVE))
def test_cli_solve(record, capsys):
    argv, verdict = SOLVE[record.name]
    with active(record):
        assert main(["solve", record.name, *argv]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    said = first.split(": ")[1].split(" (")[0]
    assert said in ("first player wins", "second player wins", "draw")
    assert verdict is None or said == verdict


def _solver_unfit(record: GamePlugin) -> bool:
    """A single-player game or one with chance nodes (read from its ``GameSpec``)."""
    if record.game is None:
        return False
    try:
        spec = load(record.game)().spec
    except Exception:  # noqa: BLE001 -- a game that does not build fails in test_check_game
        return False
    return spec.num_players != 2 or spec.chance


SMALL = {"trap": ["--n", "3"]}
"""Game flags that keep a run small should the command not refuse the game."""


def run_isolated(record: GamePlugin, argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    """``tablegym ARGV`` in a child process with ``record`` registered: for commands that may
    crash the interpreter (a compiled kernel writing past its buffer) or never end."""
    code = (
        "import pickle, sys; from tablegym.envs import plugins, register; "
        "r = pickle.loads(bytes.fromhex(sys.argv[1])); "
        "r.name in [p.name for p in plugins()] or register(r); "
        "from tablegym.experiments.cli import main; sys.exit(main(sys.argv[2:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, pickle.dumps(record).hex(), *argv], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize("record", games(_solver_unfit))
def test_cli_solve_refuses_games_with_chance_or_one_player(record):
    """The exact solver is for two-player games without chance: on any other it should say so
    in one line (exit status 2), not crash or print a verdict it did not compute. (Run in a
    child process: today ``solve threes`` corrupts the heap and aborts a later import.)"""
    proc = run_isolated(record, ["solve", record.name, *SMALL.get(record.name, [])])
    assert "Traceback" not in proc.stderr, proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 2, f"exit status {proc.returncode}; stdout starts {proc.stdout[:120]!r}"
    assert "error:" in proc.stderr.strip().splitlines()[-1] and proc.stdout == ""


@pytest.mark.parametrize("record", games())
def test_cli_train_help(record, capsys):
    """``tablegym train GAME --help`` lists the game's training arguments under its own name;
    a game without a trainer is a one-line error."""
    with active(record):
        if record.trainer is None:
            assert main(["train", record.name, "--help"]) == 2
            err = capsys.readouterr().err
            assert f"game {record.name!r} has no trainer" in err and "Traceback" not in err
            return
        with pytest.raises(SystemExit) as exit_info:
            main(["train", record.name, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: tablegym train {record.name} ")
    assert "--seed" in out and "--minutes" in out
