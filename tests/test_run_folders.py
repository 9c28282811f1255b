"""Run folders are the user's: a trainer never writes through a symbolic link planted in its run
folder (nor at ``--out``), two trainings never share a folder, an output file in a missing folder
is refused rather than the folder made, and Friday's workers never reuse a network file they did
not write (regression tests of the links, lock and ``--out`` findings)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import tablegym.training.files as files
from tablegym.training.files import RunFolderError, lock_run_dir, open_append, prepare_run_dir, real_folder, write_text_atomic
from tests.cli_errors import assert_one_error_line

VICTIM = "the user's own file\n"

# Every trainer entry point with the smallest budget it takes; ``written``: the files it writes
# in its run folder (each planted as a link to an existing file outside it); ``resumed``: the
# files it also reads back when present (each planted as a link to a file not there yet, so
# that the run starts fresh); ``out``: the file ``--out`` names, planted as a link as well.
TD = [
    "--games-per-iter",
    "1",
    "--total-games",
    "1",
    "--depth",
    "1",
    "--eval-every",
    "0",
    "--hidden",
    "4",
    "--updates-per-iter",
    "1",
    "--batch-size",
    "4",
    "--no-progress",
]
PPO = [
    "--num-envs",
    "8",
    "--num-steps",
    "4",
    "--total-steps",
    "32",
    "--minibatches",
    "1",
    "--epochs",
    "1",
    "--eval-every",
    "0",
    "--hidden",
    "4",
    "--no-progress",
]
DQN = [
    "--num-envs",
    "8",
    "--total-steps",
    "16",
    "--learning-starts",
    "8",
    "--batch-size",
    "8",
    "--eval-every",
    "0",
    "--hidden",
    "4",
    "--no-progress",
]
THREES = ["--games", "2", "--minutes", "0", "--log-every", "2", "--tuples", "0,1,2,3", "--stage-ranks", "--tc", "--no-progress"]
FRIDAY = [
    "--iterations",
    "2",
    "--minutes",
    "0",
    "--games-per-iter",
    "1",
    "--nodes",
    "10",
    "--hidden",
    "4",
    "--batch-size",
    "8",
    "--epochs",
    "1",
    "--no-progress",
]
STARSHIP = [
    "--timesteps",
    "8",
    "--n-envs",
    "1",
    "--n-steps",
    "8",
    "--batch-size",
    "8",
    "--n-epochs",
    "1",
    "--size",
    "16",
    "--max-steps",
    "8",
    "--save-every",
    "8",
    "--no-progress",
]

CLI_TRAINERS = {
    "td": (["train", "trilobite", *TD], ["args.json", ".lock"], ["checkpoint.pt"]),
    "ppo": (["train", "trilobite-tiny", "--algo", "ppo", *PPO], ["args.json", ".lock"], ["checkpoint.pt"]),
    "dqn": (["train", "trilobite-tiny", "--algo", "dqn", *DQN], ["args.json", ".lock"], ["checkpoint.pt"]),
    "threes": (["train", "threes", *THREES], ["args.json", ".lock"], ["checkpoint.pt", "coherence.npy"]),
    "friday": (
        ["train", "friday", *FRIDAY],
        ["args.json", "calibration.md", ".lock"],
        ["checkpoint.pt", "buffer.npz", "win.pt", "win_buffer.npz"],
    ),
}
SB3_WRITES = ["model.zip", "train.json", ".lock"]


def _plant(run: Path, victims: Path, written: list[str], resumed: list[str]) -> dict[Path, Path]:
    """Links ``run/NAME -> victims/NAME``: to an existing file for ``written``, to a missing one for
    ``resumed``; the links by their victim."""
    run.mkdir(exist_ok=True)
    victims.mkdir(exist_ok=True)
    links = {}
    for name in written + resumed:
        victim = victims / name.lstrip(".")
        if name in written:
            victim.write_text(VICTIM)
        (run / name).symlink_to(victim)
        links[run / name] = victim
    return links


def _assert_untouched(links: dict[Path, Path], written: list[str]) -> None:
    """Every victim as it was (or still missing), and every link the trainer wrote replaced by a file."""
    for link, victim in links.items():
        if link.name in written:
            assert victim.read_bytes() == VICTIM.encode(), f"{link.name}: written through the link"
        else:
            assert not victim.exists(), f"{link.name}: a file made at the link's target"
        assert not link.is_symlink() and link.is_file(), f"{link.name}: the link was not replaced by the run's file"


@pytest.mark.parametrize("trainer", list(CLI_TRAINERS))
def test_a_trainer_replaces_links_in_its_run_folder_and_never_writes_through_them(trainer, tmp_path):
    from tablegym.experiments.cli import main as cli

    argv, written, resumed = CLI_TRAINERS[trainer]
    run = tmp_path / "run"
    links = _plant(run, tmp_path / "victims", written, resumed)
    out = None
    if trainer in ("td", "friday"):  # --out is a copy of the checkpoint (Learner.export)
        out = tmp_path / "out.pt"
        (tmp_path / "victims" / "out.pt").write_text(VICTIM)
        out.symlink_to(tmp_path / "victims" / "out.pt")
        links[out] = tmp_path / "victims" / "out.pt"
        argv = [*argv, "--out", str(out)]
    assert cli([*argv, "--run-dir", str(run)]) in (0, None)
    _assert_untouched(links, [*written, "out.pt"])
    assert not list(tmp_path.glob("run/.*.tmp*")), "a temporary file left behind"


def _quiet(main, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's notes about CPU/GPU and batch sizes
        return main(*args, **kwargs)


def _train_threes_sb3(run: Path) -> None:
    from tablegym.experiments import sb3_baseline

    _quiet(sb3_baseline.train, "threes", "dqn", timesteps=8, seed=0, run_dir=str(run), n_envs=1, progress=False)


def _train_friday_sb3(run: Path) -> None:
    from tablegym.experiments import sb3_baseline

    _quiet(sb3_baseline.train, "friday", timesteps=8, seed=0, run_dir=str(run), n_envs=4, progress=False)


def _train_trap_sb3(run: Path) -> None:
    from tablegym.experiments import sb3_baseline

    _quiet(sb3_baseline.train, "trap", "dqn", timesteps=8, seed=0, run_dir=str(run), opponent="random", progress=False)


def _train_trilobite_sb3(run: Path) -> None:
    from tablegym.experiments import sb3_baseline

    # its one rollout (2,048 steps) against random in every env, without searches
    _quiet(sb3_baseline.main, ["trilobite", "train", "--timesteps", "8", "--opponent", "random", "--run-dir", str(run)])


def _train_starship(run: Path) -> None:
    from tablegym.experiments.starship import rl

    _quiet(rl.train, rl.parse_args([*STARSHIP, "--run-dir", str(run)]))


SB3_TRAINERS = {
    "threes": (_train_threes_sb3, SB3_WRITES),
    "friday": (_train_friday_sb3, SB3_WRITES),
    "trap": (_train_trap_sb3, SB3_WRITES),
    "trilobite": (_train_trilobite_sb3, SB3_WRITES),
    "starship": (_train_starship, [*SB3_WRITES, "model_8_steps.zip"]),  # and a snapshot every --save-every steps
}


@pytest.mark.parametrize("script", list(SB3_TRAINERS))
def test_an_sb3_script_replaces_links_in_its_run_folder_and_never_writes_through_them(script, tmp_path):
    train, written = SB3_TRAINERS[script]
    run = tmp_path / "run"
    links = _plant(run, tmp_path / "victims", written, [])
    train(run)
    _assert_untouched(links, written)


def _hold(run: Path) -> subprocess.Popen:
    """A process that takes the run folder's lock (training.files, loaded alone: no torch) and keeps it."""
    code = (
        "import importlib.util, sys, time\n"
        "spec = importlib.util.spec_from_file_location('files', sys.argv[1])\n"
        "files = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(files)\n"
        "files.lock_run_dir(sys.argv[2])\n"
        "print('locked', flush=True)\n"
        "time.sleep(120)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, files.__file__, str(run), "holder-of-the-lock"], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "locked"
    return holder


LOCKED = {  # every entry point, each with the budget it would train if it were not refused
    "td": ("tablegym.experiments.cli:main", ["train", "trilobite", *TD]),
    "ppo": ("tablegym.experiments.cli:main", ["train", "trilobite-tiny", "--algo", "ppo", *PPO]),
    "dqn": ("tablegym.experiments.cli:main", ["train", "trilobite-tiny", "--algo", "dqn", *DQN]),
    "threes": ("tablegym.experiments.cli:main", ["train", "threes", *THREES]),
    "friday": ("tablegym.experiments.cli:main", ["train", "friday", *FRIDAY]),
    "threes-sb3": (
        "tablegym.experiments.sb3_baseline:main",
        ["threes", "--algo", "dqn", "--timesteps", "8", "--eval-games", "1", "--n-envs", "1", "--no-progress"],
    ),
    "trap-sb3": (
        "tablegym.experiments.sb3_baseline:main",
        [
            "trap",
            "--algo",
            "dqn",
            "--timesteps",
            "8",
            "--eval-games",
            "2",
            "--opponent",
            "random",
            "--eval-opponent",
            "random",
            "--no-progress",
        ],
    ),
    "starship": ("tablegym.experiments.starship.rl:main", [*STARSHIP, "--episodes", "1", "--pictures", "1"]),
}


@pytest.mark.parametrize("entry", list(LOCKED))
def test_a_second_training_into_a_run_folder_is_refused_naming_the_first(entry, tmp_path, capsys):
    module, _, name = LOCKED[entry][0].partition(":")
    main = getattr(importlib.import_module(module), name)
    run = tmp_path / "run"
    run.mkdir()
    holder = _hold(run)
    try:
        argv = [*LOCKED[entry][1], "--run-dir", str(run)]
        if entry == "starship":
            argv += ["--out", str(tmp_path / "r.md")]
        try:
            status = _quiet(main, argv)
        except SystemExit as exit_:
            status = exit_.code
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert status == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert f"in use by pid {holder.pid} (" in errors[0] and "holder-of-the-lock" in errors[0], errors[0]
    assert os.listdir(run) == [".lock"]  # refused before it read or wrote anything there


def test_the_lock_is_this_process_s_until_released_and_dies_with_its_holder(tmp_path):
    lock = lock_run_dir(tmp_path)
    again = lock_run_dir(tmp_path)  # a second Run of the same process (a resumed run in one script)
    assert again is lock and (tmp_path / ".lock").read_text().startswith(f"{os.getpid()}\n")
    again.release()
    lock.release()
    holder = _hold(tmp_path)
    with pytest.raises(RunFolderError, match=f"in use by pid {holder.pid} "):
        lock_run_dir(tmp_path)
    holder.kill()
    holder.wait()
    lock_run_dir(tmp_path).release()  # its lock went with it


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "trilobite", *TD],
        ["train", "trilobite-tiny", "--algo", "ppo", *PPO],
        ["train", "trilobite-tiny", "--algo", "dqn", *DQN],
        ["train", "threes", *THREES],
        ["train", "friday", *FRIDAY],
    ],
    ids=["td", "ppo", "dqn", "threes", "friday"],
)
def test_out_in_a_missing_folder_is_refused_and_nothing_is_made(argv, tmp_path, capsys):
    missing = tmp_path / "missing" / "dir"
    assert_one_error_line(
        [*argv, "--run-dir", str(tmp_path / "run"), "--out", str(missing / "q.pt")],
        f"--out '{missing / 'q.pt'}' cannot be written",
        capsys,
    )
    assert not (tmp_path / "missing").exists() and not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "module, argv",
    [
        (
            "tablegym.experiments.sb3_baseline",
            ["threes", "--algo", "dqn", "--timesteps", "8", "--eval-games", "1", "--n-envs", "1", "--no-progress"],
        ),
        ("tablegym.experiments.sb3_baseline", ["friday", "--timesteps", "8", "--games", "1", "--n-envs", "4", "--no-progress"]),
    ],
    ids=["threes-sb3", "friday-sb3"],
)
def test_the_sb3_records_out_is_refused_in_a_missing_folder_or_at_a_link(module, argv, tmp_path, capsys):
    main = importlib.import_module(module).main
    victim = tmp_path / "victim.jsonl"
    victim.write_text(VICTIM)
    (tmp_path / "link.jsonl").symlink_to(victim)
    for out, words in ((tmp_path / "missing" / "x.jsonl", "cannot be written"), (tmp_path / "link.jsonl", "symbolic link")):
        with pytest.raises(SystemExit) as exit_:
            main([*argv, "--run-dir", str(tmp_path / "run"), "--out", str(out)])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and len(err.splitlines()) == 1 and words in err, err
    assert victim.read_text() == VICTIM and not (tmp_path / "missing").exists() and not (tmp_path / "run").exists()


def test_a_run_dir_that_is_a_link_is_refused_naming_the_folder_to_give(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "run").symlink_to(elsewhere)
    assert_one_error_line(
        ["train", "trilobite", *TD, "--run-dir", str(tmp_path / "run")], f"give the folder itself: --run-dir {elsewhere}", capsys
    )
    assert os.listdir(elsewhere) == []
    with pytest.raises(RunFolderError, match="symbolic link"):
        prepare_run_dir(tmp_path / "run")


def test_the_helpers_replace_a_link_and_refuse_to_append_or_descend_through_one(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text(VICTIM)
    for name in ("file", "log", "folder"):
        (tmp_path / name).symlink_to(victim if name != "folder" else tmp_path)
    write_text_atomic(tmp_path / "file", "new\n")
    assert (tmp_path / "file").read_text() == "new\n" and not (tmp_path / "file").is_symlink()
    with pytest.raises(RunFolderError, match="symbolic link"):
        open_append(tmp_path / "log")
    with pytest.raises(RunFolderError, match="symbolic link"):
        real_folder(tmp_path / "folder")
    assert victim.read_text() == VICTIM
    with open_append(tmp_path / "records.jsonl") as f:
        f.write("{}\n")
    assert real_folder(tmp_path / "sub").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder", "log", "records.jsonl", "sub", "victim"]


def test_friday_workers_reuse_a_network_file_only_when_it_holds_the_network(tmp_path, monkeypatch):
    from tablegym.training.friday import train

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    data = b"the network's bytes"
    train._local_copy.cache_clear()
    local = Path(train._local_copy("nets/iter0001.pt", data))
    assert local.read_bytes() == data
    victim = tmp_path / "victim.pt"
    victim.write_bytes(b"another user's file")
    for planted in ("wrong bytes", "link"):
        local.unlink()
        if planted == "link":
            local.symlink_to(victim)
        else:
            local.write_bytes(b"not the network")
        train._local_copy.cache_clear()
        assert Path(train._local_copy("nets/iter0001.pt", data)) == local
        assert local.read_bytes() == data and not local.is_symlink()
    assert victim.read_bytes() == b"another user's file"
    train._local_copy.cache_clear()
