"""An If whose branches give an output different ranks, on a condition the ranges cannot
decide (torch's ``squeeze(k)`` of a dynamic dim is ``If(dim_k == 1, Squeeze, Identity)``):
which branch runs depends on the sizes, so that output's rank is unknown.

Unless the nodes after it can run with only one of the branches. Inference is tried
with each branch taken (a *choice*, given to a new engine): a branch with which some
node provably cannot run (a contradiction, at a node that runs whenever the If does)
is never taken at a size onnxruntime runs. The If then takes the other, and its
condition on the sizes (``(samples + 320)//512 == 1``) is recorded as a constraint
with the If node and the node that refuses the other branch: a condition of the
model's domain. Where both branches run on, or neither, nothing is chosen and the
rank stays unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Protocol, Tuple, TypeVar

from . import intops
from .dims import Dim
from .errors import ShapeContradiction
from .values import Tensor

# The most such Ifs tried per model (each costs two more inferences of the model).
MAX_SPLITS = 8

# Comparison ops as (relation, operands swapped).
_COMPARISONS = {"Equal": ("==", False), "Less": ("<", False), "Greater": ("<", True),
                "LessOrEqual": ("<=", False), "GreaterOrEqual": ("<=", True)}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">"}
BOOL = 9

# A place in the model: the subgraphs being inferred, outermost first, each with whether
# it surely runs whenever its node does (an If's branch taken by a known condition).
Place = Tuple[Tuple[str, bool], ...]


@dataclass(frozen=True)
class Relation:
    """``lhs op rhs`` over dims (op ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``)."""

    op: str
    lhs: Dim
    rhs: Dim

    def negated(self) -> "Relation":
        if self.op in _NEGATED:
            return Relation(_NEGATED[self.op], self.lhs, self.rhs)
        return Relation({">": "<=", ">=": "<"}[self.op], self.lhs, self.rhs)

    def __str__(self) -> str:
        return f"{self.lhs} {self.op} {self.rhs}"


@dataclass(frozen=True)
class Split:
    """An If whose branches differ in rank on ``relation``, met where ``scope`` says."""

    key: str
    where: str
    relation: Relation
    scope: Place


@dataclass(frozen=True)
class Choice:
    """The branch an If takes (``then``), because of ``why``: what refuses the other."""

    then: bool
    why: str = ""


def key(node) -> str:
    """What names an If across inferences: its first output (names are unique in a model)."""
    return next((o for o in node.output_names if o), node.name)


def relation_of(engine, name: str) -> Optional[Relation]:
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
            return None if d is None else Relation("!=", d, 0)
        inner = relation_of(engine, n.input[0])
        return inner.negated() if inner is not None and n.op_type == "Not" else inner
    if n.op_type not in _COMPARISONS or len(n.input) != 2:
        return None
    a, b = (_scalar_dim(engine, engine.scope.values.get(x)) for x in n.input)
    if a is None or b is None:
        return None
    op, swapped = _COMPARISONS[n.op_type]
    return Relation(op, b, a) if swapped else Relation(op, a, b)


def _cast_to_bool(n) -> bool:
    return any(a.name == "to" and a.i == BOOL for a in n.attribute)


def _scalar_dim(engine, v) -> Optional[Dim]:
    if not isinstance(v, Tensor) or v.value is None or len(v.value) != 1 or not intops.is_dim(v.value[0]):
        return None
    return engine.constraints.resolve(v.value[0])


def refused(split: Split, failed_in: Optional[Place]) -> bool:
    """Whether a contradiction met at ``failed_in`` happens whenever ``split``'s If runs:
    in the If's own graph, or in subgraphs of it that surely run. One in a branch that
    may not run, or outside the If's graph, proves nothing about the If."""
    if failed_in is None or failed_in[:len(split.scope)] != split.scope:
        return False
    return all(sure for _, sure in failed_in[len(split.scope):])


class Inference(Protocol):
    """What :func:`infer` needs of an engine."""

    splits: List[Split]
    failed_in: Optional[Place]
    failure: str

    def run(self) -> None: ...


E = TypeVar("E", bound=Inference)


def infer(make_engine: Callable[[Dict[str, Choice]], E]) -> E:
    """Run inference (``make_engine(choices)`` returns a fresh engine), then settle each
    If the sizes decide (up to MAX_SPLITS): returns the engine whose inference to use."""
    first = make_engine({})
    first.run()
    decided: Dict[str, Choice] = {}
    queue: List[Split] = list(first.splits)
    seen = {s.key for s in queue}
    for _ in range(MAX_SPLITS):
        if not queue:
            break
        split = queue.pop(0)
        runs: Dict[bool, E] = {}
        refusals: Dict[bool, str] = {}
        for then in (True, False):
            trial = make_engine({**decided, split.key: Choice(then)})
            try:
                trial.run()
                runs[then] = trial
            except ShapeContradiction:
                if refused(split, trial.failed_in):
                    refusals[then] = trial.failure
        if len(runs) == 1 and len(refusals) == 1:
            (then, trial), = runs.items()
            decided[split.key] = Choice(then, refusals[not then])
            fresh = [s for s in trial.splits if s.key not in seen]
            seen.update(s.key for s in fresh)
            queue += fresh
    if not decided:
        return first
    final = make_engine(decided)  # (the trials' records lack the reasons)
    try:
        final.run()
    except ShapeContradiction:  # choices that only fail together: none is taken
        return first
    return final
