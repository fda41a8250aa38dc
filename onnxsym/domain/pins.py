"""Pinned symbols: dynamism a model declares and its graph does not have.

A graph input's symbol is *pinned* when the model's valid input domain admits it at one
size only, or at a few (``batch == 1`` from a Reshape to a constant ``[1, 2, 48, 8, 8]``,
a folded ``Shape``), and *tied* when the domain makes it equal to another declared symbol
(``height == width``): the model then fails at every other size, whatever its inputs
declare. :func:`pins_of` lists them from a result's domain, each with the node that pins it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import dims
from . import Condition, Domain, input_symbols

# A symbol the domain leaves at most this many sizes is pinned to that set.
FEW_SIZES = 4


@dataclass(frozen=True)
class Pin:
    """A declared symbol the domain pins to ``values`` or ties to the symbol ``tied_to``."""

    symbol: str
    values: tuple[int, ...]  # the sizes it may take (empty when tied)
    tied_to: str | None
    condition: str  # the domain's condition, as ``onnxsym domain`` prints it
    node: str
    op_type: str
    reason: str

    @property
    def what(self) -> str:
        if self.tied_to is not None:
            return f"{self.symbol} == {self.tied_to}"
        if len(self.values) == 1:
            return f"{self.symbol} == {self.values[0]}"
        return f"{self.symbol} in {{{', '.join(map(str, self.values))}}}"

    def describe(self) -> str:
        """One line: what the symbol is pinned to, the node that pins it and why."""
        where = f"{self.op_type} '{self.node}'" if self.op_type else self.node
        return f"{self.what}: {where}: {self.reason}"

    def to_json(self) -> dict[str, object]:
        return {"symbol": self.symbol, "values": list(self.values), "tied_to": self.tied_to,
                "condition": self.condition, "node": self.node, "op_type": self.op_type, "reason": self.reason}


def pins_of(result, domain: Domain | None = None) -> list[Pin]:
    """The declared symbols of ``result`` that its domain pins or ties, in declaration order."""
    domain = result.domain() if domain is None else domain
    declared = input_symbols(result)
    equal = {c.symbols[0]: c for c in domain.conditions if c.kind == "equal" and not c.assumed}
    out = []
    for name in declared:
        c = equal.get(name)
        if c is not None:
            pin = _from_equality(name, c, declared)
            if pin is not None:
                out.append(pin)
            continue
        pin = _from_ranges(name, domain)
        if pin is not None:
            out.append(pin)
    return out


def _from_equality(name: str, c: Condition, declared: list[str]) -> Pin | None:
    d = c.definition
    src = c.sources[0]
    if dims.is_static(d):
        return Pin(name, (int(d),), None, c.text, src.node, src.op_type, src.reason)
    other = dims.as_sym(d)
    if other is not None and other.name in declared:
        return Pin(name, (), other.name, c.text, src.node, src.op_type, src.reason)
    return None  # a relation (total_seq == past + seq), not a lost dimension


def _from_ranges(name: str, domain: Domain) -> Pin | None:
    lo, hi = domain.ranges.get(name, (0, dims.INT64_MAX))
    if hi - lo + 1 > FEW_SIZES:
        return None
    own = [c for c in domain.conditions if c.symbols == (name,) and c.kind in ("range", "divisible")
           and not c.assumed]
    values = tuple(v for v in range(lo, hi + 1) if all(c.holds({name: v}) for c in own))
    cutting = [c for c in own if c.kind == "range"] or own
    if not cutting or not values:
        return None  # an empty domain is reported as such elsewhere
    src = cutting[0].sources[0]
    return Pin(name, values, None, cutting[0].text, src.node, src.op_type, src.reason)
