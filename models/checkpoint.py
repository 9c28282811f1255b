"""Checkpoints: network weights plus the metadata needed to trust and rebuild them.

A checkpoint is one ``torch.save`` dict of tensors and plain values, loaded with
``weights_only=True`` (no pickled code runs). Saving writes a temporary file and renames it,
so a crash mid-save never destroys the previous checkpoint.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import torch

FORMAT = "tablegym-checkpoint-v1"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, or made for another game or network."""


class UnsafeModelError(CheckpointError):
    """A model file that cannot be read without running code it carries (refused)."""


def save_checkpoint(path: str | os.PathLike, *, model: torch.nn.Module | None = None, metadata: dict[str, Any],
                    optimizer: torch.optim.Optimizer | None = None,
                    state: dict[str, torch.Tensor] | None = None) -> Path:
    """Write ``model`` (or its ``state``, e.g. a sparse one; optionally ``optimizer``) with
    ``metadata`` atomically to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if (model is None) == (state is None):
        raise ValueError("save_checkpoint needs exactly one of model= and state=")
    payload = {"format": FORMAT, "metadata": dict(metadata), "model": model.state_dict() if state is None else state}
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
        return UnsafeModelError(f"{what} holds objects other than tensors and plain values ({found}), refused: loading "
                                "it could run code (a torch.save'd module? save a network with "
                                "tablegym.models.export.save(net, game, path))")
    operand = re.search(r"Unsupported operand \d+", _ANSI.sub("", str(exc)))
    return CheckpointError(f"{what} is corrupt or not a torch file: {operand.group(0) if operand else first_line(exc)}")


def load_checkpoint(path: str | os.PathLike, *, game: str | None = None,
                    options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read a checkpoint safely and check it was made for ``game`` with rule ``options``."""
    path = Path(path)
    if not path.is_file():
        what = "is a folder, not a checkpoint file" if path.is_dir() else "does not exist"
        raise CheckpointError(f"checkpoint {str(path)!r} {what}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a damaged file, some with pages of advice
        raise load_error(f"checkpoint {str(path)!r}", exc) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT or "model" not in payload:
        raise CheckpointError(f"{str(path)!r} is not a {FORMAT} checkpoint (a network of your own? save it "
                              "with tablegym.models.export.save(net, game, path))")
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
        payload = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception:  # not a zip-format torch file, or refused: the loader chosen next says why
        return None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT or not isinstance(payload.get("metadata"), dict):
        return None
    return payload["metadata"]
