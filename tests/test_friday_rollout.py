"""The compiled trimming player and flat Monte-Carlo planning over its rollouts (envs/friday/rollout.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegym.envs.core import HEADER
from tablegym.envs.friday.cards import CARDS, NUM_TYPES, VALUE
from tablegym.envs.friday.core import FridayGame, FridayState, sample_chance
from tablegym.envs.friday.heuristics import outcome_eval
from tablegym.envs.friday.layout import CONCEDE, DRAW_FREE, END_FIGHT, FIGHT_0, FIGHT_1, P_DESTROY, P_HAZARD, k_sync
from tablegym.envs.friday.rollout import badness, k_policy_action, k_rollout, state_rollout
from tablegym.envs.friday.scenario import scenario
from tablegym.experiments.friday.records import play_game
from tablegym.models.agents import make_agent
from tablegym.models.friday.agents import ROLLOUT
from tablegym.search.montecarlo import CycleGuard, MonteCarloAgent, mc_values
from tests.test_friday_core import score_position
from tests.test_friday_search import CANNIBALS, DISTRACTED, FOCUSED, RAFT_FOOD, WEAK, dealt, play_legally, start

FRIDAY = FridayGame()  # the default rules (level 1), as the agents are built for

EATING, SCARED, STUPID, WEAPON_2 = 26, 29, 33, 12
NO_PARAMS = np.zeros(1)


def test_badness_marks_the_junk_worked_by_hand():
    assert [badness(t) for t in (DISTRACTED, WEAK, STUPID, SCARED)] == [1.0, 0.0, 2.0, 2.5]
    assert badness(EATING) < 0 and badness(RAFT_FOOD) < 0  # 0-value cards with a useful ability stay
    junk = {CARDS[t].name for t in range(NUM_TYPES) if badness(t) >= 0 and VALUE[t] <= 0}
    assert junk == {
        "distracted",
        "weak",
        "scared",
        "very tired",
        "hungry",
        "stupid",
        "very stupid",
        "very hungry",
        "moronic",
        "suicidal",
    }


def test_a_deliberate_loss_destroys_the_weak_cards_that_fridai_keeps():
    # Cannibals at green (5 to beat, 5 free cards): weak, weak, distracted, focused, weak = 0: lose 5.
    s = start(hazards=(CANNIBALS, RAFT_FOOD)).child(FIGHT_0)
    for card in (WEAK, WEAK, DISTRACTED, FOCUSED, WEAK):
        s = dealt(s.child(DRAW_FREE), card)
    assert s.fight() == (0, 5)
    s = s.child(END_FIGHT)
    assert s.phase == P_DESTROY and s.destroy_budget == 5
    before = s.zone("removed").copy()
    while s.phase == P_DESTROY:
        s = s.child(int(k_policy_action(s.body)))
    removed = s.zone("removed") - before
    assert removed[DISTRACTED] == 1 and removed[WEAK] == 3 and removed.sum() == 4  # focused 1 is kept
    assert s.zone("discard")[FOCUSED] == 1


def test_the_trimmer_loses_on_purpose_only_while_life_allows():
    """Worked by hand: the starting deck averages 0 a card, so neither cannibals (5 to beat, 5
    free cards) nor the exploring weapon (1 to beat, 2 free cards) is an expected win. With 20
    life the bigger loss is worth it (5 cards seen, up to 5 destroyed: 50 + 2*5 - 5 = 55 against
    50 + 2*2 - 1 = 53); with 12 life, 12 - 5 is not above TRIM_LIFE = 9, so it takes the cheap loss.
    A sure win (the raft food: 0 to beat) beats both."""
    deck = {DISTRACTED: 5, WEAK: 8, EATING: 1, FOCUSED: 3, 28: 1}
    for life, choice in ((20, FIGHT_0), (12, FIGHT_1)):
        s = dealt(scenario(life=life, step=0, stack=deck, pirates=(0, 1)), CANNIBALS, WEAPON_2)
        assert k_policy_action(s.body) == choice, life
    assert k_policy_action(start(hazards=(CANNIBALS, RAFT_FOOD)).body) == FIGHT_1


def trimmer(s, rng):
    """The trimmer's action at ``s`` (it draws nothing from ``rng``)."""
    return int(k_policy_action(s.body))


@pytest.mark.parametrize("level", [1, 2, 3, 4])
@pytest.mark.parametrize("abilities", ["any_time", "after_free"])
def test_the_trimmer_plays_whole_games_legally(level, abilities):
    rng = np.random.default_rng(level)
    for _ in range(25):
        play_legally(sample_chance(FridayGame(level=level, abilities=abilities).new_initial_state(), rng), trimmer, rng, cap=3000)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=st.integers(1, 4), detour=st.integers(0, 400))
def test_the_trimmer_is_legal_from_positions_random_play_reaches(seed, level, detour):
    """Random play for ``detour`` decisions, then the trimmer to the end: every action legal."""
    rng = np.random.default_rng(seed)
    s = sample_chance(FridayGame(level=level).new_initial_state(), rng)
    for _ in range(detour):
        if s.is_terminal():
            return
        s = sample_chance(s.child(int(rng.choice(s.legal_actions()))), rng)
    play_legally(s, trimmer, rng)


def test_a_rollout_is_determined_by_its_seed_and_plays_to_the_end_or_the_horizon():
    s = start()
    ends = []
    for horizon in (0, 0, 3):
        x = s.array
        k_rollout(
            x[HEADER:].view(np.int8),
            np.array([12345], dtype=np.int64),
            np.empty(256, dtype=np.int64),
            np.zeros(NUM_TYPES, dtype=np.int64),
            horizon,
        )
        k_sync(x)
        ends.append(FridayState(s.game, x))
    assert ends[0].is_terminal() and (ends[0]._s == ends[1]._s).all()  # to the end, the same way twice
    cut = ends[2]  # cut as the fourth turn begins: 3 x 2 hazards drawn, the fourth pair on offer
    assert not cut.is_terminal() and cut.phase == P_HAZARD and cut.current_player() == 0
    assert cut.step == 0 and cut.zone("hazards").sum() == 30 - 3 * 2
    assert (s._s == start()._s).all()  # the caller's state is only changed through its own copy


def test_the_outcome_value_is_score_plus_steps_plus_win():
    assert outcome_eval(start()._s, 0, NO_PARAMS) == start().score == -90  # green; 30 hazards undefeated
    won = score_position().child(END_FIGHT)  # the worked won game of the score tests: 76 points
    lost = score_position().child(CONCEDE)  # 26 points
    assert outcome_eval(won._s, 0, NO_PARAMS) == 76 + 3 * 10 + 100
    assert outcome_eval(lost._s, 0, NO_PARAMS) == 26 + 3 * 10


def test_mc_values_compare_actions_on_common_random_numbers():
    s = start(hazards=(CANNIBALS, RAFT_FOOD))
    actions = np.array([FIGHT_0, FIGHT_1, FIGHT_0], dtype=np.int64)
    out = np.empty(3)
    mc_values(s._s, actions, 3, 16, 99, 0, s.kernels.push, state_rollout, outcome_eval, 0, np.zeros(1), out)
    assert out[0] == out[2]  # the same action on the same random streams: the same mean, exactly
    assert out[0] != out[1]


def test_monte_carlo_scores_more_than_its_rollout_player_on_the_same_deals():
    trim, mc = make_agent(FRIDAY, "trim"), make_agent(FRIDAY, "mc:rollouts=16")
    # 12 deals: with 6 the mean is one deal's luck (under the official rules it was +3.8 on the
    # first 6 and +11.8 on 16; the spread of one deal's difference is about 25 points)
    diffs = [play_game(mc, 1, 0, i)["score"] - play_game(trim, 1, 0, i)["score"] for i in range(12)]
    assert np.mean(diffs) > 5, diffs
    assert mc.polled > 0 and mc.polled % 16 == 0


def test_mc_and_trim_specs_are_checked():
    assert isinstance(make_agent(FRIDAY, "mc"), MonteCarloAgent) and make_agent(FRIDAY, "mc").rollouts == 256
    assert make_agent(FRIDAY, "mc:rollouts=8").name == "mc:rollouts=8"
    cut = make_agent(FRIDAY, "mc:rollouts=4,horizon=2,eval=fridai")
    assert (cut.rollouts, cut.horizon, cut.evaluator.name) == (4, 2, "fridai")


DECEPTION_0, DECEPTION_1 = 4, 9


def _loop_fight() -> FridayState:
    """The pirates at life 0, two "below the pile" cards on the left and nothing else to draw:
    each puts the other below the empty stack and draws it straight back, face up and unused
    (the replacement forced, as in the first reading; with it optional the loop is the same plus
    one "draw replacement" decision a turn)."""
    return scenario(pirate=0, pirates=(0, 1), table=[(DECEPTION_0, "L"), (DECEPTION_1, "L")], life=0, below_replacement="forced")


def test_two_below_the_pile_cards_bring_a_fight_back_to_where_it_was():
    s = _loop_fight()
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(8):  # use an ability (the highest id), then its target: the other deception card
        seen.append(s.body.tobytes())
        s = sample_chance(s.child(max(s.legal_actions())), rng)
    # the first use leaves the original cards in other slots; from then on every 4 decisions repeat
    assert seen[2] != seen[0] and seen[6] == seen[2] and seen[7] == seen[3]


class _LovesAbilities:
    """Always uses an ability when it can: round and round the loop above without a guard."""

    def __init__(self, guarded: bool) -> None:
        self.guard = CycleGuard(ROLLOUT.turn_starts) if guarded else None

    def __call__(self, state: FridayState, rng) -> int:
        legal = self.guard.candidates(state, state.legal_actions()) if self.guard else state.legal_actions()
        action = max(legal)  # abilities and targets have the highest ids, END_FIGHT a low one
        return self.guard.played(state, action) if self.guard else action


def _decisions_to_the_end(agent, s: FridayState, cap: int = 200) -> int:
    rng = np.random.default_rng(0)
    n = 0
    while not s.is_terminal() and n < cap:
        s = sample_chance(s.child(agent(s, rng)), rng)
        n += 1
    return n


@pytest.mark.parametrize("spec", ["trim", "mc:rollouts=4", "mc:rollouts=4,horizon=1,eval=fridai"])
def test_the_cycle_guard_ends_a_fight_that_could_go_round_forever(spec):
    assert _decisions_to_the_end(_LovesAbilities(guarded=False), _loop_fight()) == 200  # never ends
    # guarded: every position gets each action once, so the fight ends (lost, at life 0) within a few turns
    assert _decisions_to_the_end(_LovesAbilities(guarded=True), _loop_fight()) < 20
    assert _decisions_to_the_end(make_agent(FRIDAY, spec), _loop_fight()) < 20
