"""Training value networks: the shared run skeleton, compiled self-play with TD-leaf targets,
and the Stable-Baselines3 helpers; each trainer (``td``, ``trap_td``, ``ntuple_td``,
``friday_value``) is a script run by ``tablegym train GAME``.

Everything listed in ``__all__`` is importable from here, each name loading its module on first
use (``tablegym.envs.exports``).
"""

from tablegym.envs.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, globals(),
    runs=['Run', 'ReplayBuffer', 'parse_dataclass_args', 'start_or_resume', 'metadata', 'field_help'],
    selfplay=['play_selfplay', 'td_leaf_targets', 'td_update', 'SelfPlayBatch'],
    symmetry=['feature_symmetries'],
)
