"""A trained masked policy as a player: ``policy:path=RUN/checkpoint.pt`` in every front door.

Why here: the issue that asks for PPO asks for "the policy alone (greedy, masked, no search)"
to play the same matches as the searchers, so the actor must be an ``Agent`` that
``make_agent`` builds, not a loop inside the trainer. The network classes live in models/ (not
in training/ppo.py, which trains them) so that the dependency points one way: rules <- search
<- models <- training.

The agent plays the argmax of the actor's logits over the legal actions, on the observation the
vector envs give the player to move (``State.observation(player)``, flattened): the one the
actor was trained on.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from torch import nn

from tablegym.envs.core import Game, State
from tablegym.models.checkpoint import CheckpointError, declared_widths, load_checkpoint, rebuild

MASKED = -1e9
"""The logit of an illegal action: zero probability after the softmax, finite for the gradient."""


def mlp(inputs: int, hidden: tuple[int, ...], outputs: int, last_gain: float) -> nn.Sequential:
    """Linear-ReLU layers, orthogonal weights (CleanRL's initialisation), zero biases."""
    layers: list[nn.Module] = []
    width = inputs
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, outputs))
    for m in layers:
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, np.sqrt(2) if m is not layers[-1] else last_gain)
            nn.init.zeros_(m.bias)
    return nn.Sequential(*layers)


def qnetwork(inputs: int, actions: int, hidden: tuple[int, ...]) -> nn.Sequential:
    """The Q-network of ``--algo dqn``: a ReLU MLP from the flattened observation to one value an
    action (what ``tablegym.models.export.save(..., output="max")`` compiles)."""
    return mlp(inputs, tuple(hidden), actions, 1.0)


def value_network(inputs: int, hidden: tuple[int, ...]) -> nn.Sequential:
    """V of ``--algo negamax-dqn``: a ReLU MLP from the flattened observation of the player to move
    to a value in [-1, 1] (what ``tablegym.models.export.save`` compiles as a critic)."""
    return nn.Sequential(*mlp(inputs, tuple(hidden), 1, 1.0), nn.Tanh())


class ActorCritic(nn.Module):
    """A masked policy and a value, each its own MLP on the flattened observation (the critic
    alone is what searchers use as a leaf evaluator)."""

    def __init__(self, inputs: int, actions: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        self.actor = mlp(inputs, hidden, actions, 0.01)
        self.critic = mlp(inputs, hidden, 1, 1.0)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def policy(self, x: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
        return torch.distributions.Categorical(logits=self.actor(x).masked_fill(~mask, MASKED))


def declared_shape(shape: Any, what: str, layers: int, refusal: str) -> tuple[int, int, tuple[int, ...]]:
    """(inputs, actions, hidden widths) of the network a checkpoint's metadata describes, at
    most ``layers`` widths (``declared_widths``): sizes from a file are checked before a network
    is built of them. A ``CheckpointError`` saying ``what`` and ``refusal`` where they are
    missing or not numbers."""
    try:
        return int(shape["inputs"]), int(shape["actions"]), declared_widths(shape["hidden"], what, most=layers)
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{what} {refusal}: {exc}") from None


def load_actor_critic(path: str | os.PathLike, game: Game) -> ActorCritic:
    """The network of a PPO checkpoint (training/ppo.py's ``checkpoint.pt``) made for ``game``
    under its rule options; a ``CheckpointError`` in one line otherwise."""
    payload = load_checkpoint(path, game=game.spec.name, options=dict(game.spec.options))
    shape = payload.get("metadata", {}).get("ppo")
    if not isinstance(shape, dict):
        raise CheckpointError(
            f"{str(path)!r} holds no PPO policy (train one with tablegym train GAME --algo ppo; "
            f"a critic written by --out plays as eval=learned:PATH instead)"
        )
    what = f"checkpoint {str(path)!r}"
    state = payload["model"]
    inputs, actions, hidden = declared_shape(shape, what, len(state), "does not match its network description")
    net = rebuild(lambda: ActorCritic(inputs, actions, hidden), state, what)  # shapes checked before it is built
    net.eval()
    return net


class PolicyAgent:
    """The greedy masked policy of a PPO checkpoint: no search, one forward pass a move."""

    def __init__(self, net: ActorCritic, game: Game, name: str = "policy") -> None:
        self.net, self.game, self.name = net, game, name
        first = game.new_initial_state()
        while first.current_player() < 0 and not first.is_terminal():
            first = first.child(first.chance_outcomes()[0][0])
        inputs = first.observation(first.current_player()).size
        if inputs != net.actor[0].in_features:
            raise CheckpointError(
                f"the policy reads {net.actor[0].in_features} inputs but "
                f"{game.spec.name} {dict(game.spec.options)} observations have {inputs}"
            )

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        x = torch.as_tensor(np.asarray(state.observation(state.current_player()), dtype=np.float32).reshape(1, -1))
        legal = state.legal_actions()
        with torch.no_grad():
            logits = self.net.actor(x)[0].numpy()
        return int(legal[int(np.argmax(logits[legal]))])


def load_qnet(checkpoint: str | os.PathLike) -> nn.Sequential:
    """The online Q-network of a ``--algo dqn`` run's ``checkpoint.pt``: the shapes its metadata
    declares are checked against the file's before the network is built (``rebuild``)."""
    net = _run_network(load_checkpoint(checkpoint), checkpoint, "dqn")
    assert isinstance(net, nn.Sequential)  # qnetwork's, as _run_network builds it for "dqn"
    return net


def _run_network(payload: dict, path: str | os.PathLike, key: str) -> nn.Module:
    """The network a trainer's run checkpoint holds under ``key`` (its metadata's shape entry):
    PPO's actor-critic, DQN's online Q-network or negamax DQN's online V."""
    what = f"checkpoint {str(path)!r}"
    metadata = payload.get("metadata")
    shape = metadata.get(key) if isinstance(metadata, dict) else None
    prefix = {"ppo": "", "dqn": "q.", "negamax_dqn": "v."}[key]
    state = {k[len(prefix) :]: v for k, v in payload["model"].items() if k.startswith(prefix)}
    refusal = f"holds no {key} network of the shape its metadata says"
    if key == "negamax_dqn":
        if not isinstance(shape, dict):
            raise CheckpointError(f"{what} {refusal}")
        inputs, _, hidden = declared_shape({**shape, "actions": 1}, what, len(state), refusal)
        return rebuild(lambda: value_network(inputs, hidden), state, what)
    inputs, actions, hidden = declared_shape(shape, what, len(state), refusal)
    build = (lambda: ActorCritic(inputs, actions, hidden)) if key == "ppo" else (lambda: qnetwork(inputs, actions, hidden))
    return rebuild(build, state, what)


RUN_KEYS = ("ppo", "dqn", "negamax_dqn")
"""The metadata entries by which a vector trainer's run checkpoint names its network."""


def run_evaluator(game: Game, path: str | os.PathLike, metadata: dict) -> Any:
    """The leaf evaluator in a vector trainer's run checkpoint (``RUN/checkpoint.pt`` of ``--algo
    ppo``, ``imitate``, ``dqn`` or ``negamax-dqn``): the critic, max Q or V, compiled as its
    ``--out`` file would be, so ``eval=learned:RUN/checkpoint.pt`` needs no second file; None for
    a checkpoint of another kind."""
    from tablegym.models.export import from_torch

    key = next((k for k in RUN_KEYS if k in metadata), None)
    if key is None:
        return None
    payload = load_checkpoint(path, game=game.spec.name, options=dict(game.spec.options))
    net = _run_network(payload, path, key)
    module = net.critic if isinstance(net, ActorCritic) else net  # PPO's critic
    return from_torch(module, game, output="max" if key == "dqn" else "value", name=f"learned:{path}")
