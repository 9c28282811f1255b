"""Friday players: random, a rule-based player, and Fridai's best-first search.

Spec strings (``tablegym play/eval friday --agent ...``; read by the one route,
tablegym.models.agents.make_agent, with the keys tablegym.search.searchers declares; this game's
record supplies its defaults and the constructors below, which run on Friday's own state):

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
  reshuffles inside the tree are sampled once per expansion (search/bestfirst.py).
  ``worlds=K`` splits the budget over K such sampled worlds and plays the best mean.

Every agent maps a decision ``FridayState`` and a numpy Generator to a legal action.
"""

from __future__ import annotations

import time
import numpy as np

from tablegym.envs.friday.cards import (ABILITY, CARD1, CARD2, COPY, DESTROY, DOUBLE, EXCHANGE1,
                                        EXCHANGE2, BELOW, LIFE1, LIFE2, PIRATE_HAZARD, RATING, SORT, VALUE,
                                        GROUP, GROUP_VALUES)
from tablegym.envs.friday.core import (AB_KIND, CONCEDE, DESTROY_BASE, DONE, DRAW_FREE, DRAW_PAID, END_FIGHT,
                                       EXTRA_DRAW, FIGHT_0, FIGHT_1, FridayState, P_DESTROY, P_EXCHANGE_MORE,
                                       P_EXTRA, P_FIGHT, P_HAZARD, P_PIRATE, P_SORT, PHASE, P_TARGET, PIRATE_0, PIRATE_1,
                                       SKIP, SLOT_CARD, SORT_BASE, SORT_N, SORT_OPTIONS, SORT0, TARGET_BASE, USE_BASE,
                                       k_determinize, k_sample_split, k_key, k_status)
from tablegym.envs.friday.heuristics import EVALUATORS as HAND_MADE, destroy_choice, search_apply, search_moves
from tablegym.envs.friday.rollout import k_policy_action, mc_values
from tablegym.envs.friday.learned import FridayEvaluator
from tablegym.search.agents import is_learned
from tablegym.search.searchers import Key, Searcher
from tablegym.search.bestfirst import MAX_MOVES, best_first

DEFAULT_NODES = 10_000
DEFAULT_ROLLOUTS = 256
LEARNED_HORIZON = 2
"""``mc``'s horizon when a network values the rollouts and none is given: the horizon the shipped
network's games were played at (a network at horizon 0 would only ever see finished games)."""


EVALUATORS = {name: FridayEvaluator(name, kernel, np.zeros(1)) for name, kernel in HAND_MADE.items()}
"""The hand-made evaluators by name: ``fridai`` (Fridai's score) and ``outcome`` (score + steps + win)."""


class BestFirstAgent:
    """Fridai's best-first search with a node budget and a pluggable evaluator.

    ``worlds`` > 1 is the chance-aware variant: the budget is split over that many searches,
    each in its own sampled order of the fighting stack, and a root action's value is its mean
    over them. Why: in ONE sampled world the search knows the next cards, so paying life for a
    draw looks good whenever that world's next card happens to be good (clairvoyance); the
    mean over worlds pays only for draws that help on average.
    """

    def __init__(self, evaluator: FridayEvaluator, *, nodes: int = DEFAULT_NODES, worlds: int = 1,
                 name: str | None = None) -> None:
        if nodes < 1:
            raise ValueError(f"the node budget must be at least 1, got {nodes}")
        if not 1 <= worlds <= nodes:
            raise ValueError(f"worlds must lie in 1..nodes ({nodes}), got {worlds}")
        self.evaluator = evaluator
        self.nodes = nodes
        self.worlds = worlds
        self.name = name or f"bestfirst:nodes={nodes},eval={evaluator.name}" + (f",worlds={worlds}" if worlds > 1 else "")
        self.values = np.zeros(MAX_MOVES)
        self.polled = 0
        self.generated = 0
        self.seconds = 0.0
        self.decisions = 0

    def search(self, state: FridayState, rng: np.random.Generator) -> tuple[int, int, int]:
        """(chosen action, states polled, states generated) of one search from ``state``."""
        rng_state = np.array([rng.integers(1, 2**62)], dtype=np.int64)
        moves = np.empty(MAX_MOVES, dtype=np.int64)
        n = search_moves(state._s, moves)
        total = np.zeros(n)
        polled = generated = 0
        t0 = time.perf_counter()
        for w in range(self.worlds):
            root = state.array
            k_determinize(root, rng_state)  # one sampled order of the fighting stack for this search
            budget = self.nodes // self.worlds + (w < self.nodes % self.worlds)
            best, p, g = best_first(root, budget, search_moves, search_apply, k_sample_split, self.evaluator.kernel,
                                    k_status, k_key, self.evaluator.params, rng_state, self.values)
            total += self.values[:n]
            polled += p
            generated += g
        self.seconds += time.perf_counter() - t0
        if self.worlds > 1:
            best = int(np.argmax(total))  # the first of equal means, as the search breaks ties
        assert 0 <= best < n
        return int(moves[best]), int(polled), int(generated)

    def __call__(self, state: FridayState, rng: np.random.Generator) -> int:
        self.evaluator.check(state)
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        moves = np.empty(MAX_MOVES, dtype=np.int64)
        if search_moves(state._s, moves) == 1:  # nothing to choose after filtering
            action = int(moves[0])
        else:
            action, polled, generated = self.search(state, rng)
            self.polled += polled
            self.generated += generated
            self.decisions += 1
        if action >= len(SORT_OPTIONS) + SORT_BASE:  # the search-only destroy subset: play its first step
            return self._first_destroy_step(state)
        return action

    @staticmethod
    def _first_destroy_step(state: FridayState) -> int:
        slots = np.empty(64, dtype=np.int64)
        n = destroy_choice(state._s, slots)
        return DESTROY_BASE + int(slots[0]) if n else DONE


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
    if phase == P_HAZARD:
        a, b = state.hazard_choice
        if b < 0:
            return FIGHT_0 if GROUP_VALUES[GROUP[a], min(state.step, 2)] <= 6 else SKIP
        va, vb = (GROUP_VALUES[GROUP[t], min(state.step, 2)] for t in (a, b))
        if va != vb:
            return FIGHT_0 if va < vb else FIGHT_1
        return FIGHT_0 if RATING[a] >= RATING[b] else FIGHT_1
    if phase == P_PIRATE:
        a, b = state.pirates
        va, vb = (PIRATE_HAZARD[p] if PIRATE_HAZARD[p] > 0 else 99 for p in (a, b))  # "*" last
        return PIRATE_0 if va <= vb else PIRATE_1
    if phase == P_DESTROY:
        slots = np.empty(64, dtype=np.int64)
        n = destroy_choice(state._s, slots)
        return DESTROY_BASE + int(slots[0]) if n else DONE
    if phase == P_SORT:
        return _sort_choice(state, legal)
    total, target = state.fight()
    behind = total < target
    table = [(slot, card, flags) for slot, card, flags in _slots(state) if _face_up(flags)]
    if phase == P_TARGET:
        return _target_choice(state, legal, table)
    if phase == P_EXTRA:  # +2 cards, below the pile: draw while behind; sort 3 cards: see all 3
        return EXTRA_DRAW if (behind or state._s[AB_KIND] == SORT) and EXTRA_DRAW in legal else DONE
    if phase == P_EXCHANGE_MORE:
        worst = _worst(table, legal, TARGET_BASE)
        return worst if behind and worst is not None and VALUE[state._s[SLOT_CARD + worst - TARGET_BASE]] <= 0 else DONE
    assert phase == P_FIGHT
    for a in legal:  # free life first
        if USE_BASE <= a < TARGET_BASE and ABILITY[state._s[SLOT_CARD + a - USE_BASE]] in (LIFE1, LIFE2):
            return a
    if not behind:
        return END_FIGHT if END_FIGHT in legal else legal[0]
    for a in legal:
        if USE_BASE <= a < TARGET_BASE:
            ability = ABILITY[state._s[SLOT_CARD + a - USE_BASE]]
            if ability in (CARD1, CARD2, SORT):
                return a
            if ability in (DESTROY, EXCHANGE1, EXCHANGE2, BELOW) and any(VALUE[c] < 0 for _, c, _ in table):
                return a
            if ability == DOUBLE and any(VALUE[c] > 0 for _, c, _ in table):
                return a
    if DRAW_FREE in legal:
        return DRAW_FREE
    deficit = target - total
    pirate = state.step == 3
    paid = sum(1 for _, _, flags in _slots(state) if "L" not in flags)
    if DRAW_PAID in legal and (pirate or (deficit <= 2 and paid < 2 and state.life > 5)):
        return DRAW_PAID
    if END_FIGHT in legal:
        return END_FIGHT
    return CONCEDE if CONCEDE in legal else legal[0]


def _worst(table, legal, base) -> int | None:
    options = [(VALUE[card], slot) for slot, card, _ in table if base + slot in legal]
    return base + min(options)[1] if options else None


def _target_choice(state: FridayState, legal: list[int], table) -> int:
    ability = int(state._s[AB_KIND])
    options = [(VALUE[card], RATING[card], slot) for slot, card, _ in table if TARGET_BASE + slot in legal]
    if ability == DOUBLE:
        return TARGET_BASE + max(options)[2]
    if ability == COPY:  # copy the most valuable ability on offer
        return TARGET_BASE + max(options, key=lambda o: RATING[state._s[SLOT_CARD + o[2]]] - VALUE[state._s[SLOT_CARD + o[2]]])[2]
    return TARGET_BASE + min(options)[2]  # destroy / exchange / below: the weakest card


def _sort_choice(state: FridayState, legal: list[int]) -> int:
    """Discard the worst-rated card if its rating is negative; the rest highest value first."""
    cards = [int(state._s[SORT0 + i]) for i in range(int(state._s[SORT_N]))]

    def key(a: int) -> tuple:
        _, d, *order = SORT_OPTIONS[a - SORT_BASE]
        dropped = 0 if d < 0 else (-RATING[cards[d]] if RATING[cards[d]] < 0 else -100)
        return dropped, [VALUE[cards[i]] for i in order if i >= 0]

    return max(legal, key=key)


class RuleAgent:
    """The rule-based player (``rule_action``)."""

    name = "rules"

    def __call__(self, state: FridayState, rng: np.random.Generator) -> int:
        return rule_action(state, rng)


class CycleGuard:
    """Remembers the actions played at every position of the current fight, so that a position
    met again gets an action not yet tried there.

    Why: two "below the pile" cards (or copy + below) can bring a fight back to a position it was
    in (core.py), and a player whose choices depend on the position alone would go round forever;
    Fridai's search keeps the same guard (rules/friday.md, "The original AI"). A fight has finitely
    many positions with finitely many actions each, so with the guard every fight ends."""

    def __init__(self) -> None:
        self._tried: dict[bytes, set[int]] = {}

    def candidates(self, state: FridayState, legal: list[int]) -> list[int]:
        """The legal actions not yet played at this position (all of them if every one was)."""
        if state._s[PHASE] in (P_HAZARD, P_PIRATE):  # a new fight: the positions of the last cannot recur
            self._tried.clear()
        tried = self._tried.get(state._s.tobytes(), ())
        return [a for a in legal if a not in tried] or list(legal)

    def played(self, state: FridayState, action: int) -> int:
        self._tried.setdefault(state._s.tobytes(), set()).add(action)
        return action


class TrimAgent:
    """The compiled trimming player (``k_policy``); its choices use no randomness beyond the
    cycle guard's (a position met again in a fight gets END_FIGHT or the first untried action)."""

    name = "trim"

    def __init__(self) -> None:
        self.guard = CycleGuard()

    def __call__(self, state: FridayState, rng: np.random.Generator) -> int:
        action = int(k_policy_action(state._s))
        candidates = self.guard.candidates(state, state.legal_actions())
        if action not in candidates:
            action = END_FIGHT if END_FIGHT in candidates else candidates[0]
        return self.guard.played(state, action)


class MonteCarloAgent:
    """Flat Monte-Carlo planning over ``trim`` rollouts (envs/friday/rollout.py).

    Every legal action is valued by the mean of ``evaluator`` over ``rollouts`` rollouts from it,
    each played to the end or cut after ``horizon`` turns (0: never). ``polled`` counts rollouts,
    the budget this search spends: ``rollouts`` per legal action at every decision with a choice.
    """

    def __init__(self, evaluator: FridayEvaluator, rollouts: int = DEFAULT_ROLLOUTS, horizon: int = 0,
                 name: str | None = None) -> None:
        if rollouts < 1:
            raise ValueError(f"the rollout budget must be at least 1, got {rollouts}")
        if horizon < 0:
            raise ValueError(f"the horizon must be 0 (play to the end) or a number of turns, got {horizon}")
        self.evaluator = evaluator
        self.rollouts = rollouts
        self.horizon = horizon
        self.name = name or f"mc:rollouts={rollouts}" + (f",horizon={horizon}" if horizon else "")
        self.polled = 0
        self.values = np.empty(MAX_MOVES)
        self.guard = CycleGuard()

    def __call__(self, state: FridayState, rng: np.random.Generator) -> int:
        self.evaluator.check(state)
        legal = np.array(self.guard.candidates(state, state.legal_actions()), dtype=np.int64)
        if len(legal) == 1:
            return self.guard.played(state, int(legal[0]))
        mc_values(state._s, legal, len(legal), self.rollouts, int(rng.integers(2**40)), self.horizon,
                  self.evaluator.kernel, self.evaluator.params, self.values)
        self.polled += len(legal) * self.rollouts
        return self.guard.played(state, int(legal[int(np.argmax(self.values[:len(legal)]))]))


def bestfirst_searcher(game, evaluator: FridayEvaluator, options, *, name: str) -> BestFirstAgent:
    """``bestfirst:nodes=N,eval=E,worlds=K`` on Friday's own state (tablegym.search.searchers
    declares the keys)."""
    return BestFirstAgent(evaluator, nodes=options["nodes"], worlds=options["worlds"], name=name)


bestfirst_searcher.keys = (Key("worlds", "int", 1),)  # Friday's own key: sampled worlds a decision


def mc_searcher(game, evaluator: FridayEvaluator, options, *, name: str) -> MonteCarloAgent:
    """``mc:rollouts=K,horizon=H,eval=E``; without ``horizon``: ``LEARNED_HORIZON`` with a network,
    else play to the end."""
    horizon = options["horizon"]
    if horizon is None:
        horizon = LEARNED_HORIZON if is_learned(options["eval"]) else 0
    return MonteCarloAgent(evaluator, options["rollouts"], horizon, name=name)


def _agents() -> dict:
    return {"rules": Searcher("rules", (), lambda game, evaluator, options, *, name: RuleAgent(), RuleAgent.__doc__ or ""),
            "trim": Searcher("trim", (), lambda game, evaluator, options, *, name: TrimAgent(), TrimAgent.__doc__ or "")}


AGENTS = _agents()
"""The fixed players by name: ``rules`` and ``trim``."""
