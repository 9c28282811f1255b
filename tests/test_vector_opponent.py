"""The other seat inside the batch (envs/vector.py): a compiled search as the opponent of every
board, and a seat a board.

Alpha-beta's moves are those of the single env with the same ``opponent`` spec, step for step
against ``SyncVectorEnv``; expectiminimax's are those of a fresh search of each position called
from Python (the single env's agent keeps its table between decisions, the batch cannot).
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.vector import SyncVectorEnv

import tablegym.envs  # noqa: F401 (registers the env ids)
import tablegym.envs.vector_threads
from tablegym.envs import make_game
from tablegym.models.agents import make_agent
from tablegym.models.export import TorchEvaluator, save
from tablegym.search.agents import AlphaBetaAgent
from tablegym.search.expectiminimax_search import expectiminimax

ACCEPTED = r"a vector env's opponent must be 'random' or None \(self-play\), or a compiled search at a depth"


def _same(a: tuple, b: tuple, where: str) -> None:
    for k, (x, y) in enumerate(zip(a[:-1], b[:-1])):
        np.testing.assert_array_equal(x, y, err_msg=f"{where}: entry {k} differs")
    for key in ("action_mask", "seat"):
        np.testing.assert_array_equal(a[-1][key], b[-1][key], err_msg=f"{where}: info[{key!r}] differs")


def _play(vec, sync, *, steps: int, seed: int, options: dict | None = None) -> int:
    """Step both vector envs with the same random legal actions; the number of games ended."""
    _same(vec.reset(seed=seed, options=options), sync.reset(seed=seed, options=options), "reset")
    rng = np.random.default_rng(seed)
    ended = 0
    for t in range(steps):
        masks = vec.unwrapped.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        out = vec.step(actions)
        _same(out, sync.step(actions), f"step {t}")
        ended += int(out[2].sum())
    return ended


def _against_single_env(
    env_id: str, opponent, *, num_envs: int = 3, steps: int = 40, seed: int = 7, sync_opponent=None, **kwargs
) -> int:
    vec = gymnasium.make_vec(env_id, num_envs=num_envs, opponent=opponent, **kwargs)
    sync = gymnasium.make_vec(
        env_id,
        num_envs=num_envs,
        vectorization_mode="sync",
        opponent=opponent if sync_opponent is None else sync_opponent,
        **kwargs,
    )
    return _play(vec, sync, steps=steps, seed=seed)


@pytest.mark.parametrize(
    "env_id, spec",
    [
        ("tablegym/Trilobite-v0", "alphabeta:eval=advanced,depth=2"),
        ("tablegym/TrilobiteTiny-v0", "alphabeta:eval=gap-tolerant,depth=4"),
        ("tablegym/Sim-v0", "ab:eval=safe-moves,depth=2"),
    ],
)
def test_alphabeta_plays_the_single_envs_moves(env_id: str, spec: str) -> None:
    ended = _against_single_env(env_id, spec, agent_seat="alternate")
    assert ended >= 2, "the run should cross terminations and auto-resets"


def test_the_shipped_network_plays_the_single_envs_moves() -> None:
    _against_single_env("tablegym/Trilobite-v0", "alphabeta:eval=learned,depth=2", num_envs=2, steps=25)


def test_an_exported_network_file_plays_the_single_envs_moves(tmp_path) -> None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3 * 7 * 8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1), torch.nn.Tanh())
    path = save(net, make_game("trilobite"), tmp_path / "net.pt")
    _against_single_env("tablegym/Trilobite-v0", f"alphabeta:eval=learned:{path},depth=2", num_envs=2, steps=25)


class FreshSearch:
    """Trap's opponent as the batch plays it: a new expectiminimax search of each position from
    Python (the agent's move filter and settings, new tables every time)."""

    def __init__(self, spec: str) -> None:
        self.name = f"fresh {spec}"
        self.agent = make_agent(make_game("trap"), spec)

    def __call__(self, state, rng: np.random.Generator) -> int:
        a = self.agent
        root = a.move_filter.prepare(state, a.settings)
        return expectiminimax(root, a.evaluator, moves=a.move_filter.moves, depth=a.depth).action


@pytest.mark.parametrize("spec", ["search:eval=composite,depth=2", "emm:eval=learned,depth=1,recipe=course,cands=4"])
def test_expectiminimax_plays_a_fresh_search_of_each_position(spec: str) -> None:
    ended = _against_single_env(
        "tablegym/Trap-v0", spec, num_envs=2, steps=40, seed=3, agent_seat="alternate", sync_opponent=FreshSearch(spec)
    )
    assert ended >= 1


def test_a_seat_a_board() -> None:
    """``agent_seat`` one a board, and ``options["seat"]`` one a board for an episode."""
    env_id, spec, seats = "tablegym/TrilobiteTiny-v0", "alphabeta:eval=advanced,depth=3", [0, 1, "alternate"]
    vec = gymnasium.make_vec(env_id, num_envs=3, opponent=spec, agent_seat=seats)
    sync = SyncVectorEnv([lambda s=s: gymnasium.make(env_id, opponent=spec, agent_seat=s) for s in seats])
    assert _play(vec, sync, steps=40, seed=1) >= 3
    _, info = vec.reset(seed=2, options={"seat": [1, 0, 1]})
    np.testing.assert_array_equal(info["seat"], [1, 0, 1])
    random = gymnasium.make_vec(env_id, num_envs=3, agent_seat=seats)
    _, info = random.reset(seed=0)
    np.testing.assert_array_equal(info["seat"], [0, 1, 0])


@pytest.mark.parametrize(
    "env_id, opponent, why",
    [
        ("tablegym/Trilobite-v0", "nonsense:depth=2", r"'nonsense:depth=2' \(no compiled search\)"),
        ("tablegym/Sim-v0", "expert", r"'expert' \(no compiled search\)"),
        ("tablegym/Trilobite-v0", "expectiminimax:eval=advanced,depth=2", r"\(expectiminimax, not one for trilobite\)"),
        ("tablegym/Trap-v0", "alphabeta:eval=composite,depth=2", r"\(alphabeta, not one for trap\)"),
        ("tablegym/Trap-v0", "bestfirst:eval=composite", r"\(bestfirst, not one for trap\)"),
        ("tablegym/Trilobite-v0", "alphabeta:eval=advanced,time=0.1", r"a time budget: give depth=D"),
        ("tablegym/Trilobite-v0", "alphabeta:eval=advanced", r"a time budget: give depth=D"),
    ],
)
def test_a_bad_opponent_is_one_line_naming_what_is_taken(env_id: str, opponent: str, why: str) -> None:
    with pytest.raises(ValueError, match=ACCEPTED + ".*" + why) as err:
        gymnasium.make_vec(env_id, num_envs=2, opponent=opponent)
    assert "\n" not in str(err.value)
    assert ("'search:eval=E,depth=D' (expectiminimax)" if "Trap" in env_id else "'alphabeta:eval=E,depth=D'") in str(err.value)


def test_a_non_compiled_evaluator_is_refused() -> None:
    game = make_game("trilobite")
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 7 * 8, 1))
    agent = AlphaBetaAgent(TorchEvaluator(net, game, name="conv"), depth=2)
    with pytest.raises(ValueError, match=ACCEPTED + r".*\(evaluator 'conv' has no compiled kernel\)"):
        gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=2, opponent=agent)
    with pytest.raises(ValueError, match="unknown Trilobite evaluator 'nonsense'"):
        gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=2, opponent="alphabeta:eval=nonsense,depth=2")


def test_an_agent_of_the_one_route_is_taken_as_is() -> None:
    agent = make_agent(make_game("trilobite"), "alphabeta:eval=simplest,depth=2")
    env = gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=2, opponent=agent)
    assert env.unwrapped.opponent_agent.agent is agent


@pytest.mark.parametrize("seat", [2, "left", [0, 1], [0, 1, True]])
def test_bad_seats_are_refused(seat) -> None:
    with pytest.raises(ValueError, match="agent_seat must be 0, 1"):
        gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=3, agent_seat=seat)
    env = gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=3)
    with pytest.raises(ValueError, match=r"options\['seat'\] must be 0, 1 or a sequence of 3"):
        env.reset(seed=0, options={"seat": seat})


def test_bench_vec_opponent_reports_the_batch_and_python() -> None:
    from tablegym.experiments.vector_opponent_bench import bench_vec_opponent

    row = bench_vec_opponent(batches="2", seconds=0.01, repeats=1, sync_max=2, positions=4)["Trilobite-v0 x 2"]
    assert row["search steps/s"] > 0 and row["sync steps/s"] > 0 and row["sync boards"] == 2
    assert row["us/search python"] > 0 and row["us/search kernel"] > 0
    with pytest.raises(ValueError, match="batches must be integers >= 1"):
        bench_vec_opponent(batches="0")


@pytest.mark.parametrize("opponent", ["medium", "hard", "hard-sound"])
def test_trap_s_reference_players_play_the_single_envs_moves(opponent: str) -> None:
    """The course's Medium and Hard inside the batch (compiled) make the single env's choices,
    step for step, across terminations and auto-resets, on a 5x5 and the 7x7 board."""
    ended = _against_single_env("tablegym/Trap-v0", opponent, num_envs=4, steps=60, agent_seat="alternate")
    assert ended >= 2, "the run should cross terminations and auto-resets"
    _against_single_env("tablegym/Trap-v0", opponent, num_envs=3, steps=40, seed=3, n=5)


def test_a_bad_trap_opponent_names_the_reference_players() -> None:
    with pytest.raises(ValueError, match=ACCEPTED + r".*or a reference player: medium, hard, hard-sound; got 'easy'"):
        gymnasium.make_vec("tablegym/Trap-v0", num_envs=2, opponent="easy")
    with pytest.raises(ValueError, match=r"or a reference player: medium, hard, hard-sound; got 'medium:ties=random'"):
        gymnasium.make_vec("tablegym/Trap-v0", num_envs=2, opponent="medium:ties=random")


@pytest.mark.parametrize(
    "env_id, opponent", [("tablegym/TrilobiteTiny-v0", "alphabeta:eval=advanced,depth=1"), ("tablegym/Trap-v0", "hard")]
)
def test_a_search_or_reference_opponent_steps_in_one_thread(env_id: str, opponent: str, monkeypatch) -> None:
    """Its tables serve every board: the automatic count is one thread, more is one clear line."""
    monkeypatch.setattr(tablegym.envs.vector_threads, "available_cores", lambda: 2)
    assert gymnasium.make_vec(env_id, num_envs=1024, opponent=opponent, threads="auto").unwrapped.threads == 1
    with pytest.raises(ValueError, match="threads must be 1 with a search or reference player"):
        gymnasium.make_vec(env_id, num_envs=4, opponent=opponent, threads=2)
