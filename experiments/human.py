"""A person at the terminal as an Agent, so ``play_game`` can pit a human against any searcher.

Input and output go through ``input_fn``/``print_fn`` so that tests (and other front ends)
can script a player without a terminal.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

import numpy as np

from tablegym.envs.core import State

QUIT_WORDS = frozenset({"q", "quit", "exit"})


class HumanQuit(Exception):
    """The human asked to stop the game (typed 'q' or closed the input)."""


class HumanAgent:
    """Shows the position and the legal moves, reads a move, and asks again after bad input.

    Moves are parsed with ``state.string_to_action`` (the game's own notation); its error
    message, which names the input and the legal moves, is shown as is. Typing ``q`` (or
    end of input) raises ``HumanQuit``, which callers catch to leave cleanly. ``keys`` tells
    the player how to type a move beyond the names listed (e.g. Threes' l/r/u/d and arrow keys).
    ``numbered`` lists the legal moves one a line with their action numbers (for games with long
    move names, such as Friday's "use slot 3 food 0 (+1 life)"; a number is quicker to type).
    """

    name = "human"

    def __init__(
        self,
        input_fn: Callable[[str], str] | None = None,
        print_fn: Callable[..., None] | None = None,
        *,
        keys: str = "",
        numbered: bool = False,
    ) -> None:
        # None means the builtins, looked up at each call so a patched ``builtins.input`` works.
        self._input_fn = input_fn
        self._print_fn = print_fn
        self._keys = f"{keys}; " if keys else ""
        self._numbered = numbered

    def _input(self, prompt: str) -> str:
        return (self._input_fn or builtins.input)(prompt)

    def _print(self, *args: object) -> None:
        (self._print_fn or builtins.print)(*args)

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        self._print(state.to_text())
        if self._numbered:
            self._print(f"legal moves ({self._keys}'q' quits):")
            for a in state.legal_actions():
                self._print(f"  {a:3d}  {state.action_to_string(a)}")
        else:
            moves = ", ".join(state.action_to_string(a) for a in state.legal_actions())
            self._print(f"legal moves: {moves}  ({self._keys}'q' quits)")
        while True:
            try:
                text = self._input("your move> ")
            except EOFError:
                raise HumanQuit("end of input") from None
            if text.strip().lower() in QUIT_WORDS:
                raise HumanQuit("quit")
            try:
                return state.string_to_action(text)
            except ValueError as err:
                self._print(f"{err}; try again")
