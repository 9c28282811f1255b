"""A small file never asks for gigabytes: forged model and data files against every loader, each
loaded in a child process under a memory limit (tests/hostile.py), which must refuse it in one line
naming the file and the limit, having grown by little; and weights that are NaN or infinite are
refused by every loader of a network.

The forged files are small on disk: zero-stride tensors, zip members that deflate to a GiB from a
MB, headers and metadata that declare sizes the file does not hold. None is ever inflated here.
"""

from __future__ import annotations

import io
import json
import re
import struct
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import tablegym.envs  # noqa: F401  (registers the env ids)
from tablegym.envs import make_game, plugins
from tablegym.envs.limits import LimitError, current, load_npy, load_npz, raised_limits
from tablegym.models.checkpoint import (
    CheckpointError,
    ModelTooLargeError,
    NonFiniteWeightsError,
    UnsafeModelError,
    load_checkpoint,
    save_checkpoint,
)
from tablegym.models.export import EXPORTED, from_torch, save
from tablegym.models.learned import default_checkpoint, load_evaluator
from tablegym.models.policy import ActorCritic, load_actor_critic
from tablegym.models.sb3_files import read_sb3_network, restore
from tests.hostile import run_limited

ROOT = Path(__file__).resolve().parents[1]
GREW_MB = 200
"""What refusing a forged file may cost, at most: the forged sizes are gigabytes."""
MIB = 1 << 20
LEARNED_GAMES = [p.name for p in plugins() if default_checkpoint(p.name).is_file() and p.name != "starship"]


# -- forging: zips written member by member, deflate streams that are mostly one repeated block ------


def _zip_bytes(members: list[tuple[str, bytes, int, int, int]]) -> bytes:
    """A zip of ``(name, data as stored, method, crc, inflated size)`` members, written by hand so
    that a member's data can be a deflate stream made elsewhere (zipfile compresses itself)."""
    out, central = bytearray(), bytearray()
    for name, data, method, crc, size in members:
        raw = name.encode()
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(data), size, len(raw), 0)
        out += raw + data
        central += (
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                20,
                20,
                0,
                method,
                0,
                0x21,
                crc,
                len(data),
                size,
                len(raw),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + raw
        )
    start = len(out)
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), start, 0)
    return bytes(out)


def _write_zip(path: Path, members: list[tuple[str, bytes, int, int, int]]) -> Path:
    path.write_bytes(_zip_bytes(members))
    return path


def _stored(name: str, data: bytes) -> tuple[str, bytes, int, int, int]:
    return name, data, zipfile.ZIP_STORED, zlib.crc32(data), len(data)


def _deflated(name: str, data: bytes) -> tuple[str, bytes, int, int, int]:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return name, c.compress(data) + c.flush(), zipfile.ZIP_DEFLATED, zlib.crc32(data), len(data)


def _bomb(name: str, mib: int, *, prefix: bytes = b"", fill: int = 0, suffix: bytes = b"") -> tuple:
    """A deflate member inflating to ``prefix``, ``mib`` MiB of the byte ``fill``, ``suffix``
    (about 1 kB on disk a MiB): one compressed MiB repeated, each copy after a full flush. Its
    CRC is not computed (seconds a GiB): a loader that inflates it has already failed the test."""

    def part(data: bytes) -> bytes:
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush(zlib.Z_FULL_FLUSH)

    stream = part(prefix) + part(bytes([fill]) * MIB) * mib + part(suffix) + zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    return name, stream, zipfile.ZIP_DEFLATED, 0, len(prefix) + mib * MIB + len(suffix)


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def _torch_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


# -- the child that loads them -------------------------------------------------------------------------


BASE = """import torch, numpy, tablegym.envs
import tablegym.models.export, tablegym.models.learned, tablegym.models.sb3_files, tablegym.training.dqn
from tablegym.envs import make_game
from tablegym.models.learned import load_evaluator
"""
MASKABLE = BASE + "import gymnasium, torch._dynamo, warnings\nfrom sb3_contrib import MaskablePPO\n"
"""The SB3 loads' imports: torch._dynamo is what SB3's first model imports (torch's optimizer does)."""
MODEL = """warnings.simplefilter("ignore")
MODEL = MaskablePPO("MlpPolicy", gymnasium.make("tablegym/Trilobite-v0"), n_steps=64, device="cpu")
"""
"""What the SB3 loads are given: a model to restore into, built in each child (it runs torch)."""
MEASURED: dict[str, tuple] = {}
"""Each attack's outcome (printed with ``pytest -s``): the table of the README's security section."""


_HWM = """
import os as _os, re as _re
def _hwm():  # this process's own peak resident memory, in MB (ru_maxrss starts at the parent's)
    if not _os.path.exists("/proc/self/status"):
        return float("nan")
    return int(_re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024
_before = _hwm()
try:
{body}
finally:
    open({out!r}, "w").write(f"{{_before}} {{_hwm()}}")
"""


def refused_in_child(name: str, body: str, path: Path, error: str, match: str, *, imports: str = BASE, setup: str = "") -> None:
    """``body`` (which loads ``path``) refuses it in a child under the memory limit: the exception
    ``error``, one line naming the file and matching ``match``, its own peak memory grown by under
    ``GREW_MB`` (read from /proc: ``ru_maxrss`` of a child starts at its parent's peak)."""
    hwm = path.with_name(path.name + ".hwm")
    indented = "\n".join("    " + line for line in body.strip().splitlines())
    out = run_limited(_HWM.format(body=indented, out=str(hwm)), imports=imports, setup=setup, cwd=ROOT)
    before, after = map(float, hwm.read_text().split())
    grew = after - before if after == after else out.grew_mb
    MEASURED[name] = (out.error, round(after), round(grew), out.message)
    print(
        f"\nHOSTILE {name} | {path.stat().st_size:,} bytes | {out.error} | peak {after:.0f} MB | "
        f"grew {grew:.0f} MB | {out.message}"
    )
    assert not out.ok and out.error == error, out
    assert "\n" not in out.message and str(path) in out.message, out.message
    assert re.search(match, out.message), out.message
    assert grew < GREW_MB, (grew, out)


# -- an SB3 zip to forge from -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory) -> Path:
    import gymnasium
    from sb3_contrib import MaskablePPO

    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        MaskablePPO("MlpPolicy", gymnasium.make("tablegym/Trilobite-v0"), n_steps=64, seed=3, device="cpu").save(path)
    return path


def _sb3_with(src: Path, dst: Path, replace: dict[str, tuple] | None = None, drop: tuple[str, ...] = ()) -> Path:
    """The zip ``src`` with members replaced by forged ones (``_stored``/``_deflated``/``_bomb``)."""
    members = [_stored(n, b) for n, b in _members(src).items() if n not in drop and n not in (replace or {})]
    return _write_zip(dst, members + list((replace or {}).values()))


def _exported_meta(game, layers: int) -> dict:
    return {
        "game": game.spec.name,
        "options": dict(game.spec.options),
        "network": EXPORTED,
        "output": "value",
        "activations": [["relu", 0.0]] * (layers - 1) + [["tanh", 0.0]],
    }


# -- exported networks and checkpoints ----------------------------------------------------------------


def test_an_exported_network_of_zero_stride_weights_is_refused(tmp_path):
    game = make_game("trilobite")
    one = torch.zeros(1)
    state = {
        "0.weight": one.expand(30000, 168),
        "0.bias": one.expand(30000),
        "1.weight": one.expand(30000, 30000),
        "1.bias": one.expand(30000),
        "2.weight": one.expand(1, 30000),
        "2.bias": one,
    }
    path = save_checkpoint(tmp_path / "zero-stride.pt", state=state, metadata=_exported_meta(game, 3))
    assert path.stat().st_size < 4096  # 3.6 GB of float32 (7.2 GB once float64) declared by 2 kB
    refused_in_child(
        "exported network, zero-stride 30000x30000 weights",
        f"load_evaluator(make_game('trilobite'), {str(path)!r})",
        path,
        "ModelTooLargeError",
        r"its tensor model\['0\.weight'\] of shape \(30000, 168\) \(20,160,000 bytes\) is a zero-stride view of 4 "
        r"bytes of storage; a tensor must fit its storage, refused",
    )


def test_a_state_dict_whose_tensors_share_one_storage_is_refused_by_its_total(tmp_path):
    game = make_game("trilobite")
    shared = torch.ones(512, 512) * 1e-3  # 1 MiB, named 1100 times: 1.1 GiB once each layer is copied
    state = {"0.weight": torch.ones(512, 168), "0.bias": torch.zeros(512)}
    for i in range(1, 1101):
        state[f"{i}.weight"], state[f"{i}.bias"] = shared, state["0.bias"]
    state["1101.weight"], state["1101.bias"] = torch.ones(1, 512), torch.zeros(1)
    path = save_checkpoint(tmp_path / "shared.pt", state=state, metadata=_exported_meta(game, 1102))
    assert path.stat().st_size < 2 * MIB
    refused_in_child(
        "exported network, 1100 layers naming one 1 MiB storage",
        f"load_evaluator(make_game('trilobite'), {str(path)!r})",
        path,
        "ModelTooLargeError",
        r"tensors of [\d,]+ bytes, over the limit of 1,073,741,824 \(model_bytes\)",
    )


def _torch_zip_with_bomb(mib: int) -> bytes:
    """A torch archive of one float32 tensor whose storage member deflates to ``mib`` MiB (torch
    stores its members; this one is compressed), its pickle declaring that many elements."""
    k = 123457  # a count pickled as a 4-byte int, replaced by the forged one wherever it appears
    template = _torch_bytes({"w": torch.zeros(k)})
    members = _members_of_bytes(template)
    pkl = next(n for n in members if n.endswith("/data.pkl"))
    forged = members[pkl].replace(b"J" + k.to_bytes(4, "little"), b"J" + (mib * MIB // 4).to_bytes(4, "little"))
    assert forged.count((mib * MIB // 4).to_bytes(4, "little")) == 2
    out = []
    for name, data in members.items():
        if name.endswith("/data/0"):
            out.append(_bomb(name, mib))
        else:
            out.append(_stored(name, forged if name == pkl else data))
    return _zip_bytes(out)


def _members_of_bytes(blob: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        return {n: z.read(n) for n in z.namelist()}


def test_a_checkpoint_with_a_compressed_storage_is_refused_before_torch_inflates_it(tmp_path):
    path = tmp_path / "deflated.pt"
    path.write_bytes(_torch_zip_with_bomb(1000))
    assert path.stat().st_size < 2 * MIB  # 1000 MiB once inflated
    refused_in_child(
        "checkpoint, storage member deflating to 1000 MiB",
        f"tablegym.models.checkpoint.load_checkpoint({str(path)!r})",
        path,
        "ModelTooLargeError",
        r"member '[^']*data/0' is compressed \(deflate\), which torch never writes",
    )


def test_checkpoint_metadata_that_describes_a_wider_network_than_the_file_builds_nothing(tmp_path):
    payload = load_checkpoint(default_checkpoint("trilobite"))
    payload["metadata"]["net"]["hidden"] = [30000]
    path = tmp_path / "hidden.pt"
    torch.save(payload, path)
    refused_in_child(
        "checkpoint metadata hidden=[30000]",
        f"load_evaluator(make_game('trilobite'), {str(path)!r})",
        path,
        "CheckpointError",
        r"does not match its network description: 'hidden\.0\.weight' is \(128, 112\) in the file, "
        r"\(30000, 112\) by its metadata",
    )
    payload["metadata"]["net"]["hidden"] = [10**6, 10**6]
    torch.save(payload, path)
    refused_in_child(
        "checkpoint metadata hidden=[10^6, 10^6]",
        f"load_evaluator(make_game('trilobite'), {str(path)!r})",
        path,
        "ModelTooLargeError",
        r"its metadata describes a network of [\d,]+ bytes, over the limit of [\d,]+ \(model_bytes\)",
    )


@pytest.mark.parametrize("trainer", ["ppo", "dqn"])
def test_policy_and_q_network_metadata_with_huge_hidden_sizes_builds_nothing(tmp_path, trainer):
    from tablegym.models.policy import qnetwork

    game = make_game("trilobite")
    inputs, actions = 168, game.spec.num_actions
    if trainer == "ppo":
        model, call = (
            ActorCritic(inputs, actions, (8,)),
            "tablegym.models.policy.load_actor_critic({p!r}, make_game('trilobite'))",
        )
    else:
        model = nn.ModuleDict({"q": qnetwork(inputs, actions, (8,)), "target": qnetwork(inputs, actions, (8,))})
        call = "tablegym.models.policy.load_qnet({p!r})"
    meta = {
        "game": "trilobite",
        "options": dict(game.spec.options),
        trainer: {"inputs": inputs, "actions": actions, "hidden": [60000, 60000]},
    }
    path = save_checkpoint(tmp_path / f"{trainer}.pt", model=model, metadata=meta)
    refused_in_child(
        f"{trainer} checkpoint metadata hidden=[60000, 60000]",
        "import tablegym.models.policy\n" + call.format(p=str(path)),
        path,
        "ModelTooLargeError",
        r"its metadata describes a network of [\d,]+ bytes, over the limit of 1,073,741,824 \(model_bytes\)",
    )


def test_a_forged_storage_size_is_refused_by_torchs_own_check(tmp_path):
    """torch compares every storage it allocates with its member's size (the archive check
    relies on it): a pickle declaring more elements than its member holds allocates nothing."""
    k = 123457
    members = _members_of_bytes(
        _torch_bytes({"format": "tablegym-checkpoint-v1", "metadata": {}, "model": {"w": torch.zeros(k)}})
    )
    pkl = next(n for n in members if n.endswith("/data.pkl"))
    members[pkl] = members[pkl].replace(b"J" + k.to_bytes(4, "little"), b"J" + (256 * MIB).to_bytes(4, "little"))
    path = _write_zip(tmp_path / "forged.pt", [_stored(n, b) for n, b in members.items()])
    with pytest.raises(CheckpointError, match=r"corrupt or not a torch file.*record size"):
        load_checkpoint(path)


def test_a_big_pickle_a_legacy_file_and_too_many_members_are_refused_by_name(tmp_path):
    note = save_checkpoint(tmp_path / "note.pt", state={"w": torch.zeros(1)}, metadata={"note": "x" * (2 * MIB)})
    with pytest.raises(ModelTooLargeError, match=r"a pickle of [\d,]+ bytes .* \(pickle_bytes\)"):
        load_checkpoint(note)
    legacy = tmp_path / "legacy.pt"
    torch.save({"format": "tablegym-checkpoint-v1", "model": {}}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(CheckpointError, match="legacy format is refused"):
        load_checkpoint(legacy)
    with (
        raised_limits(zip_members=4),
        pytest.raises(
            ModelTooLargeError,
            match=r"zip members, over the limit of 4 "
            r"\(zip_members\)",
        ),
    ):
        load_checkpoint(default_checkpoint("trilobite"))


# -- Stable-Baselines3 zips -------------------------------------------------------------------------------


@pytest.mark.parametrize("loader", ["load_evaluator", "restore"])
def test_an_sb3_zip_of_five_gib_members_is_refused_by_their_sum(sb3_zip, tmp_path, loader):
    names = ["policy.pth", "policy.optimizer.pth", "pytorch_variables.pth", "a.pth", "b.pth"]
    path = _sb3_with(sb3_zip, tmp_path / "bombs.zip", {n: _bomb(n, 1000) for n in names})
    assert path.stat().st_size < 8 * MIB
    body = {
        "load_evaluator": f"load_evaluator(make_game('trilobite'), {str(path)!r})",
        "restore": f"tablegym.models.sb3_files.restore(MODEL, {str(path)!r})",
    }[loader]
    refused_in_child(
        f"SB3 zip, five 1000 MiB .pth members ({loader})",
        body,
        path,
        "ModelTooLargeError",
        r"members inflate to [\d,]+ bytes together, over the limit of 1,073,741,824 \(model_bytes\); "
        r"refused; raise it with --max-model-mb",
        imports=MASKABLE,
        setup=MODEL,
    )


def test_an_sb3_data_json_inflating_to_512_mib_is_refused_before_it_is_inflated(sb3_zip, tmp_path):
    path = _sb3_with(sb3_zip, tmp_path / "json.zip", {"data": _bomb("data", 512, prefix=b'{"x": "', fill=ord("a"), suffix=b'"}')})
    refused_in_child(
        "SB3 zip, data JSON inflating to 512 MiB",
        f"load_evaluator(make_game('trilobite'), {str(path)!r})",
        path,
        "ModelTooLargeError",
        r"its data: [\d,]+ bytes of JSON, over the limit of [\d,]+ \(json_bytes\)",
    )


def test_an_sb3_data_json_nested_200000_deep_is_refused_without_a_recursion_error(sb3_zip, tmp_path):
    deep = b"[" * 200_000 + b"]" * 200_000
    path = _sb3_with(sb3_zip, tmp_path / "deep.zip", {"data": _deflated("data", deep)})
    refused_in_child(
        "SB3 zip, data JSON nested 200,000 deep",
        f"tablegym.models.sb3_files.read_sb3_network({str(path)!r})",
        path,
        "ModelTooLargeError",
        r"JSON nested 200,000 deep, over the limit of 64 \(json_depth\)",
    )


def test_an_sb3_data_json_of_millions_of_empty_lists_is_refused_by_its_value_count(sb3_zip, tmp_path):
    lists = b"[" + b"[]," * (21 * MIB) + b"[]]"  # 63 MiB, within json_bytes: 1.7 GB once parsed
    path = _sb3_with(sb3_zip, tmp_path / "lists.zip", {"data": _deflated("data", lists)})
    assert path.stat().st_size < MIB
    refused_in_child(
        "SB3 zip, data JSON of 22 million empty lists",
        f"load_evaluator(make_game('trilobite'), {str(path)!r})",
        path,
        "ModelTooLargeError",
        r"its data: JSON of up to [\d,]+ values, over the limit of 4,194,304 "
        r"\(json_values\)",
    )


def test_json_is_measured_in_one_pass_whatever_its_strings():
    """Strings are skipped by the parity of the backslashes before each quote: brackets, commas
    and colons inside them do not count, and unterminated strings (which make a pattern over
    strings backtrack, quadratic in the text) cost one pass."""
    from tablegym.envs.limits import json_depth, loads_json

    assert json_depth(json.dumps(["[[[", {"a\\": ['\\"]]]', "{"]}])) == 3  # brackets and escapes in strings
    assert json_depth("[" * 200_000 + "]" * 200_000) == 200_000
    assert json_depth("[" + '"' + '\\"' * 20_000 + '"\\' * 20_000) == 1  # 100 kB of unterminated strings
    with raised_limits(json_values=5), pytest.raises(LimitError, match=r"JSON of up to 7 values, over the limit of 5"):
        loads_json('{"a": [1, 2], "b": 3}', "doc")
    assert loads_json('{"a": [1, 2], "b": "x,y:[z"}', "doc") == {"a": [1, 2], "b": "x,y:[z"}


@pytest.mark.parametrize("loader", ["load_evaluator", "restore"])
def test_an_sb3_pth_member_that_is_a_compressed_torch_zip_is_refused(sb3_zip, tmp_path, loader):
    path = _sb3_with(sb3_zip, tmp_path / "inner.zip", {"policy.pth": _stored("policy.pth", _torch_zip_with_bomb(1000))})
    body = {
        "load_evaluator": f"load_evaluator(make_game('trilobite'), {str(path)!r})",
        "restore": f"tablegym.models.sb3_files.restore(MODEL, {str(path)!r})",
    }[loader]
    refused_in_child(
        f"SB3 zip, policy.pth a torch zip with a 1000 MiB deflated storage ({loader})",
        body,
        path,
        "ModelTooLargeError",
        r"its policy\.pth: its member '[^']*data/0' is compressed \(deflate\)",
        imports=MASKABLE,
        setup=MODEL,
    )


# -- numpy files ------------------------------------------------------------------------------------------


def _npy_header(shape: tuple[int, ...], dtype=np.float32) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()  # the magic string, then the header


def test_an_npy_header_declaring_2e11_elements_is_refused_before_allocation(tmp_path):
    path = tmp_path / "huge.npy"
    path.write_bytes(_npy_header((2 * 10**11,)) + bytes(64))
    refused_in_child(
        ".npy header declaring 2e11 float32",
        f"tablegym.envs.limits.load_npy({str(path)!r})",
        path,
        "LimitError",
        r"an array of shape \(200000000000,\) and dtype float32 \(800,000,000,000 bytes\), "
        r"over the limit of [\d,]+ \(model_bytes\)",
    )
    small = tmp_path / "small.npy"
    small.write_bytes(_npy_header((1000,)) + bytes(64))  # within the budget, but not within the file
    with pytest.raises(LimitError, match=r"declares an array of shape \(1000,\) \(4,000 bytes\), the file holds 64"):
        load_npy(small)


def _demos(tmp_path: Path, member: tuple) -> Path:
    demos = tmp_path / "demos"
    demos.mkdir()
    _write_zip(demos / "games_0000000.npz", [member])
    return demos


def test_demonstrations_whose_npy_header_declares_2e11_elements_are_refused(tmp_path):
    demos = _demos(tmp_path, _stored("obs.npy", _npy_header((2 * 10**11,)) + bytes(64)))
    path = demos / "games_0000000.npz"
    refused_in_child(
        "demonstrations .npz, member header declaring 2e11 float32",
        f"import tablegym.training.imitate as m\nm.load_demos(__import__('pathlib').Path({str(demos)!r}))",
        path,
        "LimitError",
        r"\(its obs\.npy\): an array of shape \(200000000000,\).* \(model_bytes\)",
    )


def test_an_npz_inflating_to_2_gib_is_refused_by_its_declared_size(tmp_path):
    demos = _demos(tmp_path, _bomb("obs.npy", 2048 - 1, prefix=_npy_header(((2048 - 1) * MIB,), np.uint8)))
    path = demos / "games_0000000.npz"
    assert path.stat().st_size < 4 * MIB
    refused_in_child(
        "demonstrations .npz inflating to 2 GiB",
        f"import tablegym.training.imitate as m\nm.load_demos(__import__('pathlib').Path({str(demos)!r}))",
        path,
        "LimitError",
        r"members inflate to [\d,]+ bytes together, over the limit of [\d,]+ "
        r"\(model_bytes\)",
    )


def test_npy_and_npz_files_within_the_budget_load_as_numpy_does(tmp_path):
    a, b = np.arange(12, dtype=np.int16).reshape(3, 4), np.linspace(0, 1, 5)
    np.save(tmp_path / "a.npy", a)
    np.savez_compressed(tmp_path / "ab.npz", a=a, b=b)
    assert np.array_equal(load_npy(tmp_path / "a.npy"), a)
    loaded = load_npz(tmp_path / "ab.npz")
    assert set(loaded) == {"a", "b"} and np.array_equal(loaded["a"], a) and np.array_equal(loaded["b"], b)
    np.save(tmp_path / "o.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(LimitError, match="holds Python objects"):
        load_npy(tmp_path / "o.npy")
    with raised_limits(model_bytes=16), pytest.raises(LimitError, match=r"\(24 bytes\), over the limit of 16 \(model_bytes\)"):
        load_npy(tmp_path / "a.npy")  # 24 bytes of int16


# -- NaN and infinite weights: every loader of a network ----------------------------------------------------


BAD = {"nan": float("nan"), "inf": float("inf")}


def _poisoned(payload: dict, value: float) -> dict:
    """``payload`` with its first floating tensor's first weight set to ``value``."""
    for name, t in payload["model"].items():
        if t.is_floating_point():
            t = t.clone()
            t.view(-1)[0] = value
            payload["model"][name] = t
            return payload
    raise AssertionError("no floating tensor")


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("name", LEARNED_GAMES)
def test_every_games_checkpoint_with_a_nan_or_infinite_weight_is_refused(tmp_path, name, bad):
    path = tmp_path / "bad.pt"
    torch.save(_poisoned(load_checkpoint(default_checkpoint(name)), BAD[bad]), path)
    with pytest.raises(NonFiniteWeightsError, match=r"1 of the [\d,]+ weights of '.*' are NaN or infinite") as info:
        load_evaluator(make_game(name), path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("bad", BAD)
def test_an_exported_network_a_policy_and_a_q_network_with_a_bad_weight_are_refused(tmp_path, bad):
    from tablegym.models.policy import load_qnet, qnetwork

    game = make_game("trilobite")
    exported = save(nn.Sequential(nn.Linear(168, 8), nn.ReLU(), nn.Linear(8, 1)), game, tmp_path / "net.pt")
    torch.save(_poisoned(load_checkpoint(exported), BAD[bad]), exported)
    policy = save_checkpoint(
        tmp_path / "ppo.pt",
        model=ActorCritic(168, 8, (8,)),
        metadata={"game": "trilobite", "options": dict(game.spec.options), "ppo": {"inputs": 168, "actions": 8, "hidden": [8]}},
    )
    torch.save(_poisoned(load_checkpoint(policy), BAD[bad]), policy)
    q = save_checkpoint(
        tmp_path / "dqn.pt",
        model=nn.ModuleDict({"q": qnetwork(168, 8, (8,)), "target": qnetwork(168, 8, (8,))}),
        metadata={"game": "trilobite", "options": {}, "dqn": {"inputs": 168, "actions": 8, "hidden": [8]}},
    )
    torch.save(_poisoned(load_checkpoint(q), BAD[bad]), q)
    for path, call in (
        (exported, lambda: load_evaluator(game, exported)),
        (policy, lambda: load_actor_critic(policy, game)),
        (q, lambda: load_qnet(q)),
    ):
        with pytest.raises(NonFiniteWeightsError, match=f"{re.escape(repr(str(path)))}: 1 of the"):
            call()


@pytest.mark.parametrize("bad", BAD)
def test_an_sb3_zip_with_a_bad_weight_is_refused_by_both_readers(sb3_zip, tmp_path, bad):
    import gymnasium
    from sb3_contrib import MaskablePPO

    state = torch.load(io.BytesIO(_members(sb3_zip)["policy.pth"]), weights_only=True)
    state["value_net.weight"] = state["value_net.weight"].clone()
    state["value_net.weight"][0, 0] = BAD[bad]
    path = _sb3_with(sb3_zip, tmp_path / "bad.zip", {"policy.pth": _stored("policy.pth", _torch_bytes(state))})
    with pytest.raises(NonFiniteWeightsError, match=r"its policy\.pth: 1 of the [\d,]+ weights of 'value_net\.weight'"):
        read_sb3_network(path)
    model = MaskablePPO("MlpPolicy", gymnasium.make("tablegym/Trilobite-v0"), n_steps=64, device="cpu")
    with pytest.raises(NonFiniteWeightsError):
        restore(model, path)


# -- the budget is the user's to raise ---------------------------------------------------------------------


def test_raised_limits_lets_a_larger_valid_network_load_and_the_cli_flag_does_the_same(tmp_path, capsys):
    from tablegym.experiments.cli import main

    game = make_game("trilobite")
    torch.manual_seed(0)
    net = nn.Sequential(nn.Flatten(), nn.Linear(168, 2048), nn.ReLU(), nn.Linear(2048, 1), nn.Tanh())
    path = save(net, game, tmp_path / "wide.pt")  # 1.4 MB of weights
    with raised_limits(model_bytes=MIB), pytest.raises(ModelTooLargeError) as info:
        load_evaluator(game, path)
    assert re.search(
        r"over the limit of 1,048,576 \(model_bytes\); refused; raise it with --max-model-mb", str(info.value)
    ) and str(path) in str(info.value)
    assert isinstance(info.value, LimitError) and isinstance(info.value, UnsafeModelError)
    with raised_limits(model_bytes=4 * MIB):
        assert np.array_equal(load_evaluator(game, path).params, from_torch(net, game).params)
    assert current().model_bytes == 1 << 30  # the block is over
    command = ["eval", "trilobite", f"alphabeta:eval=learned:{path},depth=1", "random", "--games", "2", "--no-progress"]
    assert main([*command, "--max-model-mb", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "(model_bytes); refused; raise it with --max-model-mb" in err and str(path) in err
    assert main([*command, "--max-model-mb", "4"]) == 0
