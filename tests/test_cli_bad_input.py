"""Bad input on the command line: one line naming the problem and what is accepted, exit status
2, before any game is played, never a traceback (each row a case a new user met)."""

from __future__ import annotations

import pytest

from tablegym.experiments.cli import main

BAD = [
    (["eval", "trilobite", "random", "random", "--seed", "-1"], "--seed: must be >= 0"),
    (["play", "trilobite", "--seed", "-1"], "--seed: must be >= 0"),
    (["starship", "--seed", "-1"], "--seed: must be >= 0"),
    (["eval", "trilobite", "alphabeta:eval=advanced,depth=0", "random"], "depth must be a positive integer"),
    (["eval", "trilobite", "alphabeta:eval=advanced,depth=-3", "random"], "depth must be a positive integer"),
    (["eval", "trilobite", "alphabeta:eval=advanced,time=-1", "random"], "time must be a positive"),
    (["eval", "trilobite", "alphabeta:eval=advanced,time=inf", "random"], "time must be a positive"),
    (["eval", "trilobite", "alphabeta:eval=advanced,eval=learned,depth=1", "random"], "'eval' given twice"),
    (["eval", "trap", "search:eval=composite,depth=1,cands=-1", "random"], "cands must be an integer >= 0"),  # 0: no cap
    (["eval", "threes", "expectimax:depth=0"], "depth must be a positive integer"),
    (["eval", "trilobite", "random", "random", "--csv", "/nonexistent/x.csv"], "--csv '/nonexistent/x.csv' cannot be written"),
    (["train"], "train: name a game"),
    (["eval", "trilobite", "random", "--gmaes", "3"], "unrecognized arguments: --gmaes 3"),
    (
        ["eval", "trilobite", "random", "random", "--journal", "/nonexistent/j.jsonl"],
        "--journal '/nonexistent/j.jsonl' cannot be written",
    ),
    (["starship", "--audit", "--out", "/nonexistent/x.png"], "--out '/nonexistent/x.png' cannot be written"),
    # every trainer refuses a value it cannot train with before it starts (not torch's traceback later)
    (["train", "trilobite", "--lr", "-1"], "--lr must be >= 0, got -1.0"),
    (["train", "trap", "--games-per-iter", "0"], "--games-per-iter must be >= 1, got 0"),
    (["train", "trilobite", "--epsilon", "2"], "--epsilon must lie in [0, 1], got 2.0"),
    (["train", "sim", "--minutes", "-1"], "--minutes must be >= 0"),
    (["train", "trilobite", "--hidden", "0"], "--hidden needs one or more widths >= 1, got 0"),
    (["train", "friday", "--planner", "nosuch"], "unknown planner 'nosuch'"),
    (["train", "friday", "--lr", "-1"], "--lr must be >= 0"),
    (["train", "friday", "--planner", "mc", "--horizon", "0"], "the mc planner needs --horizon >= 1"),
    (["train", "trilobite-tiny", "--algo", "ppo", "--lr", "-1"], "--lr must be >= 0"),
    (["train", "trilobite-tiny", "--algo", "ppo", "--clip", "0"], "--clip must be > 0"),
    (["train", "trilobite-tiny", "--algo", "ppo", "--hidden", "0"], "--hidden needs one or more widths >= 1"),
    (["train", "trilobite-tiny", "--algo", "dqn", "--hidden", "0"], "--hidden needs one or more widths >= 1"),
    (["train", "trilobite", "--option", "width=0"], "Trilobite width must be an integer in 1..16, got 0"),
    (["train", "sim", "--algo", "ppo", "--option", "nosuch=1"], "unknown option 'nosuch' for game 'sim'"),
    (["train", "threes", "--tuples", "0,1,99"], "tuple (0, 1, 99) must list distinct cells 0..15"),
]


def status_of(argv: list[str]) -> int:
    """main's exit status, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as exit_info:
        return int(exit_info.code)


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    assert status_of([*argv, "--no-progress"] if argv[0] == "eval" else argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert "| A |" not in out and "games (distinct)" not in out  # refused before any game was played


@pytest.mark.parametrize("progress", [["--no-progress"], []], ids=["quiet", "with-progress-bar"])
def test_a_ray_cluster_that_is_not_there_is_one_line_and_exit_2(capsys, monkeypatch, progress):
    """Refused before the progress bar starts: with the bar on, stderr is still the one line."""
    pytest.importorskip("ray")
    from tablegym.training import parallel

    def no_cluster(workers, address=None):
        raise parallel.BackendError(f"cannot start or join the Ray cluster at {address!r}: none running")

    monkeypatch.setattr(parallel, "connect", no_cluster)
    status = main(["eval", "trilobite", "random", "random", "--games", "2", "--backend", "ray", "--address", "auto", *progress])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Ray cluster at 'auto'" in err
    assert "random vs random" not in err  # no progress bar began
    assert "random vs random" not in err  # no progress bar began


def test_a_run_folder_that_cannot_be_made_is_refused_before_training(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert status_of(["train", "trilobite", "--run-dir", str(blocker / "run")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--run-dir" in err and "cannot be made" in err, err


def test_python_dash_m_reports_a_subcommands_error_in_one_line(tmp_path):
    """``python -m tablegym.experiments.cli``: the error a subcommand's own module raises is the
    one the command line catches (not a second copy of the class in ``__main__``)."""
    import subprocess
    import sys

    junk = tmp_path / "junk.pt"
    junk.write_text("not a checkpoint")
    run = subprocess.run(
        [sys.executable, "-m", "tablegym.experiments.cli", "starship", "--generator", "learned", "--checkpoint", str(junk)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr


def test_a_reader_that_stops_early_ends_the_command_quietly():
    """``tablegym starship | head -1``: the pipe closes under the printing, and the command stops
    without a traceback (exit 141, as a shell reports SIGPIPE)."""
    import subprocess
    import sys

    code = "import sys; from tablegym.experiments.cli import main; sys.exit(main(['starship', '--seed', '0', '--audit']))"
    run = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run.stdout.readline().strip()  # the first line of the ship's drawing
    run.stdout.close()
    err = run.stderr.read()
    assert run.wait(timeout=120) == 141 and "Traceback" not in err, err


SCRIPTS = [
    "tablegym.experiments.friday.evaluate",
    "tablegym.experiments.sb3_baseline",
    "tablegym.experiments.sim.agreement",
    "tablegym.experiments.sim.regress",
    "tablegym.experiments.starship.audit",
    "tablegym.experiments.starship.bench",
    "tablegym.training.starship.imitate",
    "tablegym.experiments.starship.rl",
    "tablegym.experiments.starship.targets_eval",
    "tablegym.experiments.starship.two_sample",
    "tablegym.experiments.starship.search_tuning",
    "tablegym.training.starship.value",
    "tablegym.experiments.threes.evaluate",
    "tablegym.experiments.demo",
    "tablegym.experiments.rl_same_budget",
]
REQUIRED = {
    "tablegym.experiments.starship.audit": ["--check"],
    "tablegym.experiments.sb3_baseline": ["threes"],
    "tablegym.experiments.starship.targets_eval": ["--checkpoint", "g.pt"],
    "tablegym.experiments.rl_same_budget": ["trap"],
    "tablegym.experiments.starship.search_tuning": ["--checkpoint", "g.pt"],
    "tablegym.training.starship.value": ["--policy", "p.pt"],
}
"""What a script needs before an unknown flag is the first thing wrong."""


@pytest.mark.parametrize("module", SCRIPTS)
def test_a_python_dash_m_script_refuses_a_bad_flag_in_one_line(capsys, module):
    """The ``python -m`` scripts answer a flag they do not know as ``tablegym`` does: one line
    naming it (and where the help is), exit 2, no usage block above it."""
    import importlib

    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main(REQUIRED.get(module, []) + ["--no-such-flag"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.splitlines() == [
        f"python -m {module}: error: unrecognized arguments: --no-such-flag (see python -m {module} --help)"
    ], err
