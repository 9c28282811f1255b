"""Hostile files for the Threes n-tuple loader and the Starship config reader: each is refused
in one line naming the file and the limit, before it costs memory or time (tests/hostile.py
loads it in a child under a memory limit and measures what the load added)."""

from __future__ import annotations

import hashlib
import json
import lzma
from pathlib import Path

import numpy as np
import pytest
import torch

from tablegym.envs.limits import LimitError, raised_limits
from tablegym.envs.starship.pipeline import Pipeline
from tablegym.envs.starship.stage_base import ConfigError, ConfigLimitError
from tablegym.envs.threes.core import ThreesGame
from tablegym.models.agents import make_agent
from tablegym.models.checkpoint import CheckpointError, save_checkpoint
from tablegym.models.threes.ntuple_net import NTupleLimitError, load_ntuple
from tests.cli_errors import assert_one_error_line
from tests.hostile import run_limited

GREW_MB = 200
"""What a refused file may add to the loading process: a few blocks of its entries, never its tables."""
LOAD_IMPORTS = "import time, torch, numpy\nfrom tablegym.models.threes.ntuple_net import load_ntuple"


def packed(a: np.ndarray) -> torch.Tensor:
    """``a`` as the compact form stores it: byte j of every element together, then lzma (one xz stream)."""
    shuffled = np.ascontiguousarray(a.view(np.uint8).reshape(-1, a.itemsize).T)
    return torch.frombuffer(bytearray(lzma.compress(shuffled.tobytes())), dtype=torch.uint8)


def ntuple_file(path: Path, *, tuples, stage_ranks=(11,), state: dict[str, torch.Tensor]) -> Path:
    """An n-tuple checkpoint as the trainer writes it, with the given description and entries."""
    meta = {
        "game": "threes",
        "options": {"hint": "+"},
        "kind": "ntuple",
        "net": {"tuples": [list(t) for t in tuples], "stage_ranks": list(stage_ranks), "symmetric": True},
        "compact": "index_lzma" in state,
    }
    return save_checkpoint(path, state=state, metadata=meta)


def compact(index: np.ndarray, codes: np.ndarray, scale: float = 1.0, **streams: torch.Tensor) -> dict[str, torch.Tensor]:
    """The shipped form of entries ``index`` with values ``codes * scale``; ``streams`` replace its packed ones."""
    gaps = np.diff(index, prepend=0).astype("<u4")
    state = {
        "index_lzma": packed(gaps),
        "value_lzma": packed(codes.astype("<i2")),
        "scale": torch.tensor([scale], dtype=torch.float64),
        "count": torch.tensor([index.size]),
    }
    return {**state, **streams}


def load_limited(path: Path, tmp_path: Path):
    """``load_ntuple(path)`` in a child under a memory limit; the outcome and the load's CPU seconds."""
    seconds = tmp_path / "seconds.txt"
    body = f"""
        start = time.process_time()
        try:
            load_ntuple({str(path)!r})
        finally:
            open({str(seconds)!r}, "w").write(str(time.process_time() - start))
    """
    outcome = run_limited(body, imports=LOAD_IMPORTS, timeout=600)
    return outcome, float(seconds.read_text())


def assert_refused(outcome, error: str, *words: str) -> None:
    assert not outcome.ok, "the hostile file was loaded"
    assert outcome.error == error, outcome.trace
    assert "\n" not in outcome.message and all(w in outcome.message for w in words), outcome.message
    assert outcome.grew_mb < GREW_MB, f"the refused load added {outcome.grew_mb:.0f} MB"


# ---- Threes n-tuple files ---------------------------------------------------------------------


def test_a_few_kilobytes_asking_for_gigabytes_of_tables_is_refused_before_they_are_built(tmp_path):
    # three 6-tuples x 15 stages: 755 M entries (3 GB of tables), one entry written every 4 kB page
    tuples, ranks = [(0, 1, 2, 3, 4, 5), (4, 5, 6, 7, 8, 9), (8, 9, 10, 11, 12, 13)], tuple(range(1, 15))
    n = 15 * 3 * 16**6  # stages x tuples x entries a table
    index = np.arange(0, n, 1024, dtype=np.int64)
    path = ntuple_file(
        tmp_path / "pages.pt", tuples=tuples, stage_ranks=ranks, state=compact(index, np.ones(index.size, dtype=np.int16))
    )
    assert path.stat().st_size < 8_000
    outcome, _ = load_limited(path, tmp_path)
    assert_refused(outcome, "NTupleLimitError", str(path), "3 tuples x 15 stages", "model_bytes", "--max-model-mb")
    with raised_limits(model_bytes=1 << 20):  # the budget in force decides, not a constant
        with pytest.raises(LimitError, match="model_bytes"):
            load_ntuple(ntuple_file(tmp_path / "small.pt", tuples=[(0, 1, 2, 3, 4)], state=compact(np.array([7]), np.array([1]))))


def test_an_lzma_bomb_is_inflated_no_further_than_its_entries_declare(tmp_path):
    # 1,000 entries declared (4,000 bytes of indices); the stream inflates to 64 MB of zeros
    bomb = torch.frombuffer(bytearray(lzma.compress(bytes(64 << 20), preset=0)), dtype=torch.uint8)
    state = compact(np.arange(1000), np.ones(1000), index_lzma=bomb)
    path = ntuple_file(tmp_path / "bomb.pt", tuples=[(0, 1, 2, 3)], state=state)
    assert path.stat().st_size < 50_000
    outcome, seconds = load_limited(path, tmp_path)
    assert_refused(outcome, "NTupleLimitError", str(path), "inflate past the 4,000 bytes its 1,000 entries declare")
    assert seconds < 2.0, f"the refused bomb took {seconds:.1f} s of CPU"


def test_more_streams_after_the_declared_one_are_refused_unread(tmp_path):
    # lzma.decompress would inflate every stream of the member: here 100 of 64 MB after a valid one
    index = np.arange(1000)
    valid = compact(index, np.ones(1000))["index_lzma"]
    bomb = lzma.compress(bytes(64 << 20), preset=0)
    state = compact(
        index, np.ones(1000), index_lzma=torch.frombuffer(bytearray(valid.numpy().tobytes() + bomb * 100), dtype=torch.uint8)
    )
    path = ntuple_file(tmp_path / "streams.pt", tuples=[(0, 1, 2, 3)], state=state)
    outcome, seconds = load_limited(path, tmp_path)
    assert_refused(outcome, "CheckpointError", str(path), "bytes after their lzma stream")
    assert seconds < 2.0


def test_sparse_entries_are_bounded_by_the_table_they_index(tmp_path):
    huge = {
        "index_lzma": packed(np.zeros(1, "<u4")),
        "value_lzma": packed(np.zeros(1, "<i2")),
        "scale": torch.tensor([1.0], dtype=torch.float64),
        "count": torch.tensor([1 << 40]),
    }
    with pytest.raises(NTupleLimitError, match="declares 1,099,511,627,776 sparse entries, its tables hold 131,072"):
        load_ntuple(ntuple_file(tmp_path / "count.pt", tuples=[(0, 1, 2, 3)], state=huge))
    outside = compact(np.array([3, 140_000]), np.ones(2))
    with pytest.raises(CheckpointError, match="does not fit a table of 131072 entries"):
        load_ntuple(ntuple_file(tmp_path / "outside.pt", tuples=[(0, 1, 2, 3)], state=outside))
    sparse = {"index": torch.tensor([1, 131_072], dtype=torch.int32), "value": torch.ones(2)}
    with pytest.raises(CheckpointError, match="does not fit a table of 131072 entries"):
        load_ntuple(ntuple_file(tmp_path / "sparse.pt", tuples=[(0, 1, 2, 3)], state=sparse))
    broadcast = {"index": torch.tensor([1, 2]), "value": torch.ones(2), "scale": torch.ones(1000, 1)}
    with pytest.raises(CheckpointError, match="scale is not one number"):
        load_ntuple(ntuple_file(tmp_path / "scale.pt", tuples=[(0, 1, 2, 3)], state=broadcast))


@pytest.mark.parametrize(
    ("tuples", "ranks", "words"),
    [
        ([(0, 1)] * 257, (11,), "257 tuples, over the 256 of MAX_TUPLES"),
        ([tuple(range(7))], (11,), "a tuple of 7 cells, over the 6 of LONGEST"),
        ([(0, 1)], tuple(range(1, 17)), "17 stages, over the 16"),
    ],
)
def test_a_description_the_game_cannot_use_is_refused(tmp_path, tuples, ranks, words):
    path = ntuple_file(tmp_path / "shape.pt", tuples=tuples, stage_ranks=ranks, state=compact(np.array([1]), np.ones(1)))
    with pytest.raises(NTupleLimitError, match=words) as refused:
        load_ntuple(path)
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)


def test_a_deflated_member_is_refused_before_torch_inflates_it(tmp_path):
    import zipfile

    path = ntuple_file(tmp_path / "n.pt", tuples=[(0, 1, 2, 3)], state=compact(np.array([1]), np.ones(1)))
    with zipfile.ZipFile(path) as z:
        members = {i.filename: z.read(i.filename) for i in z.infolist()}
    folder = next(iter(members)).split("/")[0]
    deflated = tmp_path / "deflated.pt"
    with zipfile.ZipFile(deflated, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
        z.writestr(f"{folder}/data/99", bytes(64 << 20))  # torch would inflate it: 64 MB of zeros in 64 kB
    with pytest.raises(LimitError) as refused:
        load_ntuple(deflated)
    assert str(deflated) in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("form", ["nan scale", "inf value", "scale past float32", "product past float32"])
def test_weights_that_are_not_finite_are_refused(tmp_path, form):
    index = np.array([5, 9, 40])
    state = {
        "nan scale": lambda: compact(index, np.array([1, 2, 3]), scale=float("nan")),
        "inf value": lambda: {"index": torch.tensor(index, dtype=torch.int32), "value": torch.tensor([1.0, np.inf, 2.0])},
        # finite in the file; infinite once the values are float32: only the unpacked entries show it
        "scale past float32": lambda: compact(index, np.array([1, 2, 3]), scale=1e39),
        "product past float32": lambda: compact(index, np.array([1, 2, 32767]), scale=3e34),
    }[form]()
    path = ntuple_file(tmp_path / "nan.pt", tuples=[(0, 1, 2, 3)], state=state)
    with pytest.raises(LimitError, match=r"of (its|the) \d weights .*are NaN or infinite") as refused:
        make_agent(ThreesGame(), f"expectimax:depth=1,eval=learned:{path}")
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)
    assert isinstance(refused.value, CheckpointError)


def test_the_cli_refuses_a_hostile_network_in_one_line(tmp_path, capsys):
    path = ntuple_file(tmp_path / "nan.pt", tuples=[(0, 1, 2, 3)], state=compact(np.array([5]), np.array([1]), scale=1e39))
    assert_one_error_line(
        ["eval", "threes", f"expectimax:depth=1,eval=learned:{path}", "--games", "1"],
        "1 of its 1 weights are NaN or infinite",
        capsys,
    )
    big = ntuple_file(tmp_path / "big.pt", tuples=[(0, 1, 2, 3, 4, 5)] * 64, state=compact(np.array([5]), np.array([1])))
    assert_one_error_line(
        ["eval", "threes", f"expectimax:depth=1,eval=learned:{big}", "--games", "1"],
        "over the limit of 1,073,741,824 (model_bytes)",
        capsys,
    )


def test_the_shipped_network_loads_as_it_always_has():
    weights = load_ntuple().tables().weights
    assert np.count_nonzero(weights) == 2_497_084
    assert hashlib.sha256(weights.tobytes()).hexdigest() == "68c9a9dc249bc419cef5801c7266cf43dd8851810c3d684984011c6efe15eed9"


# ---- Starship configs -------------------------------------------------------------------------

DEEP = 200_000


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("deep.json", '{"size": ' + "[" * DEEP + "]" * DEEP + "}", "JSON nested 200,001 deep"),
        ("deep.toml", "size = " + "[" * DEEP + "]" * DEEP + "\n", "TOML nested 200,000 deep"),
        ("inline.toml", "size = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n", "TOML nested 200,000 deep"),
        # tomllib's cost grows with the square of a dotted key's parts (20,000: 18 s, 1.5 GB)
        ("dotted.toml", "a" + ".a" * DEEP + " = 1\n", "TOML nested 200,001 deep"),
        ("header.toml", "[a" + ".a" * DEEP + "]\n", "TOML nested 200,001 deep"),
    ],
)
def test_a_deeply_nested_config_is_refused_before_it_is_parsed(tmp_path, name, text, words):
    path = tmp_path / name
    path.write_text(text)
    outcome = run_limited(
        f"Pipeline.from_file({str(path)!r})", imports="from tablegym.envs.starship.pipeline import Pipeline", timeout=120
    )
    assert_refused(outcome, "ConfigLimitError", str(path), words, "json_depth")


def test_a_config_nested_line_by_line_is_refused_after_parsing(tmp_path):
    # each line is shallow; the arrays of inline tables with dotted keys nest 1,800 tables deep
    path = tmp_path / "lines.toml"
    path.write_text("x = [\n" + "".join("{" + ".".join(["k"] * 60) + " = [\n" for _ in range(30)) + "1" + "]}" * 30 + "]\n")
    with pytest.raises(ConfigLimitError, match="TOML nested 1,832 deep"):
        Pipeline.from_file(path)


def test_a_config_larger_than_the_budget_is_refused_unread(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"size": 32, "pad": "x" * 2000}))
    with raised_limits(json_bytes=1000):
        with pytest.raises(ConfigLimitError, match=r"2,\d{3} bytes of JSON, over the limit of 1,000 \(json_bytes\)"):
            Pipeline.from_file(path)
    assert issubclass(ConfigLimitError, ConfigError) and issubclass(ConfigLimitError, LimitError)


def test_strings_and_comments_do_not_count_as_nesting(tmp_path):
    path = tmp_path / "ship.toml"
    path.write_text(
        'size = 24  # [[[[ a.b.c.d\n[thrusters]\nMinPoints = 10\n[cockpit]\nstrategy = "' + "[." * 100 + '"\n'
        "[doors]\nenabled = false\n"
    )
    with pytest.raises(ConfigError, match="strategy must be one of"):  # read and parsed: the value is wrong, not the file
        Pipeline.from_file(path)


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_the_cli_refuses_a_deep_config_in_one_line(tmp_path, capsys, suffix):
    path = tmp_path / f"deep{suffix}"
    path.write_text(("size = " if suffix == ".toml" else "") + "[" * DEEP + "]" * DEEP)
    assert_one_error_line(["starship", "--config", str(path), "--quiet"], "(json_depth)", capsys)
