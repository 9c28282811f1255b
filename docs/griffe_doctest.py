"""A griffe extension: the package's docstrings, written for ``help()`` and doctest, read as
Markdown on the site.

A doctest example (``>>>`` lines and the output below them, up to a blank line) becomes a
``pycon`` code block; a reST ``::`` that introduces an indented block becomes ``:``. Nothing
else in a docstring changes.
"""

from __future__ import annotations

from typing import Any

import griffe


def markdown(text: str) -> str:
    """``text`` with its doctest examples fenced and reST ``::`` markers turned into ``:``."""
    out: list[str] = []
    lines = text.splitlines()
    i, fenced = 0, False
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if stripped.startswith("```"):
            fenced = not fenced
        if not fenced and indent < 4 and (stripped == ">>>" or stripped.startswith(">>> ")):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][indent:])
                i += 1
            out += ["", " " * indent + "```pycon", *(" " * indent + b for b in block), " " * indent + "```", ""]
            continue
        if not fenced and stripped.endswith("::"):
            line = line[:-1] if stripped != "::" else ""
        out.append(line)
        i += 1
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Rewrite every docstring of a loaded package (``markdown``)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        seen: set[int] = set()
        stack: list[Any] = [pkg]
        while stack:
            obj = stack.pop()
            if obj.is_alias or id(obj) in seen:
                continue
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = markdown(obj.docstring.value)
            stack.extend(obj.members.values())
