"""An If whose branches give an output different ranks, on a condition the ranges cannot
decide (torch's ``squeeze(k)`` of a dynamic dim is ``If(dim_k == 1, Squeeze, Identity)``):
which branch runs depends on the sizes, so that output's rank is unknown.

Unless the nodes after it can run with only one of the branches. Inference is tried
with each branch taken (a *choice*, given to a new engine): a branch with which some
node provably cannot run (a contradiction, at a node that runs whenever the If does)
is never taken at a size onnxruntime runs. The If then takes the other, and its
condition on the sizes (``(samples + 320)//512 == 1``) is recorded as a constraint
with the If node and the node that refuses the other branch: a condition of the
model's domain. Where both branches run on, nothing is chosen and the rank stays unknown;
where neither does and the If surely runs, the model runs at no size (a contradiction; in a
subgraph that may not run, nothing is chosen).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from .. import dims
from ..dims import Dim
from ..errors import ShapeContradiction
from ..inference.values import Tensor
from ..semantics import intops
from .fact import Guard, Rel, Relation

# The most such Ifs tried per model (each costs two more inferences of the model).
MAX_SPLITS = 8

# Comparison ops as (relation, operands swapped).
_COMPARISONS = {"Equal": (Rel.EQ, False), "Less": (Rel.LT, False), "Greater": (Rel.LT, True),
                "LessOrEqual": (Rel.LE, False), "GreaterOrEqual": (Rel.LE, True)}
BOOL = 9

# Where in the model inference is: the subgraphs being inferred, outermost first, each with
# whether it surely runs whenever its node does (an If's branch taken by a known condition).
Nesting = tuple[tuple[str, bool], ...]


@dataclass(frozen=True)
class Split:
    """An If whose branches differ in rank on ``relation``, met where ``scope`` says."""

    key: str
    where: str
    relation: Relation
    scope: Nesting


@dataclass(frozen=True)
class Choice:
    """The branch an If takes (``then``), because of ``why``: what refuses the other."""

    then: bool
    why: str = ""


def key(node) -> str:
    """What names an If across inferences: its first output (names are unique in a model)."""
    return next((o for o in node.output_names if o), node.name)


def relation_of(engine, name: str) -> Relation | None:
    """The comparison of shape values that computed the boolean ``name`` (through Not,
    Identity and casts to bool), or None."""
    made = engine.scope.producer.get(name)
    if not isinstance(made, tuple):
        return None
    n = made[0][made[1]]
    if n.op_type == "Not" or n.op_type == "Identity" or (n.op_type == "Cast" and _cast_to_bool(n)):
        x = engine.scope.values.get(n.input[0])
        if n.op_type == "Cast" and isinstance(x, Tensor) and x.dtype != BOOL:
            d = _scalar_dim(engine, x)
            return None if d is None else Relation(Rel.NE, d, 0)
        inner = relation_of(engine, n.input[0])
        return inner.negated() if inner is not None and n.op_type == "Not" else inner
    if n.op_type not in _COMPARISONS or len(n.input) != 2:
        return None
    a, b = (_scalar_dim(engine, engine.scope.values.get(x)) for x in n.input)
    if a is None or b is None:
        return None
    op, swapped = _COMPARISONS[n.op_type]
    return Relation(op, b, a) if swapped else Relation(op, a, b)


def indicator(relation: Relation) -> Dim:
    """1 where ``relation`` holds and 0 where it fails, as a dim (exact for every pair of integers):
    ``[a == b]`` is ``1 - min(|a - b|, 1)``, ``[a < b]`` is ``min(max(b - a, 0), 1)``."""
    a, b, op = relation.lhs, relation.rhs, relation.op
    if op in (Rel.GT, Rel.GE):
        a, b, op = b, a, op.swapped
    if op in (Rel.EQ, Rel.NE):
        d = dims.sub(a, b)
        lo, hi = dims.range_of(d)
        size = d if lo >= 0 else dims.neg(d) if hi <= 0 else dims.dmax(d, dims.neg(d))  # |a - b|
        differs = size if max(abs(lo), abs(hi)) <= 1 else dims.dmin(size, 1)
        return differs if op is Rel.NE else dims.sub(1, differs)
    gap = dims.sub(b, a) if op is Rel.LT else dims.add(dims.sub(b, a), 1)
    return dims.dmin(dims.dmax(gap, 0), 1)


def indicator_of(engine, name: str, depth: int = 0) -> Dim | None:
    """The boolean ``name`` as a dim, 1 for true and 0 for false, where it is a comparison of
    shape values or Not, And, Or, Xor of such (a Where picking a shape value by a size test:
    the GQA head repeat of Attention's function body), or None."""
    made = engine.scope.producer.get(name)
    if depth > 8 or not isinstance(made, tuple):
        return None
    n = made[0][made[1]]
    if n.op_type in ("And", "Or", "Xor") and n.domain in ("", "ai.onnx") and len(n.input) == 2:
        p, q = (indicator_of(engine, x, depth + 1) for x in n.input)
        if p is None or q is None:
            return None
        if n.op_type == "Xor":
            return dims.dmax(dims.sub(p, q), dims.sub(q, p))
        return dims.dmin(p, q) if n.op_type == "And" else dims.dmax(p, q)
    if n.op_type == "Not" or n.op_type == "Identity" or (n.op_type == "Cast" and _cast_to_bool(n)):
        x = engine.scope.values.get(n.input[0])
        if not (n.op_type == "Cast" and isinstance(x, Tensor) and x.dtype != BOOL):
            inner = indicator_of(engine, n.input[0], depth + 1)
            return None if inner is None else dims.sub(1, inner) if n.op_type == "Not" else inner
    relation = relation_of(engine, name)
    return None if relation is None else indicator(relation)


def _cast_to_bool(n) -> bool:
    return any(a.name == "to" and a.i == BOOL for a in n.attribute)


def _scalar_dim(engine, v) -> Dim | None:
    if not isinstance(v, Tensor) or v.value is None or len(v.value) != 1 or not intops.is_dim(v.value[0]):
        return None
    return engine.constraints.resolve(v.value[0])


def refused(split: Split, failed_in: Nesting | None) -> bool:
    """Whether a contradiction met at ``failed_in`` happens whenever ``split``'s If runs:
    in the If's own graph, or in subgraphs of it that surely run. One in a branch that
    may not run, or outside the If's graph, proves nothing about the If."""
    if failed_in is None or failed_in[:len(split.scope)] != split.scope:
        return False
    return all(sure for _, sure in failed_in[len(split.scope):])


class Outcome(Protocol):
    """What :func:`infer` reads of an inference's state."""

    splits: list[Split]
    failed_in: Nesting | None
    failure: str


class Inference(Protocol):
    """What :func:`infer` needs of an engine."""

    @property
    def state(self) -> Outcome: ...

    partial: bool  # (set by run: whether it stopped at a split)

    def reuse(self, first: Any) -> None: ...  # (``first``: an engine of the same kind)

    def run(self, until_split: bool = False) -> None: ...


E = TypeVar("E", bound=Inference)


def infer(make_engine: Callable[[dict[str, Choice]], E]) -> E:
    """Run inference (``make_engine(choices)`` returns a fresh engine), then settle each
    If the sizes decide (up to MAX_SPLITS): returns the engine whose inference to use.

    The first run, without choices, stops at its first split: past it the values the split
    leaves unknown (a rank) are worked on for nothing where a choice is decided, and the trials
    infer the rest. It is run to the end (its results lent again) only where its own answer is
    needed: no choice decided, or the decided ones failing together; its later splits then
    join the queue, as a decided trial's fresh ones do."""
    first = make_engine({})
    first.run(until_split=True)
    decided: dict[str, Choice] = {}
    queue: list[Split] = list(first.state.splits)
    seen = {s.key for s in queue}

    def enqueue(run: E) -> None:  # the splits ``run`` met that are not queued yet
        fresh = [s for s in run.state.splits if s.key not in seen]
        seen.update(s.key for s in fresh)
        queue.extend(fresh)

    def whole(first: E) -> E:
        if not first.partial:
            return first
        full = make_engine({})
        full.reuse(first)  # (its run is the partial one's, event for event, and goes on)
        full.run()
        enqueue(full)
        return full

    # a trial made with the choices decided so far, reasons and all: it is the final inference
    # (an engine's run is a function of its choices), not run again
    final: tuple[dict[str, Choice], E] | None = None
    left = MAX_SPLITS
    while True:  # (twice at most: a partial first run is finished once)
        while queue and left > 0:
            left -= 1
            split = queue.pop(0)
            runs: dict[bool, E] = {}
            refusals: dict[bool, str] = {}
            tried: dict[bool, dict[str, Choice]] = {}
            for then in (True, False):
                # (the else branch is tried knowing why the then branch was refused, if it was: the
                # reason the choice records when the else branch is the one taken)
                tried[then] = {**decided, split.key: Choice(then, refusals.get(not then, ""))}
                trial = make_engine(tried[then])
                trial.reuse(first)  # (the nodes before the choice are the first run's)
                try:
                    trial.run()
                    runs[then] = trial
                except ShapeContradiction:
                    if refused(split, trial.state.failed_in):
                        refusals[then] = trial.state.failure
            if not runs and len(refusals) == 2 and all(sure for _, sure in split.scope):
                # each branch refused where its condition holds (under the choices made, each
                # forced so): where the split surely runs, no size runs the model
                raise ShapeContradiction(f"{split.where}: the model runs at no size: where {split.relation}, "
                                         f"{refusals[True]}; where not, {refusals[False]}")
            if len(runs) == 1 and len(refusals) == 1:
                (then, trial), = runs.items()
                decided[split.key] = Choice(then, refusals[not then])
                final = (tried[then], trial)
                enqueue(trial)
        if decided or not first.partial:
            break
        first = whole(first)  # (no choice decided yet: its answer may be the one, and its later splits count)
    if not decided:
        return first
    if final is not None and final[0] == decided:
        return final[1]
    again = make_engine(decided)  # (the trials' records lack the reasons)
    again.reuse(first)
    try:
        again.run()
    except ShapeContradiction:  # choices that only fail together: none is taken
        return whole(first)
    return again


# ------------------------------------------------------------------ guards of an If's branches

# A comparison of x with a constant c: the values of x that make it true and false.
_TRUE_FALSE = {"Equal": lambda c: (c, c + 1), "Less": lambda c: (c - 1, c), "Greater": lambda c: (c + 1, c),
               "LessOrEqual": lambda c: (c, c + 1), "GreaterOrEqual": lambda c: (c, c - 1)}
_SWAPPED = {"Less": "Greater", "Greater": "Less", "LessOrEqual": "GreaterOrEqual",
            "GreaterOrEqual": "LessOrEqual", "Equal": "Equal"}
_TEXT = {"Equal": ("==", "!="), "Less": ("<", ">="), "Greater": (">", "<="), "LessOrEqual": ("<=", ">"),
         "GreaterOrEqual": (">=", "<")}


def guards(engine, node) -> tuple[Guard, Guard]:
    """What must hold for each branch of the If ``node`` to run: its condition true (then),
    false (else). Named by the condition value in the If's scope: Ifs on one condition
    choose alike. On the sizes (a comparison of shape values) the guards carry the relation;
    on a data input compared with a constant (silero's ``sr == 16000``), the input values
    that make each hold; else they name the condition value."""
    name = node.input_names[0] if node.input_names else ""
    key = engine.place_key() + (name,)
    rel = relation_of(engine, name) if name else None
    if rel is not None and all(map(engine.is_resolved, (rel.lhs, rel.rhs))):
        neg = rel.negated()
        return (Guard(key, True, str(rel), node.name, node.op_type, rel),
                Guard(key, False, str(neg), node.name, node.op_type, neg))
    (t_text, t_feed), (f_text, f_feed) = _on_data(engine, name)
    return (Guard(key, True, t_text, node.name, node.op_type, feed=t_feed, feed_not=f_feed),
            Guard(key, False, f_text, node.name, node.op_type, feed=f_feed, feed_not=t_feed))


def _on_data(engine, name: str, depth: int = 0):
    """(text, feed) for the condition ``name`` true, then false."""
    plain = ((f"'{name}' is true", ()), (f"'{name}' is false", ()))
    inputs = {i.name for i in engine.model.graph.input}
    if name in inputs and not engine.place_key():  # a bool graph input (optimum's use_cache_branch)
        return (name, ((name, True),)), (f"not {name}", ((name, False),))
    made = engine.scope.producer.get(name)
    if not isinstance(made, tuple) or depth > 4:
        return plain
    n = made[0][made[1]]
    if n.op_type in ("Not", "Identity") and n.input:
        t, f = _on_data(engine, n.input[0], depth + 1)
        if t[0].startswith("'"):
            return plain
        return (f, t) if n.op_type == "Not" else (t, f)
    if n.op_type not in _TRUE_FALSE or len(n.input) != 2 or engine.place_key():
        return plain
    op, (x, c) = n.op_type, n.input
    if x not in inputs:
        op, (c, x) = _SWAPPED[op], n.input
    cv = engine.scope.values.get(c)
    const = cv.value[0] if isinstance(cv, Tensor) and cv.value is not None and len(cv.value) == 1 else None
    if x not in inputs or not isinstance(const, (int, float)) or isinstance(const, bool):
        return plain
    yes, no = _TRUE_FALSE[op](const)
    t_op, f_op = _TEXT[op]
    return (f"{x} {t_op} {const}", ((x, yes),)), (f"{x} {f_op} {const}", ((x, no),))
