"""Reusing rule results across structurally identical nodes.

An exported LLM repeats one layer many times: its nodes differ in names only. A
rule's result depends only on the op, its opset, its attributes and its input
values, unless the rule touched the engine (a fresh symbol, a constraint, a
subgraph): such results belong to their node and are never reused. The ">= 1"
decisions and the bounds a rule assumed are recorded again for each node that reuses
its result.

Values are interned (equal values become one object), so a node's inputs are
compared by identity: cheap, and exact, since the memo keeps every object whose
identity is in a key alive.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import onnx

from ..facts.fact import Constraint
from .values import Tensor, Value

_serialize = onnx.AttributeProto.SerializeToString
T = TypeVar("T")


class RuleMemo:
    """Rule results by (op, domain, opset, attributes, input values, outputs present)."""

    def __init__(self) -> None:
        self._results: dict[tuple[object, ...], tuple[Value, ...]] = {}
        self._alive: list[tuple[object, ...]] = []  # the inputs of each kept result: no other object can take their ids
        self._values: dict[Any, Any] = {}
        self.lookup = self._results.get  # key -> the outputs' values, or None
        # key -> the ">= 1" decisions its rule recorded (only for results that have some)
        self.decisions: dict[tuple[object, ...], list[Constraint]] = {}
        # key -> the bounds ``(d, hi, reason)`` its rule assumed (Node.assume_at_most; only where some)
        self.bounds: dict[tuple[object, ...], list[tuple[Any, int, str]]] = {}

    def intern(self, value: T) -> T:
        """The one object equal to ``value`` (``value`` itself when it cannot be hashed)."""
        try:
            kept: T = self._values.setdefault(value, value)
            return kept
        except TypeError:
            return value

    @staticmethod
    def key(op_type: str, domain: str, opset: int, attributes: Sequence[onnx.AttributeProto],
            input_ids: tuple[int, ...], output_names: Sequence[str]) -> tuple[object, ...]:
        """The key of a node without subgraphs (their inference is the node's own);
        ``input_ids`` are the ids of its input values."""
        attrs = tuple(map(_serialize, attributes)) if attributes else ()
        return (op_type, domain, opset, attrs, input_ids, tuple(map(bool, output_names)))

    def put(self, key: tuple[object, ...] | None, inputs: Sequence[object], outs: Sequence[Value | None], num_outputs: int,
            decisions: list[Constraint], bounds: list[tuple[Any, int, str]]) -> None:
        """Keep ``outs`` (with the ``decisions`` and ``bounds`` its rule recorded) when it
        describes every output with a known rank."""
        if key is None or len(outs) < num_outputs:
            return
        kept = tuple(v for v in outs[:num_outputs] if v is not None and not (isinstance(v, Tensor) and v.shape is None))
        if len(kept) < num_outputs:
            return
        self._alive.append(tuple(inputs))
        self._results[key] = tuple(self.intern(v) for v in kept)
        if decisions:
            self.decisions[key] = decisions
        if bounds:
            self.bounds[key] = bounds
