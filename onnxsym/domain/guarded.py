"""Conditions that hold only where a subgraph runs (an If's branch, a Loop's body).

A guarded condition ``if G: C`` comes from a node in a subgraph; its guards say when
that subgraph runs. A guard on the sizes (``seq > 8``) is decided by them; any other
(silero's ``sr == 16000``, "the body runs") is a choice the data make. A size is in the
domain when some choice lets every guarded condition that then applies hold: silero runs
512 samples at 16 kHz and 300 at 8 kHz, and 1000 at neither. Guards of one choice
(an If's then and else) exclude each other.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..facts.fact import Guard

if TYPE_CHECKING:
    from . import Condition

# The most data choices tried together (each doubles the work); past it, each guarded
# condition is taken alone: it cuts only where its guards are decided by the sizes.
MAX_CHOICES = 12


def free_keys(conditions: Sequence[Condition]) -> list[tuple]:
    """The choices the data make, in the order first met."""
    return list(dict.fromkeys(g.key for c in conditions for g in c.when if g.relation is None))


def _applies(g: Guard, bindings: Mapping[str, int], chosen: Mapping[tuple, bool]) -> bool:
    decided = g.holds(bindings)
    return (chosen.get(g.key) == g.value) if decided is None else decided


def choose(conditions: Sequence[Condition], bindings: Mapping[str, int]) -> tuple[dict[tuple, bool] | None,
                                                                                 Condition | None]:
    """A choice (key -> value) under which every guarded condition that applies holds at
    ``bindings``, or None and a guarded condition that fails there whatever the choice (the
    first that fails under the choice with the fewest failures)."""
    guarded = [c for c in conditions if c.when]
    keys = free_keys(guarded)
    if len(keys) > MAX_CHOICES:
        bad = next((c for c in guarded if all(g.holds(bindings) for g in c.when) and not c.holds(bindings)), None)
        return ({} if bad is None else None), bad
    best: tuple[int, Condition] | None = None
    for values in itertools.product((True, False), repeat=len(keys)):
        chosen = dict(zip(keys, values))
        failing = [c for c in guarded if all(_applies(g, bindings, chosen) for g in c.when) and not c.holds(bindings)]
        if not failing:
            return chosen, None
        if best is None or len(failing) < best[0]:
            best = (len(failing), failing[0])
    return None, (best[1] if best else None)


def feeds(conditions: Sequence[Condition], chosen: Mapping[tuple, bool]) -> dict[str, object]:
    """Graph-input values that make the ``chosen`` data choices (where a guard says how)."""
    out: dict[str, object] = {}
    for c in conditions:
        for g in c.when:
            if g.relation is None and g.key in chosen:
                out.update(dict(g.feed if chosen[g.key] == g.value else g.feed_not))
    return out


def prefix(when: Sequence[Guard]) -> str:
    """``if sr == 16000: `` for a condition under those guards."""
    return "if " + " and ".join(g.text for g in when) + ": " if when else ""


def hull_of_choices(conditions: Sequence[Condition], ranges: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """``ranges`` narrowed to what every choice of the data allows together: under each choice,
    the range conditions whose guards it makes hold narrow the ranges; a size outside all of
    them runs under no choice. (silero: 192..703 at 16 kHz, 96..351 at 8 kHz: 96..703.) A guard
    the sizes decide is left out (its condition may or may not apply), as are more choices than
    MAX_CHOICES: each leaves the ranges wider, never narrower than the truth."""
    guarded = [c for c in conditions if c.when and c.kind == "range" and c.form is not None
               and all(g.relation is None for g in c.when)]
    keys = free_keys(guarded)
    if not guarded or len(keys) > MAX_CHOICES:
        return ranges
    hull: dict[str, tuple[int, int]] | None = None
    for values in itertools.product((True, False), repeat=len(keys)):
        chosen = dict(zip(keys, values))
        narrowed = dict(ranges)
        for c in guarded:
            f = c.form
            if f is not None and all(chosen[g.key] == g.value for g in c.when) and f.symbol in narrowed:
                lo, hi = narrowed[f.symbol]
                narrowed[f.symbol] = (max(lo, f.lo), min(hi, f.hi))
        if any(lo > hi for lo, hi in narrowed.values()):
            continue  # no size runs under this choice
        hull = narrowed if hull is None else {n: (min(hull[n][0], lo), max(hull[n][1], hi))
                                               for n, (lo, hi) in narrowed.items()}
    return ranges if hull is None else hull
