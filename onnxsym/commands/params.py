"""Command-line values parsed by click itself (so a bad one is click's usage error, exit 2,
naming the option): a size sweep ``NAME=LO:HI[:STEP]``.

Only click is imported here: the command line's help loads this module."""

from __future__ import annotations

from dataclasses import dataclass

import click


@dataclass(frozen=True)
class SweepSpec:
    """The sizes of one symbol to evaluate at: ``lo`` to ``hi`` by ``step``; without a step,
    ``lo``, every power of two between and ``hi`` (sequence lengths, image sizes)."""

    name: str
    lo: int
    hi: int
    step: int | None = None

    def sizes(self) -> list[int]:
        if self.step is not None:
            out = list(range(self.lo, self.hi + 1, self.step))
            return out if out[-1] == self.hi else out + [self.hi]
        powers = [1 << k for k in range(self.hi.bit_length() + 1) if self.lo < 1 << k < self.hi]
        return sorted({self.lo, *powers, self.hi})


# The most sizes one sweep evaluates (each is an evaluation of every figure).
MAX_SIZES = 100_000


class Sweep(click.ParamType):
    name = "NAME=LO:HI[:STEP]"

    def convert(self, value, param, ctx):
        if isinstance(value, SweepSpec):
            return value
        name, sep, rest = str(value).partition("=")
        parts = rest.split(":")
        try:
            if not sep or not name.strip() or len(parts) not in (2, 3):
                raise ValueError
            lo, hi = int(parts[0]), int(parts[1])
            step = int(parts[2]) if len(parts) == 3 else None
        except ValueError:
            self.fail(f"expected NAME=LO:HI or NAME=LO:HI:STEP, got {value!r}", param, ctx)
        if lo < 0 or hi < lo or (step is not None and step < 1):
            self.fail(f"{value!r}: expected 0 <= LO <= HI and STEP >= 1", param, ctx)
        spec = SweepSpec(name.strip(), lo, hi, step)
        if step is not None and (hi - lo) // step + 1 > MAX_SIZES:
            self.fail(f"{value!r}: {(hi - lo) // step + 1} sizes; at most {MAX_SIZES} (a larger STEP)", param, ctx)
        return spec


SWEEP = Sweep()
