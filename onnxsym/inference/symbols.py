"""The symbols of one inference: every symbol by name, where it came from, their ranges,
and the one factory for fresh symbols.

The table owns the inference's :class:`~onnxsym.dims.RangeEnv`: each symbol's range
is declared there when the symbol is made, and narrowed there (``narrow``); dims are
computed with it current (``with table.env:``), so that no simplification derived
under these ranges is ever reused under another's.

A graph input's ``dim_param`` names a symbol (:meth:`SymbolTable.get`); a dim that no
rule can prove gets a fresh one (:meth:`SymbolTable.fresh`), whose name is new in the
table. The user's ``bind``, ``ranges``, ``allow_zero`` and ``assume`` live here too.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TypeVar

from .. import dims
from ..dims import Dim
from ..dims.text import ExprSyntaxError, parse_dim
from ..errors import UserInputError


@dataclass
class SymbolTable:
    """The root symbols of a model: where each came from, by name."""

    symbols: dict[str, dims.Sym] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    bound: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Constraints the user gives, as (lhs, rhs) expression texts.
    assume: list[tuple[str, str]] = field(default_factory=list)
    # The lower end of a graph-input dim's range (0 with --allow-zero).
    default_lo: int = dims.DEFAULT_LO
    # Symbols that may be 0 although the default range starts at 1 (--allow-zero NAME).
    zero_ok: frozenset = frozenset()
    # Symbols whose lower bound 1 is only the default: a decision relying on it is an assumption.
    defaulted: set = field(default_factory=set)
    # The ranges of every symbol by name (these and others the algebra makes), and the caches they imply.
    env: dims.RangeEnv = field(default_factory=dims.RangeEnv, repr=False, compare=False)

    def get(self, name: str, origin: str) -> Dim:
        """The graph-input symbol ``name`` (made on first use, with its range), or its bound value."""
        if name in self.bound:
            self.origin.setdefault(name, origin)
            return self.bound[name]
        s = self.symbols.get(name)
        if s is None:
            lo, hi = self.range_for(name)
            if name not in self.ranges and lo >= 1:
                self.defaulted.add(name)
            s = self.symbols[name] = self._declared(name, lo, hi)
            self.origin[name] = origin
        return dims.expr_of(s)

    def fresh(self, base: str, lo: int, hi: int, origin: str, taken: Collection[str] = ()) -> dims.Sym:
        """A new symbol with range ``[lo, hi]``, named ``base`` or ``base_N`` so that no symbol of
        the table (nor a name in ``taken``) has its name; ``origin`` says what made it."""
        name = self.unique(base)
        while name in taken:
            name = self.unique(name + "_")
        s = self.symbols[name] = self._declared(name, lo, hi)
        self.origin[name] = origin
        return s

    def _declared(self, name: str, lo: int, hi: int) -> dims.Sym:
        self.env.declare(name, lo, hi)
        return dims.Sym(name)

    def range_of(self, name: str) -> tuple[int, int]:
        """The range of the symbol ``name`` now (after any narrowing)."""
        return self.env.range(name)

    def narrow(self, name: str, lo: int, hi: int) -> None:
        """Intersect the range of ``name`` with ``[lo, hi]`` (a range never widens)."""
        self.env.narrow(name, lo, hi)

    def range_for(self, name: str) -> tuple[int, int]:
        """The range a new graph-input symbol ``name`` gets."""
        lo = 0 if name in self.zero_ok else self.default_lo
        return self.ranges.get(name, (lo, dims.INT64_MAX))

    def check_user_names(self) -> None:
        """Every name the user binds or ranges must be a symbol of the model."""
        for arg, opt, names in (("bind", "--bind", self.bound), ("ranges", "--range", self.ranges),
                                ("allow_zero", "--allow-zero", self.zero_ok)):
            unknown = [name for name in names if name not in self.origin]
            if unknown:
                why = self.unknown_name(unknown[0])
                exc = UserInputError(f"{arg}[{unknown[0]!r}]: {why}", f"{opt} {unknown[0]}: {why}")
                exc.unknown_binds = unknown if arg == "bind" else []  # (cost --solve takes fresh ones)
                raise exc
        for name, v in self.bound.items():
            lo, hi = self.range_for(name)
            if not lo <= v <= hi:
                why = f"outside the range [{lo}, {hi}]"
                hint = f" (allow_zero=True, or allow_zero=[{name!r}], lets it be 0)" if v == 0 else ""
                raise UserInputError(f"bind[{name!r}] = {v}: {why}" + hint,
                                     f"--bind {name}={v}: {why}" + (f" (--allow-zero {name} lets it be 0)" if v == 0 else ""))

    def unknown_name(self, name: str) -> str:
        """Why ``name`` is no input symbol: the model's symbols, the nearest first."""
        import difflib

        known = sorted(self.origin)
        near = difflib.get_close_matches(name, known, n=1)
        return (f"the model has no input symbol '{name}'" + (f"; did you mean '{near[0]}'?" if near else "")
                + f" (its symbols: {', '.join(known) or 'none'})")

    def parse_known(self, text: str, whole: str = "") -> Dim:
        """An expression over the model's input symbols (an unknown name is an error);
        ``whole`` is the assumption ``text`` is a side of, for the messages."""
        whole = whole or text

        def lookup(name):
            if name not in self.origin:
                why = self.unknown_name(name)
                raise UserInputError(f"assume '{whole}': {why}", f"--assume '{whole}': {why}")
            return self.get(name, "")
        try:
            return parse_dim(text, lookup)
        except ZeroDivisionError:
            why = f"division by zero in '{text}'"
            raise UserInputError(f"assume '{whole}': {why}", f"--assume '{whole}': {why}") from None
        except ExprSyntaxError as exc:
            raise UserInputError(f"assume '{whole}': {exc}", f"--assume '{whole}': {exc}") from None

    def assumption_contradiction(self, whole: str, a: Dim, b: Dim, why: str) -> UserInputError:
        """The error for an assumption ``a == b`` that cannot hold: with the ranges of its
        symbols, and the option that lets a graph-input dim be 0 where the default range
        excludes it and 0 would make it hold."""
        names = {s.name for s in dims.free_symbols(a) | dims.free_symbols(b)}
        ranges = [(n, self.range_of(n)) for n in sorted(names) if n in self.symbols]
        text = "; ".join(f"{n} in [{lo}, {hi}]" for n, (lo, hi) in ranges)
        zero = [n for n, (lo, _) in ranges if lo == 1 and n in self.defaulted]
        at = {n: 0 if n in zero else lo for n, (lo, _) in ranges}
        try:
            if zero and dims.evaluate(a, at) != dims.evaluate(b, at):
                zero = []  # 0 would not help: no hint
        except Exception:
            zero = []
        msg = f"it cannot hold ({why})" + (f": {text}" if text else "")
        lib, cli = msg, msg
        if zero:
            them = "it" if len(zero) == 1 else "them"
            lib += f" (a graph-input dim is >= 1 by default; allow_zero={zero!r} lets {them} be 0)"
            cli += (" (a graph-input dim is >= 1 by default; "
                    + " ".join(f"--allow-zero {n}" for n in zero) + f" lets {them} be 0)")
        return UserInputError(f"assume '{whole}': {lib}", f"--assume '{whole}': {cli}")

    def unique(self, base: str) -> str:
        name, n = base, 1
        while name in self.symbols:
            n += 1
            name = f"{base}_{n}"
        return name


F = TypeVar("F", bound=Callable)


def under_ranges_of_result(fn: F) -> F:
    """``fn(result, ...)`` (or a method of a result) run with the result's range environment
    current: what it derives from the result's dims holds under the result's ranges, not
    under another environment's for the same names. A generator function runs each of its
    steps so: the environment is current while it computes an item, not while the caller
    holds it (entered once around the whole generator, it would be left when the generator
    is made, before any step ran)."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def steps(result, *args, **kwargs):
            items = fn(result, *args, **kwargs)
            while True:
                with result.env:
                    try:
                        item = next(items)
                    except StopIteration:
                        return
                yield item
        return steps  # type: ignore[return-value]

    @functools.wraps(fn)
    def run(result, *args, **kwargs):
        with result.env:
            return fn(result, *args, **kwargs)
    return run  # type: ignore[return-value]
