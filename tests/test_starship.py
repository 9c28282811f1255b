"""The starship generator: ship arrays and text, the path contiguity check, each of the 14 stages,
the pipeline and its configuration, validity rules, quality terms, images and the CLI.

Ships are drawn in the ship's own text (``Ship.from_text``): '.' empty, ':' corridor, '#' armor,
'+' door, C cockpit, R reactor, thrusters as arrows in their exhaust direction (``<`` pushes
the ship forward), weapons F/S/B/P by the side they fire to, A ammo, E power, Q quarters,
K bunk room. The ship faces +x (right); row 0 is the top (port).
"""

from __future__ import annotations

import json
import math
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegym.envs.starship import kernels as K
from tablegym.envs.starship.fittings import Ammo, Crew, Doors, ExteriorArmor, FillArmor, Power, Thrusters, Weapons
from tablegym.envs.starship.pipeline import Pipeline, generate, make_stage
from tablegym.envs.starship.quality import (
    CREW_SCALE,
    FIREPOWER_TARGET,
    QUALITY_WEIGHTS,
    check_backward_thruster,
    check_cockpit_and_reactor,
    check_connected,
    check_reachable,
    quality,
    validate,
)
from tablegym.envs.starship.render import draw_ship, draw_stages, encode_png, ship_bbox, write_png
from tablegym.envs.starship.ship import (
    AMMO,
    ARMOR,
    BACKWARD,
    BIG,
    BUNK,
    COCKPIT,
    CORRIDOR,
    DOOR,
    EMPTY,
    FORWARD,
    KIND,
    MEDIUM,
    PORT,
    POWER,
    QUARTERS,
    REACTOR,
    SMALL,
    STARBOARD,
    THRUSTER,
    WEAPON,
    PlacementError,
    Ship,
    footprint,
    points,
)
from tablegym.envs.starship.stage_base import ConfigError
from tablegym.envs.starship.stages import STAGE_NAMES, STAGES
from tablegym.envs.starship.stages_hull import Cockpit, CockpitArmor, FillGaps, Reactor, Shape
from tablegym.experiments.cli import main
from tests.cli_errors import assert_one_error_line

VALID = """
. . . . . . . . . .
. # # # P # # # # .
. < : : : : C C # .
. # R R : : C C # .
. # R R : # # # # .
. # # # # # . . . .
. . . . . . . . . .
"""
"""A small valid ship: cockpit, reactor, a backward thruster at the back, a weapon firing port."""


def ship_of(text: str) -> Ship:
    return Ship.from_text(text)


def block(h: int, w: int, rows: int, cols: int, tile: int = CORRIDOR) -> Ship:
    """A rows x cols grid, empty but for an h x w block of ``tile`` at (1, 1)."""
    ship = Ship.empty(rows, cols)
    ship.tiles[1 : 1 + h, 1 : 1 + w] = tile
    return ship


def walkable_connected(ship: Ship) -> bool:
    _, count = K.components((ship.tiles == CORRIDOR) | (ship.tiles == DOOR))
    return count <= 1


# -- the ship ----------------------------------------------------------------------------------


def test_footprints_and_points():
    assert [footprint(THRUSTER, v, BACKWARD) for v in (SMALL, MEDIUM, BIG)] == [(1, 1), (2, 1), (2, 2)]
    assert [footprint(THRUSTER, v, PORT) for v in (SMALL, MEDIUM, BIG)] == [(1, 1), (1, 2), (2, 2)]
    assert [points(THRUSTER, v) for v in (SMALL, MEDIUM, BIG)] == [1, 2, 4]
    assert [points(WEAPON, v) for v in (0, 1)] == [1, 4]
    assert footprint(COCKPIT) == footprint(REACTOR) == footprint(QUARTERS) == (2, 2)
    assert footprint(AMMO) == footprint(POWER) == (1, 1)
    assert footprint(BUNK, 0) == (2, 3) and footprint(BUNK, 1) == (3, 2)


def test_the_footprint_table_is_the_documented_one():
    from tablegym.envs.starship import ship as ship_module

    table = ship_module.footprint_table().splitlines()
    assert len(table) == 2 + 12 and all(row in ship_module.__doc__ for row in table)


def test_text_round_trip_and_parts():
    ship = ship_of(VALID)
    assert ship.to_text() == "\n".join(line.replace(" ", "") for line in VALID.strip().splitlines())
    assert Ship.from_text(ship.to_text()) == ship
    assert [str(p) for p in ship.part_list()] == [
        "small weapon facing port at (y=1, x=4)",
        "small thruster facing backward at (y=2, x=1)",
        "cockpit at (y=2, x=6)",
        "reactor at (y=3, x=2)",
    ]
    assert "legend" not in ship.to_text() and ": corridor" in ship.to_text(legend=True)


def test_from_text_reads_the_largest_part_first_and_rejects_bad_drawings():
    ship = ship_of("""
    < < . B B
    < < . B B
    . v v . .""")
    assert [(p.kind, p.variant, p.facing) for p in ship.part_list()] == [
        (THRUSTER, BIG, BACKWARD),
        (WEAPON, 1, BACKWARD),
        (THRUSTER, MEDIUM, STARBOARD),
    ]
    with pytest.raises(ValueError, match="unknown ship character 'x'"):
        Ship.from_text(". x")
    with pytest.raises(ValueError, match="equal non-empty rows"):
        Ship.from_text(". .\n.")
    with pytest.raises(ValueError, match="does not start a whole cockpit"):
        Ship.from_text("C .\n. .")


def test_add_and_remove_parts():
    ship = Ship.empty(6)
    a = ship.add_part(COCKPIT, 0, 0, 1, 1)
    b = ship.add_part(THRUSTER, MEDIUM, BACKWARD, 3, 0)
    assert (a, b) == (0, 1) and ship.tiles[3:5, 0].tolist() == [THRUSTER, THRUSTER]
    with pytest.raises(PlacementError, match="covers another part"):
        ship.add_part(REACTOR, 0, 0, 2, 2)
    with pytest.raises(PlacementError, match="leaves the 6x6 grid"):
        ship.add_part(REACTOR, 0, 0, 5, 5)
    with pytest.raises(PlacementError, match="variants 0..2"):
        ship.add_part(THRUSTER, 3, 0, 0, 0)
    with pytest.raises(PlacementError, match="not a part kind"):
        ship.add_part(ARMOR, 0, 0, 0, 0)
    assert isinstance(PlacementError("x"), ValueError)
    ship.remove_part(a)
    assert ship.tiles[1:3, 1:3].tolist() == [[CORRIDOR] * 2] * 2 and (ship.part[1:3, 1:3] == -1).all()
    assert ship.part[3, 0] == 0 and ship.parts[0, KIND] == THRUSTER  # indices shifted down


# -- the path contiguity check -----------------------------------------------------------------


def test_a_placement_that_cuts_a_corridor_is_refused():
    # . . . . .
    # : : X : :     armoring X leaves its left and right neighbours unconnected
    # . . . . .
    ship = ship_of(". . . . .\n: : : : :\n. . . . .")
    assert not K.contiguity_ok(ship.tiles, 1, 2, 1, 1, 5)
    assert not K.placement_ok(ship.tiles, ship.part, ship.parts, 1, 2, 1, 1, 5, False)
    # the end of the corridor has one walkable neighbour: nothing to cut
    assert K.contiguity_ok(ship.tiles, 1, 4, 1, 1, 5)


def test_a_two_wide_corridor_can_lose_a_tile():
    # : : : : :
    # : : X : :     paths are measured from X's first open neighbour (above it, in the order of
    #               kernels.border_tiles): none of them gets longer, so even a zero detour passes
    ship = ship_of(": : : : :\n: : : : :")
    assert K.contiguity_ok(ship.tiles, 1, 2, 1, 1, 5)
    assert K.contiguity_ok(ship.tiles, 1, 2, 1, 1, 0)


@pytest.mark.parametrize(
    ("text", "detour", "ok"),
    [
        # a ring of 8 corridor tiles round an armor tile: the way round X is 6 steps instead of 2
        (": X :\n: # :\n: : :", 5, True),
        (": X :\n: # :\n: : :", 3, False),
        # a ring of 10: 8 steps instead of 2, a detour of 6
        (": X :\n: # :\n: # :\n: : :", 5, False),
        (": X :\n: # :\n: # :\n: : :", 6, True),
    ],
)
def test_detour_limit(text, detour, ok):
    ship = ship_of(text.replace("X", ":"))
    assert K.contiguity_ok(ship.tiles, 0, 1, 1, 1, detour) is ok


def test_multi_tile_footprint_and_access_rule():
    # : : : : :
    # : : : : :      a 2x2 part in the middle of a room: everything around it stays connected
    # : : : : :
    # : : : : :
    room = ship_of("\n".join([": : : : :"] * 4))
    assert K.placement_ok(room.tiles, room.part, room.parts, 1, 1, 2, 2, 5, True)
    # # # # #
    # # C C X       armoring X would take the cockpit's last walkable neighbour
    # # C C #
    # # # # #
    ship = ship_of("# # # # #\n# C C : #\n# C C # #\n# # # # #")
    assert K.contiguity_ok(ship.tiles, 1, 3, 1, 1, 5)
    assert not K.access_ok(ship.tiles, ship.part, ship.parts, 1, 3, 1, 1, False)
    assert not K.placement_ok(ship.tiles, ship.part, ship.parts, 1, 3, 1, 1, 5, False)
    # a part must touch a walkable tile itself
    walled = ship_of("# # #\n# # #\n# # #")
    assert not K.access_ok(walled.tiles, walled.part, walled.parts, 1, 1, 1, 1, True)
    assert K.access_ok(walled.tiles, walled.part, walled.parts, 1, 1, 1, 1, False)


def reference_contiguity(tiles: np.ndarray, y0: int, x0: int, h: int, w: int, detour: int) -> bool:
    """The spec's check, written plainly: BFS before and after from the first open neighbour
    (of each walkable piece touching the footprint), neighbours in ``border_tiles`` order."""
    H, W = tiles.shape
    inside = lambda y, x: y0 <= y < y0 + h and x0 <= x < x0 + w  # noqa: E731
    open_ = lambda y, x: 0 <= y < H and 0 <= x < W and tiles[y, x] in (CORRIDOR, DOOR)  # noqa: E731
    order = [c for x in range(x0, x0 + w) for c in ((y0 - 1, x), (y0 + h, x))]
    order += [c for y in range(y0, y0 + h) for c in ((y, x0 - 1), (y, x0 + w))]
    border = [c for c in order if open_(*c)]

    def bfs(src, blocked):
        dist = {src: 0}
        q = deque([src])
        while q:
            y, x = q.popleft()
            for ny, nx in ((y, x + 1), (y + 1, x), (y, x - 1), (y - 1, x)):
                if (ny, nx) not in dist and open_(ny, nx) and not (blocked and inside(ny, nx)):
                    dist[(ny, nx)] = dist[(y, x)] + 1
                    q.append((ny, nx))
        return dist

    while border:
        src, border = border[0], border[1:]
        before, after = bfs(src, False), bfs(src, True)
        if not all(after.get(t, math.inf) <= before[t] + detour for t in border if t in before):
            return False
        border = [t for t in border if t not in before]
    return True


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_contiguity_check_matches_a_plain_reference(data):
    """On random corridor/armor grids, the compiled check agrees with the spec's check written
    plainly, and an allowed placement never disconnects two open neighbours."""
    H = data.draw(st.integers(3, 7))
    W = data.draw(st.integers(3, 7))
    cells = data.draw(st.lists(st.sampled_from([CORRIDOR, CORRIDOR, ARMOR, EMPTY]), min_size=H * W, max_size=H * W))
    tiles = np.array(cells, np.int8).reshape(H, W)
    h, w = data.draw(st.sampled_from([(1, 1), (1, 2), (2, 1), (2, 2)]))
    y0 = data.draw(st.integers(0, H - h))
    x0 = data.draw(st.integers(0, W - w))
    detour = data.draw(st.integers(0, 6))
    got = K.contiguity_ok(tiles, y0, x0, h, w, detour)
    assert got == reference_contiguity(tiles, y0, x0, h, w, detour)
    if got:
        covered = tiles.copy()
        covered[y0 : y0 + h, x0 : x0 + w] = ARMOR
        label_b, _ = K.components(tiles == CORRIDOR)
        label_a, _ = K.components(covered == CORRIDOR)
        ys, xs = K.border_tiles(H, W, y0, x0, h, w)
        open_ = [(y, x) for y, x in zip(ys, xs) if tiles[y, x] == CORRIDOR]
        for a in open_:
            for b in open_:
                if label_b[a] == label_b[b]:
                    assert label_a[a] == label_a[b]


# -- the stages, one by one --------------------------------------------------------------------


def reference_hull_distance(tiles: np.ndarray) -> np.ndarray:
    """``hull_distance`` as the generator defines it, written plainly: one first-come walk from
    the empty tiles (0) and the ship's edge tiles (1), queued together row by row."""
    H, W = tiles.shape
    dist = np.full((H, W), -1)
    q = deque()
    for y in range(H):
        for x in range(W):
            if tiles[y, x] == EMPTY or y in (0, H - 1) or x in (0, W - 1):
                dist[y, x] = 0 if tiles[y, x] == EMPTY else 1
                q.append((y, x))
    while q:
        y, x = q.popleft()
        for ny, nx in ((y, x + 1), (y + 1, x), (y, x - 1), (y - 1, x)):
            if 0 <= ny < H and 0 <= nx < W and dist[ny, nx] < 0:
                dist[ny, nx] = dist[y, x] + 1
                q.append((ny, nx))
    return dist


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_hull_distance_and_piece_count_match_plain_references(data):
    """On random grids, the framed flat walk gives the plain walk's numbers, and the one-pass
    piece count is the number of 4-connected components."""
    H = data.draw(st.integers(1, 9))
    W = data.draw(st.integers(1, 9))
    cells = data.draw(st.lists(st.sampled_from([EMPTY, CORRIDOR, ARMOR]), min_size=H * W, max_size=H * W))
    tiles = np.array(cells, np.int8).reshape(H, W)
    assert np.array_equal(K.hull_distance(tiles), reference_hull_distance(tiles))
    assert K.count_pieces(tiles) == K.components(tiles != EMPTY)[1]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_kept_hull_distances_and_piece_count_follow_edits(data):
    """The vector env's kept numbers (kept.py) after each of a run of rectangle edits are the
    plain walk's hull distances (the least over a footprint, the largest) and the number of
    4-connected components of the edited grid."""
    from tablegym.envs.starship import kept

    H = data.draw(st.integers(1, 9))
    W = data.draw(st.integers(1, 9))
    tile = st.sampled_from([EMPTY, CORRIDOR, ARMOR])
    tiles = np.array(data.draw(st.lists(tile, min_size=H * W, max_size=H * W)), np.int8).reshape(H, W)
    keys = np.zeros((H, W), np.int32)
    kept.hull_all(tiles, keys)
    pieces, top = K.count_pieces(tiles), kept.hull_top(keys)
    queue = np.empty(H * W, np.int64)
    for _ in range(data.draw(st.integers(1, 6))):
        y0, x0 = data.draw(st.integers(0, H - 1)), data.draw(st.integers(0, W - 1))
        h, w = data.draw(st.integers(1, min(3, H - y0))), data.draw(st.integers(1, min(3, W - x0)))
        before = tiles[y0 : y0 + h, x0 : x0 + w].ravel().copy()
        tiles[y0 : y0 + h, x0 : x0 + w] = np.array(data.draw(st.lists(tile, min_size=h * w, max_size=h * w)), np.int8).reshape(
            h, w
        )
        pieces, top = kept.replay_occupancy(tiles, keys, pieces, top, y0, x0, h, w, before, queue)
        dist = reference_hull_distance(tiles)
        assert pieces == K.components(tiles != EMPTY)[1]
        assert top == dist.max()
        assert [kept.hull_low(keys, y, x, 1, 1) for y in range(H) for x in range(W)] == dist.ravel().tolist()
        assert kept.hull_low(keys, y0, x0, h, w) == dist[y0 : y0 + h, x0 : x0 + w].min()


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_stage_numbers_and_names():
    assert [s.number for s in STAGES] == list(range(1, 15))
    assert STAGE_NAMES == (
        "shape",
        "fill_gaps",
        "cockpit",
        "reactor",
        "cockpit_armor",
        "reactor_armor",
        "thrusters",
        "weapons",
        "exterior_armor",
        "ammo",
        "power",
        "crew",
        "fill_armor",
        "doors",
    )


def test_spec_defaults():
    assert (Shape().min_modules, Shape().max_modules) == (8, 8)
    assert (FillGaps().scan_range, FillGaps().iterations) == (2, 3)
    assert Cockpit().strategy == "protected" and Reactor().strategy == "centralized"
    t = Thrusters()
    assert (t.min_points, t.max_points) == (35, 45)
    assert (t.small_weight, t.medium_weight, t.big_weight) == (1, 2, 3)
    assert t.direction_weights().tolist() == [1 / 8, 1 / 8, 5 / 8, 1 / 8]
    assert (Ammo().min_count, Ammo().max_count) == (2, 3) and (Power().min_count, Power().max_count) == (1, 2)
    assert Doors().min_path == 10 and Pipeline().detour == 5 and Pipeline().size == (32, 32)
    assert all(s.enabled for s in Pipeline().stages)


def test_shape_one_rectangle_module():
    ship = Ship.empty(11)
    Shape(min_modules=1, max_modules=1, circle_weight=0, min_width=5, max_width=5, min_height=3, max_height=3).run(ship, rng(), 5)
    expected = np.zeros((11, 11), bool)
    expected[4:7, 3:8] = True
    assert np.array_equal(ship.tiles == CORRIDOR, expected)


def test_shape_modules_overlap_inside_the_margin():
    for seed in range(5):
        ship = Ship.empty(32)
        Shape().run(ship, rng(seed), 5)
        assert K.components(ship.tiles != EMPTY)[1] == 1
        assert not ship.tiles[[0, -1], :].any() and not ship.tiles[:, [0, -1]].any()
        assert (ship.tiles != EMPTY).sum() > 100


def test_fill_gaps_fills_between_corridors_and_drops_detached_tiles():
    # . . . . . . . . . .          . . . . . . . . . .
    # . : : : : : . . . .          . : : : : : . . . .
    # . : . . . : . . . .   ->     . : : : : : . . . .
    # . : : : : : . . . .          . : : : : : . . . .
    # . . . . . . . . : .          . . . . . . . . . .   (the lone tile is another piece)
    # . . . . . . . . . .
    ship = ship_of(
        ". . . . . . . . . .\n. : : : : : . . . .\n. : . . . : . . . .\n. : : : : : . . . .\n"
        ". . . . . . . . : .\n. . . . . . . . . ."
    )
    FillGaps(iterations=1).run(ship, rng(), 5)
    assert ship.to_text().splitlines()[1:5] == [".:::::....", ".:::::....", ".:::::....", ".........."]


def test_cockpit_takes_the_most_protected_spot():
    ship = block(6, 6, 8, 8)  # hull distance peaks (3) only at the block's central 2x2
    Cockpit().run(ship, rng(), 5)
    (p,) = ship.part_list()
    assert (p.kind, p.y, p.x) == (COCKPIT, 3, 3)
    Cockpit().run(ship, rng(), 5)
    assert len(ship.parts) == 1  # a ship has one cockpit: the stage adds none to a ship that has one


def test_reactor_is_central_and_yields_to_the_cockpit():
    ship = block(8, 8, 10, 10)
    Reactor().run(ship, rng(), 5)
    assert ship.part_list()[0][3:5] == (4, 4)
    ship = block(8, 8, 10, 10)
    Cockpit().run(ship, rng(), 5)  # the most protected spot is the centre too: the cockpit has it
    Reactor().run(ship, rng(), 5)
    cockpit, reactor = ship.part_list()
    assert (cockpit.y, cockpit.x) == (4, 4)
    assert math.hypot(reactor.y + 0.5 - 4.5, reactor.x + 0.5 - 4.5) == 2.0  # a next best spot, beside it


def test_armor_ring_leaves_the_way_in():
    ship = block(6, 6, 8, 8)
    Cockpit().run(ship, rng(), 5)
    CockpitArmor().run(ship, rng(), 5)
    # clockwise from the top-left corner, each ring tile is armored until only the last way in
    # (left of the cockpit) is left: armoring it would take the cockpit's last walkable neighbour
    assert ship.to_text() == "\n".join(
        ["........", ".::::::.", ".:####:.", ".::CC#:.", ".:#CC#:.", ".:####:.", ".::::::.", "........"]
    )
    assert parts_have_access(ship) and walkable_connected(ship)
    ship = block(8, 8, 10, 10)
    Cockpit().run(ship, rng(), 5)
    CockpitArmor(layers=2).run(ship, rng(), 5)
    assert (ship.tiles == ARMOR).sum() > 12 + 8 and parts_have_access(ship) and walkable_connected(ship)


def parts_have_access(ship: Ship) -> bool:
    """Every part has a walkable tile next to it."""
    for p in ship.part_list():
        ys, xs = K.border_tiles(*ship.shape, p.y, p.x, p.h, p.w)
        if not np.isin(ship.tiles[ys, xs], (CORRIDOR, DOOR)).any():
            return False
    return True


def test_thrusters_budget_direction_and_exhaust():
    ship = block(8, 10, 10, 14)
    stage = Thrusters(
        min_points=6, max_points=6, medium_weight=0, big_weight=0, forward_weight=0, starboard_weight=0, port_weight=0
    )
    stage.run(ship, rng(), 5)
    parts = ship.part_list()
    assert len(parts) == 6 and all(p.kind == THRUSTER and p.facing == BACKWARD and p.variant == SMALL for p in parts)
    assert all(p.x == 1 for p in parts)  # on the back of the hull: the exhaust leaves the ship
    assert check_backward_thruster(ship).ok and walkable_connected(ship)


def test_thrusters_stop_at_the_budget_with_big_ones():
    ship = block(8, 10, 10, 14)
    Thrusters(min_points=8, max_points=8, small_weight=0, medium_weight=0).run(ship, rng(1), 5)
    assert sum(p.h * p.w for p in ship.part_list()) == 8 and {p.variant for p in ship.part_list()} == {BIG}


def test_thrusters_ensure_one_backward():
    ship = block(8, 10, 10, 14)
    Thrusters(min_points=1, max_points=1, backward_weight=0).run(ship, rng(), 5)
    assert [p.facing for p in ship.part_list()].count(BACKWARD) == 1
    ship = block(8, 10, 10, 14)
    Thrusters(min_points=1, max_points=1, backward_weight=0, ensure_backward=False).run(ship, rng(), 5)
    assert BACKWARD not in [p.facing for p in ship.part_list()]


def test_weapons_take_the_far_side_in_their_direction():
    ship = block(6, 10, 8, 12)
    Weapons(min_points=3, max_points=3, large_weight=0, starboard_weight=0, port_weight=0, backward_weight=0).run(ship, rng(), 5)
    assert [(p.kind, p.facing, p.x) for p in ship.part_list()] == [(WEAPON, FORWARD, 10)] * 3


def test_exterior_armor_covers_the_perimeter():
    ship = block(6, 6, 8, 8)
    ExteriorArmor().run(ship, rng(), 5)
    expected = np.zeros((8, 8), np.int8)
    expected[1:7, 1:7] = ARMOR
    expected[2:6, 2:6] = CORRIDOR
    assert np.array_equal(ship.tiles, expected)


def test_ammo_goes_near_unserved_weapons():
    # weapons at the two ends of a corridor hull; two ammo supplies serve one each
    ship = ship_of("""
    . . . . . . . . . . . . . .
    . F : : : : : : : : : : F .
    . : : : : : : : : : : : : .
    . . . . . . . . . . . . . .""")
    Ammo(min_count=2, max_count=2, near=1).run(ship, rng(), 5)
    ammo = [p for p in ship.part_list() if p.kind == AMMO]
    assert len(ammo) == 2 and sorted(p.x <= 3 for p in ammo) == [False, True]


def test_power_goes_near_thrusters_not_served_by_the_reactor():
    ship = ship_of("""
    . . . . . . . . . . . . . .
    . < : : : : : : : : R R : .
    . < : : : : : : : : R R > .
    . . . . . . . . . . . . . .""")
    Power(min_count=1, max_count=1, near=1).run(ship, rng(), 5)
    (power,) = [p for p in ship.part_list() if p.kind == POWER]
    assert power.x <= 3  # beside the back thrusters: the front one is near the reactor


def test_crew_rooms_prefer_aligned_edges():
    ship = ship_of("""
    # # # # # # # # #
    # : : : : : : : #
    # : : : : : : : #
    # : : : : : : : #
    # : : : : : : : #
    # # # # # # # # #""")
    Crew(min_quarters=1, max_quarters=1, min_bunks=0, max_bunks=0, align_bias=1000.0).run(ship, rng(), 5)
    (room,) = ship.part_list()
    assert room.kind == QUARTERS and (room.y, room.x) in [(1, 1), (1, 6), (3, 1), (3, 6)]  # in a corner: 2 sides flush
    Crew(min_quarters=0, max_quarters=0, min_bunks=1, max_bunks=1).run(ship, rng(), 5)
    assert [p.kind for p in ship.part_list()] == [QUARTERS, BUNK] and walkable_connected(ship)


def test_fill_armor_leaves_only_corridors_that_cannot_be_armored():
    ship = Pipeline(fill_armor=False, doors=False).generate(3)
    FillArmor().run(ship, rng(), 5)
    for y, x in zip(*np.nonzero(ship.tiles == CORRIDOR)):
        assert not K.placement_ok(ship.tiles, ship.part, ship.parts, int(y), int(x), 1, 1, 5, False)
    assert walkable_connected(ship) and validate(ship).ok


def test_doors_where_the_way_round_is_long():
    # # # # # # # # # # #
    # # : : : : : : : : #
    # # : # # # # X # # #     from (1, 6) to (3, 6) is 12 steps round: the wall there becomes a door;
    # # : : : : : : : : #     beyond it the door makes the way round short
    # # # # # # # # # # #
    ship = ship_of("# # # # # # # # # #\n# : : : : : : : : #\n# : # # # # # # # #\n# : : : : : : : : #\n# # # # # # # # # #")
    Doors().run(ship, rng(), 5)
    assert list(zip(*np.nonzero(ship.tiles == DOOR))) == [(2, 6)]
    ship = ship_of("# # # # # # # # # #\n# : : : : : : : : #\n# : # # # # # # # #\n# : : : : : : : : #\n# # # # # # # # # #")
    Doors(min_path=12).run(ship, rng(), 5)
    assert list(zip(*np.nonzero(ship.tiles == DOOR))) == [(2, 7)]


# -- the pipeline -------------------------------------------------------------------------------


def test_deterministic_under_a_seed():
    a, b, c = generate(11), generate(11), generate(12)
    assert a == b and a != c
    assert Pipeline().generate(np.random.default_rng(11)) == a


def test_hundred_seeds_give_valid_ships():
    pipeline = Pipeline()
    failures = {seed: validate(pipeline.generate(seed)).reasons for seed in range(100)}
    assert {s: r for s, r in failures.items() if r} == {}


def test_snapshots_until_and_disabled_stages():
    p = Pipeline(weapons=False, doors={"enabled": False})
    names = [name for name, _ in p.snapshots(1)]
    assert names == [n for n in STAGE_NAMES if n not in ("weapons", "doors")]
    ship = p.generate(1)
    assert not len(ship.parts_of(WEAPON)) and not (ship.tiles == DOOR).any()
    assert p.generate(1, until="reactor") == p.snapshots(1)[3][1]
    assert p.generate(1, until=2).parts.shape[0] == 0


def test_config_from_kwargs_and_files(tmp_path):
    toml = tmp_path / "ship.toml"
    toml.write_text("size = 24\ndetour = 3\n[thrusters]\nMinPoints = 10\nmax_points = 12\n[doors]\nenabled = false\n")
    p = Pipeline.from_file(toml)
    assert p.size == (24, 24) and p.detour == 3 and not p.stage("doors").enabled
    assert (p.stage("thrusters").min_points, p.stage("thrusters").max_points) == (10, 12)
    js = tmp_path / "ship.json"
    js.write_text(json.dumps(p.config()))
    assert Pipeline.from_file(js).config() == p.config() == Pipeline(**p.config()).config()
    assert Pipeline.from_file(js).generate(5) == p.generate(5)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"wings": {}}, "unknown pipeline option"),
        ({"thrusters": {"wings": 2}}, "stage 'thrusters' has no parameter 'wings'"),
        ({"thrusters": {"min_points": 50}}, "min_points <= max_points"),
        ({"thrusters": {"min_points": "many"}}, "must be a number"),
        ({"thrusters": {"min_points": 2.5}}, "must be an integer"),
        ({"cockpit": {"strategy": "hidden"}}, "strategy must be one of"),
        ({"crew": {"align_bias": 0}}, "align_bias must be > 0"),
        ({"shape": {"circle_weight": 0, "rectangle_weight": 0}}, "are all 0"),
        ({"doors": {"enabled": "no"}}, "must be true or false"),
        ({"size": 2}, "size must be"),
        ({"detour": -1}, "detour must be"),
    ],
)
def test_bad_configuration_is_named(config, message):
    with pytest.raises(ConfigError, match=message):
        Pipeline(**config)
    assert issubclass(ConfigError, ValueError)


def test_bad_config_file(tmp_path):
    bad = tmp_path / "x.toml"
    bad.write_text("size = [")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Pipeline.from_file(bad)
    with pytest.raises(ConfigError, match="unknown stage 'wings'"):
        make_stage("wings")
    with pytest.raises(ConfigError, match="until must be"):
        Pipeline().generate(0, until=15)


# -- validity -----------------------------------------------------------------------------------


def test_valid_ship_passes_every_rule():
    v = validate(ship_of(VALID))
    assert v.ok and v.passed == 4 and v.reasons == [] and str(v) == "valid"


def test_connected_rule():
    lines = VALID.strip().splitlines()
    lines[6] = ". . . . . . . . # ."  # a stray armor tile at the bottom right, touching nothing
    ship = ship_of("\n".join(lines))
    check = check_connected(ship)
    assert not check.ok and check.reason == "the ship is in 2 pieces (its tiles must form one 4-connected piece)"
    assert check_connected(Ship.empty(3)).reason == "the ship has no tiles"


def test_cockpit_and_reactor_rule():
    no_reactor = ship_of(VALID.replace("R", "#"))
    assert check_cockpit_and_reactor(no_reactor).reason == "the ship has 0 reactors (it needs exactly one)"
    lines = VALID.strip().splitlines()
    lines[5:7] = [". # # # # # C C . .", ". . . . . . C C . ."]  # a second cockpit at the bottom
    two_cockpits = ship_of("\n".join(lines))
    assert "2 cockpits" in check_cockpit_and_reactor(two_cockpits).reason


def test_reachable_rule():
    # . . . . . . . . . .
    # . # # # P # # # # .
    # . < : : # : C C # .    a wall at (2, 4) cuts the thruster and the weapon off from the cockpit
    # . # R R : : C C # .
    # . # R R : # # # # .
    # . # # # # # . . . .
    ship = ship_of(VALID.replace(". < : : : : C C # .", ". < : : # : C C # ."))
    check = check_reachable(ship)
    assert not check.ok
    assert check.reason == "not reachable from the cockpit: weapon at (y=1, x=4), thruster at (y=2, x=1)"
    door = ship_of(VALID.replace(". # # # # # . . . .", ". # + # # # . . . ."))
    assert check_reachable(door).reason == "not reachable from the cockpit: door at (y=5, x=2)"


def test_backward_thruster_rule():
    forward = ship_of(VALID.replace("<", ">"))
    assert check_backward_thruster(forward).reason == "no thruster facing backwards"
    # . # < : ...   the exhaust hits the ship's own armor
    blocked = ship_of(VALID.replace(". < : :", ". # < :"))
    assert check_backward_thruster(blocked).reason == (
        "no thruster facing backwards (1 face backwards but their exhaust is blocked by the ship)"
    )


# -- quality ------------------------------------------------------------------------------------


def test_cockpit_protection():
    # . . . . . . .     hull distance: the cockpit's least protected tiles are 2 steps from space,
    # . # # # # # .     the best tile of the ship (3, 3) is 3
    # . # : : : # .
    # . # : C C # .
    # . # : C C # .
    # . # # # # # .
    # . . . . . . .
    ship = ship_of(". . . . . . .\n. # # # # # .\n. # : : : # .\n. # : C C # .\n. # : C C # .\n. # # # # # .\n. . . . . . .")
    q = quality(ship)
    assert q.raw["cockpit_protection"] == 2 and q.terms["cockpit_protection"] == pytest.approx(2 / 3)


def test_reactor_centrality():
    centred = ship_of(". . . . . .\n. # # # # .\n. # R R # .\n. # R R # .\n. # # # # .\n. . . . . .")
    q = quality(centred)
    assert q.raw["reactor_centrality"] == 0 and q.terms["reactor_centrality"] == 1
    corner = ship_of(". . . . . .\n. R R # # .\n. R R # # .\n. # # # # .\n. # # # # .\n. . . . . .")
    q = quality(corner)
    assert q.raw["reactor_centrality"] == pytest.approx(math.sqrt(2))
    assert q.terms["reactor_centrality"] == pytest.approx(1 - math.sqrt(2) / math.sqrt(4.5))


def test_thrust_balance():
    both = ". . . . . .\n< # # # # .\n. # # # # .\n. # # # # .\n. # # # # .\n< # # # # .\n. . . . . ."
    q = quality(ship_of(both))
    assert q.raw["thrust_balance"] == 0 and q.terms["thrust_balance"] == 1
    # one thruster at the top: the centre of mass is at y = 61 / 21, the thrust at y = 1
    top = both.replace("< # # # # .\n. . . . . .", ". # # # # .\n. . . . . .")
    q = quality(ship_of(top))
    assert q.raw["thrust_balance"] == pytest.approx(61 / 21 - 1)
    assert q.terms["thrust_balance"] == pytest.approx(1 - (61 / 21 - 1) / 2.5)
    none = ship_of(both.replace("<", ">"))
    assert math.isnan(quality(none).raw["thrust_balance"]) and quality(none).terms["thrust_balance"] == 0


def test_forward_firepower():
    # a large forward weapon (4), a small one (1), one firing port, and one whose line of fire
    # is blocked by the ship: 5 points count
    ship = ship_of("""
    . . . P . . . .
    . # # # # F F .
    . # # # # F F .
    . # # # # # F .
    . # # # F # # .
    . . . . . . . .""")
    q = quality(ship)
    assert q.raw["forward_firepower"] == 5 and q.terms["forward_firepower"] == pytest.approx(5 / FIREPOWER_TARGET)


def test_crew_walking_distance():
    # . . . . . . . . . .
    # . # # # # # # # # .
    # . Q Q : : : : C C .     quarters' door tile (2, 3) to the cockpit's (2, 6): 3 steps
    # . Q Q # # # # C C .
    # . . . . . . . . . .
    text = ". . . . . . . . . .\n. # # # # # # # # .\n. Q Q : : : : C C .\n. Q Q # # # # C C .\n. . . . . . . . . ."
    q = quality(ship_of(text))
    assert q.raw["crew_walking"] == 3 and q.terms["crew_walking"] == pytest.approx(CREW_SCALE / (CREW_SCALE + 3))
    # a reactor above, walled off, counts as height + width = 6 + 10 steps: the mean is (3 + 16) / 2
    q = quality(ship_of(". R R . . . . . . .\n" + text.replace(". . . . . . . . . .\n", ". R R . . . . . . .\n", 1)))
    assert q.raw["crew_walking"] == pytest.approx((3 + 16) / 2)
    assert math.isnan(quality(ship_of(VALID)).raw["crew_walking"]) and quality(ship_of(VALID)).terms["crew_walking"] == 0


def test_armor_fraction_and_the_weighted_score():
    ship = ship_of(VALID)
    q = quality(ship)
    assert q.raw["armor_fraction"] == pytest.approx(20 / 37) == q.terms["armor_fraction"]
    expected = sum(QUALITY_WEIGHTS[k] * q.terms[k] for k in QUALITY_WEIGHTS) / sum(QUALITY_WEIGHTS.values())
    assert q.score == pytest.approx(expected) and 0 <= q.score <= 1
    assert set(q.raw) == set(q.terms) == set(QUALITY_WEIGHTS)


# -- images and the command line ------------------------------------------------------------------


def test_draw_ship_shows_parts_and_facings():
    ship = ship_of(VALID)
    img = draw_ship(ship, cell=8, legend=False)
    assert img.shape == (7 * 8, 10 * 8, 3) and img.dtype == np.uint8
    turned = ship_of(VALID.replace("P", "S"))
    assert not np.array_equal(img, draw_ship(turned, cell=8, legend=False))
    with_legend = draw_ship(ship, cell=8, title="SEED 1")
    assert with_legend.shape[0] > img.shape[0] and with_legend.shape[1] > img.shape[1]
    assert ship_bbox(ship) == (0, 0, 7, 10)


def test_png_round_trip(tmp_path):
    PIL = pytest.importorskip("PIL.Image")
    img = draw_stages(Pipeline().snapshots(2), cell=3)
    path = write_png(tmp_path / "s.png", img)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.array_equal(np.asarray(PIL.open(path).convert("RGB")), img)
    with pytest.raises(ValueError, match="H x W x 3 uint8"):
        encode_png(np.zeros((2, 2), np.uint8))


def test_cli_writes_the_picture_and_prints_the_metrics(tmp_path, capsys):
    out = tmp_path / "ship.png"
    assert main(["starship", "--seed", "7", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert "seed 7: valid" in text and "| cockpit_protection |" in text and "| quality score |" in text
    strip = tmp_path / "stages.png"
    assert (
        main(
            [
                "starship",
                "--seed",
                "7",
                "--stages",
                "--out",
                str(strip),
                "--quiet",
                "--set",
                "thrusters.min_points=20",
                "--off",
                "doors",
            ]
        )
        == 0
    )
    assert strip.read_bytes()[:4] == b"\x89PNG" and capsys.readouterr().out.startswith("seed 7: valid")


def test_bench_starship_command(capsys):
    assert main(["bench", "starship", "--param", "seeds=5"]) == 0
    out = capsys.readouterr().out
    assert "| validity_rate | 1 |" in out and "| ships_per_s |" in out and "term cockpit_protection.median" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["starship", "--set", "thrusters.wings=1"], "no parameter 'wings'"),
        (["starship", "--set", "thrusters=1"], "--set needs STAGE.PARAM=VALUE"),
        (["starship", "--off", "wings"], "unknown pipeline option"),
        (["starship", "--size", "2"], "must be >= 4"),
    ],
)
def test_cli_bad_starship_arguments(capsys, argv, message):
    assert_one_error_line(argv, message, capsys)
