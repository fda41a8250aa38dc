"""The rule registry: per-op shape rules keyed by (domain, op_type, since_version).

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
from typing import TYPE_CHECKING, TypeVar

from .inference.values import Value

if TYPE_CHECKING:
    from .inference.node import Node

# What a rule returns: a value per output of the node (None where it knows nothing).
Outputs = Sequence[Value | None]
# A rule: the node, whose inputs hold the input values, to its outputs' values.
Rule = Callable[["Node"], Outputs]
R = TypeVar("R", bound=Rule)  # a rule as written: registering it keeps its own type

# Domains that name the standard operator set.
_ONNX_DOMAINS = {"", "ai.onnx"}


def canonical_domain(domain: str) -> str:
    return "" if domain in _ONNX_DOMAINS else domain


class Registry:
    """Rules by (domain, op_type), each op's kept as ``(since, rule)`` pairs in order of
    ``since``: the rule in force at an opset is the last one not newer than it."""

    def __init__(self) -> None:
        self._rules: dict[tuple[str, str], list[tuple[int, Rule]]] = {}

    def register_rule(self, op_type: str, domain: str = "", since: int = 1) -> Callable[[Rule], Rule]:
        """Decorator: ``fn`` is the rule for ``op_type`` from opset version ``since`` on
        (until a rule registered with a later ``since`` takes over). Registering the same
        key again replaces the earlier rule."""

        def deco(fn: Rule) -> Rule:
            entries = self._rules.setdefault((canonical_domain(domain), op_type), [])
            entries[:] = [e for e in entries if e[0] != since]
            bisect.insort(entries, (since, fn), key=lambda e: e[0])
            return fn

        return deco

    def register(self, op_types: str | Iterable[str], domain: str = "", since: int = 1) -> Callable[[R], R]:
        """Like :meth:`register_rule` for several op types sharing one rule (``"Relu Elu"``: each name)."""
        ops = op_types.split() if isinstance(op_types, str) else list(op_types)

        def deco(fn: R) -> R:
            for op in ops:
                self.register_rule(op, domain, since)(fn)
            return fn

        return deco

    def find_rule(self, domain: str, op_type: str, opset: int) -> Rule | None:
        """The rule in force for ``op_type`` at opset version ``opset`` of ``domain``."""
        entries = self._rules.get((canonical_domain(domain), op_type))
        if not entries:
            return None
        best = None
        for since, fn in entries:
            if since <= opset:
                best = fn
        return best

    def registered_ops(self) -> dict[tuple[str, str], list[int]]:
        """Every registered (domain, op_type) with the since_versions of its rules."""
        return {k: [s for s, _ in v] for k, v in self._rules.items()}

    @contextlib.contextmanager
    def override(self, op_type: str, rule: Rule | None, domain: str = "") -> Iterator[None]:
        """Within the block, ``rule`` is the rule of ``op_type`` at every opset (``None``:
        the op has no rule, as a custom op would not); after it, the op's rules are as before.
        For tests: a planted wrong rule, or an op left to its function body."""
        key = (canonical_domain(domain), op_type)
        saved = self._rules.get(key)
        if rule is None:
            self._rules.pop(key, None)
        else:
            self._rules[key] = [(1, rule)]
        try:
            yield
        finally:
            if saved is None:
                self._rules.pop(key, None)
            else:
                self._rules[key] = saved


# The rules onnxsym infers with: the built-in ones (rules/) and those a user registers.
rules = Registry()
register_rule = rules.register_rule
register = rules.register
find_rule = rules.find_rule
registered_ops = rules.registered_ops
override = rules.override
