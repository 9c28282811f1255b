"""A plain max/min recursion of the course's HardAI as rules/trap.md describes it, with each
quirk switchable (for tests). Written apart from envs/trap/opponents.py on purpose."""

# ruff: noqa: B023 -- the lambdas given to moved() and trapped() run at once, inside their loop's iteration

from tablegym.envs.trap.core import HDR, N_, NUM_DIRS, POS0, free_neighbours, is_free, mobility, step

INF = float("inf")


def course_order(n, cell):
    x, y = divmod(cell, n)
    span = lambda t: range(max(t - 1, 0), min(t + 2, n))  # noqa: E731
    return [a * n + b for a, b in list({(a, b) for a in span(x) for b in span(y)} - {(x, y)})]


def reference_course_hard(
    state, depth=3, *, prune=True, osl_left_cell_free=True, trapped_targets=True, throw_tree_bonus=False, scaled_window=False
):
    """The course's choice (an action) and its root value, by plain max/min recursion.

    Each keyword switches one quirk to the sound behaviour: ``osl_left_cell_free=False`` counts
    the cell the player left as occupied (one exit less around each of its neighbours),
    ``trapped_targets=False`` throws at empty cells only, ``throw_tree_bonus=True`` scores an
    enclosure in the throw tree +-1000, ``scaled_window=True`` scales the window below a chance
    node by 1 / p. ``prune=False`` searches without alpha-beta.
    """
    s = state._s.copy()
    n = int(s[N_])
    me = state.mover
    opp = 1 - me

    def cell(p):
        return int(s[POS0 + p])

    def exits(p):
        return [c for c in course_order(n, cell(p)) if is_free(s, c)]

    def p_hit(thrower, c):
        a = abs(cell(thrower) // n - c // n) + abs(cell(thrower) % n - c % n)
        return 1 - 0.05 * (a - 1)

    def step_leaf():
        if mobility(s, opp) == 0:
            return 1000.0
        if mobility(s, me) == 0:
            return -1000.0
        osl = 0
        for c in course_order(n, cell(me)):
            # the course moves a copy of the player onto c (trap or opponent overwritten):
            # its old cell, a neighbour of c, is empty there
            old = cell(me)
            s[POS0 + me] = c
            s[HDR + c], trap = 0, s[HDR + c]
            osl += free_neighbours(s, c) if osl_left_cell_free else free_neighbours(s, c) - 1
            s[HDR + c] = trap
            s[POS0 + me] = old
        return mobility(s, me) + 0.5 * osl

    def throw_leaf():
        if throw_tree_bonus and mobility(s, opp) == 0:
            return 1000.0
        if throw_tree_bonus and mobility(s, me) == 0:
            return -1000.0
        return 2.0 * mobility(s, me) - mobility(s, opp)

    def terminal():
        return mobility(s, me) == 0 or mobility(s, opp) == 0

    def moved(p, c, then):
        old = cell(p)
        s[POS0 + p] = c
        try:
            return then()
        finally:
            s[POS0 + p] = old

    def trapped(c, then):
        was = s[HDR + c]
        s[HDR + c] = 1
        try:
            return then()
        finally:
            s[HDR + c] = was

    def window(p, a, b):
        return (a / p, b / p) if scaled_window else (a, b)

    # The four kinds of node, each max or min; ``leaf`` is the search's leaf.
    def my_steps(d, a, b, leaf):
        if d == 0 or terminal():
            return leaf()
        best = -INF
        for c in sorted(exits(me), key=lambda c: free_neighbours(s, c)):
            v = moved(me, c, lambda: their_throws(d - 1, a, b, leaf))
            best = max(best, v)
            a = max(a, best)
            if prune and a >= b:
                break
        return best

    def their_throws(d, a, b, leaf):
        if d == 0 or terminal():
            return leaf()
        best = INF
        for c in exits(me):
            p = p_hit(opp, c)
            v = p * trapped(c, lambda: my_steps(d - 1, *window(p, a, b), leaf))
            best = min(best, v)
            b = min(b, best)
            if prune and a >= b:
                break
        return best

    def my_throws(d, a, b, leaf):
        if d == 0 or terminal():
            return leaf()
        best = -INF
        for c in throw_targets():
            p = p_hit(me, c)
            v = p * trapped(c, lambda: their_steps(d - 1, *window(p, a, b), leaf))
            best = max(best, v)
            a = max(a, best)
            if prune and a >= b:
                break
        return best

    def their_steps(d, a, b, leaf):
        if d == 0 or terminal():
            return leaf()
        best = INF
        for c in exits(opp):
            v = moved(opp, c, lambda: my_throws(d - 1, a, b, leaf))
            best = min(best, v)
            b = min(b, best)
            if prune and a >= b:
                break
        return best

    def throw_targets():
        around = course_order(n, cell(opp))
        if trapped_targets:
            return [c for c in around if c not in (cell(0), cell(1))]
        return [c for c in around if is_free(s, c)]

    best, choice, a = -INF, None, -INF
    if state.phase == "move":
        for c in sorted(exits(me), key=lambda c: free_neighbours(s, c)):
            v = moved(me, c, lambda: their_throws(depth - 1, a, INF, step_leaf))
            if v > best:
                best, choice = v, next(d for d in range(NUM_DIRS) if step(n, cell(me), d) == c)
            a = max(a, best)
    else:
        for c in throw_targets():
            p = p_hit(me, c)
            v = p * trapped(c, lambda: their_steps(depth - 1, *window(p, a, INF), throw_leaf))
            if v > best:
                best, choice = v, NUM_DIRS + c
            a = max(a, best)
    return choice, best
