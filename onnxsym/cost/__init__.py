"""Symbolic cost of a model: parameter and activation bytes, FLOPs, KV cache, peak memory.

Every number is an expression over the input symbols (``onnxsym.Expr``), so it holds at
every size; ``Result.cost()`` makes a :class:`Cost`. Parameters are the initializers and
the outputs of Constant nodes; activations are the graph inputs and every other node
output. ``Cost.solve`` (sympy) finds the largest value of one symbol under a budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import dims
from ..dims import Dim
from ..inference.symbols import under_ranges_of_result
from ..inference.values import Tensor
from .flops import node_flops
from .memory import kv_factors, live_bytes, peak, present_outputs
from .sizes import tensor_bytes
from .worst import worst


@dataclass(frozen=True)
class NodeCost:
    name: str
    op_type: str
    family: str | None  # None: not counted (control flow, an op of no family)
    flops: Dim | None
    param_bytes: Dim  # of the initializers it reads (a shared one counts at each reader)
    output_bytes: Dim | None  # None when an output's size is unknown


@dataclass(kw_only=True)
class Cost:
    nodes: list[NodeCost]
    value_bytes: dict[str, Dim | None]  # every tensor value of the main graph
    param_bytes: Dim
    input_bytes: Dim
    activation_bytes: Dim  # node outputs, Constants excepted
    flops: Dim
    flops_by_family: dict[str, Dim]
    live: list[Dim]  # bytes live while each node runs
    peak: Dim
    kv_outputs: list[str]
    kv_cache: Dim | None
    kv_factors: list[tuple[str, str]] | None  # (factor, what it is)
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    # the fresh symbols (data-dependent counts, unknowns) and the upper bounds their ops prove
    fresh: frozenset[str] = frozenset()
    bounds: dict[str, Dim] = field(default_factory=dict)
    # the result's range environment: what is derived from these dims is derived under it
    env: dims.RangeEnv = field(default_factory=dims.RangeEnv, repr=False, compare=False)

    @property
    def not_counted(self) -> list[NodeCost]:
        return [n for n in self.nodes if n.flops is None]

    @property
    def unknown_sizes(self) -> list[str]:
        return [name for name, b in self.value_bytes.items() if b is None]

    @property
    def memory(self) -> Dim:
        """What running the model needs: its parameters and the peak of live activations."""
        return dims.add(self.param_bytes, self.peak)

    @property
    def data_dependent(self) -> bool:
        """Whether memory or FLOPs depend on a fresh symbol (then the worst case says more)."""
        return any(s.name in self.fresh for d in (self.memory, self.flops) for s in dims.free_symbols(d))

    @property
    def worst_memory(self) -> Dim | None:
        """:attr:`memory` with each fresh symbol at its bound (cost.worst): at least every run's."""
        with self.env:
            return worst(self.memory, self.fresh, self.bounds)

    @property
    def worst_flops(self) -> Dim | None:
        with self.env:
            return worst(self.flops, self.fresh, self.bounds)

    def solve(self, symbol: str, budget: int, bind: Mapping[str, int] | None = None):
        """The largest value of ``symbol`` whose :attr:`memory` fits ``budget`` bytes,
        the other symbols given by ``bind`` (a :class:`onnxsym.cost.solve.Solution`)."""
        from .solve import solve_budget
        with self.env:
            return solve_budget(self.memory, symbol, budget, self.ranges, bind or {})


@under_ranges_of_result
def model_cost(result) -> Cost:
    graph = result.model.graph
    values = result.values

    def size(name: str) -> Dim | None:
        v = values.get(name)
        try:
            return tensor_bytes(v.dtype, v.shape) if isinstance(v, Tensor) else None
        except dims.TooLarge:  # (a product the algebra does not expand: unknown, as a fresh size is)
            return None

    inits = {t.name for t in graph.initializer}
    inputs = [i.name for i in graph.input if i.name not in inits]
    value_bytes: dict[str, Dim | None] = {n: size(n) for n in list(inits) + inputs}
    params: Dim = _sum(_known(value_bytes[n]) for n in inits)
    activations: Dim = 0
    tracked: dict[str, Dim] = {n: b for n in inputs for b in (value_bytes[n],) if b is not None}
    nodes: list[NodeCost] = []
    total_flops: Dim = 0
    by_family: dict[str, Dim] = {}
    for node in graph.node:
        outs = {n: size(n) for n in node.output if n}
        value_bytes.update(outs)
        out_bytes = None if any(b is None for b in outs.values()) else _sum(outs.values())
        node_params = _sum(_known(value_bytes[n]) for n in set(node.input) if n in inits)
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            params = dims.add(params, _known(out_bytes))
            node_params = dims.add(node_params, _known(out_bytes))
        else:
            activations = dims.add(activations, _known(out_bytes))
            tracked.update((n, b) for n, b in outs.items() if b is not None)
        try:
            family, flops = node_flops(node, values)
        except dims.TooLarge:
            family, flops = None, None
        if family is not None and flops is not None:
            total_flops = dims.add(total_flops, flops)
            by_family[family] = dims.add(by_family.get(family, 0), flops)
        nodes.append(NodeCost(node.name, node.op_type, family, flops, node_params, out_bytes))
    steps = live_bytes(graph, tracked)
    kv = present_outputs(graph)
    kv_vals = [values.get(n) for n in kv]
    kv_bytes = None
    if kv and all(value_bytes.get(n) is not None for n in kv):
        kv_bytes = _sum(value_bytes[n] for n in kv)
    factors = kv_factors(kv, [v.shape if isinstance(v, Tensor) else None for v in kv_vals],
                         [v.dtype if isinstance(v, Tensor) else 0 for v in kv_vals])
    return Cost(nodes=nodes, value_bytes=value_bytes, param_bytes=params,
                input_bytes=_sum(tracked[n] for n in inputs if n in tracked), activation_bytes=activations,
                flops=total_flops, flops_by_family=by_family, live=steps, peak=peak(steps), kv_outputs=kv,
                kv_cache=kv_bytes, kv_factors=factors, ranges=result.symbol_ranges(), env=result.env,
                fresh=frozenset(result.fresh), bounds=result.bounds())


def _known(b: Dim | None) -> Dim:
    """A size, with an unknown one (listed in ``unknown_sizes``) as 0."""
    return 0 if b is None else b


def _sum(xs) -> Dim:
    total: Dim = 0
    for x in xs:
        total = dims.add(total, x)
    return total
