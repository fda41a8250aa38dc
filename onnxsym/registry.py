"""The op registry: everything onnxsym knows of an op, registered in one place.

Each (domain, op_type) has one :class:`OpEntry`: its shape rules by the opset they
start at, the conditions it needs to run (:class:`Condition`), its cost formula and
whether it carries subgraphs. Inference reads the rules, the domain the conditions,
``cost`` the formula, ``coverage`` and ``docs/conditions.md`` all of it: a new op is
one registration (torch's ``register_flop_formula`` is the model).

A rule (:data:`Rule`) is a function ``rule(node) -> list of values``, one per
output, that computes each output's dtype, shape and (for shape tensors) elements
from ``node.inputs`` and ``node.attr(...)`` using Dim arithmetic.

Register rules for custom ops the same way the built-in rules do::

    from onnxsym import register_rule, Tensor

    @register_rule("MyRelu", domain="my.domain")
    def my_relu(node):
        x = node.inputs[0]
        return [Tensor(x.dtype, x.shape)]
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .inference.values import Value

if TYPE_CHECKING:
    from .inference.node import Node

# What a rule returns: a value per output of the node (None where it knows nothing).
Outputs = Sequence[Value | None]
# A rule: the node, whose inputs hold the input values, to its outputs' values.
Rule = Callable[["Node"], Outputs]
# A decorator returns the very function it was given, with its own type.
R = TypeVar("R", bound=Rule)

# Domains that name the standard operator set.
_ONNX_DOMAINS = {"", "ai.onnx"}


def canonical_domain(domain: str) -> str:
    return "" if domain in _ONNX_DOMAINS else domain


@dataclass(frozen=True)
class Condition:
    """What an op needs to run, as its spec says it (``"k <= X[axis]"``).

    ``check`` is how the domain learns it when the rule does not record it as it infers:
    a function of a node's inferred inputs (an :class:`onnxsym.domain.needs.Site`) to the
    raw conditions it needs. Without it, the rule records the condition itself (``node.require_equal``,
    ``node.require_at_least``): inference needs it to solve or narrow. ``learned=False``: the
    spec states it and the domain does not learn it yet (the docs say so). ``replayable``: the
    check reads of its site only the node's op, attributes, opset, its inputs' and outputs' values
    and element bounds, and names the node only in each raw's place and order; the domain then
    checks each distinct node once and replays its raws for the repeats (:mod:`onnxsym.domain.replay`)."""

    text: str
    check: Callable[[Any], Iterable[Any]] | None = None
    learned: bool = True
    replayable: bool = False

    @property
    def how(self) -> str:
        if not self.learned:
            return "not learned yet"
        return "checked on the inferred inputs" if self.check is not None else "recorded by the rule"


def unlearned(text: str) -> Condition:
    """A condition the spec states that the domain does not learn yet."""
    return Condition(text, learned=False)


class CostFormula(Protocol):
    """A cost formula as the registry keeps it (see :mod:`onnxsym.cost.formulas`)."""

    @property
    def family(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def count(self) -> Callable[..., Any]: ...


@dataclass
class OpEntry:
    """One op of one domain. ``conditions`` is None until the op states them (an empty
    tuple: it runs at every size its inputs have)."""

    domain: str
    op_type: str
    rules: list[tuple[int, Rule]] = field(default_factory=list)  # (since, rule), ordered by since
    conditions: tuple[Condition, ...] | None = None
    cost: CostFormula | None = None
    subgraphs: bool = False  # it carries graph attributes that the engine infers

    def rule_at(self, opset: int) -> Rule | None:
        """The rule in force at ``opset``: the last one not newer than it."""
        best = None
        for since, fn in self.rules:
            if since <= opset:
                best = fn
        return best


def _texts(conditions: Iterable[Condition | str]) -> tuple[Condition, ...]:
    return tuple(c if isinstance(c, Condition) else Condition(c) for c in conditions)


class Registry:
    """The op entries by (domain, op_type)."""

    def __init__(self) -> None:
        self._ops: dict[tuple[str, str], OpEntry] = {}
        self._subgraph_ops: dict[str, frozenset[str]] = {}  # by domain; emptied by a registration

    def entry(self, domain: str, op_type: str) -> OpEntry | None:
        return self._ops.get((canonical_domain(domain), op_type))

    def entries(self) -> list[OpEntry]:
        """Every entry with at least one rule, by domain and op type."""
        return [e for _, e in sorted(self._ops.items()) if e.rules]

    def _entry(self, domain: str, op_type: str) -> OpEntry:
        key = (canonical_domain(domain), op_type)
        e = self._ops.get(key)
        if e is None:
            e = self._ops[key] = OpEntry(key[0], op_type)
        return e

    def register_rule(self, op_type: str, domain: str = "", since: int = 1, *,
                      conditions: Iterable[Condition | str] | None = None, cost: CostFormula | None = None,
                      subgraphs: bool = False) -> Callable[[R], R]:
        """Decorator: ``fn`` is the rule for ``op_type`` from opset version ``since`` on
        (until a rule registered with a later ``since`` takes over); registering the same
        key again replaces the earlier rule. ``conditions`` (texts or :class:`Condition`),
        ``cost`` and ``subgraphs`` describe the op at every opset; given again, they replace
        what was given before."""

        stated = None if conditions is None else _texts(conditions)

        def deco(fn: R) -> R:
            self._add(op_type, domain, since, fn, stated, cost, subgraphs)
            return fn

        return deco

    def _add(self, op_type: str, domain: str, since: int, fn: Rule, conditions: tuple[Condition, ...] | None,
             cost: CostFormula | None, subgraphs: bool) -> None:
        e = self._entry(domain, op_type)
        e.rules[:] = [r for r in e.rules if r[0] != since]
        bisect.insort(e.rules, (since, fn), key=lambda r: r[0])
        if conditions is not None:
            e.conditions = conditions
        if cost is not None:
            e.cost = cost
        e.subgraphs = e.subgraphs or subgraphs
        self._subgraph_ops.clear()

    def register(self, op_types: str | Iterable[str], domain: str = "", since: int = 1, *,
                 conditions: Iterable[Condition | str] | None = None, cost: CostFormula | None = None,
                 subgraphs: bool = False) -> Callable[[R], R]:
        """Like :meth:`register_rule` for several op types sharing one rule (a string of
        names separated by spaces, or a list)."""
        ops = op_types.split() if isinstance(op_types, str) else list(op_types)
        stated = None if conditions is None else _texts(conditions)

        def deco(fn: R) -> R:
            for op in ops:
                self._add(op, domain, since, fn, stated, cost, subgraphs)
            return fn

        return deco

    def find_rule(self, domain: str, op_type: str, opset: int) -> Rule | None:
        """The rule in force for ``op_type`` at opset version ``opset`` of ``domain``."""
        e = self._ops.get((canonical_domain(domain), op_type))
        return None if e is None else e.rule_at(opset)

    def registered_ops(self) -> dict[tuple[str, str], list[int]]:
        """Every registered (domain, op_type) with the since_versions of its rules."""
        return {k: [s for s, _ in e.rules] for k, e in self._ops.items() if e.rules}

    def subgraph_ops(self, domain: str = "") -> frozenset[str]:
        """The op types of ``domain`` that carry subgraphs the engine infers."""
        ops = self._subgraph_ops.get(domain)  # (by the name asked: a hot path asks for "")
        if ops is None:
            d = canonical_domain(domain)
            ops = self._subgraph_ops[domain] = frozenset(op for (dom, op), e in self._ops.items()
                                                         if dom == d and e.subgraphs)
        return ops

    def remove(self, op_type: str, domain: str = "") -> None:
        """Forget ``op_type`` of ``domain`` entirely (a test's own op)."""
        self._ops.pop((canonical_domain(domain), op_type), None)
        self._subgraph_ops.clear()

    @contextlib.contextmanager
    def override(self, op_type: str, rule: Rule | None, domain: str = "") -> Iterator[None]:
        """Within the block, ``rule`` is the rule of ``op_type`` at every opset (``None``:
        the op has no rule, as a custom op would not); after it, the op's rules are as before.
        For tests: a planted wrong rule, or an op left to its function body."""
        e = self._entry(domain, op_type)
        saved = list(e.rules)
        e.rules[:] = [] if rule is None else [(1, rule)]
        try:
            yield
        finally:
            e.rules[:] = saved


# The ops onnxsym infers with: the built-in ones (rules/) and those a user registers.
rules = Registry()
register_rule = rules.register_rule
register = rules.register
find_rule = rules.find_rule
registered_ops = rules.registered_ops
override = rules.override
entry = rules.entry
entries = rules.entries
subgraph_ops = rules.subgraph_ops
