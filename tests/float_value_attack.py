"""value_attack's check (``annotate --value n=V``: the written model computes what the given one
does for every feed of n and every size of x) on float-computed sizes: each use of n reads it
through Cast to float16, float32 or float64, a Mul, Div, Add or Sub by a float constant, a Floor,
Ceil, Round or none, and a Cast back to int64 (max(., 0) where a use needs a size), as an
exporter's ``math.floor(n * 1.5)`` does, before a Reshape, Expand, Range, Slice, Tile,
ConstantOfShape, TopK, OneHot or Pad.

    python -m tests.float_value_attack --count 200 --seed 0 [--show]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter

import numpy as np
from onnx import TensorProto as T

try:  # (under pytest its siblings are top-level modules; run as python -m tests.NAME, in tests)
    from value_attack import SEQS, USES, _Model, _outputs, _relaxed, _session, describe, judge
except ImportError:
    from tests.value_attack import SEQS, USES, _Model, _outputs, _relaxed, _session, describe, judge

FLOATS = {T.FLOAT: np.float32, T.FLOAT16: np.float16, T.DOUBLE: np.float64}


class _FloatModel(_Model):
    def n1(self) -> str:
        r = self.rng
        ft = r.choice(list(FLOATS))
        v = self.node("Cast", ["n"], to=ft)
        for _ in range(r.randint(1, 2)):
            op, c = r.choice(["Mul", "Div", "Add", "Sub"]), r.choice([0.5, 1.5, 2.0, 3.0, 0.3, 0.25, 1 / 3, 2.5])
            v = self.node(op, [v, self.const(np.array(c, FLOATS[ft]))])
        rnd = r.choice(["Floor", "Ceil", "Round", None])
        if rnd:
            v = self.node(rnd, [v])
        v = self.node("Cast", [v], to=T.INT64)
        v = self.node("Max", [v, self.const(np.array(0, np.int64))])
        return self.node("Unsqueeze", [v, self.const(np.array([0], np.int64))])


def random_model(rng: random.Random):
    b = _FloatModel(rng)
    for _ in range(rng.randint(1, 2)):
        use = rng.choice([u for u in USES if u not in ("if_", "one_hot", "range_")])
        v = getattr(b, use)()
        b.outputs.append(v)
    static_x = rng.random() < 0.3
    values = {"n": rng.choice([1, 2, 3, 4, 6])}
    return b.model(static_x), values, {"x": {0: "seq"}} if static_x else None


def _runs_at_the_value(m, values, dynamic) -> bool:
    """Whether onnxruntime runs the given model at the given value at some size of x."""
    sess = _session(_relaxed(m) if dynamic else m)
    seqs = SEQS if dynamic or m.graph.input[0].type.tensor_type.shape.dim[0].dim_param else (4,)
    return any(not isinstance(_outputs(sess, {"x": np.ones((seq, 4), np.float32), "n": np.array(values["n"], np.int64)}),
                              str) for seq in seqs)


def run(count: int, seed: int, show: bool = False) -> Counter:
    tally: Counter = Counter()
    for i in range(count):
        m, values, dynamic = random_model(random.Random(f"{seed}:{i}"))
        r = judge(m, values, dynamic)
        if r["verdict"].startswith("refused by onnxsym") and _runs_at_the_value(m, values, dynamic):
            r["verdict"] = "refused by onnxsym, WRONG: onnxruntime runs at the value"
        tally[r["verdict"]] += 1
        tally["tries"] += r.get("tries", 0)
        tally["written refuses"] += len(r.get("written_refuses", []))
        tally["outputs differ"] += len(r.get("differs", []))
        if show and r["verdict"] != "agrees":
            print(f"[{seed}:{i}] {r['verdict']}: {describe(m)} values={values} dynamic={dynamic}")
            for t in (r.get("written_refuses", []) + r.get("differs", []))[:3]:
                print(f"    {t}")
            if "error" in r:
                print(f"    {r['error']}")
    return tally


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args(argv)
    for k, v in sorted(run(args.count, args.seed, args.show).items()):
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
