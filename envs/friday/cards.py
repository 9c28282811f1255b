"""Friday's 72 cards as data (rules/friday.md, "Components"): one row per distinct card.

Fighting-card types share one id space, because a beaten hazard card becomes the knowledge card
printed on its back: ids 0-23 are the hazard/knowledge cards, 24-28 Robinson's starting cards,
29-37 the aging cards. Pirates have their own ids 0-9.

=====  ==========================  =====  ======  =====================  =====
id     name                        value  count   ability                 group
=====  ==========================  =====  ======  =====================  =====
0-6    raft to the wreck (F 1; 0/1/3): food, equipment, strategy, realization, deception,
       mimicry, books
7-12   exploring the island (F 2; 1/3/6): food, realization, deception, mimicry, repeat, weapon
13-18  further exploring (F 3; 2/5/8): food, realization, experience, strategy, repeat, vision
19-22  wild animals (F 4; 4/7/11): realization, experience, strategy, vision
23     cannibals (F 5; 5/9/14): weapon 4
24-28  starting: distracted -1 x5, weak 0 x8, eating 0 (+2 life), focused 1 x3, genius 2
29-37  aging: scared, very tired, hungry, distracted, stupid x2, very stupid (levels 3-4),
       very hungry, moronic, suicidal (the last three are "difficult")
=====  ==========================  =====  ======  =====================  =====

The full table is ``CARDS`` below; the arrays after it are what the compiled kernels read.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# Abilities. Activated ones are used once per fight; STEP is passive while face up; the last
# four belong to aging cards and act on their own (when drawn, or when the fight is resolved).
(
    NONE,
    LIFE1,
    LIFE2,
    CARD1,
    CARD2,
    DESTROY,
    DOUBLE,
    COPY,
    STEP,
    EXCHANGE1,
    EXCHANGE2,
    BELOW,
    SORT,
    STOP,
    HIGHEST0,
    MINUS_LIFE1,
    MINUS_LIFE2,
) = range(17)
ABILITY_NAMES = (
    "none",
    "+1 life",
    "+2 life",
    "+1 card",
    "+2 cards",
    "1x destroy",
    "1x double",
    "1x copy",
    "step -1",
    "1x exchange",
    "2x exchange",
    "1x below the pile",
    "sort 3 cards",
    "stop",
    "highest card = 0",
    "-1 life",
    "-2 life",
)
NEEDS_TARGET = (DESTROY, DOUBLE, COPY, EXCHANGE1, EXCHANGE2, BELOW)
AGING_ABILITIES = (STOP, HIGHEST0, MINUS_LIFE1, MINUS_LIFE2)

# Fridai's ability weights (rules/friday.md, "The original AI").
ABILITY_RATING = {
    NONE: 0,
    LIFE1: 2,
    LIFE2: 3,
    CARD1: 2,
    CARD2: 3,
    DESTROY: 3,
    DOUBLE: 3,
    COPY: 2,
    STEP: 3,
    EXCHANGE1: 2,
    EXCHANGE2: 3,
    BELOW: 1,
    SORT: 1,
    STOP: -3,
    HIGHEST0: -3,
    MINUS_LIFE1: -1,
    MINUS_LIFE2: -2,
}

KNOWLEDGE, STARTING, AGING = 0, 1, 2


class Card(NamedTuple):
    """One distinct fighting card (for hazards: the knowledge side, with its hazard group)."""

    name: str
    value: int
    ability: int
    count: int
    kind: int
    group: int = -1
    """Hazard group 0-4 (free cards 1-5) of a hazard card; -1 otherwise."""
    difficult: bool = False
    level3: bool = False
    """Only in levels 3 and 4 ("very stupid")."""


CARDS: tuple[Card, ...] = (
    # with the raft to the wreck
    Card("food", 0, LIFE1, 2, KNOWLEDGE, 0),
    Card("equipment", 0, CARD2, 2, KNOWLEDGE, 0),
    Card("strategy", 0, EXCHANGE2, 2, KNOWLEDGE, 0),
    Card("realization", 0, DESTROY, 1, KNOWLEDGE, 0),
    Card("deception", 0, BELOW, 1, KNOWLEDGE, 0),
    Card("mimicry", 0, COPY, 1, KNOWLEDGE, 0),
    Card("books", 0, STEP, 1, KNOWLEDGE, 0),
    # exploring the island
    Card("food", 1, LIFE1, 2, KNOWLEDGE, 1),
    Card("realization", 1, DESTROY, 1, KNOWLEDGE, 1),
    Card("deception", 1, BELOW, 1, KNOWLEDGE, 1),
    Card("mimicry", 1, COPY, 1, KNOWLEDGE, 1),
    Card("repeat", 1, DOUBLE, 1, KNOWLEDGE, 1),
    Card("weapon", 2, NONE, 2, KNOWLEDGE, 1),
    # further exploring the island
    Card("food", 2, LIFE1, 1, KNOWLEDGE, 2),
    Card("realization", 2, DESTROY, 1, KNOWLEDGE, 2),
    Card("experience", 2, CARD1, 1, KNOWLEDGE, 2),
    Card("strategy", 2, EXCHANGE1, 1, KNOWLEDGE, 2),
    Card("repeat", 2, DOUBLE, 1, KNOWLEDGE, 2),
    Card("vision", 2, SORT, 1, KNOWLEDGE, 2),
    # wild animals
    Card("realization", 3, DESTROY, 1, KNOWLEDGE, 3),
    Card("experience", 3, CARD1, 1, KNOWLEDGE, 3),
    Card("strategy", 3, EXCHANGE1, 1, KNOWLEDGE, 3),
    Card("vision", 3, SORT, 1, KNOWLEDGE, 3),
    # cannibals
    Card("weapon", 4, NONE, 2, KNOWLEDGE, 4),
    # Robinson's starting cards
    Card("distracted", -1, NONE, 5, STARTING),
    Card("weak", 0, NONE, 8, STARTING),
    Card("eating", 0, LIFE2, 1, STARTING),
    Card("focused", 1, NONE, 3, STARTING),
    Card("genius", 2, NONE, 1, STARTING),
    # aging: normal, then difficult
    Card("scared", 0, HIGHEST0, 2, AGING),
    Card("very tired", 0, STOP, 1, AGING),
    Card("hungry", 0, MINUS_LIFE1, 1, AGING),
    Card("distracted", -1, NONE, 1, AGING),
    Card("stupid", -2, NONE, 2, AGING),
    Card("very stupid", -3, NONE, 1, AGING, level3=True),
    Card("very hungry", 0, MINUS_LIFE2, 1, AGING, difficult=True),
    Card("moronic", -4, NONE, 1, AGING, difficult=True),
    Card("suicidal", -5, NONE, 1, AGING, difficult=True),
)
NUM_TYPES = len(CARDS)
NUM_HAZARD_TYPES = 24
FIRST_STARTING, FIRST_AGING = 24, 29
NUM_AGING_TYPES = NUM_TYPES - FIRST_AGING
VERY_STUPID = 34

# Hazard groups: free cards and hazard value per step (green, yellow, red).
GROUP_NAMES = ("with the raft to the wreck", "exploring the island", "further exploring the island", "wild animals", "cannibals")
GROUP_FREE = np.array([1, 2, 3, 4, 5], dtype=np.int64)
GROUP_VALUES = np.array([[0, 1, 3], [1, 3, 6], [2, 5, 8], [4, 7, 11], [5, 9, 14]], dtype=np.int64)
STEP_NAMES = ("green", "yellow", "red", "pirates")


class Pirate(NamedTuple):
    """A pirate card; free or hazard -1 means "*" (computed from the game)."""

    free: int
    hazard: int
    special: str


PAID_TWO, HALF_COUNT, PLUS_ONE, PER_AGING, ALL_HAZARDS = 5, 6, 7, 8, 9
PIRATES: tuple[Pirate, ...] = (
    Pirate(6, 20, ""),
    Pirate(7, 25, ""),
    Pirate(8, 30, ""),
    Pirate(9, 35, ""),
    Pirate(10, 40, ""),
    Pirate(7, 16, "each additional fighting card costs 2 life"),
    Pirate(9, 22, "only half of the face-up fighting cards count (face-up aging cards must be among them)"),
    Pirate(10, 52, "each face-up fighting card counts +1"),
    Pirate(5, -1, "+2 hazard points per aging card"),
    Pirate(-1, -1, "fight all remaining hazard cards"),
)
NUM_PIRATES = len(PIRATES)

# Arrays for the kernels.
VALUE = np.array([c.value for c in CARDS], dtype=np.int64)
ABILITY = np.array([c.ability for c in CARDS], dtype=np.int64)
COUNT = np.array([c.count for c in CARDS], dtype=np.int64)
KIND = np.array([c.kind for c in CARDS], dtype=np.int64)
GROUP = np.array([c.group for c in CARDS], dtype=np.int64)
DIFFICULT = np.array([c.difficult for c in CARDS], dtype=np.int64)
DESTROY_COST = np.where(KIND == AGING, 2, 1).astype(np.int64)
RATING = np.array([c.value + ABILITY_RATING[c.ability] for c in CARDS], dtype=np.int64)
PIRATE_FREE = np.array([p.free for p in PIRATES], dtype=np.int64)
PIRATE_HAZARD = np.array([p.hazard for p in PIRATES], dtype=np.int64)


def card_name(t: int) -> str:
    """A card's name with its value and ability, e.g. "repeat 2 (1x double)"."""
    c = CARDS[t]
    ability = f" ({ABILITY_NAMES[c.ability]})" if c.ability != NONE else ""
    return f"{c.name} {c.value}{ability}"


ABILITY_WEIGHT = np.array([ABILITY_RATING[a] for a in range(len(ABILITY_NAMES))], dtype=np.int64)
