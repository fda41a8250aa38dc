"""The representation of dims: atoms, the interned ``Expr`` and polynomial arithmetic.

An ``Expr`` is kept in one canonical form, a polynomial with integer coefficients
whose variables ("atoms") are symbols or non-polynomial terms (floor division,
max, min) over canonical expressions. Every ``Expr`` is interned: two
expressions with the same canonical form are the same object, so equality and
hashing are identity operations, as cheap as for ints.

The objects are structure only: a symbol is its name, and its range is the current
:class:`~onnxsym.dims.env.RangeEnv`'s. An object is one per structure, process-wide (a weak
table); which structure is canonical for a sum, and every range, is the environment's
(its ``canon`` table and caches): a dim made under one environment means the same
function in every other.

The modules of ``onnxsym.dims`` built on this one use its internal API: ``OpAtom``
(a non-polynomial atom), ``atom_expr`` (an atom as a dim), ``from_dict`` (a dim from
monomial -> coefficient), ``eval_atom``, ``dim_key`` (the canonical order), ``check_dim``,
and the range cache each atom and Expr carries (``range_cache``, valid while
``range_token`` is the environment's token: see ``ranges.range_of``). Code outside
``onnxsym.dims`` uses ``onnxsym.dims.structure`` instead.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, NoReturn, Union

from .env import CACHE_LIMIT, INT64_MAX, current

# Default range of a dim given by the model (graph input or declared name).
DEFAULT_LO = 1
# Default range of a dim nobody can name (data-dependent counts, unknown ops).
FRESH_LO = 0


class SymbolicDimError(TypeError):
    """A symbolic dim was used where a concrete integer is required."""


class UndecidableError(ValueError):
    """A comparison between dims cannot be decided from what is known."""


class TooLarge(ValueError):
    """A product would expand past MAX_PRODUCT_TERMS term products: the algebra does not follow it."""


# Real models' products expand a few terms by a few (4 terms at most in a dim over models/);
# a graph that multiplies large sums again and again would take minutes (each step squares).
MAX_PRODUCT_TERMS = 4096


Dim = Union[int, "Expr"]


class _Later:
    """The operations of ``Expr`` defined by the layers above this one (division,
    ranges, the printer): ``onnxsym.dims`` installs them, so that the representation
    imports none of the modules built on it."""

    def __init__(self) -> None:
        def missing(*args: object) -> NoReturn:
            raise NotImplementedError("installed by onnxsym.dims")

        self.floordiv: Callable[[Dim, Dim], Dim] = missing
        self.mod: Callable[[Dim, Dim], Dim] = missing
        self.try_lt: Callable[[Dim, Dim], bool | None] = missing
        self.try_le: Callable[[Dim, Dim], bool | None] = missing
        self.format: Callable[[Expr], str] = lambda e: repr(e.terms)
        self.normalize: Callable[[Terms], Dim | None] = lambda terms: None
        self.to_sympy: Callable[[Expr], Any] = missing  # onnxsym installs the sympy bridge's


later = _Later()


# --------------------------------------------------------------------------- atoms


class Atom:
    """A variable of the polynomial form: a symbol or a non-polynomial term."""

    __slots__ = ("key", "range_cache", "range_token", "__weakref__")
    key: tuple[Any, ...]
    range_cache: tuple[int, int]  # the range in the environment whose token is range_token (see ranges.range_of)
    range_token: object


_syms: weakref.WeakValueDictionary[str, Sym] = weakref.WeakValueDictionary()


class Sym(Atom):
    """A named integer symbol: one object per name; its range ``[lo, hi]`` is the current
    environment's. ``Sym(name, lo, hi)`` also declares that range there (see :func:`sym`)."""

    __slots__ = ("name",)
    name: str

    def __new__(cls, name: str, lo: int | None = None, hi: int | None = None) -> Sym:
        s = _syms.get(name)
        if s is None:
            s = object.__new__(cls)
            s.name = name
            s.key = (0, name)
            s.range_token = None
            _syms[name] = s
        if lo is not None or hi is not None:
            current().declare(name, DEFAULT_LO if lo is None else lo, INT64_MAX if hi is None else hi)
        return s

    @property
    def range(self) -> tuple[int, int]:
        """``(lo, hi)`` in the current environment."""
        env = current()
        if self.range_token is env.token:
            return self.range_cache
        r = self.range_cache = env.range(self.name)
        self.range_token = env.token
        return r

    @property
    def lo(self) -> int:
        return self.range[0]

    @property
    def hi(self) -> int:
        return self.range[1]

    def __reduce__(self) -> tuple[Callable[[str, int, int], Sym], tuple[str, int, int]]:
        lo, hi = self.range
        return (_unpickled_sym, (self.name, lo, hi))

    def __repr__(self) -> str:
        return f"Sym({self.name!r})"


def _unpickled_sym(name: str, lo: int, hi: int) -> Sym:
    """A pickled symbol: its range is declared where the current environment has none."""
    env = current()
    if name not in env.ranges:
        env.declare(name, lo, hi)
    return Sym(name)


# The structural tables: one object per structure while it is alive, by a weak reference (a plain
# dict of refs, swept of dead ones as it grows: a WeakValueDictionary runs Python code on the hot path).
_op_atoms: dict[tuple[str, tuple[Dim, ...]], weakref.ref[OpAtom]] = {}
_exprs: dict[Terms, weakref.ref[Expr]] = {}
_sweep_at = {id(_op_atoms): 1 << 16, id(_exprs): 1 << 16}


def _remember(table: dict[Any, Any], key: object, obj: object) -> None:
    if len(table) >= _sweep_at[id(table)]:
        for k in [k for k, r in table.items() if r() is None]:
            del table[k]
        _sweep_at[id(table)] = max(1 << 16, 2 * len(table))
    table[key] = weakref.ref(obj)


class OpAtom(Atom):
    """An interned term ``kind(args...)`` whose args are canonical dims."""

    __slots__ = ("kind", "args", "periods")
    kind: str
    args: tuple[Dim, ...]
    # quasi.atom_periods' cache (structure only): False until known, then None or the periods
    periods: dict[Sym, int] | Literal[False] | None
    _ORDER = {"floordiv": 1, "max": 3, "min": 4}

    def __new__(cls, kind: str, args: tuple[Dim, ...]) -> OpAtom:
        k = (kind, args)
        ref = _op_atoms.get(k)
        a = ref() if ref is not None else None
        if a is None:
            a = object.__new__(cls)
            a.kind, a.args = kind, args
            a.key = (cls._ORDER[kind],) + tuple(dim_key(x) for x in args)
            a.range_token = None
            a.periods = False  # not yet known (see quasi.atom_periods)
            _remember(_op_atoms, k, a)
        return a

    def __reduce__(self) -> tuple[type[OpAtom], tuple[str, tuple[Dim, ...]]]:
        return (OpAtom, (self.kind, self.args))


def dim_key(d: Dim) -> tuple[Any, ...]:
    return (0, d) if isinstance(d, int) else (1, d.key)


# --------------------------------------------------------------------------- Expr

Mono = tuple[tuple[Sym | OpAtom, int], ...]  # sorted (atom, exponent) pairs; () is the constant
Terms = tuple[tuple[Mono, int], ...]  # sorted (monomial, coefficient) pairs


def _mono_key(m: Mono) -> tuple[Any, ...]:
    return tuple((a.key, e) for a, e in m)


class Expr:
    """A symbolic dim in canonical form. Build with :func:`sym` and arithmetic."""

    __slots__ = ("terms", "key", "range_cache", "range_token", "_text", "__weakref__")
    terms: Terms
    key: tuple[Any, ...]
    range_cache: tuple[int, int]  # the range in the environment whose token is range_token (see ranges.range_of)
    range_token: object
    _text: str | None

    def __new__(cls, terms: Terms) -> Expr:
        canon: dict[Terms, Dim] = current().canon
        e = canon.get(terms)
        if e is None:
            e = later.normalize(terms)  # an int when the terms cancel: Expr(...) is then that int
            if e is None:
                e = _structure(terms)
            if len(canon) > CACHE_LIMIT:
                canon.clear()
            canon[terms] = e
        return e  # type: ignore[return-value]

    def __reduce__(self) -> tuple[type[Expr], tuple[Terms]]:
        return (Expr, (self.terms,))

    def to_sympy(self) -> Any:
        """This dim as a sympy expression (see :mod:`onnxsym.dims.sympy_bridge`)."""
        return later.to_sympy(self)

    def __copy__(self) -> Expr:
        return self

    def __deepcopy__(self, memo: object) -> Expr:
        return self

    # -- arithmetic ---------------------------------------------------------
    def __add__(self, other: Dim) -> Dim:
        return add(self, other)

    __radd__ = __add__

    def __sub__(self, other: Dim) -> Dim:
        return add(self, neg(other))

    def __rsub__(self, other: Dim) -> Dim:
        return add(other, neg(self))

    def __mul__(self, other: Dim) -> Dim:
        return mul(self, other)

    __rmul__ = __mul__

    def __neg__(self) -> Dim:
        return neg(self)

    def __pos__(self) -> Expr:
        return self

    def __floordiv__(self, other: Dim) -> Dim:
        return later.floordiv(self, other)

    def __rfloordiv__(self, other: Dim) -> Dim:
        return later.floordiv(other, self)

    def __mod__(self, other: Dim) -> Dim:
        return later.mod(self, other)

    def __rmod__(self, other: Dim) -> Dim:
        return later.mod(other, self)

    def __pow__(self, other: int) -> Dim:
        if not isinstance(other, int) or other < 0:
            raise SymbolicDimError(f"power {other!r} of a dim must be a non-negative int")
        out: Dim = 1
        for _ in range(other):
            out = mul(out, self)
        return out

    # -- comparisons: only what the ranges prove ------------------------------
    def __lt__(self, other: Dim) -> bool:
        return _decided(later.try_lt(self, other), self, "<", other)

    def __le__(self, other: Dim) -> bool:
        return _decided(later.try_le(self, other), self, "<=", other)

    def __gt__(self, other: Dim) -> bool:
        return _decided(later.try_lt(other, self), self, ">", other)

    def __ge__(self, other: Dim) -> bool:
        return _decided(later.try_le(other, self), self, ">=", other)

    # Identity equality and hashing are inherited from object (interning).

    # -- conversions ----------------------------------------------------------
    def __int__(self) -> int:
        raise SymbolicDimError(f"dim '{self}' is symbolic; a concrete int is required here")

    __index__ = __int__

    def __bool__(self) -> bool:
        raise SymbolicDimError(f"dim '{self}' is symbolic; its truth value is unknown")

    def __str__(self) -> str:
        if self._text is None:
            self._text = later.format(self)
        return self._text

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"


def _structure(terms: Terms) -> Expr:
    """The one object with these terms (canonical or not: ``Expr(terms)`` decides that)."""
    ref = _exprs.get(terms)
    e = ref() if ref is not None else None
    if e is None:
        e = object.__new__(Expr)
        e.terms = terms
        e.key = tuple((_mono_key(m), c) for m, c in terms)
        e.range_token = None
        e._text = None
        _remember(_exprs, terms, e)
    return e


def _decided(answer: bool | None, a: Dim, op: str, b: Dim) -> bool:
    if answer is None:
        raise UndecidableError(f"cannot decide {a} {op} {b}")
    return answer


# --------------------------------------------------------------------------- construction


def sym(name: str, lo: int = DEFAULT_LO, hi: int = INT64_MAX) -> Expr:
    """The dim that is the symbol ``name``, with range ``[lo, hi]`` declared in the current
    environment (see :mod:`onnxsym.dims.env`)."""
    return atom_expr(Sym(name, lo, hi))


def symbol(name: str) -> Expr:
    """The dim that is the symbol ``name``, with the range the current environment gives it."""
    return atom_expr(Sym(name))


def expr_of(s: Sym) -> Expr:
    """The dim that is the symbol ``s``."""
    return atom_expr(s)


def atom_expr(atom: Sym | OpAtom) -> Expr:
    return Expr(((((atom, 1),), 1),))


def from_dict(d: dict[Mono, int]) -> Dim:
    items = [(m, c) for m, c in d.items() if c != 0]
    if not items:
        return 0
    if len(items) == 1 and items[0][0] == ():
        return items[0][1]
    items.sort(key=lambda mc: _mono_key(mc[0]))
    return Expr(tuple(items))


def _terms(d: Dim) -> Terms:
    if isinstance(d, int):
        return (((), d),) if d else ()
    if isinstance(d, Expr):
        return d.terms
    raise TypeError(f"not a dim: {d!r}")


def check_dim(d: object) -> None:
    if not isinstance(d, (int, Expr)) or isinstance(d, bool):
        raise TypeError(f"not a dim: {d!r}")


# --------------------------------------------------------------------------- operations

def add(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    check_dim(a)
    check_dim(b)
    if b == 0:
        return a
    if a == 0:
        return b
    k = (a, b)
    cache: dict[tuple[Dim, Dim], Dim] = current().add
    r = cache.get(k)
    if r is None:
        d = dict(_terms(a))
        for m, c in _terms(b):
            d[m] = d.get(m, 0) + c
        r = from_dict(d)
        if len(cache) > CACHE_LIMIT:
            cache.clear()
        cache[k] = r
    return r


def neg(a: Dim) -> Dim:
    return mul(a, -1)


def sub(a: Dim, b: Dim) -> Dim:
    return add(a, neg(b))


def _mono_mul(m1: Mono, m2: Mono) -> Mono:
    if not m1:
        return m2
    if not m2:
        return m1
    d = dict(m1)
    for a, e in m2:
        d[a] = d.get(a, 0) + e
    return tuple(sorted(d.items(), key=lambda ae: ae[0].key))


def mul(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    check_dim(a)
    check_dim(b)
    if isinstance(a, int):
        a, b = b, a
    if b == 1:
        return a
    if b == 0:
        return 0
    k = (a, b)
    cache: dict[tuple[Dim, Dim], Dim] = current().mul
    r = cache.get(k)
    if r is None:
        assert isinstance(a, Expr)
        if isinstance(b, int):
            r = Expr(tuple((m, c * b) for m, c in a.terms))
        else:
            if len(a.terms) * len(b.terms) > MAX_PRODUCT_TERMS:
                raise TooLarge(f"a product of {len(a.terms)} terms by {len(b.terms)}")
            d: dict[Mono, int] = {}
            for m1, c1 in a.terms:
                for m2, c2 in b.terms:
                    m = _mono_mul(m1, m2)
                    d[m] = d.get(m, 0) + c1 * c2
            r = from_dict(d)
        if len(cache) > CACHE_LIMIT:
            cache.clear()
        cache[k] = r
    return r


# --------------------------------------------------------------------------- inspection


def is_static(d: Dim) -> bool:
    return isinstance(d, int)


def atoms(d: Dim) -> Iterator[Sym | OpAtom]:
    """The atoms of ``d``'s top level polynomial."""
    if isinstance(d, int):
        return
    for m, _ in d.terms:
        for atom, _ in m:
            yield atom


def free_symbols(d: Dim) -> frozenset[Sym]:
    """The symbols ``d`` depends on, at any depth."""
    out: set[Sym] = set()
    _collect(d, out)
    return frozenset(out)


def _collect(d: Dim, out: set[Sym]) -> None:
    for atom in atoms(d):
        if isinstance(atom, Sym):
            out.add(atom)
        else:
            for x in atom.args:
                _collect(x, out)


def evaluate(d: Dim, bindings: Mapping[Any, int]) -> int:
    """The value of ``d`` when every symbol is replaced by its bound int.

    ``bindings`` is keyed by symbol name or by :class:`Sym`; a missing symbol
    raises ``KeyError``.
    """
    if isinstance(d, int):
        return d
    total = 0
    for m, c in d.terms:
        v = c
        for atom, e in m:
            v *= eval_atom(atom, bindings) ** e
        total += v
    return total


def eval_atom(atom: Atom, bindings: Mapping[Any, int]) -> int:
    if isinstance(atom, Sym):
        if atom in bindings:
            return bindings[atom]
        return bindings[atom.name]
    assert isinstance(atom, OpAtom)
    vals = [evaluate(x, bindings) for x in atom.args]
    if atom.kind == "floordiv":
        return vals[0] // vals[1]
    if atom.kind == "max":
        return max(vals)
    return min(vals)



def as_sym(d: Dim) -> Sym | None:
    """The symbol ``d`` is, if ``d`` is a bare symbol."""
    if isinstance(d, Expr) and len(d.terms) == 1 and d.terms[0][1] == 1:
        m = d.terms[0][0]
        if len(m) == 1 and m[0][1] == 1 and isinstance(m[0][0], Sym):
            return m[0][0]
    return None
