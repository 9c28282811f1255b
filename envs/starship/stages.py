"""The 14 stages of the staged starship generator (rules/starship.md), one small class each.

A stage is a dataclass of its parameters (defaults as in the spec where it gives them) with an
``enabled`` flag; ``stage.run(ship, rng, detour)`` edits the ship in place, taking every random
choice from ``rng``. Every stage that covers tiles (parts, armor) first asks
``kernels.placement_ok``: the spec's path contiguity check (``kernels.contiguity_ok``, detour
limit ``detour``) plus the access rule below. So, stage by stage, the walkable tiles stay one
connected network and every part keeps a walkable neighbour, which is what makes the finished
ship valid.

Access rule (tablegym's addition to the contiguity check): parts are not walkable, so a part is
reached from a walkable tile next to it. A part's footprint must touch a walkable tile, and no
placement may take the last walkable neighbour of a part already placed.

Where the spec leaves a choice open, the stage's docstring says what tablegym chose. Ties
between equally good locations are broken at random (by ``rng``).
"""

from __future__ import annotations

from tablegym.envs.starship.fittings import Ammo, Crew, Doors, ExteriorArmor, FillArmor, Power, Thrusters, Weapons
from tablegym.envs.starship.stage_base import Stage
from tablegym.envs.starship.stages_hull import Cockpit, CockpitArmor, FillGaps, Reactor, ReactorArmor, Shape

STAGES: tuple[type[Stage], ...] = (
    Shape,
    FillGaps,
    Cockpit,
    Reactor,
    CockpitArmor,
    ReactorArmor,
    Thrusters,
    Weapons,
    ExteriorArmor,
    Ammo,
    Power,
    Crew,
    FillArmor,
    Doors,
)
"""The stage classes in running order (``STAGES[i].number == i + 1``)."""
STAGE_NAMES = tuple(s.name for s in STAGES)
