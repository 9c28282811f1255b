"""The documentation's code is true: every ```python block of docs/*.md runs as written (each in a
fresh module of its own, in a temporary folder), every ``tablegym ...`` command of a ```bash block
of the docs and the README parses (the flags of its subcommand or trainer, and the agent specs it
names), every ``make`` target named exists, a ```toml block marked ``<!-- file: PATH -->`` is
that file's content, and the tables that list the registry's ids, fields, searchers and
evaluators list all of them. The front page (README.md) is held to a length and its links to
files that exist."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import sys
import tomllib
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
README = ROOT / "README.md"
OPTIONAL = {"pyspiel": "openspiel", "ray": "distributed", "stable_baselines3": "rl", "sb3_contrib": "rl"}
"""Modules of optional extras: a block that imports one is skipped where it is not installed."""


def _blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", page.read_text(), flags=re.S)


PYTHON_BLOCKS = [(page, i, code) for page in PAGES for i, code in enumerate(_blocks(page, "python"))]


def test_the_docs_have_code():
    assert {p.name for p, _, _ in PYTHON_BLOCKS} >= {
        "environments.md",
        "search.md",
        "models.md",
        "training.md",
        "cli.md",
        "adding-a-game.md",
        "security.md",
        "measurement.md",
    }


@pytest.mark.parametrize("page, index, code", PYTHON_BLOCKS, ids=[f"{p.name}:{i}" for p, i, _ in PYTHON_BLOCKS])
def test_python_block_runs(page, index, code, tmp_path, monkeypatch):
    imported = set(re.findall(r"^\s*(?:from|import)\s+(\w+)", code, flags=re.M))
    for module in sorted(imported & OPTIONAL.keys()):
        pytest.importorskip(module, reason=f"needs the {OPTIONAL[module]} extra")
    from tablegym.envs import plugins, unregister

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    name = f"tablegym_docs_{page.stem.replace('-', '_')}_{index}"  # a block may name itself in import strings
    module = types.ModuleType(name)
    module.__file__ = str(page)
    games = {p.name for p in plugins()}
    sys.modules[name] = module
    try:
        exec(compile(code, f"{page.name} (python block {index})", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
        for record in plugins():  # a block that failed before its unregister leaves nothing behind
            if record.name not in games:
                unregister(record.name)


def _commands(page: Path) -> list[str]:
    """The ``tablegym`` and ``make`` command lines of the page's bash blocks, continuations joined."""
    lines = []
    for block in _blocks(page, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line.startswith(("tablegym ", "make ")):
                lines.append(line)
    return lines


COMMANDS = [(page, line) for page in [*PAGES, ROOT / "README.md"] for line in _commands(page)]


class _Parsed(BaseException):
    """Raised by the patched ``parse_args`` once a command's flags parsed: nothing runs."""

    def __init__(self, namespace: argparse.Namespace) -> None:
        self.namespace = namespace


def _parse_only(monkeypatch) -> None:
    real = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):
        raise _Parsed(real(self, args, namespace))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_args)


def _specs(args: argparse.Namespace) -> list[str]:
    """The agent specs a parsed ``eval`` or ``play`` names."""
    from tablegym.envs import plugin
    from tablegym.experiments.commands.shared import compose_spec

    if args.command == "eval":
        return list(args.specs)
    if args.command == "play":
        agent = args.agent
        if agent is None and (args.eval, args.depth, args.time) != (None, None, None):
            agent = plugin(args.game).searcher
        return [] if agent is None else [compose_spec(agent, eval=args.eval, depth=args.depth, time=args.time)]
    return []


def _check_command(line: str, where: str) -> None:
    """Parse ``line`` as the shell would and the command line then does, running nothing; a
    ``make`` line must name targets of the Makefile. AssertionError (or the ValueError of a bad
    agent spec) says what is wrong."""
    argv = shlex.split(line, comments=True)
    if argv[0] == "make":
        targets = set(re.findall(r"^([\w.-]+):", (ROOT / "Makefile").read_text(), flags=re.M))
        assert set(argv[1:]) <= targets, f"{where}: {line!r} names a target the Makefile does not have"
        return
    from tablegym.experiments.cli import main
    from tablegym.experiments.commands.shared import game_from_args
    from tablegym.models.agents import plan_agent

    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv[1:])
        except _Parsed as parsed:
            args = parsed.namespace
        except SystemExit as err:  # --help, or argparse's error
            assert err.code == 0, f"{where}: {line!r}: {errors.getvalue()}"
            return
        else:
            assert status == 0, f"{where}: {line!r}: {errors.getvalue()}"
            return
    if getattr(args, "command", None) in ("eval", "play"):
        game, _ = game_from_args(args.parser, args)
        for spec in _specs(args):
            plan_agent(game, spec)  # reads the spec (names, keys, ranges); builds nothing, reads no file


@pytest.mark.parametrize("page, line", COMMANDS, ids=[f"{p.name}:{line[:60]}" for p, line in COMMANDS])
def test_shell_command_parses(page, line, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _parse_only(monkeypatch)
    _check_command(line, page.name)


def test_the_parse_check_catches_a_bad_flag_and_a_bad_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _parse_only(monkeypatch)
    with pytest.raises(AssertionError, match="gamez"):
        _check_command("tablegym eval trilobite random random --gamez 2", "here")
    with pytest.raises(AssertionError, match="minutez"):
        _check_command("tablegym train trilobite --algo ppo --minutez 2", "here")
    with pytest.raises(AssertionError, match="algo"):
        _check_command("tablegym train trilobite --algo ppx", "here")
    with pytest.raises(ValueError, match="depth"):
        _check_command("tablegym eval trilobite random alphabeta:depth=99", "here")
    with pytest.raises(AssertionError, match="target"):
        _check_command("make nodocs", "here")


def test_toml_blocks_are_the_files_they_name():
    marked = [
        (page, path, toml)
        for page in PAGES
        for path, toml in re.findall(r"<!-- file: (\S+) -->\n```toml\n(.*?)```", page.read_text(), flags=re.S)
    ]
    assert marked
    for page, path, toml in marked:
        assert tomllib.loads(toml) == tomllib.loads((ROOT / path).read_text()), f"{page.name} shows {path} out of date"


def test_the_tables_list_the_whole_registry():
    import dataclasses

    from tablegym.envs import GamePlugin, known_games, make_game, plugins
    from tablegym.models.agents import game_evaluators
    from tablegym.search.searchers import SEARCHERS

    environments = (DOCS / "environments.md").read_text()
    assert [i for p in plugins() for i in p.gym if f"`{i}`" not in environments] == []
    fields = (DOCS / "adding-a-game.md").read_text()
    assert [f.name for f in dataclasses.fields(GamePlugin) if f"`{f.name}`" not in fields] == []
    search = (DOCS / "search.md").read_text()
    assert [s for s in SEARCHERS if f"`{s}`" not in search] == []
    assert [(g, e) for g in known_games() for e in game_evaluators(make_game(g)) if f"`{e}`" not in search] == []


def test_the_front_page_is_short_and_links_to_what_exists():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    first = re.search(r"```bash\n(.*?)```", text, flags=re.S).group(1)
    assert [line.split("#")[0].strip() for line in first.strip().splitlines()] == ["make demo", "make test"]
    assert "SearchResult(action=" in text
    links = [t.partition("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:|#", t)]
    assert links and [t for t in links if not (ROOT / t).exists()] == []  # paths from the repository root
