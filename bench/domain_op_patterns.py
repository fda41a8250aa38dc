#!/usr/bin/env python
"""The domain against onnxruntime's run/refuse verdict on the op-pattern grids of
tests/op_patterns.py (pools on empty inputs, ArgMax/ArgMin empty axes, OneHot
depth 0, Einsum ellipses and repeated letters, sequence ops, ConvTranspose output_shape,
BatchNormalization's parameters): the disagreements per case and in all.

    python bench/domain_op_patterns.py

Exits 1 when the domain and onnxruntime disagree anywhere.
"""

from __future__ import annotations

import itertools
import os
import sys

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [CHECKOUT, os.path.join(CHECKOUT, "tests")]  # this checkout's onnxsym, and the tests' grids
import op_patterns as grids  # noqa: E402

import onnxsym  # noqa: E402


def main() -> int:
    total = tries = cases = 0
    for name, (m, grid, feeds) in sorted(grids.CASES.items()):
        result = onnxsym.infer(m, allow_zero=True)
        domain = result.domain()
        bad = 0
        for values in itertools.product(*grid.values()):
            sizes = dict(zip(grid, values))
            with result.env:
                holds = domain.violated(sizes) is None
            tries += 1
            bad += grids.runs(m, feeds(**sizes)) != holds
        total, cases = total + bad, cases + (bad > 0)
        print(f"{name}: {bad} disagreement(s)")
    print(f"{total} disagreements of {tries} tries, in {cases} of {len(grids.CASES)} cases")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
