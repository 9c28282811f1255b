"""Drawings of a Friday position, deterministic: text (``state_text``, the env's "ansi" mode and
``to_text``) and a small numpy image (``state_image``, the "rgb_array" mode)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tablegym.envs.friday.cards import CARDS, GROUP_FREE, GROUP_VALUES, PIRATES, card_name
from tablegym.envs.render import FONT, _stamp

if TYPE_CHECKING:
    from tablegym.envs.friday.core import FridayState


def _counts(counts) -> str:
    parts = [f"{int(n)}x {card_name(t)}" if n > 1 else card_name(t) for t, n in enumerate(counts) if n > 0]
    return ", ".join(parts) if parts else "."


def pirate_text(p: int) -> str:
    if p < 0:
        return "?"
    pirate = PIRATES[p]
    free = "*" if pirate.free < 0 else pirate.free
    hazard = "*" if pirate.hazard < 0 else pirate.hazard
    return f"{free}/{hazard}" + (f" ({pirate.special})" if pirate.special else "")


def hazard_text(t: int, step: int) -> str:
    c = CARDS[t]
    values = GROUP_VALUES[c.group]
    return f"{GROUP_FREE[c.group]} free, {values[0]}/{values[1]}/{values[2]} (now {values[min(step, 2)]}) -> {card_name(t)}"


def state_text(state: FridayState) -> str:
    """Life, step, stacks, pirates, the fight on the table and what is being decided."""
    lines = [
        f"life {state.life}  step {state.step_name}  level {state.game.level}  "
        f"aging cards in the deck {state.aging_entered}  score {state.score}"
    ]
    a, b = state.pirates
    lines.append(f"pirates: {pirate_text(a)} | {pirate_text(b)}  beaten {state.pirates_beaten}")
    stack, discard = state.zone("stack"), state.zone("discard")
    lines.append(
        f"fighting stack {int(stack.sum())}  discard {int(discard.sum())}  "
        f"hazards left {int(state.zone('hazards').sum())}  hazard discard {int(state.zone('hazard_discard').sum())}"
    )
    choice = [t for t in state.hazard_choice if t >= 0]
    if choice:
        lines.append("drawn hazards: " + " | ".join(hazard_text(t, state.step) for t in choice))
    if state.hazard >= 0 or state.table:
        total, target = state.fight()
        if state.hazard >= 0:
            lines.append(f"fighting: {hazard_text(state.hazard, state.step)}")
        elif state.pirate_fought >= 0:
            lines.append(f"fighting pirate: {pirate_text(state.pirates[state.pirate_fought])}")
        if state.destroy_budget:
            lines.append(f"fight lost: destroy cards costing up to {state.destroy_budget}")
        else:
            lines.append(f"total {total} vs {target}")
        for slot, card, flags in state.table:
            lines.append(
                f"  [{slot:2d}] {'left ' if 'L' in flags else 'right'} {card_name(card)}"
                + (f"  ({flags.replace('L', '')})" if flags.replace("L", "") else "")
            )
    if state.is_terminal():
        lines.append(f"game over: {'WON' if state.won else 'LOST'}, score {state.score}")
    else:
        lines.append(f"to do: {state.phase_name if state.current_player() == 0 else 'draw a card (chance)'}")
    return "\n".join(lines)


# -- the "rgb_array" image ---------------------------------------------------------------------------
# Layout of ``state_image`` (every size in pixels; the image is always 288 x 444)::
#
#     +------------------------------------------------------------+  status strip: life as 22
#     | ##########.......  20                     [g] [y] [r] [p]   |  segments and a number, the
#     +------------------------------------------------------------+  step squares (current framed);
#     | [H 3] [H 5]        total 4/5                  [P 20] [P 30] |  tinted green/red once won/lost
#     +------------------------------------------------------------+  fight strip: hazard(s) with
#     |L [c][c][c][c] ...                                           |  their value now (free cards in
#     |L [c] ...                 the left row: free draws           |  the corner), total/target,
#     +------------------------------------------------------------+  the two pirates ('?' for '*';
#     |R [c][c] ...               the right row: paid and extra     |  beaten: crossed; fought: framed)
#     |R ...                                                        |  table: cards by kind, value
#     +------------------------------------------------------------+  in the middle; destroyed face
#                                                                       down, doubled gold-framed

CARD_W, CARD_H, GAP = 32, 44, 4
TABLE_COLUMNS, TABLE_ROWS = 12, 2
STATUS_H = 36
FIGHT_H = CARD_H + 2 * GAP
ROW_H = TABLE_ROWS * (CARD_H + GAP) + GAP
SIDE_W = 8
IMAGE_W = SIDE_W + TABLE_COLUMNS * (CARD_W + GAP) + GAP
IMAGE_H = STATUS_H + FIGHT_H + 2 * ROW_H
MAX_LIFE, LIFE_SEGMENT_W = 22, 9


def _rgb(r: int, g: int, b: int) -> np.ndarray:
    return np.array([r, g, b], dtype=np.uint8)


TABLE_COLOUR = _rgb(222, 206, 168)
STATUS_COLOURS = (_rgb(240, 232, 210), _rgb(150, 215, 150), _rgb(235, 140, 130))
"""Status strip: game on, won, lost."""
STEP_COLOURS = (_rgb(60, 170, 70), _rgb(235, 200, 40), _rgb(210, 50, 40), _rgb(40, 40, 40))
LIFE_COLOUR, LIFE_EMPTY = _rgb(200, 30, 40), _rgb(245, 245, 240)
KIND_COLOURS = (_rgb(140, 190, 240), _rgb(250, 245, 225), _rgb(170, 140, 190))
"""Table cards: knowledge (won hazards), Robinson's starting cards, aging cards."""
HAZARD_COLOUR, PIRATE_COLOUR, FOUGHT_COLOUR = _rgb(255, 255, 255), _rgb(90, 110, 140), _rgb(230, 90, 30)
BACK_COLOUR, BACK_CROSS, DOUBLED_COLOUR = _rgb(70, 60, 50), _rgb(120, 110, 100), _rgb(245, 180, 0)
LEFT_COLOUR, RIGHT_COLOUR = _rgb(120, 190, 120), _rgb(230, 140, 60)
INK, WHITE = _rgb(25, 25, 25), _rgb(255, 255, 255)
_MINUS = np.zeros((5, 3), dtype=bool)
_MINUS[2] = True


def _label(text: str, scale: int) -> np.ndarray:
    """``text`` as a bool mask in the shared 3 x 5 font, with '-' added (values can be negative)."""
    glyphs = [_MINUS if ch == "-" else FONT.get(ch, FONT["?"]) for ch in text]
    gap = np.zeros((5, 1), dtype=bool)
    row = np.concatenate([part for g in glyphs for part in (g, gap)][:-1], axis=1)
    return np.kron(row, np.ones((scale, scale), dtype=bool)).astype(bool)


def _card(
    img: np.ndarray,
    y: int,
    x: int,
    face: np.ndarray,
    text: str,
    *,
    corner: str = "",
    frame: np.ndarray | None = None,
    crossed: np.ndarray | None = None,
) -> None:
    """A card at (y, x): ``face`` colour, ``text`` in the middle, ``corner`` small at the top left,
    a 3-pixel ``frame`` and a ``crossed`` diagonal cross in the given colours."""
    card = img[y : y + CARD_H, x : x + CARD_W]
    card[:] = INK
    card[1:-1, 1:-1] = face
    if frame is not None:
        card[1:-1, 1:-1] = frame
        card[4:-4, 4:-4] = face
    ink = WHITE if int(face.astype(int).sum()) < 300 else INK
    if crossed is not None:
        yy, xx = np.mgrid[0:CARD_H, 0:CARD_W]
        t = yy / (CARD_H - 1) * (CARD_W - 1)
        card[(np.abs(xx - t) < 2) | (np.abs(xx - (CARD_W - 1 - t)) < 2)] = crossed
    if text:
        mask = _label(text, 2 if len(text) <= 3 else 1)
        _stamp(img, mask, y + CARD_H // 2, x + CARD_W // 2, ink)
    if corner:
        mask = _label(corner, 1)
        _stamp(img, mask, y + 5, x + 4 + mask.shape[1] // 2, ink)


def _hazard_card(img: np.ndarray, y: int, x: int, t: int, step: int, *, frame: np.ndarray | None = None) -> None:
    group = CARDS[t].group
    _card(img, y, x, HAZARD_COLOUR, str(int(GROUP_VALUES[group][min(step, 2)])), corner=str(int(GROUP_FREE[group])), frame=frame)


def _pirate_card(img: np.ndarray, y: int, x: int, p: int, *, beaten: bool, fought: bool) -> None:
    if p < 0:
        _card(img, y, x, BACK_COLOUR, "")
        return
    pirate = PIRATES[p]
    hazard = "?" if pirate.hazard < 0 else str(pirate.hazard)
    free = "?" if pirate.free < 0 else str(pirate.free)
    _card(
        img,
        y,
        x,
        PIRATE_COLOUR,
        hazard,
        corner=free,
        frame=FOUGHT_COLOUR if fought else None,
        crossed=LEFT_COLOUR if beaten else None,
    )


def _table_row(img: np.ndarray, y0: int, cards: list[tuple[int, str]], side_colour: np.ndarray) -> None:
    """One side of the table (``(card, flags)`` in slot order) in a ``TABLE_ROWS`` x ``TABLE_COLUMNS`` grid."""
    img[y0 + GAP : y0 + ROW_H - GAP, 2 : SIDE_W - 2] = side_colour
    room = TABLE_ROWS * TABLE_COLUMNS
    shown = cards if len(cards) <= room else cards[: room - 1]
    for k, (card, flags) in enumerate(shown):
        r, c = divmod(k, TABLE_COLUMNS)
        y, x = y0 + GAP + r * (CARD_H + GAP), SIDE_W + GAP + c * (CARD_W + GAP)
        if "x" in flags:  # destroyed: face down
            _card(img, y, x, BACK_COLOUR, "", crossed=BACK_CROSS)
            continue
        face = KIND_COLOURS[CARDS[card].kind]
        _card(
            img,
            y,
            x,
            face,
            str(CARDS[card].value),
            frame=DOUBLED_COLOUR if "2" in flags else None,
            corner="+" if "u" in flags else "",
        )
    if len(shown) < len(cards):
        r, c = divmod(room - 1, TABLE_COLUMNS)
        _card(img, y0 + GAP + r * (CARD_H + GAP), SIDE_W + GAP + c * (CARD_W + GAP), TABLE_COLOUR, f"+{len(cards) - len(shown)}")


def state_image(state: FridayState) -> np.ndarray:
    """The position as a ``IMAGE_H x IMAGE_W x 3`` uint8 image (layout above): life, step,
    the hazard(s) with their value now, the fighting total against it, the pirates, and the
    table's left (free) and right (paid) rows. Cards whose ability was used show '+' in the
    corner. Deterministic: the same state gives the same pixels.

    >>> import numpy as np
    >>> from tablegym.envs.friday.core import FridayGame, sample_chance
    >>> state_image(sample_chance(FridayGame().new_initial_state(), np.random.default_rng(0))).shape
    (288, 444, 3)
    """
    img = np.empty((IMAGE_H, IMAGE_W, 3), dtype=np.uint8)
    img[:] = TABLE_COLOUR
    # status strip
    over = state.is_terminal()
    img[:STATUS_H] = STATUS_COLOURS[(1 if state.won else 2) if over else 0]
    for i in range(MAX_LIFE):
        x = GAP + i * LIFE_SEGMENT_W
        img[GAP + 4 : STATUS_H - GAP - 4, x : x + LIFE_SEGMENT_W - 2] = LIFE_COLOUR if i < state.life else LIFE_EMPTY
    life = _label(str(state.life), 3)
    _stamp(img, life, STATUS_H // 2, GAP + MAX_LIFE * LIFE_SEGMENT_W + 4 + life.shape[1] // 2, INK)
    square = STATUS_H - 2 * GAP
    for k, colour in enumerate(STEP_COLOURS):
        x = IMAGE_W - (4 - k) * (square + GAP)
        y = GAP
        if k == state.step:
            img[y : y + square, x : x + square] = INK
            img[y + 3 : y + square - 3, x + 3 : x + square - 3] = colour
        else:
            img[y + 6 : y + square - 6, x + 6 : x + square - 6] = colour
    # fight strip
    y = STATUS_H + GAP
    x = SIDE_W + GAP
    choice = [t for t in state.hazard_choice if t >= 0]
    if state.hazard >= 0:
        _hazard_card(img, y, x, state.hazard, state.step, frame=STEP_COLOURS[min(state.step, 2)])
    for k, t in enumerate(choice):
        _hazard_card(img, y, x + (k + (state.hazard >= 0)) * (CARD_W + GAP), t, state.step)
    fought = state.pirate_fought
    if state.hazard >= 0 or fought >= 0:  # a fight is on (after a loss, only its cards are left)
        total, target = state.fight()
        _stamp(img, _label(f"{total}/{target}", 3), y + CARD_H // 2, IMAGE_W // 2, INK)
    for k, p in enumerate(state.pirates):
        _pirate_card(img, y, IMAGE_W - (2 - k) * (CARD_W + GAP), p, beaten=state.beaten[k], fought=k == fought)
    # table
    left = [(card, flags) for _, card, flags in state.table if "L" in flags]
    right = [(card, flags) for _, card, flags in state.table if "L" not in flags]
    _table_row(img, STATUS_H + FIGHT_H, left, LEFT_COLOUR)
    _table_row(img, STATUS_H + FIGHT_H + ROW_H, right, RIGHT_COLOUR)
    return img
