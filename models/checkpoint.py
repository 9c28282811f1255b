"""Checkpoints: network weights plus the metadata needed to trust and rebuild them.

A checkpoint is one ``torch.save`` dict of tensors and plain values, loaded with
``weights_only=True`` (no pickled code runs). Saving writes a temporary file and renames it,
so a crash mid-save never destroys the previous checkpoint.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch

FORMAT = "tablegym-checkpoint-v1"


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, or made for another game or network."""


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


def load_checkpoint(path: str | os.PathLike, *, game: str | None = None,
                    options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read a checkpoint safely and check it was made for ``game`` with rule ``options``."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a damaged file, some with pages of advice
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a torch file: {first}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT or "model" not in payload:
        raise CheckpointError(f"{str(path)!r} is not a {FORMAT} checkpoint")
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
