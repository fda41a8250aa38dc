"""What one inference has recorded so far, as one dataclass whose fields say what a trial undoes.

A rule may infer a subgraph as a trial (:meth:`Engine.hypothetically`: a loop body at a
chosen iteration, to prove something of a case); everything the trial recorded is then
dropped. Which fields that is, is stated once, per field (``undone`` or ``kept`` with the
reason); saving and restoring are derived from the fields (:func:`snapshot`,
:func:`restore`), so a field added later is handled by construction.
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields
from typing import Any

import onnx

from ..dims import Dim
from ..facts.branching import Nesting, Split
from ..facts.fact import Constraint, Guard
from .provenance import Provenance
from .values import Value

_TRIAL = "trial"


def undone(**kwargs: Any) -> Any:
    """A field a trial's end gives back its value from before the trial."""
    return field(metadata={_TRIAL: "undone"}, **kwargs)


def kept(why: str, **kwargs: Any) -> Any:
    """A field whose trial records stay (``why`` says why)."""
    return field(metadata={_TRIAL: "kept", "why": why}, **kwargs)


_UNDONE: dict[type, list[Field[Any]]] = {}  # by class (its fields are fixed: asked at each trial)


def _undone_fields(cls: type) -> list[Field[Any]]:
    got = _UNDONE.get(cls)
    if got is None:
        got = _UNDONE[cls] = [f for f in fields(cls) if f.metadata.get(_TRIAL) == "undone"]
    return got


def snapshot(obj: object) -> dict[str, Any]:
    """The ``undone`` fields of the dataclass ``obj``, their containers copied."""
    out: dict[str, Any] = {}
    for f in _undone_fields(type(obj)):
        v = getattr(obj, f.name)
        out[f.name] = type(v)(v) if isinstance(v, (list, dict, set)) else v
    return out


def restore(obj: object, saved: dict[str, Any]) -> None:
    """Give each field of ``saved`` its saved value in ``obj``. A container keeps its identity
    (other objects hold it: a subgraph's scope shares its outer scope's) and takes the saved
    contents."""
    for name, old in saved.items():
        now = getattr(obj, name)
        if isinstance(now, list):
            now[:] = old
        elif isinstance(now, (dict, set)):
            now.clear()
            now.update(old)
        else:
            setattr(obj, name, old)


@dataclass
class State:
    """What the engine has recorded of one inference (beside the constraints, which have
    their own mark and undo, and each scope's values and producers)."""

    warnings: list[str] = undone(default_factory=list)
    # (domain, op type) -> how many nodes of it had no rule
    no_rule: dict[tuple[str, str], int] = undone(default_factory=dict)
    # value name -> the ">= 1" decisions its elements rest on, not yet recorded (see onnxsym.facts.edges)
    pending: dict[str, frozenset[Constraint]] = undone(default_factory=dict)
    acted: set[Constraint] = undone(default_factory=set)  # pending decisions a node acted on (so recorded)
    positive: set[tuple[Dim, str]] = undone(default_factory=set)  # (lhs, node) of each ">= 1" decision recorded
    # Ifs whose branches differ in rank on a size condition (see onnxsym.facts.branching)
    splits: list[Split] = undone(default_factory=list)
    # Each subgraph inferred: its graph, its guards and its values, for the domain's conditions
    # of its nodes (onnxsym.domain.collect)
    subgraph_runs: list[tuple[onnx.GraphProto, tuple[Guard, ...], dict[str, Value]]] = undone(default_factory=list)
    # Each subgraph inferred, by its path (Scope.scoped_values): whether it ran wherever the model
    # runs each time (no guard around it), which lets onnx's inference judge the written model alone
    sure_runs: dict[tuple[Any, ...], bool] = undone(default_factory=dict)
    # Each function body inferred (a call of a model-local function, or of an op the standard
    # defines by one), the same way: its nodes' conditions are the domain's too
    function_runs: list[tuple[onnx.GraphProto, tuple[Guard, ...], dict[str, Value]]] = undone(default_factory=list)
    # where a contradiction stopped inference (the innermost place), and what it says there
    failed_in: Nesting | None = undone(default=None)
    failure: str = undone(default="")
    fresh: dict[str, Provenance] = kept("a memoized result may hold a fresh symbol a trial made",
                                        default_factory=dict)
    # each rule that raised, with its node (outside strict mode); each is also a warning
    rule_failures: list[str] = kept("a rule's failure is a bug in onnxsym wherever it happened: it stays "
                                    "reported, with its warning", default_factory=list)


@dataclass(frozen=True)
class Frame:
    """A subgraph being inferred: the node that holds it (``"If node 'x'"``), whether it runs
    whenever that node does, else what must hold for it to run, and its key among its
    siblings (:func:`onnxsym.inference.scope.graph_key`)."""

    label: str
    sure: bool
    guard: Guard | None
    key: tuple[object, ...]
