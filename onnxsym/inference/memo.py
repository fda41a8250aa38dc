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


class _Clock:
    """A run's events, counted: a rule run started, a result kept; and where a trial's run left
    the first run's (None while it has not)."""

    __slots__ = ("now", "left")

    def __init__(self) -> None:
        self.now = 0
        self.left: int | None = None


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
        # Each result kept with (the event its rule run started at, the event it was kept at)
        self._clock = _Clock()
        self._born: dict[tuple[object, ...], tuple[int, int]] = {}
        if base is not None:  # a trial's (closures, not bound methods: the memo stays out of reference cycles)
            self.lookup = _shared_lookup(self, base)
            self.intern = _shared_intern(self._values, base._values)  # type: ignore[method-assign]

    def intern(self, value: T) -> T:
        """The one object equal to ``value`` (``value`` itself when it cannot be hashed)."""
        try:
            kept: T = self._values.setdefault(value, value)
            return kept
        except TypeError:
            return value

    def started(self) -> int:
        """A rule run starts (an event): returns its number, for :meth:`put`."""
        self._clock.now += 1
        return self._clock.now

    def diverge(self) -> None:
        """A rule read a choice the first run did not have: from here the first run's results
        made after this point are not this run's."""
        if self._clock.left is None:
            self._clock.left = self._clock.now

    @staticmethod
    def key(op_type: str, domain: str, opset: int, attributes: Sequence[onnx.AttributeProto],
            input_ids: tuple[int, ...], output_names: Sequence[str]) -> tuple[object, ...]:
        """The key of a node without subgraphs (their inference is the node's own);
        ``input_ids`` are the ids of its input values."""
        attrs = tuple(map(_serialize, attributes[:])) if attributes else ()  # (a slice: made at C speed)
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
        self._clock.now += 1
        self._born[key] = (started, self._clock.now)
        if decisions:
            self.decisions[key] = decisions
        if bounds:
            self.bounds[key] = bounds


def _shared_intern(own: dict[Any, Any], first: dict[Any, Any]) -> Any:
    """A trial's intern: the first run's object where it has an equal one (its results' keys hold those)."""
    def intern(value: T) -> T:
        try:
            kept = first.get(value)
            if kept is None:
                kept = own.setdefault(value, value)
            return kept  # type: ignore[no-any-return]
        except TypeError:
            return value
    return intern


def _shared_lookup(memo: RuleMemo, base: RuleMemo) -> Any:
    """A trial's lookup: its own results, else the first run's made before the point the trial
    has reached (its clock: the first run's, event for event, until it left it)."""
    results, decisions, bounds, clock = memo._results, memo.decisions, memo.bounds, memo._clock
    first, first_born, first_decisions, first_bounds = base._results, base._born, base.decisions, base.bounds

    def lookup(key: tuple[object, ...]) -> tuple[Value, ...] | None:
        got = results.get(key)
        if got is not None:
            return got
        born = first_born.get(key)
        if born is None:
            return None
        start, kept = born
        if clock.left is not None:
            if kept > clock.left:  # (made after the runs parted)
                return None
        elif kept > clock.now:
            if start != clock.now + 1:  # (not made yet at this point of the first run)
                return None
            # the first run's next event is this very rule run: its result is this one, and the
            # events of that run (rule runs inside it) are passed with it
            clock.now = kept
        got = results[key] = first[key]
        if key in first_decisions:
            decisions[key] = first_decisions[key]
        if key in first_bounds:
            bounds[key] = first_bounds[key]
        return got
    return lookup
