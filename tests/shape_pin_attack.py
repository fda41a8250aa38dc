"""Pins through computed shapes, which tests/pin_attack.py's chains do not make: on x[1, 1, seq],
a size read with Shape and computed on (less or times a constant, a quotient, in float and
rounded) becomes a Tile's repeat, a Slice's end on a constant, a Range's length, a
ConstantOfShape's size, or a Reshape to a constant product is asked of the input; the result is
forced against a constant (pin_attack's broadcast, Expand, Reshape or Concat). The verdicts are
pin_attack's (onnxruntime at every size 1..200, in a child; a pin onnxsym states must be
exactly where it runs; a run at few sizes with no pin is a missed pin; the domain's verdict
held at every size).

    python -m tests.shape_pin_attack --count 300 --seed 0 [--show]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter

import numpy as np
from onnx import TensorProto as T

try:  # (under pytest its siblings are top-level modules; run as python -m tests.NAME, in tests)
    from pin_attack import _Chain, domain_bad, judge
except ImportError:
    from tests.pin_attack import _Chain, domain_bad, judge


class _Shaped(_Chain):
    def size(self) -> str:
        """L (the last dim of the current value) computed on: an int64 [1]."""
        r = self.rng
        s = self.node("Shape", [self.cur], start=2)
        how = r.choice(["sub", "mul", "div", "float", "add"])
        c = r.randint(1, 5)
        if how == "sub":
            v = self.node("Sub", [s, self.const(np.array([c], np.int64))])
        elif how == "add":
            v = self.node("Add", [s, self.const(np.array([c], np.int64))])
        elif how == "mul":
            v = self.node("Mul", [s, self.const(np.array([c], np.int64))])
        elif how == "div":
            v = self.node("Div", [s, self.const(np.array([c + 1], np.int64))])
        else:
            f = self.node("Cast", [s], to=T.FLOAT)
            f = self.node(r.choice(["Mul", "Div"]), [f, self.const(np.array([r.choice([0.5, 1.5, 3.0, 0.3])],
                                                                           np.float32))])
            v = self.node("Cast", [self.node(r.choice(["Floor", "Ceil", "Round"]), [f])], to=T.INT64)
        return v

    def _last(self, k: str) -> str:
        return self.node("Concat", [self.const(np.array([1, 1], np.int64)), k], axis=0)

    def tile(self) -> str:
        cur = self.cur
        reps = self._last(self.size())
        self.cur = cur
        return self.node("Tile", [cur, reps])

    def slice_end(self) -> str:
        """A constant [1, 1, C] sliced to the computed end: min(max(end, 0), C) (negative: from the back)."""
        end = self.size()
        base = self.const(np.ones((1, 1, self.rng.randint(4, 30)), np.float32))
        return self.node("Slice", [base, self.const(np.array([0], np.int64)), end, self.const(np.array([2], np.int64))])

    def range_len(self) -> str:
        d = self.rng.choice([1, 2, 3])
        lim = self.node("Squeeze", [self.size(), self.const(np.array([0], np.int64))])
        rg = self.node("Range", [self.const(np.array(0, np.int64)), lim, self.const(np.array(d, np.int64))])
        f = self.node("Cast", [rg], to=T.FLOAT)
        return self.node("Unsqueeze", [f, self.const(np.array([0, 1], np.int64))])

    def constant_of_shape(self) -> str:
        return self.node("ConstantOfShape", [self._last(self.size())])

    def reshape_product(self) -> str:
        """[1, 1, L] to [1, L/K, K] (L a multiple of K), K summed away and back to [1, 1, L/K]."""
        k = self.rng.choice([2, 3, 4, 6])
        t = self.node("Reshape", [self.cur, self.const(np.array([1, -1, k], np.int64))])
        t = self.node("ReduceSum", [t, self.const(np.array([2], np.int64))], keepdims=1)
        return self.node("Transpose", [t], perm=[0, 2, 1])


STEPS = ["tile", "slice_end", "range_len", "constant_of_shape", "reshape_product"]
OLD_STEPS = ["slice", "pad", "resize", "concat"]


def random_model(rng: random.Random):
    c = _Shaped(rng)
    for _ in range(rng.randint(1, 3)):
        getattr(c, rng.choice(STEPS + STEPS + OLD_STEPS))()
    c.force()
    return c.model()


BAD = ("pin WRONG", "pin MISSED", "onnxsym error", "contradiction WRONG", "finite, more than a few, WRONG",
       "never runs, (c) too wide, WRONG")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", action="store_true", help="print each model that disagrees")
    args = ap.parse_args(argv)
    tally: Counter = Counter()
    for i in range(args.count):
        m = random_model(random.Random(f"{args.seed}:{i}"))
        r = judge(m)
        if r.get("unstated") and not r.get("uncovered") and r["verdict"] in ("pin MISSED",
                                                                             "finite, more than a few (not listed)"):
            # (a dim onnxsym could not resolve, said of each node onnxruntime refuses at: honest)
            r["verdict"] += ", a condition said not stated"
        tally[r["verdict"]] += 1
        bad, excused = domain_bad(r)  # (excused: onnxruntime refuses at a node a not-stated line names)
        tally["domain disagreements where a condition is not stated"] += excused
        tally["domain disagreements"] += bad
        never = r["verdict"].startswith("never runs, (")  # (each examined: --show lists them)
        if args.show and (r["verdict"] in BAD or bad or never):
            print(f"[{args.seed}:{i}] {r['verdict']}: {' -> '.join(n.op_type for n in m.graph.node)}")
            print(f"    runs {(r.get('runs') or [])[:12]} pin {r.get('pin')} wide {r.get('too_wide', [])[:8]} "
                  f"uncovered {r.get('uncovered', [])[:8]} narrow {r.get('too_narrow', [])[:8]} {r.get('error', '')}")
    for k, v in sorted(tally.items()):
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
