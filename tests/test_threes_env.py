"""The Threes Gymnasium env, its drawing, its registration, and ``tablegym play threes``."""

from __future__ import annotations

import itertools

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import tablegym.envs
from tablegym.envs.core import IllegalActionError
from tablegym.envs.render import draw_threes, text_mask
from tablegym.envs.threes.env import ThreesEnv
from tablegym.experiments.cli import main
from tests.cli_errors import assert_one_error_line
from tests.episodes import random_episode
from tests.smoke import maskable_ppo, scripted_input


def blocked_position(env: ThreesEnv, seed: int = 0) -> int:
    """Reset with ``seed``, then swipe the first legal way until some swipe is illegal; return it."""
    _, info = env.reset(seed=seed)
    while info["action_mask"].all():
        _, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert not done  # a swipe is blocked long before the board is full
    return int(np.flatnonzero(info["action_mask"] == 0)[0])


# -- Gymnasium API ------------------------------------------------------------------------------


@pytest.mark.filterwarnings("error")  # a checker warning is a failure
@pytest.mark.parametrize(
    "kwargs", [{}, {"hint": "candidates", "render_mode": "rgb_array"}, {"render_mode": "ansi", "max_moves": 5}]
)
def test_check_env(kwargs):
    check_env(gymnasium.make("tablegym/Threes-v0", **kwargs).unwrapped)  # also checks every render mode


def test_make_through_the_registry():
    env = gymnasium.make("tablegym.envs:tablegym/Threes-v0")
    assert env.observation_space.shape == (25,) and env.observation_space.dtype == np.float32
    assert env.action_space.n == 4
    assert "tablegym/Threes-v0" in tablegym.envs.SINGLE_AGENT_ENV_IDS
    env = gymnasium.make("tablegym/Threes-v0", hint="candidates", max_moves=3)
    assert env.unwrapped.game.spec.options == {"hint": "candidates"}
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space
    assert set(info) == {"score", "highest", "moves", "action_mask"}


def test_bad_arguments_are_refused():
    for kwargs, words in [
        ({"hint": "x"}, "hint"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"max_moves": 0}, "max_moves"),
        ({"render_mode": "human"}, "render_mode"),
    ]:
        with pytest.raises(ValueError, match=words):
            ThreesEnv(**kwargs)


def test_starting_position_is_nine_cards_and_a_hint():
    env = ThreesEnv()
    obs, info = env.reset(seed=3)
    state = env.game_state
    assert (obs[:16] > 0).sum() == 9 and obs[16:20].sum() == 1  # nine cards, one hint
    assert obs[20:23].sum() == 2  # 12 cards - 9 dealt - the hinted one
    assert np.array_equal(obs, state.observation())
    assert info["moves"] == 0 and info["score"] == state.score and info["highest"] == state.highest


# -- seeding, rewards, termination --------------------------------------------------------------


def test_seeded_episodes_repeat():
    a = random_episode(ThreesEnv(), seed=11)
    b = random_episode(ThreesEnv(), seed=11)
    c = random_episode(ThreesEnv(), seed=12)
    assert a == b
    assert a != c


def test_return_equals_final_score_and_rewards_are_score_increases():
    env = ThreesEnv()
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        total, done, score = 0.0, False, 0
        while not done:
            action = int(np.flatnonzero(info["action_mask"])[0])
            obs, reward, done, truncated, info = env.step(action)
            assert reward >= 0 and not truncated
            assert total == 0 or reward == info["score"] - score  # after step 1: exactly the increase
            total += reward
            score = info["score"]
        assert total == info["score"] == env.game_state.score
        assert env.game_state.is_terminal()
        assert not info["action_mask"].any() and not env.action_masks().any()
        assert obs[:16].min() > 0  # game over: the board is full
        with pytest.raises(RuntimeError, match="reset"):
            env.step(0)


def test_max_moves_truncates():
    env = ThreesEnv(max_moves=3)
    _, info = env.reset(seed=0)
    flags = []
    for _ in range(3):
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        flags.append((terminated, truncated))
    assert flags == [(False, False), (False, False), (False, True)]
    assert info["moves"] == 3


# -- masks and illegal swipes --------------------------------------------------------------------


def test_mask_agrees_with_the_legal_swipes():
    env = ThreesEnv()
    rng = np.random.default_rng(5)
    _, info = env.reset(seed=5)
    done = False
    while not done:
        legal = env.game_state.legal_actions()
        assert info["action_mask"].dtype == np.int8
        assert np.flatnonzero(info["action_mask"]).tolist() == legal
        assert np.flatnonzero(env.action_masks()).tolist() == legal and env.action_masks().dtype == bool
        _, _, done, _, info = env.step(int(rng.choice(legal)))


def test_illegal_swipe_raises_value_error_naming_it_and_the_legal_ones():
    env = ThreesEnv()
    blocked = blocked_position(env)
    legal = env.game_state.legal_actions()
    names = ["left", "right", "up", "down"]
    with pytest.raises(IllegalActionError) as err:
        env.step(blocked)
    assert isinstance(err.value, ValueError)
    text = str(err.value)
    assert f"illegal action {blocked}" in text and f"legal actions are {legal}" in text
    assert names[blocked] in text and all(names[a] in text for a in legal)
    for bad in (7, -1, "left", 1.5, None):
        with pytest.raises(IllegalActionError, match=f"illegal action {bad!r}"):
            env.step(bad)
    # The env is unharmed: a legal swipe still works, numpy integers too.
    env.step(np.int64(legal[0]))


def test_illegal_swipe_with_penalty_ends_the_episode_with_reward_zero():
    env = ThreesEnv(illegal_action="penalty")
    blocked = blocked_position(env)
    before = env.game_state.observation()
    obs, reward, terminated, truncated, info = env.step(blocked)
    assert (reward, terminated, truncated, info["illegal_action"]) == (0.0, True, False, True)
    assert np.array_equal(obs, before) and not info["action_mask"].any()
    with pytest.raises(RuntimeError):
        env.step(0)


# -- rendering ------------------------------------------------------------------------------------


def test_render_ansi_shows_board_hint_and_score():
    env = ThreesEnv(render_mode="ansi")
    _, info = env.reset(seed=2)
    text = env.render()
    assert text == env.game_state.to_text()
    assert f"next: {env.game_state.hint}" in text and f"score: {info['score']}" in text
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env.render() != text


def test_render_rgb_array_changes_after_a_move():
    env = ThreesEnv(render_mode="rgb_array")
    _, info = env.reset(seed=2)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] % 2 == 0 and img.shape[1] % 2 == 0  # video encoders want even sizes
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    after = env.render()
    assert after.shape == img.shape and not np.array_equal(after, img)
    assert ThreesEnv().render() is None


def test_draw_threes_colours_and_values():
    #   1    2    3    .
    #   .    .    .    .
    #   .    .    .    .
    #   .    .    . 12288
    values = np.zeros((4, 4), dtype=np.int64)
    values[0, :3] = [1, 2, 3]
    values[3, 3] = 12288
    cell, gap = 48, 6
    img = draw_threes(values, "+", cell=cell, gap=gap)
    strip = cell + 2 * gap
    corner = lambda r, c: img[strip + gap + r * (cell + gap) + 1, gap + c * (cell + gap) + 1]  # noqa: E731
    assert corner(0, 0).tolist() == [102, 204, 255]  # 1: blue
    assert corner(0, 1).tolist() == [255, 102, 128]  # 2: red
    assert corner(0, 2).tolist() == corner(3, 3).tolist() == [255, 255, 255]  # 3 and up: white

    # Different values give different ink inside equal white cards.
    def face(r, c):
        y, x = strip + gap + r * (cell + gap), gap + c * (cell + gap)
        return img[y : y + cell, x : x + cell]

    assert not np.array_equal(face(0, 2), face(3, 3))
    assert (face(3, 3) != 255).any()  # five digits still drawn
    # The hint strip shows the hint: "1" and "+" differ, and so do candidate windows.
    strips = {
        h: draw_threes(values, h, cell=cell, gap=gap)[:strip].tobytes() for h in ("1", "2", "3", "+", "6/12/24", "12/24/48")
    }
    assert len(set(strips.values())) == 6
    assert text_mask("12").shape == (5, 7) and text_mask("12", 3).shape == (15, 21)
    with pytest.raises(ValueError, match="4 x 4"):
        draw_threes(np.zeros((3, 3)), "1")


# -- Stable-Baselines3 ----------------------------------------------------------------------------


def test_maskable_ppo_smoke():
    model = maskable_ppo(ThreesEnv(max_moves=200), n_steps=64, total_timesteps=128)
    env = ThreesEnv()
    obs, info = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]


# -- tablegym play threes --------------------------------------------------------------------------


def test_play_threes_as_a_person_until_the_game_ends(monkeypatch, capsys):
    # A bad word, then left, an arrow key (right), up, down, ... until no swipe is legal.
    swipes = itertools.cycle(["l", "\x1b[C", "up", "d", "left", "r", "\x1b[A", "down"])
    scripted_input(monkeypatch, itertools.chain(["banana"], swipes))
    assert main(["play", "threes", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "ThreesGame(hint='+'): you play" in out
    assert "illegal action 'banana' (swipe l, r, u or d); legal actions are" in out
    assert "legal moves: left, right, up, down" in out and "arrow key" in out
    assert "next: " in out and "score: " in out
    assert "no card can move that way" in out  # the cycle runs into a blocked swipe and is re-asked
    lines = out.strip().splitlines()
    assert lines[-2] == "game over" and lines[-1].startswith("final score ")


def test_play_threes_quit_with_candidates_hint(monkeypatch, capsys):
    scripted_input(monkeypatch, ["q"])
    assert main(["play", "threes", "--option", "hint=candidates", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "ThreesGame(hint='candidates')" in out and "game abandoned" in out


def test_play_threes_watching_random_finishes_a_game(capsys):
    assert main(["play", "threes", "--agent", "random", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "watching 'random'" in out and "random plays " in out
    lines = out.strip().splitlines()
    assert lines[-2] == "game over" and lines[-1].startswith("final score ")
    assert main(["play", "threes", "--agent", "random", "--seed", "3", "--quiet"]) == 0
    quiet = capsys.readouterr().out
    assert "random plays" not in quiet and quiet.strip().splitlines()[-1] == lines[-1]  # same seed, same game


def test_play_threes_with_the_shipped_network(capsys):
    # the shipped n-tuple checkpoint inside the 2-swipe expectimax: 200 recorded games scored
    # 9,402 at the worst and 88,572 at the median; a random player's best of 1,000 scored 1,281
    assert main(["play", "threes", "--agent", "expectimax", "--eval", "learned", "--seed", "3", "--quiet"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("final score ") and float(last.split()[2]) > 3000
    with pytest.raises(SystemExit):
        main(["play", "threes", "--agent", "expectimax", "--eval", "learned:nope.pt"])
    assert "checkpoint 'nope.pt' does not exist" in capsys.readouterr().err


def test_play_threes_same_seed_same_game(monkeypatch, capsys):
    outs = []
    for _ in range(2):
        scripted_input(monkeypatch, ["l", "r", "u", "d", "q"])
        main(["play", "threes", "--seed", "9"])
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["play", "threes", "--agent", "nonsense"], "unknown agent 'nonsense' for threes"),
        (["play", "threes", "--option", "hint=x"], "hint must be one of"),
        (["play", "threes", "--seat", "1"], "single-player game"),
        (["play", "threes", "--depth", "2"], "give --agent too"),
        (["play", "threes", "--quiet"], "give --agent too"),
        (["play", "trilobite-tiny", "--quiet"], "single-player"),
    ],
)
def test_play_threes_bad_arguments(capsys, argv, words):
    assert_one_error_line(argv, words, capsys)
