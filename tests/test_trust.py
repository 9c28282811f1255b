"""Trust in a model file that carries code is a decision per call: it never leaks from one call
to the next, an explicit no beats a yes from further out, and a worker takes its caller's
decision with the task, never from its own environment.

Each hostile zip would create a marker file if its code ran (tests/test_safe_loading.py's
payloads); every test checks the marker does not exist.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from tablegym.envs import make_game
from tablegym.envs.limits import current as current_limits
from tablegym.envs.limits import raised_limits
from tablegym.models.trust import TRUST_ENV, Trust, TrustedCodeWarning, caller, trust_decision, trust_model_code, trusting
from tests import test_safe_loading
from tests.test_safe_loading import _hostile_zips, refused, sb3_zip_files

marker = test_safe_loading.marker  # the same fixture: a file a hostile zip's code would write


@pytest.fixture(scope="module")
def sb3_zips(tmp_path_factory) -> dict[str, Path]:
    """The two zips these tests need (test_safe_loading builds all six kinds)."""
    return sb3_zip_files(tmp_path_factory.mktemp("sb3"), ("maskableppo", "dqn"))


def _hostile(sb3_zips, tmp_path, marker) -> str:
    return str(_hostile_zips(sb3_zips["maskableppo"], tmp_path, marker)["lr_schedule"])


# -- the decision ------------------------------------------------------------------------------------


def test_unset_everywhere_is_no(monkeypatch):
    monkeypatch.delenv(TRUST_ENV, raising=False)
    assert trust_decision() == Trust(False, "the default")


@pytest.mark.parametrize("value, trusted", [("1", True), ("0", False)])
def test_the_environment_variable_decides_only_where_nothing_nearer_does(monkeypatch, value, trusted):
    monkeypatch.setenv(TRUST_ENV, value)
    assert trust_decision() == Trust(trusted, f"{TRUST_ENV}={value} in the environment")
    with trusting(not trusted):
        assert trust_model_code() is (not trusted)
    assert trust_model_code(not trusted) is (not trusted)


def test_an_explicit_no_beats_every_yes_further_out(monkeypatch):
    monkeypatch.setenv(TRUST_ENV, "1")
    with trusting(True):
        assert trust_model_code(False) is False
        with trusting(False):
            assert trust_model_code() is False
            assert trust_model_code(True) is True  # the nearest says yes: yes


def test_a_value_of_the_variable_other_than_0_or_1_is_one_clear_line(monkeypatch):
    monkeypatch.setenv(TRUST_ENV, "yes")
    with pytest.raises(ValueError, match=rf"^{TRUST_ENV}='yes' in the environment: accepted are 1 \(trust\) and 0"):
        trust_decision()


# -- every route that loads a zip ----------------------------------------------------------------------


def test_the_variable_does_not_beat_make_agent_trust_code_false(sb3_zips, tmp_path, marker, monkeypatch):
    from tablegym.models.agents import make_agent

    monkeypatch.setenv(TRUST_ENV, "1")
    game = make_game("trilobite")
    spec = f"alphabeta:eval=learned:{_hostile(sb3_zips, tmp_path, marker)},depth=1"
    refused(lambda: make_agent(game, spec, trust_code=False))
    with trusting(False):
        refused(lambda: make_agent(game, spec))


def test_the_warning_names_where_trust_came_from(sb3_zips, monkeypatch):
    from tablegym.models.agents import make_agent

    game = make_game("trilobite")
    spec = f"alphabeta:eval=learned:{sb3_zips['dqn']},depth=1"
    monkeypatch.setenv(TRUST_ENV, "1")
    with pytest.warns(TrustedCodeWarning, match=rf"trusted by {TRUST_ENV}=1 in the environment\)"):
        make_agent(game, spec)
    monkeypatch.delenv(TRUST_ENV)
    with pytest.warns(TrustedCodeWarning, match=r"trusted by trust_code=True\)"):
        make_agent(game, spec, trust_code=True)


def test_the_command_lines_trust_does_not_outlive_its_command(sb3_zips, tmp_path, marker, monkeypatch, capsys):
    """``main([... --trust-model-code])`` on one's own zip, then ``main([...])`` on someone else's,
    in one process: the second is refused and nothing was written to the environment."""
    from tablegym.experiments.cli import main

    monkeypatch.delenv(TRUST_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    own = ["eval", "trilobite", f"alphabeta:eval=learned:{sb3_zips['dqn']},depth=1", "random", "--games", "2", "--no-progress"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrustedCodeWarning)
        assert main([*own, "--trust-model-code"]) == 0
    assert TRUST_ENV not in os.environ
    assert trust_decision() == Trust(False, "the default")
    capsys.readouterr()
    hostile = [
        "eval",
        "trilobite",
        f"alphabeta:eval=learned:{_hostile(sb3_zips, tmp_path, marker)},depth=1",
        "random",
        "--games",
        "2",
        "--no-progress",
    ]
    assert main(hostile) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "carries code (posix.system), refused" in err, err


def test_the_command_lines_budget_does_not_outlive_its_command(tmp_path, monkeypatch):
    from tablegym.experiments.cli import main

    monkeypatch.chdir(tmp_path)
    before = current_limits()
    assert main(["eval", "trilobite", "random", "random", "--games", "2", "--no-progress", "--max-model-mb", "4096"]) == 0
    assert current_limits() == before


# -- workers take the caller's decision with the task -------------------------------------------------


def _decision_here(_: object) -> tuple[bool, str, int]:
    """What a worker decides, and its model budget (module level: pickled by name)."""
    decision = trust_decision()
    return decision.trusted, decision.source, current_limits().model_bytes


@pytest.mark.parametrize("caller_trusts", [False, True])
def test_a_process_pools_workers_decide_as_the_caller_did(monkeypatch, caller_trusts):
    from tablegym.training.parallel import ProcessPool, executor

    monkeypatch.setenv(TRUST_ENV, "0" if caller_trusts else "1")  # what a worker's own environment would say
    with trusting(caller_trusts, "the test"), raised_limits(model_bytes=12345):
        expected = (caller_trusts, "the test", 12345)
        with ProcessPool(2) as pool:
            assert set(pool.imap_unordered(_decision_here, range(4))) == {expected}
        runner = executor("process", 2)
        try:
            assert set(runner.map(_decision_here, range(4))) == {expected}
            assert set(runner.map_shared(lambda_free_shared, 0, [1, 2])) == {expected}
        finally:
            runner.shutdown()


def lambda_free_shared(shared: object, item: object) -> tuple[bool, str, int]:
    return _decision_here(item)


def test_the_callers_settings_pickle_for_a_worker():
    import pickle

    with trusting(True, "x"):
        settings = caller()
    assert pickle.loads(pickle.dumps(settings)) == settings


def test_a_hostile_zip_is_refused_in_workers_too(sb3_zips, tmp_path, marker, monkeypatch, capsys):
    """Two worker processes build the agents: the refusal is still one line, exit 2."""
    from tablegym.experiments.cli import main

    monkeypatch.chdir(tmp_path)
    hostile = _hostile(sb3_zips, tmp_path, marker)
    status = main(
        [
            "eval",
            "trilobite",
            f"alphabeta:eval=learned:{hostile},depth=1",
            "random",
            "--games",
            "2",
            "--workers",
            "2",
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "carries code (posix.system), refused" in err, err
