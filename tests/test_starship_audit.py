"""The starship audit (experiments/starship/audit.py) and the two-sample test (experiments/starship/two_sample.py).

Ships are drawn in the ship's own text (``Ship.from_text``): '.' empty, ':' corridor, '#' armor,
'+' door, C cockpit, R reactor, thrusters as arrows in their exhaust direction (``<`` pushes the
ship forward), weapons F/S/B/P by the side they fire to, A ammo, E power, Q quarters, K bunk
room. The ship faces +x (right); row 0 is the top.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tablegym.envs.starship.pipeline import Pipeline
from tablegym.envs.starship.ship import CORRIDOR, NUM_TILE_KINDS, THRUSTER, Ship
from tablegym.experiments.cli import main
from tablegym.experiments.starship import audit as A
from tablegym.experiments.starship import two_sample as T

BASE = """
. . . . . . . . . . . .
. # # # # # # # # # # .
. # # # # # # # # # # .
. < : : : : : : C C # .
. # R R # # # # C C F .
. # R R # # # # # # # .
. # # # # # # # # # # .
. . . . . . . . . . . .
"""
"""One corridor from a backward thruster to the cockpit, the reactor beside it, a weapon firing
forward at the bow: every corridor tile is needed (each cuts the ship's one path, or is a part's
only way in), so cockpit and reactor are wrapped and there is no open corridor."""

LOOP_LONG = """
. . . . . . . . . . . . . . .
. # # # # # # # # # # # # # .
. # : : : : : : : : : : : # .
. # : # # # # + # # # # : # .
. # : : : : : : : : : : : # .
. # # # # # # # # # # # # # .
. . . . . . . . . . . . . . .
"""
"""A corridor loop with a door in its middle wall: the way round the door is 12 steps (> 10)."""

LOOP_SHORT = """
. . . . . . . . . .
. # # # # # # # # .
. # : : : : : : # .
. # : # # + # : # .
. # : : : : : : # .
. # # # # # # # # .
. . . . . . . . . .
"""
"""The same with a short loop: the way round the door is 8 steps, so the door is not justified."""


def edit(text: str, *changes: tuple[int, int, str]) -> Ship:
    """``text`` with the character at each (y, x) replaced, as a ship."""
    rows = [row.split() for row in text.strip("\n").splitlines()]
    for y, x, ch in changes:
        rows[y][x] = ch
    return Ship.from_text("\n".join(" ".join(row) for row in rows))


def test_base_ship_passes_the_layout_rules():
    a = A.audit(Ship.from_text(BASE))
    assert set(a.stats) == set(A.STATISTICS) and set(a.rules) == set(A.RULES)
    for rule in (
        "cockpit_wrapped",
        "reactor_wrapped",
        "thrusters_outward",
        "weapons_outward",
        "weapons_farthest",
        "hull_armored",
        "corridors_needed",
        "doors_justified",
    ):
        assert a.rules[rule], rule
    assert a.stats["open_corridor"] == 0 and a.stats["weapon_reach"] == 1.0 and a.stats["hull_armor"] == 1.0
    # no ammo, power, crew, and 1 thruster point of 35..45: those rules fail
    assert not any(a.rules[r] for r in ("ammo_near_weapons", "power_near_mounts", "crew_rooms", "thruster_budget"))
    assert all(np.isfinite(a.vector()))


def test_a_weapon_facing_inwards_fails_the_outward_and_farthest_rules():
    a = A.audit(edit(BASE, (4, 10, "B")))  # fires backward, into the cockpit
    assert not a.rules["weapons_outward"] and a.stats["weapons_outward"] == 0.0
    assert not a.rules["weapons_farthest"] and a.stats["weapon_reach"] == -1.0


def test_a_thruster_exhausting_into_the_ship_fails_the_outward_rule():
    a = A.audit(edit(BASE, (3, 1, ">")))
    assert not a.rules["thrusters_outward"] and a.stats["backward_thrust"] == 0.0


def test_a_corridor_tile_no_path_needs_counts_against_the_armor_rule():
    a = A.audit(edit(BASE, (2, 5, ":")))  # a dead end off the corridor, away from the cockpit
    assert not a.rules["corridors_needed"] and a.stats["open_corridor"] == pytest.approx(1 / 7)
    assert a.rules["cockpit_wrapped"] and a.rules["hull_armored"]


def test_an_open_tile_beside_the_cockpit_unwraps_it():
    a = A.audit(edit(BASE, (4, 7, ":")))  # on the cockpit's ring, and no path needs it
    assert not a.rules["cockpit_wrapped"] and a.stats["cockpit_wrap"] == pytest.approx(11 / 12)
    assert a.rules["reactor_wrapped"]
    holed = A.audit(edit(BASE, (2, 8, ".")))  # an empty tile on the ring: a hole in the wrap
    assert not holed.rules["cockpit_wrapped"]


def test_a_corridor_to_the_hull_that_no_path_needs_fails_the_hull_rule():
    a = A.audit(edit(BASE, (2, 5, ":"), (1, 5, ":")))
    assert not a.rules["hull_armored"] and a.stats["open_hull"] == 1.0 and a.stats["hull_armor"] < 1.0


def test_doors_count_only_where_the_way_round_is_longer_than_10_steps():
    long_ = A.audit(Ship.from_text(LOOP_LONG))
    assert long_.rules["doors_justified"] and long_.stats["door_count"] == 1 and long_.stats["missing_doors"] == 0
    assert A.audit(edit(LOOP_LONG, (3, 7, "#"))).stats["missing_doors"] == 1  # stage 14 would put a door there
    short = A.audit(Ship.from_text(LOOP_SHORT))
    assert not short.rules["doors_justified"] and short.stats["doors_justified"] == 0.0
    # a ship without cockpit, reactor or mounts is audited too (no NaN, the rules needing them fail)
    assert all(np.isfinite(short.vector())) and not short.rules["cockpit_wrapped"] and not short.rules["thrusters_outward"]


def test_ammo_counts_only_near_weapons_and_crew_needs_both_room_kinds():
    near = A.audit(edit(BASE, (2, 9, "A"), (5, 9, "A")))
    assert near.rules["ammo_near_weapons"] and near.stats["weapons_served"] == 1.0 and near.stats["ammo_used"] == 1.0
    far = A.audit(edit(BASE, (2, 3, "A"), (2, 4, "A")))  # 5 tiles from the weapon (near is <= 3)
    assert not far.rules["ammo_near_weapons"] and far.stats["ammo_used"] == 0.0
    quarters = edit(BASE, (1, 2, "Q"), (1, 3, "Q"), (2, 2, "Q"), (2, 3, "Q"))
    assert A.audit(quarters).stats["quarters_count"] == 1 and not A.audit(quarters).rules["crew_rooms"]
    both = edit(BASE, (1, 2, "Q"), (1, 3, "Q"), (2, 2, "Q"), (2, 3, "Q"), *((y, x, "K") for y in (5, 6) for x in (5, 6, 7)))
    assert A.audit(both).rules["crew_rooms"]


def test_reference_matches_a_regeneration_of_its_first_seeds():
    stored = A.load_reference()
    fresh = A.reference(seeds=3, samples=3)
    assert fresh["samples"] == {k: stored["samples"][k] for k in ("0", "1", "2")}
    assert set(stored["statistics"]) == set(A.STATISTICS) and set(stored["rules"]) == set(A.RULES)
    assert stored["ships"] == A.REFERENCE_SEEDS and stored["seeds"] == [0, A.REFERENCE_SEEDS - 1]


def test_the_staged_generator_passes_its_own_rules_at_the_reference_rates():
    rates = A.load_reference()["rules"]
    pipeline = Pipeline()
    audits = [A.audit(pipeline.generate(seed)) for seed in range(100, 110)]
    for rule, rate in rates.items():
        passed = sum(a.rules[rule] for a in audits)
        assert passed >= (10 if rate == 1.0 else 9), (rule, rate, passed)
    assert all(rate >= 0.98 for rate in rates.values())


def test_compare_names_what_differs():
    stored = A.reference(seeds=2, samples=1)
    assert A.compare(stored, json.loads(json.dumps(stored))) == []
    changed = json.loads(json.dumps(stored))
    changed["rules"]["valid"] = 0.5
    assert A.compare(stored, changed) == ["rules.valid: stored 1.0, regenerated 0.5"]


def test_a_refused_reference_file_is_one_line(tmp_path):
    bad = tmp_path / "ref.json"
    bad.write_text("{not json")
    with pytest.raises(A.AuditError, match="is not JSON"):
        A.load_reference(bad)
    bad.write_text('{"statistics": {}, "rules": {}}')
    with pytest.raises(A.AuditError, match="lacks ship_tiles"):
        A.load_reference(bad)
    with pytest.raises(A.AuditError, match="No such file"):
        A.load_reference(tmp_path / "missing.json")


def test_cli_audit_prints_the_ship_beside_the_reference(capsys):
    assert main(["starship", "--seed", "7", "--audit", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| statistic | this ship | staged mean | staged 5-95% | flag |" in out
    assert "| cockpit_wrap | 1 | 1 | 1 .. 1 |" in out and "| corridors_needed | pass |" in out
    assert "rules passed: 13 of 13" in out


def test_cli_audit_prints_quality_v2_below_the_rules(capsys):
    from tablegym.envs.starship.quality import quality

    ship = Pipeline().generate(np.random.default_rng(0), until=12)  # 12 of 13 rules (see above)
    assert main(["starship", "--seed", "0", "--off", "fill_armor", "--off", "doors", "--audit", "--quiet"]) == 0
    out = capsys.readouterr().out
    score = quality(ship).score
    assert f"quality v2: {score * 12 / 13:.4f} (the quality score {score:.4f} times 12 of 13 layout rules passed)" in out


def test_cli_audit_of_the_learned_generator(capsys):
    assert main(["starship", "--seed", "2000", "--generator", "learned", "--audit", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| open_corridor |" in out and "rules passed:" in out


@pytest.mark.parametrize("argv", [["starship", "--seed", "-1", "--audit"], ["starship", "--seed", "x", "--audit"]])
def test_cli_audit_bad_seed_is_one_line(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--seed" in err and len(err.strip().splitlines()) == 1


def test_cli_audit_with_a_broken_reference_is_one_line(capsys, monkeypatch, tmp_path):
    broken = tmp_path / "ref.json"
    broken.write_text("[]")
    monkeypatch.setattr(A, "REFERENCE", broken)
    assert main(["starship", "--seed", "7", "--audit", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "has no 'statistics' and 'rules' tables" in err and len(err.strip().splitlines()) == 1


# -- the two-sample test ---------------------------------------------------------------------------


def test_logistic_regression_separates_separable_features_and_not_identical_ones():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, (200, 5)), rng.normal(0, 1, (200, 5))
    b[:, 2] += 4.0  # one feature tells them apart
    acc = T.held_out_accuracy(T.fit_logistic, a[:100], b[:100], a[100:], b[100:])
    assert acc.total == 200 and acc.value >= 0.95
    same = T.held_out_accuracy(T.fit_logistic, *(rng.normal(0, 1, (100, 5)) for _ in range(4)))
    assert abs(same.value - 0.5) < 0.15


def test_conv_net_separates_separable_grids_and_not_identical_ones():
    rng = np.random.default_rng(1)

    def grids(n: int, plane: int) -> np.ndarray:
        x = np.zeros((n, 4, 8, 8), np.float32)
        x[np.arange(n), plane, rng.integers(8, size=n), rng.integers(8, size=n)] = 1.0
        return x

    acc = T.held_out_accuracy(T.fit_convnet, grids(64, 1), grids(64, 2), grids(50, 1), grids(50, 2), epochs=6, lr=1e-2)
    assert acc.value >= 0.95
    same = T.held_out_accuracy(T.fit_convnet, grids(64, 1), grids(64, 1), grids(50, 1), grids(50, 1), epochs=2)
    assert abs(same.value - 0.5) < 0.2


def test_grid_planes_are_one_hot_with_facings_on_mounts():
    ship = Ship.from_text(BASE)
    planes = T.grid_planes([ship])
    assert planes.shape == (1, T.NUM_PLANES, 8, 12)
    assert (planes[0, :NUM_TILE_KINDS].sum(0) == 1).all() and planes[0, CORRIDOR, 3, 2] == 1
    assert planes[0, THRUSTER, 3, 1] == 1 and planes[0, NUM_TILE_KINDS + 2, 3, 1] == 1  # exhaust backward
    assert planes[0, NUM_TILE_KINDS:].sum() == 2  # the thruster and the weapon


def test_ships_are_cached_and_read_back(tmp_path):
    made = T.ships(T.Generators(), "staged", [3, 4], cache=tmp_path)
    assert (tmp_path / "staged.npz").exists()

    class Refuses(T.Generators):
        def ship(self, generator: str, seed: int) -> Ship:
            raise AssertionError(f"seed {seed} should come from the cache")

    again = T.ships(Refuses(), "staged", [4, 3], cache=tmp_path)
    assert again[0] == made[1] and again[1] == made[0]
    assert made[0] == Pipeline().generate(3)


def test_worker_processes_generate_the_ships_one_process_does(tmp_path):
    """``--workers``: the random generator's ships (each drawn from its seed's stream) come out
    the same, in seed order, from two processes as from this one, and are cached alike."""
    seeds = [5, 3, 4]
    alone = T.ships(T.Generators(), "random", seeds)
    together = T.Generators(workers=2)
    shared = T.ships(together, "random", seeds, cache=tmp_path)
    assert shared == alone and together.made == 3
    assert T.ships(T.Generators(), "random", [3], cache=tmp_path) == [alone[1]]


# -- quality v2 (the old score times the share of layout rules passed) ---------------------------


def test_quality_v2_costs_a_13th_of_the_score_for_each_broken_layout_rule():
    from tablegym.envs.starship.quality import quality

    base = Ship.from_text(BASE)  # invalid (the weapon has no walkable neighbour) and 4 rules fail: 8 of 13
    assert A.layout_quality(base) == pytest.approx(quality(base).score * 8 / 13)
    staged = Pipeline().generate(np.random.default_rng(0))  # passes all 13: the old score
    assert A.layout_quality(staged) == pytest.approx(quality(staged).score)
    before_armor = Pipeline().generate(np.random.default_rng(0), until=12)  # stage 13 has not armored the open corridor
    assert A.layout_quality(before_armor) == pytest.approx(quality(before_armor).score * 12 / 13)


def test_the_audit_reward_pays_quality_v2_at_the_episode_end():
    """Stages 1-12 of seed 0 (valid, open corridor left: 12 of 13 rules) and three writes of
    nothing: the gated reward pays 0, the audit reward v2 - score on the last step only."""
    from tablegym.envs.starship.env import StarshipEnv
    from tablegym.envs.starship.quality import quality

    ship = Pipeline().generate(np.random.default_rng(0), until=12)
    for reward, last in (("gated", 0.0), ("audit", quality(ship).score * (12 / 13 - 1))):
        env = StarshipEnv(reward=reward, partial_stages=12, max_steps=3)
        env.reset(seed=0)
        assert np.array_equal(env._ship.tiles, ship.tiles)
        rewards = [env.step(0)[1] for _ in range(2)]
        _, r, terminated, truncated, info = env.step(0)
        assert rewards == [0.0, 0.0] and truncated and r == pytest.approx(last)
        assert ("layout_quality" in info) == (reward == "audit")


def test_the_compiled_vector_env_refuses_the_audit_reward_in_one_line():
    import gymnasium

    with pytest.raises(ValueError, match="runs in the single env"):
        gymnasium.make_vec("tablegym/Starship-v0", num_envs=2, reward="audit")
    envs = gymnasium.make_vec("tablegym/Starship-v0", num_envs=2, reward="audit", vectorization_mode="sync")
    envs.close()


def test_rank_correlation_is_spearman_s_rho():
    x = np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.6])
    assert T.rank_correlation(x, np.exp(x)) == pytest.approx(1.0)  # any increasing map keeps the ranks
    assert T.rank_correlation(x, -x) == pytest.approx(-1.0)
    # ties share their mean rank: ranks (0.5, 0.5, 2) against (0, 1, 2), correlation sqrt(3)/2
    assert T.rank_correlation(np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])) == pytest.approx(np.sqrt(3) / 2)
