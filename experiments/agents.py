"""Agents by name: kept for scripts written against this path; the front door is
``tablegym.models.agents`` (building) and ``tablegym.search.agents`` (the spec grammar)."""

from tablegym.models.agents import game_evaluators, make_agent, make_evaluator
from tablegym.search.agents import parse_spec

__all__ = ["game_evaluators", "make_agent", "make_evaluator", "parse_spec"]
