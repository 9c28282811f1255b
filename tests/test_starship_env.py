"""The PCGRL starship env: Gymnasium's checker, the three representations, edits of multi-tile
parts, rewards as potential differences, starts, episode ends, rendering, a MaskablePPO run."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import tablegym.envs
from tablegym.envs.core import IllegalActionError
from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.env import BRUSHES, NUM_BRUSHES, OBS_CHANNELS, Brush, StarshipEnv, apply_edit, observe
from tablegym.envs.starship.quality import quality, validate
from tablegym.envs.starship.ship import (
    ARMOR,
    BACKWARD,
    BIG,
    COCKPIT,
    CORRIDOR,
    EMPTY,
    FORWARD,
    REACTOR,
    THRUSTER,
    WEAPON,
    Ship,
)

SMALL = dict(size=16)


def make(**kwargs) -> StarshipEnv:
    return StarshipEnv(**{**SMALL, **kwargs})


def random_trace(env: StarshipEnv, seed: int, steps: int = 40) -> list[tuple]:
    rng = np.random.default_rng(seed + 1000)
    obs, info = env.reset(seed=seed)
    trace = [obs.tobytes()]
    for _ in range(steps):
        if isinstance(env.action_space, gymnasium.spaces.MultiDiscrete):
            action = np.array([rng.integers(n) for n in env.action_space.nvec])
        else:
            action = int(rng.integers(env.action_space.n))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs.tobytes(), reward, terminated, truncated, info["quality"], info["changes"]))
        if terminated or truncated:
            break
    return trace


# -- Gymnasium API ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("error")  # a checker warning is a failure
@pytest.mark.parametrize(
    "kwargs",
    [
        {"representation": "narrow"},
        {"representation": "turtle", "start": "empty", "render_mode": "ansi"},
        {"representation": "wide", "start": "random", "render_mode": "rgb_array"},
    ],
)
def test_check_env(kwargs):
    check_env(gymnasium.make("tablegym/Starship-v0", **SMALL, **kwargs).unwrapped)  # also checks every render mode


def test_registered_as_a_single_agent_env():
    assert "tablegym/Starship-v0" in tablegym.envs.SINGLE_AGENT_ENV_IDS
    env = gymnasium.make("tablegym.envs:tablegym/Starship-v0")
    assert env.observation_space.shape == (OBS_CHANNELS, 32, 32) and env.action_space.n == 1 + NUM_BRUSHES
    assert make(representation="turtle").action_space.n == 4 + NUM_BRUSHES
    assert make(representation="wide").action_space.nvec.tolist() == [16, 16, NUM_BRUSHES]
    assert NUM_BRUSHES == 31 and str(BRUSHES[11]) == "small thruster facing forward"


@pytest.mark.parametrize("representation", ["narrow", "turtle", "wide"])
def test_seeded_runs_repeat(representation):
    a = random_trace(make(representation=representation), seed=3)
    b = random_trace(make(representation=representation), seed=3)
    c = random_trace(make(representation=representation), seed=4)
    assert a == b and a != c


def test_bad_arguments_and_actions():
    for kwargs, words in [
        ({"representation": "tall"}, "representation"),
        ({"start": "full"}, "start"),
        ({"render_mode": "human"}, "render_mode"),
        ({"partial_stages": 15}, "partial_stages"),
        ({"max_changes": 0}, "max_changes"),
        ({"generator": {"size": 8}}, "size"),
        ({"generator": {"wings": {}}}, "unknown pipeline option"),
    ]:
        with pytest.raises(ValueError, match=words):
            make(**kwargs)
    env = make()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"illegal action 32 \(narrow actions are 0..31\)"):
        env.step(32)
    with pytest.raises(IllegalActionError):
        env.step("1")
    env = make(representation="wide")
    env.reset(seed=0)
    for bad in ([16, 0, 0], [0, 0], (0, 0, 31), [0.5, 1, 1]):
        with pytest.raises(ValueError, match=r"a wide action is \(y, x, brush\)"):
            env.step(bad)
    assert env.action_masks().all() and env.action_masks().shape == (16 + 16 + 31,)


# -- representations ---------------------------------------------------------------------------


def test_narrow_visits_tiles_in_order():
    env = make()
    obs, info = env.reset(seed=0)
    assert info["cursor"] == (0, 0) and obs[-1, 0, 0] == 1 and obs[-1].sum() == 1
    _, _, _, _, info = env.step(1 + 2)  # armor at (0, 0)
    assert env.ship.tiles[0, 0] == ARMOR and info["cursor"] == (0, 1)
    for _ in range(16 * 16 - 1):
        _, _, _, _, info = env.step(0)
    assert info["cursor"] == (0, 0)  # wrapped round


def test_turtle_moves_and_writes():
    env = make(representation="turtle")
    _, info = env.reset(seed=0)
    y, x = info["cursor"]
    env.step(0)  # forward: +x
    env.step(1)  # starboard: +y
    _, _, _, _, info = env.step(4 + 2)  # armor
    assert info["cursor"] == (min(y + 1, 15), min(x + 1, 15)) and env.ship.tiles[info["cursor"]] == ARMOR
    for _ in range(20):
        _, _, _, _, info = env.step(3)  # port, to the top edge
    assert info["cursor"][0] == 0


def test_wide_writes_where_it_is_told():
    env = make(representation="wide", start="empty")
    obs, _ = env.reset(seed=0)
    assert obs[-1].sum() == 0
    b = BRUSHES.index(Brush(THRUSTER, BIG, BACKWARD))
    env.step(np.array([0, 14, b]))
    ship = env.ship
    assert ship.tiles[0:2, 14:16].tolist() == [[THRUSTER] * 2] * 2
    env.step(np.array([15, 15, b]))  # the 2x2 footprint would leave the grid: nothing happens
    assert env.ship == ship


# -- edits of multi-tile parts ------------------------------------------------------------------


def test_apply_edit_stamps_anchors_and_erases_whole_parts():
    ship = Ship.empty(6)
    assert apply_edit(ship, Brush(COCKPIT), 1, 1)
    assert not apply_edit(ship, Brush(REACTOR), 2, 2)  # would cover the cockpit
    assert not apply_edit(ship, Brush(REACTOR), 5, 5)  # would leave the grid
    assert apply_edit(ship, Brush(REACTOR), 3, 3) and ship.tiles[3:5, 3:5].tolist() == [[REACTOR] * 2] * 2
    assert apply_edit(ship, Brush(ARMOR), 2, 2)  # a tile on the cockpit's corner takes the cockpit out
    assert ship.tiles[1:3, 1:3].tolist() == [[CORRIDOR, CORRIDOR], [CORRIDOR, ARMOR]]
    assert [p.kind for p in ship.part_list()] == [REACTOR] and ship.part[3, 3] == 0
    assert not apply_edit(ship, Brush(ARMOR), 2, 2)  # the same tile again: no change
    assert apply_edit(ship, Brush(WEAPON, 0, FORWARD), 0, 0) and ship.parts[-1, 2] == FORWARD


# -- rewards ---------------------------------------------------------------------------------


@pytest.mark.parametrize("representation", ["narrow", "wide"])
def test_rewards_are_quality_and_validity_deltas(representation):
    env = make(representation=representation, validity_bonus=0.5)
    env.reset(seed=5)
    rng = np.random.default_rng(0)

    def phi() -> float:
        ship = env.ship
        return quality(ship).score + 0.5 * validate(ship).passed / 4

    start = phi()
    total = 0.0
    for _ in range(60):
        before = phi()
        if representation == "wide":
            action = np.array([rng.integers(16), rng.integers(16), rng.integers(NUM_BRUSHES)])
        else:
            action = int(rng.integers(1 + NUM_BRUSHES))
        _, reward, terminated, truncated, info = env.step(action)
        assert reward == pytest.approx(phi() - before)
        assert info["quality"] == pytest.approx(quality(env.ship).score) and info["valid"] == validate(env.ship).ok
        total += reward
        if terminated or truncated:
            break
    assert total == pytest.approx(phi() - start)


def test_starting_states():
    partial = make(partial_stages=4)
    partial.reset(seed=1)
    kinds = sorted(p.kind for p in partial.ship.part_list())
    assert kinds == [COCKPIT, REACTOR]
    empty = make(start="empty")
    _, info = empty.reset(seed=1)
    ship = empty.ship
    assert len(ship.parts) == 0 and set(np.unique(ship.tiles)) == {EMPTY, CORRIDOR} and not info["valid"]
    rand = make(start="random")
    rand.reset(seed=1)
    assert len(rand.ship.parts) > 0 and (rand.ship.tiles == ARMOR).any()
    obs, _ = rand.reset(seed=2)
    assert np.array_equal(obs, observe(rand.ship, (0, 0)))


# -- episode end -------------------------------------------------------------------------------


def interior_armor(ship: Ship) -> tuple[int, int]:
    """An armor tile away from the hull: turning it into corridor keeps the ship valid."""
    hull = K.hull_distance(ship.tiles)
    ys, xs = np.nonzero((ship.tiles == ARMOR) & (hull >= 3))
    return int(ys[0]), int(xs[0])


def test_terminates_when_valid_and_the_budget_is_spent():
    env = make(representation="wide", partial_stages=14, max_changes=2)
    _, info = env.reset(seed=0)
    assert info["valid"]
    y, x = interior_armor(env.ship)
    _, _, terminated, _, info = env.step(np.array([y, x, 1]))  # corridor
    assert info["changes"] == 1 and not terminated
    _, _, terminated, _, info = env.step(np.array([y, x, 1]))  # the same again: no change
    assert info["changes"] == 1 and not terminated
    _, _, terminated, truncated, info = env.step(np.array([y, x, 2]))  # armor back
    assert info["changes"] == 2 and info["valid"] and terminated and not truncated


def test_terminates_when_quality_stops_improving():
    env = make(partial_stages=14, patience=3)
    env.reset(seed=0)
    assert [env.step(0)[2] for _ in range(3)] == [False, False, True]


def test_an_invalid_ship_runs_to_truncation():
    env = make(start="empty", max_changes=1, patience=1, max_steps=5)
    env.reset(seed=0)
    ends = [env.step(1 + 2)[2:4] for _ in range(5)]
    assert ends == [(False, False)] * 4 + [(False, True)]


# -- rendering and learning ------------------------------------------------------------------


def test_render_modes():
    env = make(render_mode="rgb_array")
    env.reset(seed=0)
    before = env.render()
    assert before.dtype == np.uint8 and before.shape[0] >= 16 * 12 and before.shape[1] > 16 * 12
    env.step(1 + 3)  # a door at (0, 0)
    assert not np.array_equal(before, env.render())
    env = make(render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == env.ship.to_text()


def test_maskable_ppo_trains():
    from sb3_contrib import MaskablePPO

    env = make(size=12, max_steps=64)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=64)
    obs, info = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert info["action_mask"][int(action)] == 1


def test_the_compiled_scoring_and_observation_equal_the_python_ones():
    """One compiled pass gives the Python rules' checks (reasons word for word) and the quality
    terms (to 1e-9); the numba observation equals the numpy one; ``all_reached`` (the vector
    env's reachability rule) says what the rule says. States: random edits from every start,
    where most rules fail in every way (pieces, counts, reachability, thrusters)."""
    import math

    from tablegym.envs.starship.env import StarshipEnv, observe
    from tablegym.envs.starship.quality import quality, validate
    from tablegym.envs.starship.scoring import all_reached, scored
    from tablegym.experiments.starship.bench_env import reference_observe

    failed: set[str] = set()
    reached: set[bool] = set()
    for start in ("partial", "random", "empty"):
        env = StarshipEnv(start=start, representation="turtle")
        env.action_space.seed(1)
        for episode in range(2):
            env.reset(seed=episode)
            for _ in range(80):
                env.step(env.action_space.sample())
                ship = env.ship
                v, q = scored(ship)
                assert v == validate(ship)
                want = quality(ship)
                for k in want.raw:
                    assert (math.isnan(want.raw[k]) and math.isnan(q.raw[k])) or abs(want.raw[k] - q.raw[k]) < 1e-9
                    assert abs(want.terms[k] - q.terms[k]) < 1e-9
                assert abs(want.score - q.score) < 1e-9
                failed |= {c.rule for c in v.checks if not c.ok}
                H, W = ship.tiles.shape
                walk = (np.empty((H, W), np.int32), np.empty(H * W, np.int64), np.empty(H * W, np.int64))
                ok = all_reached(ship.tiles, ship.parts, np.zeros(4, np.int64), *walk)
                assert ok == next(c.ok for c in v.checks if c.rule == "reachable")
                reached.add(ok)
                cursor = env.unwrapped._cursor
                assert np.array_equal(observe(ship, cursor), reference_observe(ship, cursor))
                assert np.array_equal(observe(ship, None), reference_observe(ship, None))
    assert failed == {"connected", "cockpit_and_reactor", "reachable", "backward_thruster"}
    assert reached == {True, False}


@pytest.mark.parametrize("representation", ["narrow", "turtle"])
def test_masks_allow_exactly_the_writes_that_change_the_ship_and_can_lead_to_a_valid_one(representation):
    from tablegym.envs.starship.env import StarshipEnv

    env = StarshipEnv(representation=representation, start="random", masks=True)
    env.reset(seed=3)
    first = 1 if representation == "narrow" else 4
    rng = np.random.default_rng(0)
    checked = forbidden_parts = 0
    for _ in range(60):
        mask = env.action_masks()
        assert mask[:first].all()
        kinds = env.ship.parts[:, 0]
        for b, brush in enumerate(BRUSHES):
            ship = env.ship
            changed = apply_edit(ship, brush, *env.unwrapped._cursor)
            second = brush.kind in (COCKPIT, REACTOR) and (kinds == brush.kind).any()
            assert mask[first + b] == (changed and not second)
            forbidden_parts += bool(second and changed)
            checked += 1
        legal = np.flatnonzero(mask)
        env.step(int(rng.choice(legal)))
    assert checked == 60 * NUM_BRUSHES and forbidden_parts > 0


def test_the_gated_reward_pays_quality_only_for_a_valid_ship():
    from tablegym.envs.starship.env import StarshipEnv

    for start in ("random", "partial"):
        env = StarshipEnv(start=start, reward="gated")
        env.reset(seed=1)
        rules = env.validity.passed / 4
        assert env.potential() == pytest.approx(rules + (env.quality.score if env.validity.ok else 0.0))
        assert not env.validity.ok or env.potential() > rules
    with pytest.raises(ValueError, match="reward must be one of"):
        StarshipEnv(reward="shaped")


@pytest.mark.parametrize("representation", ["narrow", "turtle"])
def test_build_masks_allow_exactly_the_writes_that_keep_one_ship_with_its_cockpit_and_reactor(representation):
    """From the generator's one-piece start, a "build" write is allowed iff it changes the ship,
    keeps its one cockpit and one reactor where they are, empties no tile and leaves the ship in
    one piece (checked by making every write on a copy); a walk of allowed writes keeps all that."""
    env = StarshipEnv(representation=representation, masks="build")
    env.reset(seed=5)
    first = 1 if representation == "narrow" else 4
    rng = np.random.default_rng(1)

    def fixed(ship):
        return sorted(tuple(int(v) for v in row) for row in ship.parts if row[0] in (COCKPIT, REACTOR))

    allowed = refused = 0
    for _ in range(400):  # narrow: rows 0-12 of the 32 x 32 grid, into the ship
        mask = env.action_masks()
        assert mask[:first].all()
        before = env.ship
        for b, brush in enumerate(BRUSHES):
            ship = before.copy()
            changed = apply_edit(ship, brush, *env.unwrapped._cursor)
            keeps = (
                fixed(ship) == fixed(before)
                and not ((ship.tiles == EMPTY) & (before.tiles != EMPTY)).any()
                and K.components(ship.tiles != EMPTY)[1] == 1
            )
            assert mask[first + b] == (changed and keeps), (brush, env.unwrapped._cursor)
            allowed += bool(mask[first + b])
            refused += bool(changed and not keeps)
        env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.validity.checks[0].ok and env.validity.checks[1].ok
    assert allowed > 0 and refused > 0
    with pytest.raises(ValueError, match="masks must be one of"):
        StarshipEnv(masks="strict")


@pytest.mark.parametrize("representation", ["narrow", "turtle"])
def test_safe_masks_are_build_masks_without_the_writes_that_seal_a_part_in(representation):
    """A "safe" write is a "build" write after which every part and door is still reachable from
    the cockpit (each write made on a copy and the rule checked by quality.check_reachable); a walk
    of safe writes from the generator's start keeps three of the four validity rules."""
    from tablegym.envs.starship.quality import check_reachable

    safe = StarshipEnv(representation=representation, masks="safe")
    build = StarshipEnv(representation=representation, masks="build")
    first = 1 if representation == "narrow" else 4
    rng = np.random.default_rng(2)
    sealing = 0
    for seed in (5, 6):
        safe.reset(seed=seed)
        build.reset(seed=seed)
        for _ in range(300):
            build._ship, build._cursor = safe.ship, safe._cursor
            build._update_mask()
            mask, allowed = safe.action_masks(), build.action_masks()
            for b, brush in enumerate(BRUSHES):
                if not allowed[first + b]:
                    assert not mask[first + b]
                    continue
                ship = safe.ship
                apply_edit(ship, brush, *safe._cursor)
                keeps = check_reachable(ship).ok
                assert mask[first + b] == keeps, (brush, safe._cursor)
                sealing += not keeps
            safe.step(int(rng.choice(np.flatnonzero(mask))))
            assert [c.ok for c in safe.validity.checks][:3] == [True, True, True]
    assert sealing > 0
