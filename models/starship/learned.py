"""The learned starship generator: a policy trained by MaskablePPO (``rl.py``) that edits the
env's start ship until the env ends the episode.

Why a file of its own: the trained SB3 model (``model.zip``, about 18 MB with its optimizer and
value head) is what training needs; generating a ship needs only the policy's three linear
layers. ``export`` keeps those, in float16 (about 3 MB), with the env options the policy was
trained under, as a tablegym checkpoint (``models/checkpoint.py``: loaded without running
pickled code). The evaluation in ``rl.py`` plays the exported weights, so the table's learned
row is what the shipped checkpoint builds.

    >>> gen = LearnedGenerator.load()                      # doctest: +SKIP
    >>> ship, info = gen.generate(7)                       # doctest: +SKIP

A step: the observation's cursor crop and pooled grid (``cursor_inputs``, the network
``rl.CursorView`` trains), the policy's logits, masked by the env's action mask, and the
highest one played (MaskablePPO's deterministic action), or, for a generator fitted to the
staged generator's edits (``imitate.py``, checkpoint metadata ``"decode": "sample"``), one drawn
from the policy's probabilities with a stream seeded by the ship's seed: a fitted policy spreads
its belief over the places the staged generator might put a part, and the highest logit at each
tile would put none.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Required, TypedDict, Unpack

import gymnasium
import numpy as np
import torch
import torch.nn.functional as F

from tablegym.envs.starship.ship import Ship
from tablegym.models.checkpoint import CheckpointError, declared_widths, load_checkpoint, rebuild, save_checkpoint
from tablegym.models.learned import CHECKPOINT_DIR

CHECKPOINT = CHECKPOINT_DIR / "starship_imitated.pt"
"""The shipped generator (``LearnedGenerator.load()``, ``tablegym starship --generator learned``):
the policy fitted to the staged generator's edits (``imitate.py``), which passes far more of the
audit's layout rules than the PPO policy (results/starship/README.md)."""
PPO_CHECKPOINT = CHECKPOINT_DIR / "starship.pt"
"""The MaskablePPO generator (``rl.py``, gated quality): what the targets and audit-reward runs
start from (``--init-from``), kept beside the shipped one."""
GAME = "starship"
SAMPLE_STREAM = 0x5A3
"""The first word of a sampling generator's per-seed stream (``sample_stream``), apart from the
env's own stream of the same seed."""


def sample_stream(seed: int) -> np.random.Generator:
    """The stream a sampling generator draws the edits of ship ``seed`` from."""
    return np.random.default_rng([SAMPLE_STREAM, seed])


def crop(obs: torch.Tensor, radius: int) -> torch.Tensor:
    """The (B, C, 2r + 1, 2r + 1) window of ``obs`` centred on each cursor (the last channel),
    zero outside the grid and zero when there is no cursor ("wide")."""
    batch, _, _, cols = obs.shape
    cursor = obs[:, -1].reshape(batch, -1)
    at = cursor.argmax(1)
    window = torch.arange(2 * radius + 1, device=obs.device)
    ys = (at // cols)[:, None] + window  # rows y - r .. y + r of the grid padded by r
    xs = (at % cols)[:, None] + window
    padded = F.pad(obs, (radius, radius, radius, radius))
    b = torch.arange(batch, device=obs.device)[:, None, None]
    out = padded[b, :, ys[:, :, None], xs[:, None, :]].permute(0, 3, 1, 2)
    return out * cursor.amax(1)[:, None, None, None]


def cursor_inputs(obs: torch.Tensor, radius: int, pool: int) -> torch.Tensor:
    """The crop around the cursor and the whole grid average-pooled ``pool`` x ``pool``, flat."""
    batch = obs.shape[0]
    return torch.cat([crop(obs, radius).reshape(batch, -1), F.avg_pool2d(obs, pool).reshape(batch, -1)], 1)


CONDITIONS = ("targets", "deficits")
"""The vectors of a dict observation that follow the grid's inputs, in this order."""


def policy_inputs(obs: torch.Tensor | dict[str, torch.Tensor], radius: int, pool: int) -> torch.Tensor:
    """``cursor_inputs`` of the grid, followed by the targets and the deficits when the env asks
    for targets (``conditioned.TargetStarshipEnv``'s dict observation)."""
    if isinstance(obs, dict):
        return torch.cat([cursor_inputs(obs["grid"], radius, pool), *(obs[k] for k in CONDITIONS if k in obs)], 1)
    return cursor_inputs(obs, radius, pool)


def num_inputs(space: Any, radius: int, pool: int) -> int:
    """The length of ``policy_inputs`` for observations of ``space`` (a Box grid, or a Dict of
    the grid, the targets and the deficits)."""
    extra = 0
    if isinstance(space, gymnasium.spaces.Dict):
        extra = sum(int(space[k].shape[0]) for k in CONDITIONS if k in space.spaces)
        space = space["grid"]
    channels, rows, cols = space.shape
    return channels * (2 * radius + 1) ** 2 + channels * (rows // pool) * (cols // pool) + extra


def editing_env(env_kwargs: dict[str, Any], targets: bool = False, caps: bool = False) -> Any:
    """The env a generator edits in: ``StarshipEnv``, or ``TargetStarshipEnv`` with ``targets``
    (its targets as upper bounds with ``caps``)."""
    from tablegym.envs.starship.conditioned import TargetStarshipEnv
    from tablegym.envs.starship.env import StarshipEnv

    if targets:
        return TargetStarshipEnv(caps=caps, **env_kwargs)
    return StarshipEnv(**env_kwargs)


def policy_layers(n_inputs: int, sizes: list[int], n_actions: int) -> torch.nn.Sequential:
    """Linear + ReLU for each size in ``sizes`` (the shared features, then the policy's hidden
    layers), then the linear layer of action logits."""
    layers: list[torch.nn.Module] = []
    for size in sizes:
        layers += [torch.nn.Linear(n_inputs, size), torch.nn.ReLU()]
        n_inputs = size
    return torch.nn.Sequential(*layers, torch.nn.Linear(n_inputs, n_actions))


def policy_linears(model: Any) -> list[torch.nn.Linear]:
    """The linear layers of a (Maskable)PPO policy whose features extractor is ``rl.CursorView``
    that generating needs: the shared features, the policy's hidden layers, the action logits."""
    policy = model.policy
    return [
        policy.features_extractor.fc[0],
        *(m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)),
        policy.action_net,
    ]


class PolicyOptions(TypedDict, total=False):
    """``save_policy``'s keyword arguments, which ``export`` passes on."""

    radius: Required[int]
    pool: int
    targets: bool
    caps: bool
    metadata: dict[str, Any] | None


def export(model: Any, env_kwargs: dict[str, Any], path: str | os.PathLike, **options: Unpack[PolicyOptions]) -> Path:
    """Write the policy of a trained (Maskable)PPO ``model`` whose features extractor is
    ``rl.CursorView`` as a generator checkpoint (float16 weights) at ``path``."""
    return save_policy(torch.nn.Sequential(*policy_linears(model)), env_kwargs, path, **options)


def linear_state(net: torch.nn.Sequential, prefix: str = "") -> dict[str, torch.Tensor]:
    """The weights of the linear layers of ``net`` (Linear, ReLU, ... as ``policy_layers`` builds),
    in float16, named as that Sequential names them (``prefix`` before each name)."""
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    state = {}
    for i, layer in enumerate(linears):
        state[f"{prefix}{2 * i}.weight"] = layer.weight.detach().to(torch.float16).clone()
        state[f"{prefix}{2 * i}.bias"] = layer.bias.detach().to(torch.float16).clone()
    return state


def hidden_widths(net: torch.nn.Sequential) -> list[int]:
    """The widths of the hidden layers of ``net`` (every linear layer's but the last)."""
    return [int(m.out_features) for m in net if isinstance(m, torch.nn.Linear)][:-1]


def save_policy(
    net: torch.nn.Sequential,
    env_kwargs: dict[str, Any],
    path: str | os.PathLike,
    *,
    radius: int,
    pool: int = 2,
    targets: bool = False,
    caps: bool = False,
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Write the linear layers of ``net`` (``policy_layers``' shape: features, hidden layers,
    action logits) as a generator checkpoint (float16 weights) at ``path``."""
    state = linear_state(net)
    meta = {
        "game": GAME,
        "env_kwargs": dict(env_kwargs),
        "targets": bool(targets),
        "caps": bool(caps),
        "radius": radius,
        "pool": pool,
        "sizes": hidden_widths(net),
        **(metadata or {}),
    }
    return save_checkpoint(path, state=state, metadata=meta)


class LearnedGenerator:
    """A trained editing policy and the env it edits in; ``generate(seed)`` builds one ship."""

    def __init__(
        self,
        net: torch.nn.Sequential,
        env_kwargs: dict[str, Any],
        radius: int,
        pool: int,
        metadata: dict[str, Any] | None = None,
        targets: bool = False,
        caps: bool = False,
    ) -> None:
        self.net = net.eval()
        self.env = editing_env(env_kwargs, targets, caps)
        self.targets = targets
        self.env_kwargs, self.radius, self.pool = dict(env_kwargs), radius, pool
        self.metadata = dict(metadata or {})

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> LearnedGenerator:
        """The generator in checkpoint ``path`` (default: the shipped one); a missing, corrupt or
        foreign file raises ``CheckpointError``."""
        path = CHECKPOINT if path in (None, "") else Path(path)
        payload = load_checkpoint(path, game=GAME)
        meta, state = payload["metadata"], payload["model"]
        if isinstance(meta, dict) and meta.get("decode") == "search":  # a policy searched over: search.py
            from tablegym.models.starship.search import SearchGenerator

            return SearchGenerator.from_payload(path, payload)
        try:
            targets, caps = bool(meta.get("targets", False)), bool(meta.get("caps", False))
            env = editing_env(meta["env_kwargs"], targets, caps)
            n_in = num_inputs(env.observation_space, int(meta["radius"]), int(meta["pool"]))
            sizes = declared_widths(meta["sizes"], f"checkpoint {str(path)!r}", most=len(state))
            net = rebuild(
                lambda: policy_layers(n_in, list(sizes), int(env.action_space.n)),
                {k: v.float() for k, v in state.items()},
                f"checkpoint {str(path)!r}",
            )
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise CheckpointError(f"checkpoint {str(path)!r} is not a starship generator: {first}") from None
        return cls(net, meta["env_kwargs"], int(meta["radius"]), int(meta["pool"]), meta, targets, caps)

    @torch.no_grad()
    def act(self, obs: np.ndarray | dict[str, np.ndarray], mask: np.ndarray, rng: np.random.Generator | None = None) -> int:
        """The policy's action among the allowed ones: the highest logit, or with ``rng`` one
        drawn from the policy's probabilities (a generator whose checkpoint says
        ``"decode": "sample"`` draws, from a stream seeded by the ship's seed)."""
        if isinstance(obs, dict):
            batch: Any = {k: torch.as_tensor(v[None], dtype=torch.float32) for k, v in obs.items()}
        else:
            batch = torch.as_tensor(obs[None], dtype=torch.float32)
        x = policy_inputs(batch, self.radius, self.pool)
        logits = self.net(x)[0]
        logits[~torch.as_tensor(mask, dtype=torch.bool)] = -torch.inf
        if rng is None:
            return int(logits.argmax())
        cdf = np.cumsum(torch.softmax(logits.double(), 0).numpy())
        return int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))  # (a masked action adds 0: never drawn)

    def generate(self, seed: int, targets: dict[str, float] | None = None) -> tuple[Ship, dict[str, Any]]:
        """The ship this policy builds from the env's start ship for ``seed``, and the env's last
        info; a generator trained with targets is asked for ``targets`` (missing ones are drawn
        from the seed, see ``conditioned``)."""
        env = self.env
        if targets and not self.targets:
            raise ValueError("this generator was trained without targets (train with --targets to ask for some)")
        obs, info = env.reset(seed=seed, options={"targets": targets} if targets else None)
        rng = sample_stream(seed) if self.metadata.get("decode") == "sample" else None
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(self.act(obs, env.action_masks(), rng))
            done = terminated or truncated
        return env.ship, info
