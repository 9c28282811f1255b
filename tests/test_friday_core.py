"""Friday rules core checked against rules/friday.md: the card data, every ability and pirate
special worked by hand on scripted positions, fight resolution, steps, levels, options and the
score; then card conservation and an independent fight model over thousands of random decisions.

Positions come from ``scenario(...)`` and every draw is scripted: at a chance node
``state.child(card_type)`` says which card comes. Tables are drawn as the core lays them out,
slot by slot: ``[0] L genius 2`` is slot 0, on the left (a free draw); ``R`` is the right side
(paid or extra draws); ``x`` face down (destroyed), ``2`` doubled, ``u`` ability used.
Hazard values are written F free cards; green/yellow/red.
"""

from __future__ import annotations

import doctest
import pickle

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tablegym.envs.core import CHANCE, TERMINAL, IllegalActionError
from tablegym.envs.friday import scenario as scenario_module
from tablegym.envs.friday.cards import (
    ABILITY,
    ABILITY_NAMES,
    AGING,
    BELOW,
    CARD1,
    CARD2,
    CARDS,
    COPY,
    COUNT,
    DESTROY,
    DESTROY_COST,
    DOUBLE,
    EXCHANGE1,
    EXCHANGE2,
    GROUP_FREE,
    GROUP_VALUES,
    HIGHEST0,
    KIND,
    LIFE1,
    LIFE2,
    MINUS_LIFE1,
    MINUS_LIFE2,
    NONE,
    NUM_TYPES,
    PIRATES,
    SORT,
    STEP,
    STOP,
    VALUE,
)
from tablegym.envs.friday.core import FridayGame, FridayState, sample_chance, state_sample
from tablegym.envs.friday.layout import (
    CONCEDE,
    DESTROY_BASE,
    DONE,
    DRAW_FREE,
    DRAW_PAID,
    END_FIGHT,
    EXTRA_DRAW,
    FIGHT_0,
    FIGHT_1,
    MAX_SLOTS,
    NUM_ACTIONS,
    PIRATE_0,
    PIRATE_1,
    PIRATE_OUTCOME,
    SKIP,
    SORT_BASE,
    SORT_OPTIONS,
    STOP_FREE,
    TARGET_BASE,
    USE_BASE,
)
from tablegym.envs.friday.scenario import ScenarioError, card_total, scenario

# ---- card ids (the order of cards.CARDS, checked against the spec below) -----------------------
(
    FOOD0,
    EQUIPMENT,
    STRATEGY0,
    REALIZATION0,
    DECEPTION0,
    MIMICRY0,
    BOOKS,
    FOOD1,
    REALIZATION1,
    DECEPTION1,
    MIMICRY1,
    REPEAT1,
    WEAPON2,
    FOOD2,
    REALIZATION2,
    EXPERIENCE2,
    STRATEGY2,
    REPEAT2,
    VISION2,
    REALIZATION3,
    EXPERIENCE3,
    STRATEGY3,
    VISION3,
    WEAPON4,
    DISTRACTED,
    WEAK,
    EATING,
    FOCUSED,
    GENIUS,
    SCARED,
    VERY_TIRED,
    HUNGRY,
    DISTRACTED_AGING,
    STUPID,
    VERY_STUPID,
    VERY_HUNGRY,
    MORONIC,
    SUICIDAL,
) = range(38)
NORMAL_AGING = (SCARED, VERY_TIRED, HUNGRY, DISTRACTED_AGING, STUPID, VERY_STUPID)
DIFFICULT_AGING = (VERY_HUNGRY, MORONIC, SUICIDAL)
# Pirate ids (the order of cards.PIRATES).
P6_20, P7_25, P8_30, P9_35, P10_40, P7_16, P9_22, P10_52, P5_STAR, P_STAR_STAR = range(10)

# ---- the spec's tables, typed in from rules/friday.md -------------------------------------------
SPEC_GROUPS = [  # (name, free cards, green/yellow/red, number of cards)
    ("with the raft to the wreck", 1, (0, 1, 3), 10),
    ("exploring the island", 2, (1, 3, 6), 8),
    ("further exploring the island", 3, (2, 5, 8), 6),
    ("wild animals", 4, (4, 7, 11), 4),
    ("cannibals", 5, (5, 9, 14), 2),
]
SPEC_KNOWLEDGE = [  # (group, name, strength, ability, count)
    (0, "food", 0, "+1 life", 2),
    (0, "equipment", 0, "+2 cards", 2),
    (0, "strategy", 0, "2x exchange", 2),
    (0, "realization", 0, "1x destroy", 1),
    (0, "deception", 0, "1x below the pile", 1),
    (0, "mimicry", 0, "1x copy", 1),
    (0, "books", 0, "step -1", 1),
    (1, "food", 1, "+1 life", 2),
    (1, "realization", 1, "1x destroy", 1),
    (1, "deception", 1, "1x below the pile", 1),
    (1, "mimicry", 1, "1x copy", 1),
    (1, "repeat", 1, "1x double", 1),
    (1, "weapon", 2, "none", 2),
    (2, "food", 2, "+1 life", 1),
    (2, "realization", 2, "1x destroy", 1),
    (2, "experience", 2, "+1 card", 1),
    (2, "strategy", 2, "1x exchange", 1),
    (2, "repeat", 2, "1x double", 1),
    (2, "vision", 2, "sort 3 cards", 1),
    (3, "realization", 3, "1x destroy", 1),
    (3, "experience", 3, "+1 card", 1),
    (3, "strategy", 3, "1x exchange", 1),
    (3, "vision", 3, "sort 3 cards", 1),
    (4, "weapon", 4, "none", 2),
]
SPEC_STARTING = [
    ("distracted", -1, "none", 5),
    ("weak", 0, "none", 8),
    ("eating", 0, "+2 life", 1),
    ("focused", 1, "none", 3),
    ("genius", 2, "none", 1),
]
SPEC_AGING = [  # (name, value, ability, count, difficult, only levels 3-4)
    ("scared", 0, "highest card = 0", 2, False, False),
    ("very tired", 0, "stop", 1, False, False),
    ("hungry", 0, "-1 life", 1, False, False),
    ("distracted", -1, "none", 1, False, False),
    ("stupid", -2, "none", 2, False, False),
    ("very stupid", -3, "none", 1, False, True),
    ("very hungry", 0, "-2 life", 1, True, False),
    ("moronic", -4, "none", 1, True, False),
    ("suicidal", -5, "none", 1, True, False),
]
SPEC_PIRATES = [(6, 20), (7, 25), (8, 30), (9, 35), (10, 40), (7, 16), (9, 22), (10, 52), (5, None), (None, None)]
HAZARD_GROUP = [0] * 7 + [1] * 6 + [2] * 6 + [3] * 4 + [4]
"""Group of each hazard type id (the module docstring of cards.py)."""


# ---- helpers -------------------------------------------------------------------------------------


def use(slot: int) -> int:
    return USE_BASE + slot


def target(slot: int) -> int:
    return TARGET_BASE + slot


def destroy(slot: int) -> int:
    return DESTROY_BASE + slot


def sort_action(n: int, discard: int, order: tuple[int, ...]) -> int:
    """The SORT action for n drawn cards that discards index ``discard`` (-1: none) and puts the
    rest back in ``order`` (indices into the drawn cards, first = next to be drawn)."""
    row = [n, discard, *order, *[-1] * (3 - len(order))]
    (k,) = [k for k in range(len(SORT_OPTIONS)) if SORT_OPTIONS[k].tolist() == row]
    return SORT_BASE + k


def play(state: FridayState, *moves: int) -> FridayState:
    """Apply decisions and scripted chance outcomes in order (each must be legal)."""
    for m in moves:
        state = state.child(m)
    return state


def cards_at(state: FridayState) -> dict[int, tuple[int, str]]:
    """slot -> (card, flags) of the table."""
    return {slot: (card, flags) for slot, card, flags in state.table}


def counts(state: FridayState, zone: str) -> dict[int, int]:
    """The non-zero counts of a zone as {card: count}."""
    return {t: int(n) for t, n in enumerate(state.zone(zone)) if n}


def left_game(before: FridayState, after: FridayState) -> dict[int, int]:
    """The cards that went out of the game between two positions, as {card: count}."""
    grown = after.zone("removed") - before.zone("removed")
    return {t: int(n) for t, n in enumerate(grown) if n}


# ---- the card data ---------------------------------------------------------------------------------


def test_component_counts_30_18_11_10_and_3_step_cards_make_72():
    hazards = int(COUNT[:24].sum())
    starting = int(sum(COUNT[t] for t in range(NUM_TYPES) if CARDS[t].kind == 1))
    aging = int(sum(COUNT[t] for t in range(NUM_TYPES) if KIND[t] == AGING))
    assert (hazards, starting, aging, len(PIRATES)) == (30, 18, 11, 10)
    assert hazards + starting + aging + len(PIRATES) + 3 == 72  # + green/yellow/red step cards
    assert [sum(COUNT[t] for t in range(24) if HAZARD_GROUP[t] == g) for g in range(5)] == [10, 8, 6, 4, 2]


def test_knowledge_cards_match_the_spec_table():
    got = [(c.group, c.name, c.value, ABILITY_NAMES[c.ability], c.count) for c in CARDS[:24]]
    assert got == SPEC_KNOWLEDGE
    assert [c.group for c in CARDS[:24]] == HAZARD_GROUP
    assert all(c.kind == 0 and DESTROY_COST[t] == 1 for t, c in enumerate(CARDS[:24]))


def test_hazard_groups_free_cards_and_values_match_the_spec():
    assert GROUP_FREE.tolist() == [g[1] for g in SPEC_GROUPS]
    assert [tuple(v) for v in GROUP_VALUES.tolist()] == [g[2] for g in SPEC_GROUPS]


def test_starting_and_aging_cards_match_the_spec():
    assert [(c.name, c.value, ABILITY_NAMES[c.ability], c.count) for c in CARDS[24:29]] == SPEC_STARTING
    assert [(c.name, c.value, ABILITY_NAMES[c.ability], c.count, c.difficult, c.level3) for c in CARDS[29:]] == SPEC_AGING
    assert all(KIND[t] == AGING for t in range(29, 38))
    # destroy cost: 1 for starting and knowledge cards, 2 for aging cards
    assert DESTROY_COST.tolist() == [1] * 29 + [2] * 9


def test_pirates_match_the_spec():
    got = [(None if p.free < 0 else p.free, None if p.hazard < 0 else p.hazard) for p in PIRATES]
    assert got == SPEC_PIRATES
    assert "2 life" in PIRATES[P7_16].special and "half" in PIRATES[P9_22].special
    assert "+1" in PIRATES[P10_52].special and "aging" in PIRATES[P5_STAR].special
    assert "all remaining hazard" in PIRATES[P_STAR_STAR].special


# ---- scenario() ----------------------------------------------------------------------------------------


def test_scenario_docstring_example_runs():
    result = doctest.testmod(scenario_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0


def test_scenario_refuses_more_copies_than_exist():
    with pytest.raises(ScenarioError, match="more copies"):
        scenario(hazard=FOOD1, table=[(GENIUS, "L")], stack={GENIUS: 1})  # one genius in the game
    with pytest.raises(ScenarioError, match="more copies"):
        scenario(hazard=WEAPON4, stack={WEAPON4: 2})  # 2 cannibals: one fought, 2 in the deck
    with pytest.raises(ScenarioError, match="more copies"):
        scenario(level=2, hazard=FOOD1, stack={VERY_STUPID: 1})  # only in levels 3 and 4
    with pytest.raises(ScenarioError, match="more copies"):
        scenario(hazard=FOOD1, discard={WEAK: 5}, stack={WEAK: 4})
    with pytest.raises(ScenarioError, match="more copies"):
        scenario(hazard=FOOD1, hazard_discard={FOOD1: 2})


def test_scenario_refuses_impossible_positions():
    with pytest.raises(ScenarioError):
        scenario(hazard=FOOD1, pirate=P6_20)
    with pytest.raises(ScenarioError):
        scenario(pirate=P6_20, pirates=(P7_25, P8_30))
    with pytest.raises(ScenarioError):
        scenario(hazard=40)
    with pytest.raises(ScenarioError):
        scenario(hazard=FOOD1, life=23)
    with pytest.raises(ScenarioError):
        scenario(hazard=FOOD1, aging={WEAK: 1})  # not an aging card
    with pytest.raises(ScenarioError):
        scenario(hazard=FOOD1, hazards={GENIUS: 1})  # not a hazard card
    with pytest.raises(ScenarioError):
        scenario(hazard=FOOD1, table=[(GENIUS, "Lq")])
    with pytest.raises(ScenarioError):
        scenario(hazard=FOOD1, table=[(GENIUS, "L", "u")])
    with pytest.raises(ScenarioError):
        scenario(hazard=FOOD1, top=[WEAK, WEAK, WEAK, WEAK])
    with pytest.raises(ScenarioError):
        scenario(hazard=FOOD1, free_drawn=3)  # 2 free cards against "exploring the island"
    with pytest.raises(ScenarioError):
        scenario(hazards=())  # a turn without a hazard to draw
    with pytest.raises(ValueError):
        scenario(hazard=FOOD1, abilities="sometimes")


def test_scenario_puts_every_card_where_it_was_asked():
    s = scenario(
        level=3,
        step=2,
        hazard=REPEAT2,
        life=9,
        table=[(GENIUS, "L"), (STUPID, "2u")],
        stack={WEAK: 3},
        top=[FOCUSED],
        bottom=[DISTRACTED],
        discard={EATING: 1},
        hazard_discard={FOOD0: 2},
        aging={MORONIC: 1},
    )
    assert s.current_player() == 0 and s.life == 9 and s.step_name == "red" and s.hazard == REPEAT2
    assert s.table == [(0, GENIUS, "L"), (1, STUPID, "2u")]
    assert counts(s, "stack") == {WEAK: 3, FOCUSED: 1, DISTRACTED: 1}
    assert counts(s, "discard") == {EATING: 1}
    assert counts(s, "hazard_discard") == {FOOD0: 2}
    assert counts(s, "aging") == {MORONIC: 1}
    assert s.aging_entered == 10  # level 3 has 11 aging cards, 1 still on the aging stack
    assert s.zone("hazards").sum() == 30 - 3  # the rest of the hazards: 2 discarded, 1 fought
    # the cards given nowhere are out of the game (the hazards default to the hazard stack)
    assert counts(s, "removed") == {
        DISTRACTED: 4,
        WEAK: 5,
        FOCUSED: 2,
        SCARED: 2,
        VERY_TIRED: 1,
        HUNGRY: 1,
        DISTRACTED_AGING: 1,
        STUPID: 1,
        VERY_STUPID: 1,
        VERY_HUNGRY: 1,
        SUICIDAL: 1,
    }
    assert s.fight() == (2 - 4, 8)


# ---- setup by level -----------------------------------------------------------------------------------


def reveal(game: FridayGame, a: int = P6_20, b: int = P_STAR_STAR) -> FridayState:
    s = game.new_initial_state()
    assert s.current_player() == CHANCE
    assert s.chance_outcomes() == [(PIRATE_OUTCOME + p, pytest.approx(0.1)) for p in range(10)]
    s = s.child(PIRATE_OUTCOME + a)
    second = s.chance_outcomes()
    assert [o for o, _ in second] == [PIRATE_OUTCOME + p for p in range(10) if p != a]
    assert all(p == pytest.approx(1 / 9) for _, p in second)
    return s.child(PIRATE_OUTCOME + b)


@pytest.mark.parametrize("level, life, aging_cards", [(1, 20, 10), (2, 20, 10), (3, 20, 11), (4, 18, 11)])
def test_level_setup(level, life, aging_cards):
    s = reveal(FridayGame(level=level))
    assert s.pirates == (P6_20, P_STAR_STAR)
    if level >= 2:
        # the top aging card is a normal one (normal cards lie above the difficult ones)
        outs = dict(s.chance_outcomes())
        normal = [t for t in NORMAL_AGING if level >= 3 or t != VERY_STUPID]
        n = sum(COUNT[t] for t in normal)
        assert outs == {t: pytest.approx(COUNT[t] / n) for t in normal}
        s = s.child(STUPID)
    assert s.life == life and s.step_name == "green"
    stack = s.zone("stack")
    assert stack.sum() == (18 if level == 1 else 19)
    assert stack[24:29].tolist() == [5, 8, 1, 3, 1]
    assert stack[STUPID] == (1 if level >= 2 else 0)
    assert s.zone("aging").sum() + s.aging_entered == aging_cards
    assert s.zone("aging")[VERY_STUPID] == (1 if level >= 3 else 0)
    assert s.aging_entered == (1 if level >= 2 else 0)
    assert s.zone("hazards").sum() == 30 and s.zone("discard").sum() == 0
    # the first turn: two hazards are drawn, 30 in the stack
    outs = dict(s.chance_outcomes())
    assert outs == {t: pytest.approx(COUNT[t] / 30) for t in range(24)}


def test_level4_life_and_maximum_life_option():
    assert reveal(FridayGame(level=4)).child(SCARED).life == 18
    # +2 life from "eating": capped at 22 by default, at 20 with max_life_level4=20
    s = scenario(level=4, life=19, hazard=FOOD0, table=[(EATING, "L")])
    assert s.child(use(0)).life == 21
    s = scenario(level=4, life=19, hazard=FOOD0, table=[(EATING, "L")], max_life_level4=20)
    assert s.child(use(0)).life == 20
    s = scenario(level=3, life=21, hazard=FOOD0, table=[(EATING, "L")], max_life_level4=20)
    assert s.child(use(0)).life == 22  # the option is for level 4 only


# ---- the hazard choice and the steps ----------------------------------------------------------------


def test_two_hazards_drawn_fight_one_the_other_goes_to_the_hazard_discard_pile():
    s = scenario(hazards={FOOD0: 1, WEAPON4: 1, REPEAT2: 1}, stack={WEAK: 5})
    assert s.current_player() == CHANCE
    s = play(s, FOOD0)
    assert s.current_player() == CHANCE  # the second hazard
    assert dict(s.chance_outcomes()) == {WEAPON4: pytest.approx(0.5), REPEAT2: pytest.approx(0.5)}
    s = s.child(WEAPON4)
    assert s.hazard_choice == (FOOD0, WEAPON4) and s.legal_actions() == [FIGHT_0, FIGHT_1]
    fought = s.child(FIGHT_1)
    assert fought.hazard == WEAPON4 and counts(fought, "hazard_discard") == {FOOD0: 1}
    assert fought.fight() == (0, 5)  # cannibals at green
    assert counts(fought, "hazards") == {REPEAT2: 1}
    fought = s.child(FIGHT_0)
    assert fought.hazard == FOOD0 and counts(fought, "hazard_discard") == {WEAPON4: 1}


def test_single_last_hazard_fight_or_skip_and_skipping_ends_the_step():
    # green, 1 hazard left, 2 in the hazard discard pile
    s = play(scenario(hazards={FOOD1: 1}, hazard_discard={WEAPON2: 2}, stack={WEAK: 5}), FOOD1)
    assert s.legal_actions() == [FIGHT_0, SKIP]
    skipped = s.child(SKIP)
    # yellow: the hazard discard pile (with the skipped card) is the new hazard stack
    assert skipped.step_name == "yellow" and skipped.current_player() == CHANCE
    assert counts(skipped, "hazards") == {FOOD1: 1, WEAPON2: 2}
    assert counts(skipped, "hazard_discard") == {}
    assert dict(skipped.chance_outcomes()) == {FOOD1: pytest.approx(1 / 3), WEAPON2: pytest.approx(2 / 3)}


def test_step_yellow_to_red_then_pirates():
    s = play(scenario(step=1, hazards={FOOD1: 1}, hazard_discard={WEAPON2: 1}, stack={WEAK: 5}), FOOD1, SKIP)
    assert s.step_name == "red" and counts(s, "hazards") == {FOOD1: 1, WEAPON2: 1}
    s = play(s, WEAPON2, FOOD1)
    assert s.legal_actions() == [FIGHT_0, FIGHT_1]
    # fight the food (F 2; red 6), lose it: it goes to the hazard discard pile
    s = play(s, FIGHT_1, DRAW_FREE, WEAK, END_FIGHT)
    assert s.life == 20 - 6 and s.phase_name == "destroy cards after the loss"
    s = s.child(DONE)
    # the hazard stack is empty after red: the pirates, with 2 hazards still undefeated
    assert s.step_name == "pirates" and s.legal_actions() == [PIRATE_0, PIRATE_1]
    assert counts(s, "hazard_discard") == {FOOD1: 1, WEAPON2: 1}
    second = s.child(PIRATE_1)
    assert second.phase_name == "fight" and second.fight()[1] == 25  # pirates (0, 1): the 7/25


def test_no_hazard_left_at_all_goes_straight_to_the_pirates():
    # green, the last hazard (food 0: F 1; 0/1/3) beaten with an empty hazard discard pile
    s = play(scenario(hazards={FOOD0: 1}, stack={WEAK: 5}), FOOD0, FIGHT_0, DRAW_FREE, WEAK, END_FIGHT)
    assert s.step_name == "pirates" and s.legal_actions() == [PIRATE_0, PIRATE_1]
    assert counts(s, "discard") == {FOOD0: 1, WEAK: 1}


def test_losing_the_last_green_hazard_still_changes_the_step():
    start = scenario(hazards={FOOD1: 1}, stack={DISTRACTED: 5})
    s = play(start, FOOD1, FIGHT_0, DRAW_FREE, DISTRACTED, END_FIGHT)
    # 1 - (-1) = 2 life lost; budget 2 lets the distracted go: destroy it
    assert s.life == 18 and s.legal_actions() == [DONE, destroy(0)]
    s = s.child(destroy(0))
    assert s.step_name == "yellow" and counts(s, "hazards") == {FOOD1: 1}
    assert left_game(start, s) == {DISTRACTED: 1}


# ---- draws ---------------------------------------------------------------------------------------------


def test_first_free_draw_is_mandatory():
    s = scenario(hazard=FOOD1, stack={WEAK: 3})
    assert s.legal_actions() == [DRAW_FREE]
    with pytest.raises(IllegalActionError):
        s.child(END_FIGHT)
    with pytest.raises(IllegalActionError):
        s.child(DRAW_PAID)
    s = play(s, DRAW_FREE, WEAK)
    assert s.legal_actions() == [DRAW_FREE, DRAW_PAID, END_FIGHT]
    assert s.table == [(0, WEAK, "L")]


@pytest.mark.parametrize("hazard, free", [(FOOD0, 1), (FOOD1, 2), (FOOD2, 3), (REALIZATION3, 4), (WEAPON4, 5)])
def test_free_draws_per_hazard_group_then_paid_draws_cost_1_life(hazard, free):
    s = scenario(hazard=hazard, life=10, stack={WEAK: 8})
    for _ in range(free):
        s = play(s, DRAW_FREE, WEAK)
    assert DRAW_FREE not in s.legal_actions()
    assert [f for _, _, f in s.table] == ["L"] * free and s.life == 10
    s = s.child(DRAW_PAID)
    assert s.life == 9
    s = s.child(WEAK)
    assert s.table[-1] == (free, WEAK, "")  # the paid card lies on the right
    s = play(s, DRAW_PAID, WEAK)
    assert s.life == 8


def test_paid_draw_needs_a_life_point_and_robinson_may_sit_at_0():
    s = scenario(hazard=FOOD1, life=1, table=[(WEAK, "L")], stack={WEAK: 3})
    s = play(s, DRAW_PAID, WEAK)
    assert s.life == 0 and not s.is_terminal()
    assert DRAW_PAID not in s.legal_actions()


def test_a_paid_draw_ends_the_free_draws():
    s = scenario(hazard=WEAPON4, life=10, table=[(WEAK, "L")], stack={WEAK: 5})
    s = play(s, DRAW_PAID, WEAK)
    assert DRAW_FREE not in s.legal_actions()


# ---- fight resolution ----------------------------------------------------------------------------------


def test_win_ties_win_and_the_hazard_becomes_a_knowledge_card_in_the_discard_pile():
    # yellow, repeat (F 3; 2/5/8): H 5
    # [0] L genius 2  [1] L focused 1  [2] R weapon 2      total 5 = H: a tie wins
    s = scenario(
        step=1, hazard=REPEAT2, life=10, table=[(GENIUS, "L"), (FOCUSED, "L"), WEAPON2], stack={WEAK: 2}, discard={EATING: 1}
    )
    assert s.fight() == (5, 5)
    won = s.child(END_FIGHT)
    assert won.life == 10 and won.hazard == -1 and won.table == []
    assert counts(won, "discard") == {REPEAT2: 1, GENIUS: 1, FOCUSED: 1, WEAPON2: 1, EATING: 1}
    assert won.zone("removed").sum() == s.zone("removed").sum()
    assert won.current_player() == CHANCE and won.phase_name == "choose a hazard"  # the next turn
    assert counts(won, "hazard_discard") == {}


def test_loss_costs_the_difference_and_destroys_within_the_budget():
    # green, further exploring (F 3; 2/5/8): H 2
    # [0] L genius 2  [1] L weak 0  [2] L distracted -1  [3] L stupid -2   total -1: d = 3
    s = scenario(hazard=FOOD2, life=10, table=[(GENIUS, "L"), (WEAK, "L"), (DISTRACTED, "L"), (STUPID, "L")], stack={WEAK: 3})
    assert s.fight() == (-1, 2)
    lost = s.child(END_FIGHT)
    assert lost.life == 7 and lost.phase_name == "destroy cards after the loss"
    assert counts(lost, "hazard_discard") == {FOOD2: 1} and lost.hazard == -1
    # budget 3: every card fits (stupid is aging: cost 2)
    assert lost.legal_actions() == [DONE, destroy(0), destroy(1), destroy(2), destroy(3)]
    one = lost.child(destroy(1))  # weak, cost 1: budget 2 left; later slots only
    assert one.legal_actions() == [DONE, destroy(2), destroy(3)]
    both = one.child(destroy(3))  # stupid, cost 2: budget 0, so the loss is settled
    assert both.phase_name == "choose a hazard"
    assert left_game(s, both) == {WEAK: 1, STUPID: 1}
    assert counts(both, "discard") == {GENIUS: 1, DISTRACTED: 1}
    # genius and distracted (1 + 1): the last point cannot pay for the stupid (2): settled at once
    other = play(lost, destroy(0), destroy(2))
    assert other.phase_name == "choose a hazard"
    assert counts(other, "discard") == {WEAK: 1, STUPID: 1}
    assert left_game(s, other) == {GENIUS: 1, DISTRACTED: 1}
    # destroying nothing keeps every card
    kept = lost.child(DONE)
    assert counts(kept, "discard") == {GENIUS: 1, WEAK: 1, DISTRACTED: 1, STUPID: 1}


def test_loss_budget_too_small_for_an_aging_card_and_unused_budget_is_lost():
    # green, exploring (F 2; 1/3/6): H 1;  [0] L stupid -2  [1] L focused 1: total -1, d = 2
    s = scenario(
        hazard=FOOD1, life=10, table=[(STUPID, "L"), (FOCUSED, "L")], stack={WEAK: 3, DISTRACTED_AGING: 1}, hazards={FOOD0: 1}
    )
    lost = s.child(END_FIGHT)
    assert lost.life == 8 and lost.legal_actions() == [DONE, destroy(0), destroy(1)]
    after = lost.child(DONE)  # 2 points of budget unused
    # next fight: food 0 (F 1; 0/1/3): [0] L weak 0  [1] R distracted -1 (aging): d = 1
    s2 = play(after, FOOD0, FIGHT_0, DRAW_FREE, WEAK, DRAW_PAID, DISTRACTED_AGING)
    assert s2.fight() == (-1, 0) and s2.life == 7
    lost2 = s2.child(END_FIGHT)
    assert lost2.life == 6
    # budget 1 (not 1 + the 2 left over): the weak (cost 1), not the aging distracted (cost 2)
    assert lost2.legal_actions() == [DONE, destroy(0)]


def test_death_when_paying_a_life_point_he_does_not_have():
    # red cannibals: H 14, total 2: d = 12 with 11 life
    s = scenario(step=2, hazard=WEAPON4, life=11, table=[(GENIUS, "L")], stack={WEAK: 3})
    dead = s.child(END_FIGHT)
    assert dead.is_terminal() and not dead.won and dead.life == 0
    assert dead.current_player() == TERMINAL and dead.returns().tolist() == [-1.0]
    # exactly enough: 12 life -> 0, and the game goes on
    alive = scenario(step=2, hazard=WEAPON4, life=12, table=[(GENIUS, "L")], stack={WEAK: 3}).child(END_FIGHT)
    assert alive.life == 0 and not alive.is_terminal()


def test_ending_the_fight_while_behind_is_a_deliberate_loss():
    s = scenario(hazard=WEAPON4, life=10, table=[(WEAK, "L")], stack={GENIUS: 1})
    assert END_FIGHT in s.legal_actions()  # 0 vs 5, with free draws left
    assert s.child(END_FIGHT).life == 5


# ---- abilities, one by one ------------------------------------------------------------------------------


def test_plus_one_life_and_plus_two_life_capped_at_22():
    # raft (F 1): [0] L food 1 (+1 life)  [1] L eating 0 (+2 life)
    s = scenario(hazard=FOOD0, life=10, table=[(FOOD1, "L"), (EATING, "L")])
    assert s.legal_actions() == [DRAW_PAID, END_FIGHT, use(0), use(1)]
    s = s.child(use(0))
    assert s.life == 11 and use(0) not in s.legal_actions()  # once per fight
    assert s.table[0] == (0, FOOD1, "Lu")
    assert s.child(use(1)).life == 13
    capped = scenario(hazard=FOOD0, life=21, table=[(EATING, "L"), (FOOD2, "L")])
    assert capped.child(use(0)).life == 22
    assert play(capped, use(0), use(1)).life == 22


def test_plus_one_card_draws_onto_the_right_without_using_a_free_draw():
    # exploring (F 2): [0] L experience 2 (+1 card), one free draw made
    s = scenario(hazard=FOOD1, table=[(EXPERIENCE2, "L")], stack={GENIUS: 1, WEAK: 1})
    s = s.child(use(0))
    assert s.current_player() == CHANCE
    assert dict(s.chance_outcomes()) == {GENIUS: pytest.approx(0.5), WEAK: pytest.approx(0.5)}
    s = s.child(GENIUS)
    assert s.table == [(0, EXPERIENCE2, "Lu"), (1, GENIUS, "")]
    assert s.fight() == (4, 1)
    assert DRAW_FREE in s.legal_actions()  # still 1 of 2 free draws left
    s = play(s, DRAW_FREE, WEAK)
    assert DRAW_FREE not in s.legal_actions()


def test_plus_two_cards_may_stop_after_one():
    s = scenario(hazard=FOOD1, table=[(EQUIPMENT, "L")], stack={GENIUS: 1, WEAK: 2})
    s = play(s, use(0), GENIUS)
    assert s.phase_name == "+2 cards: draw the second?" and s.legal_actions() == [DONE, EXTRA_DRAW]
    stopped = s.child(DONE)
    assert stopped.table == [(0, EQUIPMENT, "Lu"), (1, GENIUS, "")] and stopped.phase_name == "fight"
    both = play(s, EXTRA_DRAW, WEAK)
    assert both.table == [(0, EQUIPMENT, "Lu"), (1, GENIUS, ""), (2, WEAK, "")] and both.phase_name == "fight"
    assert DRAW_FREE in both.legal_actions()  # the extra cards are not free draws


def test_plus_two_cards_second_card_not_offered_when_nothing_can_be_drawn():
    s = scenario(hazard=FOOD1, table=[(EQUIPMENT, "L")], stack={GENIUS: 1}, aging={})
    s = play(s, use(0), GENIUS)
    assert s.legal_actions() == [DONE]


def test_destroy_counts_0_cancels_the_ability_and_leaves_the_game_free_of_charge():
    # yellow, further exploring (F 3; 2/5/8): H 5
    # [0] L realization 2 (destroy)  [1] L stupid -2  [2] L genius 2      total 2
    s = scenario(step=1, hazard=FOOD2, life=10, table=[(REALIZATION2, "L"), (STUPID, "L"), (GENIUS, "L")], stack={WEAK: 3})
    assert s.fight() == (2, 5)
    s = s.child(use(0))
    assert s.legal_actions() == [target(1), target(2)]  # never itself
    s = s.child(target(1))
    assert s.table[1] == (1, STUPID, "Lx") and s.fight() == (4, 5)
    lost = s.child(END_FIGHT)  # d = 1
    assert lost.life == 9
    # the face-down stupid is not offered (it leaves anyway), and the budget is still the full 1
    assert lost.legal_actions() == [DONE, destroy(0), destroy(2)]
    settled = lost.child(DONE)
    assert left_game(s, settled) == {STUPID: 1}
    assert counts(settled, "discard") == {REALIZATION2: 1, GENIUS: 1}


def test_destroy_cancels_step_minus_1_and_double():
    # yellow, further exploring: books makes it green (H 2); destroying books restores H 5
    s = scenario(step=1, hazard=FOOD2, table=[(REALIZATION2, "L"), (BOOKS, "L")], stack={WEAK: 3})
    assert s.fight() == (2, 2)
    assert play(s, use(0), target(1)).fight() == (2, 5)
    # a doubled genius, then destroyed, counts 0
    s = scenario(hazard=FOOD2, table=[(REPEAT2, "L"), (GENIUS, "L"), (REALIZATION3, "L")], stack={WEAK: 3})
    s = play(s, use(0), target(1))
    assert s.fight()[0] == 2 + 4 + 3
    assert play(s, use(2), target(1)).fight()[0] == 2 + 3


def test_destroyed_card_ability_cannot_be_used():
    s = scenario(hazard=FOOD2, table=[(REALIZATION2, "L"), (FOOD1, "L")], stack={WEAK: 3})
    s = play(s, use(0), target(1))
    assert use(1) not in s.legal_actions()


def test_double_once_per_card_per_fight():
    # [0] L repeat 2  [1] L genius 2  [2] L repeat 1
    s = scenario(hazard=FOOD2, table=[(REPEAT2, "L"), (GENIUS, "L"), (REPEAT1, "L")], stack={WEAK: 3})
    assert s.fight()[0] == 5
    s = s.child(use(0))
    assert s.legal_actions() == [target(1), target(2)]
    s = s.child(target(1))
    assert s.fight()[0] == 2 + 4 + 1 and s.table[1] == (1, GENIUS, "L2")
    s = s.child(use(2))
    assert s.legal_actions() == [target(0)]  # genius is doubled already; never itself
    with pytest.raises(IllegalActionError):
        s.child(target(1))
    assert s.child(target(0)).fight()[0] == 4 + 4 + 1


def test_copy_uses_another_card_ability_again():
    # [0] L mimicry 1 (copy)  [1] L food 1 (+1 life)
    s = scenario(hazard=FOOD1, life=10, table=[(MIMICRY1, "L"), (FOOD1, "L")], stack={WEAK: 3})
    s = s.child(use(1))
    assert s.life == 11
    s = s.child(use(0))
    assert s.legal_actions() == [target(1)]  # a used ability can be copied
    s = s.child(target(1))
    assert s.life == 12 and s.phase_name == "fight"


def test_copy_cannot_copy_aging_abilities_or_a_copy():
    # two copies, scared (highest = 0), very tired (stop), hungry (-1 life), weapon (no ability)
    table = [(MIMICRY0, "L"), (MIMICRY1, "L"), (SCARED, "L"), (VERY_TIRED, "L"), (HUNGRY, "L"), WEAPON2]
    s = scenario(hazard=WEAPON4, table=table, stack={WEAK: 3})
    assert not any(USE_BASE <= a < TARGET_BASE for a in s.legal_actions())
    # with a food among them, each copy may target only the food
    s = scenario(hazard=WEAPON4, table=[*table, (FOOD1, "")], stack={WEAK: 3})
    assert play(s, use(0)).legal_actions() == [target(6)]


def test_copy_plus_two_cards():
    s = scenario(hazard=FOOD1, table=[(MIMICRY1, "L"), (EQUIPMENT, "L")], stack={WEAK: 2, GENIUS: 1})
    s = play(s, use(0), target(1), GENIUS)
    assert s.legal_actions() == [DONE, EXTRA_DRAW]
    s = play(s, EXTRA_DRAW, WEAK)
    assert s.table == [(0, MIMICRY1, "Lu"), (1, EQUIPMENT, "L"), (2, GENIUS, ""), (3, WEAK, "")]
    assert use(1) in s.legal_actions()  # equipment's own ability is still unused


def test_copy_two_x_exchange_may_replace_the_new_card():
    # [0] L mimicry 0  [1] L strategy 0 (2x exchange)  [2] L distracted -1
    s = scenario(hazard=WEAPON4, table=[(MIMICRY0, "L"), (STRATEGY0, "L"), (DISTRACTED, "L")], stack={FOCUSED: 1, GENIUS: 1})
    s = play(s, use(0), target(1))
    assert s.legal_actions() == [target(1), target(2)]  # the exchange never targets the mimicry
    s = play(s, target(2), FOCUSED)
    assert s.table[2] == (2, FOCUSED, "L")
    assert s.phase_name == "2x exchange: exchange again?"
    assert s.legal_actions() == [DONE, target(1), target(2)]
    s = play(s, target(2), GENIUS)  # replace the new card as well
    assert s.table == [(0, MIMICRY0, "Lu"), (1, STRATEGY0, "L"), (2, GENIUS, "L")]
    assert counts(s, "discard") == {DISTRACTED: 1, FOCUSED: 1} and s.phase_name == "fight"


def test_copy_sort():
    s = scenario(hazard=WEAPON4, table=[(MIMICRY1, "L"), (VISION2, "L")], stack={WEAK: 1, GENIUS: 1}, sort_draws="all_at_once")
    s = play(s, use(0), target(1), GENIUS, WEAK)
    assert s.phase_name == "sort the drawn cards"
    s = s.child(sort_action(2, -1, (1, 0)))  # weak on top, then genius
    s = s.child(DRAW_FREE)
    assert s.current_player() == 0 and s.table[-1] == (2, WEAK, "L")


def test_copy_step_minus_1_counts_as_one_more_step_card():
    # red, further exploring (F 3; 2/5/8): books -> yellow 5, the copy -> green 2
    s = scenario(step=2, hazard=FOOD2, table=[(MIMICRY1, "L"), (BOOKS, "L"), (REALIZATION3, "L")], stack={WEAK: 3})
    assert s.fight()[1] == 5
    s = play(s, use(0), target(1))
    assert s.fight()[1] == 2 and s.table[0] == (0, MIMICRY1, "Lus")
    assert play(s, use(2), target(0)).fight()[1] == 5  # the copy face down: one step -1 less


def test_step_minus_1_lowers_the_hazard_value_never_below_green():
    # wild animals (F 4; 4/7/11)
    for step, want in ((2, 7), (1, 4), (0, 4)):
        s = scenario(step=step, hazard=EXPERIENCE3, table=[(BOOKS, "L")], stack={WEAK: 3})
        assert s.fight()[1] == want, step
    # not an activated ability: nothing to use
    assert use(0) not in scenario(hazard=EXPERIENCE3, table=[(BOOKS, "L")], stack={WEAK: 3}).legal_actions()


def test_step_minus_1_has_no_effect_against_pirates():
    s = scenario(pirate=P6_20, table=[(BOOKS, "L"), (MIMICRY1, "L")], stack={WEAK: 3})
    assert s.fight()[1] == 20
    assert play(s, use(1), target(0)).fight()[1] == 20


def test_one_x_exchange_replaces_onto_the_same_side():
    # [0] L strategy 2 (1x exchange)  [1] L distracted -1  [2] R weak
    table = [(STRATEGY2, "L"), (DISTRACTED, "L"), WEAK]
    s = scenario(hazard=FOOD2, table=table, stack={GENIUS: 1})
    s = play(s, use(0))
    assert s.legal_actions() == [target(1), target(2)]
    left = play(s, target(1))
    assert left.current_player() == CHANCE and left.chance_outcomes() == [(GENIUS, 1.0)]
    left = left.child(GENIUS)
    assert left.table == [(0, STRATEGY2, "Lu"), (1, GENIUS, "L"), (2, WEAK, "")]
    assert counts(left, "discard") == {DISTRACTED: 1} and left.phase_name == "fight"
    # 2 left cards, one free draw still to come (the replacement is not a free draw)
    assert DRAW_FREE in left.legal_actions()
    right = play(s, target(2), GENIUS)
    assert right.table == [(0, STRATEGY2, "Lu"), (1, DISTRACTED, "L"), (2, GENIUS, "")]


def test_two_x_exchange_may_stop_after_one():
    # [0] L strategy 0 (2x exchange)  [1] L distracted -1
    s = scenario(hazard=FOOD2, table=[(STRATEGY0, "L"), (DISTRACTED, "L")], stack={WEAK: 2})
    s = play(s, use(0), target(1), WEAK)
    assert s.phase_name == "2x exchange: exchange again?" and s.legal_actions() == [DONE, target(1)]
    s = s.child(DONE)
    assert s.phase_name == "fight" and s.table == [(0, STRATEGY0, "Lu"), (1, WEAK, "L")]
    assert use(0) not in s.legal_actions()


def test_stop_drawn_as_a_replacement_on_the_left_ends_the_free_draws():
    # documented: a replacement onto the left is "drawn on the left"
    s = scenario(hazard=FOOD2, table=[(STRATEGY2, "L"), (DISTRACTED, "L")], stack={VERY_TIRED: 1, WEAK: 2})
    assert DRAW_FREE in s.legal_actions()
    s = play(s, use(0), target(1), VERY_TIRED)
    assert DRAW_FREE not in s.legal_actions()


def test_below_the_pile_can_bring_a_position_back():
    # The spec (Fridai's search): "copy + below the pile can loop". Two deceptions on the left and
    # nothing in the shuffled stack: each puts the other below and draws it straight back, unused.
    # [0] L deception 0  [1] L deception 1
    s = scenario(hazard=FOOD2, table=[(DECEPTION0, "L"), (DECEPTION1, "L")], aging={}, below_replacement="forced")
    first = play(s, use(0), target(1))  # deception 1 below, and back onto the left, unused
    assert first.table == [(0, DECEPTION0, "Lu"), (1, DECEPTION1, "L")]
    again = play(first, use(1), target(0), use(0), target(1))
    assert again == first and again.key() == first.key()  # a search's cycle guard can see it


def test_exchange_replacement_may_reshuffle_the_exchanged_card_back():
    # the stack is empty: the exchanged card goes to the discard pile, an aging card joins it,
    # and the replacement is drawn from the new stack
    s = scenario(hazard=FOOD2, table=[(STRATEGY2, "L"), (DISTRACTED, "L")], aging={HUNGRY: 1})
    s = play(s, use(0), target(1))
    assert s.chance_outcomes() == [(HUNGRY, 1.0)]
    s = s.child(HUNGRY)
    assert dict(s.chance_outcomes()) == {DISTRACTED: pytest.approx(0.5), HUNGRY: pytest.approx(0.5)}
    assert s.aging_entered == 10


def test_below_the_pile_from_the_left_with_a_replacement_drawn_later_from_the_bottom():
    # [0] L deception 1 (below the pile)  [1] L distracted -1  [2] R weak
    s = scenario(
        hazard=FOOD2,
        life=10,
        table=[(DECEPTION1, "L"), (DISTRACTED, "L"), WEAK],
        stack={GENIUS: 1, FOCUSED: 1},
        below_replacement="forced",
    )
    s = play(s, use(0), target(1))
    # the replacement comes from the shuffled part, never the card just put below
    assert dict(s.chance_outcomes()) == {GENIUS: 0.5, FOCUSED: 0.5}
    s = s.child(GENIUS)
    assert s.table == [(0, DECEPTION1, "Lu"), (1, GENIUS, "L"), (2, WEAK, "")]
    assert counts(s, "stack") == {FOCUSED: 1, DISTRACTED: 1} and counts(s, "discard") == {}
    s = play(s, DRAW_PAID, FOCUSED)  # the shuffled card first ...
    s = s.child(DRAW_PAID)  # ... then the distracted from the bottom, known: no chance node
    assert s.current_player() == 0 and s.table[-1] == (4, DISTRACTED, "")


def test_below_the_pile_from_the_right_draws_no_replacement():
    s = scenario(hazard=FOOD2, table=[(DECEPTION1, "L"), (DISTRACTED, "L"), WEAK], stack={GENIUS: 1})
    s = play(s, use(0), target(2))
    assert s.current_player() == 0 and s.phase_name == "fight"
    assert s.table == [(0, DECEPTION1, "Lu"), (1, DISTRACTED, "L")]
    assert counts(s, "stack") == {GENIUS: 1, WEAK: 1}


def test_draw_order_known_top_then_shuffled_middle_then_bottom():
    s = scenario(hazard=FOOD2, table=[(DECEPTION1, "L"), WEAK], stack={GENIUS: 1}, top=[FOCUSED])
    s = play(s, use(0), target(1))
    s = s.child(DRAW_FREE)  # the known top card
    assert s.current_player() == 0 and s.table[-1][1] == FOCUSED
    s = play(s, DRAW_FREE, GENIUS)
    s = s.child(DRAW_PAID)  # only the bottom card is left
    assert s.current_player() == 0 and s.table[-1] == (3, WEAK, "")


def test_sort_three_cards_discard_one_reorder_and_draw_in_that_order():
    # further exploring (F 3), [0] L vision 2 (sort 3 cards); stack: 5 shuffled cards
    s = scenario(
        hazard=FOOD2,
        life=10,
        table=[(VISION2, "L")],
        stack={GENIUS: 1, WEAK: 1, DISTRACTED: 1, FOCUSED: 2},
        sort_draws="all_at_once",
    )
    s = s.child(use(0))
    assert s.current_player() == CHANCE
    s = play(s, GENIUS)
    assert dict(s.chance_outcomes()) == {WEAK: 0.25, DISTRACTED: 0.25, FOCUSED: 0.5}
    s = play(s, WEAK, DISTRACTED)
    assert s.phase_name == "sort the drawn cards"
    assert len(s.legal_actions()) == 6 + 3 * 2  # keep all 3 in any order, or drop one and order 2
    # drawn: 0 genius, 1 weak, 2 distracted: discard the distracted, weak on top then genius
    s = s.child(sort_action(3, 2, (1, 0)))
    assert counts(s, "discard") == {DISTRACTED: 1}
    assert counts(s, "stack") == {WEAK: 1, GENIUS: 1, FOCUSED: 2}
    s = s.child(DRAW_FREE)
    assert s.current_player() == 0 and s.table[-1] == (1, WEAK, "L")
    s = s.child(DRAW_FREE)
    assert s.current_player() == 0 and s.table[-1] == (2, GENIUS, "L")
    s = s.child(DRAW_PAID)
    assert s.chance_outcomes() == [(FOCUSED, 1.0)]


def test_sort_takes_up_to_three_without_a_reshuffle_and_needs_a_stack():
    # 2 cards in the stack, a big discard pile: only the 2 are sorted
    s = scenario(hazard=FOOD2, table=[(VISION3, "L")], stack={WEAK: 1, GENIUS: 1}, discard={FOCUSED: 3}, sort_draws="all_at_once")
    s = play(s, use(0), WEAK, GENIUS)
    assert len(s.legal_actions()) == 2 + 2  # keep both in either order, or drop one
    assert s.aging_entered == scenario(hazard=FOOD2).aging_entered
    s = s.child(sort_action(2, 0, (1,)))
    assert counts(s, "stack") == {GENIUS: 1} and counts(s, "discard") == {FOCUSED: 3, WEAK: 1}
    # an empty stack: sort is not offered
    empty = scenario(hazard=FOOD2, table=[(VISION3, "L")], discard={FOCUSED: 3})
    assert use(0) not in empty.legal_actions()
    # known cards count: one known top card only
    one = play(scenario(hazard=FOOD2, table=[(VISION3, "L")], top=[GENIUS], sort_draws="all_at_once"), use(0))
    assert one.phase_name == "sort the drawn cards" and len(one.legal_actions()) == 2


def test_sort_one_card_at_a_time_may_stop_after_any_card():
    # the rule text: "draw UP TO 3 cards". Default: one at a time, and the player may stop.
    # [0] L vision 2 (sort 3 cards); stack: genius, weak, distracted, 2 focused (shuffled)
    s = scenario(hazard=FOOD2, life=10, table=[(VISION2, "L")], stack={GENIUS: 1, WEAK: 1, DISTRACTED: 1, FOCUSED: 2})
    s = play(s, use(0), DISTRACTED)
    assert s.phase_name == "sort 3 cards: draw another?" and s.legal_actions() == [DONE, EXTRA_DRAW]
    assert s.action_to_string(EXTRA_DRAW) == "draw another card"
    one = s.child(DONE)  # seen 1 card: put it back or discard it
    assert one.phase_name == "sort the drawn cards" and len(one.legal_actions()) == 2
    one = one.child(sort_action(1, 0, ()))
    assert counts(one, "discard") == {DISTRACTED: 1} and one.phase_name == "fight"
    assert counts(one, "stack") == {GENIUS: 1, WEAK: 1, FOCUSED: 2}
    two = play(s, EXTRA_DRAW, GENIUS)  # a second card, then stop
    assert two.phase_name == "sort 3 cards: draw another?"
    two = play(two, DONE, sort_action(2, -1, (1, 0)))  # genius on top, then the distracted
    assert play(two, DRAW_FREE).table[-1] == (1, GENIUS, "L")
    three = play(s, EXTRA_DRAW, GENIUS, EXTRA_DRAW, WEAK)  # the third card ends the drawing
    assert three.phase_name == "sort the drawn cards" and len(three.legal_actions()) == 12


def test_sort_stopped_early_keeps_the_known_cards_under_the_sorted_ones():
    # regression: a sort that stopped before taking every known top card wrote its cards over
    # them, and the cards left on top vanished from the game. Top: genius, weak, focused (known).
    s = scenario(hazard=FOOD2, life=10, table=[(VISION2, "L")], top=[GENIUS, WEAK, FOCUSED], stack={DISTRACTED: 1})
    s = play(s, use(0))  # the known genius is taken at once
    assert s.phase_name == "sort 3 cards: draw another?"
    s = play(s, DONE, sort_action(1, -1, (0,)))
    assert counts(s, "stack") == {GENIUS: 1, WEAK: 1, FOCUSED: 1, DISTRACTED: 1}
    s = play(s, DRAW_FREE, DRAW_FREE, DRAW_PAID)  # still known, in order: genius, weak, focused
    assert [c for _, c, _ in s.table[1:]] == [GENIUS, WEAK, FOCUSED] and s.current_player() == 0
    dropped = play(scenario(hazard=FOOD2, table=[(VISION2, "L")], top=[GENIUS, WEAK]), use(0), DONE, sort_action(1, 0, ()))
    assert counts(dropped, "stack") == {WEAK: 1} and counts(dropped, "discard") == {GENIUS: 1}


def test_sort_all_at_once_option_takes_min_3_and_the_stack():
    s = scenario(hazard=FOOD2, table=[(VISION2, "L")], stack={WEAK: 1, GENIUS: 1, FOCUSED: 2}, sort_draws="all_at_once")
    s = play(s, use(0), WEAK, GENIUS, FOCUSED)
    assert s.phase_name == "sort the drawn cards" and len(s.legal_actions()) == 12


def test_below_the_pile_replacement_is_optional_by_default():
    # the rule text: Robinson "can" draw a free replacement for a card put below from the left
    # [0] L deception 1 (below the pile)  [1] L distracted -1  [2] R weak; vs food 2 (green 2)
    s = scenario(hazard=FOOD2, life=10, table=[(DECEPTION1, "L"), (DISTRACTED, "L"), WEAK], stack={GENIUS: 1, FOCUSED: 1})
    s = play(s, use(0), target(1))
    assert s.phase_name == "below the pile: draw a free replacement?"
    assert s.legal_actions() == [DONE, EXTRA_DRAW] and s.action_to_string(EXTRA_DRAW) == "draw replacement"
    assert s.table == [(0, DECEPTION1, "Lu"), (2, WEAK, "")]
    declined = s.child(DONE)
    assert declined.phase_name == "fight" and declined.fight() == (1, 2)  # deception 1 + weak 0
    assert counts(declined, "stack") == {GENIUS: 1, FOCUSED: 1, DISTRACTED: 1}
    drawn = play(s, EXTRA_DRAW, GENIUS)  # onto the left, and free: no life paid
    assert drawn.table == [(0, DECEPTION1, "Lu"), (1, GENIUS, "L"), (2, WEAK, "")] and drawn.life == 10
    # from the right: no replacement, nothing asked
    right = play(scenario(hazard=FOOD2, table=[(DECEPTION1, "L"), WEAK], stack={GENIUS: 1}), use(0), target(1))
    assert right.phase_name == "fight"


def test_the_official_rule_loses_when_a_draw_needs_an_aging_card_and_none_is_left():
    # Friedemann Friese's rules change (BGG 1808313), the default: the fighting stack is empty,
    # the discard pile holds a weak card, the aging stack is empty; the fight's first (mandatory)
    # free draw needs a reshuffle, which needs an aging card: Robinson loses.
    s = scenario(hazard=FOOD2, life=15, discard={WEAK: 1}, aging={})
    assert s.game.spec.options["empty_aging"] == "lose" and s.legal_actions() == [DRAW_FREE]
    lost = s.child(DRAW_FREE)
    assert lost.is_terminal() and not lost.won and lost.returns().tolist() == [-1.0]
    # the same position under the first edition's reading goes on without an aging card
    old = scenario(hazard=FOOD2, life=15, discard={WEAK: 1}, aging={}, empty_aging="reshuffle").child(DRAW_FREE)
    assert not old.is_terminal() and old.chance_outcomes() == [(WEAK, 1.0)]
    # a draw from the stack is fine; the loss comes only with the reshuffle
    fine = scenario(hazard=FOOD2, life=15, stack={WEAK: 1}, discard={WEAK: 1}, aging={}).child(DRAW_FREE)
    assert not fine.is_terminal()


def test_draw_loses_tells_a_player_which_draws_end_the_game():
    from tablegym.envs.friday.rollout import k_policy_action
    from tablegym.envs.friday.turns import k_draw_loses

    # behind (1 vs 2) after the mandatory free draw, stack and aging stack empty, discard not
    s = scenario(hazard=FOOD2, life=15, table=[(FOCUSED, "L")], discard={WEAK: 1}, aging={})
    assert k_draw_loses(s.body) and DRAW_FREE in s.legal_actions()
    assert k_policy_action(s.body) == END_FIGHT  # trim takes the 1-life loss, not the lost game
    assert not k_draw_loses(
        scenario(hazard=FOOD2, table=[(FOCUSED, "L")], discard={WEAK: 1}, aging={}, empty_aging="reshuffle").body
    )
    assert not k_draw_loses(scenario(hazard=FOOD2, table=[(FOCUSED, "L")], discard={WEAK: 1}, aging={STUPID: 1}).body)


def test_stop_drawn_on_the_left_ends_the_free_draws():
    s = scenario(hazard=FOOD2, life=10, stack={VERY_TIRED: 1, WEAK: 3})
    s = play(s, DRAW_FREE, VERY_TIRED)
    assert s.legal_actions() == [DRAW_PAID, END_FIGHT]


def test_stop_drawn_on_the_right_does_not_end_the_free_draws():
    s = scenario(hazard=FOOD2, table=[(EXPERIENCE2, "L")], stack={VERY_TIRED: 1, WEAK: 3})
    s = play(s, use(0), VERY_TIRED)
    assert s.table[-1] == (1, VERY_TIRED, "") and DRAW_FREE in s.legal_actions()


def test_highest_card_0_each_scared_zeroes_one_card():
    # [0] scared  [1] genius 2  [2] focused 1: genius counts 0
    assert scenario(hazard=FOOD2, table=[(SCARED, "L"), (GENIUS, "L"), (FOCUSED, "L")]).fight()[0] == 1
    # two scared: genius and focused both count 0
    two = scenario(hazard=FOOD2, table=[(SCARED, "L"), (GENIUS, "L"), (FOCUSED, "L"), (SCARED, "L")])
    assert two.fight()[0] == 0
    # negative cards are not "highest": nothing to zero
    neg = scenario(hazard=FOOD2, table=[(SCARED, "L"), (DISTRACTED, "L"), (WEAK, "L")])
    assert neg.fight()[0] == -1
    # a face-down scared zeroes nothing
    down = scenario(hazard=FOOD2, table=[(SCARED, "Lx"), (GENIUS, "L")])
    assert down.fight()[0] == 2


def test_highest_card_0_applies_after_doubling():
    # [0] scared  [1] weapon 4  [2] realization 3  [3] repeat 1: 4+3+1, weapon zeroed: 4
    s = scenario(hazard=FOOD2, table=[(SCARED, "L"), (WEAPON4, "L"), (REALIZATION3, "L"), (REPEAT1, "L")])
    assert s.fight()[0] == 4
    # double the realization (6): now it is the highest and counts 0: 4 + 0 + 1
    assert play(s, use(3), target(2)).fight()[0] == 5


@pytest.mark.parametrize("won", [True, False])
def test_minus_life_aging_cards_charge_at_resolution(won):
    # [0] L hungry (-1 life)  [1] L very hungry (-2 life)  [2] L genius 2  [3] R realization 2
    table = [(HUNGRY, "L"), (VERY_HUNGRY, "L"), (GENIUS, "L"), REALIZATION2]
    s = scenario(hazard=FOOD0 if won else WEAPON4, step=2, life=15, table=table, stack={WEAK: 3})
    assert s.life == 15
    d = 0 if won else 14 - 4
    assert s.child(END_FIGHT).life == 15 - d - 3
    # the hungry destroyed earlier in the fight does not charge
    assert play(s, use(3), target(0), END_FIGHT).life == 15 - d - 2


def test_minus_life_charge_can_kill():
    s = scenario(hazard=FOOD0, life=2, table=[(HUNGRY, "L"), (VERY_HUNGRY, "L")], stack={WEAK: 3})
    dead = s.child(END_FIGHT)
    assert dead.is_terminal() and not dead.won and dead.life == 0


def test_minus_life_option_when_drawn():
    s = scenario(hazard=FOOD0, life=5, stack={HUNGRY: 1}, aging_life="when_drawn")
    s = play(s, DRAW_FREE, HUNGRY)
    assert s.life == 4
    assert s.child(END_FIGHT).life == 4  # charged once
    default = play(scenario(hazard=FOOD0, life=5, stack={HUNGRY: 1}), DRAW_FREE, HUNGRY)
    assert default.life == 5 and default.child(END_FIGHT).life == 4
    # when drawn with 0 life: he dies on the spot
    dead = play(scenario(hazard=FOOD0, life=0, stack={VERY_HUNGRY: 1}, aging_life="when_drawn"), DRAW_FREE, VERY_HUNGRY)
    assert dead.is_terminal() and not dead.won


def test_abilities_option_after_free():
    table = [(FOOD1, "L")]
    any_time = scenario(hazard=FOOD2, life=10, table=table, stack={WEAK: 5})
    assert use(0) in any_time.legal_actions() and STOP_FREE not in any_time.legal_actions()
    s = scenario(hazard=FOOD2, life=10, table=table, stack={WEAK: 5}, abilities="after_free")
    assert use(0) not in s.legal_actions() and STOP_FREE in s.legal_actions()
    stopped = s.child(STOP_FREE)
    assert use(0) in stopped.legal_actions() and DRAW_FREE not in stopped.legal_actions()
    # all free draws made: abilities open by themselves
    done = play(s, DRAW_FREE, WEAK, DRAW_FREE, WEAK)
    assert use(0) in done.legal_actions()
    # a paid draw ends the free draws too
    assert use(0) in play(s, DRAW_PAID, WEAK).legal_actions()


# ---- aging and the empty fighting stack ------------------------------------------------------------


def test_reshuffle_adds_the_top_aging_card_normal_before_difficult():
    s = scenario(hazard=FOOD2, stack={}, discard={WEAK: 2, GENIUS: 1}, aging={HUNGRY: 1, VERY_HUNGRY: 1, MORONIC: 1, SUICIDAL: 1})
    entered = s.aging_entered
    s = s.child(DRAW_FREE)
    assert s.chance_outcomes() == [(HUNGRY, 1.0)]  # the normal card is on top
    s = s.child(HUNGRY)
    assert s.aging_entered == entered + 1 and counts(s, "discard") == {}
    assert dict(s.chance_outcomes()) == {WEAK: 0.5, GENIUS: 0.25, HUNGRY: 0.25}
    s = s.child(GENIUS)
    assert counts(s, "stack") == {WEAK: 2, HUNGRY: 1} and s.table == [(0, GENIUS, "L")]
    # next empty stack: the difficult cards come, in any order
    s = scenario(hazard=FOOD2, discard={WEAK: 1}, aging={VERY_HUNGRY: 1, MORONIC: 1, SUICIDAL: 1})
    assert dict(s.child(DRAW_FREE).chance_outcomes()) == {
        VERY_HUNGRY: pytest.approx(1 / 3),
        MORONIC: pytest.approx(1 / 3),
        SUICIDAL: pytest.approx(1 / 3),
    }


def test_table_cards_are_not_reshuffled():
    s = scenario(hazard=FOOD2, table=[(GENIUS, "L")], discard={WEAK: 1}, aging={STUPID: 1})
    s = play(s, DRAW_FREE, STUPID)
    assert dict(s.chance_outcomes()) == {WEAK: 0.5, STUPID: 0.5}


def test_empty_aging_stack_option_reshuffle_goes_on_without_aging():
    s = scenario(hazard=FOOD2, discard={WEAK: 1}, aging={}, empty_aging="reshuffle")
    s = s.child(DRAW_FREE)
    assert s.chance_outcomes() == [(WEAK, 1.0)]
    assert s.aging_entered == 10


def test_empty_aging_stack_option_lose():
    s = scenario(hazard=FOOD2, table=[(GENIUS, "L")], discard={WEAK: 1}, aging={}, empty_aging="lose")
    lost = s.child(DRAW_FREE)
    assert lost.is_terminal() and not lost.won and lost.returns().tolist() == [-1.0]


def test_nothing_to_draw_at_all_lets_the_fight_end():
    s = scenario(hazard=FOOD2, aging={})
    assert s.legal_actions() == [END_FIGHT]


# ---- pirates -------------------------------------------------------------------------------------------


def test_pirate_fight_cannot_be_ended_while_behind_only_conceded():
    # 6/20, every free card drawn, no life left to pay: [0] L genius 2
    s = scenario(pirate=P6_20, life=0, table=[(GENIUS, "L")], stack={WEAK: 5}, free_drawn=6)
    assert s.fight() == (2, 20)
    assert s.legal_actions() == [CONCEDE]
    lost = s.child(CONCEDE)
    assert lost.is_terminal() and not lost.won and lost.returns().tolist() == [-1.0]
    ahead = scenario(
        pirate=P6_20,
        table=[
            (WEAPON4, "L"),
            (WEAPON4, "L"),
            (REALIZATION3, "L"),
            (GENIUS, "L"),
            (WEAPON2, "L"),
            (WEAPON2, "L"),
            FOCUSED,
            FOCUSED,
            FOCUSED,
        ],
    )
    assert ahead.fight() == (20, 20) and END_FIGHT in ahead.legal_actions()


def test_pirates_are_fought_in_the_chosen_order_and_beating_both_wins():
    # [0] L weapon 4 x2 ... total 20 vs the 6/20, the 7/25 beaten already
    table = [(WEAPON4, "L"), (WEAPON4, "L"), (REALIZATION3, "L"), (GENIUS, "L"), (WEAPON2, "L"), (WEAPON2, "L")]
    s = scenario(pirate=P6_20, pirates=(P7_25, P6_20), beaten=True, table=table + [FOCUSED] * 3)
    won = s.child(END_FIGHT)
    assert won.is_terminal() and won.won and won.returns().tolist() == [1.0] and won.pirates_beaten == 2
    # the first pirate beaten: the second fight starts at once
    first = scenario(pirate=P6_20, pirates=(P6_20, P7_25), table=table + [FOCUSED] * 3, stack={WEAK: 5})
    nxt = first.child(END_FIGHT)
    assert not nxt.is_terminal() and nxt.pirates_beaten == 1 and nxt.fight() == (0, 25)
    assert nxt.legal_actions() == [DRAW_FREE, CONCEDE]


def test_pirate_free_cards():
    s = scenario(pirate=P10_40, stack={WEAK: 8, FOCUSED: 3})
    for _ in range(10):
        s = play(s, DRAW_FREE, WEAK if s.zone("stack")[WEAK] else FOCUSED)
    assert DRAW_FREE not in s.legal_actions()


def test_pirate_7_16_paid_cards_cost_2_life():
    s = scenario(pirate=P7_16, life=10, table=[(GENIUS, "L")], stack={WEAK: 5})
    s = s.child(DRAW_PAID)
    assert s.life == 8
    assert play(s, WEAK, DRAW_PAID).life == 6
    assert scenario(pirate=P7_16, life=2, table=[(GENIUS, "L")], stack={WEAK: 5}).child(DRAW_PAID).life == 0
    # 1 life cannot pay for a card
    assert scenario(pirate=P7_16, life=1, table=[(GENIUS, "L")], stack={WEAK: 5}).legal_actions() == [DRAW_FREE, CONCEDE]


def test_pirate_9_22_half_count_aging_first():
    # 4 cards, 2 count: stupid -2 (aging first), then weapon 4: 2
    s = scenario(pirate=P9_22, table=[(WEAPON4, "L"), (GENIUS, "L"), (FOCUSED, "L"), (STUPID, "L")])
    assert s.fight() == (2, 22)
    # 5 cards, 3 count: distracted -1 and stupid -2 (aging), then weapon 4: 1
    s = scenario(pirate=P9_22, table=[(WEAPON4, "L"), (GENIUS, "L"), (FOCUSED, "L"), (STUPID, "L"), (DISTRACTED_AGING, "L")])
    assert s.fight()[0] == 1
    # 3 aging cards among 4: 2 count, the least negative first: -1 + -2
    s = scenario(pirate=P9_22, table=[(WEAPON4, "L"), (MORONIC, "L"), (STUPID, "L"), (DISTRACTED_AGING, "L")])
    assert s.fight()[0] == -3
    # no aging: the highest ceil(3/2) = 2 cards
    assert scenario(pirate=P9_22, table=[(WEAPON4, "L"), (GENIUS, "L"), (FOCUSED, "L")]).fight()[0] == 6
    # a face-down card is not face up: 2 face-up cards, 1 counts
    assert scenario(pirate=P9_22, table=[(WEAPON4, "L"), (GENIUS, "L"), (STUPID, "Lx")]).fight()[0] == 4
    # documented: "highest card = 0" first, then the choice: scared 0 (aging), genius 2
    assert scenario(pirate=P9_22, table=[(SCARED, "L"), (WEAPON4, "L"), (GENIUS, "L")]).fight()[0] == 2


def test_pirate_10_52_each_face_up_card_counts_plus_1():
    s = scenario(pirate=P10_52, table=[(WEAPON4, "L"), (WEAPON4, "L"), (GENIUS, "L"), (WEAK, "L"), (FOCUSED, "Lx")])
    assert s.fight() == (4 + 4 + 2 + 0 + 4, 52)


def test_pirate_5_star_two_per_aging_card_entered_including_destroyed_ones():
    # level 1: 10 aging cards; 3 still on the aging stack: 7 entered (some destroyed: nowhere now)
    s = scenario(
        pirate=P5_STAR,
        table=[(STUPID, "L")],
        discard={HUNGRY: 1},
        stack={WEAK: 1},
        aging={VERY_HUNGRY: 1, MORONIC: 1, SUICIDAL: 1},
    )
    assert s.aging_entered == 7 and s.fight() == (-2, 14)
    # 5 free cards
    assert PIRATES[P5_STAR].free == 5
    # an aging card enters during the fight (empty stack): the pirate grows by 2
    s = play(scenario(pirate=P5_STAR, discard={WEAK: 1}, aging={MORONIC: 1, SUICIDAL: 1}), DRAW_FREE)
    before = s.fight()[1]
    s = s.child(MORONIC)
    assert (before, s.fight()[1]) == (2 * 8, 2 * 9)


def test_pirate_star_star_fights_all_remaining_hazards():
    # undefeated: cannibals (F 5; red 14) and 2 raft hazards (F 1; red 3): H 20, 7 free cards
    s = scenario(pirate=P_STAR_STAR, hazards=(), hazard_discard={WEAPON4: 1, FOOD0: 2}, stack={WEAK: 8})
    assert s.fight() == (0, 20)
    for _ in range(7):
        s = play(s, DRAW_FREE, WEAK)
    assert DRAW_FREE not in s.legal_actions()
    # nothing undefeated: H 0, no free cards, the fight may end at once
    none = scenario(pirate=P_STAR_STAR, hazards=(), stack={WEAK: 8})
    assert none.fight() == (0, 0) and END_FIGHT in none.legal_actions()


def test_pirate_star_star_with_every_hazard_undefeated():
    # all 30 hazards undefeated: red values 10x3 + 8x6 + 6x8 + 4x11 + 2x14 = 198 (beyond int8),
    # free cards 10x1 + 8x2 + 6x3 + 4x4 + 2x5 = 70
    s = scenario(pirate=P_STAR_STAR, hazards=(), hazard_discard={t: int(COUNT[t]) for t in range(24)}, stack={WEAK: 8})
    assert s.fight() == (0, 198)
    # the observation (core.py's layout) carries them: hazard value / 20 at 16, free cards / 5 at 17
    obs = s.observation()
    assert obs[16] == pytest.approx(198 / 20) and obs[17] == pytest.approx(70 / 5)


# ---- the score --------------------------------------------------------------------------------------


SCORE_TABLE = [
    (WEAPON4, "L"),
    (WEAPON4, "L"),
    (WEAPON2, "L"),
    (WEAPON2, "L"),
    (GENIUS, "L"),
    (REALIZATION3, "L"),
    FOCUSED,
    FOCUSED,
    FOCUSED,
]


def score_position() -> FridayState:
    # pirate 6/20, the other already beaten; total 4+4+2+2+2+3+1+1+1 = 20
    # owned: table (values 20), discard stupid + 2 weak, stack distracted; 7 life; 1 hazard undefeated
    return scenario(
        pirate=P6_20,
        pirates=(P7_25, P6_20),
        beaten=True,
        life=7,
        table=SCORE_TABLE,
        discard={STUPID: 1, WEAK: 2},
        stack={DISTRACTED: 1},
        hazards=(),
        hazard_discard={FOOD0: 1},
    )


def test_score_of_a_won_game():
    won = score_position().child(END_FIGHT)
    assert won.won
    # values 20 + 0 - 1 = 19; aging -5; pirates 2 x 15; life 7 x 5; undefeated -3
    assert won.score == 19 - 5 + 30 + 35 - 3 == 76


def test_score_of_a_lost_game_has_no_life_bonus():
    lost = score_position().child(CONCEDE)
    assert not lost.won and lost.score == 19 - 5 + 15 - 3 == 26


def test_score_of_a_death_in_a_hazard_fight_counts_the_hazard_as_undefeated():
    s = scenario(step=2, hazard=WEAPON4, life=1, table=[(GENIUS, "L")], stack={WEAK: 1}, hazards=(), aging={MORONIC: 1})
    dead = s.child(END_FIGHT)
    # owned: genius 2 (table), weak 0 (stack); the cannibals fought are undefeated
    assert dead.is_terminal() and dead.score == 2 + 0 - 3


def test_a_card_destroyed_in_the_fight_robinson_dies_in_is_not_scored():
    # realization 2 destroys moronic -4; still 2 short of the cannibals' 8 with 1 life: dead
    s = scenario(
        step=2,
        hazard=WEAPON4,
        life=1,
        table=[(REALIZATION2, "L"), (MORONIC, "L")],
        stack={WEAK: 1},
        hazards=(),
        aging={SUICIDAL: 1},
    )
    s = s.child(USE_BASE + 0).child(TARGET_BASE + 1)
    dead = s.child(END_FIGHT)
    # owned: realization 2 (table), weak 0 (stack); moronic was face down; the cannibals are undefeated
    assert dead.is_terminal() and not dead.won
    assert dead.score == 2 + 0 - 3


# ---- an independent model of the fight, checked on random positions -------------------------------------


def ref_total(rows: list[tuple[int, str]], pirate: int | None) -> int:
    """Fighting total per the spec (and the documented choices): face-up cards, doubled, each
    "highest card = 0" zeroing the highest positive card; the pirate specials."""
    face = [(c, f) for c, f in rows if "x" not in f]
    vals = [int(VALUE[c]) * (2 if "2" in f else 1) for c, f in face]
    for _ in range(sum(1 for c, _ in face if ABILITY[c] == HIGHEST0)):
        if vals and max(vals) > 0:
            vals[vals.index(max(vals))] = 0
    if pirate == P9_22:
        aging = sorted((v for (c, _), v in zip(face, vals) if KIND[c] == AGING), reverse=True)
        others = sorted((v for (c, _), v in zip(face, vals) if KIND[c] != AGING), reverse=True)
        return sum((aging + others)[: (len(vals) + 1) // 2])
    return sum(vals) + (len(vals) if pirate == P10_52 else 0)


def ref_value(state: FridayState, pirate: int | None) -> int:
    """Hazard value per the spec: the step lowered by face-up step -1 cards, or the pirate's."""
    rows = [(c, f) for _, c, f in state.table if "x" not in f]
    if pirate is None:
        steps = sum(1 for c, f in rows if ABILITY[c] == STEP or "s" in f)
        return SPEC_GROUPS[HAZARD_GROUP[state.hazard]][2][max(state.step - steps, 0)]
    if pirate == P5_STAR:
        return 2 * state.aging_entered
    if pirate == P_STAR_STAR:
        left = state.zone("hazards") + state.zone("hazard_discard")
        return sum(int(left[t]) * SPEC_GROUPS[HAZARD_GROUP[t]][2][2] for t in range(24))
    return SPEC_PIRATES[pirate][1]


table_cards = st.lists(st.tuples(st.sampled_from(range(NUM_TYPES)), st.sampled_from(["L", "", "Lx", "2", "L2"])), max_size=9)


@settings(max_examples=150, deadline=None)
@given(
    rows=table_cards,
    foe=st.one_of(
        st.tuples(st.just("hazard"), st.integers(0, 23), st.integers(0, 2)),
        st.tuples(st.just("pirate"), st.integers(0, 9), st.just(3)),
    ),
)
def test_fight_total_and_value_match_an_independent_model(rows, foe):
    kind, who, step = foe
    used = np.zeros(NUM_TYPES, dtype=int)
    for c, _ in rows:
        used[c] += 1
    if kind == "hazard":
        used[who] += 1
    assume((used <= card_total(3)).all())
    s = scenario(level=3, step=step, hazard=who, table=rows) if kind == "hazard" else scenario(level=3, pirate=who, table=rows)
    pirate = who if kind == "pirate" else None
    assert s.fight() == (ref_total(rows, pirate), ref_value(s, pirate))


@settings(max_examples=100, deadline=None)
@given(stack=st.dictionaries(st.integers(0, NUM_TYPES - 1), st.integers(1, 8), min_size=1, max_size=12))
def test_draw_probabilities_are_the_stack_counts(stack):
    stack = {t: min(n, int(card_total(3)[t])) for t, n in stack.items() if t != FOOD1}
    stack = {t: n for t, n in stack.items() if n}
    assume(stack)
    s = scenario(level=3, hazard=FOOD1, stack=stack, aging={}, hazards=()).child(DRAW_FREE)
    outs = s.chance_outcomes()
    n = sum(stack.values())
    assert [o for o, _ in outs] == sorted(stack)
    assert all(p == pytest.approx(stack[o] / n, abs=1e-12) for o, p in outs)
    assert sum(p for _, p in outs) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(hazards=st.dictionaries(st.integers(0, 23), st.integers(1, 2), min_size=1, max_size=24), first=st.integers(0, 23))
def test_hazard_draw_probabilities_are_the_hazard_stack_counts(hazards, first):
    hazards = {t: min(n, int(COUNT[t])) for t, n in hazards.items()}
    s = scenario(hazards=hazards, stack={WEAK: 1})
    n = sum(hazards.values())
    outs = dict(s.chance_outcomes())
    assert outs == {t: pytest.approx(k / n, abs=1e-12) for t, k in hazards.items()}
    if n >= 2 and first in hazards:
        rest = dict(hazards)
        rest[first] -= 1
        outs = dict(s.child(first).chance_outcomes())
        assert outs == {t: pytest.approx(k / (n - 1), abs=1e-12) for t, k in rest.items() if k}
    elif n == 1:
        assert s.child(next(iter(hazards))).legal_actions() == [FIGHT_0, SKIP]


@settings(max_examples=60, deadline=None)
@given(aging=st.dictionaries(st.sampled_from(NORMAL_AGING + DIFFICULT_AGING), st.integers(1, 2), min_size=1))
def test_aging_draw_probabilities_normal_before_difficult(aging):
    aging = {t: min(n, int(COUNT[t])) for t, n in aging.items()}
    s = scenario(level=3, hazard=FOOD1, discard={WEAK: 1}, aging=aging).child(DRAW_FREE)
    normal = {t: n for t, n in aging.items() if t in NORMAL_AGING}
    layer = normal or aging
    n = sum(layer.values())
    assert dict(s.chance_outcomes()) == {t: pytest.approx(k / n, abs=1e-12) for t, k in layer.items()}


# ---- random games: conservation, the fight model, determinism ---------------------------------------------


ZONES = ("stack", "discard", "table", "aging", "hazards", "hazard_discard", "removed")


def destroy_cost(card: int) -> int:
    """Destroy cost: 2 for aging cards, 1 for starting and knowledge cards."""
    return 2 if KIND[card] == AGING else 1


def can_draw(state: FridayState) -> bool:
    """A fighting card can be drawn: from the stack, or after (aging and) a reshuffle."""
    return (
        len(state.table) < MAX_SLOTS and (state.zone("stack").sum() + state.zone("discard").sum() + state.zone("aging").sum()) > 0
    )


def usable(state: FridayState, src: int, a: int) -> bool:
    """Ability ``a`` used from slot ``src`` has something to act on (the spec, and the core's
    documented choice that "sort" needs a non-empty stack)."""
    others = [(c, f) for slot, c, f in state.table if slot != src and "x" not in f]
    if a in (LIFE1, LIFE2, STEP):
        return True
    if a in (CARD1, CARD2):
        return can_draw(state)
    if a == SORT:
        return state.zone("stack").sum() > 0
    if a == DOUBLE:
        return any("2" not in f for _, f in others)
    if a == COPY:
        return any(copyable(state, src, c) for c, _ in others)
    return bool(others)  # destroy, exchange, below the pile


def copyable(state: FridayState, src: int, card: int) -> bool:
    """A copy in slot ``src`` may copy ``card``: not an aging ability, not a copy, and usable."""
    b = int(ABILITY[card])
    return b not in (NONE, COPY) and KIND[card] != AGING and usable(state, src, b)


def valid_targets(state: FridayState, src: int, a: int) -> list[int]:
    out = []
    for slot, c, f in state.table:
        if slot == src or "x" in f:
            continue
        if (a == DOUBLE and "2" in f) or (a == COPY and not copyable(state, src, c)):
            continue
        out.append(target(slot))
    return sorted(out)


SORT_CHOICES = {1: 2, 2: 4, 3: 12}
"""Arrangements of n sorted cards: keep all in any order, or drop one and order the rest."""


class Tracker:
    """Follows one game and checks each position against the spec, with its own model of the
    fight: conservation, the score, which fight actions are legal, and what each one does."""

    def __init__(self, game: FridayGame) -> None:
        self.game = game
        self.options = game.spec.options
        self.full = card_total(game.level)
        self.removed: np.ndarray | None = None  # cards out of the game in the last position
        self.table = np.zeros(NUM_TYPES, dtype=np.int64)
        self.step = self.aging_in = self.beaten = 0
        self.first_pirate: int | None = None  # index into state.pirates chosen to fight first
        self.max_life = 20 if (game.level == 4 and game.max_life_level4 == 20) else 22
        self.new_fight()
        self.expect: tuple | None = None  # a card to appear on the table, checked at the next decision
        self.leaving: np.ndarray | None = None  # "removed" once the last fight is settled

    def new_fight(self) -> None:
        self.free = 0  # free draws made
        self.ended = False  # free draws over: a paid draw, a stop on the left, "stop free draws"
        self.pending: tuple[int, int] | None = None  # (ability, source slot) being used
        self.budget = 0
        self.last_destroyed = -1
        self.sort_n = 0
        self.sort_max = 0  # cards "sort 3 cards" may take: min(3, stack)

    def pirate(self, state: FridayState) -> int | None:
        """The pirate being fought: the one chosen first, then the other."""
        if state.hazard >= 0 or state.step < 3 or self.first_pirate is None or state.is_terminal():
            return None
        k = self.first_pirate if state.pirates_beaten == 0 else 1 - self.first_pirate
        if state.phase_name == "fight":
            assert state.pirate_fought == k
        return state.pirates[k]

    def free_allowed(self, state: FridayState) -> int:
        pirate = self.pirate(state)
        if pirate is None:
            return SPEC_GROUPS[HAZARD_GROUP[state.hazard]][1]
        if pirate == P_STAR_STAR:
            left = state.zone("hazards") + state.zone("hazard_discard")
            return sum(int(left[t]) * SPEC_GROUPS[HAZARD_GROUP[t]][1] for t in range(24))
        return SPEC_PIRATES[pirate][0]

    def fight_actions(self, state: FridayState) -> list[int]:
        """The legal actions of the fight phase, by the spec."""
        pirate = self.pirate(state)
        tot, h = state.fight()
        allowed = self.free_allowed(state)
        can = can_draw(state)
        free_left = self.free < allowed and not self.ended
        started = self.free >= min(1, allowed) or not can
        cost = 2 if pirate == P7_16 else 1
        after_free = self.options["abilities"] == "after_free"
        out = []
        if free_left and can:
            out.append(DRAW_FREE)
        if started and can and state.life >= cost:
            out.append(DRAW_PAID)
        if started and (pirate is None or tot >= h):
            out.append(END_FIGHT)
        if after_free and free_left and self.free >= 1:
            out.append(STOP_FREE)
        if pirate is not None:
            out.append(CONCEDE)
        if not after_free or self.ended or self.free >= allowed:
            for slot, c, f in state.table:
                a = int(ABILITY[c])
                if "x" not in f and "u" not in f and KIND[c] != AGING and a not in (NONE, STEP) and usable(state, slot, a):
                    out.append(use(slot))
        return sorted(out)

    def check(self, state: FridayState) -> None:
        z = {name: state.zone(name) for name in ZONES}
        for name, c in z.items():
            assert (c >= 0).all(), (name, c)
        everything = sum(z.values())
        if state.hazard >= 0:
            everything[state.hazard] += 1
        assert (everything == self.full).all(), everything - self.full
        assert (state.zone("owned") == z["stack"] + z["discard"] + z["table"]).all()
        if self.removed is not None:
            assert (z["removed"] >= self.removed).all(), "a card came back into the game"
            # only fight cards leave the game (destroyed, or removed after a loss)
            assert (z["removed"] - self.removed <= self.table).all(), "a card left the game from off the table"
        self.removed, self.table = z["removed"], z["table"]
        assert self.step <= state.step <= 3 and self.aging_in <= state.aging_entered
        assert self.beaten <= state.pirates_beaten
        self.step, self.aging_in, self.beaten = state.step, state.aging_entered, state.pirates_beaten
        assert state.aging_entered == self.full[29:].sum() - z["aging"].sum()
        assert 0 <= state.life <= self.max_life
        # the score formula, recomputed
        owned = state.zone("owned")
        if state.is_terminal():  # the face-down cards of a fight lost by dying are gone too
            for _, card, flags in state.table:
                owned[card] -= "x" in flags
        undefeated = z["hazards"].sum() + z["hazard_discard"].sum() + (state.hazard >= 0)
        want = (
            sum(int(VALUE[t]) * int(owned[t]) for t in range(NUM_TYPES) if KIND[t] != AGING)
            - 5 * int(owned[29:].sum())
            + 15 * state.pirates_beaten
            + (5 * state.life if state.won else 0)
            - 3 * int(undefeated)
        )
        assert state.score == want
        if any(ABILITY[c] == STOP and "L" in f for _, c, f in state.table):
            self.ended = True  # "stop" drawn on the left
        if state.is_terminal():
            assert state.legal_actions() == [] and state.returns().tolist() == [1.0 if state.won else -1.0]
            self.expect = None  # a draw can end the game (a "-1 life" drawn, or no aging card left)
            return
        if state.current_player() == CHANCE:
            outs = state.chance_outcomes()
            assert outs and sum(p for _, p in outs) == pytest.approx(1.0, abs=1e-9)
            assert all(p > 0 for _, p in outs) and len({o for o, _ in outs}) == len(outs)
            for o, _ in outs:
                assert o >= PIRATE_OUTCOME or z["stack"][o] + z["aging"][o] + z["hazards"][o] > 0
            return
        self.check_decision(state)

    def check_decision(self, state: FridayState) -> None:
        legal = state.legal_actions()
        phase = state.phase_name
        if self.expect is not None:  # the card drawn by the last decision: its side, its life cost
            kept, side, life = self.expect
            self.expect = None
            rows = cards_at(state)
            new = [slot for slot in rows if slot not in kept]
            assert all(slot in rows and rows[slot][0] == kept[slot][0] for slot in kept), (kept, state.table)
            assert len(new) == 1 and ("L" in rows[new[0]][1]) == (side == "L"), (state.table, side)
            card = rows[new[0]][0]
            if self.options["aging_life"] == "when_drawn":
                life -= {MINUS_LIFE1: 1, MINUS_LIFE2: 2}.get(int(ABILITY[card]), 0)
            assert state.life == life
        if phase == "fight":
            self.pending = None
        if self.leaving is not None and phase != "destroy cards after the loss":
            assert (state.zone("removed") >= self.leaving).all()
            self.leaving = None
        if phase in ("fight", "choose a target", "+2 cards: draw the second?", "2x exchange: exchange again?"):
            pirate = self.pirate(state)
            rows = [(c, f) for _, c, f in state.table]
            assert state.fight() == (ref_total(rows, pirate), ref_value(state, pirate))
        if phase == "fight":
            assert legal == self.fight_actions(state), (legal, self.fight_actions(state), state.to_text())
        elif phase == "choose a target":
            a, src = self.pending
            assert legal == valid_targets(state, src, a)
        elif phase == "2x exchange: exchange again?":
            assert legal == [DONE] + valid_targets(state, self.pending[1], EXCHANGE2)
        elif phase in ("+2 cards: draw the second?", "below the pile: draw a free replacement?"):
            assert legal == [DONE] + ([EXTRA_DRAW] if can_draw(state) else [])
            assert self.pending[0] == (CARD2 if phase.startswith("+2") else BELOW)
            assert self.pending[0] == CARD2 or self.options["below_replacement"] == "optional"
        elif phase == "sort 3 cards: draw another?":  # one card at a time, "up to 3"
            assert self.options["sort_draws"] == "one_at_a_time" and self.sort_n < self.sort_max
            assert legal == [DONE, EXTRA_DRAW]
        elif phase == "sort the drawn cards":
            assert len(legal) == SORT_CHOICES[self.sort_n]
        elif phase == "destroy cards after the loss":
            rows = cards_at(state)
            fits = [
                destroy(j)
                for j, (c, f) in rows.items()
                if j > self.last_destroyed and "x" not in f and destroy_cost(c) <= self.budget
            ]
            assert fits and legal == [DONE] + sorted(fits)
            assert state.destroy_budget == self.budget
        elif phase == "choose a hazard":
            assert legal == ([FIGHT_0, FIGHT_1] if state.hazard_choice[1] >= 0 else [FIGHT_0, SKIP])
        elif phase == "choose the pirate to fight first":
            assert legal == [PIRATE_0, PIRATE_1]

    def transition(self, before: FridayState, action: int, after: FridayState) -> None:
        """Life and cards around a decision, worked from the spec."""
        if before.current_player() != 0:
            return
        charge_when_drawn = self.options["aging_life"] == "when_drawn"
        rows = cards_at(before)
        if action in (PIRATE_0, PIRATE_1):
            self.first_pirate = action - PIRATE_0
        if action in (FIGHT_0, FIGHT_1, PIRATE_0, PIRATE_1):
            self.new_fight()
        if action == STOP_FREE:
            self.ended = True
        if action == DRAW_FREE:
            self.free += 1
            self.expect = (rows, "L", before.life)
        if action == DRAW_PAID:  # 1 life, 2 against the 7/16
            self.ended = True
            self.expect = (rows, "R", before.life - (2 if self.pirate(before) == P7_16 else 1))
        if action == EXTRA_DRAW and before.phase_name == "sort 3 cards: draw another?":
            self.sort_n += 1
        elif action == EXTRA_DRAW and before.phase_name == "below the pile: draw a free replacement?":
            self.expect = (rows, "L", before.life)
        elif action == EXTRA_DRAW:
            self.expect = (rows, "R", before.life)
        if action == DONE and before.phase_name == "sort 3 cards: draw another?":
            assert after.phase_name == "sort the drawn cards"
        if USE_BASE <= action < TARGET_BASE:
            slot = action - USE_BASE
            self.ability(before, after, int(ABILITY[rows[slot][0]]), slot)
            if not after.is_terminal():
                assert "u" in cards_at(after)[slot][1]
        if TARGET_BASE <= action < DESTROY_BASE:
            j = action - TARGET_BASE
            a, src = self.pending
            card, flags = rows[j]
            if a == COPY:
                self.ability(before, after, int(ABILITY[card]), src)
            elif a == DESTROY:
                assert cards_at(after)[j][0] == card and set(cards_at(after)[j][1]) == set(flags) | {"x"}
            elif a == DOUBLE:
                assert cards_at(after)[j][0] == card and set(cards_at(after)[j][1]) == set(flags) | {"2"}
            elif a in (EXCHANGE1, EXCHANGE2, BELOW):
                rest = {slot: row for slot, row in rows.items() if slot != j}
                optional = a == BELOW and self.options["below_replacement"] == "optional"
                if (a != BELOW or "L" in flags) and not optional:  # a replacement onto the same side
                    self.expect = (rest, "L" if "L" in flags else "R", before.life)
                elif optional and "L" in flags:  # the replacement "can" be drawn: asked next
                    assert cards_at(after) == rest and after.phase_name == "below the pile: draw a free replacement?"
                else:
                    assert cards_at(after) == rest
                    assert after.zone("stack")[card] == before.zone("stack")[card] + 1
        if DESTROY_BASE <= action < SORT_BASE:
            j = action - DESTROY_BASE
            self.budget -= destroy_cost(rows[j][0])
            self.last_destroyed = j
            assert after.zone("removed")[rows[j][0]] == before.zone("removed")[rows[j][0]] + 1
        if action == END_FIGHT:
            self.end_fight(before, after, charge_when_drawn)

    def ability(self, before: FridayState, after: FridayState, a: int, src: int) -> None:
        """Using ability ``a`` (a card's own, or one copied) from slot ``src``."""
        self.pending = (a, src)
        if a == LIFE1 or a == LIFE2:
            assert after.life == min(self.max_life, before.life + (1 if a == LIFE1 else 2))
        elif a == STEP:
            assert "s" in cards_at(after)[src][1]
        elif a in (CARD1, CARD2):
            self.expect = (cards_at(before), "R", before.life)
        elif a == SORT:
            self.sort_max = min(3, int(before.zone("stack").sum()))
            self.sort_n = self.sort_max if self.options["sort_draws"] == "all_at_once" else 1

    def end_fight(self, before: FridayState, after: FridayState, charge_when_drawn: bool) -> None:
        tot, h = before.fight()
        charge = (
            0
            if charge_when_drawn
            else sum(
                1 if ABILITY[c] == MINUS_LIFE1 else 2
                for _, c, f in before.table
                if "x" not in f and ABILITY[c] in (MINUS_LIFE1, MINUS_LIFE2)
            )
        )
        lose = max(h - tot, 0)
        self.new_fight()
        if lose + charge > before.life:
            assert after.is_terminal() and not after.won and after.life == 0
            return
        assert after.life == before.life - lose - charge
        # cards destroyed by an ability leave the game once the fight is over (after a loss's destroys)
        self.leaving = before.zone("removed").copy()
        for _, c, f in before.table:
            self.leaving[c] += "x" in f
        if before.hazard < 0:
            assert after.pirates_beaten == before.pirates_beaten + 1
        elif lose == 0:  # won: the hazard is a knowledge card in the discard pile now
            assert after.zone("discard")[before.hazard] >= before.zone("discard")[before.hazard] + 1
        else:  # lost: back among the undefeated hazards (a new step may have reshuffled them)
            assert after.zone("hazard_discard")[before.hazard] + after.zone("hazards")[before.hazard] > 0
            self.budget = lose
            self.last_destroyed = -1


def pick(state: FridayState, rng: np.random.Generator, greedy: float) -> int:
    """A random action. With probability ``greedy`` per decision it plays sensibly instead: a
    fight ends once it is won, cards are drawn while behind (paid ones while life lasts), and
    abilities are tried, so that random games live long enough to meet the pirates."""
    if state.current_player() == CHANCE:
        outs = state.chance_outcomes()
        return outs[rng.choice(len(outs), p=np.array([p for _, p in outs]))][0]
    legal = state.legal_actions()
    if CONCEDE in legal and len(legal) > 1:
        legal.remove(CONCEDE)
    if rng.random() >= greedy:
        return legal[rng.integers(len(legal))]
    if state.phase_name == "choose a hazard":  # the lower hazard value now
        first, second = (SPEC_GROUPS[HAZARD_GROUP[t]][2][state.step] if t >= 0 else 99 for t in state.hazard_choice)
        if state.hazard_choice[1] < 0:
            return FIGHT_0 if first <= 3 else SKIP
        return FIGHT_0 if first <= second else FIGHT_1
    if state.phase_name == "destroy cards after the loss":  # the worst card that fits, if bad
        cards = cards_at(state)
        bad = [a for a in legal if a != DONE and VALUE[cards[a - DESTROY_BASE][0]] < 0]
        return bad[0] if bad else DONE
    if state.phase_name != "fight":
        return legal[rng.integers(len(legal))]
    tot, h = state.fight()
    uses = [a for a in legal if USE_BASE <= a < TARGET_BASE]
    if tot >= h and END_FIGHT in legal and rng.random() < 0.9:
        return END_FIGHT
    if uses and rng.random() < 0.4:
        return uses[rng.integers(len(uses))]
    if DRAW_FREE in legal:
        return DRAW_FREE
    if DRAW_PAID in legal and (state.life > 8 and h - tot <= 3 or state.step == 3) and len(state.table) < 8:
        return DRAW_PAID
    if END_FIGHT in legal:
        return END_FIGHT
    return legal[rng.integers(len(legal))]


class Stats:
    """What random play went through: decisions, phases, kinds of actions, last steps, wins."""

    def __init__(self) -> None:
        self.decisions = 0
        self.games = 0
        self.won = 0
        self.phases: set[str] = set()
        self.actions: set[int | str] = set()
        self.steps: set[int] = set()


def action_kind(a: int) -> int | str:
    if USE_BASE <= a < TARGET_BASE:
        return "use"
    if TARGET_BASE <= a < DESTROY_BASE:
        return "target"
    if DESTROY_BASE <= a < SORT_BASE:
        return "destroy"
    return "sort" if a >= SORT_BASE else a


def play_game(state: FridayState, rng: np.random.Generator, greedy: float, stats: Stats) -> list[int]:
    """Play ``state`` out at random, checking every position; the actions and outcomes played."""
    tracker = Tracker(state.game)
    tracker.check(state)
    actions = []
    for _ in range(state.game.spec.max_game_length):
        if state.is_terminal():
            break
        a = pick(state, rng, greedy)
        if state.current_player() == 0:
            stats.decisions += 1
            stats.phases.add(state.phase_name)
            stats.actions.add(action_kind(a))
        child = state.child(a)
        tracker.transition(state, a, child)
        tracker.check(child)
        actions.append(a)
        state = child
    assert state.is_terminal(), "a game ran past max_game_length"
    stats.games += 1
    stats.steps.add(state.step)
    stats.won += state.won
    return actions


OPTION_SETS = [
    {},
    {"abilities": "after_free"},
    {"aging_life": "when_drawn"},
    {"empty_aging": "reshuffle"},
    {"below_replacement": "forced", "sort_draws": "all_at_once"},
]
STRONG_DECK = {
    DISTRACTED: 5,
    WEAK: 8,
    EATING: 1,
    FOCUSED: 3,
    GENIUS: 1,
    WEAPON4: 2,
    WEAPON2: 2,
    REALIZATION3: 1,
    EXPERIENCE3: 1,
    STRATEGY3: 1,
    VISION3: 1,
    REPEAT2: 1,
    MIMICRY1: 1,
    DECEPTION1: 1,
    EQUIPMENT: 2,
    STRATEGY0: 2,
    BOOKS: 1,
    FOOD1: 2,
    REALIZATION1: 1,
    VISION2: 1,
}
"""A deck that has beaten many hazards: random play from it reaches the pirates."""


def late_start(level: int, rng: np.random.Generator, options: dict) -> FridayState:
    """A red step with 3 hazards left, or the pirate choice, with a strong deck."""
    pirates = tuple(int(p) for p in rng.choice(10, size=2, replace=False))
    if rng.random() < 0.5:
        return scenario(
            level=level,
            step=2,
            pirates=pirates,
            stack=STRONG_DECK,
            hazards={FOOD0: 1, DECEPTION0: 1, FOOD2: 1},
            hazard_discard={REALIZATION2: 1},
            **options,
        )
    return scenario(
        level=level,
        step=3,
        pirates=pirates,
        stack=STRONG_DECK,
        hazards=(),
        hazard_discard={FOOD0: 1, REALIZATION2: 1},
        discard={STUPID: 1},
        **options,
    )


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_random_play_soak_keeps_every_invariant(level):
    """Whole games from the setup and late games from a strong deck, every option, every level:
    conservation, the fight model, life on paid draws and at resolution, the score formula."""
    rng = np.random.default_rng(100 + level)
    stats = Stats()
    while stats.decisions < 6000:
        options = dict(OPTION_SETS[stats.games % len(OPTION_SETS)])
        if level == 4 and stats.games % 3 == 0:
            options["max_life_level4"] = 20
        if stats.games % 2:
            start = late_start(level, rng, options)
        else:
            start = FridayGame(level=level, **options).new_initial_state()
        play_game(start, rng, greedy=0.9, stats=stats)
    assert {
        "fight",
        "choose a hazard",
        "choose a target",
        "destroy cards after the loss",
        "choose the pirate to fight first",
    } <= stats.phases
    assert {"use", "target", "destroy", DRAW_FREE, DRAW_PAID, END_FIGHT, FIGHT_0, FIGHT_1} <= stats.actions
    assert 3 in stats.steps


def test_random_play_reaches_every_phase_and_wins_some_games():
    rng = np.random.default_rng(7)
    stats = Stats()
    while stats.decisions < 4000:
        play_game(late_start(1 + stats.games % 4, rng, {}), rng, greedy=1.0, stats=stats)
    assert stats.phases == {
        "choose a hazard",
        "fight",
        "choose a target",
        "+2 cards: draw the second?",
        "2x exchange: exchange again?",
        "sort the drawn cards",
        "destroy cards after the loss",
        "choose the pirate to fight first",
        "sort 3 cards: draw another?",
        "below the pile: draw a free replacement?",
    }
    assert {"sort", SKIP, CONCEDE, EXTRA_DRAW, DONE} <= stats.actions
    assert stats.won > 0


def test_seeded_game_replays_identically():
    game = FridayGame(level=2)
    actions = play_game(game.new_initial_state(), np.random.default_rng(2024), greedy=1.0, stats=Stats())
    assert len(actions) > 50

    def replay() -> list[FridayState]:
        states = [game.new_initial_state()]
        for a in actions:
            states.append(states[-1].child(a))
        return states

    a, b = replay(), replay()
    assert all(x == y and x.key() == y.key() and x.to_text() == y.to_text() for x, y in zip(a, b))
    assert a[-1].is_terminal() and a[-1].score == b[-1].score
    # different positions of the game have different keys
    assert len({x.key() for x in a}) == len({x.body.tobytes() for x in a})
    # the same again from a pickled mid-game position
    mid = len(a) // 2
    again = pickle.loads(pickle.dumps(a[mid]))
    for act in actions[mid:]:
        again = again.child(act)
    assert again == a[-1]
    # sampling the chance nodes with the same seed gives the same position
    s = game.new_initial_state()
    assert sample_chance(s, np.random.default_rng(5)) == sample_chance(s, np.random.default_rng(5))


def test_sample_chance_draws_with_the_stack_probabilities():
    rng = np.random.default_rng(11)
    s = scenario(hazard=FOOD2, stack={WEAK: 3, GENIUS: 1}).child(DRAW_FREE)
    drawn = [sample_chance(s, rng).table[0][1] for _ in range(4000)]
    assert abs(drawn.count(GENIUS) - 1000) < 4 * 27  # binomial(4000, 1/4): sd 27
    # through an aging draw and the reshuffle: the normal card first, then the new stack
    s = scenario(hazard=FOOD2, discard={WEAK: 1}, aging={SCARED: 1, MORONIC: 1, SUICIDAL: 1}).child(DRAW_FREE)
    for _ in range(50):
        t = sample_chance(s, rng)
        assert t.current_player() == 0 and counts(t, "aging") == {MORONIC: 1, SUICIDAL: 1}
        assert t.table[0][1] in (WEAK, SCARED)


def split_sample(state: FridayState, rng_state: np.ndarray) -> FridayState:
    """Resolve the pending draws with the search's splitmix64 sampler."""
    s = state.array
    state_sample(s, rng_state)
    return FridayState(state.game, s)


def test_search_sampler_draws_with_the_chance_probabilities():
    rng_state = np.array([2024], dtype=np.int64)
    n = 4000
    # a fighting card: 3 weak, 1 genius
    s = scenario(hazard=FOOD2, stack={WEAK: 3, GENIUS: 1}).child(DRAW_FREE)
    assert abs([split_sample(s, rng_state).table[0][1] for _ in range(n)].count(GENIUS) - n / 4) < 4 * 27
    # two hazards from {food 0 x2, books, cannibals}: food first 1/2, then food again 1/3
    s = scenario(hazards={FOOD0: 2, BOOKS: 1, WEAPON4: 1}, stack={WEAK: 1})
    choices = [split_sample(s, rng_state).hazard_choice for _ in range(n)]
    assert abs(sum(a == FOOD0 for a, _ in choices) - n / 2) < 4 * 32
    assert abs(choices.count((FOOD0, FOOD0)) - n / 6) < 4 * 24
    assert all(a >= 0 and b >= 0 for a, b in choices)
    # the aging card on a reshuffle: normal first (scared 2 : hungry 1), never a difficult one
    s = scenario(hazard=FOOD2, discard={WEAK: 1}, aging={SCARED: 2, HUNGRY: 1, MORONIC: 1, SUICIDAL: 1})
    s = s.child(DRAW_FREE)
    left = [counts(split_sample(s, rng_state), "aging") for _ in range(3000)]
    assert all(a[MORONIC] == a[SUICIDAL] == 1 for a in left)
    assert abs(sum(a.get(SCARED, 0) == 1 for a in left) - 2000) < 4 * 26
    # the pirates: uniform, two different ones
    game = FridayGame(level=1)
    pairs = [split_sample(game.new_initial_state(), rng_state).pirates for _ in range(n)]
    assert all(a != b for a, b in pairs)
    firsts = np.bincount([a for a, _ in pairs], minlength=10)
    assert (abs(firsts - n / 10) < 4 * 19).all()


def test_action_names_round_trip():
    s = scenario(step=1, hazard=FOOD2, table=[(VISION2, "L"), (STRATEGY0, "L"), GENIUS], stack={WEAK: 3, FOCUSED: 1})
    sorting = play(s, use(0), WEAK)  # "sort 3 cards: draw another?"
    for state in (s, play(s, use(1)), sorting, play(sorting, EXTRA_DRAW, WEAK, EXTRA_DRAW, FOCUSED), play(s, END_FIGHT)):
        assert state.current_player() == 0
        for a in state.legal_actions():
            assert state.string_to_action(state.action_to_string(a)) == a
    assert s.action_to_string(use(0)) == "use slot 0 vision 2 (sort 3 cards)"
    assert s.child(DRAW_FREE).action_to_string(WEAK) == "weak 0"
    with pytest.raises(IllegalActionError):
        s.string_to_action("fight second hazard")


def test_child_leaves_the_parent_unchanged():
    s = scenario(hazard=FOOD2, table=[(VISION2, "L"), (GENIUS, "L")], stack={WEAK: 3})
    before = s.array
    s.child(use(0))
    assert np.array_equal(s.array, before)


def test_illegal_actions_raise_illegal_action_error():
    s = scenario(hazard=FOOD1, stack={WEAK: 3})
    with pytest.raises(IllegalActionError, match="legal actions are"):
        s.child(END_FIGHT)
    with pytest.raises(IllegalActionError):
        s.child(DRAW_FREE).child(GENIUS)  # genius is not in the stack
    with pytest.raises(IllegalActionError):
        s.child(NUM_ACTIONS)
