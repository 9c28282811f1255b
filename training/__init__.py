"""Training value networks: the shared run skeleton, compiled self-play with TD-leaf targets,
and the Stable-Baselines3 helpers. ``td`` is the generic TD-leaf trainer; a game with its own
trainer has it in a folder named for the game here (``tablegym.training.trap.train``,
``...threes.train``, ``...friday.train``); ``tablegym train GAME`` runs the one its record names.

Everything listed in ``__all__`` is importable from here, each name loading its module on first
use (``tablegym.envs.exports``).
"""

from tablegym.envs.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    runs=["Run", "ReplayBuffer", "parse_dataclass_args", "start_or_resume", "metadata", "field_help"],
    selfplay=["play_selfplay", "td_leaf_targets", "td_update", "SelfPlayBatch"],
    symmetry=["feature_symmetries"],
)
