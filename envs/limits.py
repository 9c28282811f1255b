"""Budgets a file is held to before anything is built from it.

A loader of other people's files reads sizes first and allocates second (safetensors checks its
header against the file; zip readers cap the inflated total): a file of a few kilobytes never asks
for gigabytes, never recurses until Python's stack runs out, and never brings NaN into a search.
Each refusal is a ``LimitError``, one line naming the file, what it asked for, the limit and how to
raise it. The limits hold for every loader of the package (model files, journals, configs); a
user with a genuinely large network raises them for a block of code::

    with raised_limits(model_bytes=8 << 30):
        make_agent(game, "alphabeta:eval=learned:big.pt")

or on the command line with ``--max-model-mb`` (``tablegym eval``, ``tablegym play``). They live
here, in the lowest layer, because rules packages (Threes' n-tuple files, Starship's configs)
read files too.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import IO, Any

import numpy as np

__all__ = [
    "LimitError",
    "Limits",
    "check_finite",
    "checked_zip",
    "current",
    "json_depth",
    "load_npy",
    "load_npz",
    "loads_json",
    "raised_limits",
    "read_member",
    "refuse",
]


class LimitError(ValueError):
    """A file that asks for more than a budget allows (bytes, depth, shape), or holds weights that
    are not finite: refused before anything is built from it."""


@dataclass(frozen=True)
class Limits:
    """The budgets in force. Why these numbers: the largest file tablegym ships or trains is a
    Threes n-tuple network of about 200 MB in memory (six 6-tuples); 1 GiB leaves a user's own
    network room while a forged file cannot take a 24 GiB machine down."""

    model_bytes: int = 1 << 30
    """Bytes a model file may build in memory once inflated: all members of a zip together, all
    tensors of a checkpoint, every table of an n-tuple network."""
    json_bytes: int = 64 << 20
    """Bytes of one JSON document (an SB3 ``data`` member, a journal line, a config)."""
    json_depth: int = 64
    """Nesting of one JSON document: tablegym writes at most 4 levels."""
    json_values: int = 1 << 22
    """Values (numbers, strings, arrays, objects) of one JSON document, counted before it is
    parsed: each costs Python 30-70 bytes, so 64 MiB of ``[],`` (64 kB zipped) would build
    1.7 GB; 4 Mi values cost at most about 300 MB."""
    pickle_bytes: int = 1 << 20
    """Bytes of the pickle inside a torch file (its structure and metadata, not its tensors, which
    are members of their own): torch reads it in pure Python, about 5 s and up to 70 MB a MiB,
    and tablegym's are 1-3 kB (a state dict takes some 150 bytes a tensor)."""
    zip_members: int = 1 << 16
    """Members of one zip archive (a torch file, an SB3 model, an npz): each costs memory once
    the archive's directory is read, so their number is read first."""

    def flag_hint(self, what: str) -> str:
        if what == "model_bytes":
            return "raise it with --max-model-mb or tablegym.envs.limits.raised_limits(model_bytes=...)"
        return f"raise it with tablegym.envs.limits.raised_limits({what}=...)"


_LIMITS: contextvars.ContextVar[Limits] = contextvars.ContextVar("tablegym_limits", default=Limits())  # noqa: B039 (frozen)


def current() -> Limits:
    """The budgets in force here (the innermost ``raised_limits`` block, else the defaults)."""
    return _LIMITS.get()


@contextlib.contextmanager
def raised_limits(**budgets: int) -> Iterator[Limits]:
    """Within the block, the named budgets (fields of ``Limits``) are the given values."""
    unknown = sorted(set(budgets) - set(Limits.__dataclass_fields__))
    if unknown:
        raise TypeError(f"unknown limit(s) {', '.join(unknown)}; known: {', '.join(Limits.__dataclass_fields__)}")
    for name, value in budgets.items():
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"limit {name} must be a positive integer, got {value!r}")
    token = _LIMITS.set(replace(_LIMITS.get(), **budgets))
    try:
        yield _LIMITS.get()
    finally:
        _LIMITS.reset(token)


def refuse(what: str, asked: str, limit_name: str) -> LimitError:
    """The one-line refusal: ``what`` asked for ``asked``, over the named limit."""
    limits = current()
    value = getattr(limits, limit_name)
    return LimitError(f"{what}: {asked}, over the limit of {value:,} ({limit_name}); refused; {limits.flag_hint(limit_name)}")


_SCAN = 1 << 20  # bytes of JSON scanned at a time: a few tens of MB of temporaries


def _json_shape(text: str | bytes) -> tuple[int, int]:
    """(deepest nesting of ``[`` and ``{``, an upper bound on the values ``json.loads`` builds) of
    a JSON text, in one linear pass without parsing: a quote opens or closes a string unless an
    odd run of backslashes escapes it, and only brackets, commas and colons outside strings count.
    Linear whatever the text (a pattern over strings backtracks on unterminated ones)."""
    data = text.encode() if isinstance(text, str) else text  # bytes or bytearray: read in place
    depth = top = 0
    values = 1
    inside, slashes = False, 0  # in a string, and backslashes just before the chunk
    for start in range(0, len(data), _SCAN):
        c = np.frombuffer(data, dtype=np.uint8, count=min(_SCAN, len(data) - start), offset=start)
        at = np.arange(len(c))
        plain = np.maximum.accumulate(np.where(c == 0x5C, -1, at))  # the last non-backslash at or before each byte
        quotes = np.flatnonzero(c == 0x22)
        prev = np.maximum(quotes - 1, 0)
        run = np.where(quotes > 0, prev - plain[prev], 0)  # backslashes just before each quote
        run = np.where((quotes == 0) | (plain[prev] < 0), run + slashes, run)
        toggles = np.zeros(len(c), dtype=np.int8)
        toggles[quotes[run % 2 == 0]] = 1
        outside = (np.cumsum(toggles, dtype=np.int64) + inside) % 2 == 0
        opens = outside & ((c == 0x5B) | (c == 0x7B))
        level = np.cumsum(opens.astype(np.int64) - (outside & ((c == 0x5D) | (c == 0x7D)))) + depth
        top, depth = max(top, int(level.max())), int(level[-1])
        values += int(np.count_nonzero(opens)) + int(np.count_nonzero(outside & ((c == 0x2C) | (c == 0x3A))))
        inside = not bool(outside[-1])  # the parity after the chunk's last byte (an opening quote: inside)
        slashes = len(c) - 1 - int(plain[-1]) + (slashes if plain[-1] < 0 else 0)
    return top, values


def json_depth(text: str | bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in a JSON text, counted without parsing (strings
    skipped), so a document too deep for ``json.loads``' recursion is told apart before it is
    parsed."""
    return _json_shape(text)[0]


def loads_json(text: str | bytes, what: str) -> Any:
    """``json.loads(text)`` after checking its size, its nesting and the number of values it
    builds against the budgets; ``what`` names the document in the refusal ("'run/data.jsonl'
    line 3")."""
    limits = current()
    if len(text) > limits.json_bytes:
        raise refuse(what, f"{len(text):,} bytes of JSON", "json_bytes")
    data = text.encode() if isinstance(text, str) else bytes(text)
    # Brackets anywhere bound the nesting, and with the separators the values: a text within both
    # budgets by these counts (most records) needs no exact pass.
    opens = data.count(b"[") + data.count(b"{")
    if opens <= limits.json_depth and opens + data.count(b",") + data.count(b":") < limits.json_values:
        return json.loads(text)
    depth, values = _json_shape(text)
    if depth > limits.json_depth:
        raise refuse(what, f"JSON nested {depth:,} deep", "json_depth")
    if values > limits.json_values:
        raise refuse(what, f"JSON of up to {values:,} values", "json_values")
    return json.loads(text)


_CHUNK = 1 << 22  # elements looked at a time: no temporary larger than a few MB


def check_finite(array: Any, what: str) -> None:
    """Refuse weights that hold NaN or an infinity: a search would read them as values. Looks at
    ``_CHUNK`` elements at a time, so a large table needs no copy of its size."""
    values = np.asarray(array)
    if values.dtype.kind not in "fc":
        return
    flat = values.reshape(-1)
    chunks = range(0, flat.size, _CHUNK)
    if all(np.isfinite(flat[i : i + _CHUNK]).all() for i in chunks):
        return
    bad = sum(int(flat[i : i + _CHUNK].size - np.count_nonzero(np.isfinite(flat[i : i + _CHUNK]))) for i in chunks)
    raise LimitError(f"{what}: {bad:,} of its {values.size:,} weights are NaN or infinite; refused")


# -- zip archives: sizes read from the directory, before anything is inflated ---------------------


ZIP_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}


def _zip_entries(file: IO[bytes]) -> int | None:
    """The number of members the end record of the zip ``file`` declares (its directory not yet
    read), or None when it has none (not a zip: ``zipfile`` says so next)."""
    # the end-of-directory record, zip64 included, as zipfile reads it (private: not in typeshed)
    end = zipfile._EndRecData(file)  # type: ignore[attr-defined]
    file.seek(0)
    return None if end is None else int(end[zipfile._ECD_ENTRIES_TOTAL])  # type: ignore[attr-defined]


def checked_zip(file: str | os.PathLike | IO[bytes], what: str, *, stored_only: bool = False) -> zipfile.ZipFile:
    """The zip archive ``file``, opened once its declared sizes are checked: at most
    ``zip_members`` members (counted before the directory is read), no encrypted member, each
    stored or deflated (``stored_only``: stored, as torch writes its archives; a compressed
    member inside a torch file is a forgery) with a stored member's sizes equal, and the members'
    inflated sizes, ALL TOGETHER, within ``model_bytes``. A refusal is a ``LimitError`` naming
    ``what`` and the limit; a file that is not a zip raises ``zipfile.BadZipFile``. Read members
    with ``read_member``, which never inflates past a member's declared size."""
    limits = current()
    if isinstance(file, (str, os.PathLike)):
        with open(file, "rb") as handle:
            entries = _zip_entries(handle)
    else:
        entries = _zip_entries(file)
    if entries is not None and entries > limits.zip_members:
        raise refuse(what, f"{entries:,} zip members", "zip_members")
    archive = zipfile.ZipFile(file)
    try:
        total = 0
        for info in archive.infolist():
            method = ZIP_METHODS.get(info.compress_type, f"method {info.compress_type}")
            if info.flag_bits & 0x1:
                raise LimitError(f"{what}: its member {info.filename!r} is encrypted; refused")
            if stored_only and info.compress_type != zipfile.ZIP_STORED:
                raise LimitError(
                    f"{what}: its member {info.filename!r} is compressed ({method}), which torch never "
                    f"writes (its archives are stored); refused: its inflated size cannot be trusted"
                )
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise LimitError(
                    f"{what}: its member {info.filename!r} is compressed with {method}; read are stored "
                    f"and deflate members only; refused"
                )
            if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
                raise LimitError(
                    f"{what}: its stored member {info.filename!r} declares {info.file_size:,} bytes "
                    f"but holds {info.compress_size:,}; refused"
                )
            total += info.file_size
        if total > limits.model_bytes:
            raise refuse(what, f"its {len(archive.infolist()):,} members inflate to {total:,} bytes together", "model_bytes")
    except BaseException:
        archive.close()
        raise
    return archive


def read_member(archive: zipfile.ZipFile, name: str | zipfile.ZipInfo, what: str) -> bytes:
    """The bytes of one member of a ``checked_zip`` archive, inflated never past its declared size
    (which ``checked_zip`` budgeted): ``ZipExtFile.read(n)`` asks zlib for at most ``n`` bytes,
    where ``read()`` would inflate all a lying member holds (up to 2 GiB a call) before cutting it."""
    info = name if isinstance(name, zipfile.ZipInfo) else archive.getinfo(name)
    with archive.open(info) as member:
        data = member.read(info.file_size) if info.file_size else b""
    if len(data) != info.file_size:
        raise zipfile.BadZipFile(
            f"{what}: its member {info.filename!r} holds {len(data):,} of the {info.file_size:,} bytes it declares"
        )
    return data


# -- numpy files: the header first, then exactly the bytes it declares ----------------------------


NPY_HEADER_BYTES = 10_000  # numpy's own default max_header_size


def _npy_array(file: IO[bytes], what: str, available: int) -> np.ndarray:
    """The array of the ``.npy`` stream ``file`` (``available`` bytes from its start), after its
    header: plain dtypes only (never ``allow_pickle``), and a shape whose bytes fit both the
    budget and the bytes that follow the header."""
    fmt = np.lib.format
    start = file.tell()
    version = fmt.read_magic(file)
    if version == (1, 0):
        shape, fortran, dtype = fmt.read_array_header_1_0(file, max_header_size=NPY_HEADER_BYTES)
    elif version == (2, 0):
        shape, fortran, dtype = fmt.read_array_header_2_0(file, max_header_size=NPY_HEADER_BYTES)
    else:
        shape, fortran, dtype = fmt._read_array_header(  # type: ignore[attr-defined]  # private, not in numpy's stubs
            file, version, max_header_size=NPY_HEADER_BYTES
        )
    if dtype.hasobject:
        raise LimitError(f"{what}: holds Python objects (dtype {dtype}); only plain arrays are read, refused")
    count = 1
    for n in shape:
        count *= int(n)
    nbytes = count * dtype.itemsize
    if nbytes > current().model_bytes:
        raise refuse(what, f"an array of shape {tuple(shape)} and dtype {dtype} ({nbytes:,} bytes)", "model_bytes")
    left = available - (file.tell() - start)
    if nbytes > left:
        raise LimitError(
            f"{what}: its header declares an array of shape {tuple(shape)} ({nbytes:,} bytes), the "
            f"file holds {max(left, 0):,} bytes after it; refused (truncated or forged)"
        )
    file.seek(start)
    return fmt.read_array(file, allow_pickle=False, max_header_size=NPY_HEADER_BYTES)


def load_npy(path: str | os.PathLike, what: str | None = None) -> np.ndarray:
    """``np.load(path, allow_pickle=False)`` of a ``.npy`` file, its header checked first (plain
    dtype, bytes within ``model_bytes`` and within the file): a forged header never allocates."""
    what = what or repr(str(path))
    with open(path, "rb") as file:
        return _npy_array(file, what, os.fstat(file.fileno()).st_size)


def load_npz(path: str | os.PathLike, what: str | None = None) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file ``path`` (``np.savez``, compressed or not), by name: the
    archive's declared sizes together within ``model_bytes`` (``checked_zip``), then each
    member's header as in ``load_npy``, before anything is inflated."""
    what = what or repr(str(path))
    out = {}
    with checked_zip(path, what) as archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                continue
            with archive.open(info) as member:
                out[info.filename[:-4]] = _npy_array(member, f"{what} (its {info.filename})", info.file_size)
    return out
