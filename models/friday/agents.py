"""Friday players: random, a rule-based player, Monte-Carlo planning, and the moves Fridai's
best-first search tries.

Spec strings (``tablegym play/eval friday --agent ...``; read by the one route,
tablegym.models.agents.make_agent, with the keys tablegym.search.searchers declares; this game's
record supplies its defaults, its move filter and the constructors below):

* ``random``: a uniformly random legal action.
* ``rules``: the rule-based player below (easiest hazard, draw while behind, obvious abilities).
* ``trim``: a compiled rule player that also loses on purpose to thin the deck (envs/friday/rollout.py).
* ``mc:rollouts=K,horizon=H,eval=E``: flat Monte-Carlo planning: every legal action is valued by
  the mean of evaluator ``E`` (default ``outcome``) over ``K`` rollouts of ``trim`` from it
  (default 256), with common random numbers; ``H`` > 0 cuts the rollouts after H turns, where
  ``E`` values them (``learned``: the network shipped for this planner, models/checkpoints/friday_mc.pt;
  with a network ``H`` defaults to 2, else to 0: play to the end).
* ``bestfirst:nodes=N,eval=E`` (alias ``search``, ``fridai``): the best-first search polling
  ``N`` states per decision (default 10,000) with evaluator ``E``: ``fridai`` (default) or a
  learned network (``learned``, ``learned:PATH``). Each decision searches one sampled world: the
  order of the fighting stack is fixed at the root (``k_determinize``); hazard draws and
  reshuffles inside the tree are sampled once per expansion: the generic search
  (search/bestfirst.py) over ``MOVE_FILTER``'s moves. ``worlds=K`` splits the budget over K such
  sampled worlds and plays the best mean.

Every agent maps a decision ``FridayState`` and a numpy Generator to a legal action.
"""

from __future__ import annotations

import numpy as np

from tablegym.envs.friday import cards as C
from tablegym.envs.friday import layout as L
from tablegym.envs.friday.core import FridayState
from tablegym.envs.friday.heuristics import EVALUATORS as HAND_MADE
from tablegym.envs.friday.heuristics import destroy_choice, search_state_moves, search_state_push
from tablegym.envs.friday.rollout import k_policy_action, state_rollout
from tablegym.models.friday.learned import FridayEvaluator
from tablegym.search.montecarlo import CycleGuard, Rollout
from tablegym.search.searchers import MoveFilter, Searcher

LEARNED_HORIZON = 2
"""``mc``'s horizon when a network values the rollouts and none is given: the horizon the shipped
network's games were played at (a network at horizon 0 would only ever see finished games)."""


EVALUATORS = {name: FridayEvaluator(name, kernel, np.zeros(1)) for name, kernel in HAND_MADE.items()}
"""The hand-made evaluators by name: ``fridai`` (Fridai's score) and ``outcome`` (score + steps + win)."""


def first_destroy_step(state: FridayState, action: int) -> int:
    """What the search-only ``DESTROY_MACRO`` plays first: the first card of Fridai's destroy
    subset (DONE when it is empty)."""
    slots = np.empty(64, dtype=np.int64)
    n = destroy_choice(state.body, slots)
    return L.DESTROY_BASE + int(slots[0]) if n else L.DONE


MOVE_FILTER = MoveFilter(search_state_moves, push=search_state_push, first_step=first_destroy_step)
"""The moves Fridai's search tries (heuristics.search_moves: one destroy subset after a lost
fight, played as one search-only move, double on the best card only, alike cards once)."""


# ---- the rule-based player --------------------------------------------------------------------


def _slots(state: FridayState) -> list[tuple[int, int, str]]:
    return state.table


def _face_up(flags: str) -> bool:
    return "x" not in flags


def rule_action(state: FridayState, rng: np.random.Generator | None = None) -> int:
    """A simple player: fight the easier hazard, draw while behind, take the obvious abilities.

    Hazard choice: the lower value at the current step (ties: the better knowledge card); a last
    single hazard worth more than 6 is skipped. Pirates: the lower printed value first. Fights:
    use +life at once, destroy/exchange/below-the-pile the most negative card, double the
    highest, draw extra cards (a replacement after "below the pile" only while behind; all three
    cards of "sort 3 cards"); draw free cards while behind; pay for up to two cards while the
    deficit is at most 2 and life is above 5 (always against pirates); otherwise take the loss and destroy
    the most negative cards the budget allows.
    """
    legal = state.legal_actions()
    phase = state.phase
    if phase == L.P_HAZARD:
        a, b = state.hazard_choice
        if b < 0:
            return L.FIGHT_0 if C.GROUP_VALUES[C.GROUP[a], min(state.step, 2)] <= 6 else L.SKIP
        va, vb = (C.GROUP_VALUES[C.GROUP[t], min(state.step, 2)] for t in (a, b))
        if va != vb:
            return L.FIGHT_0 if va < vb else L.FIGHT_1
        return L.FIGHT_0 if C.RATING[a] >= C.RATING[b] else L.FIGHT_1
    if phase == L.P_PIRATE:
        a, b = state.pirates
        va, vb = (C.PIRATE_HAZARD[p] if C.PIRATE_HAZARD[p] > 0 else 99 for p in (a, b))  # "*" last
        return L.PIRATE_0 if va <= vb else L.PIRATE_1
    if phase == L.P_DESTROY:
        slots = np.empty(64, dtype=np.int64)
        n = destroy_choice(state.body, slots)
        return L.DESTROY_BASE + int(slots[0]) if n else L.DONE
    if phase == L.P_SORT:
        return _sort_choice(state, legal)
    total, target = state.fight()
    behind = total < target
    table = [(slot, card, flags) for slot, card, flags in _slots(state) if _face_up(flags)]
    if phase == L.P_TARGET:
        return _target_choice(state, legal, table)
    if phase == L.P_EXTRA:  # +2 cards, below the pile: draw while behind; sort 3 cards: see all 3
        return L.EXTRA_DRAW if (behind or state.body[L.AB_KIND] == C.SORT) and L.EXTRA_DRAW in legal else L.DONE
    if phase == L.P_EXCHANGE_MORE:
        worst = _worst(table, legal, L.TARGET_BASE)
        return worst if behind and worst is not None and C.VALUE[state.body[L.SLOT_CARD + worst - L.TARGET_BASE]] <= 0 else L.DONE
    assert phase == L.P_FIGHT
    for a in legal:  # free life first
        if L.USE_BASE <= a < L.TARGET_BASE and C.ABILITY[state.body[L.SLOT_CARD + a - L.USE_BASE]] in (C.LIFE1, C.LIFE2):
            return a
    if not behind:
        return L.END_FIGHT if L.END_FIGHT in legal else legal[0]
    for a in legal:
        if L.USE_BASE <= a < L.TARGET_BASE:
            ability = C.ABILITY[state.body[L.SLOT_CARD + a - L.USE_BASE]]
            if ability in (C.CARD1, C.CARD2, C.SORT):
                return a
            if ability in (C.DESTROY, C.EXCHANGE1, C.EXCHANGE2, C.BELOW) and any(C.VALUE[c] < 0 for _, c, _ in table):
                return a
            if ability == C.DOUBLE and any(C.VALUE[c] > 0 for _, c, _ in table):
                return a
    if L.DRAW_FREE in legal:
        return L.DRAW_FREE
    deficit = target - total
    pirate = state.step == 3
    paid = sum(1 for _, _, flags in _slots(state) if "L" not in flags)
    if L.DRAW_PAID in legal and (pirate or (deficit <= 2 and paid < 2 and state.life > 5)):
        return L.DRAW_PAID
    if L.END_FIGHT in legal:
        return L.END_FIGHT
    return L.CONCEDE if L.CONCEDE in legal else legal[0]


def _worst(table, legal, base) -> int | None:
    options = [(C.VALUE[card], slot) for slot, card, _ in table if base + slot in legal]
    return base + min(options)[1] if options else None


def _target_choice(state: FridayState, legal: list[int], table) -> int:
    ability = int(state.body[L.AB_KIND])
    options = [(C.VALUE[card], C.RATING[card], slot) for slot, card, _ in table if L.TARGET_BASE + slot in legal]
    if ability == C.DOUBLE:
        return L.TARGET_BASE + max(options)[2]
    if ability == C.COPY:  # copy the most valuable ability on offer
        return (
            L.TARGET_BASE
            + max(options, key=lambda o: C.RATING[state.body[L.SLOT_CARD + o[2]]] - C.VALUE[state.body[L.SLOT_CARD + o[2]]])[2]
        )
    return L.TARGET_BASE + min(options)[2]  # destroy / exchange / below: the weakest card


def _sort_choice(state: FridayState, legal: list[int]) -> int:
    """Discard the worst-rated card if its rating is negative; the rest highest value first."""
    cards = [int(state.body[L.SORT0 + i]) for i in range(int(state.body[L.SORT_N]))]

    def key(a: int) -> tuple:
        _, d, *order = L.SORT_OPTIONS[a - L.SORT_BASE]
        dropped = 0 if d < 0 else (-C.RATING[cards[d]] if C.RATING[cards[d]] < 0 else -100)
        return dropped, [C.VALUE[cards[i]] for i in order if i >= 0]

    return max(legal, key=key)


class RuleAgent:
    """The rule-based player (``rule_action``)."""

    name = "rules"

    def __call__(self, state: FridayState, rng: np.random.Generator) -> int:
        return rule_action(state, rng)


class TrimAgent:
    """The compiled trimming player (``k_policy``); its choices use no randomness beyond the
    cycle guard's (a position met again in a fight gets END_FIGHT or the first untried action:
    two "below the pile" cards can bring a fight back to a position, core.py)."""

    name = "trim"

    def __init__(self) -> None:
        self.guard = CycleGuard(ROLLOUT.turn_starts)

    def __call__(self, state: FridayState, rng: np.random.Generator) -> int:
        action = int(k_policy_action(state.body))
        candidates = self.guard.candidates(state, state.legal_actions())
        if action not in candidates:
            action = L.END_FIGHT if L.END_FIGHT in candidates else candidates[0]
        return self.guard.played(state, action)


ROLLOUT = Rollout(
    state_rollout, turn_starts=lambda state: state.phase in (L.P_HAZARD, L.P_PIRATE), learned_horizon=LEARNED_HORIZON
)
"""Friday's Monte-Carlo playouts: ``trim`` (rollout.py); a new fight (a hazard or pirate choice)
starts a turn: the positions of the fight before cannot come back."""


def _agents() -> dict:
    return {
        "rules": Searcher("rules", (), lambda game, evaluator, options, *, name: RuleAgent(), RuleAgent.__doc__ or ""),
        "trim": Searcher("trim", (), lambda game, evaluator, options, *, name: TrimAgent(), TrimAgent.__doc__ or ""),
    }


AGENTS = _agents()
"""The fixed players by name: ``rules`` and ``trim``."""
