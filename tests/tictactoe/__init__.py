"""Tic-tac-toe: a seventh game that lives under tests/ and joins tablegym through ONE record.

It exists to prove that games are plugins: nothing in envs/, search/, models/,
training/ or experiments/ names it, and ``register(RECORD)`` is all it takes for
``make_game("tictactoe")``, ``gymnasium.make("tablegym/TicTacToe-v0")``, the PettingZoo id,
agent specs (``alphabeta:eval=lines,depth=3``, ``perfect``), ``tablegym solve/eval/play/bench
tictactoe``, ``tablegym train tictactoe`` (self-play TD) and ``eval=learned:PATH`` to work.

The record below is what a tablegym game keeps in its ``game.toml``, built in Python. Reading
it imports nothing but ``tablegym.envs`` (every reference is an import string), so it is as
cheap as the built-in records; the tests register it in a fixture and unregister it after.

Modules: ``core`` (rules, compact state and numba kernels), ``heuristics`` (hand-made leaf
evaluators and the ``perfect`` agent), ``learned`` (the ValueMLP leaf kernel), ``env``
(Gymnasium and PettingZoo envs), ``bench`` (a small speed table).
"""

from __future__ import annotations

from tablegym.envs import GamePlugin

ENV_ID = "tablegym/TicTacToe-v0"

RECORD = GamePlugin(
    name="tictactoe",
    doc="tic-tac-toe, 3x3, three in a row (a plugin game defined under tests/)",
    game="tests.tictactoe.core:TicTacToeGame",
    options={"first_player": int},
    agents="tests.tictactoe.heuristics",
    learned="tests.tictactoe.learned:VALUE_KERNEL",
    trainer="tablegym.training.td:cli_main",
    bench="tests.tictactoe.bench:bench_tictactoe",
    move_hint="a cell such as b2 (column a-c, row 1-3 from the top) or its number 0-8",
    gym={ENV_ID: ("tests.tictactoe.env:TicTacToeEnv", {})},
    aec={ENV_ID: ("tests.tictactoe.env:tictactoe_aec_env", {})},
)
"""Tic-tac-toe's record in the game registry (``tablegym.envs.register(RECORD)``)."""
