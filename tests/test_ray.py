"""The Ray backend: games as Ray tasks give the same records as worker processes, a journal
interrupted and resumed on Ray, a worker killed mid-run, two simulated nodes, and one clear line
when Ray is missing. One Ray instance serves the module: Ray's own Cluster of two simulated
nodes on this machine (1 CPU each, no dashboard), which the driver joins. Starting a Ray
instance is the slowest thing these tests do (15 s of a loaded machine), and the two-node test
started a cluster of its own between a local instance and its restart."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from tablegym.experiments import solo
from tablegym.experiments.cli import main
from tablegym.experiments.match import play_match, round_robin
from tablegym.training.parallel import BackendError, RayPool
from tests.test_match_journal import GAME, KW, SPECS, games, lines, untimed
from tests.test_training import TINY_RUN

ray = pytest.importorskip("ray", reason="the distributed extra is installed by make install and CI")


@pytest.fixture(scope="module", autouse=True)
def two_nodes(tmp_path_factory):
    """The module's Ray instance, two nodes of 1 CPU, the driver joined to it; its workers inherit
    the variables ``dying_factory`` reads (set before the start, so no test restarts Ray to pass
    them). Yields the cluster's address."""
    from ray.cluster_utils import Cluster

    kill = {"TABLEGYM_TEST_KILL_FLAG": str(tmp_path_factory.mktemp("ray") / "killed"), "TABLEGYM_TEST_DRIVER": str(os.getpid())}
    os.environ.update(kill)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, log_to_driver=False)
        yield cluster.address
    finally:
        ray.shutdown()
        cluster.shutdown()
        for name in kill:
            os.environ.pop(name, None)


def untimed_lines(path) -> list[str]:
    out = []
    for e in map(json.loads, lines(path)):
        e["record"].pop("move_seconds")
        out.append(json.dumps(e, sort_keys=True))
    return sorted(out)


def test_a_round_robin_on_ray_equals_the_process_pool(tmp_path):
    procs = round_robin(GAME, SPECS, journal=tmp_path / "p.jsonl", workers=2, **KW)
    rays = round_robin(GAME, SPECS, journal=tmp_path / "r.jsonl", workers=2, backend="ray", **KW)
    assert untimed(rays) == untimed(procs) and games(rays) == games(procs)
    assert untimed_lines(tmp_path / "r.jsonl") == untimed_lines(tmp_path / "p.jsonl")
    kw = {k: v for k, v in KW.items() if k != "games_per_pair"}
    a = play_match(GAME, "random", "easy", games=6, workers=2, **kw)
    b = play_match(GAME, "random", "easy", games=6, workers=2, backend="ray", **kw)
    assert untimed([a]) == untimed([b]) and games([a]) == games([b])


def test_a_journal_interrupted_and_resumed_on_ray(tmp_path):
    whole = tmp_path / "whole.jsonl"
    round_robin(GAME, SPECS, journal=whole, **KW)
    part = tmp_path / "part.jsonl"
    part.write_bytes(b"".join(lines(whole)[:5]))  # a driver killed after 5 games
    resumed = round_robin(GAME, SPECS, journal=part, workers=2, backend="ray", **KW)
    assert sum(r.games for r in resumed) == 12
    assert untimed_lines(part) == untimed_lines(whole)
    assert lines(part)[:5] == lines(whole)[:5]  # what was saved stays as it was


def test_single_player_runs_on_ray_equal_the_process_pool():
    kw = dict(games=4, options={"level": 1}, seed=2, workers=2, progress=False)
    procs = solo.run("friday", "rules", **kw)
    rays = solo.run("friday", "rules", backend="ray", **kw)
    strip = lambda recs: [{k: v for k, v in r.items() if "second" not in k} for r in recs]  # noqa: E731
    assert strip(rays) == strip(procs)


def _kill_own_worker_once(task):
    """Play ``task``, but the first attempt of game 1 kills its own worker process (a node lost
    mid-game); Ray retries the task and the replay gives the game its seed gives."""
    flag, x = task
    if x == 1 and not os.path.exists(flag):
        open(flag, "w").close()
        os._exit(1)
    return x * x


def test_a_killed_worker_is_retried_and_the_result_is_complete(tmp_path):
    flag = str(tmp_path / "killed")
    with RayPool(2) as pool:
        out = sorted(pool.imap_unordered(_kill_own_worker_once, [(flag, x) for x in range(6)]))
    assert os.path.exists(flag) and out == [0, 1, 4, 9, 16, 25]


def test_the_cli_runs_eval_on_ray(capsys):
    argv = ["eval", GAME, "random", "easy", "--games", "4", "--seed", "3", "--no-progress", "--option", "n=5"]
    assert main(argv + ["--workers", "2"]) == 0
    procs = capsys.readouterr().out
    assert main(argv + ["--workers", "2", "--backend", "ray"]) == 0
    rays = capsys.readouterr().out
    strip = lambda text: [line.rsplit("|", 3)[0] for line in text.splitlines()]  # noqa: E731 (s/move columns vary)
    assert strip(rays) == strip(procs)


def test_missing_ray_is_one_clear_line():
    """In a fresh interpreter where ``import ray`` fails: the CLI says how to install it."""
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from tablegym.experiments.cli import main\n"
        "sys.exit(main(['eval', 'trap', 'random', 'easy', '--games', '2', '--backend', 'ray', '--option', 'n=5']))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert 'pip install "tablegym[distributed]"' in run.stderr + run.stdout
    train = code.replace("['eval', 'trap', 'random', 'easy', '--games', '2',", "['train', 'trap',")
    assert train != code
    run = subprocess.run([sys.executable, "-c", train], capture_output=True, text=True)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert 'pip install "tablegym[distributed]"' in run.stderr
    with pytest.raises(BackendError, match="unknown backend"):
        play_match(GAME, "random", "easy", games=2, backend="dask", game_options={"n": 5}, progress=False)


def test_two_simulated_nodes_play_a_match(two_nodes):
    """Ray's own Cluster (a head and a second node on this machine), joined by its address from a
    driver that is not connected: a match, as on one node."""
    kw = {k: v for k, v in KW.items() if k != "games_per_pair"}
    want = play_match(GAME, "random", "easy", games=4, **kw)
    ray.shutdown()  # the driver leaves; the cluster stays up
    got = play_match(GAME, "random", "easy", games=4, workers=2, backend="ray", address=two_nodes, **kw)
    assert ray.is_initialized() and len(ray.nodes()) == 2
    assert untimed([got]) == untimed([want]) and games([got]) == games([want])


TRAIN = ["trilobite-tiny", *TINY_RUN, "--eval-every", "0", "--workers", "2"]


def _weights(path):
    from tablegym.models.checkpoint import load_checkpoint

    payload = load_checkpoint(path)
    return payload["metadata"], {k: v.clone() for k, v in payload["model"].items()}


def test_self_play_on_ray_trains_the_same_network_and_resumes(tmp_path):
    """TD self-play with the games in two chunks: as Ray tasks (weights through the object store)
    or worker processes, the same games and so the same trained weights; a run stopped after one
    iteration and resumed on Ray ends where the same run resumed on processes ends."""
    import torch

    from tablegym.training.td import parse_args, train

    train(parse_args(TRAIN + ["--run-dir", str(tmp_path / "p"), "--total-games", "40"]))
    train(parse_args(TRAIN + ["--run-dir", str(tmp_path / "r"), "--total-games", "40", "--backend", "ray"]))
    meta_p, w_p = _weights(tmp_path / "p" / "checkpoint.pt")
    meta_r, w_r = _weights(tmp_path / "r" / "checkpoint.pt")
    assert (meta_r["iteration"], meta_r["games"]) == (meta_p["iteration"], meta_p["games"]) == (2, 40)
    assert all(torch.equal(w_p[k], w_r[k]) for k in w_p)
    for run, first, then in (("s", "ray", "ray"), ("q", "process", "process"), ("m", "process", "ray")):
        train(parse_args(TRAIN + ["--run-dir", str(tmp_path / run), "--total-games", "20", "--backend", first]))
        train(parse_args(TRAIN + ["--run-dir", str(tmp_path / run), "--total-games", "40", "--backend", then]))
    (meta_s, w_s), (_, w_q), (_, w_m) = (_weights(tmp_path / r / "checkpoint.pt") for r in "sqm")
    assert (meta_s["iteration"], meta_s["games"]) == (2, 40)
    assert all(torch.equal(w_q[k], w_s[k]) and torch.equal(w_q[k], w_m[k]) for k in w_q)


def test_trap_self_play_on_ray_equals_worker_processes(tmp_path):
    import torch

    from tablegym.training.trap.train import parse_args, train

    common = [
        "trap",
        "--games-per-iter",
        "6",
        "--updates-per-iter",
        "1",
        "--eval-every",
        "0",
        "--save-every",
        "1",
        "--no-progress",
        "--hidden",
        "8",
        "--total-games",
        "6",
        "--workers",
        "2",
        "--depth",
        "1",
        "--option",
        "n=5",
    ]
    train(parse_args(common + ["--run-dir", str(tmp_path / "p")]))
    train(parse_args(common + ["--run-dir", str(tmp_path / "r"), "--backend", "ray"]))
    (_, w_p), (_, w_r) = _weights(tmp_path / "p" / "checkpoint.pt"), _weights(tmp_path / "r" / "checkpoint.pt")
    assert all(torch.equal(w_p[k], w_r[k]) for k in w_p)


def dying_factory(game, spec):
    """The usual agents, except that the first game to build one in a worker kills that worker
    process (a node lost mid-run); the flag file and the driver are named by the environment."""
    from tablegym.models.agents import make_agent

    flag = os.environ["TABLEGYM_TEST_KILL_FLAG"]
    if str(os.getpid()) != os.environ["TABLEGYM_TEST_DRIVER"] and not os.path.exists(flag):
        open(flag, "w").close()
        os._exit(1)
    return make_agent(game, spec)


def test_a_worker_killed_mid_match_is_retried_and_the_records_are_complete():
    flag = pathlib.Path(os.environ["TABLEGYM_TEST_KILL_FLAG"])  # set by the module's fixture
    assert not flag.exists()
    kw = {k: v for k, v in KW.items() if k != "games_per_pair"}
    want = play_match(GAME, "random", "easy", games=6, **kw)
    got = play_match(GAME, "random", "easy", games=6, workers=2, backend="ray", agent_factory=dying_factory, **kw)
    assert flag.exists()
    assert untimed([got]) == untimed([want]) and games([got]) == games([want])


def test_stop_after_on_ray_then_resume(tmp_path):
    """--stop-after on Ray: no game starts after the limit, finished games are in the journal, and
    the same command later completes the round robin as if played in one go."""
    from tests.test_match_journal import slow_factory

    whole = round_robin(GAME, SPECS, **KW)
    path = tmp_path / "j.jsonl"
    part = round_robin(GAME, SPECS, journal=path, workers=2, backend="ray", agent_factory=slow_factory, time_limit_s=0.5, **KW)
    assert 0 < sum(r.games for r in part) < 12
    rest = round_robin(GAME, SPECS, journal=path, workers=2, backend="ray", **KW)
    assert untimed(rest) == untimed(whole) and games(rest) == games(whole)


def test_threes_trains_on_ray_chunks_that_learn_on_copies(tmp_path):
    """The Threes trainer's Ray mode: each chunk learns on a copy of the current table and the
    learner adds its changes. One chunk in flight is the in-process run (up to float32 rounding
    of w + (w' - w)); two in flight learn too, every game counted."""
    import numpy as np

    from tablegym.models.threes.ntuple_net import load_ntuple
    from tablegym.training.threes.train import parse_args, train

    common = [
        "--games",
        "60",
        "--minutes",
        "0",
        "--log-every",
        "20",
        "--tuples",
        "h,0,1",
        "2,3,4",
        "--stage-ranks",
        "--seed",
        "4",
    ]
    train(parse_args(common + ["--run-dir", str(tmp_path / "p")]), progress=False)
    train(parse_args(common + ["--run-dir", str(tmp_path / "r"), "--backend", "ray"]), progress=False)
    p, r = (load_ntuple(tmp_path / d / "checkpoint.pt").tables().weights for d in "pr")
    assert np.abs(p).max() > 0 and np.allclose(p, r, rtol=1e-4, atol=1e-4)
    train(parse_args(common + ["--run-dir", str(tmp_path / "r2"), "--backend", "ray", "--workers", "2"]), progress=False)
    from tablegym.models.threes.ntuple_net import load_ntuple_with_metadata

    net, meta = load_ntuple_with_metadata(tmp_path / "r2" / "checkpoint.pt")
    assert meta["games"] == 60 and np.abs(net.tables().weights).max() > 0


def test_friday_self_play_on_ray_equals_worker_processes(tmp_path):
    """Friday's games on Ray, the network of each iteration sent with them: the same games and
    so the same trained network as on worker processes (two iterations, the second with a net)."""
    import torch

    from tablegym.models.friday.learned import load_friday_model
    from tablegym.training.friday.train import train
    from tests.test_friday_learned import _tiny

    train(_tiny(tmp_path / "p", workers=2))
    train(_tiny(tmp_path / "r", workers=2, backend="ray"))
    (a, meta), (b, _) = (load_friday_model(tmp_path / d / "checkpoint.pt") for d in "pr")
    assert meta["iteration"] == 2
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))
