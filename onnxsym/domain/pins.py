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
from . import UNDECIDED, Condition, Domain, input_symbols
from .roots import roots
from .sweep import swept_roots

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
            pin = _from_equality(name, c, declared, domain)
            if pin is not None:
                out.append(pin)
            continue
        pin = _from_ranges(name, domain)
        if pin is not None:
            out.append(pin)
    return out


def _from_equality(name: str, c: Condition, declared: list[str], domain: Domain) -> Pin | None:
    d = c.definition
    src = c.sources[0]
    if dims.is_static(d):
        # (a condition of no other symbol broken there, 13 == 7 after seq == 4: the model runs
        # at no size, no pin; the empty domain is reported as such)
        if not all(holds_at(k, name, int(d)) for k in domain.conditions
                   if set(k.symbols) <= {name} and not k.when and not k.assumed):
            return None
        return Pin(name, (int(d),), None, c.text, src.node, src.op_type, src.reason)
    other = dims.as_sym(d)
    if other is not None and other.name in declared:
        return Pin(name, (), other.name, c.text, src.node, src.op_type, src.reason)
    return None  # a relation (total_seq == past + seq), not a lost dimension


def _from_ranges(name: str, domain: Domain) -> Pin | None:
    """``name`` pinned to the few sizes its own conditions leave: a small range (``n <= 10``
    with ``n % 4 == 0`` leaves 4 and 8), or a condition that holds at listed sizes only
    (``seq == 8 (or seq == 1)``, a broadcast against a constant 8)."""
    found = _finite(name, domain)
    if found is None or len(found[0]) > FEW_SIZES:
        return None
    values, own, listed = found
    cutting = listed or [c for c in own if c.kind == "range"] or own
    if not cutting or not values:
        return None  # an empty domain is reported as such elsewhere
    src = cutting[0].sources[0]
    # (a range and a divisibility may leave the few sizes together: both are the condition)
    text = cutting[0].text if listed else " and ".join(c.text for c in own)
    return Pin(name, values, None, text, src.node, src.op_type, src.reason)


def finite_sizes(name: str, domain: Domain) -> tuple[int, ...] | None:
    """Every size of ``name`` its own conditions leave, where they leave finitely many that are
    found (more than a pin's few too: ``seq`` in 6, 7, 22, 23, 1977, 1978, 1993 and 1994); None
    where they are without end or not found."""
    found = _finite(name, domain)
    return None if found is None else found[0]


def _finite(name: str, domain: Domain) -> tuple[tuple[int, ...], list[Condition], list[Condition]] | None:
    """(the sizes ``name``'s own conditions leave, those conditions, the listing ones among
    them), or None where the sizes are not finitely many found."""
    lo, hi = domain.ranges.get(name, (0, dims.INT64_MAX))
    # (one the forms leave undecided, seq//2 == 4 or seq//2 == 1, is decided here if its sizes are listed)
    own = [c for c in domain.conditions if c.symbols == (name,) and c.assumed in ("", UNDECIDED)
           and ((c.kind in ("range", "divisible") and not c.assumed)
                or (not c.when and listed_sizes(c, name, lo, hi) is not None))]
    listed = [c for c in own if c.kind == "other"]
    if listed:
        candidates = sorted(set.intersection(*(listed_sizes(c, name, lo, min(hi, dims.INT64_MAX)) or set()
                                                for c in listed)))
        candidates = [v for v in candidates if lo <= v <= hi]
    elif hi - lo + 1 <= ENUMERATED:
        candidates = list(range(lo, hi + 1))
    else:
        return None
    # every condition of the symbol alone holds at a pinned size (one the forms leave undecided,
    # 2*(seq//2) == seq, too: a size it breaks is no size the model runs at)
    alone = [c for c in domain.conditions if c.symbols == (name,) and not c.when]
    values = tuple(v for v in candidates if all(holds_at(c, name, v) for c in alone))
    return values, own, listed


def holds_at(c: Condition, name: str, v: int) -> bool:
    try:
        return c.holds({name: v})
    except (ArithmeticError, KeyError):  # (a division by zero there: the node does not run)
        return False


def _equality_of(piece) -> tuple | None:
    """An equality a piece of relations implies: one of it, or ``a <= b`` with ``b <= a``."""
    eq = next(((a, b) for rel, a, b in piece if rel == "=="), None)
    if eq is not None:
        return eq
    le = {(a, b) for rel, a, b in piece if rel == "<="}
    return next(((a, b) for a, b in le if (b, a) in le), None)


def _bounded(piece, name: str, lo: int) -> set[int] | None:
    """The sizes from ``lo`` up to a bound ``name <= K`` of a piece (a superset of where it
    holds), or None without one or with too many."""
    ks = [int(b) for rel, a, b in piece if rel == "<=" and _is_sym(a, name) and dims.is_static(b)]
    if not ks or min(ks) - lo + 1 > ENUMERATED:
        return None
    return set(range(lo, min(ks) + 1))


def _is_sym(d, name: str) -> bool:
    s = dims.as_sym(d)
    return s is not None and s.name == name


# The widest range whose sizes are each tried against the symbol's conditions.
ENUMERATED = 1 << 12


def listed_sizes(c: Condition, name: str, lo: int = 0, hi: int = dims.INT64_MAX) -> set[int] | None:
    """The sizes in ``[lo, hi]`` at which an equality or a disjunction of equalities in ``name``
    holds (``seq == 8 or seq == 1``; through an expression, ``3*seq - max(-1, 3*seq - 998) == 10``,
    ``2*seq == 8 or 2*seq == 1`` or ``seq - 1 == 8 or seq - 1 == 1``; a piece of cases may be a
    bound, ``seq <= 3 (or seq == 8)``), or None for any other condition (one that holds at
    sizes without end, ``seq % 2 == 0 or ...``, too)."""
    f = c.form
    below: set[int] = set()  # (the sizes a bounded piece of cases leaves)
    if f is not None and f.kind == "other" and f.rel == "cases":
        # each piece holds where all its relations do: within the roots of one equality of it
        # (a superset; the caller keeps the sizes where the condition holds)
        eqs = [_equality_of(piece) for piece in f.pieces]
        bounded = [_bounded(piece, name, lo) if e is None else set() for e, piece in zip(eqs, f.pieces)]
        if not eqs or any(e is None and b is None for e, b in zip(eqs, bounded)):
            return None
        alts = tuple(e for e in eqs if e is not None)
        below = set().union(*(b for b in bounded if b))
    elif f is not None and f.kind == "other" and f.rel == "or" and f.alts:
        alts = f.alts
    elif f is not None and f.kind == "other" and f.rel == "==":  # (one equality the forms leave undecided)
        alts = ((f.lhs, f.rhs),)
    else:
        return None
    out = set(below)
    unread = []
    for a, b in alts:
        sa, sb = dims.as_sym(a), dims.as_sym(b)
        if sa is not None and sa.name == name and dims.is_static(b):
            out.add(int(b))
        elif sb is not None and sb.name == name and dims.is_static(a):
            out.add(int(a))
        else:
            found = roots(dims.sub(a, b), name, lo, hi)
            if found is None:
                unread.append((a, b))
            else:
                out |= found
    if unread:
        # (those roots cannot read, over a bounded range: each size evaluated, exactly)
        found = swept_roots(tuple(unread), name, lo, hi)
        if found is None:
            return None
        out |= found
    return out
