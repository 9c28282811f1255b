"""``tablegym train``: the trainer a game's record names, or PPO, DQN or imitation over the game's
vector env (``--algo``), handed the arguments as typed."""

from __future__ import annotations

import importlib

from tablegym.envs import plugin, plugins
from tablegym.experiments.commands.shared import PROG, require, usage_error


def train(argv: list[str]) -> int:
    """``tablegym train [GAME] ...``: the trainer named by the game's registry record, given the
    arguments as typed (the game first, or the default trainer's ``--game``); with neither, its usage."""
    if argv in (["--help"], ["-h"]):
        print(_train_help())
        return 0
    name = argv[0] if argv and not argv[0].startswith("-") else None
    trainable = ", ".join(p.name for p in plugins() if p.trainer)
    if name is None and not any(a == "--game" or a.startswith("--game=") for a in argv):
        return usage_error(f"train: name a game ({PROG} train GAME [ARGUMENTS]); games with a trainer: {trainable}")
    algo = _algo(argv)
    if algo not in (None, *ALGOS):
        return usage_error(
            f"train: --algo must be ppo or dqn (masked PPO or DQN over the vector envs), afterstate-dqn or "
            f"negamax-dqn (Q from a value of what a move leads to), imitate (PPO's network fitted to a "
            f"teacher's games) or left out for the game's own trainer; got {algo!r}"
        )
    trainer = ALGOS[algo] if algo is not None else _DEFAULT_TRAINER
    if name is not None and algo is None:
        try:
            trainer = plugin(name).trainer
        except ValueError as err:
            return usage_error(f"train: {err}")
        if trainer is None:
            return usage_error(f"train: game {name!r} has no trainer; games with one: {trainable}")
    module, _, function = trainer.partition(":")
    status = require(module, function, "training")(argv)
    return 0 if status is None else status


ALGOS = {
    "ppo": "tablegym.training.ppo:main",
    "dqn": "tablegym.training.dqn:cli_main",
    "afterstate-dqn": "tablegym.training.afterstate_dqn:main",
    "negamax-dqn": "tablegym.training.negamax_dqn:main",
    "imitate": "tablegym.training.imitate:main",
}
"""The trainers over the vector envs by ``--algo`` name, each a ``module:function`` handed the
arguments as typed."""


def _algo(argv: list[str]) -> str | None:
    """The value of ``--algo`` in the arguments (None when not given)."""
    for i, item in enumerate(argv):
        if item == "--algo":
            return argv[i + 1] if i + 1 < len(argv) else ""
        if item.startswith("--algo="):
            return item.partition("=")[2]
    return None


def _train_help() -> str:
    """``tablegym train --help``: every game with a trainer, and what that trainer learns (the
    first line of its module's docstring)."""
    lines = [
        f"usage: {PROG} train GAME [ARGUMENTS]   ({PROG} train GAME --help: that trainer's arguments)",
        f"       {PROG} train GAME --algo ppo|dqn [ARGUMENTS]   (masked PPO or DQN over the game's vector env, "
        "any game with one)",
        f"       {PROG} train GAME --algo afterstate-dqn|negamax-dqn [ARGUMENTS]   (Q from a value of the "
        "afterstate, Threes, or of the child, two-player games)",
        f"       {PROG} train GAME --algo imitate --teacher SPEC [ARGUMENTS]   (PPO's network fitted to the "
        "moves of any agent, a start for --algo ppo)",
        "",
        "games and what their trainer learns:",
    ]
    width = max(len(p.name) for p in plugins())
    for record in plugins():
        if record.trainer:
            module = record.trainer.partition(":")[0]
            try:
                doc = (importlib.import_module(module).__doc__ or "").strip().splitlines()[0]
            except (ImportError, IndexError):
                doc = "(its module is not installed)"
            lines.append(f"  {record.name:<{width}}  {doc}  [{module}]")
    untrained = [p.name for p in plugins() if not p.trainer]
    if untrained:
        lines.append(f"  (no trainer: {', '.join(untrained)})")
    return "\n".join(lines)


_DEFAULT_TRAINER = "tablegym.training.td:cli_main"
"""``tablegym train --game G ...``: self-play TD through alpha-beta (it reads the game itself)."""
