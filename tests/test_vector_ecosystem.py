"""The compiled vector envs in other people's RL code: Stable-Baselines3 through
training/sb3_vec.py, Gymnasium's vector wrappers, and the README's snippets.

SB3 resets a board in the step that ends it (the terminal observation in the info); the compiled
envs reset on the next step. Board by board, the adapter must show the raw env's episodes with
the reset steps taken out.
"""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import NormalizeReward, RecordEpisodeStatistics

import tablegym.envs  # noqa: F401  (registers the ids)

pytest.importorskip("stable_baselines3")
from tablegym.training.sb3_vec import SB3VecEnv  # noqa: E402

README = Path(__file__).resolve().parent.parent / "docs" / "environments.md"
"""The page that holds the vector-env snippets (the front page links to it)."""


def _pick(mask: np.ndarray, u: float) -> int:
    """The legal action that the uniform draw ``u`` selects."""
    legal = np.flatnonzero(mask)
    return int(legal[int(u * len(legal))])


def _raw_transcripts(env_id: str, kwargs: dict, n: int, seed: int, draws: np.ndarray, steps: int) -> list[list]:
    """Each board's SB3-style steps under the raw (next-step) env: (obs shown, reward, done,
    terminal obs), the reset steps folded into the step that ended the episode."""
    env = gymnasium.make_vec(env_id, num_envs=n, **kwargs)
    obs, info = env.reset(seed=seed)
    out: list[list] = [[] for _ in range(n)]
    used = np.zeros(n, dtype=int)
    pending = np.zeros(n, dtype=bool)
    while used.min() < steps:
        masks = info["action_mask"]
        actions = np.array([0 if pending[i] else _pick(masks[i], draws[i, min(used[i], steps - 1)]) for i in range(n)])
        obs, rewards, terms, truncs, info = env.step(actions)
        for i in range(n):
            if pending[i]:  # the reset step: its observation is what SB3 sees at the done step
                out[i][-1][0] = obs[i]
            else:
                done = bool(terms[i] or truncs[i])
                out[i].append([obs[i], rewards[i], done, obs[i] if done else None, bool(truncs[i] and not terms[i])])
                used[i] += 1
        pending = terms | truncs
    env.close()
    return out


@pytest.mark.parametrize(
    "env_id, kwargs, ending",
    [
        ("tablegym/TrilobiteTiny-v0", {"agent_seat": "alternate"}, "terminated"),
        ("tablegym/Threes-v0", {"max_moves": 12}, "truncated"),
    ],
    ids=["TrilobiteTiny-alternate", "Threes-max_moves"],
)
def test_adapter_shows_the_raw_episodes_board_by_board(env_id: str, kwargs: dict, ending: str) -> None:
    n, steps, seed = 4, 150, 7
    draws = np.random.default_rng(seed).random((n, steps))
    expected = _raw_transcripts(env_id, kwargs, n, seed, draws, steps)
    venv = SB3VecEnv(gymnasium.make_vec(env_id, num_envs=n, **kwargs))
    venv.seed(seed)
    obs = venv.reset()
    np.testing.assert_array_equal(obs, gymnasium.make_vec(env_id, num_envs=n, **kwargs).reset(seed=seed)[0])
    ends, truncations = 0, 0
    for t in range(steps):
        masks = np.stack(venv.env_method("action_masks"))
        actions = np.array([_pick(masks[i], draws[i, t]) for i in range(n)])
        obs, rewards, dones, infos = venv.step(actions)
        assert rewards.dtype == np.float32 and dones.dtype == bool
        for i in range(n):
            shown, reward, done, terminal, truncated = expected[i][t]
            np.testing.assert_array_equal(obs[i], shown, err_msg=f"board {i}, step {t}")
            assert rewards[i] == np.float32(reward) and dones[i] == done, f"board {i}, step {t}"
            if done:
                np.testing.assert_array_equal(infos[i]["terminal_observation"], terminal)
                assert infos[i]["TimeLimit.truncated"] == truncated
                ends += 1
                truncations += truncated
            else:
                assert "terminal_observation" not in infos[i]
    assert ends >= 8, "the run should cross several episode ends"
    assert (truncations > 0) == (ending == "truncated")


@pytest.mark.parametrize("same_step", ["sync", "compiled"])
def test_adapter_matches_same_step_sync_vector_env(same_step: str) -> None:
    """Gymnasium's own SAME_STEP SyncVectorEnv (final_obs in the info), and the compiled env in
    that mode, give SB3 the steps that the compiled env in the next-step mode gives it."""
    env_id, n, seed = "tablegym/Threes-v0", 3, 2
    fast = SB3VecEnv(gymnasium.make_vec(env_id, num_envs=n, max_moves=9))
    slow = SB3VecEnv(
        gymnasium.make_vec(env_id, num_envs=n, max_moves=9, autoreset_mode=AutoresetMode.SAME_STEP)
        if same_step == "compiled"
        else gymnasium.make_vec(
            env_id, num_envs=n, max_moves=9, vectorization_mode="sync", vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}
        )
    )
    fast.seed(seed)
    slow.seed(seed)
    np.testing.assert_array_equal(fast.reset(), slow.reset())
    rng = np.random.default_rng(seed)
    for t in range(60):
        masks = fast.action_masks()
        np.testing.assert_array_equal(masks, slow.action_masks())
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        a, b = fast.step(actions), slow.step(actions)
        for k in range(3):
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"step {t}")
        for i in np.flatnonzero(a[2]):
            np.testing.assert_array_equal(a[3][i]["terminal_observation"], b[3][i]["terminal_observation"])
            assert a[3][i]["TimeLimit.truncated"] == b[3][i]["TimeLimit.truncated"]


def test_record_episode_statistics_through_the_adapter() -> None:
    """The partial reset restarts ``RecordEpisodeStatistics``' counters: every ``info["episode"]``
    SB3 reads has the episode's return and length."""
    venv = SB3VecEnv(RecordEpisodeStatistics(gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=3)))
    venv.seed(4)
    venv.reset()
    rng = np.random.default_rng(4)
    returns, lengths, seen = np.zeros(3), np.zeros(3, dtype=int), 0
    for _ in range(80):
        masks = venv.action_masks()
        _, rewards, dones, infos = venv.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        returns += rewards
        lengths += 1
        for i in np.flatnonzero(dones):
            assert infos[i]["episode"]["r"] == returns[i] and infos[i]["episode"]["l"] == lengths[i]
            returns[i], lengths[i] = 0.0, 0
            seen += 1
    assert seen >= 10


def test_normalize_reward_on_the_compiled_env() -> None:
    """``NormalizeReward`` divides by the running return's spread and skips the auto-reset steps."""
    raw = gymnasium.make_vec("tablegym/Threes-v0", num_envs=4, max_moves=20)
    env = NormalizeReward(gymnasium.make_vec("tablegym/Threes-v0", num_envs=4, max_moves=20), gamma=0.9)
    raw.reset(seed=1)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(100):
        masks = env.unwrapped.action_masks()
        actions = np.argmax(rng.random(masks.shape) * masks, axis=1)
        _, plain, *_ = raw.step(actions)
        _, scaled, *_ = env.step(actions)
        np.testing.assert_allclose(scaled, plain / np.sqrt(env.return_rms.var + env.epsilon))
    assert env.return_rms.count > 300 and np.isfinite(env.return_rms.var) and env.return_rms.var > 0


@pytest.mark.parametrize("bad", [None, "tablegym/Trilobite-v0", 3])
def test_adapter_refuses_what_is_not_a_vector_env(bad) -> None:
    with pytest.raises(ValueError, match=r"SB3VecEnv takes a gymnasium.vector.VectorEnv"):
        SB3VecEnv(bad)


def test_bench_vec_says_when_pgx_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without pgx (the main CI) the peer cells say so; ``pgx=False`` leaves them out."""
    from tablegym.experiments import vector_bench

    monkeypatch.setattr(vector_bench, "pgx_available", lambda: False)
    row = vector_bench.bench_vec(seconds=0.01, repeats=1, batches="2", ids="Threes")["Threes-v0 x 2"]
    assert row["pgx game"] == "2048"
    assert row["pgx steps/s"] == row["vs pgx"] == vector_bench.PGX_MISSING
    assert row["compiled steps/s"] > 0
    plain = vector_bench.bench_vec(seconds=0.01, repeats=1, batches="2", ids="Threes", pgx=False)["Threes-v0 x 2"]
    assert "pgx game" not in plain


def test_bench_vec_measures_two_player_self_play_beside_pgx(monkeypatch: pytest.MonkeyPatch) -> None:
    """A two-player id with a pgx peer gets a self-play row (one move a step, as pgx's step),
    without SyncVectorEnv cells (the single env has no self-play); single-player ids do not."""
    from tablegym.experiments import vector_bench

    monkeypatch.setattr(vector_bench, "pgx_available", lambda: False)
    rows = vector_bench.bench_vec(seconds=0.01, repeats=1, batches="2", ids="Trilobite-v0,Threes")
    assert sorted(rows) == ["Threes-v0 x 2", "Trilobite-v0 self-play x 2", "Trilobite-v0 x 2"]
    alone = rows["Trilobite-v0 self-play x 2"]
    assert alone["compiled steps/s"] > 0 and alone["sync steps/s"] == alone["ratio"] == ""
    assert alone["pgx game"] == "connect_four" and alone["vs pgx"] == vector_bench.PGX_MISSING
    assert "Trilobite-v0 self-play x 2" not in vector_bench.bench_vec(
        seconds=0.01, repeats=1, batches="2", ids="Trilobite-v0", self_play=False
    )
    with pytest.raises(ValueError, match="self_play must be true or false, got 'maybe'"):
        vector_bench.bench_vec(ids="Trilobite-v0", self_play="maybe")


def _readme_blocks(marker: str) -> list[str]:
    """The ```python blocks of the vector-env docs page that follow the HTML comment ``marker``."""
    text = README.read_text()
    return re.findall(rf"<!-- {marker} -->\s*```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("marker", ["vector-sb3", "vector-torch"])
def test_readme_vector_snippets_run(marker: str) -> None:
    """The docs' two vector-env snippets run as printed (MaskablePPO's learn is one rollout: the
    short MaskablePPO run through the adapter)."""
    pytest.importorskip("sb3_contrib")
    blocks = _readme_blocks(marker)
    assert blocks, f"docs/environments.md has no ```python block after <!-- {marker} -->"
    source = blocks[0].replace("total_timesteps=20_000", "total_timesteps=256")
    names: dict = {"__name__": "readme"}
    exec(compile(source, f"docs/environments.md <!-- {marker} -->", "exec"), names)
    if marker == "vector-sb3":
        assert names["model"].num_timesteps == 16 * 16  # one rollout of 16 steps on 16 boards
    else:
        assert len(names["envs"].return_queue) > 0
