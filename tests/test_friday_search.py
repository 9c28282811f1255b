"""Fridai's evaluation, action filtering and best-first search, on positions scripted by chance.

Chance outcomes are card types, so ``state.child(outcome)`` deals exactly the card a test wants.
"""

from __future__ import annotations

import numpy as np
import pytest

from tablegym.envs.core import CHANCE
from tablegym.envs.friday.cards import RATING
from tablegym.envs.friday.core import FridayGame, sample_chance
from tablegym.envs.friday.heuristics import DESTROY_MACRO, LOSS_SCORE, WIN_SCORE, destroy_choice, fridai_eval, search_moves
from tablegym.envs.friday.layout import (
    DESTROY_BASE,
    DONE,
    DRAW_FREE,
    DRAW_PAID,
    END_FIGHT,
    FIGHT_0,
    FIGHT_1,
    P_DESTROY,
    P_HAZARD,
    PIRATE_OUTCOME,
    TARGET_BASE,
    USE_BASE,
)
from tablegym.models.agents import make_agent, make_evaluator
from tablegym.models.friday.agents import MOVE_FILTER, rule_action
from tablegym.search.agents import BestFirstAgent
from tablegym.search.bestfirst import MAX_MOVES

FRIDAY = FridayGame()  # the default rules (level 1), as the agents are built for


def play_legally(s, choose, rng, *, cap: int | None = None) -> int:
    """Play ``s`` to its end, ``choose(s, rng)`` deciding and ``rng`` dealing, every action checked
    legal: the number of decisions (each count below ``cap`` where one is given)."""
    n = 0
    while not s.is_terminal():
        a = choose(s, rng)
        assert a in s.legal_actions()
        s = sample_chance(s.child(a), rng)
        n += 1
        assert cap is None or n < cap
    return n


DISTRACTED, WEAK, EATING, FOCUSED, GENIUS = 24, 25, 26, 27, 28
STUPID = 33
RAFT_FOOD, RAFT_REALIZATION, REPEAT_1, CANNIBALS = 0, 3, 11, 23


def dealt(state, *outcomes):
    """Apply chance outcomes (they must be pending) one after the other."""
    for o in outcomes:
        assert state.current_player() == CHANCE
        state = state.child(o)
    return state


def start(level: int = 1, pirates=(0, 1), aging=None, hazards=(RAFT_FOOD, CANNIBALS)):
    """A game after the setup: the given pirates (and level-2+ aging card) and the first two hazards."""
    s = dealt(FridayGame(level=level).new_initial_state(), *(PIRATE_OUTCOME + p for p in pirates))
    if aging is not None:
        s = dealt(s, aging)
    return dealt(s, *hazards)


def test_fridai_eval_of_the_starting_deck_is_worked_by_hand():
    # 18 starting cards, ratings: distracted -1 x5, weak 0 x8, eating 0 + 3 (+2 life), focused 1 x3, genius 2
    s = start()
    assert sum(RATING[t] for t in (DISTRACTED,) * 5 + (EATING, GENIUS) + (FOCUSED,) * 3) == 3
    assert fridai_eval(s._s, 0, np.zeros(1)) == pytest.approx(20 * 1e7 + 1000 * 3 / 18)


def test_fridai_eval_scores_a_win_highest_and_a_loss_lowest():
    s = start()
    s = s.child(FIGHT_1)  # cannibals: 5 to beat at green, one free card
    s = dealt(s.child(DRAW_FREE), DISTRACTED)
    for _ in range(17):  # pay 17 life for the rest of the deck (sum 0), then lose by 5 with 3 life: dead
        s = s.child(DRAW_PAID)
        s = dealt(s, s.chance_outcomes()[0][0])
    assert s.life == 3 and s.fight() == (0, 5)
    lost = s.child(END_FIGHT)
    assert lost.is_terminal() and not lost.won
    assert fridai_eval(lost._s, 0, np.zeros(1)) == LOSS_SCORE < fridai_eval(s._s, 0, np.zeros(1)) < WIN_SCORE


def _lost_fight_table():
    """Level 2 with "stupid" shuffled in; fight the raft (0 to beat, one free card) and lose by 3:
    left: distracted -1; right (paid): stupid -2, weak 0. Budget 3."""
    s = start(level=2, aging=STUPID, hazards=(RAFT_REALIZATION, CANNIBALS))
    s = dealt(s.child(FIGHT_0).child(DRAW_FREE), DISTRACTED)
    s = dealt(s.child(DRAW_PAID), STUPID)
    s = dealt(s.child(DRAW_PAID), WEAK)
    assert s.fight() == (-3, 0)
    s = s.child(END_FIGHT)
    assert s.phase == P_DESTROY and s.life == 20 - 2 - 3
    return s


def test_destroy_choice_takes_the_most_negative_subset_within_the_budget():
    s = _lost_fight_table()
    slots = np.empty(64, dtype=np.int64)
    n = destroy_choice(s.body, slots)
    card_of = {slot: card for slot, card, _ in s.table}
    chosen = sorted(card_of[int(j)] for j in slots[:n])
    assert chosen == sorted([DISTRACTED, STUPID])  # cost 1 + 2 = 3, ratings -1 - 2; weak 0 stays
    assert search_moves(s.body, np.empty(MAX_MOVES, dtype=np.int64)) == 1  # only the macro


def test_the_destroy_macro_removes_the_chosen_cards_and_moves_on():
    s = _lost_fight_table()
    agent = BestFirstAgent(make_evaluator(FRIDAY, "fridai"), nodes=50, move_filter=MOVE_FILTER)
    rng = np.random.default_rng(0)
    removed_before = s.zone("removed").copy()
    while s.phase == P_DESTROY:
        s = s.child(agent(s, rng))
    removed = s.zone("removed") - removed_before
    assert removed[DISTRACTED] == 1 and removed[STUPID] == 1 and removed.sum() == 2
    assert s.zone("discard")[WEAK] == 1


def test_search_moves_filter_nothing_without_abilities_on_the_table():
    s = start(hazards=(REPEAT_1, CANNIBALS))
    s = s.child(FIGHT_0)
    s = dealt(s.child(DRAW_FREE), WEAK)
    s = dealt(s.child(DRAW_FREE), WEAK)
    out = np.empty(MAX_MOVES, dtype=np.int64)
    n = search_moves(s.body, out)
    assert sorted(out[:n].tolist()) == sorted(s.legal_actions())  # no abilities yet: nothing filtered


def test_search_plays_only_legal_actions():
    agent = make_agent(FRIDAY, "bestfirst:nodes=200")
    s = start(pirates=(0, 1))
    rng = np.random.default_rng(1)
    for _ in range(60):
        if s.is_terminal():
            break
        if s.current_player() == CHANCE:
            s = sample_chance(s, rng)
            continue
        a = agent(s, rng)
        assert a in s.legal_actions()
        s = s.child(a)


def test_root_values_at_a_hazard_choice_are_the_children_scores_with_budget_zero():
    s = start(hazards=(RAFT_FOOD, CANNIBALS))
    assert s.phase == P_HAZARD
    agent = BestFirstAgent(make_evaluator(FRIDAY, "fridai"), nodes=1, move_filter=MOVE_FILTER)
    action = agent(s, np.random.default_rng(0))
    polled = agent.polled
    # both children are decisions without a pending draw: their scores are exact
    for i, a in enumerate((FIGHT_0, FIGHT_1)):
        child_score = fridai_eval(s.child(a)._s, 0, np.zeros(1))
        assert agent.values[i] >= child_score
    assert action in (FIGHT_0, FIGHT_1) and polled == 1


def test_search_is_deterministic_under_a_seed():
    def game(seed):
        agent = make_agent(FRIDAY, "bestfirst:nodes=300")
        rng = np.random.default_rng(seed)
        s = sample_chance(FridayGame(level=1).new_initial_state(), rng)
        actions = []
        while not s.is_terminal() and len(actions) < 40:
            a = agent(s, rng)
            actions.append(a)
            s = sample_chance(s.child(a), rng)
        return actions

    assert game(3) == game(3)


def test_several_worlds_split_the_budget_and_play_the_best_mean_value():
    from tablegym.envs.friday.core import KERNELS, state_determinize
    from tablegym.envs.friday.heuristics import search_moves
    from tablegym.search.bestfirst import best_first, kernel_args

    s = sample_chance(FridayGame(level=1).new_initial_state(), np.random.default_rng(8)).child(FIGHT_0)
    s = sample_chance(s.child(DRAW_FREE), np.random.default_rng(8))  # mid-fight: draw, pay, end, abilities
    agent = BestFirstAgent(make_evaluator(FRIDAY, "fridai"), nodes=301, worlds=3, move_filter=MOVE_FILTER)
    action = agent(s, np.random.default_rng(1))
    polled = agent.polled
    assert polled <= 301
    # the same three searches by hand: budgets 101, 100, 100, one rng state carried through
    rng_state = np.array([np.random.default_rng(1).integers(1, 2**62)], dtype=np.int64)
    moves = np.empty(MAX_MOVES, dtype=np.int64)
    n = search_moves(s.body, moves)
    assert n >= 2
    total, values = np.zeros(n), np.zeros(MAX_MOVES)
    k = MOVE_FILTER.kernels(KERNELS)
    args = kernel_args(k, make_evaluator(FRIDAY, "fridai").kernel, 0, 1)
    for budget in (101, 100, 100):
        root = s.array
        state_determinize(root, rng_state)
        best_first(root, budget, *args, np.zeros(1), rng_state, values)
        total += values[:n]
    assert action == moves[int(np.argmax(total))]
    assert make_agent(FRIDAY, "bestfirst:nodes=50,worlds=5").name == "bestfirst:nodes=50,worlds=5"


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_rule_agent_plays_whole_games_legally(level):
    rng = np.random.default_rng(level)
    for _ in range(20):
        play_legally(sample_chance(FridayGame(level=level).new_initial_state(), rng), rule_action, rng, cap=3000)


def test_search_only_moves_are_numbered_above_the_legal_ones():
    assert DESTROY_MACRO > DESTROY_BASE and DONE < USE_BASE < TARGET_BASE


def test_determinize_fixes_the_order_of_the_shuffled_stack_and_keeps_every_card():
    from tablegym.envs.core import HEADER
    from tablegym.envs.friday.core import state_determinize
    from tablegym.envs.friday.layout import BOTTOM, BOTTOM_N

    s = start(hazards=(CANNIBALS, RAFT_FOOD)).child(FIGHT_0)  # cannibals: five free cards
    arr = s.array
    state_determinize(arr, np.array([7], dtype=np.int64))
    slots = arr[HEADER:].view(np.int8)
    order = [int(slots[BOTTOM + i]) for i in range(int(slots[BOTTOM_N]))]
    world = type(s)(s.game, arr)
    assert (world.zone("stack") == s.zone("stack")).all() and len(order) == 18
    for _ in range(5):
        world = world.child(DRAW_FREE)
        assert world.current_player() != CHANCE  # the next card is known: no chance node
    assert [card for _, card, _ in world.table] == order[:5]
    arr2 = s.array
    state_determinize(arr2, np.array([7], dtype=np.int64))
    assert np.array_equal(arr, arr2)  # the same seed samples the same world
