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

An If or a Squeeze the sizes decide makes inference run again with a branch chosen
(onnxsym.facts.branching): such a trial's run is the first run's, event for event, until a
rule reads the choice, so a trial's memo reads the first run's results (:class:`RuleMemo`
with ``base``) made before the point it has reached: the nodes before the choice run no
rule again, and every result is what the trial's own run would have made.
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

    def __init__(self, base: RuleMemo | None = None) -> None:
        self._results: dict[tuple[object, ...], tuple[Value, ...]] = {}
        self._alive: list[tuple[object, ...]] = []  # the inputs of each kept result: no other object can take their ids
        self._values: dict[Any, Any] = {}
        self.lookup = self._results.get  # key -> the outputs' values, or None
        # key -> the ">= 1" decisions its rule recorded (only for results that have some)
        self.decisions: dict[tuple[object, ...], list[Constraint]] = {}
        # key -> the bounds ``(d, hi, reason)`` its rule assumed (Node.assume_at_most; only where some)
        self.bounds: dict[tuple[object, ...], list[tuple[Any, int, str]]] = {}
        # The run's events, counted: a rule run started (:meth:`started`), a result kept. Each
        # result is kept with (the event its rule started at, the event it was kept at).
        self.clock = 0
        self._born: dict[tuple[object, ...], tuple[int, int]] = {}
        # A trial's: the first run's memo, and the event where the trial's run left the first's
        # (a rule read a choice: :meth:`diverge`; None while it has not)
        self._base = base
        self._left: int | None = None
        if base is not None:
            self.lookup = self._lookup_shared  # type: ignore[method-assign]
            self.intern = self._intern_shared  # type: ignore[method-assign]

    def intern(self, value: T) -> T:
        """The one object equal to ``value`` (``value`` itself when it cannot be hashed)."""
        try:
            kept: T = self._values.setdefault(value, value)
            return kept
        except TypeError:
            return value

    def started(self) -> int:
        """A rule run starts (an event): returns its number, for :meth:`put`."""
        self.clock += 1
        return self.clock

    def diverge(self) -> None:
        """A rule read a choice the first run did not have: from here the first run's results
        made after this point are not this run's."""
        if self._left is None:
            self._left = self.clock

    def _intern_shared(self, value: T) -> T:
        # (the first run's object where it has an equal one: its results' keys hold those)
        try:
            assert self._base is not None
            kept = self._base._values.get(value)
            if kept is None:
                kept = self._values.setdefault(value, value)
            return kept  # type: ignore[no-any-return]
        except TypeError:
            return value

    def _lookup_shared(self, key: tuple[object, ...]) -> tuple[Value, ...] | None:
        got = self._results.get(key)
        if got is not None:
            return got
        base = self._base
        assert base is not None
        born = base._born.get(key)
        if born is None:
            return None
        start, kept = born
        if self._left is not None:
            if kept > self._left:  # (made after the runs parted)
                return None
        elif kept > self.clock:
            if start != self.clock + 1:  # (not made yet at this point of the first run)
                return None
            # the first run's next event is this very rule run: its result is this one, and the
            # events of that run (rule runs inside it) are passed with it
            self.clock = kept
        got = self._results[key] = base._results[key]
        if key in base.decisions:
            self.decisions[key] = base.decisions[key]
        if key in base.bounds:
            self.bounds[key] = base.bounds[key]
        return got

    @staticmethod
    def key(op_type: str, domain: str, opset: int, attributes: Sequence[onnx.AttributeProto],
            input_ids: tuple[int, ...], output_names: Sequence[str]) -> tuple[object, ...]:
        """The key of a node without subgraphs (their inference is the node's own);
        ``input_ids`` are the ids of its input values."""
        attrs = tuple(map(_serialize, attributes)) if attributes else ()
        return (op_type, domain, opset, attrs, input_ids, tuple(map(bool, output_names)))

    def put(self, key: tuple[object, ...] | None, inputs: Sequence[object], outs: Sequence[Value | None], num_outputs: int,
            decisions: list[Constraint], bounds: list[tuple[Any, int, str]], started: int = 0) -> None:
        """Keep ``outs`` (with the ``decisions`` and ``bounds`` its rule recorded) when it
        describes every output with a known rank. ``started``: the event its rule run started at."""
        if key is None or len(outs) < num_outputs:
            return
        kept = tuple(v for v in outs[:num_outputs] if v is not None and not (isinstance(v, Tensor) and v.shape is None))
        if len(kept) < num_outputs:
            return
        self._alive.append(tuple(inputs))
        self._results[key] = tuple(self.intern(v) for v in kept)
        self.clock += 1
        self._born[key] = (started, self.clock)
        if decisions:
            self.decisions[key] = decisions
        if bounds:
            self.bounds[key] = bounds
