"""Friday positions built by hand: the middle of a fight, or the start of a turn, for worked tests.

``scenario(...)`` writes the compact state array through ``core``'s layout constants, so a test can
set up exactly the cards it reasons about (what lies on the table, what the stack holds, what the
piles hold) and then script every draw with ``state.child(card_type)``.

Cards are type ids (``cards.CARDS``). A pile is given as a mapping ``{type: count}`` or as a
sequence of type ids (repeats are copies). A table card is a type id (on the right, no flags) or
``(type, flags)`` where flags is a string of the letters ``FridayState.table`` prints:

====  ===================================================================
L     on the left (a free draw); without it the card lies on the right
x     turned face down by "destroy" (counts 0, leaves the game after the fight)
2     doubled
u     its ability was used in this fight
s     a copy that copied "step -1" (counts as one more step -1 card)
====  ===================================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Unpack

import numpy as np

from tablegym.envs.core import HEADER, LAST
from tablegym.envs.friday import cards as C
from tablegym.envs.friday import layout as L
from tablegym.envs.friday.core import FridayGame, FridayOptions, FridayState
from tablegym.envs.friday.layout import k_sync

__all__ = ["ScenarioError", "scenario", "card_total"]

FLAG_LETTERS = {"L": L.F_LEFT, "x": L.F_DESTROYED, "2": L.F_DOUBLED, "u": L.F_USED, "s": L.F_COPIED_STEP}

Pile = Mapping[int, int] | Sequence[int]
TableCard = int | tuple[int, str]


class ScenarioError(ValueError):
    """A hand-built Friday position that the rules could never reach or the cards cannot fill."""


def card_total(level: int) -> np.ndarray:
    """Copies per card type in a game at ``level`` ("very stupid" only at levels 3 and 4)."""
    total = C.COUNT.astype(np.int64).copy()
    if level < 3:
        total[C.VERY_STUPID] = 0
    return total


def _pile(name: str, pile: Pile, allowed: range) -> np.ndarray:
    """Counts per card type of a pile given as a mapping or a sequence of type ids."""
    counts = np.zeros(C.NUM_TYPES, dtype=np.int64)
    items: Iterable[tuple[int, int]]
    if isinstance(pile, Mapping):
        items = pile.items()
    else:
        items = ((t, 1) for t in pile)
    for t, n in items:
        if not isinstance(t, (int, np.integer)) or int(t) not in allowed:
            raise ScenarioError(f"{name}: card {t!r} is not a type id in {allowed}")
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ScenarioError(f"{name}: count {n!r} of card {t!r} must be a non-negative int")
        counts[int(t)] += int(n)
    return counts


def _sequence(name: str, cards: Sequence[int], cap: int) -> list[int]:
    cards = list(cards)
    if len(cards) > cap:
        raise ScenarioError(f"{name}: {len(cards)} cards {cards!r}, at most {cap} fit")
    for t in cards:
        if not isinstance(t, (int, np.integer)) or not 0 <= t < C.NUM_TYPES:
            raise ScenarioError(f"{name}: card {t!r} is not a fighting card type id 0-{C.NUM_TYPES - 1}")
    return [int(t) for t in cards]


def _table(table: Sequence[TableCard]) -> list[tuple[int, int]]:
    rows = []
    if len(table) > L.MAX_SLOTS:
        raise ScenarioError(f"table: {len(table)} cards, at most {L.MAX_SLOTS} slots")
    for entry in table:
        if isinstance(entry, (int, np.integer)):
            card, flags = entry, ""
        elif isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
            card, flags = entry
        else:
            raise ScenarioError(f"table: {entry!r} is neither a card type id nor a (card, flags) pair")
        if not isinstance(card, (int, np.integer)) or not 0 <= card < C.NUM_TYPES:
            raise ScenarioError(f"table: card {entry!r} is not a fighting card type id 0-{C.NUM_TYPES - 1}")
        bits = 0
        for ch in flags:
            if ch not in FLAG_LETTERS:
                raise ScenarioError(f"table: flag {ch!r} of {entry!r} is not one of {''.join(FLAG_LETTERS)!r}")
            bits |= FLAG_LETTERS[ch]
        rows.append((int(card), bits))
    return rows


def _friday_state(game: FridayGame, state: np.ndarray) -> FridayState:
    k_sync(state)  # the header from the slots written
    return FridayState(game, state)


def scenario(
    *,
    life: int | None = None,
    step: int | None = None,
    hazard: int | None = None,
    pirate: int | None = None,
    pirates: tuple[int, int] | None = None,
    beaten: bool = False,
    table: Sequence[TableCard] = (),
    free_drawn: int | None = None,
    free_ended: bool | None = None,
    stack: Pile = (),
    top: Sequence[int] = (),
    bottom: Sequence[int] = (),
    discard: Pile = (),
    aging: Pile | None = None,
    hazards: Pile | None = None,
    hazard_discard: Pile = (),
    **rules: Unpack[FridayOptions],
) -> FridayState:
    """Build a Friday position in the middle of a fight (or at the start of a turn) from its cards.

    - ``hazard``: the hazard type (0-23) being fought at ``step`` 0-2 (green/yellow/red); or
    - ``pirate``: the pirate id (0-9) being fought (step 3); it must be one of ``pirates``, and
      ``beaten`` says the other revealed pirate is already beaten; or neither: the start of a
      turn, with a hazard draw pending (``step`` 0-2, hazard stack not empty) or, at ``step`` 3,
      the choice of the pirate to fight first. No table cards then.
    - ``table``: the fight's cards in slots 0, 1, ... (see the module docstring for flags).
      ``free_drawn`` defaults to the number of cards on the left (at most the hazard's free
      cards); ``free_ended`` defaults to whether a "stop" card lies on the left.
    - The fighting stack: ``top`` (known, drawn first), the shuffled ``stack`` (counts), then
      ``bottom`` (known, the last listed card is the very bottom).
    - ``aging`` defaults to the level's aging cards that are nowhere else; every aging card not
      on the aging stack counts as having entered the deck (the 5/* pirate's count).
    - ``hazards`` (the hazard stack) defaults to every hazard/knowledge card that is nowhere else
      at steps 0-2; it is empty against the pirates (a hazard nowhere else was beaten).
    - Cards that appear nowhere are out of the game (``state.zone("removed")``).
    - ``life`` defaults to 20 (level 4: 18); the options are ``FridayGame``'s.

    Raises ``ScenarioError`` for a position the cards cannot fill (more copies of a card than
    the game has) or the rules cannot reach.

    >>> from tablegym.envs.friday.scenario import scenario
    >>> # Against "wild animals" (4 free cards; 4/7/11) at yellow: genius 2 drawn free, focused 1
    >>> # paid for on the right (so the free draws are over); 3 weak cards in the shuffled stack.
    >>> s = scenario(step=1, hazard=20, life=12, table=[(28, "L"), 27], free_ended=True, stack={25: 3})
    >>> s.fight(), s.life, s.table
    ((3, 7), 12, [(0, 28, 'L'), (1, 27, '')])
    >>> paid = s.child(4)  # DRAW_PAID: 1 life, then a chance node over the shuffled stack
    >>> paid.life, paid.chance_outcomes()
    (11, [(25, 1.0)])
    """
    game = FridayGame(**rules)
    level = game.level
    total = card_total(level)
    max_life = game.max_life_level4 if level == 4 else 22
    life = (18 if level == 4 else 20) if life is None else life
    if not isinstance(life, (int, np.integer)) or not 0 <= life <= max_life:
        raise ScenarioError(f"life {life!r} must be an int in 0..{max_life}")
    if hazard is not None and pirate is not None:
        raise ScenarioError(f"fight a hazard or a pirate, not both (hazard={hazard!r}, pirate={pirate!r})")
    if hazard is not None and (not isinstance(hazard, (int, np.integer)) or not 0 <= hazard < C.NUM_HAZARD_TYPES):
        raise ScenarioError(f"hazard {hazard!r} is not a hazard type id 0-{C.NUM_HAZARD_TYPES - 1}")
    if pirate is not None and (not isinstance(pirate, (int, np.integer)) or not 0 <= pirate < C.NUM_PIRATES):
        raise ScenarioError(f"pirate {pirate!r} is not a pirate id 0-{C.NUM_PIRATES - 1}")
    if pirates is None:
        pirates = (0, 1) if pirate is None else (pirate, 0 if pirate != 0 else 1)
    if (
        len(pirates) != 2
        or pirates[0] == pirates[1]
        or any(not isinstance(p, (int, np.integer)) or not 0 <= p < C.NUM_PIRATES for p in pirates)
    ):
        raise ScenarioError(f"pirates {pirates!r} must be two different pirate ids 0-{C.NUM_PIRATES - 1}")
    if pirate is not None and pirate not in pirates:
        raise ScenarioError(f"pirate {pirate!r} is not one of the revealed pirates {pirates!r}")
    if step is None:
        step = 3 if pirate is not None else 0
    if pirate is not None and step != 3:
        raise ScenarioError(f"pirates are fought at step 3, got step={step!r}")
    if pirate is None and step not in (0, 1, 2, 3):
        raise ScenarioError(f"step {step!r} must be 0 (green), 1 (yellow), 2 (red) or 3 (pirates)")
    if hazard is not None and step == 3:
        raise ScenarioError("hazards are not fought at step 3 (the pirates)")
    if beaten and pirate is None:
        raise ScenarioError("beaten=True needs the pirate of the second fight (pirate=...)")

    rows = _table(table)
    top_cards = _sequence("top", top, 3)
    bottom_cards = _sequence("bottom", bottom, L.BOTTOM_CAP)
    mid = _pile("stack", stack, range(C.NUM_TYPES))
    disc = _pile("discard", discard, range(C.NUM_TYPES))
    hdisc = _pile("hazard_discard", hazard_discard, range(C.NUM_HAZARD_TYPES))
    used = mid + disc + hdisc
    for t in top_cards + bottom_cards + [card for card, _ in rows]:
        used[t] += 1
    if hazard is not None:
        used[hazard] += 1
    if hazards is not None:
        hstack = _pile("hazards", hazards, range(C.NUM_HAZARD_TYPES))
    else:  # against the pirates every hazard not given was beaten (now a knowledge card, or gone)
        hstack = np.zeros(C.NUM_TYPES, dtype=np.int64)
        if step < 3:
            hstack[: C.NUM_HAZARD_TYPES] = np.maximum(total - used, 0)[: C.NUM_HAZARD_TYPES]
    used = used + hstack
    if aging is None:
        astack = np.zeros(C.NUM_TYPES, dtype=np.int64)
        astack[C.FIRST_AGING :] = np.maximum(total - used, 0)[C.FIRST_AGING :]
    else:
        astack = _pile("aging", aging, range(C.FIRST_AGING, C.NUM_TYPES))
    used = used + astack
    over = [(t, int(used[t]), int(total[t])) for t in range(C.NUM_TYPES) if used[t] > total[t]]
    if over:
        detail = ", ".join(f"card {t}: {n} used, {m} exist" for t, n, m in over)
        raise ScenarioError(f"more copies than the level-{level} game has ({detail})")

    fighting = hazard is not None or pirate is not None
    if not fighting and (rows or free_drawn is not None or free_ended is not None):
        raise ScenarioError("table cards, free_drawn and free_ended need a fight (hazard=... or pirate=...)")
    if not fighting and step < 3 and hstack.sum() == 0:
        raise ScenarioError("a turn starts with a hazard draw: give a non-empty hazard stack")
    if step == 3 and hstack.sum() > 0:
        raise ScenarioError(f"the pirates come once the hazard stack is empty, got hazards={hazards!r}")

    state = np.zeros(L.WORDS, dtype=np.int64)  # the common state: the header, then Friday's slots
    state[LAST] = -1
    s = state[HEADER:].view(np.int8)
    s[L.LIFE] = life
    s[L.MAXLIFE] = max_life
    s[L.LEVEL] = level
    s[L.OPT_TIMING], s[L.OPT_CHARGE], s[L.OPT_EMPTY], s[L.OPT_BELOW], s[L.OPT_SORT] = game.codes
    s[L.STEPI] = step
    for k in (L.FIGHT, L.PFIGHT, L.CHOICE_A, L.CHOICE_B, L.AB_SRC, L.DESTROY_LAST):
        s[k] = -1
    s[L.PIRATE_A], s[L.PIRATE_B] = pirates
    for p in range(C.NUM_PIRATES):
        s[L.PIRATE_POOL + p] = 0 if p in pirates else 1
    s[L.MID : L.MID + C.NUM_TYPES] = mid
    s[L.DISC : L.DISC + C.NUM_TYPES] = disc
    s[L.HSTACK : L.HSTACK + C.NUM_HAZARD_TYPES] = hstack[: C.NUM_HAZARD_TYPES]
    s[L.HDISC : L.HDISC + C.NUM_HAZARD_TYPES] = hdisc[: C.NUM_HAZARD_TYPES]
    s[L.AGING_STACK : L.AGING_STACK + C.NUM_AGING_TYPES] = astack[C.FIRST_AGING :]
    s[L.AGING_IN] = int(total[C.FIRST_AGING :].sum() - astack[C.FIRST_AGING :].sum())
    s[L.TOP_N] = len(top_cards)
    s[L.TOP0 : L.TOP0 + len(top_cards)] = top_cards
    s[L.BOTTOM_N] = len(bottom_cards)
    s[L.BOTTOM : L.BOTTOM + len(bottom_cards)] = bottom_cards
    s[L.SLOT_CARD : L.SLOT_CARD + L.MAX_SLOTS] = -1
    for i, (card, bits) in enumerate(rows):
        s[L.SLOT_CARD + i] = card
        s[L.SLOT_FLAG + i] = bits
    s[L.PENDING] = L.PD_NONE

    if not fighting:
        if step < 3:
            s[L.HAZ_NEED] = 2 if hstack.sum() >= 2 else 1
            s[L.PENDING] = L.PD_HAZARD
            s[L.PHASE] = L.P_HAZARD
        else:
            s[L.PHASE] = L.P_PIRATE
        return _friday_state(game, state)

    if hazard is not None:
        s[L.FIGHT] = hazard
        allowed = int(C.GROUP_FREE[C.GROUP[hazard]])
    else:
        which = pirates.index(pirate)
        s[L.PFIGHT] = which
        s[L.BEATEN] = (1 << (1 - which)) if beaten else 0
        if pirate == C.ALL_HAZARDS:
            allowed = int(sum((hstack[t] + hdisc[t]) * C.GROUP_FREE[C.GROUP[t]] for t in range(C.NUM_HAZARD_TYPES)))
        else:
            allowed = int(C.PIRATE_FREE[pirate])
    left = [card for card, bits in rows if bits & L.F_LEFT]
    if free_drawn is None:
        free_drawn = min(len(left), allowed)
    if not 0 <= free_drawn <= allowed:
        raise ScenarioError(f"free_drawn {free_drawn!r} must be in 0..{allowed} (the free cards of this fight)")
    if free_ended is None:
        free_ended = any(C.ABILITY[card] == C.STOP for card in left)
    s[L.FREE_ALLOWED] = min(allowed, 127)
    s[L.FREE_DRAWN] = free_drawn
    s[L.FREE_ENDED] = int(bool(free_ended))
    s[L.PHASE] = L.P_FIGHT
    return _friday_state(game, state)
