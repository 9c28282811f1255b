"""The Friday Gymnasium env, its drawing, its registration, and ``tablegym play friday``."""

from __future__ import annotations

import itertools

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import tablegym.envs
from tablegym.envs import make_game
from tablegym.envs.core import IllegalActionError
from tablegym.envs.friday import render
from tablegym.envs.friday.core import FridayGame, sample_chance
from tablegym.envs.friday.env import FridayEnv
from tablegym.envs.friday.layout import DRAW_FREE, DRAW_PAID, NUM_ACTIONS
from tablegym.envs.friday.observation import OBS_SIZE
from tablegym.experiments.cli import main
from tablegym.experiments.games import GAMES
from tests.cli_errors import assert_one_error_line
from tests.episodes import random_episode
from tests.smoke import maskable_ppo, scripted_input


def free_first(info: dict) -> int:
    """A fixed policy: draw a free card when it may, else the first legal action."""
    legal = np.flatnonzero(info["action_mask"])
    return DRAW_FREE if DRAW_FREE in legal else int(legal[0])


# -- Gymnasium API ------------------------------------------------------------------------------


@pytest.mark.filterwarnings("error")  # a checker warning is a failure
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"reward": "score", "level": 4, "render_mode": "rgb_array"}, {"render_mode": "ansi", "max_steps": 5}],
)
def test_check_env(kwargs):
    # check_env steps with unmasked action_space.sample(), and few of the 150 actions are legal at a
    # time: the id's default illegal_action="penalty" takes them; the raise mode is pinned below.
    check_env(gymnasium.make("tablegym/Friday-v1", **kwargs).unwrapped)


def test_make_through_the_registry():
    env = gymnasium.make("tablegym.envs:tablegym/Friday-v1")
    assert env.observation_space.shape == (OBS_SIZE,) == (816,) and env.observation_space.dtype == np.float32
    assert env.action_space.n == NUM_ACTIONS == 150
    assert tablegym.envs.SINGLE_AGENT_ENV_IDS["tablegym/Friday-v1"][1] == {"level": 1, "illegal_action": "penalty"}
    assert env.unwrapped.game.level == 1
    env = gymnasium.make(
        "tablegym/Friday-v1", level=3, abilities="after_free", aging_life="when_drawn", empty_aging="lose", max_steps=10
    )
    assert env.unwrapped.game.spec.options == {
        "level": 3,
        "abilities": "after_free",
        "aging_life": "when_drawn",
        "empty_aging": "lose",
        "below_replacement": "optional",
        "sort_draws": "one_at_a_time",
        "max_life_level4": 22,
    }
    assert gymnasium.make("tablegym/Friday-v1").unwrapped.game.spec.options["empty_aging"] == "lose"  # official
    with pytest.raises(gymnasium.error.DeprecatedEnv, match="Friday-v1"):  # v0 played the first reading
        gymnasium.make("tablegym/Friday-v0")
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space
    assert set(info) == {"score", "life", "step", "won", "decisions", "action_mask"}


def test_bad_arguments_are_refused():
    for kwargs, words in [
        ({"reward": "life"}, "reward"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"max_steps": 0}, "max_steps"),
        ({"render_mode": "human"}, "render_mode"),
        ({"level": 5}, "level must be 1, 2, 3 or 4"),
        ({"abilities": "never"}, "abilities"),
        ({"max_life_level4": 21}, "max_life_level4"),
    ]:
        with pytest.raises(ValueError, match=words):
            FridayEnv(**kwargs)


@pytest.mark.parametrize("level, life, score", [(1, 20, -90), (2, 20, -95), (4, 18, -95)])
def test_starting_state_is_the_first_hazard_choice(level, life, score):
    env = FridayEnv(level=level)
    obs, info = env.reset(seed=3)
    state = env.game_state
    assert np.array_equal(obs, state.observation())
    assert (info["life"], info["step"], info["score"], info["decisions"], info["won"]) == (life, 0, score, 0, False)
    assert state.phase_name == "choose a hazard" and state.current_player() == 0  # no pending draw
    assert np.flatnonzero(info["action_mask"]).tolist() == [0, 1]  # fight the first or the second hazard
    assert obs[0] == pytest.approx(life / 22)


# -- seeding, masks, observations ----------------------------------------------------------------


def test_seeded_episodes_repeat():
    a = random_episode(FridayEnv(reward="score"), seed=11)
    b = random_episode(FridayEnv(reward="score"), seed=11)
    c = random_episode(FridayEnv(reward="score"), seed=12)
    assert a == b
    assert a != c
    # the fixed free-first policy too, over consecutive unseeded resets
    traces = []
    for _ in range(2):
        env = FridayEnv()
        _, info = env.reset(seed=5)
        trace = []
        for _ in range(3):
            done = False
            while not done:
                obs, reward, terminated, truncated, info = env.step(free_first(info))
                done = terminated or truncated
                trace.append((obs.tobytes(), reward))
            _, info = env.reset()
        traces.append(trace)
    assert traces[0] == traces[1]


@pytest.mark.parametrize("level", [1, 4])
def test_masks_agree_with_legal_actions_and_observations_fit_the_space(level):
    env = FridayEnv(level=level, abilities="after_free" if level == 4 else "any_time")
    rng = np.random.default_rng(level)
    for seed in range(4):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            legal = env.game_state.legal_actions()
            assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (NUM_ACTIONS,)
            assert np.flatnonzero(info["action_mask"]).tolist() == legal
            assert np.flatnonzero(env.action_masks()).tolist() == legal and env.action_masks().dtype == bool
            assert obs in env.observation_space
            obs, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
            done = terminated or truncated
        assert env.game_state.is_terminal() and not info["action_mask"].any() and not env.action_masks().any()
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)


# -- illegal actions --------------------------------------------------------------------------------


def test_illegal_action_raises_value_error_naming_it_and_the_legal_ones():
    env = FridayEnv()
    env.reset(seed=0)
    with pytest.raises(IllegalActionError) as err:
        env.step(DRAW_PAID)  # no fight yet: the first decision picks a hazard
    assert isinstance(err.value, ValueError)
    text = str(err.value)
    assert "illegal action 4 (draw paid is not legal while: choose a hazard;" in text
    assert "0 fight first hazard, 1 fight second hazard" in text and "legal actions are [0, 1]" in text
    for bad in (NUM_ACTIONS, -1, "fight", 1.5, None):
        with pytest.raises(IllegalActionError, match=f"illegal action {bad!r}"):
            env.step(bad)
    # The env is unharmed: a legal action still works, numpy integers too.
    env.step(np.int64(0))
    assert env.game_state.phase_name == "fight"


def test_illegal_action_with_penalty_ends_the_episode_as_a_loss():
    env = FridayEnv(illegal_action="penalty", reward="score")
    before, _ = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(DRAW_PAID)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert np.array_equal(obs, before) and not info["action_mask"].any()
    with pytest.raises(RuntimeError):
        env.step(0)


# -- rewards and episode end --------------------------------------------------------------------------


def test_win_reward_is_plus_or_minus_one_at_the_end_only():
    env = FridayEnv()
    rng = np.random.default_rng(0)
    for seed in range(8):
        _, info = env.reset(seed=seed)
        rewards, done = [], False
        while not done:
            _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            rewards.append(reward)
            done = terminated or truncated
        assert terminated and not truncated
        assert all(r == 0.0 for r in rewards[:-1])
        assert rewards[-1] == env.game_state.returns()[0] == (1.0 if info["won"] else -1.0)


def test_score_reward_sums_to_the_score_gained_plus_the_result():
    env = FridayEnv(reward="score")
    rng = np.random.default_rng(1)
    for seed in range(5):
        _, info = env.reset(seed=seed)
        start, score, total, done = info["score"], info["score"], 0.0, False
        while not done:
            _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            done = terminated or truncated
            result = env.game_state.returns()[0] if terminated else 0.0
            assert reward == info["score"] - score + result  # the score's change, plus +-1 at the end
            score = info["score"]
            total += reward
        assert total == info["score"] - start + env.game_state.returns()[0]
        assert info["score"] == env.game_state.score


def test_max_steps_truncates():
    env = FridayEnv(max_steps=3)
    _, info = env.reset(seed=0)
    flags = []
    for _ in range(3):
        _, reward, terminated, truncated, info = env.step(free_first(info))
        flags.append((reward, terminated, truncated))
    assert flags == [(0.0, False, False), (0.0, False, False), (0.0, False, True)]
    assert info["decisions"] == 3 and not env.game_state.is_terminal()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(free_first(info))
    _, info = env.reset(seed=0)
    assert info["decisions"] == 0
    assert FridayEnv().max_steps == 2000


# -- rendering ------------------------------------------------------------------------------------------


def test_render_ansi_is_the_core_text():
    env = FridayEnv(render_mode="ansi")
    _, info = env.reset(seed=2)
    text = env.render()
    assert isinstance(text, str) and text == env.game_state.to_text()
    assert "life 20  step green  level 1" in text and "to do: choose a hazard" in text
    env.step(0)
    assert env.render() != text and "fighting: " in env.render()
    assert FridayEnv().render() is None


def test_render_rgb_array_shape_and_changes():
    env = FridayEnv(render_mode="rgb_array")
    _, info = env.reset(seed=2)
    img = env.render()
    assert img.dtype == np.uint8 and img.shape == (render.IMAGE_H, render.IMAGE_W, 3) == (288, 444, 3)
    assert img.shape[0] % 2 == 0 and img.shape[1] % 2 == 0  # video encoders want even sizes
    assert np.array_equal(img, render.state_image(env.game_state))  # deterministic
    env.step(0)
    env.step(DRAW_FREE)
    after = env.render()
    assert after.shape == img.shape and not np.array_equal(after, img)


def test_state_image_draws_life_step_and_the_left_row():
    # Fight the first hazard and draw one free card:
    #   life 20 of 22 segments  [green framed] yellow red black
    #   left row: one card, coloured by its kind; right row empty
    rng = np.random.default_rng(4)
    state = sample_chance(FridayGame().new_initial_state(), rng)
    state = sample_chance(sample_chance(state.child(0), rng).child(DRAW_FREE), rng)
    img = render.state_image(state)
    mid = render.STATUS_H // 2
    segment = lambda i: img[mid, render.GAP + i * render.LIFE_SEGMENT_W + 3].tolist()  # noqa: E731
    assert [segment(i) for i in range(22)] == [render.LIFE_COLOUR.tolist()] * 20 + [render.LIFE_EMPTY.tolist()] * 2
    square = render.STATUS_H - 2 * render.GAP
    green_x = render.IMAGE_W - 4 * (square + render.GAP)
    assert img[render.GAP + 1, green_x + 1].tolist() == render.INK.tolist()  # the current step is framed
    assert img[mid, green_x + square // 2].tolist() == render.STEP_COLOURS[0].tolist()
    ((_, card, flags),) = state.table
    assert "L" in flags
    y0 = render.STATUS_H + render.FIGHT_H + render.GAP
    x0 = render.SIDE_W + render.GAP
    kind = render.CARDS[card].kind
    assert img[y0 + 2, x0 + 2].tolist() == render.KIND_COLOURS[kind].tolist()
    right = img[y0 + render.ROW_H : y0 + render.ROW_H + render.CARD_H, x0 : x0 + render.CARD_W]
    assert (right == render.TABLE_COLOUR).all()  # nothing paid for yet


# -- Stable-Baselines3 ----------------------------------------------------------------------------------


def test_maskable_ppo_smoke():
    model = maskable_ppo(FridayEnv(max_steps=200), n_steps=128, total_timesteps=256)
    env = FridayEnv()
    obs, info = env.reset(seed=0)
    for _ in range(20):
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        assert env.action_masks()[int(action)]
        obs, _, terminated, truncated, info = env.step(int(action))
        if terminated or truncated:
            break


# -- tablegym play friday ----------------------------------------------------------------------------------


def test_friday_is_a_registered_game():
    assert GAMES["friday"].searcher == "bestfirst"
    assert make_game("friday", level="2", abilities="after_free").spec.options["level"] == 2
    with pytest.raises(ValueError, match="unknown option 'n' for game 'friday'"):
        make_game("friday", n=3)


def test_play_friday_as_a_person_until_the_game_ends(monkeypatch, capsys):
    # A bad word, then ids and names in a cycle: one of them is legal in every position this
    # play reaches (a hazard choice, a fight, the destroy choice after a loss, the pirates).
    moves = itertools.cycle(["0", "draw free", "end fight", "done", "10", "concede"])
    scripted_input(monkeypatch, itertools.chain(["banana"], moves))
    assert main(["play", "friday", "--level", "2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "FridayGame(level=2, abilities='any_time'" in out and ": you play" in out
    assert (
        "legal moves (type an action's number or its name; 'q' quits):\n    0  fight first hazard\n    1  fight second hazard"
        in out
    )
    assert "illegal action 'banana' (not a legal action while: choose a hazard); legal actions are [0, 1]; try again" in out
    assert "life 20  step green  level 2" in out and "    3  draw free" in out
    lines = out.strip().splitlines()
    assert lines[-2].startswith("game over: LOST, score ")
    score = lines[-2].split()[-1]
    assert lines[-1].startswith(f"final score {score} after ")  # the game's score, not the -1 result


def test_play_friday_quit_and_same_seed_same_game(monkeypatch, capsys):
    outs = []
    for _ in range(2):
        scripted_input(monkeypatch, ["1", "3", "3", "q"])
        assert main(["play", "friday", "--seed", "9"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    assert "FridayGame(level=1" in outs[0] and outs[0].strip().endswith("game abandoned")


@pytest.mark.parametrize(
    "argv, words",
    [
        (["play", "friday", "--level", "7"], "Friday level must be 1, 2, 3 or 4, got 7"),
        (["play", "friday", "--option", "abilities=never"], "'abilities' must be one of"),
        (["play", "friday", "--seat", "1"], "single-player game"),
        (["play", "trilobite", "--level", "2"], "unknown option 'level' for game 'trilobite'"),
        (["play", "friday", "--level", "2", "--option", "level=3"], "given twice"),
    ],
)
def test_play_friday_bad_arguments(capsys, argv, words):
    assert_one_error_line(argv, words, capsys)
