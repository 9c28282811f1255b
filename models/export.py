"""Bring your own network: a torch model, a Stable-Baselines3 model or a state_dict as the leaf
evaluator of a game's searches.

A feed-forward network over the game's Gymnasium observation (a ``torch.nn.Sequential`` of
``Linear`` layers and ReLU, LeakyReLU, Tanh, Sigmoid or Identity, optionally after a
``Flatten``) is exported into the compiled format of tablegym.models.netkernel and evaluated by
the game's ``network_value`` kernel (its record names it), so the compiled searches never call
back into Python::

    net = torch.nn.Sequential(torch.nn.Linear(168, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1), torch.nn.Tanh())
    ev = from_torch(net, make_game("trilobite"))
    alphabeta(state, ev, depth=5)

The network reads ``State.observation(p)`` of the player ``p`` to move, flattened, and returns
the value of the position for ``p`` (a critic); ``output="max"`` takes the largest output over
the legal actions instead (a Q-network). Finished games are worth +1/-1/0 exactly. A two-player
game's critic keeps its first layer between the leaves of a search where the observation is 0/1
planes (only the changed cells' rows) and remembers recent positions' values: the same values,
several times the nodes per second for a wide first layer (netkernel.observed_value).

Any other module (a CNN, a transformer) works through ``TorchEvaluator`` on the Python path of a
search: correct, but a forward pass per leaf (or per batch of leaves) from Python. It passes
the observations in their own shape, ``(batch, *observation_shape)`` as the Gymnasium env
gives them, so a convolutional network reads Trilobite's board planes ``(3, 7, 8)`` as they are.
``save`` writes such a module, when it is a ``torch.nn.Sequential`` of common layers (convolutions,
pooling, normalisation; tablegym.models.module_file), as a file ``eval=learned:PATH`` loads onto
that path from the command line too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from tablegym.envs.core import CHANCE, Game, State
from tablegym.envs.evaluator import Evaluator, WrongGameError, check_game
from tablegym.models.netkernel import MAX_LEGAL, VALUE, pack
from tablegym.models.value_net import VALUE_CACHE

ACTIVATION_LAYERS = {nn.ReLU: "relu", nn.LeakyReLU: "leaky_relu", nn.Tanh: "tanh", nn.Sigmoid: "sigmoid", nn.Identity: "identity"}
LAYER_NAMES = ("linear", "relu", "leaky_relu", "tanh", "sigmoid", "identity")
OUTPUTS = ("value", "max")


class ExportError(ValueError):
    """A network that cannot become a compiled evaluator of this game."""


class UnsupportedLayerError(ExportError):
    """A layer the compiled format has no counterpart for."""


class InputSizeError(ExportError):
    """A network whose input is not the game's observation."""


def observation_size(game: Game) -> int:
    return int(np.prod(game.spec.observation_shape))


class NetEvaluator(Evaluator):
    """An exported network as a compiled leaf evaluator of ``game``'s searches."""

    def __init__(
        self, game: Game, layers: list[tuple[np.ndarray, np.ndarray, str, float]], *, name: str = "network", output: str = "value"
    ) -> None:
        from tablegym.envs import load, plugin

        if output not in OUTPUTS:
            raise ExportError(f"output must be one of {OUTPUTS}, got {output!r}")
        record = plugin(game.spec.name)
        if record.network_value is None:
            raise ExportError(f"game {game.spec.name!r} has no compiled observation kernel for exported networks")
        size = observation_size(game)
        if layers[0][0].shape[1] != size:
            raise InputSizeError(
                f"the network takes {layers[0][0].shape[1]} inputs; {game.spec.name}'s observation "
                f"{game.spec.observation_shape} has {size}"
            )
        width = layers[-1][0].shape[0]
        want = 1 if output == "value" else game.spec.num_actions
        if width != want:
            raise ExportError(f"output={output!r} needs {want} output(s) for {game.spec.name}; the network has {width}")
        self.name = name
        self.game = game.spec.name
        self.options = dict(game.spec.options)
        self.inputs = "observation"
        self.kernel = load(record.network_value)
        self.layers = layers
        self.output = output
        if output == "value" and game.spec.num_players == 2:
            # A critic of a two-player game keeps its first layer per player to move and
            # remembers recent positions' values (netkernel.observed_value): its searches visit
            # many leaves a few cells apart, and the same leaf by many move orders.
            self.params = pack(layers, binary=True, slots=2, cache=VALUE_CACHE)
        else:
            self.params = pack(layers, reduce=VALUE if output == "value" else MAX_LEGAL)
        self.win_value = self.bound = 1.0

    def evaluate(self, state: State, player: int = 0) -> float:
        check_game(self, state)
        return super().evaluate(state, player)


def sequential_layers(model: nn.Module) -> list[tuple[np.ndarray, np.ndarray, str, float]]:
    """(W, b, activation, parameter) per Linear layer of a Sequential (a leading Flatten allowed;
    a Linear with no activation after it gets the identity)."""
    modules = list(model) if isinstance(model, nn.Sequential) else [model]
    while modules and isinstance(modules[0], nn.Flatten):
        modules = modules[1:]
    layers: list[list] = []
    for m in modules:
        if isinstance(m, nn.Sequential):
            if len(m) == 0:  # e.g. SB3's value MLP with net_arch=[]: the head reads the features
                continue
            for w, b, act, p in sequential_layers(m):
                layers.append([w, b, act, p])
        elif isinstance(m, nn.Linear):
            bias = m.bias.detach().double().numpy() if m.bias is not None else np.zeros(m.out_features)
            layers.append([m.weight.detach().double().numpy(), bias, "identity", 0.0])
        elif type(m) in ACTIVATION_LAYERS:
            if not layers or layers[-1][2] != "identity":
                raise UnsupportedLayerError(f"{type(m).__name__} must follow a Linear layer")
            layers[-1][2] = ACTIVATION_LAYERS[type(m)]
            layers[-1][3] = float(m.negative_slope) if isinstance(m, nn.LeakyReLU) else 0.0
        elif type(m) is not nn.Identity:
            raise UnsupportedLayerError(
                f"cannot compile layer {type(m).__name__}; supported: Linear, "
                + ", ".join(t.__name__ for t in ACTIVATION_LAYERS)
                + " (and a leading Flatten); "
                "use TorchEvaluator for other modules"
            )
    if not layers:
        raise ExportError("the network has no Linear layer")
    for (w, _, _, _), (w2, _, _, _) in zip(layers, layers[1:]):
        if w.shape[0] != w2.shape[1]:
            raise ExportError(f"a Linear layer gives {w.shape[0]} outputs to one that takes {w2.shape[1]}")
    return [tuple(layer) for layer in layers]


def from_torch(model: nn.Module, game: Game, *, output: str = "value", name: str = "torch") -> NetEvaluator:
    """A ``torch.nn.Sequential`` of Linear layers and common activations as a compiled evaluator."""
    return NetEvaluator(game, sequential_layers(model), name=name, output=output)


def from_state_dict(
    state_dict: dict[str, torch.Tensor], layers: Sequence[str], game: Game, *, output: str = "value", name: str = "state_dict"
) -> NetEvaluator:
    """A plain ``state_dict`` and its layer list, e.g. ``["linear", "relu", "linear", "tanh"]``:
    the Linear layers take the dict's weight/bias pairs in order."""
    unknown = [n for n in layers if n not in LAYER_NAMES]
    if unknown:
        raise UnsupportedLayerError(f"unknown layer {unknown[0]!r}; layers are {', '.join(LAYER_NAMES)}")
    weights = [v for k, v in state_dict.items() if k.endswith("weight")]
    biases = {k[: -len("weight")]: state_dict.get(k[: -len("weight")] + "bias") for k in state_dict if k.endswith("weight")}
    if sum(n == "linear" for n in layers) != len(weights):
        raise ExportError(
            f"the layer list has {sum(n == 'linear' for n in layers)} linear layers; the state_dict "
            f"holds {len(weights)} weight tensors"
        )
    modules: list[nn.Module] = []
    it = iter(zip(weights, biases.values()))
    for n in layers:
        if n == "linear":
            w, b = next(it)
            lin = nn.Linear(w.shape[1], w.shape[0], bias=b is not None)
            with torch.no_grad():
                lin.weight.copy_(w)
                if b is not None:
                    lin.bias.copy_(b)
            modules.append(lin)
        else:
            modules.append(
                {"relu": nn.ReLU, "leaky_relu": nn.LeakyReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "identity": nn.Identity}[
                    n
                ]()
            )
    return from_torch(nn.Sequential(*modules), game, output=output, name=name)


def sb3_network(model: Any) -> tuple[nn.Module, str]:
    """The part of a Stable-Baselines3 model that values a position: a PPO/MaskablePPO critic
    (features extractor, value MLP, value head) or a DQN Q-network, and its ``output``."""
    policy = getattr(model, "policy", None)
    if hasattr(model, "q_net"):
        q = model.q_net
        _check_flatten(q.features_extractor)
        return nn.Sequential(q.q_net), "max"
    if policy is not None and hasattr(policy, "value_net") and hasattr(policy, "mlp_extractor"):
        extractor = policy.features_extractor if policy.share_features_extractor else policy.vf_features_extractor
        _check_flatten(extractor)
        return nn.Sequential(policy.mlp_extractor.value_net, policy.value_net), "value"
    raise ExportError(f"cannot find a critic or Q-network in {type(model).__name__}; supported: PPO, MaskablePPO, DQN")


def _check_flatten(extractor: nn.Module) -> None:
    if type(extractor).__name__ != "FlattenExtractor":
        raise UnsupportedLayerError(
            f"cannot compile features extractor {type(extractor).__name__}; supported: "
            "FlattenExtractor (MlpPolicy); use TorchEvaluator for others"
        )


def from_sb3(model: Any, game: Game, *, name: str = "sb3") -> NetEvaluator:
    """A Stable-Baselines3 PPO/MaskablePPO (its critic) or DQN (its max Q over legal actions)
    trained on the game's Gymnasium env (unwrapped observations) as a compiled evaluator."""
    net, output = sb3_network(model)
    return from_torch(net, game, output=output, name=name)


def load_sb3_evaluator(game: Game, path: str | os.PathLike, *, trust_code: bool | None = None) -> NetEvaluator:
    """A saved Stable-Baselines3 model (``model.zip``: MaskablePPO, PPO or DQN) as a compiled
    evaluator: what ``eval=learned:PATH.zip`` loads (tablegym.models.learned.load_evaluator).

    The zip is read as data (tablegym.models.sb3_files): its critic or Q-network from
    ``policy.pth`` and the JSON, nothing unpickled. ``trust_code=True`` (default: the decision in
    force, tablegym.models.trust) uses SB3's own loader instead, which runs code the file carries,
    with a warning naming who trusted it: only for files one trusts."""
    from tablegym.models.checkpoint import CheckpointError
    from tablegym.models.sb3_files import read_sb3_network
    from tablegym.models.trust import trust_model_code, warn_trusted

    if not Path(path).is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    if not trust_model_code(trust_code):
        network = read_sb3_network(path)
        return NetEvaluator(game, network.layers, name=f"learned:{path}", output=network.output)
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import DQN, PPO

    warn_trusted(path, trust_code)
    errors = []
    for cls in (MaskablePPO, PPO, DQN):
        try:
            model = cls.load(os.fspath(path), device="cpu")
        except Exception as exc:  # each class refuses the others' files in its own way
            errors.append(f"{cls.__name__}: {type(exc).__name__}")
            continue
        return from_sb3(model, game, name=f"learned:{path}")
    raise CheckpointError(f"checkpoint {str(path)!r} is not a MaskablePPO, PPO or DQN model ({'; '.join(errors)})")


EXPORTED = "exported-network"
"""The ``network`` of an exported network's checkpoint metadata."""


def save(
    model: Any, game: Game, path: str | os.PathLike, *, output: str | None = None, metadata: dict[str, Any] | None = None
) -> Path:
    """Save a network as a tablegym checkpoint that ``eval=learned:PATH`` (``load_evaluator``)
    loads into every compiled searcher of ``game``: a ``torch.nn.Sequential`` of Linear layers and
    common activations (``output`` "value" by default, "max" for a Q-network), an evaluator made
    of one (``from_torch``, ``from_state_dict``, ``from_sb3``, or a ``TorchEvaluator`` over such a
    module) or a Stable-Baselines3 PPO/MaskablePPO/DQN model (its critic or Q-network). A
    ``torch.nn.Sequential`` that no kernel compiles (a convolutional network) is written as its
    layers' description, and loads as a ``TorchEvaluator`` on the searches' Python path. Only tensors and plain
    values are written, so the file loads without running code anywhere (``weights_only=True``);
    this is how a network whose file cannot be read safely (a custom SB3 policy, a pickled
    module) is passed on: load it in your own process, then save it here::

        model = MaskablePPO.load("model.zip")       # your file, in your process
        save(model, make_game("trilobite"), "critic.pt")
    """
    from tablegym.models.checkpoint import save_checkpoint

    flatten = None
    if isinstance(model, TorchEvaluator):
        model, output, flatten = model.module, output or model.output, model.flatten
    if isinstance(model, NetEvaluator):
        layers, kind = model.layers, model.output
        if output not in (None, kind):
            raise ExportError(f"the evaluator {model.name!r} has output={kind!r}, not {output!r}")
    elif isinstance(model, nn.Module):
        try:
            layers, kind = sequential_layers(model), output or "value"
        except UnsupportedLayerError as err:  # no compiled kernel runs it: the Python path's file
            return _save_module(model, game, path, output or "value", flatten, metadata, err)
    else:
        net, kind = sb3_network(model)
        if output not in (None, kind):
            raise ExportError(f"an SB3 {type(model).__name__} exports output={kind!r}, not {output!r}")
        layers = sequential_layers(net)
    NetEvaluator(game, layers, output=kind)  # refuse now what could not be loaded later
    state = {}
    for i, (w, b, _, _) in enumerate(layers):
        state[f"{i}.weight"], state[f"{i}.bias"] = torch.from_numpy(w.copy()), torch.from_numpy(b.copy())
    meta = {
        **(metadata or {}),
        "game": game.spec.name,
        "options": dict(game.spec.options),
        "network": EXPORTED,
        "output": kind,
        "activations": [[act, float(p)] for _, _, act, p in layers],
    }
    return save_checkpoint(path, state=state, metadata=meta)


EXPORTED_MODULE = "exported-module"
"""The ``network`` of a saved module that runs on the Python path (tablegym.models.module_file)."""


def _save_module(
    model: nn.Module,
    game: Game,
    path: str | os.PathLike,
    output: str,
    flatten: bool | None,
    metadata: dict[str, Any] | None,
    why: UnsupportedLayerError,
) -> Path:
    """A module no compiled kernel runs (a CNN), saved as its layers' description and tensors:
    ``eval=learned:PATH`` rebuilds it as a ``TorchEvaluator`` on the searches' Python path."""
    from tablegym.models.checkpoint import save_checkpoint
    from tablegym.models.module_file import LAYERS, describe, rebuild

    try:
        spec, tensors = describe(model)
    except ValueError as exc:
        raise UnsupportedLayerError(
            f"{why}; save() writes other networks for the Python path only as a torch.nn.Sequential of {', '.join(LAYERS)}: {exc}"
        ) from None
    module = rebuild(spec, tensors, str(path))
    ev = TorchEvaluator(module, game, output=output, flatten=flatten)
    ev.batch([game.new_initial_state()], 0)  # refuse now (one line) what could not be searched with later
    meta = {
        **(metadata or {}),
        "game": game.spec.name,
        "options": dict(game.spec.options),
        "network": EXPORTED_MODULE,
        "output": output,
        "flatten": ev.flatten,
        "layers": spec,
    }
    return save_checkpoint(path, state=tensors, metadata=meta)


def is_exported(meta: dict[str, Any]) -> bool:
    return meta.get("network") in (EXPORTED, EXPORTED_MODULE)


def load_exported(game: Game, path: str | os.PathLike) -> NetEvaluator | TorchEvaluator:
    """A network saved by ``save`` as an evaluator of ``game`` (checked: same game and rules):
    compiled where it was saved as such, else a ``TorchEvaluator`` for the Python path."""
    from tablegym.models.checkpoint import CheckpointError, load_checkpoint

    payload = load_checkpoint(path, game=game.spec.name, options=game.spec.options)  # budgets, storages, finite
    meta, state = payload["metadata"], payload["model"]
    if not is_exported(meta):
        raise CheckpointError(f"checkpoint {str(path)!r} is not an exported network (saved by tablegym.models.export.save)")
    if meta["network"] == EXPORTED_MODULE:
        from tablegym.models.module_file import rebuild

        output, flatten = meta.get("output"), meta.get("flatten")
        if output not in OUTPUTS or type(flatten) is not bool:
            raise CheckpointError(f"checkpoint {str(path)!r} does not say its network's output and input shape")
        module = rebuild(meta.get("layers"), state, str(path))
        return TorchEvaluator(module, game, name=f"learned:{path}", output=output, flatten=flatten)
    try:
        acts = [(str(a), float(p)) for a, p in meta["activations"]]
        layers = [
            (state[f"{i}.weight"].double().numpy(), state[f"{i}.bias"].double().numpy(), a, p) for i, (a, p) in enumerate(acts)
        ]
        return NetEvaluator(game, layers, name=f"learned:{path}", output=str(meta["output"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} does not match its network description: {exc}") from None


class TorchEvaluator(Evaluator):
    """Any torch module on the mover's observation, for the Python path of every searcher
    (``compiled=False``): slower than an exported network, but any architecture. ``batch``
    values many positions in one forward pass.

    The module gets a float32 batch in the observation's own shape, ``(B, *observation_shape)``
    (``game.spec.observation_shape``, what the Gymnasium env gives; Trilobite: ``(B, 3, 7, 8)``
    board planes), so a convolutional network works as trained on the env. A module whose first
    layer is a ``Linear`` (the networks ``from_torch`` compiles) gets the flattened ``(B, size)``
    that the compiled path reads; ``flatten`` says which when given. It returns one value per
    position, shape ``(B,)`` or ``(B, 1)`` (``output="value"``), or one per action,
    ``(B, num_actions)`` (``output="max"``); anything else is an ``ExportError`` in one line.
    """

    def __init__(
        self, module: nn.Module, game: Game, *, name: str = "torch", output: str = "value", flatten: bool | None = None
    ) -> None:
        if output not in OUTPUTS:
            raise ExportError(f"output must be one of {OUTPUTS}, got {output!r}")
        self.module = module.eval()
        self.name = name
        self.game = game.spec.name
        self.options = dict(game.spec.options)
        self.inputs = "observation"
        self.players = game.spec.num_players
        self.output = output
        self.num_actions = game.spec.num_actions
        first = next((m for m in module.modules() if not list(m.children())), None)
        self.flatten = isinstance(first, nn.Linear) if flatten is None else flatten
        """Whether the module gets ``(B, size)`` rather than ``(B, *observation_shape)``."""
        self.input_shape = (observation_size(game),) if self.flatten else tuple(game.spec.observation_shape)
        self.win_value = self.bound = 1.0

    def evaluate(self, state: State, player: int) -> float:
        return float(self.batch([state], player)[0])

    def _forward(self, x: np.ndarray) -> np.ndarray:
        """The module's outputs for the batch ``x``, as (B, width), or a one-line ``ExportError``."""
        try:
            with torch.no_grad():
                out = self.module(torch.as_tensor(x, dtype=torch.float32))
        except RuntimeError as err:  # torch's shape errors
            from tablegym.models.checkpoint import first_line

            raise InputSizeError(
                f"the network {self.name!r} refused a batch of shape {tuple(x.shape)} (the "
                f"observation {'flattened' if self.flatten else 'in its own shape'}): "
                f"{first_line(err)}"
            ) from err
        if not isinstance(out, torch.Tensor):
            raise ExportError(f"the network {self.name!r} returned a {type(out).__name__}, not a tensor")
        b = x.shape[0]
        if self.output == "value":
            want, allowed, what = 1, [(b,), (b, 1)], "one value per position"
        else:
            want, allowed, what = self.num_actions, [(b, self.num_actions)], "one value per action"
        if tuple(out.shape) not in allowed:
            raise ExportError(
                f"the network {self.name!r} gave an output of shape {tuple(out.shape)} for {b} "
                f"position(s); output={self.output!r} needs {what}, shape " + " or ".join(map(str, allowed))
            )
        return out.double().numpy().reshape(b, want)

    def batch(self, states: Iterable[State], player: int) -> np.ndarray:
        """Values of ``states`` for ``player`` (exact at finished games), one forward pass."""
        states = list(states)
        values = np.zeros(len(states))
        live = []
        for i, s in enumerate(states):
            check_game(self, s)
            if s.is_terminal():
                r = s.returns()
                values[i] = r[player] if len(r) > player else 0.0
            else:
                live.append(i)
        if live:
            # The mover's view; one player, or a chance node (never a searched leaf), is seen as is.
            movers = [
                s.current_player() if s.current_player() >= 0 and self.players > 1 else player for s in (states[i] for i in live)
            ]
            x = np.stack([states[i].observation(m).reshape(self.input_shape) for i, m in zip(live, movers)])
            out = self._forward(x)
            for row, i, m in zip(out, live, movers):
                s = states[i]
                if self.output == "value":
                    v = float(row[0])
                elif s.current_player() == CHANCE:  # no decision at a chance node, as the compiled kernels say
                    v = -np.inf
                else:
                    v = float(np.max(row[s.legal_actions()]))
                values[i] = v if m == player else -v
        return values


__all__ = [
    "ExportError",
    "InputSizeError",
    "NetEvaluator",
    "TorchEvaluator",
    "UnsupportedLayerError",
    "WrongGameError",
    "from_sb3",
    "from_state_dict",
    "from_torch",
    "load_exported",
    "load_sb3_evaluator",
    "observation_size",
    "save",
    "sequential_layers",
]
