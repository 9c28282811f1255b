"""A ``torch.nn.Sequential`` that no compiled kernel runs (a convolutional network, one with batch
norm or pooling) as a file of plain values: each layer's class name and constructor arguments,
and its tensors. Saving a module with ``torch.save`` pickles it, and loading a pickle runs
whatever code the file names; this description loads with ``weights_only=True`` and rebuilds
only the layer classes in ``LAYERS``, so a file from anyone is safe to try in a search.

The rebuilt module is built on torch's ``meta`` device (shapes, no memory), its parameter
shapes checked against the file's tensors, then given those tensors: a description asking for
a huge layer allocates nothing before it is refused.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tablegym.models.checkpoint import CheckpointError

LAYERS: dict[str, tuple[type[nn.Module], tuple[str, ...]]] = {
    "Conv1d": (
        nn.Conv1d,
        ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "padding_mode"),
    ),
    "Conv2d": (
        nn.Conv2d,
        ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "padding_mode"),
    ),
    "Linear": (nn.Linear, ("in_features", "out_features")),
    "Flatten": (nn.Flatten, ("start_dim", "end_dim")),
    "MaxPool2d": (nn.MaxPool2d, ("kernel_size", "stride", "padding", "dilation", "ceil_mode")),
    "AvgPool2d": (nn.AvgPool2d, ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")),
    "BatchNorm1d": (nn.BatchNorm1d, ("num_features", "eps", "momentum", "affine", "track_running_stats")),
    "BatchNorm2d": (nn.BatchNorm2d, ("num_features", "eps", "momentum", "affine", "track_running_stats")),
    "LayerNorm": (nn.LayerNorm, ("normalized_shape", "eps", "elementwise_affine")),
    "Dropout": (nn.Dropout, ("p",)),
    "ReLU": (nn.ReLU, ()),
    "LeakyReLU": (nn.LeakyReLU, ("negative_slope",)),
    "ELU": (nn.ELU, ("alpha",)),
    "GELU": (nn.GELU, ("approximate",)),
    "SiLU": (nn.SiLU, ()),
    "Tanh": (nn.Tanh, ()),
    "Sigmoid": (nn.Sigmoid, ()),
    "Identity": (nn.Identity, ()),
}
"""The layers a description may name, with the constructor arguments it records (a layer's
``bias`` or ``affine`` flag is read off its tensors' presence where the class takes one)."""

_HAS_BIAS = ("Conv1d", "Conv2d", "Linear")
_LAYER_NAMES = ", ".join(LAYERS)


def leaves(module: nn.Module) -> list[nn.Module]:
    """The layers of a Sequential (nested Sequentials flattened in order), or ``ValueError`` in
    one line naming the first module a description cannot hold."""
    if not isinstance(module, nn.Sequential):
        raise ValueError(f"{type(module).__name__} is not a torch.nn.Sequential")
    out: list[nn.Module] = []
    for m in module:
        if isinstance(m, nn.Sequential):
            out.extend(leaves(m))
        elif type(m).__name__ in LAYERS and type(m) is LAYERS[type(m).__name__][0]:
            out.append(m)
        else:
            raise ValueError(f"layer {type(m).__name__} is not one of {_LAYER_NAMES}")
    return out


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def describe(module: nn.Module) -> tuple[list[list[Any]], dict[str, torch.Tensor]]:
    """``(layers, tensors)``: ``[class name, arguments]`` per layer, and the state dict of the
    flattened Sequential (keys ``"<layer index>.<name>"``)."""
    layers = leaves(module)
    flat = nn.Sequential(*layers)
    spec = []
    for m in layers:
        name = type(m).__name__
        args = {arg: _plain(getattr(m, arg)) for arg in LAYERS[name][1]}
        if name in _HAS_BIAS:
            args["bias"] = m.bias is not None
        spec.append([name, args])
    tensors = {k: _float32(v.detach().clone()) for k, v in flat.state_dict().items()}
    return spec, tensors


def _float32(t: torch.Tensor) -> torch.Tensor:
    """What the evaluator's forward pass reads (its batches are float32); counts stay integers."""
    return t.float() if t.is_floating_point() else t


def _checked_args(name: str, args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise ValueError(f"the arguments of layer {name} are not a table")
    allowed = set(LAYERS[name][1]) | ({"bias"} if name in _HAS_BIAS else set())
    out = {}
    for key, value in args.items():
        if key not in allowed:
            raise ValueError(f"layer {name} takes no argument {key!r} (accepted: {', '.join(sorted(allowed))})")
        if isinstance(value, list):
            if not all(type(v) is int for v in value):
                raise ValueError(f"argument {key!r} of layer {name} is a list of something other than integers")
            value = tuple(value)
        elif type(value) not in (int, float, bool, str) and value is not None:
            raise ValueError(f"argument {key!r} of layer {name} is a {type(value).__name__}")
        out[key] = value
    return out


def rebuild(spec: Any, tensors: dict[str, torch.Tensor], path: str) -> nn.Sequential:
    """The Sequential a description holds, in eval mode, or a ``CheckpointError`` naming the file
    and what is wrong with it."""
    if not isinstance(spec, list) or not spec:
        raise CheckpointError(f"checkpoint {path!r} describes no layers")
    try:
        layers = []
        with torch.device("meta"):  # shapes only: nothing is allocated before the tensors are checked
            for entry in spec:
                if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
                    raise ValueError("a layer is not [name, arguments]")
                name, args = entry
                if name not in LAYERS:
                    raise ValueError(f"layer {name!r} is not one of {_LAYER_NAMES}")
                layers.append(LAYERS[name][0](**_checked_args(name, args)))
        module = nn.Sequential(*layers)
        want = {k: tuple(v.shape) for k, v in module.state_dict().items()}
        have = {k: tuple(v.shape) for k, v in tensors.items()}
        if want != have:
            missing = sorted(set(want) - set(have)) or sorted(k for k in want if want[k] != have.get(k))
            raise ValueError(f"its tensors do not fit its layers (first: {missing[0] if missing else sorted(have)[0]!r})")
        module.load_state_dict({k: _float32(v) for k, v in tensors.items()}, strict=True, assign=True)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"checkpoint {path!r} does not describe a network that can be rebuilt: {exc}") from None
    return module.eval()
