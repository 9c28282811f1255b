"""tablegym's environments, registered under "tablegym/<Name>-v0" with Gymnasium and PettingZoo.

Entry points are strings, so ``import tablegym.envs`` imports no game (and compiles no kernel);
a game's module loads on the first ``make`` of one of its ids. Every keyword of the env class
passes through ``gymnasium.make``::

    >>> import gymnasium, tablegym.envs
    >>> env = gymnasium.make("tablegym/TrilobiteTiny-v0", opponent="random", agent_seat=1)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape
    (3, 3, 3)

``gymnasium.make("tablegym.envs:tablegym/Trilobite-v0")`` works without the explicit import.
The single-player games (``SINGLE_AGENT_ENV_IDS``: "tablegym/Threes-v0", "tablegym/Friday-v1",
"tablegym/Starship-v0", the PCGRL starship designer) are Gymnasium envs only; the two-player
ids (``ENV_IDS``) also give the PettingZoo AEC envs:
``pettingzoo.make("aec", "tablegym/Sim-v0", n=5)``.
"""

from __future__ import annotations

import gymnasium
import pettingzoo

ENV_IDS: dict[str, tuple[str, dict]] = {
    "tablegym/Trilobite-v0": ("tablegym.envs.trilobite.env:TrilobiteEnv", dict(width=8, height=7, win_length=4)),
    "tablegym/TrilobiteTiny-v0": ("tablegym.envs.trilobite.env:TrilobiteEnv", dict(width=3, height=3, win_length=3)),
    "tablegym/Sim-v0": ("tablegym.envs.sim.env:SimEnv", dict(n=6)),
    "tablegym/Trap-v0": ("tablegym.envs.trap.env:TrapEnv", dict(n=7)),
}
"""Gymnasium id -> (entry point, default keyword arguments) of the two-player games (each also a PettingZoo id)."""

SINGLE_AGENT_ENV_IDS: dict[str, tuple[str, dict]] = {
    "tablegym/Threes-v0": ("tablegym.envs.threes.env:ThreesEnv", dict(hint="+")),
    "tablegym/Friday-v1": ("tablegym.envs.friday.env:FridayEnv", dict(level=1)),
    "tablegym/Starship-v0": ("tablegym.envs.starship.env:StarshipEnv", dict(representation="narrow")),
}
"""Gymnasium id -> (entry point, default keyword arguments) of the single-player games (Gymnasium only)."""

AEC_ENV_IDS: dict[str, tuple[str, dict]] = {
    "tablegym/Trilobite-v0": ("tablegym.envs.trilobite.env:trilobite_aec_env", dict(width=8, height=7, win_length=4)),
    "tablegym/TrilobiteTiny-v0": ("tablegym.envs.trilobite.env:trilobite_aec_env", dict(width=3, height=3, win_length=3)),
    "tablegym/Sim-v0": ("tablegym.envs.sim.env:sim_aec_env", dict(n=6)),
    "tablegym/Trap-v0": ("tablegym.envs.trap.env:trap_aec_env", dict(n=7)),
}
"""PettingZoo AEC id -> (entry point, default keyword arguments)."""


def register_envs() -> None:
    """Register every tablegym env with Gymnasium and PettingZoo (idempotent: a re-import does not warn)."""
    for env_id, (entry_point, kwargs) in {**ENV_IDS, **SINGLE_AGENT_ENV_IDS}.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point, kwargs=kwargs)
    for env_id, (entry_point, kwargs) in AEC_ENV_IDS.items():
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=entry_point, kwargs=kwargs)


register_envs()
