"""What the graph being inferred sees by name, and where its results are recorded.

The main graph has one scope. A subgraph (an If branch, a Loop or Scan body) is
inferred in an inner scope: it holds the values the subgraph defines (its inputs,
initializers and nodes' outputs, and outer values it rewrote through solved
constraints) and reads every other name from the scopes around it, so entering a
subgraph copies nothing and a name it defines again hides the outer one only
inside it. A function body's scope sees only its call's inputs; its values, their
producers and unknown ranks stay in it, and its rules are those of its own opsets.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass

import onnx

from .. import registry
from .provenance import Provenance
from .state import kept, undone
from .values import Value

_MISSING = object()

# a value's producer: in words, or as (the nodes of its graph, the node's index)
Producer = str | tuple[Sequence[onnx.NodeProto], int]


Values = dict[str, Value]  # a graph's values by name: the main graph's a plain dict, read at dict speed

# Where a subgraph is: per enclosing subgraph, outermost first, its graph_key. Sibling scopes may
# define the same name (legal ONNX), so a subgraph's values are kept under its path too.
GraphPath = tuple[tuple, ...]


# The standard operators registered with graph attributes; an operator of another domain may have
# them too (com.microsoft's BeamSearch). Only these nodes' attributes are read for subgraphs: a pass over
# every node's attributes costs tens of milliseconds at 20,000 nodes (each protobuf read does).
def may_hold_subgraphs(n: onnx.NodeProto) -> bool:
    """An op of another domain, or a standard op registered with subgraphs (If, Loop, ...)."""
    return bool(n.domain) or n.op_type in registry.subgraph_ops()


def graph_key(owner_outputs: Sequence[str], attribute: str, index: int = -1) -> tuple:
    """One subgraph among its siblings: the outputs of the node that holds it (unique in its
    scope and those around it), the attribute and, in a list of graphs, its index."""
    return (tuple(owner_outputs), attribute, index)


class InnerValues(dict):
    """A subgraph's values: its own, then those of the graphs around it."""

    __slots__ = ("outer",)

    def __init__(self, outer: Values):
        super().__init__()
        self.outer = outer

    def __missing__(self, name: str) -> Value:
        return self.outer[name]

    def get(self, name, default=None):
        v = dict.get(self, name, _MISSING)
        return self.outer.get(name, default) if v is _MISSING else v

    def __contains__(self, name) -> bool:
        return dict.__contains__(self, name) or name in self.outer

    def changed(self) -> Iterator[tuple[str, Value]]:
        """The values set in this scope that differ from what the outer scopes hold."""
        outer = self.outer
        return ((k, v) for k, v in self.items() if outer.get(k, _MISSING) is not v)

    def names(self) -> Container[str]:
        # the outer scopes do not change while this one is in use: only its own names are copied
        return _Names(frozenset(dict.keys(self)), self.outer)


class _Names:
    """A subgraph's names at one moment: its own then, and those of the scopes around it."""

    __slots__ = ("own", "outer")

    def __init__(self, own: frozenset, outer: Values):
        self.own, self.outer = own, outer

    def __contains__(self, name) -> bool:
        return name in self.own or name in self.outer


@dataclass(slots=True)
class Scope:
    """The state of inference that belongs to one graph: its values, the values computed
    in its subgraphs, what produced each value, the values whose rank is unknown, and the
    opsets its rules are looked up at (with the rules found so far). A trial (see
    onnxsym.inference.state) undoes what it recorded in the fields that say so."""

    values: Values = kept("a trial infers in a scope of its own: it sets none of these")
    opsets: dict[str, int] = kept("the graph's")
    # (domain, op_type), or op_type alone in the default domain -> the engine's _resolve_op answer
    ops: dict[object, tuple] = kept("the rules found so far: the same whatever a trial does", default_factory=dict)
    subgraph_values: dict[str, Value] = undone(default_factory=dict)  # computed in subgraphs, by name
    # the same, per subgraph (by its path): what each scope itself defined, whatever its siblings did
    scoped_values: dict[GraphPath, dict[str, Value]] = undone(default_factory=dict)
    producer: dict[str, Producer] = undone(default_factory=dict)
    # Values whose rank is unknown, so that no dim can carry the reason.
    unknown_rank: dict[str, Provenance] = undone(default_factory=dict)

    def names(self) -> Container[str]:
        """The names known now: what the graph's nodes may read but not produce again."""
        v = self.values
        return v.names() if isinstance(v, InnerValues) else frozenset(v)

    def changed(self) -> Iterator[tuple[str, Value]]:
        """The values this scope set that differ from what the scopes around it hold."""
        v = self.values
        return v.changed() if isinstance(v, InnerValues) else iter(v.items())

    def inner(self) -> Scope:
        """The scope of a subgraph of this graph: new values over these; the rest is shared
        (a subgraph's values, producers and unknown ranks are reported with the model's)."""
        return Scope(InnerValues(self.values), self.opsets, self.ops, subgraph_values=self.subgraph_values,
                     scoped_values=self.scoped_values, producer=self.producer, unknown_rank=self.unknown_rank)

    def function(self, bound: Mapping[str, Value], opsets: dict[str, int]) -> Scope:
        """The scope of a function body called from this graph, with its inputs ``bound``
        and the opsets it imports (over this graph's)."""
        opsets = {**self.opsets, **opsets}
        # the rules found so far hold for the body only when its opsets are these
        return Scope(dict(bound), opsets, self.ops if opsets == self.opsets else {})
