"""Friday (rules/friday.md): the step machine as compiled kernels over one compact int8 array,
packed into the common int64 state.

Hidden order is chance. A shuffled stack is kept as counts per card type, and every draw from
it is a chance node whose outcomes are the card types, weighted by their counts. So "shuffle"
costs nothing, and search determinizes by sampling draws as it goes (``k_sample``). Cards whose
place the player knows are kept in order: up to three put back on top by "sort 3 cards" (TOP)
and the cards put "below the pile" (BOTTOM). A draw takes TOP first, then the shuffled middle,
then BOTTOM; only when all three are empty does the aging card join the discard pile and the
discard pile become the new middle.

Chance outcome ids: a fighting card's type (0-37) when a fighting or aging card is drawn, a
hazard's type (0-23) when a hazard is drawn, 38 + pirate (0-9) when a pirate is revealed.

Action ids (one flat space; ``action_to_string`` names them)::

    0 FIGHT_0      fight the first drawn hazard (or the only one)
    1 FIGHT_1      fight the second drawn hazard (the first goes to the hazard discard pile)
    2 SKIP         discard the only hazard left in the stack (ends the step)
    3 DRAW_FREE    draw a free card onto the left
    4 DRAW_PAID    pay 1 life (2 against the 7/16 pirate) for a card on the right
    5 END_FIGHT    compare and resolve (behind: a deliberate loss; pirates: only when ahead)
    6 DONE         stop a multi-part ability early (+2 cards, 2x exchange, sort 3 cards), decline
                   the replacement after "below the pile"; finish destroying
    7 STOP_FREE    end the free draws (only with abilities="after_free")
    8 EXTRA_DRAW   one more card: the second of "+2 cards", the next of "sort 3 cards"
                   (sort_draws="one_at_a_time"), the free replacement after "below the pile"
                   (below_replacement="optional")
    9 CONCEDE      give up (pirate fights only; the game is lost)
    10, 11         PIRATE_0, PIRATE_1: the pirate to fight first
    12 + i         USE the ability of table slot i                    (i < MAX_SLOTS)
    52 + i         TARGET slot i with the ability being used
    92 + i         DESTROY slot i after a lost fight (slots in increasing order)
    132 + k        SORT: arrangement k of the cards drawn by "sort 3 cards" (``SORT_OPTIONS``)

Readings of the spec where it is silent: copying "step -1" makes the copy count as one more
step -1 card while face up; "sort 3 cards" takes up to 3 cards without a reshuffle and is not
offered on an empty stack (one at a time by default: ``FridayGame``'s options); "highest card =
0" zeroes the highest positive values (after doubling); against the 9/22 pirate the zeroing comes before the half is chosen; a "stop" that
ended the free draws keeps them ended if it is destroyed later; any card drawn onto the left
(a replacement too) ends them if it is a "stop"; the loss destroy choice is made one slot at a
time in increasing slot order, then DONE. A game can repeat positions (two "below the pile"
cards on the left with an empty stack), so searches keep a cycle guard and the env truncates.

The state every search and env holds is the common one (envs/core.py): an int64 array whose
header (to move: 0 or ``CHANCE``; ply = decisions made; outcome: ``ONGOING``, then 0 once the
game is over, as in Threes; the key slot, unused: ``state_key`` hashes on demand; the last
decision) is followed by Friday's ``SIZE`` int8 slots, packed eight to a word (``body(s)`` is
their int8 view). Packed, a state is 368 bytes, not the 2.6 KB of one int64 per slot: the
best-first search copies states into its pool and runs faster when they stay small. The rules
kernels (``k_apply``, ``k_moves``, ``k_chance``...) work on the slots; the kernels of the common
contract (``KERNELS``: ``state_push``, ``state_moves``, ...) wrap them over the whole state and
keep the header with ``k_sync``.

Friday's slots (int8; ``SIZE`` of them)::

    [0] life  [1] max life  [2] level  [3] step 0-2 green/yellow/red, 3 pirates  [4] phase
    [5] pending chance draw  [6] result 0 ongoing / 1 won / 2 lost  [7-9] options (abilities,
    aging_life, empty_aging; the other two after SLOT_FLAG)
    [10] hazard fought (-1)  [11] pirate fought (0/1, -1)  [12] free cards allowed  [13] drawn
    [14] free draws ended  [15-16] drawn hazards  [17-18] the two pirates  [19] pirates beaten
    (bits)  [20] aging cards entered  [21] ability in use  [22] its source slot  [23] its parts
    left  [24] replacement side  [25] draw destination  [26] sort cards  [27-29] them
    [30] destroy budget left  [31] last slot destroyed  [32] hazards to draw  [33] TOP count
    [34-36] TOP  [37] BOTTOM count  then the arrays MID, DISC (38 each), HSTACK, HDISC (24
    each), AGING (9), PIRATE_POOL (10), BOTTOM (64), SLOT_CARD, SLOT_FLAG (40 each), then the
    options below_replacement and sort_draws (1 each).
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
from numba import njit

from tablegym.envs import core as common
from tablegym.envs.core import ONGOING as PLAYING
from tablegym.envs.core import Game, GameSpec, IllegalActionError, Kernels, KernelState, k_outcome, k_to_move
from tablegym.envs.friday import cards as C
from tablegym.envs.friday import layout as L
from tablegym.envs.friday.cards import card_name
from tablegym.envs.friday.decisions import k_apply, k_determinize, k_key, k_moves, k_owned, k_sample, k_sample_split, k_score
from tablegym.envs.friday.layout import _sync, body, k_sync
from tablegym.envs.friday.observation import OBS_SIZE, k_observe
from tablegym.envs.friday.turns import fight_target, fight_total, k_chance, k_new

# ---- the common state: the header, then the slots packed eight to a word -----------------------------


@njit(cache=True)
def state_key(s):
    """The key of the common state (``Kernels.key``): ``k_key`` of its slots."""
    return k_key(body(s))


@njit(cache=True)
def state_moves(s, out):
    """``k_moves`` of the common state (``Kernels.moves``): decisions, or a draw's outcomes."""
    return k_moves(body(s), out)


@njit(cache=True)
def state_push(s, a):
    """Play a decision or a chance outcome on the common state (``Kernels.push``; unchecked:
    ``FridayState.child`` checks): a decision counts as a ply and is the last one."""
    b = body(s)
    if b[L.PENDING] == L.PD_NONE:
        s[common.PLY] += 1
        s[common.LAST] = a
    k_apply(b, a)
    _sync(s, b)


@njit(cache=True)
def state_pop(s):
    raise NotImplementedError("Friday states are copied, not undone")


@njit(cache=True)
def state_chance(s, ids, probs):
    """``k_chance`` of the common state (``Kernels.chance``)."""
    return k_chance(body(s), ids, probs)


@njit(cache=True)
def state_sample(s, rng_state):
    """``k_sample_split`` on the common state (``Kernels.sample``: the searches' sampler); the
    header is kept only where a draw was pending (most decisions draw nothing)."""
    if s[common.TO_MOVE] == common.CHANCE:
        b = body(s)
        k_sample_split(b, rng_state)
        _sync(s, b)


@njit(cache=True)
def state_determinize(s, rng_state):
    """``k_determinize`` on the common state (``Kernels.determinize``: a search root's world)."""
    k_determinize(body(s), rng_state)
    k_sync(s)


KERNELS = Kernels(
    state_moves,
    state_push,
    state_pop,
    k_to_move,
    k_outcome,
    state_key,
    None,
    state_chance,
    undo=False,
    sample=state_sample,
    determinize=state_determinize,
)
"""Friday on the common contract (no binary features: its networks read the observation); its
searches sample draws with ``k_sample_split`` and fix the shuffled stack with ``k_determinize``."""


# ---- the object API ---------------------------------------------------------------------------------


class FridayOptions(TypedDict, total=False):
    """``FridayGame``'s rule options as keyword arguments, each optional (its docstring says what
    each means): what the env and ``scenario`` pass on to the game they make."""

    level: int
    abilities: str
    aging_life: str
    empty_aging: str
    below_replacement: str
    sort_draws: str
    max_life_level4: int


class FridayGame(Game):
    """Friday at ``level`` 1-4, with the spec's uncertain rules as named options (default first).

    - ``abilities``: "any_time" (during the whole fight) or "after_free" (once the free draws
      end, as in the Fridai engine).
    - ``aging_life``: "-1/-2 life" aging cards charge "at_resolution" of the fight or "when_drawn".
    - ``empty_aging``: a reshuffle with no aging card left "lose"s the game (Friedemann Friese's
      official rules change, BoardGameGeek thread 1808313 "Friday: official rules change", which
      the Fridai engine implements), or does "reshuffle" without aging (the first edition's
      silence, read literally).
    - ``below_replacement``: after "below the pile" takes a card from the left, the free
      replacement is "optional" (the rule text: Robinson "can" draw one) or "forced".
    - ``sort_draws``: "sort 3 cards" draws its cards "one_at_a_time", and the player may stop
      after any of them (the text's "up to 3 cards"), or "all_at_once" (min(3, stack)).
    - ``max_life_level4``: 22, or 20 at level 4.

    Readings no option covers, and the source each follows:

    - "very stupid" (-3) is in the aging stack at levels 3 and 4 only (rules/friday.md, "Setup
      by level": level 3 shuffles it in with the normal aging cards).
    - Level 4 starts at 18 life with the maximum at 22, as at the other levels (rules/friday.md,
      "Components": maximum 22); a maximum of 20 at level 4 is the option above, which the spec
      names as its alternative.
    - "-1/-2 life" aging cards in a pirate fight charge as in a hazard fight, at the fight's
      resolution (rules/friday.md, "A turn" 5, and "Pirates": pirates are fought "like
      hazards"): a pirate fight that reaches the value still pays them, and a Robinson who cannot
      pay dies then. ``aging_life="when_drawn"`` charges them when drawn instead.
    - "highest card = 0" zeroes the highest face-up value after doubling, one card for each such
      aging card, and only a positive value (rules/friday.md, "Abilities": "the highest face-up
      card value after doubling counts 0; each such card zeroes one card").

    >>> import numpy as np
    >>> from tablegym.envs.friday.core import FridayGame, sample_chance
    >>> state = sample_chance(FridayGame(level=1).new_initial_state(), np.random.default_rng(0))
    >>> state.life, state.step_name, len(state.legal_actions())
    (20, 'green', 2)
    """

    def __init__(
        self,
        level: int = 1,
        abilities: str = "any_time",
        aging_life: str = "at_resolution",
        empty_aging: str = "lose",
        below_replacement: str = "optional",
        sort_draws: str = "one_at_a_time",
        max_life_level4: int = 22,
    ) -> None:
        if level not in (1, 2, 3, 4):
            raise ValueError(f"Friday level must be 1, 2, 3 or 4, got {level!r}")
        chosen = {
            "abilities": abilities,
            "aging_life": aging_life,
            "empty_aging": empty_aging,
            "below_replacement": below_replacement,
            "sort_draws": sort_draws,
        }
        for name, value in chosen.items():
            if value not in L.OPTION_VALUES[name]:
                raise ValueError(f"Friday option {name!r} must be one of {L.OPTION_VALUES[name]}, got {value!r}")
        if max_life_level4 not in (20, 22):
            raise ValueError(f"Friday option 'max_life_level4' must be 20 or 22, got {max_life_level4!r}")
        self.level = level
        self.codes = tuple(L.OPTION_VALUES[name].index(value) for name, value in chosen.items())
        self.max_life_level4 = max_life_level4
        self.spec = GameSpec(
            name="friday",
            num_players=1,
            num_actions=L.NUM_ACTIONS,
            max_game_length=10_000,  # soft: two "below the pile" cards can cycle; the env truncates
            min_utility=-1.0,
            max_utility=1.0,
            observation_shape=(OBS_SIZE,),
            options={"level": level, **chosen, "max_life_level4": max_life_level4},
            chance=True,
            max_chance_outcomes=L.NUM_OUTCOMES,
        )

    def new_initial_state(self) -> FridayState:
        return FridayState(self, k_new(self.level, *self.codes, self.max_life_level4))


class FridayState(KernelState):
    """A Friday position: a decision, or a pending draw (``current_player() == CHANCE``)."""

    kernels = KERNELS

    @property
    def body(self) -> np.ndarray:
        """Friday's slots (the int8 view of this state's words after the header; read them only)."""
        return self._s[common.HEADER :].view(np.int8)

    def current_player(self) -> int:  # read off the header, without a call into the kernels
        return common.TERMINAL if self._s[common.OUTCOME] != PLAYING else int(self._s[common.TO_MOVE])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.current_player() != common.CHANCE:
            raise ValueError("chance_outcomes() called at a decision, not at a pending draw")
        return super().chance_outcomes()

    def _why_illegal(self, action: int) -> str:
        if self.is_terminal():
            return "(the game is over)"
        if self.current_player() == common.CHANCE:
            return "(a card is being drawn: pass one of the chance outcomes)"
        name = action_name(action) if 0 <= action < L.NUM_ACTIONS else "no such action"
        return f"({name} is not legal while: {self.phase_name})"

    def returns(self) -> np.ndarray:
        r = int(self.body[L.RESULT])
        return np.array([1.0 if r == L.WON else -1.0 if r == L.LOST else 0.0])

    def winner(self) -> int | None:
        return 0 if self.won else None

    # ---- what a player sees ------------------------------------------------------------------

    @property
    def life(self) -> int:
        return int(self.body[L.LIFE])

    @property
    def step(self) -> int:
        """0 green, 1 yellow, 2 red, 3 pirates."""
        return int(self.body[L.STEPI])

    @property
    def step_name(self) -> str:
        return C.STEP_NAMES[self.step]

    @property
    def phase(self) -> int:
        return int(self.body[L.PHASE])

    @property
    def phase_name(self) -> str:
        if self.phase == L.P_EXTRA:  # one phase, "draw one more card or stop", for three abilities
            return L.EXTRA_PHASE_NAMES.get(int(self.body[L.AB_KIND]), L.PHASE_NAMES[L.P_EXTRA])
        return L.PHASE_NAMES[self.phase]

    @property
    def won(self) -> bool:
        return int(self.body[L.RESULT]) == L.WON

    @property
    def score(self) -> int:
        return int(k_score(self.body))

    @property
    def pirates(self) -> tuple[int, int]:
        """The two revealed pirates (ids into ``cards.PIRATES``; -1 before the reveal)."""
        return int(self.body[L.PIRATE_A]), int(self.body[L.PIRATE_B])

    @property
    def pirates_beaten(self) -> int:
        """How many of the two pirates are beaten."""
        return sum(self.beaten)

    @property
    def beaten(self) -> tuple[bool, bool]:
        """Whether each of the two revealed pirates is beaten."""
        return bool(self.body[L.BEATEN] & 1), bool((self.body[L.BEATEN] >> 1) & 1)

    @property
    def pirate_fought(self) -> int:
        """Which of the two pirates (0/1) is being fought; -1 outside a pirate fight."""
        return int(self.body[L.PFIGHT])

    @property
    def destroy_budget(self) -> int:
        """Destroy cost left after a lost fight (0 outside that choice)."""
        return int(self.body[L.DESTROY_LEFT]) if self.phase == L.P_DESTROY else 0

    @property
    def aging_entered(self) -> int:
        return int(self.body[L.AGING_IN])

    def zone(self, name: str) -> np.ndarray:
        """Counts per card type in a zone: "stack", "discard", "table", "aging", "hazards",
        "hazard_discard", "owned", or "removed" (cards out of the game)."""
        s = self.body.astype(np.int64)
        if name == "stack":
            out = s[L.MID : L.MID + C.NUM_TYPES].astype(np.int64)
            for c in (
                list(s[L.TOP0 : L.TOP0 + s[L.TOP_N]])
                + list(s[L.SORT0 : L.SORT0 + s[L.SORT_N]])
                + list(s[L.BOTTOM : L.BOTTOM + s[L.BOTTOM_N]])
            ):
                out[c] += 1
            return out
        if name == "discard":
            return s[L.DISC : L.DISC + C.NUM_TYPES].astype(np.int64)
        if name == "table":
            out = np.zeros(C.NUM_TYPES, dtype=np.int64)
            for c in s[L.SLOT_CARD : L.SLOT_CARD + L.MAX_SLOTS]:
                if c >= 0:
                    out[c] += 1
            return out
        if name == "aging":
            out = np.zeros(C.NUM_TYPES, dtype=np.int64)
            out[C.FIRST_AGING :] = s[L.AGING_STACK : L.AGING_STACK + C.NUM_AGING_TYPES]
            return out
        if name == "hazards":
            out = np.zeros(C.NUM_TYPES, dtype=np.int64)
            out[: C.NUM_HAZARD_TYPES] = s[L.HSTACK : L.HSTACK + C.NUM_HAZARD_TYPES]
            for k in (L.CHOICE_A, L.CHOICE_B):
                if s[k] >= 0:
                    out[s[k]] += 1
            return out
        if name == "hazard_discard":
            out = np.zeros(C.NUM_TYPES, dtype=np.int64)
            out[: C.NUM_HAZARD_TYPES] = s[L.HDISC : L.HDISC + C.NUM_HAZARD_TYPES]
            return out
        if name == "owned":
            out = np.zeros(C.NUM_TYPES, dtype=np.int64)
            k_owned(self.body, out)
            return out
        if name == "removed":
            present = sum(self.zone(z) for z in ("owned", "aging", "hazards", "hazard_discard"))
            if s[L.FIGHT] >= 0:
                present[s[L.FIGHT]] += 1
            total = C.COUNT.copy()
            if self.game.level < 3:
                total[C.VERY_STUPID] = 0
            return total - present
        raise ValueError(f"unknown zone {name!r}")

    @property
    def table(self) -> list[tuple[int, int, str]]:
        """(slot, card type, flags text) of the cards on the table, left side first."""
        body = self.body
        cards, flag_bits = (
            body[L.SLOT_CARD : L.SLOT_CARD + L.MAX_SLOTS].tolist(),
            body[L.SLOT_FLAG : L.SLOT_FLAG + L.MAX_SLOTS].tolist(),
        )
        rows = []
        for i, c in enumerate(cards):
            if c >= 0:
                f = flag_bits[i]
                flags = "".join(
                    ch
                    for bit, ch in (
                        (L.F_LEFT, "L"),
                        (L.F_DESTROYED, "x"),
                        (L.F_DOUBLED, "2"),
                        (L.F_USED, "u"),
                        (L.F_COPIED_STEP, "s"),
                    )
                    if f & bit
                )
                rows.append((i, c, flags))
        rows.sort(key=lambda r: ("L" not in r[2], r[0]))
        return rows

    @property
    def hazard(self) -> int:
        """The hazard being fought (-1 when none)."""
        return int(self.body[L.FIGHT])

    @property
    def hazard_choice(self) -> tuple[int, int]:
        return int(self.body[L.CHOICE_A]), int(self.body[L.CHOICE_B])

    def fight(self) -> tuple[int, int]:
        """(fighting total, hazard value) of the current fight."""
        return int(fight_total(self.body)), int(fight_target(self.body))

    def observation(self, player: int = 0) -> np.ndarray:
        out = np.zeros(OBS_SIZE, dtype=np.float32)
        k_observe(self.body, out)
        return out

    def action_to_string(self, action: int) -> str:
        return self._namer()(action)

    def _namer(self):
        """The name of an action (or a draw's outcome) here, the state read once."""
        body = self.body
        if self.current_player() == common.CHANCE:
            pending = int(body[L.PENDING])
            return lambda a: outcome_name(a, pending)
        return lambda a: action_name(a, body)

    def string_to_action(self, text: str) -> int:
        """Parse an action id or its name as ``action_to_string`` prints it (case-insensitive)."""
        legal = self.legal_actions()
        want = text.strip().lower()
        if want.isdigit() and int(want) in legal and str(int(want)) == want:  # no name is a number
            return int(want)
        name = self._namer()
        for a in legal:
            if want == name(a).lower():
                return a
        raise IllegalActionError(text, legal, f"(not a legal action while: {self.phase_name})")

    def to_text(self) -> str:
        from tablegym.envs.friday.render import state_text

        return state_text(self)

    def __eq__(self, other: object) -> bool:
        """The same position: the same slots, whatever the header's history (ply, last decision)
        says; a fight can come back to a position (module docstring)."""
        return type(other) is type(self) and np.array_equal(self.body, other.body)  # type: ignore[attr-defined]

    __hash__ = KernelState.__hash__


def sample_chance(state: FridayState, rng: np.random.Generator) -> FridayState:
    """Resolve pending draws with ``rng`` until a decision or the end of the game."""
    if state.current_player() != common.CHANCE:
        return state
    s = state.array
    k_sample(s[common.HEADER :].view(np.int8), rng)
    k_sync(s)
    return FridayState(state.game, s)


def deal(game: FridayGame, seed: int, index: int) -> tuple[FridayState, np.random.Generator]:
    """The opening state of game ``index`` of a run seeded ``seed`` and the generator that plays
    its chance: the one seeding rule of every Friday run (the record's ``deal``), so two agents
    given the same game see the same cards. Keyed by level too: a run over levels 1-4 plays
    other deals at each level."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(game.level, index)))
    return sample_chance(game.new_initial_state(), rng), rng


def outcome(state: FridayState) -> dict:
    """What a finished game's record keeps beyond its return (the record's ``outcome``)."""
    return {
        "won": bool(state.won),
        "score": state.score,
        "life": state.life,
        "step": state.step,
        "pirates_beaten": state.pirates_beaten,
    }


def action_name(a: int, s: np.ndarray | None = None) -> str:
    """A readable name of action ``a`` (with the card it names when the state ``s`` is given)."""
    names = (
        "fight first hazard",
        "fight second hazard",
        "skip hazard",
        "draw free",
        "draw paid",
        "end fight",
        "done",
        "stop free draws",
        "draw second card",
        "concede",
        "fight first pirate",
        "fight second pirate",
    )
    if a == L.EXTRA_DRAW and s is not None and s[L.PHASE] == L.P_EXTRA and s[L.AB_KIND] in (C.SORT, C.BELOW):
        return "draw another card" if s[L.AB_KIND] == C.SORT else "draw replacement"
    if a < L.USE_BASE:
        return names[a]

    def slot(i: int) -> str:
        if s is None or s[L.SLOT_CARD + i] < 0:
            return f"slot {i}"
        return f"slot {i} {card_name(int(s[L.SLOT_CARD + i]))}"

    if a < L.TARGET_BASE:
        return f"use {slot(a - L.USE_BASE)}"
    if a < L.DESTROY_BASE:
        return f"target {slot(a - L.TARGET_BASE)}"
    if a < L.SORT_BASE:
        return f"destroy {slot(a - L.DESTROY_BASE)}"
    n, d, *order = L.SORT_OPTIONS[a - L.SORT_BASE]
    kept = "".join(str(i) for i in order if i >= 0) or "-"
    return f"sort {kept}" + (f" discard {d}" if d >= 0 else "")


def outcome_name(o: int, pending: int) -> str:
    if o >= L.PIRATE_OUTCOME:
        p = C.PIRATES[o - L.PIRATE_OUTCOME]
        free = "*" if p.free < 0 else p.free
        hazard = "*" if p.hazard < 0 else p.hazard
        return f"pirate {free}/{hazard}" + (f" ({p.special})" if p.special else "")
    if pending == L.PD_HAZARD:
        c = C.CARDS[o]
        free, values = C.GROUP_FREE[c.group], C.GROUP_VALUES[c.group]
        return f"hazard {free}; {values[0]}/{values[1]}/{values[2]} -> {card_name(o)}"
    return card_name(o)
