"""Networks and their checkpoints, and the front doors that turn names into players: learned
evaluators (``load_evaluator``) and agents from specs (``make_agent``).

Everything listed in ``__all__`` is importable from here, each name loading its module on first
use (``tablegym.envs.exports``). A game's own networks are found through its record (the Threes
n-tuple network in ``tablegym.models.threes.ntuple_net``, Friday's in
``tablegym.models.friday.learned``).
"""

from tablegym.envs.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    agents=["make_agent", "make_evaluator", "game_evaluators", "known_agents"],
    learned=["load_evaluator", "LearnedEvaluator", "load_model", "default_checkpoint"],
    checkpoint=["save_checkpoint", "load_checkpoint", "CheckpointError", "UnsafeModelError"],
    trust=["trusting", "trust_model_code"],
    value_net=["ValueMLP", "NetConfig"],
)
