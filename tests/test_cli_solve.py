"""``tablegym solve`` on a game too big for memory: the table bound, the
up-front refusal, the progress lines. Never a timed assertion: progress reads a fake clock."""

from __future__ import annotations

import pytest

from tablegym.experiments.cli import main
from tablegym.search.solver import limits


def _one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tablegym: error: "), err
    assert "Traceback" not in err and "\x1b" not in err
    return lines[0]


def test_solve_trilobite_is_refused_at_once_without_a_limit(capsys):
    """8x7: an estimated 10^35 positions against a table of at most a few 10^8."""
    assert main(["solve", "trilobite"]) == 2
    out, err = capsys.readouterr()
    line = _one_error_line(err)
    assert out == ""
    assert "TrilobiteGame(width=8, height=7, win_length=4, first_player=0) is out of reach" in line
    assert "--max-memory MB or --max-entries N" in line


def test_solve_trilobite_stops_at_max_entries(capsys):
    assert main(["solve", "trilobite", "--max-entries", "1000", "--no-progress"]) == 2
    out, err = capsys.readouterr()
    line = _one_error_line(err)
    assert out == ""
    assert "stopped at the table limit, --max-entries 1,000: 1,000 positions stored" in line
    assert line.endswith("give a larger --max-entries N to go on")


def test_solve_trilobite_stops_at_max_memory(capsys):
    """1 MB: a table of 65,536 slots (589,824 bytes) holds 49,152 positions and may not double."""
    assert main(["solve", "trilobite", "--max-memory", "1", "--no-progress"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "--max-memory 1 MB: 49,152 positions stored" in line and "give a larger --max-memory MB" in line


@pytest.mark.parametrize("bad", ["0", "-5", "lots"])
def test_bad_limits_are_argument_errors(bad, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["solve", "trilobite-tiny", "--max-entries", bad])
    assert exit_.value.code == 2 and "--max-entries" in capsys.readouterr().err


def test_a_limit_big_enough_solves(capsys):
    assert main(["solve", "trilobite-tiny", "--max-entries", "317"]) == 0  # exactly what it stores
    assert "positions stored: 317" in capsys.readouterr().out


def test_progress_lines_go_to_stderr_by_the_solvers_clock(capsys):
    """A fake clock one second per reading and a pause each 100 nodes: reports every 2 s."""
    ticks = iter(range(100_000))
    with limits(clock=lambda: float(next(ticks)), check_nodes=100):
        assert main(["solve", "trilobite", "--width", "4", "--height", "4", "--win-length", "3"]) == 0
    out, err = capsys.readouterr()
    assert "first player wins" in out and "positions stored: 829" in out
    lines = err.splitlines()
    assert lines and all(line.startswith("  solving TrilobiteGame(width=4, height=4, win_length=3") for line in lines)
    assert "positions stored" in lines[0] and "nodes/s" in lines[0] and lines[0].endswith(", 2 s")


def test_no_progress_silences_them(capsys):
    ticks = iter(range(100_000))
    with limits(clock=lambda: float(next(ticks)), check_nodes=100):
        assert main(["solve", "trilobite", "--width", "4", "--height", "4", "--win-length", "3", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_sim_still_solves_within_the_default_bound(capsys):
    assert main(["solve", "sim", "--n", "6"]) == 0
    out, err = capsys.readouterr()
    assert "second player wins" in out and "positions stored: 988" in out and err == ""
