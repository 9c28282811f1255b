"""Two-sample tests of starship generators: classifiers trained to tell the
staged generator's ships from another generator's, scored on held-out seeds. Held-out accuracy
is the measure: 0.5 means the classifier cannot tell them apart, 1.0 that every ship gives its
generator away.

    python -m tablegym.experiments.starship.two_sample --out results/starship/audit.md \\
        --notes results/starship/audit_notes.md

Time (one core, the other busy): 9.4 minutes from scratch, 7 of them the learned generator's 600
ships (0.7 s each); under a minute with every ship cached. The report is the same either way.

Read it top to bottom: the generators and the ship cache, the two feature sets, the two
classifiers, the comparisons, the report.

- Generators (``make_ship``): ``staged`` (``Pipeline()``, the 14 stages), ``learned`` (the
  shipped editing policy, ``learned.LearnedGenerator``: it finishes the staged ship after stage
  6 for the same seed) and ``random`` (a uniformly random action among those the env's mask
  allows, at every step of one episode in the env the learned generator edits in: same start
  ship, masks and step limit; ``rl.random_action``, its action space seeded with
  ``rl.policy_seed(0, seed)``, as the ``random`` row of ``rl.py``'s evaluation).
- Ships are cached per generator in ``--cache`` (``<generator>.npz``: the ship arrays by seed,
  written every ``SAVE_SECONDS`` while generating, so an interrupted run resumes). The learned generator's cache
  is keyed by the checkpoint's SHA-256: another checkpoint starts it afresh.
- Features: ``audit_features`` (``audit.STATISTICS`` of each ship, standardised with the
  training set's mean and spread) and ``grid_planes`` (one plane per tile kind, one-hot, and
  one per facing of thruster and weapon tiles: 16 x H x W).
- Classifiers: ``fit_logistic`` (logistic regression on the standardised statistics, L2 weight
  ``L2``, full-batch L-BFGS: convex, so deterministic) and ``fit_convnet`` (``ConvNet``: three
  3 x 3 convolutions with max pooling, global average and max pooling, one linear layer; Adam,
  ``EPOCHS`` epochs of minibatches of 32). Both in torch on the CPU, one thread.
- Comparisons (``COMPARISONS``): each other generator against the staged one on the same seeds
  (train seeds 0..train-1, test seeds 2000..2000+test-1: the learned ship of a seed starts from
  the staged ship of that seed, so the pair differs only by what each generator did after stage
  6), and the staged generator against itself with the seeds split (side B: train seeds
  train..2*train-1, test seeds 2000+test..2000+2*test-1), which shows where chance lies.
- Accuracy: correct / test ships (both sides), with its 95% Wilson interval
  (``experiments.stats.wilson_interval``).

The report (``report``): per rule of the audit, the pass rate on the held-out seeds of the
staged, learned and random ships and the differences (the issue's target: learned at least the
staged rate minus 5 points), the means of every statistic, validity and the old quality score,
the classifiers' accuracies, and a picture of staged and learned ships on the same seeds side
by side (``<out stem>_seeds.png``).
"""

from __future__ import annotations

import hashlib
import math
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from tablegym.envs.limits import load_npz
from tablegym.envs.starship.layout import RULES, STATISTICS, Audit, audit, layout_quality
from tablegym.envs.starship.ship import FACED, FACING, KIND, NUM_TILE_KINDS, PART_FIELDS, Ship
from tablegym.experiments.stats import wilson_interval
from tablegym.training.flags import OneLineParser

PROG = "python -m tablegym.experiments.starship.two_sample"
GENERATORS = ("staged", "learned", "random")
TEST_SEED = 2000
"""The first held-out seed (the issue's 200 held-out seeds are 2000..2199)."""
SAVE_SECONDS = 30.0
"""The ship cache is written at least this often while ships are generated, and at the end."""
L2 = 1e-2
EPOCHS = 8
BATCH = 32
NUM_PLANES = NUM_TILE_KINDS + 4
"""Grid planes: one per tile kind, then one per facing for thruster and weapon tiles."""


# -- generators and the ship cache -------------------------------------------------------------


class Generators:
    """The three generators of ``GENERATORS``, each built on first use (the learned one loads
    its checkpoint; the random one edits in the learned generator's env)."""

    def __init__(self, checkpoint: str | Path | None = None, workers: int = 1) -> None:
        from tablegym.models.starship.learned import CHECKPOINT

        self.checkpoint = Path(checkpoint) if checkpoint else CHECKPOINT
        self.workers = workers
        """Processes generating the learned and random ships (a searching generator takes seconds a ship)."""
        self.made = 0
        """Ships generated so far (not read from a cache)."""
        self._pipeline: Any = None
        self._learned: Any = None

    def key(self, generator: str) -> str:
        """What a cached ship of ``generator`` depends on besides its seed."""
        if generator == "staged":
            return "staged: Pipeline() defaults"
        digest = hashlib.sha256(self.checkpoint.read_bytes()).hexdigest()
        return f"{generator}: checkpoint sha256 {digest}"

    def learned(self) -> Any:
        """The learned generator (loaded once); ``CheckpointError`` if its checkpoint is refused."""
        if self._learned is None:
            from tablegym.models.starship.learned import LearnedGenerator

            self._learned = LearnedGenerator.load(self.checkpoint)
        return self._learned

    def ship(self, generator: str, seed: int) -> Ship:
        """The ship ``generator`` builds for ``seed``."""
        torch.set_num_threads(1)
        self.made += 1
        if generator == "staged":
            if self._pipeline is None:
                from tablegym.envs.starship.pipeline import Pipeline

                self._pipeline = Pipeline()
            return self._pipeline.generate(seed)
        if generator not in GENERATORS:
            raise ValueError(f"generator must be one of {GENERATORS}, got {generator!r}")
        if generator == "learned":
            return self.learned().generate(seed)[0].copy()
        from tablegym.experiments.starship.rl import policy_seed, random_action, run_episode

        env = self.learned().env
        env.action_space.seed(policy_seed(0, seed))
        return run_episode(env, seed, lambda obs: random_action(env))[0].copy()


def _pack(ships: Sequence[Ship]) -> dict[str, np.ndarray]:
    counts = np.array([len(s.parts) for s in ships], np.int64)
    parts = np.concatenate([s.parts for s in ships]) if ships else np.zeros((0, PART_FIELDS), np.int16)
    return {
        "tiles": np.stack([s.tiles for s in ships]),
        "part": np.stack([s.part for s in ships]),
        "parts": parts.astype(np.int16),
        "counts": counts,
    }


def _unpack(data: Any) -> list[Ship]:
    """``_pack``'s ships (``data``: a mapping of its arrays; each is read once, as an npz file
    decompresses an array at every lookup)."""
    tiles, part, parts, counts = (np.asarray(data[k]) for k in ("tiles", "part", "parts", "counts"))
    ends = np.cumsum(counts)
    starts = ends - counts
    return [
        Ship(
            tiles[i].astype(np.int8),
            part[i].astype(np.int16),
            parts[starts[i] : ends[i]].astype(np.int16).reshape(-1, PART_FIELDS),
        )
        for i in range(len(ends))
    ]


def ships(
    generators: Generators,
    generator: str,
    seeds: Sequence[int],
    cache: str | Path | None = None,
    log: Callable[[str], None] | None = None,
) -> list[Ship]:
    """The ships of ``generator`` for ``seeds``, read from ``cache/<generator>.npz`` where it has
    them (under the same key) and generated otherwise, the cache written every ``SAVE_SECONDS``."""
    have: dict[int, Ship] = {}
    path = Path(cache) / f"{generator}.npz" if cache else None
    key = generators.key(generator) if path else ""
    if path and path.exists():
        data = load_npz(path)
        if str(data["key"]) == key:
            have = dict(zip((int(s) for s in data["seeds"]), _unpack(data)))

    def save() -> None:
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        order = sorted(have)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, seeds=np.array(order, np.int64), key=np.array(key), **_pack([have[s] for s in order]))
        tmp.replace(path)

    todo = [s for s in seeds if s not in have]
    start = saved = time.perf_counter()
    done = 0
    for chunk, made in _generated(generators, generator, todo):
        have.update(zip(chunk, made))
        done += len(chunk)
        if path and (time.perf_counter() - saved >= SAVE_SECONDS or done == len(todo)):
            save()
            saved = time.perf_counter()
            if log:
                log(f"{generator}: {done}/{len(todo)} ships generated ({time.perf_counter() - start:.0f} s)")
    return [have[s] for s in seeds]


CHUNK = 8
"""Seeds a worker process generates at a time."""


def _generate(checkpoint: str, generator: str, seeds: list[int]) -> list[Ship]:
    """The ships of ``generator`` for ``seeds``, in a worker process."""
    generators = Generators(checkpoint)
    return [generators.ship(generator, seed) for seed in seeds]


def _generated(generators: Generators, generator: str, seeds: list[int]) -> Iterator[tuple[list[int], list[Ship]]]:
    """(seeds, their ships) in order: one at a time here, or chunks from ``generators.workers``
    processes (the staged generator, milliseconds a ship, always here)."""
    if generators.workers <= 1 or generator == "staged" or len(seeds) <= 1:
        for seed in seeds:
            yield [seed], [generators.ship(generator, seed)]
        return
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    chunks = [seeds[i : i + CHUNK] for i in range(0, len(seeds), CHUNK)]
    with ProcessPoolExecutor(generators.workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_generate, str(generators.checkpoint), generator, chunk) for chunk in chunks]
        for chunk, future in zip(chunks, futures):
            made = future.result()
            generators.made += len(made)
            yield chunk, made


# -- features ------------------------------------------------------------------------------------


def audit_features(audits: Sequence[Audit]) -> np.ndarray:
    """(N, len(STATISTICS)) float32: each ship's audit statistics."""
    return np.array([a.vector() for a in audits], np.float32).reshape(len(audits), len(STATISTICS))


def grid_planes(ships: Sequence[Ship]) -> np.ndarray:
    """(N, NUM_PLANES, H, W) float32: a one-hot plane per tile kind, then a plane per facing
    (forward, starboard, backward, port) lit on the tiles of thrusters and weapons facing it."""
    tiles = np.stack([s.tiles for s in ships]).astype(np.int64)
    n, h, w = tiles.shape
    out = np.zeros((n, NUM_PLANES, h, w), np.float32)
    np.put_along_axis(out, tiles[:, None], 1.0, axis=1)
    for i, s in enumerate(ships):
        if not len(s.parts):
            continue
        faced = np.isin(s.parts[:, KIND], FACED)
        facing = np.where(s.part >= 0, np.where(faced, s.parts[:, FACING], -1)[np.maximum(s.part, 0)], -1)
        ys, xs = np.nonzero(facing >= 0)
        out[i, NUM_TILE_KINDS + facing[ys, xs], ys, xs] = 1.0
    return out


# -- classifiers ---------------------------------------------------------------------------------


def fit_logistic(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, *, l2: float = L2) -> np.ndarray:
    """Logistic regression on features standardised by the training set's mean and standard
    deviation (a constant feature stays 0); returns the predicted labels (0/1) of ``x_test``."""
    torch.set_num_threads(1)
    mean, std = x_train.mean(0), x_train.std(0)
    std = np.where(std > 0, std, 1.0)
    xt = torch.as_tensor((x_train - mean) / std, dtype=torch.float64)
    yt = torch.as_tensor(y_train, dtype=torch.float64)
    w = torch.zeros(xt.shape[1], dtype=torch.float64, requires_grad=True)
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=500, tolerance_grad=1e-9, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(xt @ w + b, yt) + l2 * (w * w).sum() / 2
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        logits = torch.as_tensor((x_test - mean) / std, dtype=torch.float64) @ w + b
    return (logits > 0).numpy().astype(np.int64)


class ConvNet(torch.nn.Module):
    """Three padded 3 x 3 convolutions (16, 32, 32 channels, ReLU, the first two followed by 2 x 2
    max pooling), global average and max pooling, one linear layer to a logit. Any grid size."""

    def __init__(self, planes: int = NUM_PLANES) -> None:
        super().__init__()
        self.convs = torch.nn.ModuleList(
            [
                torch.nn.Conv2d(planes, 16, 3, padding=1),
                torch.nn.Conv2d(16, 32, 3, padding=1),
                torch.nn.Conv2d(32, 32, 3, padding=1),
            ]
        )
        self.head = torch.nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, conv in enumerate(self.convs):
            x = F.relu(conv(x))
            if i < 2 and min(x.shape[-2:]) >= 2:
                x = F.max_pool2d(x, 2)
        return self.head(torch.cat([x.mean((2, 3)), x.amax((2, 3))], 1))[:, 0]


def fit_convnet(
    x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, *, epochs: int = EPOCHS, seed: int = 0, lr: float = 1e-3
) -> np.ndarray:
    """``ConvNet`` trained ``epochs`` epochs (Adam, minibatches of ``BATCH``, shuffled by
    ``seed``); returns the predicted labels (0/1) of ``x_test``."""
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    net = ConvNet(x_train.shape[1])
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    xt, yt = torch.as_tensor(x_train), torch.as_tensor(y_train, dtype=torch.float32)
    for _ in range(epochs):
        for idx in torch.randperm(len(xt), generator=gen).split(BATCH):
            opt.zero_grad()
            F.binary_cross_entropy_with_logits(net(xt[idx]), yt[idx]).backward()
            opt.step()
    with torch.no_grad():
        logits = torch.cat([net(b) for b in torch.as_tensor(x_test).split(256)])
    return (logits > 0).numpy().astype(np.int64)


@dataclass(frozen=True)
class Accuracy:
    """Held-out accuracy: ``correct`` of ``total`` test ships, with its 95% Wilson interval."""

    correct: int
    total: int

    @property
    def value(self) -> float:
        return self.correct / self.total if self.total else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.correct, self.total)

    def __str__(self) -> str:
        lo, hi = self.interval
        return f"{self.value:.3f} [{lo:.3f}, {hi:.3f}]"


def held_out_accuracy(
    fit: Callable[..., np.ndarray],
    train_a: np.ndarray,
    train_b: np.ndarray,
    test_a: np.ndarray,
    test_b: np.ndarray,
    **kwargs: Any,
) -> Accuracy:
    """Train ``fit`` to tell side A (label 0) from side B (label 1) and score it on the test ships."""
    x_train = np.concatenate([train_a, train_b])
    y_train = np.concatenate([np.zeros(len(train_a), np.int64), np.ones(len(train_b), np.int64)])
    y_test = np.concatenate([np.zeros(len(test_a), np.int64), np.ones(len(test_b), np.int64)])
    predicted = fit(x_train, y_train, np.concatenate([test_a, test_b]), **kwargs)
    return Accuracy(int((predicted == y_test).sum()), len(y_test))


# -- the comparisons -----------------------------------------------------------------------------

COMPARISONS = (("learned", "staged"), ("random", "staged"), ("staged", "staged"))
"""(side B, side A): each other generator against the staged one, and the staged one against
itself (seeds split)."""


@dataclass(frozen=True)
class Sample:
    """One generator's ships on a range of seeds, their audits and both feature sets."""

    generator: str
    seeds: tuple[int, ...]
    ships: tuple[Ship, ...]
    audits: tuple[Audit, ...]

    @classmethod
    def build(
        cls,
        generators: Generators,
        generator: str,
        seeds: Sequence[int],
        cache: str | Path | None = None,
        log: Callable[[str], None] | None = None,
    ) -> Sample:
        made = ships(generators, generator, seeds, cache, log)
        return cls(generator, tuple(seeds), tuple(made), tuple(audit(s) for s in made))

    def features(self, kind: str) -> np.ndarray:
        return audit_features(self.audits) if kind == "audit" else grid_planes(self.ships)


CLASSIFIERS: dict[str, Callable[..., np.ndarray]] = {"audit": fit_logistic, "conv": fit_convnet}
"""Feature set -> classifier: logistic regression on the audit statistics, the conv net on the grid."""
TARGETS = {"audit": 0.70, "conv": 0.75}
"""The issue's targets for the learned generator's held-out accuracy."""


def seed_ranges(train: int, test: int) -> dict[str, tuple[range, range]]:
    """(train seeds, test seeds) of each side: ``a`` for every generator, ``b`` for the staged
    generator's second side against itself."""
    return {
        "a": (range(train), range(TEST_SEED, TEST_SEED + test)),
        "b": (range(train, 2 * train), range(TEST_SEED + test, TEST_SEED + 2 * test)),
    }


def measure(
    generators: Generators,
    *,
    train: int,
    test: int,
    cache: str | Path | None,
    epochs: int = EPOCHS,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Every sample, and every comparison's accuracy under both classifiers."""
    ranges = seed_ranges(train, test)
    samples: dict[tuple[str, str, str], Sample] = {}

    def sample(generator: str, side: str, split: str) -> Sample:
        seeds = ranges[side][0 if split == "train" else 1]
        if (generator, side, split) not in samples:
            samples[generator, side, split] = Sample.build(generators, generator, seeds, cache, log)
        return samples[generator, side, split]

    results: dict[str, dict[str, Accuracy]] = {}
    for other, base in COMPARISONS:
        side_b = "b" if other == base else "a"
        name = f"{other} vs {base}" + (" (seeds split)" if other == base else "")
        results[name] = {}
        for kind, fit in CLASSIFIERS.items():
            start = time.perf_counter()
            a_tr, a_te = sample(base, "a", "train"), sample(base, "a", "test")
            b_tr, b_te = sample(other, side_b, "train"), sample(other, side_b, "test")
            extra = {"epochs": epochs} if kind == "conv" else {}
            acc = held_out_accuracy(
                fit, a_tr.features(kind), b_tr.features(kind), a_te.features(kind), b_te.features(kind), **extra
            )
            results[name][kind] = acc
            log(f"{name}, {kind}: {acc} ({time.perf_counter() - start:.1f} s)")
    return {"samples": samples, "accuracy": results, "ranges": ranges}


# -- the report ----------------------------------------------------------------------------------


def _rate(values: Sequence[bool]) -> str:
    lo, hi = wilson_interval(int(sum(values)), len(values))
    return f"{np.mean(values):.3f} [{lo:.2f}, {hi:.2f}]"


def audit_table(tests: dict[str, Sample]) -> str:
    """Per rule, the pass rate of each generator's held-out ships and the others' differences
    from the staged one (with the issue's target for the learned one)."""
    names = list(tests)
    head = ["rule", *(f"{g} pass rate [95%]" for g in names), *(f"{g} - staged" for g in names if g != "staged")]
    lines = ["| " + " | ".join(head) + " | learned meets target (>= staged - 0.05) |", "|" + "---|" * (len(head) + 1)]
    for rule in RULES:
        rates = {g: [a.rules[rule] for a in tests[g].audits] for g in names}
        diffs = [f"{np.mean(rates[g]) - np.mean(rates['staged']):+.3f}" for g in names if g != "staged"]
        meets = "yes" if np.mean(rates["learned"]) >= np.mean(rates["staged"]) - 0.05 else "no"
        lines.append(f"| {rule} | " + " | ".join(_rate(rates[g]) for g in names) + " | " + " | ".join(diffs) + f" | {meets} |")
    passed = {g: np.mean([sum(a.rules.values()) for a in tests[g].audits]) for g in names}
    lines.append(
        f"| rules passed (mean of {len(RULES)}) | " + " | ".join(f"{passed[g]:.2f}" for g in names) + " |" + " |" * (len(names))
    )
    return "\n".join(lines)


def statistics_table(tests: dict[str, Sample], reference: dict[str, Any]) -> str:
    """Per statistic, each generator's mean on the held-out seeds and the staged reference's 5-95% range."""
    names = list(tests)
    means = {g: audit_features(tests[g].audits).mean(0) for g in names}
    lines = [
        "| statistic | " + " | ".join(f"{g} mean" for g in names) + " | staged reference 5-95% (seeds 0-999) |",
        "|" + "---|" * (len(names) + 2),
    ]
    for i, stat in enumerate(STATISTICS):
        r = reference["statistics"][stat]
        lines.append(f"| {stat} | " + " | ".join(f"{means[g][i]:.3g}" for g in names) + f" | {r['q05']:.3g} .. {r['q95']:.3g} |")
    return "\n".join(lines)


def quality_table(tests: dict[str, Sample]) -> str:
    """Validity rate and the old quality score (``quality.quality``) on the held-out seeds."""
    from tablegym.envs.starship.quality import quality

    lines = [
        "| generator | valid [95%] | old quality score (mean +- 1.96 se) | armor_fraction term | forward_firepower term |",
        "|---|---|---|---|---|",
    ]
    for g, sample in tests.items():
        q = [quality(s) for s in sample.ships]
        score = np.array([x.score for x in q])
        se = 1.96 * score.std(ddof=1) / math.sqrt(len(score)) if len(score) > 1 else math.nan
        lines.append(
            f"| {g} | {_rate([a.rules['valid'] for a in sample.audits])} | {score.mean():.3f} +- {se:.3f} | "
            f"{np.mean([x.terms['armor_fraction'] for x in q]):.3f} | "
            f"{np.mean([x.terms['forward_firepower'] for x in q]):.3f} |"
        )
    return "\n".join(lines)


def rank_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho: the correlation of the ranks (tied values share their mean rank)."""

    def ranks(x: np.ndarray) -> np.ndarray:
        values, inverse = np.unique(x, return_inverse=True)
        first = np.searchsorted(np.sort(x), values)
        counts = np.bincount(inverse)
        return (first + (counts - 1) / 2.0)[inverse]

    return float(np.corrcoef(ranks(np.asarray(a)), ranks(np.asarray(b)))[0, 1])


def quality_v2_table(tests: dict[str, Sample]) -> str:
    """Quality v2 (``audit.layout_quality``) on the held-out seeds, each generator paired with
    the staged one on the same seeds, and how v2 ranks the staged ships against the old score."""
    from tablegym.envs.starship.quality import quality

    old = {g: np.array([quality(s).score for s in sample.ships]) for g, sample in tests.items()}
    v2 = {
        g: np.array([layout_quality(s, a, q) for s, a, q in zip(sample.ships, sample.audits, old[g])])
        for g, sample in tests.items()
    }
    half = lambda x: 1.96 * x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else math.nan  # noqa: E731
    lines = [
        "| generator | quality v2 (mean +- 1.96 se) | minus staged, paired by seed (mean +- 1.96 se) | old score (mean) |",
        "|---|---|---|---|",
    ]
    for g in tests:
        diff = v2[g] - v2["staged"]
        paired = "" if g == "staged" else f"{diff.mean():+.3f} +- {half(diff):.3f}"
        lines.append(f"| {g} | {v2[g].mean():.3f} +- {half(v2[g]):.3f} | {paired} | {old[g].mean():.3f} |")
    rho = rank_correlation(v2["staged"], old["staged"])
    lines += [
        "",
        f"On the {len(old['staged'])} staged ships, quality v2 and the old score rank the ships alike: Spearman's rho {rho:.3f}.",
    ]
    return "\n".join(lines)


def accuracy_table(accuracy: dict[str, dict[str, Accuracy]]) -> str:
    lines = ["| comparison | audit statistics (logistic regression) [95%] | tile grid (conv net) [95%] |", "|---|---|---|"]
    for name, row in accuracy.items():
        lines.append(f"| {name} | {row['audit']} | {row['conv']} |")
    return "\n".join(lines)


def write_pictures(tests: dict[str, Sample], path: str | Path, count: int = 8) -> Path:
    """Staged and learned ships on the first ``count`` held-out seeds, side by side, two seeds a
    row, all cropped to the box that holds every one of them."""
    from tablegym.envs.starship.render import draw_ships, ship_bbox, write_png

    titled = []
    for i in range(min(count, len(tests["staged"].ships))):
        seed = tests["staged"].seeds[i]
        titled += [(f"{seed} STAGED", tests["staged"].ships[i]), (f"{seed} LEARNED", tests["learned"].ships[i])]
    boxes = np.array([ship_bbox(ship) for _, ship in titled])
    bbox = (*boxes[:, :2].min(0).tolist(), *boxes[:, 2:].max(0).tolist())
    return write_png(path, draw_ships(titled, cell=9, columns=4, bbox=bbox))


def report(
    result: dict[str, Any],
    *,
    reference: dict[str, Any],
    picture: Path,
    notes: str,
    command: str,
    seconds: float,
    epochs: int,
    generated: int,
    checkpoint: str | None = None,
) -> str:
    """The markdown report of ``measure``'s result."""
    (train_a, test_a), (train_b, test_b) = result["ranges"]["a"], result["ranges"]["b"]
    tests = {g: result["samples"][g, "a", "test"] for g in GENERATORS}
    span = lambda r: f"{r.start}-{r.stop - 1}"  # noqa: E731
    return "\n".join(
        [
            "# Starship audit: the learned generator against the staged one",
            "",
            f"Held-out seeds {span(test_a)} ({len(test_a)} ships per generator). The audit "
            "(experiments/starship/audit.py) measures what rules/starship.md asks of a ship beyond validity; each rule is one "
            "or two of its statistics against the spec's words. The staged generator's reference is "
            f"experiments/starship/audit_reference.json (seeds {reference['seeds'][0]}-{reference['seeds'][1]}). Generators: "
            f"staged (Pipeline(), 14 stages), learned ({checkpoint or 'the shipped models/checkpoints/starship_imitated.pt'}, which finishes the staged "
            "ship after stage 6), random (uniformly random masked edits in the learned generator's env: same start, masks "
            "and step limit).",
            "",
            "## Audit rules: pass rates on the held-out seeds",
            "",
            audit_table(tests),
            "",
            "## What the old score said (same ships)",
            "",
            quality_table(tests),
            "",
            "## Quality v2: the old score times the share of the 13 layout rules passed",
            "",
            quality_v2_table(tests),
            "",
            "## Two-sample test: held-out accuracy of a classifier telling the generators apart",
            "",
            f"0.5: indistinguishable. Training: side A seeds {span(train_a)}, side B the same seeds for another generator "
            f"and seeds {span(train_b)} (test {span(test_b)}) for the staged generator against itself; "
            f"{2 * len(train_a)} training and {2 * len(test_a)} test ships a comparison. Logistic regression on the "
            f"{len(STATISTICS)} standardised audit statistics (L2 {L2}); a conv net on the one-hot tile and facing planes "
            f"({NUM_PLANES} x 32 x 32; {epochs} epochs of Adam). The issue's targets for the learned generator: "
            f"<= {TARGETS['audit']:.2f} (audit statistics), <= {TARGETS['conv']:.2f} (conv net). Intervals: 95% Wilson.",
            "",
            accuracy_table(result["accuracy"]),
            "",
            "## Audit statistics: means on the held-out seeds",
            "",
            statistics_table(tests, reference),
            "",
            "## Pictures",
            "",
            f"![staged and learned ships on the same seeds]({picture.name}) `{picture.name}`: staged (left of each pair) "
            f"and learned ships on seeds {span(range(test_a.start, test_a.start + 8))}.",
            "",
            notes.strip(),
            "",
            f"Command: `{command}` ({seconds / 60:.1f} minutes on one core, {generated} of the "
            f"{sum(len(s.ships) for s in result['samples'].values())} ships generated in this run, the others read from "
            "the cache)",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> str:
    p = OneLineParser(
        prog=PROG,
        description="Classifiers telling staged ships from learned and random ones "
        "(held-out accuracy, 0.5 = indistinguishable), and the audit's "
        "rule pass rates on the held-out seeds, as a markdown report.",
    )
    p.add_argument("--train", type=int, default=400, help="training seeds per side (default 400: seeds 0-399)")
    p.add_argument("--test", type=int, default=200, help="held-out seeds per side (default 200: seeds 2000-2199)")
    p.add_argument("--epochs", type=int, default=EPOCHS, help=f"conv net epochs (default {EPOCHS})")
    p.add_argument("--checkpoint", help="the learned generator (default: the shipped models/checkpoints/starship_imitated.pt)")
    p.add_argument("--cache", default="runs/starship-audit", help="where generated ships are kept (default runs/starship-audit)")
    p.add_argument("--out", default="results/starship/audit.md", help="the markdown report (the picture goes beside it)")
    p.add_argument("--notes", help="a markdown file whose text the report carries under its pictures")
    p.add_argument("--workers", type=int, default=1, help="processes generating the learned and random ships (default 1)")
    args = p.parse_args(argv)
    for flag, value, low in (
        ("--train", args.train, 2),
        ("--test", args.test, 8),
        ("--epochs", args.epochs, 1),
        ("--workers", args.workers, 1),
    ):
        if value < low:
            p.error(f"{flag} must be >= {low}, got {value}")
    from tablegym.experiments.starship.audit import AuditError, load_reference
    from tablegym.models.checkpoint import CheckpointError

    try:
        reference = load_reference()
        notes = Path(args.notes).read_text() if args.notes else ""
        generators = Generators(args.checkpoint, args.workers)
        generators.learned()
    except (AuditError, CheckpointError) as err:
        p.exit(1, f"{PROG}: error: {err}\n")
    except OSError as err:
        p.exit(1, f"{PROG}: error: {err.filename}: {err.strerror or err}\n")
    torch.set_num_threads(1)
    start = time.perf_counter()
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    result = measure(generators, train=args.train, test=args.test, cache=args.cache, epochs=args.epochs, log=log)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    picture = write_pictures({g: result["samples"][g, "a", "test"] for g in GENERATORS}, out.with_name(f"{out.stem}_seeds.png"))
    command = f"{PROG} {shlex.join(argv if argv is not None else sys.argv[1:])}"
    text = report(
        result,
        reference=reference,
        picture=picture,
        notes=notes,
        command=command,
        checkpoint=args.checkpoint,
        seconds=time.perf_counter() - start,
        epochs=args.epochs,
        generated=generators.made,
    )
    out.write_text(text)
    print(text)
    return text


if __name__ == "__main__":
    main()
