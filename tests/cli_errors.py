"""What every test of a refused command line checks: exit status 2, exactly one line saying
``error:`` that contains the expected words, and no traceback."""

from __future__ import annotations

from tablegym.experiments.cli import main as cli


def assert_one_error_line(argv: list[str], words: str, capsys) -> None:
    """``tablegym ARGV`` is refused with one error line containing ``words`` (argparse's usage
    errors included: they exit rather than return)."""
    try:
        status = cli(argv)
    except SystemExit as exit_:
        status = exit_.code
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert status == 2 and len(errors) == 1 and words in errors[0] and "Traceback" not in err, err
