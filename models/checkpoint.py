"""Checkpoints: network weights plus the metadata needed to trust and rebuild them.

A checkpoint is one ``torch.save`` dict of tensors and plain values, loaded with
``weights_only=True`` (no pickled code runs). Saving writes a temporary file and renames it,
so a crash mid-save never destroys the previous checkpoint.

Loading budgets before it allocates (tablegym.envs.limits): the torch archive's declared sizes
are read from its zip directory first (members stored, as torch writes them, all of them together
within ``model_bytes``, its pickle within ``pickle_bytes``), torch then checks every storage
against its member; every tensor must fit its storage (no zero-stride or overlapping view that
makes a few bytes a gigabyte) and all tensors together the budget; the network's weights must be
finite; and a network rebuilt from metadata is first built on the meta device (no memory) and
must have exactly the file's shapes. Each refusal is one line naming the file and the limit.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import torch

from tablegym.envs.limits import LimitError, checked_zip, current, refuse

FORMAT = "tablegym-checkpoint-v1"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, or made for another game or network."""


class UnsafeModelError(CheckpointError):
    """A model file that cannot be read without running code it carries (refused)."""


class ModelTooLargeError(UnsafeModelError, LimitError):
    """A model file that asks for more than a budget of tablegym.envs.limits allows (bytes
    inflated, a tensor larger than its storage, a network its metadata makes too large), or whose
    sizes cannot be checked before they are allocated: refused before anything is built."""


class NonFiniteWeightsError(UnsafeModelError, LimitError):
    """A network whose weights hold NaN or an infinity: a search would read them as values."""


def save_checkpoint(
    path: str | os.PathLike,
    *,
    model: torch.nn.Module | None = None,
    metadata: dict[str, Any],
    optimizer: torch.optim.Optimizer | None = None,
    state: dict[str, torch.Tensor] | None = None,
) -> Path:
    """Write ``model`` (or its ``state``, e.g. a sparse one; optionally ``optimizer``) with
    ``metadata`` atomically to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if model is not None and state is None:
        weights = model.state_dict()
        for name, tensor in weights.items():  # on the CPU: a file any machine reads alike (a no-op there)
            if isinstance(tensor, torch.Tensor):
                weights[name] = tensor.cpu()
    elif model is None and state is not None:
        weights = state
    else:
        raise ValueError("save_checkpoint needs exactly one of model= and state=")
    payload = {"format": FORMAT, "metadata": dict(metadata), "model": weights}
    if optimizer is not None:
        payload["optimizer"] = optimizer.state_dict()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        torch.save(payload, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, without terminal colour codes (torch's have some)."""
    return (_ANSI.sub("", str(exc)).strip().splitlines() or [type(exc).__name__])[0]


def holds_objects(exc: BaseException) -> str | None:
    """The global a ``weights_only`` load refused to import (``posix.system``, a module's class),
    when that is why it failed: the file holds objects, not only tensors and plain values."""
    found = re.search(r"GLOBAL ([\w.]+)", _ANSI.sub("", str(exc)))
    return found.group(1) if found and "Weights only load failed" in str(exc) else None


def load_error(what: str, exc: BaseException) -> CheckpointError:
    """Why ``torch.load(weights_only=True)`` refused ``what`` (a file, a zip member), in one line:
    an ``UnsafeModelError`` naming the global when it holds objects (a ``torch.save``'d module,
    pickled code), with what to save instead; else a ``CheckpointError`` for a corrupt file."""
    found = holds_objects(exc)
    if found is not None:
        return UnsafeModelError(
            f"{what} holds objects other than tensors and plain values ({found}), refused: loading "
            "it could run code (a torch.save'd module? save a network with "
            "tablegym.models.export.save(net, game, path))"
        )
    operand = re.search(r"Unsupported operand \d+", _ANSI.sub("", str(exc)))
    return CheckpointError(f"{what} is corrupt or not a torch file: {operand.group(0) if operand else first_line(exc)}")


# -- budgets: sizes checked before torch allocates, tensors after it has read them ----------------


@contextlib.contextmanager
def model_limits() -> Iterator[None]:
    """Within the block, a ``LimitError`` of tablegym.envs.limits becomes a ``ModelTooLargeError``
    (the same line): what the front doors of model files catch (``UnsafeModelError``)."""
    try:
        yield
    except (ModelTooLargeError, NonFiniteWeightsError):
        raise
    except LimitError as exc:
        raise ModelTooLargeError(str(exc)) from None


def check_torch_archive(source: str | os.PathLike | bytes, what: str) -> None:
    """Refuse, before ``torch.load`` reads it, a torch file whose zip directory asks for more than
    the budgets: members compressed (torch stores them: a deflated one hides its size), more
    than ``model_bytes`` of members together, a pickle over ``pickle_bytes``. torch then checks
    each storage it allocates against its member's size. A file that is not a zip (torch's legacy
    format, which allocates the sizes its pickle declares, or garbage) is a ``CheckpointError``."""
    with model_limits():
        try:
            archive = checked_zip(io.BytesIO(source) if isinstance(source, bytes) else source, what, stored_only=True)
        except zipfile.BadZipFile:
            raise CheckpointError(
                f"{what} is corrupt or not a torch file: not the zip archive torch.save writes (the "
                f"legacy format is refused: its sizes cannot be checked before loading)"
            ) from None
        with archive:
            for info in archive.infolist():
                if info.filename.rpartition("/")[2] == "data.pkl" and info.file_size > current().pickle_bytes:
                    raise refuse(what, f"a pickle of {info.file_size:,} bytes ({info.filename})", "pickle_bytes")


def _tensor_bytes(t: torch.Tensor, name: str, what: str) -> int:
    """The bytes ``t`` takes once a caller copies it (a sparse tensor: its dense size); a strided
    tensor must fit its own storage: a zero-stride or overlapping view declares more elements than
    its file holds (a 30000 x 30000 matrix from four bytes), refused."""
    nbytes = t.numel() * t.element_size()
    if t.layout == torch.strided and t.device.type != "meta":
        storage = t.untyped_storage().nbytes() - t.storage_offset() * t.element_size()
        if nbytes > storage:
            kind = "zero-stride" if 0 in t.stride() else "overlapping"
            raise ModelTooLargeError(
                f"{what}: its tensor {name} of shape {tuple(t.shape)} ({nbytes:,} bytes) is a "
                f"{kind} view of {max(storage, 0):,} bytes of storage; a tensor must fit its "
                f"storage, refused"
            )
    return nbytes


def check_tensors(obj: Any, what: str, spent: int = 0) -> int:
    """The bytes the tensors of ``obj`` (a loaded payload: dicts, lists, tuples of tensors and
    plain values) take, counted once per place they appear, plus ``spent`` (other members of
    the same file); a ``ModelTooLargeError`` when a tensor does not fit its storage or the total
    exceeds ``model_bytes``. Iterative, each container summed once: a deep or self-sharing
    structure costs neither the stack nor time."""
    totals: dict[int, int] = {}
    names = {id(obj): ""}
    stack: list[tuple[Any, bool]] = [(obj, False)]
    active: set[int] = set()  # containers whose sum is under way: meeting one again is a cycle

    def children(node: Any) -> list[tuple[Any, Any]]:
        if isinstance(node, Mapping):
            return list(node.items())
        return list(enumerate(node))

    while stack:
        node, done = stack.pop()
        key = id(node)
        if isinstance(node, torch.Tensor):
            totals[key] = _tensor_bytes(node, names.get(key, "?"), what)
            continue
        if not isinstance(node, (Mapping, list, tuple)):
            totals[key] = 0
            continue
        if done:
            active.discard(key)
            totals[key] = sum(totals[id(child)] for _, child in children(node))
            if totals[key] + spent > current().model_bytes:
                raise ModelTooLargeError(str(refuse(what, f"tensors of {totals[key] + spent:,} bytes", "model_bytes")))
            continue
        if key in totals:
            continue
        if key in active:
            raise ModelTooLargeError(f"{what}: its {names.get(key) or 'payload'} holds itself; refused")
        active.add(key)
        stack.append((node, True))
        for label, child in reversed(children(node)):  # reversed: the first is looked at first
            if id(child) not in totals:
                parent = names.get(key, "")
                names.setdefault(id(child), (f"{parent}[{label!r}]" if parent else str(label))[:200])
                stack.append((child, False))
    return totals[id(obj)] + spent


def check_finite_weights(state: Any, what: str) -> None:
    """Refuse a network (a state dict) with a NaN or infinite weight, naming the tensor; looks at
    a few million elements at a time (no copy the size of the network)."""
    if not isinstance(state, Mapping):
        return
    for name, t in state.items():
        if not isinstance(t, torch.Tensor) or not (t.is_floating_point() or t.is_complex()):
            continue
        values = t._values() if t.layout == torch.sparse_coo else t
        if values.layout != torch.strided:
            values = values.to_dense()
        flat = values.detach().reshape(-1)
        step = 1 << 22
        if all(bool(torch.isfinite(flat[i : i + step]).all()) for i in range(0, flat.numel(), step)):
            continue
        bad = sum(int((~torch.isfinite(flat[i : i + step])).sum()) for i in range(0, flat.numel(), step))
        raise NonFiniteWeightsError(
            f"{what}: {bad:,} of the {flat.numel():,} weights of {name!r} are NaN or "
            f"infinite; a network's weights must be finite, refused"
        )


def declared_widths(values: Any, what: str, *, most: int) -> tuple[int, ...]:
    """Layer widths read from a file's metadata, as ints: each at least 1, at most ``most`` of
    them (a network with more layers than its state dict has tensors cannot be the file's), or a
    ``CheckpointError`` before anything is built."""
    if not isinstance(values, (list, tuple)) or len(values) > most:
        shown = f"{len(values):,} widths" if isinstance(values, (list, tuple)) else repr(values)[:60]
        raise CheckpointError(f"{what} does not match its network description: {shown} for a state dict of {most} tensors")
    widths = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise CheckpointError(f"{what} does not match its network description: layer width {repr(v)[:60]}")
        widths.append(v)
    return tuple(widths)


ModuleT = TypeVar("ModuleT", bound=torch.nn.Module)


def rebuild(build: Callable[[], ModuleT], state: Any, what: str) -> ModuleT:
    """``build()`` (a module its metadata describes) given ``state``'s weights, after building it
    once on the meta device (no memory): its parameter bytes within ``model_bytes`` and exactly
    the state's names and shapes, or a one-line refusal, so metadata that describes a bigger
    network than the file holds allocates nothing."""
    try:
        with torch.device("meta"):
            skeleton = build()
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise CheckpointError(f"{what} does not match its network description: {first_line(exc)}") from None
    want = skeleton.state_dict()
    nbytes = sum(t.numel() * t.element_size() for t in want.values())
    if nbytes > current().model_bytes:
        raise ModelTooLargeError(str(refuse(what, f"its metadata describes a network of {nbytes:,} bytes", "model_bytes")))
    if not isinstance(state, Mapping):
        raise CheckpointError(f"{what} does not match its network description: its weights are not a state dict")
    for name in [*want, *(k for k in state if k not in want)]:  # the network's order: its first layer first
        if name not in state or name not in want:
            side = "the file" if name not in state else "its metadata's network"
            raise CheckpointError(f"{what} does not match its network description: {side} has no {name!r}")
        have = state[name]
        if not isinstance(have, torch.Tensor) or tuple(have.shape) != tuple(want[name].shape):
            shape = tuple(have.shape) if isinstance(have, torch.Tensor) else type(have).__name__
            raise CheckpointError(
                f"{what} does not match its network description: {name!r} is {shape} in the file, "
                f"{tuple(want[name].shape)} by its metadata"
            )
    module = build()
    try:
        module.load_state_dict(state)
    except RuntimeError as exc:
        raise CheckpointError(f"{what} does not match its network description: {first_line(exc)}") from None
    return module


def load_checkpoint(path: str | os.PathLike, *, game: str | None = None, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read a checkpoint safely and check it was made for ``game`` with rule ``options``: its
    sizes within the budgets before anything is allocated (``check_torch_archive``), its tensors
    within their storages and the budget (``check_tensors``), its network's weights finite."""
    path = Path(path)
    if not path.is_file():
        what = "is a folder, not a checkpoint file" if path.is_dir() else "does not exist"
        raise CheckpointError(f"checkpoint {str(path)!r} {what}")
    what = f"checkpoint {str(path)!r}"
    check_torch_archive(path, what)
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a damaged file, some with pages of advice
        raise load_error(what, exc) from None
    check_tensors(payload, what)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT or "model" not in payload:
        raise CheckpointError(
            f"{str(path)!r} is not a {FORMAT} checkpoint (a network of your own? save it "
            "with tablegym.models.export.save(net, game, path))"
        )
    check_finite_weights(payload["model"], what)
    meta = payload.get("metadata", {})
    if game is not None and meta.get("game") != game:
        raise CheckpointError(f"checkpoint {str(path)!r} is for game {meta.get('game')!r}, not {game!r}")
    if options is not None:
        saved = meta.get("options", {})
        diff = {k: (saved.get(k), v) for k, v in options.items() if saved.get(k) != v}
        if diff:
            detail = ", ".join(f"{k}: checkpoint {a!r} vs requested {b!r}" for k, (a, b) in diff.items())
            raise CheckpointError(f"checkpoint {str(path)!r} was trained with other rule options ({detail})")
    return payload


def peek_metadata(path: str | os.PathLike) -> dict[str, Any] | None:
    """The metadata of the checkpoint at ``path`` without reading its tensors (memory-mapped,
    ``weights_only``), or None when it is not a readable checkpoint (``load_checkpoint`` then
    says why): what a front door asks to choose a loader."""
    try:
        check_torch_archive(path, f"checkpoint {str(path)!r}")
        payload = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception:  # not a zip-format torch file, or refused: the loader chosen next says why
        return None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT or not isinstance(payload.get("metadata"), dict):
        return None
    return payload["metadata"]
