"""A small value network over a game's binary input features, and its export for numba.

The input is the set of active binary features the game's kernel reports for the player to
move (``Kernels.features``: chips on cells, coloured edges, ...). The first layer is therefore
a sum of weight rows over the active features: a dense ``nn.Linear`` for training in batches,
and an embedding-bag lookup in the compiled search, where most inputs are zero.
The output is ``tanh``: the expected result for the player to move, in [-1, 1].
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import cast

import numpy as np
import torch
from torch import nn

from tablegym.models.netkernel import pack

VALUE_CACHE = 1 << 12
"""Entries of an exported ValueMLP's value cache (netkernel): 64 KiB. Why so few: a lookup comes
at every leaf and a hit saves only the network, so the table must sit in the core's own caches.
Trilobite's depth-9 alpha-beta, learned/`advanced` nodes/s in pairs: 0.516 with 2^16 entries (1 MiB,
each lookup a miss to main memory), 0.566-0.570 with 2^10 to 2^12, 0.505 with none; Trap's
expectiminimax the same with 2^12 as with 2^16 (learned/composite 1.03-1.07)."""


@dataclass(frozen=True)
class NetConfig:
    """Architecture of a ``ValueMLP``: stored in every checkpoint so it can be rebuilt."""

    num_features: int
    hidden: tuple[int, ...] = (128, 64)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> NetConfig:
        return cls(int(d["num_features"]), tuple(int(h) for h in d["hidden"]))


class ValueMLP(nn.Module):
    """features -> ReLU hidden layers -> tanh value for the player to move."""

    def __init__(self, config: NetConfig) -> None:
        super().__init__()
        if not 1 <= len(config.hidden) <= 2:
            raise ValueError(f"ValueMLP takes one or two hidden layers, got {config.hidden!r}")
        self.config = config
        sizes = (config.num_features, *config.hidden)
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.out = nn.Linear(sizes[-1], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.hidden:
            x = torch.relu(layer(x))
        return torch.tanh(self.out(x)).squeeze(-1)

    def export(self, slots: int = 2, cache: int = VALUE_CACHE) -> np.ndarray:
        """The network as the float64 vector the compiled searches read (tablegym.models.netkernel):
        ReLU hidden layers, tanh out, the first layer on an exact grid for binary inputs and kept
        incrementally for each of ``slots`` players to move, the values of the last ``cache``
        positions remembered by key (netkernel's value cache; 0: none)."""
        with torch.no_grad():
            hidden = cast(Iterable[nn.Linear], self.hidden)  # a ModuleList of the Linear layers __init__ made
            layers = [(layer.weight.cpu().numpy(), layer.bias.cpu().numpy(), "relu", 0.0) for layer in hidden]
            layers.append((self.out.weight.cpu().numpy(), self.out.bias.cpu().numpy(), "tanh", 0.0))
        return pack(layers, binary=True, slots=slots, cache=cache)


def dense_features(active: list[np.ndarray], num_features: int) -> torch.Tensor:
    """Stack lists of active feature indices into a dense 0/1 batch tensor."""
    x = torch.zeros(len(active), num_features)
    for i, idx in enumerate(active):
        x[i, torch.as_tensor(idx, dtype=torch.long)] = 1.0
    return x
