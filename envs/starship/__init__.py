"""The staged starship generator of rules/starship.md and its PCGRL env.

- ``ship``: the tile grid, parts and their footprints (``Ship``, ``footprint_table``).
- ``kernels``: compiled walking searches and THE path contiguity check (``placement_ok``).
- ``stages`` / ``pipeline``: the 14 stages and the ``Pipeline`` that runs them for a seed.
- ``quality``: the validity rules and the weighted quality score.
- ``render``: images (``draw_ship``, ``draw_stages``) and ``write_png``.
- ``env``: ``StarshipEnv``, registered as "tablegym/Starship-v0".

    >>> from tablegym.envs.starship import generate, validate
    >>> validate(generate(seed=7)).ok
    True
"""

from tablegym.envs.starship.pipeline import Pipeline, generate
from tablegym.envs.starship.quality import QUALITY_WEIGHTS, quality, validate
from tablegym.envs.starship.ship import Ship, footprint, footprint_table
from tablegym.envs.starship.stages import STAGE_NAMES, STAGES, ConfigError

__all__ = ["Pipeline", "generate", "QUALITY_WEIGHTS", "quality", "validate", "Ship", "footprint", "footprint_table",
           "STAGE_NAMES", "STAGES", "ConfigError"]
