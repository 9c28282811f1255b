"""Starship's compiled vector envs (envs/starship/vector.py) against the single envs they batch.

tests/test_vector_env.py runs both Starship ids step for step against ``SyncVectorEnv`` on short
episodes; here the options it does not reach: the default 32 x 32 generator start, turtle, the
random and empty starts, the masks, the gated reward, terminations of valid ships, the targets'
caps and given targets, and the compiled generator start against ``StarshipEnv.reset``.
"""

from __future__ import annotations

import doctest

import gymnasium
import numpy as np
import pytest

import tablegym.envs  # noqa: F401  (registers the ids)
from tablegym.envs.core import IllegalActionError
from tablegym.envs.starship import kept, vector
from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.env import StarshipEnv
from tablegym.envs.starship.start_ship import generate_start
from tablegym.envs.starship.vector import StarshipVectorEnv
from tests.test_vector_env import _play_against_sync, _same_step


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"size": 10, "representation": "turtle", "start": "random", "max_steps": 30},
        {"size": 12, "start": "empty", "masks": "build", "max_steps": 40},
        {"size": 12, "masks": "repairable", "max_steps": 40},
        {"size": 10, "masks": "safe", "reward": "gated", "max_changes": 6, "patience": 10, "max_steps": 80},
        {
            "size": 12,
            "partial_stages": 4,
            "validity_bonus": 0.5,
            "max_steps": 40,
            "generator": {"cockpit": {"strategy": "centralized"}, "reactor": {"strategy": "random"}},
        },
    ],
    ids=["default-32x32", "turtle-random", "empty-build", "repairable", "safe-gated-terminations", "stage4-strategies"],
)
def test_starship_boards_match_sync_vector_env(kwargs: dict) -> None:
    steps = 30 if not kwargs else 150
    ended = _play_against_sync("tablegym/Starship-v0", kwargs, num_envs=3, steps=steps, seed=7)
    assert kwargs == {} or ended >= 3


def test_valid_ships_terminate_as_the_single_env_says() -> None:
    """With the "safe" mask random edits make valid ships, which end by the change budget or
    patience (terminated, not truncated)."""
    env = gymnasium.make_vec("tablegym/Starship-v0", num_envs=3, size=10, masks="safe", max_changes=6, patience=10, max_steps=80)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    terminated = 0
    for _ in range(250):
        masks = env.unwrapped.action_masks()
        _, _, term, trunc, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        assert not (term & trunc).any()
        assert info["valid"][term].all()
        terminated += int(term.sum())
    assert terminated >= 3


@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": 12, "max_steps": 40, "target_weight": 0.5},
        {"size": 12, "max_steps": 50, "masks": "build", "caps": True},
    ],
    ids=["weighted", "caps"],
)
def test_targets_boards_match_sync_vector_env(kwargs: dict) -> None:
    ended = _play_against_sync("tablegym/StarshipTargets-v0", kwargs, num_envs=3, steps=150, seed=5)
    assert ended >= 3


def test_given_targets_reach_every_board() -> None:
    kwargs = {"size": 12, "max_steps": 20}
    vec = gymnasium.make_vec("tablegym/StarshipTargets-v0", num_envs=2, **kwargs)
    sync = gymnasium.make_vec("tablegym/StarshipTargets-v0", num_envs=2, vectorization_mode="sync", **kwargs)
    options = {"targets": {"thrust_points": 20, "forward_firepower": 3}}
    vec_out, sync_out = vec.reset(seed=1, options=options), sync.reset(seed=1, options=options)
    _same_step(vec_out, sync_out, "reset")
    assert vec_out[1]["targets"]["thrust_points"].tolist() == [20.0, 20.0]
    with pytest.raises(ValueError, match="target thrust_points must be in 8..40"):
        vec.reset(options={"targets": {"thrust_points": 99}})


@pytest.mark.parametrize(
    "start,stages,size,generator",
    [
        ("partial", 6, 32, {}),
        ("empty", 6, 32, {}),
        ("random", 6, 32, {}),
        ("partial", 6, 9, {"shape": {"min_modules": 2, "max_modules": 5}}),
        (
            "partial",
            5,
            20,
            {
                "cockpit": {"strategy": "centralized"},
                "reactor": {"strategy": "random"},
                "cockpit_armor": {"layers": 2},
                "fill_gaps": False,
            },
        ),
    ],
)
def test_compiled_start_is_the_generators(start: str, stages: int, size: int, generator: dict) -> None:
    """The start ship dealt in numba is the one ``StarshipEnv.reset`` builds with the stages of
    stages.py, tile for tile and part for part, seed by seed."""
    env = StarshipEnv(start=start, partial_stages=stages, size=size, generator=generator)
    for seed in range(25):
        env.reset(seed=seed)
        assert generate_start(env.pipeline, seed, start=start, partial_stages=stages) == env.ship, f"seed {seed}"


def test_unbatched_options_are_refused() -> None:
    with pytest.raises(ValueError, match="'narrow' or 'turtle'"):
        gymnasium.make_vec("tablegym/Starship-v0", num_envs=2, representation="wide")
    with pytest.raises(ValueError, match="stages 1-6 only"):
        gymnasium.make_vec("tablegym/Starship-v0", num_envs=2, partial_stages=9)
    assert kept.fits(724, 724) and not kept.fits(725, 725)  # the keys' int32 against the largest grid's
    with pytest.raises(ValueError, match="grids up to 724 x 724"):
        gymnasium.make_vec("tablegym/Starship-v0", num_envs=1, size=725, start="empty")


def test_out_of_range_action_names_its_board() -> None:
    env = gymnasium.make_vec("tablegym/Starship-v0", num_envs=3, size=8)
    assert isinstance(env.unwrapped, StarshipVectorEnv)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="illegal action 32 on board 2"):
        env.step(np.array([0, 1, 32]))
    with pytest.raises(ValueError, match=r"actions must be an integer array of shape \(3,\)"):
        env.step(np.zeros(3))


def test_render_draws_each_ship() -> None:
    env = gymnasium.make_vec("tablegym/Starship-v0", num_envs=2, size=10, render_mode="ansi")
    env.reset(seed=4)
    texts = env.render()
    assert len(texts) == 2 and texts[0] == env.unwrapped.ship(0).to_text()
    single = StarshipEnv(size=10, render_mode="ansi")
    single.reset(seed=4)
    assert texts[0] == single.render()


def test_module_example_runs() -> None:
    assert doctest.testmod(vector).failed == 0


def test_a_partial_reset_deals_only_the_masked_boards() -> None:
    """``reset(options={"reset_mask": m})`` deals the ships of ``m`` again, from their streams as
    the single env's next reset would, and leaves the others as they were."""
    kwargs = {"size": 12, "max_steps": 50}
    vec = gymnasium.make_vec("tablegym/Starship-v0", num_envs=3, **kwargs)
    singles = [StarshipEnv(**kwargs) for _ in range(3)]
    vec.reset(seed=8)
    for i, env in enumerate(singles):
        env.reset(seed=8 + i)
    for action in (3, 1, 12):
        obs, *_ = vec.step(np.full(3, action))
        for env in singles:
            env.step(action)
    mask = np.array([False, True, False])
    after, info = vec.reset(options={"reset_mask": mask})
    single_obs, _ = singles[1].reset()
    np.testing.assert_array_equal(after[1], single_obs)
    for i in (0, 2):
        assert vec.unwrapped.ship(i) == singles[i].ship and np.array_equal(after[i], obs[i])
    assert info["steps"].tolist() == [3, 0, 3]
    with pytest.raises(ValueError, match="first reset"):
        gymnasium.make_vec("tablegym/Starship-v0", num_envs=3, **kwargs).reset(options={"reset_mask": mask})


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("tablegym/Starship-v0", {"size": 16}),
        ("tablegym/Starship-v0", {"size": 16, "representation": "turtle", "masks": "build"}),
        ("tablegym/StarshipTargets-v0", {"size": 16}),
    ],
)
def test_kept_walks_give_a_full_score_after_every_step(env_id: str, kwargs: dict) -> None:
    """A board keeps its piece count, hull distances and crew term until an edit changes what
    they read: after every step of random edits, its quality and terms are a fresh
    ``scoring.score`` of its ship, to the bit."""
    from tablegym.envs.starship.scoring import score

    envs = gymnasium.make_vec(env_id, num_envs=16, vectorization_mode="vector_entry_point", **kwargs)
    envs.reset(seed=5)
    rng = np.random.default_rng(5)
    changed = 0
    for _ in range(300):
        before = envs._iv[:, vector.I_CHANGES].copy()
        envs.step(np.array([rng.choice(np.flatnonzero(m)) for m in envs.action_masks()]))
        changed += int((envs._iv[:, vector.I_CHANGES] != before).sum())
        for i in range(16):
            _, _, terms, total, *_ = score(envs._tiles[i], envs._parts[i, : envs._iv[i, vector.I_NPARTS]])
            assert total == envs._fv[i, vector.F_QUALITY]
            assert np.array_equal(terms, envs._terms[i], equal_nan=True)
            fresh = np.zeros_like(envs._keys[i])
            kept.hull_all(envs._tiles[i], fresh)  # the kept hull keys and piece count are the grid's
            assert np.array_equal(fresh, envs._keys[i])
            assert envs._iv[i, vector.I_PIECES] == K.count_pieces(envs._tiles[i])
            assert envs._iv[i, vector.I_HULL_MAX] == K.hull_distance(envs._tiles[i]).max()
    assert changed > 1000  # the edits did change the ships


def test_the_crew_walks_stand_after_an_edit_of_a_tile_they_did_not_read() -> None:
    """``scoring._steps_to`` marks where its walks went: every tile that ``walks_read`` calls
    unread can turn from corridor to armour or back and each pair's steps stay as they were (so
    the vector env keeps the sum); some read tiles do change them."""
    from tablegym.envs.starship.scoring import crew_total, seen_size, walks_read
    from tablegym.envs.starship.ship import ARMOR, CORRIDOR

    envs = gymnasium.make_vec("tablegym/Starship-v0", num_envs=8, vectorization_mode="vector_entry_point", size=16)
    envs.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(150):
        envs.step(np.array([rng.choice(np.flatnonzero(m)) for m in envs.action_masks()]))
    unread = changed = 0
    for i in range(8):
        tiles, parts = envs._tiles[i], envs._parts[i, : envs._iv[i, vector.I_NPARTS]]
        H, W = tiles.shape
        seen = np.zeros(seen_size(H, W), np.uint8)
        total = crew_total(tiles, parts, seen)
        assert total == crew_total(tiles, parts, np.zeros(0, np.uint8)) == envs._fv[i, vector.F_CREW]
        for y, x in zip(*np.nonzero((tiles == CORRIDOR) | (tiles == ARMOR))):
            edited = tiles.copy()
            edited[y, x] = ARMOR if tiles[y, x] == CORRIDOR else CORRIDOR
            after = crew_total(edited, parts, np.zeros(0, np.uint8))
            if walks_read(seen, W, y, x):
                changed += after != total
            else:
                unread += 1
                assert after == total, (i, y, x)
    assert unread > 50 and changed > 50
