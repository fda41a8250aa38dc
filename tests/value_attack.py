"""An attack on ``annotate --value NAME=V`` and ``--dynamic``: random small models where a
scalar input's value (an int64 ``n``, a bool ``flag``) reaches shapes (a Reshape, Expand,
Range, Slice, Tile, ConstantOfShape, TopK, OneHot, Pad, an If it decides) on x[seq, 4]. Each is
annotated with one value given (and, for some, x's dims made symbols by ``dynamic`` from a
static declaration); the written model is run in onnxruntime beside the model as given, fed
other values of ``n``/``flag`` and other sizes of x: wherever the given model runs, the written
one must run and compute the same outputs (what ``--value`` writes holds for every value).

    python -m tests.value_attack --count 200 --seed 0 [--show]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

NS = (0, 1, 2, 3, 4, 6, 8)
SEQS = (1, 2, 3, 4, 8)
H = 4


class _Model:
    def __init__(self, rng: random.Random) -> None:
        self.rng, self.nodes, self.inits, self.k = rng, [], [], 0
        self.outputs: list[str] = []

    def name(self, stem: str) -> str:
        self.k += 1
        return f"{stem}{self.k}"

    def const(self, a) -> str:
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(h.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def n1(self) -> str:
        """n as a 1-D tensor [n]."""
        return self.node("Unsqueeze", ["n", self.const(np.array([0], np.int64))])

    # each use: a value of x and n (the output of some shape-reaching op)
    def reshape(self) -> str:
        shape = self.node("Concat", [self.const(np.array([-1], np.int64)), self.n1()], axis=0)
        return self.node("Reshape", ["x", shape])

    def expand(self) -> str:
        x1 = self.node("ReduceSum", ["x", self.const(np.array([1], np.int64))], keepdims=1)  # [seq, 1]
        shape = self.node("Concat", [self.const(np.array([1], np.int64)), self.n1()], axis=0)
        return self.node("Expand", [x1, shape])

    def range_(self) -> str:
        r = self.node("Range", [self.const(np.array(0, np.int64)), "n", self.const(np.array(1, np.int64))])
        f = self.node("Cast", [r], to=T.FLOAT)
        return self.node("Add", [self.node("Unsqueeze", [f, self.const(np.array([0], np.int64))]),
                                 self.node("ReduceSum", ["x", self.const(np.array([1], np.int64))], keepdims=1)])

    def slice_(self) -> str:
        ax = self.rng.choice([0, 1])
        return self.node("Slice", ["x", self.const(np.array([0], np.int64)), self.n1(), self.const(np.array([ax], np.int64))])

    def tile(self) -> str:
        reps = self.node("Concat", [self.n1(), self.const(np.array([1], np.int64))], axis=0)
        return self.node("Tile", ["x", reps])

    def constant_of_shape(self) -> str:
        c = self.node("ConstantOfShape", [self.node("Concat", [self.n1(), self.const(np.array([H], np.int64))], axis=0)],
                      value=numpy_helper.from_array(np.array([1.0], np.float32)))
        return self.node("Concat", ["x", c], axis=0)

    def topk(self) -> str:
        out = self.name("topk")
        self.nodes.append(h.make_node("TopK", ["x", self.n1()], [out, out + "_i"], name=out, axis=self.rng.choice([0, 1])))
        return out

    def one_hot(self) -> str:
        idx = self.node("Cast", [self.node("Shape", ["x"])], to=T.INT64)
        return self.node("OneHot", [idx, "n", self.const(np.array([0.0, 1.0], np.float32))])

    def pad(self) -> str:
        z = self.const(np.array([0, 0, 0], np.int64))
        pads = self.node("Concat", [self.n1(), z], axis=0)
        return self.node("Pad", ["x", pads])

    def if_(self) -> str:
        """flag: the then branch concatenates x with itself on axis 0, the else branch keeps x."""
        then = h.make_graph([h.make_node("Concat", ["x", "x"], ["t"], axis=0)], "then", [],
                            [h.make_tensor_value_info("t", T.FLOAT, None)])
        other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [],
                             [h.make_tensor_value_info("e", T.FLOAT, None)])
        self.uses_flag = True
        return self.node("If", ["flag"], then_branch=then, else_branch=other)

    def then_shape(self, v: str) -> str:
        """A use of a result's shape: a Reshape of x to it flattened (needs as many elements)."""
        return self.node("Add", [v, self.node("ReduceMean", [v], keepdims=1)])

    def model(self, static_x: bool) -> onnx.ModelProto:
        ins = [h.make_tensor_value_info("x", T.FLOAT, [4 if static_x else "seq", H]),
               h.make_tensor_value_info("n", T.INT64, [])]
        if getattr(self, "uses_flag", False):
            ins.append(h.make_tensor_value_info("flag", T.BOOL, []))
        g = h.make_graph(self.nodes, "g", ins, [h.make_tensor_value_info(o, T.FLOAT, None) for o in self.outputs],
                         self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
        m.ir_version = 8
        return m


USES = ["reshape", "expand", "range_", "slice_", "tile", "constant_of_shape", "topk", "one_hot", "pad", "if_"]


def random_model(rng: random.Random) -> tuple[onnx.ModelProto, dict, dict | None]:
    """(the model, the value given, the dynamic dims asked for or None)."""
    b = _Model(rng)
    for _ in range(rng.randint(1, 3)):
        v = getattr(b, rng.choice(USES))()
        if rng.random() < 0.3:
            v = b.then_shape(v)
        b.outputs.append(v)
    static_x = rng.random() < 0.3
    m = b.model(static_x)
    values = {"n": rng.choice([1, 2, 3, 4])}
    if getattr(b, "uses_flag", False):
        values["flag"] = rng.choice([True, False])
    if rng.random() < 0.3:
        del values["n"]
        values = values or {"n": 2}
    return m, values, {"x": {0: "seq"}} if static_x else None


def _relaxed(m: onnx.ModelProto) -> onnx.ModelProto:
    """The model as given with x's first dim a symbol (what ``dynamic`` asks it to run at)."""
    r = onnx.ModelProto()
    r.CopyFrom(m)
    d = r.graph.input[0].type.tensor_type.shape.dim[0]
    d.Clear()
    d.dim_param = "seq"
    return r


def _session(m: onnx.ModelProto):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL  # (it folds what the dims make static)
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _outputs(sess, feeds):
    try:
        return sess.run(None, feeds)
    except Exception as exc:
        return f"refused: {str(exc).splitlines()[0][:160]}"


def judge(m: onnx.ModelProto, values: dict, dynamic) -> dict:
    import onnxsym
    from onnxsym.errors import OnnxsymError

    try:
        written = onnxsym.annotate(m, values=values, dynamic=dynamic)
    except OnnxsymError as exc:  # (a pin refused, a contradiction: an answer, listed)
        return {"verdict": f"refused by onnxsym: {type(exc).__name__}", "error": str(exc)[:200]}
    except Exception as exc:
        return {"verdict": "onnxsym error", "error": f"{type(exc).__name__}: {exc}"[:300]}
    given = _relaxed(m) if dynamic else m
    out: dict = {"tries": 0, "differs": [], "written_refuses": []}
    try:
        a = _session(given)
    except Exception as exc:
        return {"verdict": "given model refused at load", "error": str(exc)[:200]}
    try:
        b = _session(written)
    except Exception as exc:
        return {"verdict": "disagrees", "written_refuses": [f"at load: {str(exc)[:200]}"], "tries": 1}
    rng = np.random.default_rng(0)
    flags = (True, False) if any(i.name == "flag" for i in m.graph.input) else (None,)
    for seq in SEQS if dynamic or m.graph.input[0].type.tensor_type.shape.dim[0].dim_param else (4,):
        x = rng.standard_normal((seq, H)).astype(np.float32)
        for n in NS:
            for flag in flags:
                feeds = {"x": x, "n": np.array(n, np.int64)}
                if flag is not None:
                    feeds["flag"] = np.array(flag)
                want = _outputs(a, feeds)
                if isinstance(want, str):
                    continue
                out["tries"] += 1
                got = _outputs(b, feeds)
                where = f"seq={seq} n={n}" + (f" flag={flag}" if flag is not None else "")
                if isinstance(got, str):
                    out["written_refuses"].append(f"{where}: {got}")
                elif any(w.shape != g.shape or not np.allclose(w, g, equal_nan=True) for w, g in zip(want, got)):
                    out["differs"].append(f"{where}: {[w.shape for w in want]} vs {[g.shape for g in got]}")
    out["verdict"] = "disagrees" if out["differs"] or out["written_refuses"] else "agrees"
    return out


def describe(m: onnx.ModelProto) -> str:
    return " ; ".join(n.op_type for n in m.graph.node)


def run(count: int, seed: int, show: bool = False) -> Counter:
    tally: Counter = Counter()
    for i in range(count):
        m, values, dynamic = random_model(random.Random(f"{seed}:{i}"))
        r = judge(m, values, dynamic)
        tally[r["verdict"]] += 1
        tally["tries"] += r.get("tries", 0)
        tally["written refuses"] += len(r.get("written_refuses", []))
        tally["outputs differ"] += len(r.get("differs", []))
        if show and r["verdict"] not in ("agrees",):
            print(f"[{seed}:{i}] {r['verdict']}: {describe(m)} values={values} dynamic={dynamic}")
            for t in (r.get("written_refuses", []) + r.get("differs", []))[:3]:
                print(f"    {t}")
            if "error" in r:
                print(f"    {r['error']}")
    return tally


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args(argv)
    tally = run(args.count, args.seed, args.show)
    for k, v in sorted(tally.items()):
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
