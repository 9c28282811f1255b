"""A game's kernels as the batch entry points call them: inlined, or through their addresses.

The batch code of envs/vector.py calls a game's kernels (moves, push, to_move, outcome, chance,
draw, observation) several times for every board of every step. It reaches them in one of two
ways, and the functions below (``moves_of(kernels, s, out)``, ...) take either, so that code is
written once:

- a ``KernelSet``: a small object naming one game's kernels to numba by its type. An entry point
  given one is compiled for that game, the kernels called directly, where the compiler can
  inline them: a call through an address cannot be inlined, and passes each array as a
  structure. At 1024 boards in one thread, against the same steps through addresses (one
  process, in turn: experiments/vector_benches/vector_ab.py): Trilobite with the random reply 1.23x,
  in self-play 1.11x, Sim 1.17x, Trap 1.11x. numba caches such an entry point on disk like any
  other, once a game (10-15 s to compile each).
- a tuple of first-class functions made from the kernels' addresses (``_kernels_at`` in
  envs/vector.py): one compiled entry point serves every game. The searches as the other seat
  and the one-player games go this way.

numba checks only the source file of a cached function itself, so an entry point compiled for a
game could outlive a change to the game's rules. The type of a ``KernelSet`` carries a digest of
the source files of its kernels (and of this module): a change makes a new type, and numba
compiles and caches the entry point again, also where numba's cache folder is not the one named
after the kernels' sources (tablegym/kernel_cache.py: no such folder could be written).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from typing import Any

from numba import types
from numba.extending import NativeValue, models, overload, register_model, typeof_impl, unbox

from tablegym.envs.core import OUTCOME, TO_MOVE, k_outcome, k_to_move, no_chance

KERNEL_NAMES = ("moves", "push", "to_move", "outcome", "chance", "draw", "observe")
"""The kernels of a set, in the order of ``_kernels_at``'s tuple (envs/vector.py)."""

_SETS: dict[str, tuple[Any, ...]] = {}
"""A set's type key -> its kernels (numba dispatchers), for the compiler to inline."""


class KernelSet:
    """One game's kernels (``KERNEL_NAMES``' order), to be inlined into the entry points that
    take it. Sets of the same kernels share one type, and so one compiled entry point."""

    def __init__(self, game: str, kernels: tuple[Any, ...]) -> None:
        if len(kernels) != len(KERNEL_NAMES):
            raise ValueError(f"a kernel set holds {len(KERNEL_NAMES)} kernels ({', '.join(KERNEL_NAMES)}), got {len(kernels)}")
        self.key = _key(game, tuple(kernels))
        """The set's name to numba: the game, then a digest of the kernels' names and sources."""
        _SETS.setdefault(self.key, tuple(kernels))

    def __repr__(self) -> str:
        return f"KernelSet({self.key})"


@functools.cache
def _key(game: str, kernels: tuple[Any, ...]) -> str:
    digest = hashlib.sha256()
    paths = {__file__}
    for kernel in kernels:
        digest.update(f"{kernel.py_func.__module__}.{kernel.py_func.__qualname__};".encode())
        try:
            paths.add(inspect.getsourcefile(kernel.py_func) or "")
        except TypeError:
            paths.add("")
    for path in sorted(paths):
        try:
            with open(path, "rb") as source:
                digest.update(source.read())
        except OSError:  # no file (a kernel typed in a notebook): numba caches none of it either
            digest.update(b"".join(k.py_func.__code__.co_code for k in kernels))
    return f"{game}:{digest.hexdigest()[:16]}"


class KernelSetType(types.Type):
    """numba's type of a ``KernelSet``: its key, nothing at run time."""

    def __init__(self, key: str) -> None:
        self.key_name = key
        super().__init__(name=f"KernelSet({key})")


@typeof_impl.register(KernelSet)
def _typeof_kernel_set(value: KernelSet, context: Any) -> KernelSetType:
    return KernelSetType(value.key)


register_model(KernelSetType)(models.OpaqueModel)


@unbox(KernelSetType)
def _unbox_kernel_set(typ: KernelSetType, obj: Any, c: Any) -> NativeValue:
    return NativeValue(c.context.get_dummy_value())


def _kernel(kernels: Any, name: str) -> Any:
    """The dispatcher ``name`` of the set typed ``kernels``."""
    return _SETS[kernels.key_name][KERNEL_NAMES.index(name)]


def moves_of(kernels: Any, s: Any, out: Any) -> int:
    """The legal moves of ``s`` into ``out``; their number."""
    raise NotImplementedError("compiled code only")


def push_of(kernels: Any, s: Any, action: int) -> None:
    """Play ``action`` (a move or a chance outcome) on ``s``."""
    raise NotImplementedError("compiled code only")


def to_move_of(kernels: Any, s: Any) -> int:
    """The player to move in ``s`` (or ``CHANCE``)."""
    raise NotImplementedError("compiled code only")


def outcome_of(kernels: Any, s: Any) -> int:
    """``ONGOING``, the winner or ``DRAW``."""
    raise NotImplementedError("compiled code only")


def chance_of(kernels: Any, s: Any, outcomes: Any, probs: Any) -> int:
    """The chance outcomes of ``s`` and their weights; their number."""
    raise NotImplementedError("compiled code only")


def draw_of(kernels: Any, row: Any, probs: Any, n: int) -> int:
    """The index of the chance outcome drawn from stream ``row``."""
    raise NotImplementedError("compiled code only")


def observe_of(kernels: Any, s: Any, player: int, out: Any) -> None:
    """``player``'s observation of ``s``, flattened into ``out``."""
    raise NotImplementedError("compiled code only")


def _call_overload(stub: Any, name: str, arity: int) -> None:
    """Compile ``stub(kernels, *args)`` (``arity`` args) as the call of the kernel ``name`` on
    ``args``: by name for a ``KernelSet`` (inlined where the compiler will), else through its
    address in the tuple. Two arities written out: numba's inliner takes no ``*args``."""
    index = KERNEL_NAMES.index(name)
    if arity == 2:

        @overload(stub, inline="always")
        def _call2(kernels, a, b):
            fn = _kernel(kernels, name) if isinstance(kernels, KernelSetType) else None
            return (lambda kernels, a, b: fn(a, b)) if fn else (lambda kernels, a, b: kernels[index](a, b))
    else:

        @overload(stub, inline="always")
        def _call3(kernels, a, b, c):
            fn = _kernel(kernels, name) if isinstance(kernels, KernelSetType) else None
            return (lambda kernels, a, b, c: fn(a, b, c)) if fn else (lambda kernels, a, b, c: kernels[index](a, b, c))


for _stub, _name, _arity in (
    (moves_of, "moves", 2),
    (push_of, "push", 2),
    (chance_of, "chance", 3),
    (draw_of, "draw", 3),
    (observe_of, "observe", 3),
):
    _call_overload(_stub, _name, _arity)


def _read(kernel: Any, s: Any) -> int:
    raise NotImplementedError("compiled code only")


@overload(_read, inline="always")
def _read_impl(kernel, s):
    """``kernel[0](s)``, or the header slot ``kernel[1]`` of ``s`` where the game keeps the value
    in the common header of envs/core.py (-1: none). Through addresses a board's step asks them
    some ten times: each such call cost 10-19% of a Trilobite step."""
    return lambda kernel, s: s[kernel[1]] if kernel[1] >= 0 else kernel[0](s)


@overload(to_move_of, inline="always")
def _to_move_of(kernels, s):
    if isinstance(kernels, KernelSetType):
        fn = _kernel(kernels, "to_move")
        if fn is k_to_move:  # the header's slot read here: a call each time is not inlined
            return lambda kernels, s: s[TO_MOVE]
        return lambda kernels, s: fn(s)
    return lambda kernels, s: _read(kernels[2], s)


@overload(outcome_of, inline="always")
def _outcome_of(kernels, s):
    if isinstance(kernels, KernelSetType):
        fn = _kernel(kernels, "outcome")
        if fn is k_outcome:
            return lambda kernels, s: s[OUTCOME]
        return lambda kernels, s: fn(s)
    return lambda kernels, s: _read(kernels[3], s)


def has_chance_of(kernels: Any) -> bool:
    """False where the set's game has no chance nodes (known to the compiler, which then leaves
    out the loops that would resolve them); True otherwise and through addresses."""
    raise NotImplementedError("compiled code only")


@overload(has_chance_of, inline="always")
def _has_chance_of(kernels):
    if isinstance(kernels, KernelSetType) and _kernel(kernels, "chance") is no_chance:
        return lambda kernels: False
    return lambda kernels: True
