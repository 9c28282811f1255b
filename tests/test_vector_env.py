"""The compiled vector envs (envs/vector.py) against the single envs they batch.

Board ``i`` of ``gymnasium.make_vec(id, num_envs=N)`` seeded ``s`` must show, step for step, what
``SyncVectorEnv`` of the single env seeded ``s`` shows for env ``i``: observations, rewards,
terminations, truncations and info, through terminations and next-step auto-resets.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import tablegym.envs
from tablegym.envs import plugins
from tablegym.envs.core import IllegalActionError
from tablegym.envs.streams import choice, integers, next_double, next_uint64, pairwise_sum, row_state, stream_rows
from tablegym.envs.vector import KernelVectorEnv
from tablegym.envs.vector_threads import RETRIAL_CALLS, TRIAL_CALLS, WAKE_CALLS, BoardThreads

GYM_IDS = [i for p in plugins() for i in p.gym]
VECTOR_IDS = {i for p in plugins() for i in p.vector}
TWO_PLAYER_IDS = [i for i in tablegym.envs.ENV_IDS if i in VECTOR_IDS]
SHORT_EPISODES = {
    "tablegym/Starship-v0": {"size": 12, "max_steps": 40},
    "tablegym/StarshipTargets-v0": {"size": 12, "max_steps": 40},
}
"""Options under which an id's episodes end within the equality run (a 32 x 32 Starship episode
of random edits runs to its 4,096-step limit)."""


def _ids_with_vector() -> list:
    """Every registered Gymnasium id; those without a vector entry point yet are skipped, so the
    gap shows in the test report."""
    return [
        pytest.param(i, marks=() if i in VECTOR_IDS else pytest.mark.skip(reason="no vector entry point yet"), id=i)
        for i in GYM_IDS
    ]


def _same_step(vec_out: tuple, sync_out: tuple, where: str) -> None:
    """The two vector envs' step (or reset) results agree on every entry the compiled env gives."""
    for k, (a, b) in enumerate(zip(vec_out[:-1], sync_out[:-1])):
        if isinstance(a, dict):  # a Dict observation space, key by key
            _same_info(a, b, f"{where}: entry {k}")
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"{where}: entry {k} of the step differs")
    _same_info(vec_out[-1], sync_out[-1], where)


def _same_info(vec_info: dict, sync_info: dict, where: str) -> None:
    """Every ``info`` entry the compiled env gives is SyncVectorEnv's (a dict entry key by key)."""
    assert set(vec_info) <= set(sync_info), f"{where}: info keys {set(vec_info) - set(sync_info)} not in SyncVectorEnv's"
    for key, value in vec_info.items():
        if key == "final_obs":  # the same-step mode's last observations: one object a board, None where none ended
            for i, (a, b) in enumerate(zip(value, sync_info[key])):
                assert (a is None) == (b is None), f"{where}: final_obs of board {i}"
                if isinstance(a, dict):
                    _same_info(a, b, f"{where}: final_obs of board {i}")
                elif a is not None:
                    np.testing.assert_array_equal(a, b, err_msg=f"{where}: final_obs of board {i} differs")
        elif isinstance(value, dict):
            _same_info(value, sync_info[key], f"{where}: info[{key!r}]")
        else:
            np.testing.assert_array_equal(value, sync_info[key], err_msg=f"{where}: info[{key!r}] differs")


def _play_against_sync(
    env_id: str,
    kwargs: dict,
    *,
    num_envs: int,
    steps: int,
    seed: int,
    masked: bool = True,
    autoreset_mode: AutoresetMode = AutoresetMode.NEXT_STEP,
) -> int:
    """Step the compiled env and SyncVectorEnv side by side with the same actions; return the
    number of episodes that ended."""
    vec = gymnasium.make_vec(env_id, num_envs=num_envs, autoreset_mode=autoreset_mode, **kwargs)
    sync = gymnasium.make_vec(
        env_id, num_envs=num_envs, vectorization_mode="sync", vector_kwargs={"autoreset_mode": autoreset_mode}, **kwargs
    )
    assert vec.metadata["autoreset_mode"] is sync.metadata["autoreset_mode"] is autoreset_mode
    assert isinstance(vec.unwrapped, KernelVectorEnv)
    assert isinstance(sync, SyncVectorEnv)
    _same_step(vec.reset(seed=seed), sync.reset(seed=seed), "reset")
    rng = np.random.default_rng(seed)
    ended = 0
    n_actions = vec.single_action_space.n
    for t in range(steps):
        if masked:
            masks = vec.unwrapped.action_masks()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        else:
            actions = rng.integers(n_actions, size=num_envs)
        out = vec.step(actions)
        _same_step(out, sync.step(actions), f"step {t}")
        ended += int(np.sum(out[2] | out[3]))
        if autoreset_mode is AutoresetMode.SAME_STEP:  # (the comparison above reads only the compiled env's keys)
            assert np.array_equal(out[-1].get("_final_obs", np.zeros(num_envs, bool)), out[2] | out[3])
    vec.close()
    sync.close()
    return ended


@pytest.mark.parametrize("env_id", _ids_with_vector())
def test_boards_match_sync_vector_env(env_id: str) -> None:
    ended = _play_against_sync(env_id, SHORT_EPISODES.get(env_id, {}), num_envs=3, steps=250, seed=11)
    assert ended >= 3, "the run should cross several terminations and auto-resets"


@pytest.mark.parametrize("env_id", _ids_with_vector())
def test_boards_match_sync_vector_env_in_the_same_step_mode(env_id: str) -> None:
    """``autoreset_mode="same_step"``: a board that ends is dealt again in that step, its last
    observation and info in ``final_obs`` and ``final_info``, as SyncVectorEnv gives them."""
    ended = _play_against_sync(
        env_id, SHORT_EPISODES.get(env_id, {}), num_envs=3, steps=250, seed=11, autoreset_mode=AutoresetMode.SAME_STEP
    )
    assert ended >= 3


@pytest.mark.parametrize("env_id", ["tablegym/Trilobite-v0", "tablegym/Trap-v0"])
def test_alternating_seats_and_penalties_match_sync_vector_env_in_the_same_step_mode(env_id: str) -> None:
    """The same-step deal keeps the seats' turns, and an ended board's penalty flag goes to its final_info."""
    _play_against_sync(env_id, {"agent_seat": "alternate"}, num_envs=2, steps=150, seed=3, autoreset_mode=AutoresetMode.SAME_STEP)
    _play_against_sync(
        env_id, {"illegal_action": "penalty"}, num_envs=3, steps=60, seed=5, masked=False, autoreset_mode=AutoresetMode.SAME_STEP
    )


def _compiled_run(env_id: str, kwargs: dict, *, num_envs: int, steps: int, seed: int, header: bool = True) -> list:
    """Every reset and step result of the compiled env over random masked actions, a partial
    reset half-way (what ``test_threads_step_the_same_boards`` compares between thread counts).
    ``header=False``: the player to move and the outcome asked of the game's kernels, never read
    off the state's header."""
    env = gymnasium.make_vec(env_id, num_envs=num_envs, **kwargs)
    if not header:
        env.unwrapped._kernels[7:9] = -1
    rng = np.random.default_rng(seed)
    out = [env.reset(seed=seed)]
    for t in range(steps):
        if t == steps // 2:
            out.append(env.reset(options={"reset_mask": np.arange(num_envs) % 2 == 0}))
        masks = env.unwrapped.action_masks()
        out.append(env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks])))
    threads = env.unwrapped.threads
    env.close()
    return [threads, out]


@pytest.mark.parametrize("env_id", sorted(VECTOR_IDS))
def test_threads_step_the_same_boards(env_id: str) -> None:
    """Boards stepped in three threads (a slice each) give what one thread gives, bit for bit:
    a board touches only its own rows. Self-play too where the game has two players."""
    kwargs = [SHORT_EPISODES.get(env_id, {})] + ([{"opponent": None}] if env_id in TWO_PLAYER_IDS else [])
    for kw in kwargs:
        one_thread, one = _compiled_run(env_id, {**kw, "threads": 1}, num_envs=7, steps=120, seed=2)
        three_threads, three = _compiled_run(env_id, {**kw, "threads": 3}, num_envs=7, steps=120, seed=2)
        assert (one_thread, three_threads) == (1, 3)
        for t, (a, b) in enumerate(zip(one, three)):
            _same_step(b, a, f"{kw} step {t}")


@pytest.mark.parametrize("env_id", sorted(i for i in VECTOR_IDS if "Starship" not in i))
def test_to_move_and_outcome_from_the_header_or_the_kernels_alike(env_id: str) -> None:
    """Every game keeps the player to move and the outcome in envs/core.py's header, which the
    batch reads directly; a game with kernels of its own for them gets them called (slots -1):
    the same steps either way, self-play too."""
    kwargs = [SHORT_EPISODES.get(env_id, {})] + ([{"opponent": None}] if env_id in TWO_PLAYER_IDS else [])
    for kw in kwargs:
        header = _compiled_run(env_id, kw, num_envs=3, steps=80, seed=5)
        kernels = _compiled_run(env_id, kw, num_envs=3, steps=80, seed=5, header=False)
        for t, (a, b) in enumerate(zip(header[1], kernels[1])):
            _same_step(b, a, f"{kw} step {t}")


def test_threads_default_to_one_and_auto_to_the_faster_of_one_and_one_per_core_and_128_boards(monkeypatch) -> None:
    monkeypatch.setattr(tablegym.envs.vector_threads, "available_cores", lambda: 2)
    assert gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=4096).unwrapped._boards.most == 1
    for boards, most in ((1, 1), (255, 1), (256, 2), (4096, 2)):
        env = gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=boards, threads="auto")
        assert (env.unwrapped._boards.most, env.unwrapped.threads) == (most, 1), boards
        assert env.unwrapped.choosing_threads == (most > 1)
        env.reset(seed=0)
        steps = 0
        while env.unwrapped.choosing_threads and steps < 100_000:  # until the clock has advanced enough
            env.step(np.argmax(env.unwrapped.action_masks(), axis=1))
            steps += 1
        assert steps == 0 if most == 1 else steps >= 2 * TRIAL_CALLS
        assert env.unwrapped.threads in (1, most) and not env.unwrapped.choosing_threads
    monkeypatch.setattr(tablegym.envs.vector_threads, "available_cores", lambda: 16)
    assert gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=1000, threads="auto").unwrapped._boards.most == 7
    assert gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=2, threads=5).unwrapped.threads == 2


@pytest.mark.parametrize("faster", [1, 2])
def test_an_automatic_count_keeps_the_faster_by_a_clock_coarser_than_a_step(faster: int) -> None:
    """A clock that reads in steps of 20 ms (the development machine's wall clocks), steps of
    0.5 ms against 0.3 ms: each step timed alone reads 0 s or 20 ms, and a median of those chose
    one thread whichever was faster; timed over the stretches between the clock's changes, the
    faster count is kept. The trial lasts until enough stretches were timed, and then no longer."""
    true_time = [0.0]
    boards = BoardThreads(1024, 2, choose=True, clock=lambda: true_time[0] // 0.02 * 0.02)
    cost = {1: 0.0005 if faster == 1 else 0.0008, 2: 0.0008 if faster == 1 else 0.0005}
    calls = 0
    while boards.choosing:
        boards.run(lambda bounds: true_time.__setitem__(0, true_time[0] + cost[1 if bounds is None else 2]))
        calls += 1
        assert calls < 10_000
    assert boards.threads == faster
    assert true_time[0] < (2 * TRIAL_CALLS - 2 * WAKE_CALLS + 2) * 0.02 + 0.1  # about a clock step a timed stretch


@pytest.mark.parametrize("faster", [1, 3])
def test_an_automatic_count_keeps_the_faster_by_the_clock_and_times_again(faster: int) -> None:
    """``TRIAL_CALLS`` steps in three threads, then as many in one, timed by the injected clock (a
    call over all nine boards costs 2 s, or 1 s when one thread is to be the faster; three slices
    1 s in all, or 2 s; the first ``2 * WAKE_CALLS`` steps in threads 100 s more, waking them:
    counted from the first, their median would be 50 s more); then the
    faster steps until ``RETRIAL_CALLS`` steps have passed, when the two are timed again (the
    other one faster now: the machine got busy)."""
    now = [0.0]
    one_costs = [1.0 if faster == 1 else 2.0]
    boards = BoardThreads(9, 3, choose=True, clock=lambda: now[0])
    runs: list[list[int] | None] = []

    def call(bounds: np.ndarray | None) -> None:
        runs.append(None if bounds is None else bounds.tolist())
        waking = bounds is not None and (len(runs) - 1) % RETRIAL_CALLS < 2 * WAKE_CALLS  # threads asleep
        now[0] += (one_costs[0] if bounds is None else 3.0 - one_costs[0]) + (100.0 if waking else 0.0)

    slices = [0, 3, 6, 9]
    for k in range(RETRIAL_CALLS):
        boards.run(call)
        if k < 2 * TRIAL_CALLS - 1:
            assert boards.threads == 1
    assert runs[: 2 * TRIAL_CALLS] == [slices] * TRIAL_CALLS + [None] * TRIAL_CALLS
    assert boards.threads == faster
    assert runs[2 * TRIAL_CALLS :] == [None if faster == 1 else slices] * (RETRIAL_CALLS - 2 * TRIAL_CALLS)
    one_costs[0] = 3.0 - one_costs[0]
    for _ in range(2 * TRIAL_CALLS):
        boards.run(call)
    assert runs[RETRIAL_CALLS:] == [slices] * TRIAL_CALLS + [None] * TRIAL_CALLS
    assert boards.threads == (3 if faster == 1 else 1)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", "Auto", True])
def test_bad_threads_are_refused(bad) -> None:
    with pytest.raises(ValueError, match="threads must be an integer >= 1 .default 1. or 'auto'"):
        gymnasium.make_vec("tablegym/Threes-v0", num_envs=2, threads=bad)


@pytest.mark.parametrize("env_id", TWO_PLAYER_IDS)
def test_alternating_seats_match_sync_vector_env(env_id: str) -> None:
    """With ``agent_seat="alternate"`` the opponent moves first on every other episode."""
    _play_against_sync(env_id, {"agent_seat": "alternate"}, num_envs=2, steps=150, seed=3)


@pytest.mark.parametrize("env_id", TWO_PLAYER_IDS)
def test_random_opening_plies_match_sync_vector_env(env_id: str) -> None:
    """``opening_plies=3``: three random moves for both seats at every reset, then the seats'
    logic (the opponent first on every other episode), the same draws as the single env's."""
    _play_against_sync(
        env_id, {**SHORT_EPISODES.get(env_id, {}), "opening_plies": 3, "agent_seat": "alternate"}, num_envs=3, steps=150, seed=7
    )


@pytest.mark.parametrize("env_id", ["tablegym/TrilobiteTiny-v0", "tablegym/Threes-v0"])
def test_penalised_illegal_actions_match_sync_vector_env(env_id: str) -> None:
    """``illegal_action="penalty"``: an unmasked random action ends its board as the single env does."""
    ended = _play_against_sync(env_id, {"illegal_action": "penalty"}, num_envs=3, steps=60, seed=5, masked=False)
    assert ended >= 3


@pytest.mark.parametrize("spelled", [AutoresetMode.SAME_STEP, "SameStep", "same_step", "SAME_STEP"])
def test_the_same_step_mode_is_asked_for_as_gymnasium_spells_it(spelled) -> None:
    assert (
        gymnasium.make_vec("tablegym/Threes-v0", num_envs=2, autoreset_mode=spelled).metadata["autoreset_mode"]
        is AutoresetMode.SAME_STEP
    )


def test_make_vec_defaults_to_the_compiled_env() -> None:
    env = gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=2)
    assert isinstance(env.unwrapped, KernelVectorEnv)
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=0)
    assert obs.shape == (2, 3, 7, 8) and obs.dtype == np.float32
    assert info["action_mask"].shape == (2, 8) and info["action_mask"].dtype == np.int8


@pytest.mark.parametrize("env_id", sorted(VECTOR_IDS))
def test_mask_never_empty_while_sampling(env_id: str) -> None:
    env = gymnasium.make_vec(env_id, num_envs=4)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(200):
        masks = env.unwrapped.action_masks()
        assert masks.shape == (4, env.single_action_space.n) and masks.any(axis=1).all()
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_record_episode_statistics_counts_each_board(mode: AutoresetMode) -> None:
    env = RecordEpisodeStatistics(gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=3, autoreset_mode=mode))
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    returns, lengths, seen = np.zeros(3), np.zeros(3, dtype=int), 0
    pending = np.zeros(3, dtype=bool)
    for _ in range(60):
        masks = env.unwrapped.action_masks()
        _, reward, term, trunc, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        returns[~pending] += reward[~pending]
        lengths[~pending] += 1
        done = term | trunc
        for i in np.flatnonzero(done):
            assert info["_episode"][i]
            assert info["episode"]["r"][i] == returns[i] and info["episode"]["l"][i] == lengths[i]
            seen += 1
        if mode is AutoresetMode.NEXT_STEP:  # an ended board's next step only deals it again
            returns[pending], lengths[pending] = 0.0, 0
            pending = done
        else:  # dealt again already: its next step counts in its next episode
            returns[done], lengths[done] = 0.0, 0
    assert seen >= 3


def test_self_play_shows_the_player_to_move() -> None:
    """``opponent=None``: nobody else moves; the reward goes to the mover, the observation to the
    player to move next, as the rules core's states say."""
    env = gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=1, opponent=None)
    game = env.unwrapped.game
    obs, info = env.reset(seed=0)
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(40):
        np.testing.assert_array_equal(obs[0], state.observation(state.current_player()))
        assert info["seat"][0] == state.current_player()
        action = int(rng.choice(state.legal_actions()))
        mover = state.current_player()
        state = state.child(action)
        obs, reward, term, _, info = env.step(np.array([action]))
        if state.is_terminal():
            assert term[0] and reward[0] == state.returns()[mover]
            obs, reward, term, _, info = env.step(np.array([0]))  # the auto-reset step
            assert not term[0] and reward[0] == 0.0
            state = game.new_initial_state()
        else:
            assert not term[0] and reward[0] == 0.0


@pytest.mark.parametrize("bad", [0, -2, 2.5, "3", True])
def test_bad_num_envs_is_refused(bad) -> None:
    with pytest.raises(ValueError, match="num_envs must be an integer >= 1"):
        gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=bad)


@pytest.mark.parametrize("env_id", ["tablegym/TrilobiteTiny-v0", "tablegym/Starship-v0"])
@pytest.mark.parametrize("bad", [-1, 1.5, "7", True, [0, 1], [0, -1, 2], [0, "x", 2]])
def test_bad_seeds_are_refused_in_one_line(env_id, bad) -> None:
    """As the single env refuses a negative seed, by name, and a list of seeds, one a board (None
    for fresh entropy), is taken as given."""
    env = gymnasium.make_vec(env_id, num_envs=3)
    with pytest.raises(ValueError, match=r"seed must be None, an int >= 0 or a list of 3 such seeds"):
        env.reset(seed=bad)
    first, _ = env.reset(seed=[4, None, np.int64(6)])
    again, _ = env.reset(seed=[4, 5, 6])
    assert np.array_equal(first[0], again[0]) and np.array_equal(first[2], again[2])


def test_illegal_action_names_its_board() -> None:
    assert gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=3).unwrapped.illegal_action == "penalty"  # the id's
    env = gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=3, illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"illegal action 7 on board 1; legal actions are \[0, 1, 2\]"):
        env.step(np.array([0, 7, 0]))
    with pytest.raises(ValueError, match=r"actions must be an integer array of shape \(3,\)"):
        env.step(np.zeros(2, dtype=int))
    with pytest.raises(ValueError, match=r"actions must be an integer array"):
        env.step(np.zeros(3))


def test_a_refused_step_changes_no_board_and_an_ended_board_takes_any_action() -> None:
    """The legality check runs before any board moves: an illegal action on the last board
    leaves the first boards as they were; a board waiting for its auto-reset ignores its action,
    even one outside the action space."""
    env = gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=3, illegal_action="raise")
    env.reset(seed=0)
    before = env.unwrapped._states.copy()
    with pytest.raises(IllegalActionError, match=r"illegal action -1 on board 2"):
        env.step(np.array([0, 0, -1]))
    assert (env.unwrapped._states == before).all()
    rng = np.random.default_rng(0)
    while True:
        masks = env.unwrapped.action_masks()
        _, _, terms, _, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        if terms.any():
            break
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in env.unwrapped.action_masks()])
    actions[terms] = 99
    env.step(actions)  # no error: the ended boards start again, their action ignored


def test_unsupported_options_are_refused() -> None:
    with pytest.raises(ValueError, match="opponent must be 'random' or None"):
        gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=2, opponent="hard")
    for env_id in ("tablegym/Trilobite-v0", "tablegym/Starship-v0"):
        with pytest.raises(
            ValueError,
            match=r"autoreset_mode must be AutoresetMode.NEXT_STEP .* or "
            r"AutoresetMode.SAME_STEP",
        ):
            gymnasium.make_vec(env_id, num_envs=2, autoreset_mode=AutoresetMode.DISABLED)
        with pytest.raises(ValueError, match="got 'sometimes'"):
            gymnasium.make_vec(env_id, num_envs=2, autoreset_mode="sometimes")


def test_streams_repeat_numpy() -> None:
    """The compiled streams draw what ``numpy.random.default_rng(seed)`` draws, state included."""
    for seed in (0, 1, 2**40 + 3):
        gen, row = np.random.default_rng(seed), stream_rows([seed])[0]
        for k in range(120):
            p = np.random.default_rng(k).random(k % 40 + 1) ** 3
            assert next_uint64(row) == gen.bit_generator.random_raw()
            assert integers(row, k % 37 + 1) == gen.integers(k % 37 + 1)
            assert next_double(row) == gen.random()
            assert choice(row, p, len(p)) == gen.choice(len(p), p=p / p.sum())
        assert row_state(row) == gen.bit_generator.state
    for n in (3, 8, 100, 129, 1000):
        a = np.random.default_rng(n).random(n) ** 7
        assert pairwise_sum(a, 0, n) == a.sum()


def test_bench_vec_reports_both_envs() -> None:
    from tablegym.experiments.vector_bench import bench_vec

    rows = bench_vec(seconds=0.01, repeats=1, batches="2", ids="TrilobiteTiny")
    row = rows["TrilobiteTiny-v0 x 2"]
    assert row["compiled steps/s"] > 0 and row["sync steps/s"] > 0 and row["sync boards"] == 2
    assert row["threads"] == 1
    two = bench_vec(seconds=0.01, repeats=1, batches="2", ids="TrilobiteTiny", threads=2)["TrilobiteTiny-v0 x 2"]
    assert two["threads"] == 2 and two["compiled steps/s"] > 0
    with pytest.raises(ValueError, match="match no env id with a vector entry point"):
        bench_vec(ids="Nonesuch")
    assert bench_vec(seconds=0.01, repeats=1, batches="2", ids="TrilobiteTiny", copy=False)["TrilobiteTiny-v0 x 2"]["ratio"] > 0
    with pytest.raises(ValueError, match="copy must be true or false"):
        bench_vec(ids="TrilobiteTiny", copy="yes")


@pytest.mark.parametrize(
    "kwargs", [{"reward": "score"}, {"reward": "score", "max_steps": 25, "level": 3}], ids=["score", "truncated-level3"]
)
def test_friday_rewards_and_truncation_match_sync_vector_env(kwargs: dict) -> None:
    """Friday's score reward counts from the dealt position's score, and ``max_steps`` truncates
    (25 decisions: most boards are cut before they end), as ``FridayEnv`` does."""
    ended = _play_against_sync("tablegym/Friday-v1", kwargs, num_envs=3, steps=120, seed=5)
    assert ended >= 3


@pytest.mark.parametrize("env_id", ["tablegym/Trilobite-v0", "tablegym/Threes-v0"])
def test_a_partial_reset_deals_only_the_masked_boards(env_id: str) -> None:
    """``reset(options={"reset_mask": m})`` (Gymnasium's partial reset) deals the boards of ``m``
    again and leaves the others' games, observations and masks as they were."""
    envs = gymnasium.make_vec(env_id, num_envs=4)
    obs0, _ = envs.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(3):
        masks = envs.unwrapped.action_masks()
        obs, *_ = envs.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    before = [envs.unwrapped.game_state(i) for i in range(4)]
    mask = np.array([True, False, True, False])
    after, info = envs.reset(options={"reset_mask": mask})
    for i in (1, 3):
        assert envs.unwrapped.game_state(i) == before[i] and np.array_equal(after[i], obs[i])
    for i in (0, 2):
        assert envs.unwrapped.game_state(i) != before[i]
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": [1, 0]})
    fresh = gymnasium.make_vec(env_id, num_envs=4)
    with pytest.raises(ValueError, match="first reset"):
        fresh.reset(options={"reset_mask": mask})


@pytest.mark.parametrize("env_id", sorted(VECTOR_IDS))
def test_copy_false_returns_the_env_s_own_buffer_with_the_same_values(env_id: str) -> None:
    """``copy=False`` (SyncVectorEnv's meaning): one buffer, overwritten each step, holding what
    the copying env returns for the same seeds and actions."""
    copied, shared = (gymnasium.make_vec(env_id, num_envs=3, copy=c) for c in (True, False))
    (a, _), (b, _) = copied.reset(seed=4), shared.reset(seed=4)
    first = b["grid"] if isinstance(b, dict) else b
    rng = np.random.default_rng(0)
    for _ in range(12):
        masks = copied.unwrapped.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        a, *_ = copied.step(actions)
        b, *_ = shared.step(actions)
        for x, y in ((a["grid"], b["grid"]),) if isinstance(a, dict) else ((a, b),):
            assert np.array_equal(x, y) and not np.shares_memory(x, first)
        assert np.shares_memory(b["grid"] if isinstance(b, dict) else b, first)
    with pytest.raises(ValueError, match="copy must be True"):
        gymnasium.make_vec(env_id, num_envs=2, copy="no")


def test_a_kernel_set_is_named_by_its_kernels_and_their_sources(tmp_path, monkeypatch) -> None:
    """The entry points compiled for a game are cached under the type of its ``KernelSet``: the
    same kernels give the same type, another game's another, and an edit of a kernel's source
    file another (numba checks only the cached function's own file, so without this a changed
    rule would keep its old compiled step)."""
    import importlib

    from tablegym.envs import kernel_sets
    from tablegym.envs.kernel_sets import KERNEL_NAMES, KernelSet

    trilobite = gymnasium.make_vec("tablegym/Trilobite-v0", num_envs=2).unwrapped
    tiny = gymnasium.make_vec("tablegym/TrilobiteTiny-v0", num_envs=2).unwrapped
    sim = gymnasium.make_vec("tablegym/Sim-v0", num_envs=2).unwrapped
    assert trilobite._kernel_set.key == tiny._kernel_set.key != sim._kernel_set.key
    with pytest.raises(ValueError, match=f"a kernel set holds {len(KERNEL_NAMES)} kernels"):
        KernelSet("sim", (1, 2))

    source = tmp_path / "some_rules.py"
    monkeypatch.syspath_prepend(str(tmp_path))

    def kernel_set() -> str:
        module = importlib.import_module("some_rules")
        return KernelSet("some", (module.k,) * len(KERNEL_NAMES)).key

    source.write_text("from numba import njit\n\n@njit\ndef k(s):\n    return 0\n")
    before = kernel_set()
    assert kernel_set() == before
    source.write_text("from numba import njit\n\n@njit\ndef k(s):\n    return 1\n")
    kernel_sets._key.cache_clear()
    assert kernel_set() != before
    namespace: dict = {}  # kernels with no source file, as typed in a notebook, still make a set
    exec("from numba import njit\n\n@njit\ndef k(s):\n    return 2\n", namespace)
    assert KernelSet("typed", (namespace["k"],) * len(KERNEL_NAMES)).key.startswith("typed:")
