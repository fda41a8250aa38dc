"""The range environment: every symbol's range, by name, and the caches that depend on ranges.

A symbol is its name (``Sym('seq')`` is one object); what it ranges over is a fact
of an environment (as in torch's ``ShapeEnv``). Every answer the algebra derives from
ranges (a canonical form, a floor division dropped, a ``max`` decided, a bound) is
cached in the environment it was derived in, never elsewhere: two inferences with
another range for ``seq`` share no simplification.

One environment is current (a context variable): ``with env:`` makes ``env`` current
for a block. :data:`DEFAULT` is current otherwise (plain library use of
``onnxsym.sym``); inference makes one per run (its :class:`onnxsym.inference.symbols.SymbolTable`
owns it).

A range may only narrow (:meth:`RangeEnv.declare` in a strict environment refuses to
widen one): what was proven under the wider range holds under the narrower. Any change
of a range also drops every cache, so that what is derived next uses the new range.
A name no declaration gave has the widest range (all of int64): it is recorded, so
that declaring it later counts as a change.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any, TypeVar

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
# The range of a name no declaration gave: every int64 (sound whatever the name means).
UNDECLARED = (INT64_MIN, INT64_MAX)
# A cache past this many entries is dropped (recomputing an answer is always right).
CACHE_LIMIT = 1 << 20


class RangeEnv:
    """Symbol ranges by name, and the algebra's range-dependent caches."""

    __slots__ = ("ranges", "strict", "token", "add", "mul", "canon", "div", "lower", "same", "forms",
                 "others", "work", "over", "parent", "_entered")

    def __init__(self, ranges: dict[str, tuple[int, int]] | None = None, strict: bool = True):
        self.ranges: dict[str, tuple[int, int]] = dict(ranges or {})
        # strict: a range may only narrow (an inference); else a new range replaces the old (library use)
        self.strict = strict
        self._entered: list[tuple[Token[RangeEnv], Token[tuple[RangeEnv, ...]]]] = []
        # work spent by each bounded search (see spend); kept when the caches drop
        self.work: dict[str, int] = {}
        self.over: set[str] = set()  # the searches whose budget ran out
        self.parent: RangeEnv | None = None  # the environment this one is a child of (see child)
        self._drop_caches()

    def _drop_caches(self) -> None:
        # Objects cache their range with the token of the environment it holds in: a new token
        # makes every such cached range stale at once.
        self.token = object()
        # (typed where they are used: this module imports none of the algebra's)
        self.add: dict[Any, Any] = {}
        self.mul: dict[Any, Any] = {}
        self.canon: dict[Any, Any] = {}  # terms -> the canonical dim (the representation's intern table)
        self.div: dict[Any, Any] = {}
        self.lower: dict[Any, Any] = {}
        self.same: dict[Any, Any] = {}
        self.forms: dict[Any, Any] = {}
        self.others: dict[str, dict[Any, Any]] = {}  # caches of modules built on the algebra, by name

    def range(self, name: str) -> tuple[int, int]:
        """The range of the symbol ``name``."""
        r = self.ranges.get(name)
        if r is None:
            r = self.ranges[name] = UNDECLARED
        return r

    def declare(self, name: str, lo: int, hi: int) -> None:
        """Give ``name`` the range ``[lo, hi]``. In a strict environment a known range may only
        narrow (``ValueError`` otherwise); any change drops the caches."""
        if lo > hi:
            raise ValueError(f"empty range [{lo}, {hi}] for {name}")
        old = self.ranges.get(name)
        if old == (lo, hi):
            return
        if old is not None:
            if self.strict and not old[0] <= lo <= hi <= old[1]:
                raise ValueError(f"the range of {name} cannot widen from [{old[0]}, {old[1]}] to [{lo}, {hi}] "
                                 f"here: what was derived under the narrower range would no longer hold")
            self._drop_caches()
        self.ranges[name] = (lo, hi)

    def narrow(self, name: str, lo: int, hi: int) -> None:
        """Intersect the range of ``name`` with ``[lo, hi]``."""
        olo, ohi = self.range(name)
        self.declare(name, max(lo, olo), min(hi, ohi))

    def child(self, ranges: dict[str, tuple[int, int]]) -> RangeEnv:
        """A new environment: these ranges in place of this one's, caches of its own. For asking
        what holds where a symbol's range is another (``with env.child({'seq': (2, 64)}):``).
        What is derived there holds where its ranges hold: a dim may leave a child whose ranges
        are wider than this one's; from a narrower one take decisions out, not dims."""
        env = RangeEnv(self.ranges, strict=True)
        env.ranges.update(ranges)
        env.parent = self
        return env

    def narrower_than(self, other: RangeEnv) -> str | None:
        """A symbol whose range here is narrower than in ``other`` (None: there is none)."""
        return next((name for name, (lo, hi) in self.ranges.items()
                     if (r := other.ranges.get(name, UNDECLARED)) != (lo, hi) and r[0] <= lo <= hi <= r[1]), None)

    def spend(self, search: str, units: int, budget: int) -> bool:
        """Charge ``units`` of work to ``search`` in this environment: False once the total passes
        ``budget``, and then the search gives its answer for "not found" (no canonical form, a
        weaker bound), which is always sound. Every search of the algebra that can grow with its
        input has a budget, so that no model makes inference run without end. The library's
        own environment (DEFAULT, not strict) lives as long as the process: there each call is
        bounded by the search itself, never by what earlier calls spent."""
        if not self.strict:
            return True
        used = self.work.get(search, 0) + units
        self.work[search] = used
        if used <= budget:
            return True
        self.over.add(search)
        return False

    def cache(self, name: str) -> dict[Any, Any]:
        """The cache ``name`` of a module built on the algebra (dropped with the others)."""
        c = self.others.get(name)
        if c is None:
            c = self.others[name] = {}
        return c

    def __enter__(self) -> RangeEnv:
        active = _active.get()
        for env in active:  # (innermost first; only children are ever narrower)
            if env.parent is not None and env is not self:
                _check_mixing(env, self)
        self._entered.append((_current.set(self), _active.set((self, *active))))
        return self

    def __exit__(self, *exc: object) -> None:
        current_token, active_token = self._entered.pop()
        _active.reset(active_token)
        _current.reset(current_token)

    def __repr__(self) -> str:
        return f"RangeEnv({len(self.ranges)} symbols)"


class MixedEnvironments(ValueError):
    """Dims derived under narrower ranges would be computed with under wider ones."""


def _check_mixing(now: RangeEnv, entered: RangeEnv) -> None:
    """Entering ``entered`` while ``now``, one of its descendants (a result narrowed to its domain,
    in a child environment), is active (current, or entered and not yet left: another
    environment in between hides nothing): what ``now`` derived under a narrower range
    (``min(64, seq)`` is ``seq`` for ``seq <= 64``) would be taken for true under the wider one.
    As JAX's ``SymbolicScope`` check refuses to mix the dims of two scopes, that is refused."""
    env: RangeEnv | None = now
    while env is not None and env is not entered:
        env = env.parent
    if env is None:
        return  # unrelated environments: another inference's computation, its dims its own
    name = now.narrower_than(entered)
    if name is not None:
        lo, hi = now.ranges[name]
        wlo, whi = entered.range(name)
        raise MixedEnvironments(f"computing under ranges wider than those the current dims were derived under "
                                f"({name} in [{lo}, {hi}] here, [{wlo}, {whi}] there): use one result's dims "
                                f"under its own environment (narrowed results have one of their own)")


K = TypeVar("K")
V = TypeVar("V")


def bounded(cache: dict[K, V], limit: int = CACHE_LIMIT) -> dict[K, V]:
    """``cache``, emptied first when it has grown past ``limit`` entries (call before a store)."""
    if len(cache) > limit:
        cache.clear()
    return cache


DEFAULT = RangeEnv(strict=False)
_current: ContextVar[RangeEnv] = ContextVar("onnxsym_range_env", default=DEFAULT)
# The environments entered and not yet left, innermost first (what the mixing check reads).
_active: ContextVar[tuple[RangeEnv, ...]] = ContextVar("onnxsym_range_envs", default=())
current = _current.get
