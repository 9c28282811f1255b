"""Threes! (rules/threes.md): a single-player game whose every random event is a chance node.

A turn is: the player swipes (action 0 left, 1 right, 2 up, 3 down); an INSERT chance node
puts the hinted card at the far end of one moved line; a HINT chance node draws the next card
(the deck's 1/2/3 by their remaining counts, or a bonus card with probability 1/21 once the
highest card is >= 48). The game starts with nine SETUP chance nodes (a card of the fresh deck
on a uniformly random empty cell each) and one HINT node. Chance outcome ids::

    SETUP   4 * cell + rank          rank 1..3 of the deck card, cell 0..15
    HINT    64 + rank                rank 1..3 of a deck card, 64 + 4 = a bonus card ("+")
    INSERT  80 + 16 * line + rank    line 0..3 of the swipe, rank of the card put there

With the default "+" hint a bonus card's value is unknown until it is inserted: the INSERT
node then spreads uniformly over the bonus values allowed when it was drawn (6 .. highest/8).
Option ``hint="candidates"`` draws the value at once and shows up to three consecutive
candidate values around it (our reading of the later app: the window is centred on the value
and clipped to the allowed range); INSERT then spreads uniformly over the values whose window
is the one shown.

Compact state (int64 array; the first five slots are the common header of envs/core.py)::

    [0] to move (0, or CHANCE)  [1] swipes made  [2] outcome (-1, or 0 once over)  [3] key
    [4] last swipe  [5] board (16 x 4-bit ranks)  [6..8] cards 1/2/3 left in the deck
    [9] hint (0 none, 1..3, 4 bonus)  [10] phase  [11] moved-lines mask of the last swipe
    [12] setup cards left  [13] bonus value rank (candidates: the drawn one; "+": 0)
    [14] highest bonus rank allowed at the draw  [15] hint mode (0 "+", 1 candidates)
    [16] candidate window low rank  [17] candidate window high rank
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs import core as common
from tablegym.envs.core import (
    Game,
    GameSpec,
    IllegalActionError,
    Kernels,
    KernelState,
    k_key,
    k_outcome,
    k_to_move,
    sample_outcome,
)
from tablegym.envs.threes.board import (
    DIRECTION_NAMES,
    any_move,
    board_score,
    highest_rank,
    insert_cell,
    rank_value,
    ranks_of,
    set_rank,
    swipe,
)

BOARD, N1, N2, N3, HINT, PHASE, MOVED, SETUP_LEFT, BONUS, BONUS_HI, HINT_MODE, WIN_LO, WIN_HI = range(
    common.HEADER, common.HEADER + 13
)
SIZE = common.HEADER + 13
PLAY, INSERT, DRAW_HINT, SETUP = 0, 1, 2, 3
BONUS_HINT = 4
HINT_BASE, INSERT_BASE = 64, 80
NUM_OUTCOMES = INSERT_BASE + 64
BONUS_PROB = 1.0 / 21.0
BONUS_MIN_HIGHEST = 7  # rank of 48
HINT_MODES = ("+", "candidates")
INITIAL_CARDS = 9

# Zobrist-free key: the board word mixed with the rest of what the player can know.
_MIX = np.int64(0x9E3779B97F4A7C15 - 2**64)


@njit(cache=True)
def _rekey(s):
    k = s[BOARD]
    for i in (N1, N2, N3, HINT, PHASE, MOVED, WIN_LO, WIN_HI, common.LAST):
        k = (k ^ s[i]) * _MIX
    s[common.KEY] = k


@njit(cache=True)
def _deck_total(s):
    return s[N1] + s[N2] + s[N3]


@njit(cache=True)
def _take_deck_card(s, rank):
    s[N1 + rank - 1] -= 1
    if _deck_total(s) == 0:  # the empty deck is rebuilt (and reshuffled) at once
        s[N1] = 4
        s[N2] = 4
        s[N3] = 4


@njit(cache=True)
def bonus_window(value, hi):
    """Candidate ranks shown for a bonus of rank ``value`` when ranks 4..hi are allowed."""
    lo = max(4, value - 1)
    top = min(hi, lo + 2)
    lo = max(4, top - 2)
    return lo, top


@njit(cache=True)
def k_chance(s, ids, probs):
    """Outcomes of the chance node and their probabilities; 0 at a player node."""
    phase = s[PHASE]
    n = 0
    if phase == SETUP:
        empties = 0
        for cell in range(16):
            if (s[BOARD] >> (4 * cell)) & 0xF == 0:
                empties += 1
        total = _deck_total(s)
        for cell in range(16):
            if (s[BOARD] >> (4 * cell)) & 0xF == 0:
                for r in range(1, 4):
                    if s[N1 + r - 1] > 0:
                        ids[n] = 4 * cell + r
                        probs[n] = s[N1 + r - 1] / total / empties
                        n += 1
    elif phase == DRAW_HINT:
        total = _deck_total(s)
        h = highest_rank(s[BOARD])
        pb = BONUS_PROB if h >= BONUS_MIN_HIGHEST else 0.0
        for r in range(1, 4):
            if s[N1 + r - 1] > 0:
                ids[n] = HINT_BASE + r
                probs[n] = (1.0 - pb) * s[N1 + r - 1] / total
                n += 1
        if pb > 0:
            if s[HINT_MODE] == 0:
                ids[n] = HINT_BASE + BONUS_HINT
                probs[n] = pb
                n += 1
            else:  # candidates: the bonus value is drawn now (ids past 64 + 4 name it)
                hi = h - 3
                for v in range(4, hi + 1):
                    ids[n] = HINT_BASE + BONUS_HINT + (v - 4)
                    probs[n] = pb / (hi - 3)
                    n += 1
    elif phase == INSERT:
        lines = 0
        for line in range(4):
            if (s[MOVED] >> line) & 1:
                lines += 1
        hint = s[HINT]
        for line in range(4):
            if not (s[MOVED] >> line) & 1:
                continue
            if hint != BONUS_HINT:
                ids[n] = INSERT_BASE + 16 * line + hint
                probs[n] = 1.0 / lines
                n += 1
            elif s[HINT_MODE] == 0:
                count = s[BONUS_HI] - 3
                for v in range(4, s[BONUS_HI] + 1):
                    ids[n] = INSERT_BASE + 16 * line + v
                    probs[n] = 1.0 / lines / count
                    n += 1
            else:
                count = 0
                for v in range(4, s[BONUS_HI] + 1):
                    lo, hi = bonus_window(v, s[BONUS_HI])
                    if lo == s[WIN_LO] and hi == s[WIN_HI]:
                        count += 1
                for v in range(4, s[BONUS_HI] + 1):
                    lo, hi = bonus_window(v, s[BONUS_HI])
                    if lo == s[WIN_LO] and hi == s[WIN_HI]:
                        ids[n] = INSERT_BASE + 16 * line + v
                        probs[n] = 1.0 / lines / count
                        n += 1
    return n


@njit(cache=True)
def k_moves(s, out):
    """Legal swipes at a player node (left, right, up, down order); chance outcome ids otherwise."""
    if s[common.OUTCOME] != common.ONGOING:
        return 0
    if s[PHASE] != PLAY:
        probs = np.empty(out.shape[0], dtype=np.float64)
        return k_chance(s, out, probs)
    n = 0
    for d in range(4):
        _, moved = swipe(s[BOARD], d)
        if moved:
            out[n] = d
            n += 1
    return n


@njit(cache=True)
def k_push(s, a):
    """Apply a swipe or a chance outcome (no undo: Threes states are copied, never popped)."""
    phase = s[PHASE]
    if phase == PLAY:
        board, moved = swipe(s[BOARD], a)
        s[BOARD] = board
        s[MOVED] = moved
        s[common.LAST] = a
        s[common.PLY] += 1
        s[PHASE] = INSERT
        s[common.TO_MOVE] = common.CHANCE
    elif phase == SETUP:
        cell = a // 4
        rank = a % 4
        s[BOARD] = set_rank(s[BOARD], cell, rank)
        _take_deck_card(s, rank)
        s[SETUP_LEFT] -= 1
        if s[SETUP_LEFT] == 0:
            s[PHASE] = DRAW_HINT
    elif phase == INSERT:
        line = (a - INSERT_BASE) // 16
        rank = (a - INSERT_BASE) % 16
        s[BOARD] = set_rank(s[BOARD], insert_cell(s[common.LAST], line), rank)
        s[PHASE] = DRAW_HINT
    else:  # DRAW_HINT
        code = a - HINT_BASE
        if code < BONUS_HINT:
            _take_deck_card(s, code)
            s[HINT] = code
            s[BONUS] = 0
        else:
            hi = highest_rank(s[BOARD]) - 3
            s[HINT] = BONUS_HINT
            s[BONUS_HI] = hi
            if s[HINT_MODE] == 1:
                value = 4 + code - BONUS_HINT
                s[BONUS] = value
                lo, top = bonus_window(value, hi)
                s[WIN_LO] = lo
                s[WIN_HI] = top
        s[PHASE] = PLAY
        s[common.TO_MOVE] = 0
        if not any_move(s[BOARD]):
            s[common.OUTCOME] = 0
    _rekey(s)


@njit(cache=True)
def k_pop(s):
    raise NotImplementedError("Threes states are copied, not undone")


@njit(cache=True)
def k_features(s, out):
    """One-hot rank per cell (16 x 16 features), then the hint (4) and the deck counts (3 x 5)."""
    n = 0
    for cell in range(16):
        out[n] = 16 * cell + ((s[BOARD] >> (4 * cell)) & 0xF)
        n += 1
    if s[HINT] > 0:
        out[n] = 256 + s[HINT] - 1
        n += 1
    for i in range(3):
        out[n] = 260 + 5 * i + s[N1 + i]
        n += 1
    return n


KERNELS = Kernels(k_moves, k_push, k_pop, k_to_move, k_outcome, k_key, k_features, k_chance, undo=False)
NUM_FEATURES = 275
OBS_SIZE = 16 + 4 + 3 + 2


@njit(cache=True)
def k_observation(s, out):
    """``State.observation()`` into the float32 vector ``out`` (one implementation for the env
    and for exported networks inside the compiled searches)."""
    for c in range(16):
        out[c] = (s[BOARD] >> (4 * c)) & 0xF
    for i in range(16, OBS_SIZE):
        out[i] = 0.0
    h = s[HINT]
    if h:
        out[16 + h - 1] = 1.0
    out[20] = s[N1]
    out[21] = s[N2]
    out[22] = s[N3]
    if h == BONUS_HINT and s[HINT_MODE] == 1:
        out[23] = s[WIN_LO]
        out[24] = s[WIN_HI]


class ThreesGame(Game):
    """Threes! with the "+" bonus hint (default) or the later app's "candidates" hint.

    >>> import numpy as np
    >>> from tablegym.envs.threes.core import ThreesGame, play_random_setup
    >>> s = play_random_setup(ThreesGame(), np.random.default_rng(0))
    >>> s.current_player(), int((s.ranks > 0).sum())
    (0, 9)
    """

    def __init__(self, hint: str = "+") -> None:
        if hint not in HINT_MODES:
            raise ValueError(f"Threes hint must be one of {HINT_MODES}, got {hint!r}")
        self.hint = hint
        self.spec = GameSpec(
            name="threes",
            num_players=1,
            num_actions=4,
            max_game_length=100_000,
            min_utility=0.0,
            max_utility=float(16 * 3**13),
            observation_shape=(OBS_SIZE,),
            options={"hint": hint},
            chance=True,
            max_chance_outcomes=NUM_OUTCOMES,
        )

    def new_initial_state(self) -> ThreesState:
        s = np.zeros(SIZE, dtype=np.int64)
        s[common.TO_MOVE] = common.CHANCE
        s[common.OUTCOME] = common.ONGOING
        s[common.LAST] = -1
        s[N1] = s[N2] = s[N3] = 4
        s[PHASE] = SETUP
        s[SETUP_LEFT] = INITIAL_CARDS
        s[HINT_MODE] = HINT_MODES.index(self.hint)
        _rekey(s)
        return ThreesState(self, s)


class ThreesState(KernelState):
    """A Threes position: a player node (swipe) or one of the chance nodes of the module doc."""

    kernels = KERNELS
    num_features = NUM_FEATURES

    def current_player(self) -> int:
        if self._s[common.OUTCOME] != common.ONGOING:
            return common.TERMINAL
        return int(self._s[common.TO_MOVE])

    def _why_illegal(self, action: int) -> str:
        return "(no card can move that way)" if self.current_player() == 0 else "(not an outcome here)"

    def returns(self) -> np.ndarray:
        return np.array([float(self.score)])

    # ---- what a player sees ------------------------------------------------------------------

    @property
    def board(self) -> int:
        """The 64-bit board word (see envs/threes/board.py)."""
        return int(self._s[BOARD])

    @property
    def ranks(self) -> np.ndarray:
        return ranks_of(self._s[BOARD])

    @property
    def values(self) -> np.ndarray:
        """The 4x4 card values (0 for an empty cell)."""
        return np.vectorize(rank_value)(self.ranks)

    @property
    def score(self) -> int:
        return int(board_score(self._s[BOARD]))

    @property
    def highest(self) -> int:
        return rank_value(int(highest_rank(self._s[BOARD])))

    @property
    def moves(self) -> int:
        """Swipes made so far."""
        return int(self._s[common.PLY])

    @property
    def deck(self) -> tuple[int, int, int]:
        """Cards 1, 2, 3 left in the current deck (card counting is allowed)."""
        return int(self._s[N1]), int(self._s[N2]), int(self._s[N3])

    @property
    def hint(self) -> str:
        """The next card as the player sees it: "1", "2", "3", "+" or e.g. "6/12/24"."""
        h = int(self._s[HINT])
        if h == 0:
            return "?"
        if h < BONUS_HINT:
            return str(h)
        if self.game.hint == "+":
            return "+"
        lo, hi = int(self._s[WIN_LO]), int(self._s[WIN_HI])
        return "/".join(str(rank_value(r)) for r in range(lo, hi + 1))

    def search_inputs(self) -> tuple[int, int, int, int, int, int]:
        """What a searching player may know: (board word, deck 1/2/3 counts, hint code 1..3 or 4
        for a bonus, highest bonus rank allowed when the bonus was drawn)."""
        s = self._s
        return int(s[BOARD]), int(s[N1]), int(s[N2]), int(s[N3]), int(s[HINT]), int(s[BONUS_HI])

    def observation(self, player: int = 0) -> np.ndarray:
        """[16 cell ranks (row-major from the top-left), hint one-hot (1, 2, 3, bonus), deck
        counts, candidate window low/high rank (option "candidates" with a bonus hint; else 0)]."""
        obs = np.empty(OBS_SIZE, dtype=np.float32)
        k_observation(self._s, obs)
        return obs

    def to_text(self) -> str:
        rows = [" ".join(f"{rank_value(r) if r else '.':>5}" for r in row) for row in self.ranks]
        rows.append(
            f"next: {self.hint}   score: {self.score}   moves: {self.moves}   deck 1/2/3: " + "/".join(map(str, self.deck))
        )
        if self.is_terminal():
            rows.append("game over")
        return "\n".join(rows)

    def action_to_string(self, action: int) -> str:
        if self.current_player() == 0:
            return DIRECTION_NAMES[action]
        return f"chance {action}"

    def string_to_action(self, text: str) -> int:
        """Parse a swipe: left/right/up/down, their first letters, an arrow key's escape
        sequence (what a terminal sends for the arrow keys), or 0-3."""
        word = text.strip().lower()
        names = {name: i for i, name in enumerate(DIRECTION_NAMES)}
        names.update({name[0]: i for i, name in enumerate(DIRECTION_NAMES)})
        names.update({"\x1b[d": 0, "\x1b[c": 1, "\x1b[a": 2, "\x1b[b": 3})
        if word in names:
            a = names[word]
        else:
            a = self._number(text, word, "(swipe l, r, u or d)")
        if a not in self.legal_actions():
            raise IllegalActionError(text, self.legal_actions(), "(no card can move that way)")
        return a


def sample_chance(state: ThreesState, rng: np.random.Generator) -> ThreesState:
    """Resolve chance nodes with ``rng`` until the player is to move (or the game is over)."""
    while state.current_player() == common.CHANCE:
        state = state.child(sample_outcome(state, rng))
    return state


def outcome(state: ThreesState) -> dict:
    """What a finished game's record keeps beyond its return (the record's ``outcome``)."""
    return {"score": state.score, "highest": state.highest, "moves": state.moves}


def play_random_setup(game: ThreesGame, rng: np.random.Generator) -> ThreesState:
    """The starting position: nine cards dealt and the first hint drawn."""
    return sample_chance(game.new_initial_state(), rng)


@njit(cache=True)
def flat_observation(s, player, out):
    """``State.observation(player)`` of the compact state ``s`` flattened into the float32 vector
    ``out``: what exported networks (models/export.py) and the vector env (envs/vector.py) read."""
    k_observation(s, out)
