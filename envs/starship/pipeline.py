"""The staged generator: the 14 stages run in order on one ship, configured from keywords or a file.

    >>> from tablegym.envs.starship.pipeline import Pipeline
    >>> ship = Pipeline(thrusters={"min_points": 20}, fill_armor=False).generate(seed=7)
    >>> ship.shape
    (32, 32)

Configuration: ``size`` (grid side, or ``(height, width)``), ``detour`` (the contiguity
check's detour limit, shared by every stage, default 5) and one entry per stage, by its name
(``STAGE_NAMES``): a dict of that stage's parameters, ``False`` to switch it off (``True``: as
is). Parameter names are Python's (``min_modules``) or the spec's (``MinModules``). A file is
the same in TOML or JSON::

    size = 32
    detour = 5
    [thrusters]
    MinPoints = 20
    [fill_armor]
    enabled = false

A file is read as data within the budgets of ``tablegym.envs.limits``: at most ``json_bytes``
of text, nested at most ``json_depth`` deep (``read_config``).

A run is deterministic for a seed: every random choice comes from one ``numpy.random.Generator``.
"""

from __future__ import annotations

import json
import os
import re
import reprlib
import stat
import tomllib
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from tablegym.envs.limits import LimitError, current, loads_json, refuse
from tablegym.envs.starship.ship import Ship
from tablegym.envs.starship.stage_base import ConfigError, ConfigLimitError, Stage, _snake
from tablegym.envs.starship.stages import STAGE_NAMES, STAGES

DEFAULT_SIZE = 32
DEFAULT_DETOUR = 5


def _as_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def make_stage(name: str, config: bool | dict[str, Any] | Stage | None = None) -> Stage:
    """Stage ``name`` from a parameter dict (either spelling), a bool (enabled) or a Stage."""
    if name not in STAGE_NAMES:
        raise ConfigError(f"unknown stage {name!r}; the stages are {', '.join(STAGE_NAMES)}")
    cls = STAGES[STAGE_NAMES.index(name)]
    if isinstance(config, Stage):
        if not isinstance(config, cls):
            raise ConfigError(f"stage {name!r} needs a {cls.__name__}, got {type(config).__name__}")
        return config
    if config is None or config is True:
        return cls()
    if config is False:
        return cls(enabled=False)
    if not isinstance(config, dict):
        raise ConfigError(f"stage {name!r}: expected a dict of parameters or a bool, got {reprlib.repr(config)}")
    known = {f.name: f.type for f in fields(cls)}
    params = {}
    for key, value in config.items():
        k = _snake(str(key))
        if k not in known:
            raise ConfigError(f"stage {name!r} has no parameter {reprlib.repr(key)}; its parameters are {', '.join(known)}")
        default = getattr(cls(), k)
        if isinstance(default, bool) and not isinstance(value, bool):
            raise ConfigError(f"stage {name!r}: {key} must be true or false, got {reprlib.repr(value)}")
        if (
            isinstance(default, (int, float))
            and not isinstance(default, bool)
            and (isinstance(value, bool) or not isinstance(value, (int, float)))
        ):
            raise ConfigError(f"stage {name!r}: {key} must be a number, got {reprlib.repr(value)}")
        if isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float) and not value.is_integer():
            raise ConfigError(f"stage {name!r}: {key} must be an integer, got {reprlib.repr(value)}")
        params[k] = int(value) if isinstance(default, int) and not isinstance(default, bool) else value
    return cls(**params)


class Pipeline:
    """The 14 stages in order, with the grid size and the detour limit they share.

    ``Pipeline(**config)``: see the module docstring for the keywords.
    """

    def __init__(self, *, size: int | tuple[int, int] = DEFAULT_SIZE, detour: int = DEFAULT_DETOUR, **stages: Any) -> None:
        height, width = (size, size) if isinstance(size, (int, np.integer)) else tuple(size)
        if not (isinstance(height, (int, np.integer)) and isinstance(width, (int, np.integer)) and height >= 4 and width >= 4):
            raise ConfigError(f"size must be an int >= 4 or a (height, width) pair of them, got {reprlib.repr(size)}")
        if isinstance(detour, bool) or not isinstance(detour, (int, np.integer)) or detour < 0:
            raise ConfigError(f"detour must be an int >= 0, got {reprlib.repr(detour)}")
        unknown = sorted(set(stages) - set(STAGE_NAMES))
        if unknown:
            raise ConfigError(
                f"unknown pipeline option(s) {', '.join(map(reprlib.repr, unknown))}; the options are size, "
                f"detour and the stages {', '.join(STAGE_NAMES)}"
            )
        self.size = (int(height), int(width))
        self.detour = int(detour)
        self.stages: list[Stage] = [make_stage(name, stages.get(name)) for name in STAGE_NAMES]

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Pipeline:
        return cls(**config)

    @classmethod
    def from_file(cls, path: str | Path) -> Pipeline:
        """A pipeline from a TOML (``.toml``) or JSON (anything else) file of the same keys
        (``read_config``)."""
        return cls(**read_config(path))

    def config(self) -> dict[str, Any]:
        """Every option, stage parameters included (``Pipeline(**p.config())`` is the same pipeline)."""
        out: dict[str, Any] = {"size": list(self.size), "detour": self.detour}
        for stage in self.stages:
            out[stage.name] = stage.params()
        return out

    def stage(self, name: str) -> Stage:
        return self.stages[STAGE_NAMES.index(name)] if name in STAGE_NAMES else make_stage(name)

    def new_ship(self) -> Ship:
        return Ship.empty(*self.size)

    def steps(
        self, seed: int | np.random.Generator | None = None, *, ship: Ship | None = None, until: int | str | None = None
    ) -> Iterator[tuple[Stage, Ship]]:
        """Run the stages, yielding (stage, ship) after each enabled one (the same ship object,
        edited in place: copy it to keep a snapshot). ``until`` stops after that stage (number
        1..14 or name); ``ship`` starts from a given ship instead of an empty grid."""
        rng = _as_rng(seed)
        last = self._last(until)
        ship = self.new_ship() if ship is None else ship
        for stage in self.stages[:last]:
            if stage.enabled:
                stage.run(ship, rng, self.detour)
                yield stage, ship

    def generate(self, seed: int | np.random.Generator | None = None, *, until: int | str | None = None) -> Ship:
        """The ship after every enabled stage (up to ``until``)."""
        ship = self.new_ship()
        for _ in self.steps(seed, ship=ship, until=until):
            pass
        return ship

    def snapshots(
        self, seed: int | np.random.Generator | None = None, *, until: int | str | None = None
    ) -> list[tuple[str, Ship]]:
        """(stage name, copy of the ship after it) for every enabled stage."""
        return [(stage.name, ship.copy()) for stage, ship in self.steps(seed, until=until)]

    @staticmethod
    def _last(until: int | str | None) -> int:
        if until is None:
            return len(STAGES)
        if isinstance(until, str):
            if until not in STAGE_NAMES:
                raise ConfigError(f"unknown stage {until!r}; the stages are {', '.join(STAGE_NAMES)}")
            return STAGE_NAMES.index(until) + 1
        if isinstance(until, bool) or not 0 <= int(until) <= len(STAGES):
            raise ConfigError(f"until must be a stage number 0..{len(STAGES)} or name, got {until!r}")
        return int(until)

    def __repr__(self) -> str:
        off = [s.name for s in self.stages if not s.enabled]
        return f"Pipeline(size={self.size}, detour={self.detour}" + (f", off={off})" if off else ")")


def read_config(path: str | Path) -> dict[str, Any]:
    """The options in a TOML (``.toml``) or JSON (anything else) file. Nothing in it is trusted:
    its size is checked against ``json_bytes`` before it is read whole, and its nesting against
    ``json_depth`` before it is parsed (``ConfigLimitError``, one line); a file that is not UTF-8,
    TOML or JSON, or not a table of options, is a ``ConfigError``."""
    path = Path(path)
    what, kind, limits = f"config {str(path)!r}", "TOML" if path.suffix.lower() == ".toml" else "JSON", current()
    with path.open("rb") as file:
        info = os.fstat(file.fileno())
        data = file.read(limits.json_bytes + 1)
    if len(data) > limits.json_bytes:
        size = f"{info.st_size:,} bytes" if stat.S_ISREG(info.st_mode) else f"more than {limits.json_bytes:,} bytes"
        raise ConfigLimitError(str(refuse(what, f"{size} of {kind}", "json_bytes")))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    try:
        if kind == "TOML":
            depth = toml_depth(text)
            if depth > limits.json_depth:
                raise refuse(what, f"TOML nested {depth:,} deep", "json_depth")
            config = tomllib.loads(text)
            depth = _nesting(config)
            if depth > limits.json_depth:
                raise refuse(what, f"TOML nested {depth:,} deep", "json_depth")
        else:
            config = loads_json(text, what)
    except LimitError as err:
        raise ConfigLimitError(str(err)) from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"{path}: not valid {kind}: {err}") from None
    except RecursionError:  # not expected past the depth checks; the refusal stays one line if it comes
        raise ConfigLimitError(
            f"{what}: {kind} nested deeper than the parser can follow (json_depth {limits.json_depth}); refused"
        ) from None
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: expected a table/object of options, got {type(config).__name__}")
    return config


_TOML_SKIPPED = re.compile(
    r'"""(?:\\.|[^\\])*?"""(?!")|\'\'\'.*?\'\'\'(?!\')|"(?:\\.|[^"\\\n])*"|\'[^\'\n]*\'|#[^\n]*', re.DOTALL
)
"""A TOML string of any of the four kinds (what it holds is not structure), or a comment."""


def toml_depth(text: str) -> int:
    """How deep a TOML text nests, counted without parsing it (strings and comments blanked
    first): the deepest nesting of ``[``/``{``, or the most dots on one line plus one (a dotted
    key ``a.b.c`` or a table header ``[a.b.c]`` nests one table a dot; floats count too, so it
    errs high). Why: ``tomllib`` recurses once a bracket, and its cost grows with the square of
    a dotted key's length (a key 20,000 parts long takes 18 s and 1.5 GB)."""
    blank = _TOML_SKIPPED.sub(lambda m: "" if m.group().startswith("#") else '""', text)
    codes = np.frombuffer(blank.encode(), dtype=np.uint8)
    steps = np.isin(codes, (0x5B, 0x7B)).astype(np.int64) - np.isin(codes, (0x5D, 0x7D))
    brackets = int(np.cumsum(steps).max(initial=0))
    return max(brackets, max((line.count(".") for line in blank.splitlines()), default=-1) + 1)


def _nesting(value: Any) -> int:
    """How deep parsed configuration nests (tables and arrays), walked without recursion."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth + 1)
            todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def generate(seed: int | np.random.Generator | None = None, **config: Any) -> Ship:
    """One ship from the default pipeline (or ``Pipeline(**config)``)."""
    return Pipeline(**config).generate(seed)
