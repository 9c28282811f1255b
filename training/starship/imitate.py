"""The learned starship generator fitted to the staged generator's own edits (behaviour cloning).

``python -m tablegym.training.starship.imitate [--seeds N] [--epochs E] [--rollouts R] [--out PATH]``

Why: a generator trained by PPO on a score learns what the score pays for, and the score's holes
with it (results/starship: open corridor floors, weapons inside the hull, 1.7 of the 13 audit
rules against the staged generator's 12.96). The staged generator shows what a ship is. From the
env's start ship (stages 1-6 of the seed, as ``StarshipEnv`` deals it) the rest of the staged
ship for that seed (stages 7-14: thrusters, weapons, supplies, crew, corridors, fill, doors) can be
written by the env's own cursor in row-major passes over the grid: the first stamps each new part
at its top-left tile, the second writes every tile that differs, the third armours any corridor
tile no crew path needs (the staged fill stage's test). ``teacher_action`` is that edit; replayed
in the env with ``masks="safe"`` it builds the staged ship tile for tile and no edit of it is
masked (``tests/test_starship_imitate.py``). The policy (``learned.py``'s network: the cursor's
crop and the pooled grid into an MLP) is fitted to pick the teacher's edit (cross-entropy over the
allowed edits). It generates by drawing each edit from its probabilities
(``learned.LearnedGenerator``, ``"decode": "sample"``, a stream per seed): the staged generator's
choice of where a weapon or a cabin goes is random given the start ship, so the highest logit at
each tile would place none.

On the staged ship the third pass has nothing to do, so demonstrations alone never show it; drawn
edit by edit, the second pass leaves corridor that no path needs. With ``--rollouts R`` the
fitted policy draws its first two passes on R of the seeds, the teacher's third pass on those
ships is recorded, and the fit goes on over both (DAgger's idea, for the one pass that needs it).

Seeds: the demonstrations come from seeds 10,000 on, apart from the audit's training (0-399) and
held-out (2000-2199) seeds, so the classifiers see ships the policy never copied. The last
twentieth of the recorded seeds is held out to report how often the policy picks the teacher's
edit on ships it did not see. The checkpoint is ``learned.py``'s format (float16), written after
every epoch; ``--resume`` starts from the weights of one (``--epochs 0``: no more fitting on the
demonstrations before the rollouts).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from tablegym.envs.limits import load_npz
from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.env import BRUSHES, OBS_CHANNELS, StarshipEnv
from tablegym.envs.starship.layout import DETOUR
from tablegym.envs.starship.ship import ARMOR, CORRIDOR, FACED, FACING, KIND, PX, PY, VARIANT, Ship
from tablegym.models.starship.learned import num_inputs, policy_inputs, policy_layers, sample_stream, save_policy
from tablegym.training.files import open_atomic
from tablegym.training.flags import OneLineParser, check_writable

PROG = "python -m tablegym.training.starship.imitate"


def editing_env(passes: int = 2, start: str = "partial") -> dict[str, Any]:
    """The editing env of a fitted generator: ``passes`` passes of the cursor (parts, tiles, and
    with 3 the fill), an episode that does not stop early (the staged ships need 145 edits on
    average from stage 6, up to ~250, and about 160 from the empty hull), from the env's ``start``
    ship ("partial": stages 1-6 of the staged generator; "empty": its hull alone, stages 1-2)."""
    return dict(
        representation="narrow",
        start=start,
        size=32,
        max_steps=passes * 32 * 32,
        reward="gated",
        masks="safe",
        max_changes=4096,
        patience=4096,
    )


ENV_KWARGS = editing_env(2)
"""The shipped generator's env: two passes (with the third, the fill, it passes more of the audit's
rules, but a conv net tells its ships from staged ones: results/starship/README.md)."""
FIRST_SEED = 10_000
_BRUSH_OF = {(b.kind, b.variant, b.facing if b.kind in FACED else 0): i for i, b in enumerate(BRUSHES)}
_ARMOR_BRUSH = 1 + _BRUSH_OF[(ARMOR, 0, 0)]


def teacher_action(ship: Ship, final: Ship, y: int, x: int, stage: int) -> int:
    """The narrow-representation action at cursor (y, x) in pass ``stage``: 0, a new part of
    ``final`` stamped at its top-left tile; 1, a tile of ``final`` that ``ship`` does not have
    yet; 2, armour over a corridor tile that no crew path needs (``kernels.placement_ok`` with
    the generator's detour: the staged fill stage's test, and the audit's ``open_corridor``);
    else 0 (no edit). On the staged ship the third pass has (almost) nothing left to do; on a
    drawn ship it takes away the corridor the second pass laid too much."""
    if stage == 2:
        if ship.tiles[y, x] == CORRIDOR and K.placement_ok(ship.tiles, ship.part, ship.parts, y, x, 1, 1, DETOUR, False):
            return _ARMOR_BRUSH
        return 0
    fp = final.part[y, x]
    if fp >= 0:
        row = final.parts[fp]
        if stage == 0 and (row[PY], row[PX]) == (y, x) and ship.part[y, x] < 0:
            kind = int(row[KIND])
            return 1 + _BRUSH_OF[(kind, int(row[VARIANT]), int(row[FACING]) if kind in FACED else 0)]
        return 0
    if stage == 1 and (ship.part[y, x] >= 0 or ship.tiles[y, x] != final.tiles[y, x]):
        return 1 + _BRUSH_OF[(int(final.tiles[y, x]), 0, 0)]
    return 0


def demonstrate(
    seed: int, env_kwargs: dict[str, Any] = ENV_KWARGS, policy: Any = None, record_from: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Ship]:
    """One seed's episode: (observations bit-packed (T, bytes), action masks (T, A) bool, the
    teacher's actions (T,)) and the ship it ends with. The teacher plays every step, or with
    ``policy`` (a ``learned.LearnedGenerator``, drawing from the seed's stream) the passes before
    ``record_from``, whose steps are not recorded: the teacher's third pass on the ships the
    policy draws (what behaviour cloning alone never shows it)."""
    env = StarshipEnv(**env_kwargs)
    obs, info = env.reset(seed=seed)
    final = env.pipeline.generate(seed)
    rng = sample_stream(seed)
    H, W = env.pipeline.size
    observations, masks, actions = [], [], []
    done = False
    while not done:
        stage = info["steps"] // (H * W)
        mask = info["action_mask"].astype(bool)
        if policy is not None and stage < record_from:
            a = policy.act(obs, mask, rng)
        else:
            y, x = info["cursor"]
            ship = env.ship
            a = teacher_action(ship, final, y, x, stage)
            a = a if mask[a] else 0  # (the fill's armour where the safe mask forbids it: a write left out)
            observations.append(np.packbits(obs.reshape(-1)))
            masks.append(mask)
            actions.append(a)
        obs, _, terminated, truncated, info = env.step(a)
        done = terminated or truncated
    if not observations:
        packed = (obs.size + 7) // 8
        return np.empty((0, packed), np.uint8), np.empty((0, env.action_space.n), bool), np.empty(0, np.int64), env.ship
    return np.stack(observations), np.stack(masks), np.array(actions, np.int64), env.ship


def record(
    seeds: Any, env_kwargs: dict[str, Any] = ENV_KWARGS, policy: Any = None, record_from: int = 0, progress: bool = True
) -> dict[str, np.ndarray]:
    """``demonstrate``'s episodes on ``seeds``, concatenated, with each step's seed."""
    parts: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "action": [], "seed": []}
    start = time.time()
    for i, seed in enumerate(seeds):
        obs, mask, action, _ = demonstrate(seed, env_kwargs, policy=policy, record_from=record_from)
        for k, v in (("obs", obs), ("mask", mask), ("action", action), ("seed", np.full(len(action), seed, np.int64))):
            parts[k].append(v)
        if progress and (i + 1) % 50 == 0:
            print(f"recorded {i + 1}/{len(seeds)} seeds ({time.time() - start:.0f} s)", file=sys.stderr, flush=True)
    return {k: np.concatenate(v) for k, v in parts.items()}


def unpack(packed: np.ndarray, shape: tuple[int, ...]) -> torch.Tensor:
    """The float observations of bit-packed rows."""
    size = int(np.prod(shape))
    return torch.from_numpy(np.unpackbits(packed, axis=1, count=size).reshape(len(packed), *shape)).float()


def _logits(
    net: torch.nn.Sequential, data: dict[str, np.ndarray], rows: np.ndarray, shape: tuple[int, ...], radius: int, pool: int
) -> torch.Tensor:
    """The policy's logits on recorded rows, the edits their masks forbid at -1e9."""
    logits = net(policy_inputs(unpack(data["obs"][rows], shape), radius, pool))
    return logits.masked_fill(~torch.from_numpy(data["mask"][rows]), -1e9)


def fit(
    net: torch.nn.Sequential,
    data: dict[str, np.ndarray],
    train: np.ndarray,
    shape: tuple[int, ...],
    *,
    radius: int,
    pool: int,
    epochs: int,
    batch: int,
    lr: float,
    rng: np.random.Generator,
    on_epoch: Any = None,
    stop_after: int | None = None,
) -> None:
    """Cross-entropy over the allowed edits, Adam, ``epochs`` passes over the rows ``train``
    (the first ``stop_after`` of them, on the schedule of all ``epochs``)."""
    if epochs == 0:
        return
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    steps = epochs * ((len(train) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    for epoch in range(epochs if stop_after is None else min(stop_after, epochs)):
        order = rng.permutation(train)
        net.train()
        total, count = 0.0, 0
        for lo in range(0, len(order), batch):
            rows = np.sort(order[lo : lo + batch])
            losses = F.cross_entropy(
                _logits(net, data, rows, shape, radius, pool), torch.from_numpy(data["action"][rows]), reduction="none"
            )
            weight = torch.from_numpy(data["weight"][rows]) if "weight" in data else torch.ones(len(rows))
            loss = (losses * weight).sum() / weight.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(rows)
            count += len(rows)
        if on_epoch is not None:
            on_epoch(epoch, total / count)


@torch.no_grad()
def agreement(
    net: torch.nn.Sequential,
    data: dict[str, np.ndarray],
    rows: np.ndarray,
    shape: tuple[int, ...],
    *,
    radius: int,
    pool: int,
    batch: int = 4096,
) -> dict[str, float]:
    """How often the highest allowed logit is the teacher's edit: over all steps, and over the
    steps where the teacher edits."""
    net.eval()
    hits = np.zeros(len(rows), bool)
    for lo in range(0, len(rows), batch):
        r = rows[lo : lo + batch]
        hits[lo : lo + batch] = _logits(net, data, r, shape, radius, pool).argmax(1).numpy() == data["action"][r]
    edits = data["action"][rows] != 0
    return {"steps": float(hits.mean()), "edits": float(hits[edits].mean()) if edits.any() else float("nan")}


def _fill_worker(checkpoint: str, env_kwargs: dict[str, Any], seeds: list[int]) -> dict[str, np.ndarray]:
    """``record_fill`` of some seeds in a process of its own (one torch thread: one observation a
    forward pass)."""
    from tablegym.models.starship.learned import LearnedGenerator

    torch.set_num_threads(1)
    return record(seeds, env_kwargs, LearnedGenerator.load(checkpoint), record_from=2, progress=False)


def record_fill(checkpoint: Path, env_kwargs: dict[str, Any], seeds: range, workers: int) -> dict[str, np.ndarray]:
    """The teacher's fill pass on the ships the policy at ``checkpoint`` draws in its first two
    passes, for ``seeds`` (``workers`` processes)."""
    from concurrent.futures import ProcessPoolExecutor

    chunks = [list(seeds)[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_fill_worker, [str(checkpoint)] * workers, [env_kwargs] * workers, chunks))
    return {k: np.concatenate([r[k] for r in results]) for k in results[0]}


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--seeds", type=int, default=400, help="seeds the teacher builds (default 400: 10000-10399; the last twentieth held out)"
    )
    p.add_argument("--epochs", type=int, default=6, help="passes over the demonstrations (default 6)")
    p.add_argument(
        "--stop-after",
        type=int,
        help="stop after this many epochs, the learning rate following the schedule of --epochs (default: all)",
    )
    p.add_argument(
        "--passes",
        type=int,
        choices=(2, 3),
        default=2,
        help="the cursor's passes: parts and tiles (default 2), or also the fill (3)",
    )
    p.add_argument(
        "--rollouts",
        type=int,
        default=0,
        help="then the teacher's fill pass on this many of the seeds' ships as the fitted policy draws them (default 0: none)",
    )
    p.add_argument("--rollout-epochs", type=int, default=2, help="passes over the demonstrations and the fill passes (default 2)")
    p.add_argument(
        "--fill-weight",
        type=float,
        default=1.0,
        help="the weight in the loss of an armour write of the recorded fill passes (default 1)",
    )
    p.add_argument(
        "--start",
        choices=("partial", "empty"),
        default="partial",
        help="the ship the cursor starts from: the staged generator's stages 1-6 (partial, default) or its empty hull",
    )
    p.add_argument("--workers", type=int, default=2, help="processes drawing the rollouts (default 2)")
    p.add_argument("--hidden", type=int, nargs="+", default=[512, 256], help="hidden layer sizes (default 512 256)")
    p.add_argument("--radius", type=int, default=4, help="the cursor crop's radius (default 4)")
    p.add_argument("--batch", type=int, default=512, help="minibatch size (default 512)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's peak learning rate (default 1e-3)")
    p.add_argument("--seed", type=int, default=0, help="the fit's random seed (default 0)")
    p.add_argument("--resume", help="a generator checkpoint of this shape to start from")
    p.add_argument(
        "--data", default="runs/starship-imitate/demos.npz", help="the recorded demonstrations (kept; recorded when missing)"
    )
    p.add_argument("--out", default="runs/starship-imitate/generator.pt", help="the generator checkpoint written")
    args = p.parse_args(argv)
    for name in ("seeds", "radius", "batch", "rollout_epochs", "workers"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.epochs < (0 if args.resume else 1):
        p.error(f"--epochs must be at least {0 if args.resume else 1} (0 only with --resume), got {args.epochs}")
    if args.seeds < 2:
        p.error("--seeds must be at least 2 (one to hold out)")
    if args.stop_after is not None and not 1 <= args.stop_after <= args.epochs:
        p.error(f"--stop-after must be 1..--epochs ({args.epochs}), got {args.stop_after}")
    if not 0 <= args.rollouts <= args.seeds:
        p.error(f"--rollouts must be 0..--seeds ({args.seeds}), got {args.rollouts}")
    if args.rollouts and args.passes < 3:
        p.error("--rollouts record the fill pass: give --passes 3")
    if any(h < 1 for h in args.hidden):
        p.error(f"--hidden sizes must be at least 1, got {args.hidden}")
    if not args.fill_weight > 0:
        p.error(f"--fill-weight must be positive, got {args.fill_weight}")
    if not args.lr > 0:
        p.error(f"--lr must be positive, got {args.lr}")
    for flag, path in (("--data", args.data), ("--out", args.out)):
        if path != p.get_default(flag[2:]):  # a file given must be in a folder that exists; the defaults' is made
            check_writable(p, flag, path)
    torch.manual_seed(args.seed)
    kwargs = editing_env(args.passes, args.start)
    env = StarshipEnv(**kwargs)
    shape = env.observation_space.shape
    assert shape[0] == OBS_CHANNELS
    net = policy_layers(num_inputs(env.observation_space, args.radius, 2), args.hidden, int(env.action_space.n))
    if args.resume:
        from tablegym.models.checkpoint import CheckpointError
        from tablegym.models.starship.learned import LearnedGenerator

        try:
            resumed = LearnedGenerator.load(args.resume).net.state_dict()
            net.load_state_dict(resumed)
        except CheckpointError as err:
            p.error(f"--resume: {err}")
        except RuntimeError:  # another shape (load_state_dict lists every mismatched tensor)
            p.error(
                f"--resume {args.resume}: a generator of another shape than --hidden {' '.join(map(str, args.hidden))} "
                f"--radius {args.radius}"
            )
    seeds = range(FIRST_SEED, FIRST_SEED + args.seeds)
    data_path = Path(args.data)
    if data_path.exists():
        data = load_npz(data_path)
        recorded_from = str(data.pop("start", "partial"))  # (files recorded before --start existed: partial)
        if recorded_from != args.start:
            p.error(f"{data_path} holds demonstrations from the {recorded_from} start, not {args.start}: give another --data")
        if not set(seeds).issubset(set(np.unique(data["seed"]).tolist())):
            p.error(f"{data_path} holds other seeds than {seeds.start}-{seeds.stop - 1}: give another --data")
        keep = np.isin(data["seed"], np.array(seeds))
        data = {k: v[keep] for k, v in data.items()}
        if (data["seed"] == seeds.start).sum() != kwargs["max_steps"]:
            p.error(f"{data_path} holds demonstrations of another number of passes than {args.passes}: give another --data")
    else:
        data = record(seeds, kwargs)
        data_path.parent.mkdir(parents=True, exist_ok=True)
        with open_atomic(data_path) as f:  # a link at --data is replaced, not written through
            np.savez(f, **data, start=np.array(args.start))
    held = seeds.stop - max(1, args.seeds // 20)
    start = time.time()
    out = Path(args.out)
    command = " ".join([PROG, *(sys.argv[1:] if argv is None else argv)])
    phase = {"name": "demonstrations", "epochs": 0}

    def on_epoch(epoch: int, loss: float) -> None:
        test = np.flatnonzero(data["seed"] >= held)
        held_out = agreement(net, data, test, shape, radius=args.radius, pool=2)
        phase["epochs"] += 1
        save_policy(
            net,
            kwargs,
            out,
            radius=args.radius,
            pool=2,
            metadata={
                "decode": "sample",
                "imitated": "staged",
                "seeds": [seeds.start, seeds.stop - 1],
                "epochs": phase["epochs"],
                "rollouts": args.rollouts if phase["name"] != "demonstrations" else 0,
                "held_out_agreement": held_out,
                "command": command,
            },
        )
        print(
            f"{phase['name']} epoch {epoch + 1}: loss {loss:.4f}, held-out agreement {held_out['steps']:.4f} of steps, "
            f"{held_out['edits']:.4f} of edits ({time.time() - start:.0f} s) -> {out}",
            flush=True,
        )

    rng = np.random.default_rng(args.seed)
    if args.epochs == 0:  # the resumed weights are the policy the rollouts draw from
        save_policy(net, kwargs, out, radius=args.radius, pool=2, metadata={"decode": "sample"})

    def fit_on(data: dict[str, np.ndarray], epochs: int, stop_after: int | None = None) -> None:
        """Fit the policy on the positions of the training seeds (those below ``held``)."""
        training = np.flatnonzero(data["seed"] < held)
        fit(
            net,
            data,
            training,
            shape,
            radius=args.radius,
            pool=2,
            epochs=epochs,
            batch=args.batch,
            lr=args.lr,
            rng=rng,
            on_epoch=on_epoch,
            stop_after=stop_after,
        )

    fit_on(data, args.epochs, args.stop_after)
    if args.rollouts:
        fill = record_fill(out, kwargs, range(seeds.start, seeds.start + args.rollouts), args.workers)
        edits = int((fill["action"] != 0).sum())
        print(
            f"fill passes on {args.rollouts} drawn ships: {edits / args.rollouts:.1f} armour writes a ship "
            f"({time.time() - start:.0f} s)",
            flush=True,
        )
        data = {k: np.concatenate([data[k], fill[k]]) for k in data}
        if args.fill_weight != 1.0:  # the fill's armour writes, rare among its no-edits, counted more
            data["weight"] = np.ones(len(data["action"]), np.float32)
            data["weight"][len(data["action"]) - len(fill["action"]) :][fill["action"] != 0] = args.fill_weight
        phase["name"] = "with fill passes"
        fit_on(data, args.rollout_epochs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
