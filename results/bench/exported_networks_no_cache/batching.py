"""Python-path batching: expectimax on Threes with a 256-256 torch MLP, leaf by leaf,
batched per chance subtree (TorchEvaluator.batch) and compiled (from_torch). Run from the
repository root: PYTHONPATH=. python results/bench/exported_networks_no_cache/batching.py"""
import time, numpy as np, torch
from tablegym.envs import make_game
from tablegym.models.export import TorchEvaluator, from_torch
from tablegym.search.expectimax import expectimax
from tests.test_chance_contract import threes_positions
torch.set_num_threads(1)
g = make_game("threes"); size = int(np.prod(g.spec.observation_shape))
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(size, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
class LeafByLeaf(TorchEvaluator):
    batch = None
    def evaluate(self, state, player): return float(TorchEvaluator.batch(self, [state], player)[0])
tb, ts, comp = TorchEvaluator(net, g), LeafByLeaf(net, g), from_torch(net, g)
pos = threes_positions(1, 8)
expectimax(pos[0], comp, depth=1)
print("| search | evaluator | positions | nodes | seconds | nodes/s |")
for depth in (2,):
    for name, ev, kw in (("Python", ts, dict(compiled=False)), ("Python", tb, dict(compiled=False)), ("compiled", comp, {})):
        t=time.perf_counter(); nodes=0
        for s in pos:
            r = expectimax(s, ev, depth=depth, transpositions=False, **kw); nodes += r.nodes
        dt=time.perf_counter()-t
        label = {ts: "TorchEvaluator, leaf by leaf", tb: "TorchEvaluator, batched", comp: "from_torch (compiled)"}[ev]
        print(f"| expectimax depth {depth} ({name}) | {label} | {len(pos)} | {nodes:,} | {dt:.2f} | {nodes/dt:,.0f} |")
