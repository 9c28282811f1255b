"""The one training skeleton (training.Run): a Learner started, resumed, saved and exported, the
budget in games or iterations of the whole run folder, what a run says it did (a spent budget,
Ctrl-C, the paths written), args.json and TensorBoard logs in the run directory;
every trainer (TD, Trap, Friday, Threes) on it."""

import json
from dataclasses import dataclass, replace

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from tablegym.envs import make_game
from tablegym.training.runs import Learner, Run, parse_dataclass_args


def scalars(run_dir) -> dict[str, list[tuple[int, float]]]:
    """Every TensorBoard scalar of the run directory, by tag: (step, value) in order of writing."""
    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@dataclass
class ToyArgs:
    run_dir: str
    minutes: float | None = None
    out: str | None = None
    progress: bool = False


class Counter(Learner):
    """A learner whose whole state is a number: the checkpoint is JSON, --out gets the number."""

    def __init__(self) -> None:
        self.value = 0
        self.saves: list[dict] = []

    def start(self, checkpoint):
        if checkpoint is None:
            return {}
        meta = json.loads(checkpoint.read_text())
        self.value = meta["value"]
        return meta

    def save(self, path, progress):
        self.saves.append(progress)
        path.write_text(json.dumps({**progress, "value": self.value}))

    def export(self, checkpoint, out, progress):
        out.write_text(f"{self.value} after {progress['games']} games")


def test_a_run_counts_its_budget_saves_its_learner_and_resumes_it(tmp_path):
    args = ToyArgs(run_dir=str(tmp_path / "run"), out=str(tmp_path / "out.txt"))
    game = make_game("sim")
    learner = Counter()
    run = Run(args, game, learner, iterations=3)
    while run.next_iteration():
        learner.value += 10
        run.played(4)
        run.log({"charts/value": learner.value})
        if run.due(2):
            run.save()
    assert run.finish() == tmp_path / "run" / "checkpoint.pt"
    assert [(p["iteration"], p["games"]) for p in learner.saves] == [(2, 8), (3, 12)]
    assert (tmp_path / "out.txt").read_text() == "30 after 12 games"
    assert json.loads((tmp_path / "run" / "args.json").read_text())["out"] == args.out
    assert scalars(tmp_path / "run")["charts/value"] == [(4, 10.0), (8, 20.0), (12, 30.0)]
    # resumed: the budget counts the run before
    again = Counter()
    run = Run(args, game, again, iterations=4)
    assert (again.value, run.iteration, run.games) == (30, 3, 12)
    assert run.next_iteration() and not run.in_budget(run.games) and not run.next_iteration()
    run.finish()
    games = Run(args, game, Counter(), total=20)
    assert (games.total, games.in_budget(19), games.in_budget(20)) == (20, True, False)
    games.finish()


def test_the_save_schedule_in_minutes_counts_from_the_last_save(tmp_path):
    run = Run(ToyArgs(run_dir=str(tmp_path)), make_game("sim"), Counter())
    assert run.due_minutes(0.0) and not run.due_minutes(60.0)
    run.last_save -= 3600.0  # an hour ago
    assert run.due_minutes(60.0)
    run.save()
    assert not run.due_minutes(60.0)
    run.finish()


@dataclass
class FlagArgs:
    game: str = "toy"
    game_options: dict = None
    run_dir: str = "runs/toy"
    sizes: tuple[int, ...] = (1, 2)
    """ints, one or more"""
    marks: tuple[int, ...] = ()
    odd: int = 1
    """an odd number"""

    def __post_init__(self):
        if self.odd % 2 == 0:
            raise ValueError(f"--odd must be odd, got {self.odd}")


def test_flags_from_a_dataclass_take_tuples_and_refuse_what_the_dataclass_refuses(capsys):
    args = parse_dataclass_args(FlagArgs, ["--sizes", "3", "4", "--marks", "7"], "toy", "a toy")
    assert (args.sizes, args.marks, args.odd) == ((3, 4), (7,), 1)
    with pytest.raises(SystemExit):
        parse_dataclass_args(FlagArgs, ["--odd", "2"], "toy", "a toy")
    assert "--odd must be odd, got 2" in capsys.readouterr().err


@dataclass
class SuffixArgs(FlagArgs):
    RUN_SUFFIX = "algo"
    run_dir: str = "runs/toy-algo"


def test_the_run_folder_follows_the_game_and_its_help_says_so(capsys):
    """A trainer whose default folder is runs/GAME-SUFFIX writes another game's run to that
    game's folder, and --help shows that rule, not the default game's folder; a trainer with a
    fixed folder keeps it; --run-dir wins in both."""
    assert parse_dataclass_args(SuffixArgs, [], "toy", "a toy").run_dir == "runs/toy-algo"
    assert parse_dataclass_args(SuffixArgs, ["trap"], "toy", "a toy").run_dir == "runs/trap-algo"
    assert parse_dataclass_args(SuffixArgs, ["trap", "--run-dir", "x"], "toy", "a toy").run_dir == "x"
    assert parse_dataclass_args(FlagArgs, [], "toy", "a toy").run_dir == "runs/toy"
    with pytest.raises(SystemExit):
        parse_dataclass_args(SuffixArgs, ["--help"], "toy", "a toy")
    assert "(default: runs/GAME-algo)" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        parse_dataclass_args(FlagArgs, ["--help"], "toy", "a toy")
    assert "(default: runs/toy)" in " ".join(capsys.readouterr().out.split())


def test_threes_resumed_in_two_runs_learns_what_one_run_learns(tmp_path):
    """Each chunk's seed comes from the games before it and the checkpoint holds the tables
    exactly, so 20 games and then a budget of 40 end where 40 games in one go do."""
    from tablegym.envs.threes.ntuple import HINT_CELL
    from tablegym.models.threes.ntuple_net import load_ntuple_with_metadata
    from tablegym.training.threes.train import Args, train

    tuples = ((0, 1, 2, 3), (HINT_CELL, 4, 5, 6))
    for tc in (False, True):
        one = Args(
            run_dir=str(tmp_path / f"one{tc}"),
            minutes=0,
            games=40,
            log_every=20,
            tuples=tuples,
            tc=tc,
            alpha=1.0 if tc else 0.1,
            seed=3,
            progress=False,
        )
        two = replace(one, run_dir=str(tmp_path / f"two{tc}"), games=20, out=str(tmp_path / f"out{tc}.pt"))
        train(one)
        train(two)
        assert train(replace(two, games=40)) == tmp_path / f"out{tc}.pt"
        (a, meta_a), (b, meta_b) = (load_ntuple_with_metadata(tmp_path / f"{d}{tc}" / "checkpoint.pt") for d in ("one", "two"))
        assert meta_a["games"] == meta_b["games"] == 40 and meta_b["tc"] == tc
        assert np.array_equal(a.tables().weights, b.tables().weights) and np.abs(a.tables().weights).max() > 0
        if tc:
            assert np.array_equal(
                np.load(tmp_path / "oneTrue" / "coherence.npy"), np.load(tmp_path / "twoTrue" / "coherence.npy")
            )
        # both runs log into the one directory, at the game counts
        logged = scalars(tmp_path / f"two{tc}")
        assert [step for step, _ in logged["score/mean"]] == [20, 40]
        assert logged["score/mean"] == scalars(tmp_path / f"one{tc}")["score/mean"]
        out, meta = load_ntuple_with_metadata(tmp_path / f"out{tc}.pt")
        assert meta["half"] and meta["games"] == 40
        assert np.allclose(out.tables().weights, b.tables().weights, rtol=1e-2, atol=20.0)
    assert json.loads((tmp_path / "twoFalse" / "args.json").read_text())["games"] == 40


def test_threes_refuses_a_budget_it_cannot_stop_on_and_another_game():
    from tablegym.training.threes.train import Args, parse_args, train

    with pytest.raises(ValueError, match="budget"):
        Args(minutes=0, games=0)
    with pytest.raises(SystemExit):
        parse_args(["--minutes", "0"])
    with pytest.raises(ValueError, match="Threes only"):
        train(Args(game="trap", minutes=0, games=1))
    assert parse_args(["threes", "--games", "3", "--minutes", "0"]).games == 3


def test_friday_logs_and_resumes_through_the_run(tmp_path):
    from tablegym.models.friday.learned import load_friday_model
    from tablegym.training.friday.train import train
    from tests.test_friday_learned import _tiny

    train(_tiny(tmp_path, iterations=1))
    train(_tiny(tmp_path, iterations=2, out=str(tmp_path / "final.pt")))
    logged = scalars(tmp_path)
    assert [step for step, _ in logged["losses/mse"]] == [4, 8]
    assert [step for step, _ in logged["losses/heldout_mse"]] == [8]  # only once there is a network
    assert {"losses/win_cross_entropy", "charts/games_per_s", "selfplay/win_rate_L1"} <= set(logged)
    assert json.loads((tmp_path / "args.json").read_text())["iterations"] == 2
    # --out is the last iteration's network, without the optimizer
    out = torch.load(tmp_path / "final.pt", weights_only=True)
    net = torch.load(tmp_path / "nets" / "iter0002.pt", weights_only=True)
    assert "optimizer" not in out and all(torch.equal(out["model"][k], net["model"][k]) for k in net["model"])
    assert load_friday_model(tmp_path / "checkpoint.pt")[1]["iteration"] == 2


def test_trap_trains_in_the_td_loop_with_its_own_search_and_charts(tmp_path):
    """Trap's trainer is the TD loop with Trap's self-play and evaluation passed in: the loop's
    scalars, Trap's own, and both evaluation matches, in the run directory."""
    from tablegym.training.trap.train import parse_args, train

    train(
        parse_args(
            [
                "trap",
                "--run-dir",
                str(tmp_path),
                "--games-per-iter",
                "2",
                "--total-games",
                "2",
                "--updates-per-iter",
                "1",
                "--eval-every",
                "1",
                "--eval-games",
                "2",
                "--eval-depth",
                "1",
                "--depth",
                "1",
                "--hidden",
                "4",
                "--no-progress",
                "--option",
                "n=5",
            ]
        )
    )
    logged = scalars(tmp_path)
    assert {
        "losses/mse",
        "losses/td_error",
        "charts/games_per_s",
        "charts/decisions_per_game",
        "charts/score_vs_composite",
        "charts/score_vs_hard",
    } <= set(logged)
    assert logged["charts/score_vs_hard"][0][0] == 2 and 0.0 <= logged["charts/score_vs_hard"][0][1] <= 1.0
    assert json.loads((tmp_path / "args.json").read_text())["game_options"] == {"n": 5}


def test_a_run_says_why_it_stopped_and_what_it_wrote_and_a_spent_budget_says_so(tmp_path, capsys):
    args = ToyArgs(run_dir=str(tmp_path / "run"), out=str(tmp_path / "out.txt"))
    run = Run(args, make_game("sim"), Counter(), iterations=2, budget="--epochs 2", unit="epoch")
    while run.next_iteration():
        run.played(3)
    run.finish()
    out = capsys.readouterr().out
    assert "stopped by the budget of --epochs 2: 6 games in 2 iterations" in out
    assert f"wrote {tmp_path / 'run' / 'checkpoint.pt'}, {args.out} (--out)" in out
    assert f"tensorboard --logdir {tmp_path / 'run'}" in out
    again = Run(args, make_game("sim"), Counter(), iterations=2, budget="--epochs 2", unit="epoch")
    assert not again.next_iteration()
    again.finish()
    out = capsys.readouterr().out
    assert "nothing left to do: the budget of --epochs 2 was reached by the runs before; raise --epochs to train on" in out


def test_the_first_ctrl_c_finishes_the_iteration_and_saves_the_second_stops_at_once(tmp_path, capsys):
    import signal

    learner = Counter()
    run = Run(ToyArgs(run_dir=str(tmp_path / "run")), make_game("sim"), learner, iterations=10)
    handler = signal.getsignal(signal.SIGINT)
    while run.next_iteration():
        learner.value += 1
        if run.iteration == 3:
            handler(signal.SIGINT, None)  # what Ctrl-C calls, mid-iteration
            learner.value += 100  # the iteration goes on to its end
    assert (run.iteration, learner.value) == (3, 103)
    run.finish()
    assert "stopped by Ctrl-C: 0 games in 3 iterations" in capsys.readouterr().out
    assert json.loads((tmp_path / "run" / "checkpoint.pt").read_text())["value"] == 103
    assert signal.getsignal(signal.SIGINT) is not handler  # the handler before the run is back
    second = Run(ToyArgs(run_dir=str(tmp_path / "two")), make_game("sim"), Counter(), iterations=10)
    handler = signal.getsignal(signal.SIGINT)
    handler(signal.SIGINT, None)
    with pytest.raises(KeyboardInterrupt):
        handler(signal.SIGINT, None)
    second.finish()


def test_a_run_left_by_an_exception_gives_back_ctrl_c_and_its_folder_and_saves_nothing(tmp_path):
    """A trainer that raises inside ``with Run(...)``: the Ctrl-C handler before the run is back
    (a notebook's Ctrl-C works again), the folder's lock is free, the last checkpoint stands."""
    import signal

    from tablegym.training.files import RunLock

    before = signal.getsignal(signal.SIGINT)
    learner = Counter()
    with pytest.raises(RuntimeError, match="a bug in the trainer"):
        with Run(ToyArgs(run_dir=str(tmp_path / "run")), make_game("sim"), learner, iterations=10) as run:
            assert signal.getsignal(signal.SIGINT) is not before
            assert run.next_iteration()
            learner.value = 5
            run.save()
            assert run.next_iteration()
            learner.value = 7
            raise RuntimeError("a bug in the trainer")
    assert signal.getsignal(signal.SIGINT) is before
    assert not RunLock._held
    assert json.loads((tmp_path / "run" / "checkpoint.pt").read_text())["value"] == 5
    with Run(ToyArgs(run_dir=str(tmp_path / "run")), make_game("sim"), Counter(), iterations=10) as again:
        assert again.iteration == 1  # resumed from the save before the error
        again.finish()
    assert signal.getsignal(signal.SIGINT) is before and not RunLock._held


def test_progress_off_a_terminal_is_a_plain_line_now_and_then():
    import io

    from tablegym.training.progress import PlainProgress, progress_bar

    log = io.StringIO()
    assert isinstance(progress_bar(total=10, unit="game", desc="td", file=log), PlainProgress)
    now = [0.0]
    bar = PlainProgress(total=10, unit="game", desc="td", file=log, every=30.0, clock=lambda: now[0])
    bar.update(4)  # no line before 30 s
    now[0] = 40.0
    bar.set_postfix(mse="0.1")
    bar.update(4)
    bar.write("evaluation: +0.5")
    now[0] = 50.0
    bar.update(2)
    bar.close()
    assert log.getvalue().splitlines() == [
        "td: 8/10 game (0.2 game/s, mse=0.1)",
        "evaluation: +0.5",
        "td: 10/10 game (0.2 game/s, mse=0.1)",
    ]
    assert "\r" not in log.getvalue()


@pytest.mark.parametrize("algo", ["ppo", "dqn", "negamax-dqn", "imitate", "td"])
def test_device_is_chosen_by_flag_and_a_missing_gpu_is_one_line(algo, tmp_path, capsys):
    """--device cpu trains as before and auto falls back to the CPU where torch finds no GPU;
    cuda where there is none, or a name torch does not know, is one line and exit 2."""
    from tablegym.experiments.cli import main

    replay = ["--total-steps", "16", "--num-envs", "4", "--learning-starts", "4", "--batch-size", "4", "--buffer-size", "64"]
    small = {
        "ppo": ["--algo", "ppo", "--total-steps", "16", "--num-envs", "4", "--num-steps", "4", "--minibatches", "1"],
        "dqn": ["--algo", "dqn", *replay],
        "negamax-dqn": ["--algo", "negamax-dqn", *replay],
        "td": ["--total-games", "4", "--games-per-iter", "2", "--batch-size", "8", "--depth", "1", "--minutes", "0"],
    }
    if algo == "imitate":
        run_args = "--algo imitate --teacher random --games 2 --chunk 2 --epochs 1 --eval-games 0".split()
    else:
        run_args = [*small[algo], "--eval-every", "0"]
    base = ["train", "trilobite-tiny", "--hidden", "8", "--no-progress", *run_args]
    runs = {}
    for device in ("cpu", "auto"):
        run = tmp_path / device
        assert main([*base, "--run-dir", str(run), "--device", device]) == 0
        runs[device] = torch.load(run / "checkpoint.pt", weights_only=True)["model"]
    if not torch.cuda.is_available():  # auto is the CPU here: the same seeded run, weight for weight
        assert all(torch.equal(runs["cpu"][k], runs["auto"][k]) for k in runs["cpu"])
        with pytest.raises(SystemExit) as exit_:
            main([*base, "--run-dir", str(tmp_path / "gpu"), "--device", "cuda"])
        assert exit_.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--device cuda: torch finds 0 CUDA devices here" in err[0]
        assert not (tmp_path / "gpu").exists()
    with pytest.raises(SystemExit):
        main([*base, "--run-dir", str(tmp_path / "tpu"), "--device", "tpu"])
    assert "--device must be cpu, cuda, cuda:N or auto, got 'tpu'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "game, algo",
    [
        ("threes", None),
        ("threes", "afterstate-dqn"),
        ("trap", None),
        ("friday", None),
        ("sim", "negamax-dqn"),
        ("friday", "imitate"),
    ],
)
def test_every_trainer_takes_device_and_refuses_a_gpu_it_cannot_use_in_one_line(game, algo, tmp_path, capsys):
    """``--device`` on every trainer: a name torch does not know, cuda where there is none, and
    cuda on the trainers whose network learns in compiled CPU code (Threes' n-tuple tables) are
    one line and exit 2, before the run folder is made."""
    from tablegym.experiments.cli import main

    base = ["train", game, *(["--algo", algo] if algo else []), "--run-dir", str(tmp_path / "run")]
    if algo == "imitate":
        base += ["--teacher", "random"]
    cpu_only = game == "threes"
    refusals = {"tpu": "--device must be cpu, cuda, cuda:N or auto, got 'tpu'"}
    if cpu_only:
        refusals["cuda"] = "--device cuda: the n-tuple network"
    elif not torch.cuda.is_available():
        refusals["cuda"] = "--device cuda: torch finds 0 CUDA devices here"
    for device, says in refusals.items():
        with pytest.raises(SystemExit) as exit_:
            main([*base, "--device", device])
        assert exit_.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err
        assert not (tmp_path / "run").exists()
