"""The Threes n-tuple network as a PyTorch module, its files and its evaluators.

The module stores all tables in one ``nn.EmbeddingBag`` (``mode="sum"`` is exactly the sum over
tuples); training updates the same memory through the compiled kernels of
envs/threes/ntuple.py, and the expectimax reads it as lookup tables (``NTupleTables``). A file is
a tablegym checkpoint whose tables are packed (lzma over byte-shuffled entries), read within
the budgets of tablegym.envs.limits before anything is inflated.
"""

from __future__ import annotations

import functools
import lzma
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numba import njit
from torch import nn

from tablegym.envs.evaluator import Evaluator, KernelEvaluator
from tablegym.envs.limits import LimitError, check_finite, current, refuse
from tablegym.envs.threes.board import board_score, swipe
from tablegym.envs.threes.core import BOARD, HINT
from tablegym.envs.threes.ntuple import (
    _BLOCK,
    DEFAULT_TUPLES,
    LONGEST,
    LZMA_MEMLIMIT,
    MAX_STAGES,
    MAX_TUPLES,
    RADIX,
    UNPACK_BYTES,
    NTupleConfig,
    NTupleTables,
    layout,
    ntuple_rows,
    ntuple_value,
    ntuple_values,
    parse_tuple,
    table_bytes,
)
from tablegym.models.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tablegym.models.learned import CHECKPOINT_DIR


class NTupleLimitError(CheckpointError, LimitError):
    """An n-tuple file refused before its tables are built: more tuples, stages or bytes than the
    game or a budget (``tablegym.envs.limits``) allows, packed entries that inflate past what
    they declare, or weights that are not finite. The message is one line naming the file and
    the limit."""


class NTupleNet(nn.Module):
    """The n-tuple value network as a PyTorch module (one EmbeddingBag holding every table)."""

    def __init__(self, config: NTupleConfig | None = None) -> None:
        super().__init__()
        self.config = config or NTupleConfig()
        cells, offsets, self.stage_size = layout(self.config)
        self.register_buffer("cells", torch.from_numpy(cells), persistent=False)
        self.register_buffer("offsets", torch.from_numpy(offsets), persistent=False)
        self.register_buffer("stage_ranks", torch.tensor(self.config.stage_ranks, dtype=torch.int64), persistent=False)
        self.table = nn.EmbeddingBag(
            self.config.num_stages * self.stage_size, 1, mode="sum", _weight=_zeros(self.config.num_stages * self.stage_size)
        )

    def indices(self, ranks: torch.Tensor, hints: torch.Tensor) -> torch.Tensor:
        """Table rows (batch, tuples x orientations) of boards ``ranks`` (batch, 16) with ``hints``."""
        padded = torch.cat([ranks, hints[:, None], torch.zeros_like(hints)[:, None]], dim=1)  # cell -1 -> a zero
        digits = padded[:, self.cells]  # (batch, tuples, orientations, length)
        valid = self.cells >= 0
        idx = torch.zeros(digits.shape[:3], dtype=torch.int64)
        for j in range(self.cells.shape[2]):
            idx = torch.where(valid[:, :, j], idx * RADIX + digits[..., j], idx)
        stage = (ranks.max(dim=1).values[:, None] >= self.stage_ranks[None, :]).sum(dim=1)
        rows = stage[:, None, None] * self.stage_size + self.offsets[None, :, None] + idx
        return rows.reshape(ranks.shape[0], -1)

    @classmethod
    def for_training(cls, tuples: tuple[str | tuple[int, ...], ...] = (), stage_ranks: tuple[int, ...] = (11,)) -> NTupleNet:
        """A zero network whose table gets sparse gradients (an SGD step then touches only the
        entries a batch read, not the millions it did not). ``tuples`` as typed ("h,0,1,2,3") or
        as cells; none: ``DEFAULT_TUPLES``. ValueError names a bad tuple or stage."""
        cells = tuple(parse_tuple(t) if isinstance(t, str) else tuple(t) for t in tuples) or DEFAULT_TUPLES
        net = cls(NTupleConfig(tuples=cells, stage_ranks=tuple(stage_ranks)))
        net.table.sparse = True
        return net

    @property
    def num_features(self) -> int:
        """Table entries one value sums (tuples x orientations)."""
        return int(self.cells.shape[0] * self.cells.shape[1])

    def save(
        self, path: str | os.PathLike, metadata: dict[str, Any] | None = None, extra: dict[str, torch.Tensor] | None = None
    ) -> Path:
        """``save_ntuple``: the n-tuple checkpoint that ``eval=learned:PATH`` reads."""
        return save_ntuple(path, self, metadata, extra=extra)

    @staticmethod
    def load_with_metadata(path: str | os.PathLike) -> tuple[NTupleNet, dict[str, Any]]:
        return load_ntuple_with_metadata(path)

    def forward(self, ranks: torch.Tensor, hints: torch.Tensor) -> torch.Tensor:
        return self.table(self.indices(ranks, hints)).squeeze(1)

    def value_of(self, keys: np.ndarray, hints: np.ndarray) -> torch.Tensor:
        """The values (batch,) of afterstates given as 64-bit board words ``keys`` with the card
        codes ``hints``, differentiable (what training/afterstate_dqn.py learns): ``forward``'s,
        with the table rows found by compiled code, far faster than ``indices`` in torch."""
        keys = np.ascontiguousarray(keys, dtype=np.int64).reshape(-1)
        hints = np.ascontiguousarray(hints, dtype=np.int64).reshape(-1)
        cells, offsets, stage_ranks = self.cells.numpy(), self.offsets.numpy(), self.stage_ranks.numpy()
        if not torch.is_grad_enabled():  # acting and targets: the compiled sums, no autograd
            out = np.empty(keys.shape[0], dtype=np.float32)
            ntuple_values(keys, hints, self.table.weight.data.view(-1).numpy(), cells, offsets, stage_ranks, out)
            return torch.from_numpy(out)
        rows = np.empty((keys.shape[0], self.num_features), dtype=np.int64)
        ntuple_rows(keys, hints, cells, offsets, stage_ranks, self.stage_size, rows)
        return self.table(torch.from_numpy(rows)).squeeze(1)

    def tables(self) -> NTupleTables:
        """The lookup tables for compiled code; the weights share memory with the module."""
        weights = self.table.weight.data.view(-1).numpy()
        return NTupleTables(weights, self.cells.numpy(), self.offsets.numpy(), self.stage_ranks.numpy().copy())

    # A trained network touches a small part of its tables, so checkpoints keep only the
    # non-zero entries (index, value). ``half`` stores the values as float16 of value / scale:
    # a relative error of 2^-11 per entry, far below the differences between swipes, for a
    # file a third smaller (the shipped checkpoint).
    def sparse_state(self, half: bool = False, prune: float = 0.0) -> dict[str, torch.Tensor]:
        """``prune``: also drop entries smaller than this in magnitude (rarely visited ones;
        README gives the measured cost)."""
        w = self.table.weight.data.view(-1).clone()  # a snapshot: training workers may be writing the table
        index = torch.nonzero(w.abs() > prune if prune > 0 else w).view(-1)
        value = w[index].clone()
        scale = torch.ones(1)
        if half and value.numel():
            scale = value.abs().max().reshape(1) / 60000.0
            value = (value / scale).to(torch.float16)
        return {"index": index.to(torch.int32), "value": value, "scale": scale}

    def compact_state(self, prune: float = 0.0) -> dict[str, torch.Tensor]:
        """The non-zero entries (above ``prune``) in a few bytes each, for the shipped file:
        values quantised to int16 of value / scale, indices as gaps from the previous index,
        each array byte-shuffled (its low bytes together, then its high ones) and lzma-packed.

        Why: a 6-tuple network touches tens of millions of entries, 6 bytes each in the
        float16 form; gaps between sorted indices are mostly small and the quantised values
        mostly near zero, so after shuffling their high bytes are long runs that lzma removes.
        int16 keeps a step of max|w| / 32767 (about 0.3 points of score on a trained network),
        far below the differences between swipes; the loss is measured in README."""
        sparse = self.sparse_state(prune=prune)
        index, value = sparse["index"].numpy().astype(np.int64), sparse["value"].numpy()
        scale = float(np.abs(value).max()) / 32767.0 if value.size else 1.0
        codes = np.rint(value / scale).astype("<i2")
        gaps = np.diff(index, prepend=0).astype("<u4")
        return {
            "index_lzma": _pack_bytes(gaps),
            "value_lzma": _pack_bytes(codes),
            "scale": torch.tensor([scale], dtype=torch.float64),
            "count": torch.tensor([index.size], dtype=torch.int64),
        }

    def load_sparse_state(self, state: dict[str, torch.Tensor], what: str = "sparse n-tuple state") -> None:
        """Set the tables to ``state`` (``sparse_state``'s or ``compact_state``'s form; entries it
        does not list are zero). The entries' count, their bytes and the inflated size of packed
        ones are checked against the tables and ``model_bytes`` before anything is built, and the
        values must be finite; ``what`` names the file in a refusal (``NTupleLimitError``)."""
        n = self.table.weight.shape[0]
        if "index_lzma" in state:
            count = _count(state["count"])
            _check_entries(count, n, what)
            codes = _unshuffle(_inflate(state["value_lzma"], 2 * count, count, "values", what), "<i2")
            values = torch.from_numpy(codes.astype(np.float32)).mul_(_scale(state["scale"]).to(torch.float32))
            _check_values(values, what)
            rows = _gap_rows(_inflate(state["index_lzma"], 4 * count, count, "indices", what), count)
        else:
            index, value = state["index"], state["value"]
            if (
                not (isinstance(index, torch.Tensor) and isinstance(value, torch.Tensor))
                or index.ndim != 1
                or index.shape != value.shape
                or index.is_floating_point()
                or index.is_complex()
            ):
                raise ValueError("sparse n-tuple state needs an integer index and values of one shape")
            _check_entries(index.numel(), n, what)
            values = value.to(torch.float32) * _scale(state.get("scale", torch.ones(1))).to(torch.float32)
            _check_values(values, what)
            rows = (index[a : a + _BLOCK].to(torch.int64).numpy() for a in range(0, index.numel(), _BLOCK))
        weights = _zeros(n)
        flat, done = weights.view(-1).numpy(), 0
        for block in rows:
            if block.size and (block.min() < 0 or block.max() >= n):
                raise ValueError(f"sparse n-tuple state does not fit a table of {n} entries")
            flat[block] = values.numpy()[done : done + block.size]
            done += block.size
        self.table.weight.data = weights


def _check_entries(count: int, n: int, what: str) -> None:
    """Refuse ``count`` sparse entries for tables of ``n``: more than the tables hold, or more
    bytes (tables and entries while read) than ``model_bytes``."""
    if not 0 <= count <= n:
        raise NTupleLimitError(f"{what}: declares {count:,} sparse entries, its tables hold {n:,}; refused")
    asked = 4 * n + UNPACK_BYTES * count
    if asked > current().model_bytes:
        raise NTupleLimitError(
            str(refuse(what, f"tables of {n:,} entries and {count:,} sparse ones to read, {asked:,} bytes", "model_bytes"))
        )


def _check_values(values: torch.Tensor, what: str) -> None:
    try:
        check_finite(values.numpy(), what)
    except LimitError as exc:
        raise NTupleLimitError(str(exc)) from None


def _count(t: Any) -> int:
    """A compact state's count of entries (a one-element integer tensor)."""
    if not isinstance(t, torch.Tensor) or t.numel() != 1 or t.is_floating_point() or t.is_complex():
        raise ValueError("packed n-tuple state's count is not one integer")
    return int(t.reshape(-1)[0])


def _scale(t: Any) -> torch.Tensor:
    """A sparse state's scale of its values (a one-element tensor), shaped (1,)."""
    if not isinstance(t, torch.Tensor) or t.numel() != 1:
        raise ValueError("sparse n-tuple state's scale is not one number")
    return t.reshape(1)


def _zeros(n: int) -> torch.Tensor:
    """An (n, 1) float32 table of zeros that costs nothing until written.

    Why numpy's: its zeros come from calloc, whose pages the system maps only when touched,
    where torch's initialisers write every entry (a 6-tuple network's 300 M entries: about 3 s
    of a load, and 1.2 GB resident before a single value is read)."""
    return torch.from_numpy(np.zeros((n, 1), dtype=np.float32))


def _pack_bytes(a: np.ndarray) -> torch.Tensor:
    """``a``'s bytes shuffled (byte j of every element together) and lzma-compressed, as uint8."""
    shuffled = np.ascontiguousarray(a.view(np.uint8).reshape(-1, a.itemsize).T)
    return torch.frombuffer(bytearray(lzma.compress(shuffled.tobytes(), preset=6)), dtype=torch.uint8)


def _inflate(t: Any, size: int, count: int, name: str, what: str) -> np.ndarray:
    """The ``size`` bytes ``_pack_bytes`` packed into ``t`` (``count`` entries' ``name``), inflated
    no further: a stream that holds more is refused once ``size`` bytes are out (an lzma bomb
    costs what its entries declare, never what it would inflate to)."""
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"packed n-tuple {name} are not a tensor")
    decompressor = lzma.LZMADecompressor(lzma.FORMAT_XZ, memlimit=LZMA_MEMLIMIT)
    try:
        raw = decompressor.decompress(np.ascontiguousarray(t.numpy()).reshape(-1).view(np.uint8), max_length=size)
        more = not decompressor.eof and not decompressor.needs_input and decompressor.decompress(b"", max_length=1)
    except lzma.LZMAError as exc:
        if "limit" in str(exc):
            raise NTupleLimitError(
                f"{what}: its packed {name} ask the lzma decoder for more than {LZMA_MEMLIMIT:,} bytes (LZMA_MEMLIMIT); refused"
            ) from None
        raise ValueError(f"packed n-tuple entries do not decompress ({exc})") from None
    if more:
        raise NTupleLimitError(
            f"{what}: its packed {name} inflate past the {size:,} bytes its {count:,} entries declare; refused (an lzma bomb?)"
        )
    if not decompressor.eof:
        raise ValueError(f"packed n-tuple {name} end before their lzma stream does")
    if decompressor.unused_data:
        raise ValueError(f"packed n-tuple {name} have {len(decompressor.unused_data):,} bytes after their lzma stream")
    if len(raw) != size:
        raise ValueError(f"packed n-tuple {name} hold {len(raw)} bytes, {count} entries need {size}")
    return np.frombuffer(raw, dtype=np.uint8)


def _unshuffle(raw: np.ndarray, dtype: str) -> np.ndarray:
    """The inverse of ``_pack_bytes``' shuffle: elements of ``dtype`` from their bytes, grouped."""
    size = np.dtype(dtype).itemsize
    return raw.reshape(size, -1).T.copy().view(dtype).reshape(-1)


def _gap_rows(raw: np.ndarray, count: int) -> Iterator[np.ndarray]:
    """``compact_state``'s indices (a running sum of the gaps packed in ``raw``), a block at a time."""
    shuffled, start = raw.reshape(4, count), 0
    for a in range(0, count, _BLOCK):
        block = np.cumsum(_unshuffle(shuffled[:, a : a + _BLOCK].ravel(), "<u4"), dtype=np.int64) + start
        start = int(block[-1])
        yield block


def restage(net: NTupleNet, stage_ranks: tuple[int, ...]) -> NTupleNet:
    """A copy of ``net`` split at ``stage_ranks`` instead: each new stage starts from the old
    stage that played its lowest highest-card rank.

    Why: the multi-stage remedy for a plateau is to give the end game weights of its own without
    throwing away what the network already knows. When the new splits include the old ones the
    copy has exactly the old values; training then lets the new stages drift apart.
    """
    config = NTupleConfig(tuples=net.config.tuples, stage_ranks=tuple(stage_ranks), symmetric=net.config.symmetric)
    out = NTupleNet(config)
    old = net.tables().weights.reshape(net.config.num_stages, net.stage_size)
    new = out.tables().weights.reshape(config.num_stages, out.stage_size)
    for j in range(config.num_stages):
        low = 0 if j == 0 else config.stage_ranks[j - 1]
        new[j] = old[sum(1 for r in net.config.stage_ranks if r <= low)]
    return out


def ranks_tensor(boards) -> torch.Tensor:
    """(batch, 16) ranks of 64-bit board words (cell c = bits 4c..4c+3)."""
    b = torch.as_tensor(np.asarray(boards, dtype=np.int64).reshape(-1))
    shifts = torch.arange(0, 64, 4, dtype=torch.int64)
    return (b[:, None] >> shifts[None, :]) & 0xF


# ---- checkpoints -----------------------------------------------------------------------------

CHECKPOINT = CHECKPOINT_DIR / "threes.pt"
KIND = "ntuple"


def save_ntuple(
    path: str | os.PathLike,
    model: NTupleNet,
    metadata: dict[str, Any] | None = None,
    half: bool = False,
    prune: float = 0.0,
    compact: bool = False,
    extra: dict[str, torch.Tensor] | None = None,
) -> Path:
    """Save ``model``'s non-zero entries with its config (atomic: the old file survives a crash);
    ``compact``: quantised and packed (``NTupleNet.compact_state``), the shipped form; ``extra``:
    more tensors a trainer resumes from (an optimizer's), which loading the network ignores."""
    meta = {
        "game": "threes",
        "options": {"hint": "+"},
        "kind": KIND,
        "net": model.config.to_dict(),
        "half": half,
        "prune": prune,
        "compact": compact,
        **(metadata or {}),
    }
    state = model.compact_state(prune) if compact else model.sparse_state(half, prune)
    return save_checkpoint(path, state={**state, **(extra or {})}, metadata=meta)


def load_ntuple(path: str | os.PathLike | None = None) -> NTupleNet:
    """The n-tuple network saved at ``path`` (the shipped one when ``None``)."""
    net, _ = load_ntuple_with_metadata(path)
    return net


def load_ntuple_with_metadata(path: str | os.PathLike | None = None) -> tuple[NTupleNet, dict[str, Any]]:
    """The network saved at ``path`` and its metadata. Nothing in the file is trusted:
    ``load_checkpoint`` reads it within the budgets of ``tablegym.envs.limits``, then its
    description (tuples, stages) and its entries are checked against the game and the budgets
    before the tables are built; a refusal is one line (``NTupleLimitError``, a ``CheckpointError``)."""
    path = CHECKPOINT if path in (None, "") else Path(path)
    what = f"n-tuple checkpoint {str(path)!r}"
    payload = load_checkpoint(path, game="threes", options={"hint": "+"})
    meta = payload["metadata"]
    if meta.get("kind") != KIND:
        raise CheckpointError(f"checkpoint {str(path)!r} holds a {meta.get('kind', 'dense')!r} network, not an n-tuple one")
    try:
        config = _described_config(meta["net"], what)
        net = NTupleNet(config)
        net.load_sparse_state(payload["model"], what)
    except NTupleLimitError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} does not match its n-tuple description: {exc}") from None
    return net, meta


def _described_config(described: Any, what: str) -> NTupleConfig:
    """The network shape a file describes, refused when its tables could not serve the game
    (more tuples than ``MAX_TUPLES``, a tuple longer than ``LONGEST``, more than ``MAX_STAGES``)
    or would take more than ``model_bytes``: counted from the description, before any is built."""
    tuples, ranks = described["tuples"], described["stage_ranks"]
    if len(tuples) > MAX_TUPLES:
        raise NTupleLimitError(f"{what}: describes {len(tuples):,} tuples, over the {MAX_TUPLES} of MAX_TUPLES; refused")
    longest = max((len(t) for t in tuples), default=0)
    if longest > LONGEST:
        raise NTupleLimitError(
            f"{what}: describes a tuple of {longest:,} cells, over the {LONGEST} of LONGEST (a 16**{LONGEST} table); refused"
        )
    if len(ranks) >= MAX_STAGES:
        raise NTupleLimitError(
            f"{what}: describes {len(ranks) + 1:,} stages, over the {MAX_STAGES} a board's ranks make (MAX_STAGES); refused"
        )
    config = NTupleConfig.from_dict(described)
    asked = table_bytes(config)
    if asked > current().model_bytes:
        raise NTupleLimitError(
            str(
                refuse(
                    what,
                    f"{len(config.tuples)} tuples x {config.num_stages} stages = {asked // 4:,} table entries, {asked:,} bytes",
                    "model_bytes",
                )
            )
        )
    return config


class NTupleEvaluator(Evaluator):
    """An n-tuple network as the leaf evaluator of every Threes searcher: Threes' own compiled
    expectimax reads its tables (``network``) and scores afterstates; the generic searchers
    (expectimax, best-first) take it as a position evaluator (``ntuple_state_value``: the best
    swipe's afterstate plus the score so far), packed on first use."""

    game = "threes"

    def __init__(self, name: str, tables: NTupleTables) -> None:
        self.name = name
        self.tables = tables
        self.kernel = ntuple_state_value

    @functools.cached_property
    def params(self) -> np.ndarray:  # type: ignore[override]
        return pack_tables(self.tables)

    @property
    def network(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(weights, plan, offsets, stage_ranks): the arrays the compiled search takes
        (``plan_value``)."""
        t = self.tables
        return t.weights, t.plan, t.offsets, t.stage_ranks

    def state_evaluator(self) -> KernelEvaluator:
        """This network as a compiled position evaluator for the generic searchers."""
        ev = KernelEvaluator(self.name, self.kernel, self.params)
        ev.kernel_writes = False  # ntuple_state_value reads its tables only: threads share them
        return ev


def pack_tables(tables: NTupleTables) -> np.ndarray:
    """The network in one float64 vector, the ``params`` of ``ntuple_state_value``: a header
    (weights, tuples, orientations, cells per tuple, stages), then the float32 weights and the
    int64 cells, offsets and stage ranks as raw 8-byte words."""
    w = np.ascontiguousarray(tables.weights, dtype=np.float32)
    w = np.concatenate([w, np.zeros(len(w) & 1, dtype=np.float32)])
    parts = [w.view(np.float64)] + [
        np.ascontiguousarray(a, dtype=np.int64).reshape(-1).view(np.float64)
        for a in (tables.cells, tables.offsets, tables.stage_ranks)
    ]
    head = np.array([len(tables.weights), *tables.cells.shape, len(tables.stage_ranks)], dtype=np.float64)
    return np.concatenate([head, *parts])


@njit(cache=True)
def _unpack(params):
    nw, nt, nk, nl, ns = int(params[0]), int(params[1]), int(params[2]), int(params[3]), int(params[4])
    start = 5
    w = params[start : start + (nw + 1) // 2].view(np.float32)[:nw]
    start += (nw + 1) // 2
    cells = params[start : start + nt * nk * nl].view(np.int64).reshape((nt, nk, nl))
    start += nt * nk * nl
    offsets = params[start : start + nt].view(np.int64)
    stage_ranks = params[start + nt : start + nt + ns].view(np.int64)
    return w, cells, offsets, stage_ranks


@njit(cache=True)
def ntuple_state_value(s, player, params):
    """The n-tuple network as a state evaluator of any searcher (the generic expectimax): at a
    position with the hint shown, the best swipe's afterstate, scored with that hint, plus the
    score so far (the expected final score); a finished game is worth its score."""
    w, cells, offsets, stage_ranks = _unpack(params)
    board = s[BOARD]
    best = -np.inf
    for d in range(4):
        after, moved = swipe(board, d)
        if moved != 0:
            v = board_score(after) + ntuple_value(after, s[HINT], w, cells, offsets, stage_ranks)
            if v > best:
                best = v
    return board_score(board) if best == -np.inf else best


def ntuple_state_evaluator(tables: NTupleTables, name: str = "ntuple") -> KernelEvaluator:
    """The network as a compiled evaluator of positions (not afterstates): what the generic
    searchers take (``NTupleEvaluator`` stays the Threesus-style search's afterstate form)."""
    return NTupleEvaluator(name, tables).state_evaluator()


def ntuple_evaluator(game, path: Path) -> NTupleEvaluator:
    """The Threes record's ``loader`` (``tablegym.models.learned.load_evaluator``)."""
    return NTupleEvaluator(f"learned:{path}", load_ntuple(path).tables())
