"""Trap (rules/trap.md): move a king step, then throw a trap that may miss; enclose the opponent.

A turn of the player to move is two decisions and a chance event::

    MOVE phase    actions 0..7: a king step      7 0 1       (row, col) offsets
                                                 6 . 2       0 N (-1, 0)  1 NE (-1, +1)
                                                 5 4 3       2 E (0, +1)  ... 7 NW (-1, -1)
    THROW phase   actions 8 + cell: the target cell (any cell not holding a player)
    CHANCE        outcome id = the cell the trap lands on (``chance_outcomes()``: the full
                  landing distribution, p on the target and (1 - p) / n on each of its n
                  in-board, non-player neighbours, with p = 1 - 0.05 (a - 1), a = Manhattan
                  distance from the thrower's new cell to the target)

Cells are numbered row-major from the top-left, ``cell = row * N + col``; player 0 starts at
(0, N//2) and player 1 at (N-1, N//2). One Discrete(8 + N*N) action space covers both
decisions; the legal mask always opens exactly one phase's part.

After the move, and again after the landing, the mover wins if the OPPONENT has no empty
neighbour (a player counts as a wall); a winning move has no throw. A player whose own trap
closes its last exit does not lose at once: the opponent wins after its own next move or
landing if the enclosure still holds. ``turn_cap`` completed turns (default 200) end the game
in a draw (tablegym's addition: two searching players can throw onto trapped cells forever).

Compact state (an int64 array, see ``Kernels`` in envs/core.py)::

    [0] mover (kept at chance nodes; ``k_to_move`` reports CHANCE there)  [1] ply (= undo depth)
    [2] outcome  [3] Zobrist key  [4] last action or outcome    (the common header)
    [5] N  [6] cell of player 0  [7] cell of player 1  [8] phase  [9] throw target (-1)
    [10] turns completed  [11] turn cap  [12] first player  [13] candidate cap (search only)
    [14] rules mode: 0 the game; 1 the course's reduced game (search only, see ``COURSE``)
    [HDR : HDR+N*N]            cells: 1 trapped, 0 not (players are kept in slots 6/7)
    [HDR+N*N : ...]            undo stack, one entry per push (see ``k_push``)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tablegym.envs import core as common
from tablegym.envs.core import Game, GameSpec, IllegalActionError, Kernels, KernelState, k_key, k_outcome

N_, POS0, POS1, PHASE, TARGET, TURNS, CAP, FIRST, CAND, MODE = range(common.HEADER, common.HEADER + 10)
HDR = 16
MOVE, THROW, LANDING = 0, 1, 2
"""Phases: the mover steps, the mover names a target, chance places the trap."""
GAME, COURSE = 0, 1
"""Rules modes. ``COURSE`` is the tree of the course's two-search recipe: after a player's step
the OPPONENT throws (the stepper's own throw is skipped), and after a landing the other player
steps. Searched from a move phase it maximises over own steps and minimises over the opponent's
throws; from a throw phase, over own throws and the opponent's steps."""
NUM_DIRS = 8
MIN_SIDE, MAX_SIDE = 3, 8
DEFAULT_TURN_CAP = 200
MISS_STEP = 0.05
"""Each step of Manhattan distance beyond the first lowers the chance of a hit by this much."""

DIRS = np.array([[-1, 0], [-1, 1], [0, 1], [1, 1], [1, 0], [1, -1], [0, -1], [-1, -1]], dtype=np.int64)
DIR_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")

_CELLS = MAX_SIDE * MAX_SIDE
_rng = np.random.default_rng(20211108)
# Zobrist numbers: trap per cell, player 0 / player 1 per cell, throw target per cell, and the
# (mover, phase) pair. Fixed seeds so keys repeat across runs.
_Z_TRAP = _rng.integers(1, 2**63 - 1, size=_CELLS, dtype=np.int64)
_Z_POS = _rng.integers(1, 2**63 - 1, size=(2, _CELLS), dtype=np.int64)
_Z_TARGET = _rng.integers(1, 2**63 - 1, size=_CELLS, dtype=np.int64)
_Z_TURN = _rng.integers(1, 2**63 - 1, size=(2, 3), dtype=np.int64)


@njit(cache=True)
def is_free(s, cell):
    """Whether ``cell`` is empty: no trap and no player."""
    return s[HDR + cell] == 0 and cell != s[POS0] and cell != s[POS1]


@njit(cache=True)
def step(n, cell, d):
    """The cell one king step ``d`` away from ``cell``, or -1 off the board."""
    r = cell // n + DIRS[d, 0]
    c = cell % n + DIRS[d, 1]
    if r < 0 or r >= n or c < 0 or c >= n:
        return -1
    return r * n + c


@njit(cache=True)
def free_neighbours(s, cell):
    """m(cell): the number of empty cells among the 8 neighbours of ``cell``."""
    n = s[N_]
    m = 0
    for d in range(NUM_DIRS):
        t = step(n, cell, d)
        if t >= 0 and is_free(s, t):
            m += 1
    return m


@njit(cache=True)
def mobility(s, player):
    """m(P) of the course's heuristics: the number of legal moves of ``player``."""
    return free_neighbours(s, s[POS0 + player])


@njit(cache=True)
def hit_probability(distance):
    """p = 1 - 0.05 (a - 1) for a throw over Manhattan distance ``a`` >= 1."""
    return 1.0 - MISS_STEP * (distance - 1)


@njit(cache=True)
def landing(s, thrower_cell, target, cells, probs):
    """The landing distribution of a throw from ``thrower_cell`` at ``target``; returns its size.

    ``cells[0]`` is the target itself; its in-board non-player neighbours (trapped or not) follow
    in direction order and share the miss probability equally. Zero-probability outcomes are
    left out (a throw at distance 1 always hits).
    """
    n = s[N_]
    a = abs(thrower_cell // n - target // n) + abs(thrower_cell % n - target % n)
    p = hit_probability(a)
    cells[0] = target
    k = 1
    if p < 1.0:
        for d in range(NUM_DIRS):
            t = step(n, target, d)
            if t >= 0 and t != s[POS0] and t != s[POS1]:
                cells[k] = t
                k += 1
    if k == 1:
        probs[0] = 1.0
        return 1
    probs[0] = p
    share = (1.0 - p) / (k - 1)
    for i in range(1, k):
        probs[i] = share
    return k


@njit(cache=True)
def k_to_move(s):
    """The player to decide, or CHANCE while a thrown trap is in the air."""
    if s[PHASE] == LANDING and s[common.OUTCOME] == common.ONGOING:
        return common.CHANCE
    return s[common.TO_MOVE]


@njit(cache=True)
def k_chance(s, cells, probs):
    """Landing cells and their probabilities at a chance node; 0 at a decision node."""
    if s[PHASE] != LANDING or s[common.OUTCOME] != common.ONGOING:
        return 0
    return landing(s, s[POS0 + s[common.TO_MOVE]], s[TARGET], cells, probs)


@njit(cache=True)
def k_moves(s, out):
    """Legal decisions (king steps 0..7, or throws 8 + cell), or landing cells at a chance node."""
    if s[common.OUTCOME] != common.ONGOING:
        return 0
    n = s[N_]
    k = 0
    if s[PHASE] == MOVE:
        here = s[POS0 + s[common.TO_MOVE]]
        for d in range(NUM_DIRS):
            t = step(n, here, d)
            if t >= 0 and is_free(s, t):
                out[k] = d
                k += 1
    elif s[PHASE] == THROW:
        for c in range(n * n):
            if c != s[POS0] and c != s[POS1]:
                out[k] = NUM_DIRS + c
                k += 1
    else:
        probs = np.empty(NUM_DIRS + 1)
        k = k_chance(s, out, probs)
    return k


@njit(cache=True)
def _stack(s):
    return HDR + s[N_] * s[N_]


@njit(cache=True)
def k_push(s, action):
    """Apply a decision or a landing cell. Undo entries: 4 * data + kind (0 move, 1 throw, 2 landing)."""
    p = s[common.TO_MOVE]
    ph = s[PHASE]
    sp = _stack(s) + s[common.PLY]
    s[common.PLY] += 1
    s[common.LAST] = action
    s[common.KEY] ^= _Z_TURN[p, ph]
    if ph == MOVE:
        here = s[POS0 + p]
        there = step(s[N_], here, action)
        s[sp] = 4 * here
        s[POS0 + p] = there
        s[common.KEY] ^= _Z_POS[p, here] ^ _Z_POS[p, there]
        if mobility(s, 1 - p) == 0:
            s[common.OUTCOME] = p  # the move alone wins: no throw
        else:
            s[PHASE] = THROW
            if s[MODE] == COURSE:
                p = 1 - p
                s[common.TO_MOVE] = p
    elif ph == THROW:
        target = action - NUM_DIRS
        s[sp] = 4 * target + 1
        s[TARGET] = target
        s[common.KEY] ^= _Z_TARGET[target]
        s[PHASE] = LANDING
    else:
        cell = action
        new = 1 if s[HDR + cell] == 0 else 0
        s[sp] = 4 * (2 * cell + new) + 2
        s[HDR + cell] = 1
        if new:
            s[common.KEY] ^= _Z_TRAP[cell]
        s[common.KEY] ^= _Z_TARGET[s[TARGET]]
        s[TARGET] = -1
        if mobility(s, 1 - p) == 0:
            s[common.OUTCOME] = p
        else:
            s[PHASE] = MOVE
            s[common.TO_MOVE] = 1 - p
            s[TURNS] += 1
            p = 1 - p
            ph = MOVE
            if s[TURNS] >= s[CAP]:
                s[common.OUTCOME] = common.DRAW
    s[common.KEY] ^= _Z_TURN[p, s[PHASE]]


@njit(cache=True)
def k_pop(s):
    """Take the last push back."""
    s[common.PLY] -= 1
    sp = _stack(s) + s[common.PLY]
    entry = s[sp]
    s[sp] = 0
    kind = entry % 4
    data = entry // 4
    p = s[common.TO_MOVE]
    s[common.KEY] ^= _Z_TURN[p, s[PHASE]]
    if kind == 0:
        if s[MODE] == COURSE and s[common.OUTCOME] == common.ONGOING:
            p = 1 - p  # the step had handed the throw to the opponent
            s[common.TO_MOVE] = p
        there = s[POS0 + p]
        s[POS0 + p] = data
        s[common.KEY] ^= _Z_POS[p, there] ^ _Z_POS[p, data]
        s[PHASE] = MOVE
    elif kind == 1:
        s[common.KEY] ^= _Z_TARGET[data]
        s[TARGET] = -1
        s[PHASE] = THROW
    else:
        if s[common.OUTCOME] == common.ONGOING or s[common.OUTCOME] == common.DRAW:  # the turn had passed to the opponent
            p = 1 - p
            s[common.TO_MOVE] = p
            s[TURNS] -= 1
        cell = data // 2
        if data % 2 == 1:
            s[HDR + cell] = 0
            s[common.KEY] ^= _Z_TRAP[cell]
        # The target is not in the entry: it is the action pushed just before, a throw.
        target = s[sp - 1] // 4
        s[TARGET] = target
        s[common.KEY] ^= _Z_TARGET[target]
        s[PHASE] = LANDING
    s[common.OUTCOME] = common.ONGOING
    s[common.KEY] ^= _Z_TURN[p, s[PHASE]]
    if s[common.PLY] > 0:
        prev = s[sp - 1]
        kind = prev % 4
        if kind == 0:
            # the last action was a step: recover its direction from the two cells
            n = s[N_]
            mover = s[common.TO_MOVE] if s[MODE] == GAME else 1 - s[common.TO_MOVE]
            s[common.LAST] = step_direction(n, prev // 4, s[POS0 + mover])
        elif kind == 1:
            s[common.LAST] = NUM_DIRS + prev // 4
        else:
            s[common.LAST] = (prev // 4) // 2
    else:
        s[common.LAST] = -1


@njit(cache=True)
def step_direction(n, a, b):
    """The direction of the king step from cell ``a`` to cell ``b``, or -1 if none."""
    for d in range(NUM_DIRS):
        if step(n, a, d) == b:
            return d
    return -1


@njit(cache=True)
def k_features(s, out):
    """Binary features seen by the player to move: own cell, opponent cell, traps, throw phase.

    Feature ``c`` = own position, ``N*N + c`` = opponent, ``2*N*N + c`` = trap, ``3*N*N`` = the
    mover is about to throw.
    """
    n = s[N_]
    nn = n * n
    me = s[common.TO_MOVE]
    out[0] = s[POS0 + me]
    out[1] = nn + s[POS0 + 1 - me]
    k = 2
    for c in range(nn):
        if s[HDR + c]:
            out[k] = 2 * nn + c
            k += 1
    if s[PHASE] == THROW:
        out[k] = 3 * nn
        k += 1
    return k


@njit(cache=True)
def k_observation(s, player, out):
    """Planes for ``player``: own cell, opponent cell, traps, throw phase, ``player`` to decide."""
    n = s[N_]
    me_cell = s[POS0 + player]
    opp_cell = s[POS0 + 1 - player]
    throw = 1.0 if s[PHASE] != MOVE else 0.0
    turn = 1.0 if (s[common.TO_MOVE] == player and s[common.OUTCOME] == common.ONGOING) else 0.0
    for c in range(n * n):
        r = c // n
        col = c % n
        out[0, r, col] = 1.0 if c == me_cell else 0.0
        out[1, r, col] = 1.0 if c == opp_cell else 0.0
        out[2, r, col] = 1.0 if s[HDR + c] else 0.0
        out[3, r, col] = throw
        out[4, r, col] = turn


KERNELS = Kernels(k_moves, k_push, k_pop, k_to_move, k_outcome, k_key, k_features, k_chance)


class TrapGame(Game):
    """Trap on an ``n`` x ``n`` board with a ``turn_cap`` of completed turns (a draw).

    >>> g = TrapGame()
    >>> s = g.new_initial_state()
    >>> [s.action_to_string(a) for a in s.legal_actions()]
    ['E', 'SE', 'S', 'SW', 'W']
    """

    def __init__(self, n: int = 7, turn_cap: int = DEFAULT_TURN_CAP, first_player: int = 0) -> None:
        if not (isinstance(n, (int, np.integer)) and MIN_SIDE <= n <= MAX_SIDE):
            raise ValueError(f"Trap board side n must be an integer in {MIN_SIDE}..{MAX_SIDE}, got {n!r}")
        if not (isinstance(turn_cap, (int, np.integer)) and turn_cap >= 1):
            raise ValueError(f"Trap turn_cap must be a positive integer, got {turn_cap!r}")
        if first_player not in (0, 1):
            raise ValueError(f"Trap first_player must be 0 or 1, got {first_player!r}")
        self.n, self.turn_cap, self.first_player = int(n), int(turn_cap), int(first_player)
        self.spec = GameSpec(
            name="trap",
            num_players=2,
            num_actions=NUM_DIRS + self.n * self.n,
            max_game_length=3 * self.turn_cap,
            min_utility=-1.0,
            max_utility=1.0,
            observation_shape=(5, self.n, self.n),
            options=dict(n=self.n, turn_cap=self.turn_cap, first_player=self.first_player),
            chance=True,
            max_chance_outcomes=self.n * self.n,
        )

    def new_initial_state(self) -> TrapState:
        n = self.n
        s = np.zeros(HDR + n * n + 3 * self.turn_cap + 3, dtype=np.int64)
        s[N_] = n
        s[POS0] = n // 2
        s[POS1] = (n - 1) * n + n // 2
        s[PHASE] = MOVE
        s[TARGET] = -1
        s[CAP] = self.turn_cap
        s[common.TO_MOVE] = s[FIRST] = self.first_player
        s[common.OUTCOME] = common.ONGOING
        s[common.LAST] = -1
        s[common.KEY] = _Z_POS[0, s[POS0]] ^ _Z_POS[1, s[POS1]] ^ _Z_TURN[self.first_player, MOVE]
        return TrapState(self, s)

    def from_board(self, text: str, *, to_move: int = 0, phase: str = "move") -> TrapState:
        """A position drawn as N rows of ``.`` (empty), ``#`` (trap), ``1`` and ``2`` (players).

        For tests and puzzles: the undo stack starts empty, so ``pop`` cannot go before it.
        """
        rows = [r.replace(" ", "") for r in text.strip().splitlines() if r.strip()]
        n = self.n
        if len(rows) != n or any(len(r) != n for r in rows):
            raise ValueError(f"a Trap board needs {n} rows of {n} cells, got {rows!r}")
        if phase not in ("move", "throw"):
            raise ValueError(f"phase must be 'move' or 'throw', got {phase!r}")
        state = self.new_initial_state()
        s = state._s
        s[common.KEY] = 0
        s[common.TO_MOVE] = to_move
        s[PHASE] = MOVE if phase == "move" else THROW
        found = [0, 0]
        for c, ch in enumerate("".join(rows)):
            if ch in "12":
                s[POS0 + int(ch) - 1] = c
                found[int(ch) - 1] += 1
            elif ch == "#":
                s[HDR + c] = 1
                s[common.KEY] ^= _Z_TRAP[c]
            elif ch != ".":
                raise ValueError(f"unknown board character {ch!r}; use . # 1 2")
        if found != [1, 1]:
            raise ValueError("a Trap board needs exactly one '1' and one '2'")
        s[common.KEY] ^= _Z_POS[0, s[POS0]] ^ _Z_POS[1, s[POS1]] ^ _Z_TURN[to_move, s[PHASE]]
        return state


class TrapState(KernelState):
    """A Trap position: a move, a throw, or a trap in the air (chance)."""

    kernels = KERNELS
    observe = staticmethod(k_observation)

    def __init__(self, game: TrapGame, array: np.ndarray) -> None:
        super().__init__(game, array)
        self.num_features = 3 * game.n * game.n + 1

    # -- reading the position ----------------------------------------------------------------

    @property
    def n(self) -> int:
        return int(self._s[N_])

    def position(self, player: int) -> tuple[int, int]:
        """(row, col) of ``player``."""
        c = int(self._s[POS0 + player])
        return divmod(c, self.n)

    @property
    def traps(self) -> np.ndarray:
        """N x N bool array of trapped cells."""
        n = self.n
        return self._s[HDR : HDR + n * n].reshape(n, n).astype(bool)

    @property
    def phase(self) -> str:
        """ "move", "throw" or "landing" (chance)."""
        return ("move", "throw", "landing")[int(self._s[PHASE])]

    @property
    def mover(self) -> int:
        """The player whose turn it is (also while its trap is in the air)."""
        return int(self._s[common.TO_MOVE])

    @property
    def turns(self) -> int:
        """Completed turns (the draw comes at ``turn_cap``)."""
        return int(self._s[TURNS])

    @property
    def target(self) -> int | None:
        """The cell a trap in the air was thrown at."""
        t = int(self._s[TARGET])
        return None if t < 0 else t

    def mobility(self, player: int) -> int:
        """The number of legal king steps of ``player`` (0 means enclosed)."""
        return int(mobility(self._s, player))

    # -- text --------------------------------------------------------------------------------

    def to_text(self) -> str:
        n = self.n
        grid = [["#" if t else "." for t in row] for row in self.traps]
        for p in (0, 1):
            r, c = self.position(p)
            grid[r][c] = str(p + 1)
        t = self.target
        if t is not None:
            grid[t // n][t % n] = "x" if grid[t // n][t % n] == "." else "X"
        rows = ["   " + " ".join(chr(ord("a") + c) for c in range(n))]
        rows += [f"{r + 1:>2} " + " ".join(row) for r, row in enumerate(grid)]
        out = self.winner()
        if out is not None:
            rows.append(f"{out + 1} (player {out}) wins")
        elif self.is_terminal():
            rows.append(f"draw (turn cap {self.game.turn_cap})")
        elif self.phase == "landing":
            rows.append(f"trap of {self.mover + 1} (player {self.mover}) in the air at {self._cell_name(t)}")
        else:
            rows.append(f"{self.mover + 1} (player {self.mover}) to {self.phase}, turn {self.turns + 1}")
        rows.append("legend: . empty  # trap  1 2 players 0 and 1  x/X target (empty/trapped)")
        return "\n".join(rows)

    def _cell_name(self, cell: int) -> str:
        r, c = divmod(cell, self.n)
        return f"{chr(ord('a') + c)}{r + 1}"

    def _parse_cell(self, word: str) -> int | None:
        n = self.n
        if len(word) >= 2 and word[0].isalpha() and word[1:].isdigit():
            c, r = ord(word[0]) - ord("a"), int(word[1:]) - 1
            if 0 <= c < n and 0 <= r < n:
                return r * n + c
        return None

    def action_to_string(self, action: int) -> str:
        """A step as its direction ("NE"), a throw as its target cell ("d4", column letter then
        row number from the top), a landing as "lands d4"."""
        if self.current_player() == common.CHANCE:
            return f"lands {self._cell_name(action)}"
        if 0 <= action < NUM_DIRS:
            return DIR_NAMES[action]
        return self._cell_name(action - NUM_DIRS)

    def string_to_action(self, text: str) -> int:
        """Parse a step ("ne", "S") in the move phase or a target cell ("d4") in the throw phase."""
        word = text.strip().lower().removeprefix("lands").strip()
        legal = self.legal_actions()
        if self.current_player() == common.CHANCE:
            action = self._parse_cell(word)
        elif self.phase == "move":
            names = [d.lower() for d in DIR_NAMES]
            action = names.index(word) if word in names else None
        else:
            cell = self._parse_cell(word)
            action = None if cell is None else NUM_DIRS + cell
        if action is None:
            what = {"move": "a direction N NE E SE S SW W NW", "throw": "a cell like d4"}.get(self.phase, "a cell")
            raise IllegalActionError(text, legal, f"(give {what})")
        if action not in legal:
            raise IllegalActionError(text, legal, "(the cell is taken or off the board)")
        return action


@njit(cache=True)
def k_candidates(s, out):
    """The moves a search tries: every step, but only the promising throws, best first.

    Throws go at EMPTY cells only (a trap on a trap changes nothing): the opponent's empty
    neighbours, then the empty cells of its second ring, then the rest of its reachable region
    in breadth-first order, up to ``s[CAND]`` throws (0 = no cap). Steps and landings are
    ``k_moves``.
    """
    if s[common.OUTCOME] != common.ONGOING or s[PHASE] != THROW:
        return k_moves(s, out)
    n = s[N_]
    nn = n * n
    opp = s[POS0 + 1 - s[common.TO_MOVE]]
    cap = s[CAND] if s[CAND] > 0 else nn
    seen = np.zeros(nn, dtype=np.bool_)
    k = 0
    orow = opp // n
    ocol = opp % n
    for ring in (1, 2):
        for c in range(nn):
            if k >= cap:
                return k
            dr = abs(c // n - orow)
            dc = abs(c % n - ocol)
            if max(dr, dc) == ring and is_free(s, c):
                out[k] = NUM_DIRS + c
                seen[c] = True
                k += 1
    # the rest of the opponent's region, nearest first
    queue = np.empty(nn, dtype=np.int64)
    visited = np.zeros(nn, dtype=np.bool_)
    queue[0] = opp
    visited[opp] = True
    head = 0
    tail = 1
    while head < tail and k < cap:
        c = queue[head]
        head += 1
        for d in range(NUM_DIRS):
            t = step(n, c, d)
            if t >= 0 and not visited[t] and is_free(s, t):
                visited[t] = True
                queue[tail] = t
                tail += 1
                if not seen[t] and k < cap:
                    out[k] = NUM_DIRS + t
                    k += 1
    return k


SEARCH_KERNELS = Kernels(k_candidates, k_push, k_pop, k_to_move, k_outcome, k_key, k_features, k_chance)
"""``KERNELS`` with ``moves`` narrowed to the candidate throws (set the cap in ``s[CAND]``)."""


@njit(cache=True)
def flat_observation(s, player, out):
    """``State.observation(player)`` of the compact state ``s`` flattened into the float32 vector
    ``out``: what exported networks (models/export.py) and the vector env (envs/vector.py) read."""
    n = s[N_]
    k_observation(s, player, out.reshape(5, n, n))
