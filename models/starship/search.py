"""The learned starship generator that searches: the fitted editing policy proposes, a value
network judges partial ships, a beam keeps the best.

Why a search: an editing policy drawn tile by tile (``learned.py``) cannot count. Whether a ship
ends within its thruster budget, with an ammunition store beside each weapon or with no corridor
that no path needs is decided by many edits far apart, and one draw after another strays. Here
the ship is built in segments of ``segment`` cursor steps (one row of the grid by default): each
of the ``beam`` partial ships kept is continued ``branch`` times by drawing from the policy, the
value network scores every continuation, and the ``beam`` best (distinct) ones go on. After the
last segment every continuation is complete and is scored exactly (``score``: the audit's rules
passed plus quality v2), and the best is the generator's ship. The value network is trained on
the policy's own finished ships (``training/starship/value.py``): it predicts the final score
from the partial ship, so a plan that leaves a needless corridor or a weapon without ammunition is
scored before it is committed. This is the package's central idea, a learned evaluator inside a
search, applied to generation.

Without a value network (``value=None``, beam 1) no partial ship is chosen: ``branch`` ships are
drawn whole, side by side, and the best finished one is kept. That is the shipped
``models/checkpoints/starship_search.pt`` (the stage-6 policy of ``learned.CHECKPOINT``, 16 branches):
on tuning seeds the value networks trained so far (``training/starship/value.py``) lost to it at the
same number of branches, since a beam of partial ships narrows what the final choice can pick from
(results/starship/README.md).

The branches run as boards of the compiled vector env (``StarshipVectorEnv``, whose
``take_boards`` copies a kept board into the branch's slots), and each step is one forward pass
of the policy over all of them. Edits are drawn from a stream seeded by the ship's seed
(``learned.sample_stream``), so a seed gives the same ship every time.

    >>> gen = SearchGenerator.load("models/checkpoints/starship_search.pt")  # doctest: +SKIP
    >>> ship, info = gen.generate(2000)                                 # doctest: +SKIP
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from tablegym.envs.starship.layout import RULES, audit, layout_quality
from tablegym.envs.starship.ship import Ship
from tablegym.models.checkpoint import CheckpointError, declared_widths, rebuild, save_checkpoint
from tablegym.models.learned import CHECKPOINT_DIR
from tablegym.models.starship.learned import (
    GAME,
    LearnedGenerator,
    editing_env,
    hidden_widths,
    linear_state,
    num_inputs,
    policy_layers,
    sample_stream,
)

CHECKPOINT = CHECKPOINT_DIR / "starship_search.pt"
"""The shipped searching generator: the policy of ``learned.CHECKPOINT`` drawing 16 ships whole
(no value network) and keeping the best."""
MAX_BOARDS = 1024
"""The most branches a search may edit side by side (beam x branch): each is a ship of the vector
env, about 40 kB on a 32 x 32 grid, so a checkpoint asking for more is refused before any is made."""
COUNT_SCALE = 64.0
"""Every channel's tile count is divided by this (thruster and weapon tiles count their points)."""
NUM_SCORED = 9
"""What the compiled env scores at every step: the quality score, its six terms, whether the ship
is valid, and the share of the four validity rules it passes."""


def score(ship: Ship) -> float:
    """What the search maximises, in [0, 1]: the share of the audit's rules the ship passes
    (validity among them), plus quality v2, over two."""
    result = audit(ship)
    return (sum(result.rules.values()) / len(RULES) + layout_quality(ship, result)) / 2


def num_value_inputs(shape: tuple[int, ...]) -> int:
    """The length of ``Branches.value_inputs`` for observations of ``shape`` (C, H, W)."""
    return shape[0] + 1 + NUM_SCORED


def value_layers(n_inputs: int, sizes: list[int]) -> torch.nn.Sequential:
    """Linear + ReLU for each size, then one output: the predicted final ``score`` of the ship,
    less the mean over the policy's ships of the same seed (only branches of one seed are ever
    compared)."""
    return policy_layers(n_inputs, sizes, 1)


class Branches:
    """``boards`` ships of one seed edited in lockstep in the compiled vector env, each step's
    edits drawn from the policy in one forward pass.

    The forward pass is the policy's (``learned.policy_inputs`` into its layers), computed in a
    cheaper order: the first layer's share from the pooled grid changes only where a board's
    tiles change (an edit), so it is kept a board and recomputed for the edited boards; the
    cursor, the same tile on every board in lockstep, adds one column of that layer; the crop is
    one window of every board. ``logits`` gives the plain computation to check it against."""

    def __init__(self, policy: torch.nn.Sequential, env_kwargs: dict[str, Any], radius: int, pool: int, boards: int) -> None:
        from tablegym.envs.starship.vector import StarshipVectorEnv

        self.policy, self.radius, self.pool = policy.eval(), radius, pool
        self.venv = StarshipVectorEnv(num_envs=boards, copy=False, **env_kwargs)
        if self.venv.proto.representation != "narrow":
            raise ValueError("the search edits with the narrow representation (one cursor, the same on every board)")
        self.max_steps = int(self.venv.proto.max_steps)
        self.boards = boards
        self.obs = np.zeros((boards, *self.venv.single_observation_space.shape), np.uint8)
        self.info: dict[str, Any] = {}
        self.steps = 0
        channels, rows, cols = self.obs.shape[1:]
        first, *rest = list(policy)
        n_crop = channels * (2 * radius + 1) ** 2
        weight = first.weight.detach()
        grid = weight[:, n_crop:].reshape(-1, channels, rows // pool, cols // pool)
        self._w_crop = weight[:, :n_crop].T.contiguous()
        self._w_tiles = grid[:, :-1].reshape(grid.shape[0], -1).T.contiguous()
        self._w_cursor = grid[:, -1].reshape(grid.shape[0], -1).T.contiguous() / pool**2
        self._bias = first.bias.detach()
        self._rest = torch.nn.Sequential(*rest)
        self._tiles_part = torch.zeros(boards, weight.shape[0])

    def _refresh(self, rows: np.ndarray) -> None:
        """The pooled grid's share of the first layer for the boards ``rows``."""
        if len(rows):
            tiles = torch.from_numpy(self.obs[rows, :-1]).float()
            pooled = F.avg_pool2d(tiles, self.pool).reshape(len(rows), -1)
            self._tiles_part[torch.from_numpy(rows)] = pooled @ self._w_tiles + self._bias

    def reset(self, seed: int) -> None:
        """Every board dealt the start ship of ``seed``."""
        self.obs, self.info = self.venv.reset(seed=[seed] * self.boards)
        self.steps = 0
        self._refresh(np.arange(self.boards))

    def take(self, src: np.ndarray) -> None:
        """Board ``i`` becomes a copy of board ``src[i]``."""
        self.obs = self.venv.take_boards(src)
        self.info = {}  # (what the env scored is a step's: none yet for the copies)
        self._tiles_part = self._tiles_part[torch.from_numpy(np.asarray(src, np.int64))]

    def cursor(self) -> tuple[int, int]:
        """The cursor's tile (every board's: they step in lockstep)."""
        y, x = divmod(int(self.obs[0, -1].argmax()), self.obs.shape[3])
        return y, x

    @torch.no_grad()
    def logits(self) -> torch.Tensor:
        """The policy's logits on every board, in the cheaper order (see the class docstring)."""
        r = self.radius
        _, channels, rows, cols = self.obs.shape
        y, x = self.cursor()
        window = np.zeros((self.boards, channels, 2 * r + 1, 2 * r + 1), np.float32)
        y0, y1, x0, x1 = max(y - r, 0), min(y + r + 1, rows), max(x - r, 0), min(x + r + 1, cols)
        window[:, :, y0 - y + r : y1 - y + r, x0 - x + r : x1 - x + r] = self.obs[:, :, y0:y1, x0:x1]
        cell = (y // self.pool) * (cols // self.pool) + x // self.pool
        hidden = torch.from_numpy(window.reshape(self.boards, -1)) @ self._w_crop + self._tiles_part + self._w_cursor[cell]
        return self._rest(hidden)

    @torch.no_grad()
    def advance(self, steps: int, rng: np.random.Generator) -> None:
        """``steps`` steps of every board, each edit drawn from the policy's probabilities."""
        for _ in range(steps):
            logits = self.logits().double()
            mask = torch.from_numpy(self.venv.action_masks())
            probs = torch.softmax(logits.masked_fill(~mask, -torch.inf), 1).numpy()
            cdf = np.cumsum(probs, 1)
            u = rng.random(self.boards)[:, None] * cdf[:, -1:]
            actions = np.minimum((cdf <= u).sum(1), probs.shape[1] - 1)
            self.obs, _, terminated, _, self.info = self.venv.step(actions)
            self.steps += 1
            if terminated.any():
                raise RuntimeError("a board's episode ended before its last step: the editing env must not stop early")
            self._refresh(np.flatnonzero(actions))

    def observations(self) -> torch.Tensor:
        return torch.from_numpy(self.obs).float()

    def value_inputs(self) -> torch.Tensor:
        """(boards, ``num_value_inputs``): every channel's tile count (how many thruster points,
        ammunition tiles, ... so far), the share of the episode's steps done, and what the
        compiled env scored for each ship at its last step (``NUM_SCORED``). Counts and scores, not
        the grid: fitted on a few thousand finished ships, a network reading the pooled grid
        learned each seed's hull and its mean score, not which branch of a seed ends better."""
        from tablegym.envs.starship.scoring import TERMS

        info = self.info
        if "quality" not in info:
            raise RuntimeError("value_inputs needs a step first: what the env scored is a step's")
        counts = self.obs.sum((2, 3), dtype=np.float64) / COUNT_SCALE
        progress = np.full((self.boards, 1), self.steps / self.max_steps)
        terms = [info["terms"][k] for k in TERMS]
        scored = np.column_stack([info["quality"], *terms, info["valid"], info["rules_passed"] / 4])
        return torch.from_numpy(np.concatenate([counts, progress, scored], 1)).float()

    def ship(self, i: int) -> Ship:
        return self.venv.ship(i)


class SearchGenerator(LearnedGenerator):
    """A fitted editing policy and a value network; ``generate(seed)`` builds one ship by beam
    search over the policy's draws (see the module docstring)."""

    def __init__(
        self,
        net: torch.nn.Sequential,
        value: torch.nn.Sequential | None,
        env_kwargs: dict[str, Any],
        radius: int,
        pool: int,
        metadata: dict[str, Any] | None = None,
        *,
        beam: int = 4,
        branch: int = 4,
        segment: int = 32,
    ) -> None:
        super().__init__(net, env_kwargs, radius, pool, metadata)
        if beam < 1 or branch < 1 or segment < 1:
            raise ValueError(f"beam, branch and segment must be at least 1, got {beam}, {branch}, {segment}")
        if beam * branch > MAX_BOARDS:
            raise ValueError(f"beam x branch must be at most {MAX_BOARDS} boards, got {beam} x {branch}")
        if value is None and beam != 1:
            raise ValueError(f"a search without a value network keeps no partial ships: beam must be 1, got {beam}")
        self.value = value.eval() if value is not None else None
        self.beam, self.branch, self.segment = beam, branch, segment
        self.select = score
        """What picks the finished ship (``score``; an experiment may compare another)."""
        self._branches: Branches | None = None

    @classmethod
    def from_payload(cls, path: Path, payload: dict[str, Any]) -> SearchGenerator:
        """The generator of a checkpoint that ``save`` wrote (read by ``LearnedGenerator.load``)."""
        meta, state = payload["metadata"], payload["model"]
        what = f"checkpoint {str(path)!r}"
        try:
            env = editing_env(meta["env_kwargs"])
            radius, pool = int(meta["radius"]), int(meta["pool"])
            policy_state = {k[len("policy.") :]: v.float() for k, v in state.items() if k.startswith("policy.")}
            value_state = {k[len("value.") :]: v.float() for k, v in state.items() if k.startswith("value.")}
            sizes = declared_widths(meta["sizes"], what, most=len(policy_state))
            n_in = num_inputs(env.observation_space, radius, pool)
            net = rebuild(lambda: policy_layers(n_in, list(sizes), int(env.action_space.n)), policy_state, what)
            value = None
            if meta["value_sizes"] is not None or value_state:
                value_sizes = declared_widths(meta["value_sizes"], what, most=len(value_state))
                n_value = num_value_inputs(tuple(env.observation_space.shape))
                value = rebuild(lambda: value_layers(n_value, list(value_sizes)), value_state, what)
            search = meta["search"]
            return cls(
                net,
                value,
                meta["env_kwargs"],
                radius,
                pool,
                meta,
                beam=int(search["beam"]),
                branch=int(search["branch"]),
                segment=int(search["segment"]),
            )
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise CheckpointError(f"{what} is not a searching starship generator: {first}") from None

    def save(self, path: str | os.PathLike, metadata: dict[str, Any] | None = None) -> Path:
        """Write the policy, the value network and the search's settings as one checkpoint
        (float16 weights) that ``LearnedGenerator.load`` reads back as this generator."""
        state = linear_state(self.net, "policy.")
        if self.value is not None:
            state.update(linear_state(self.value, "value."))
        meta = {
            **self.metadata,
            **(metadata or {}),
            "game": GAME,
            "env_kwargs": dict(self.env_kwargs),
            "radius": self.radius,
            "pool": self.pool,
            "sizes": hidden_widths(self.net),
            "value_sizes": None if self.value is None else hidden_widths(self.value),
            "decode": "search",
            "search": {"beam": self.beam, "branch": self.branch, "segment": self.segment},
        }
        return save_checkpoint(path, state=state, metadata=meta)

    def branches(self) -> Branches:
        """The boards the search edits on (built once)."""
        if self._branches is None:
            self._branches = Branches(self.net, self.env_kwargs, self.radius, self.pool, self.beam * self.branch)
        return self._branches

    @torch.no_grad()
    def generate(self, seed: int, targets: dict[str, float] | None = None) -> tuple[Ship, dict[str, Any]]:
        """The best ship the search finds for ``seed``, and a summary: its ``score`` and the
        scores of every finished branch. Without a value network the branches are drawn whole,
        side by side, and only the finished ships are compared."""
        if targets:
            raise ValueError("the searching generator was trained without targets")
        b = self.branches()
        b.reset(seed)
        rng = sample_stream(seed)
        kept = np.zeros(self.beam, np.int64)  # every board holds the start ship
        segment = self.segment if self.value is not None else b.max_steps
        while True:
            b.take(np.repeat(kept, self.branch))
            b.advance(min(segment, b.max_steps - b.steps), rng)
            if b.steps >= b.max_steps or self.value is None:
                break
            values = self.value(b.value_inputs())[:, 0].numpy()
            kept = _best_distinct(values, b, self.beam)
        ships = [b.ship(i) for i in range(b.boards)]
        scores = np.array([self.select(s) for s in ships])
        best = int(np.argmax(scores))
        return ships[best], {"score": float(scores[best]), "scores": scores.tolist(), "seed": seed}


def _best_distinct(values: np.ndarray, b: Branches, k: int) -> np.ndarray:
    """The ``k`` boards of highest value, a ship kept once (repeats fill in only when fewer than
    ``k`` ships differ)."""
    order = np.argsort(-values, kind="stable")
    seen: set[bytes] = set()
    first, repeats = [], []
    for i in order:
        ship = b.ship(int(i))
        key = ship.tiles.tobytes() + ship.part.tobytes()
        (repeats if key in seen else first).append(int(i))
        seen.add(key)
    return np.array((first + repeats)[:k], np.int64)
