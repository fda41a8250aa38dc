"""An attack on sizes computed in float: random chains on x[1, 0, seq] (no elements, so a size
near 2**31 costs nothing) of Shape -> Cast to float16, float32 or float64 -> Mul, Div, Add, Sub
by float constants (a Cast between float types among them) -> Floor, Ceil, Round or none ->
Cast to int64 (or int32) -> the size used by a consumer: ConstantOfShape, Expand, Reshape,
Slice's end, Tile's repeat, Resize's sizes, a Range (elements: small sizes only), or Resize by
a float scale. onnxruntime runs each model at a grid of sizes (0..40, 2**k +- 1, around 1000,
2**11 and 2**24 where float16 and float32 lose integers, up to 2**31) in a child process (a
native crash is no verdict), and every written dim is compared with the run:

- a dim onnxsym gives (its own expression, evaluated, or a fresh symbol's range) that is not
  the run's: **wrong dim**; a written dim (annotate's text, parsed back) likewise;
- a size the domain refuses where onnxruntime runs: **too narrow** (a size past a bound onnxsym
  recorded as an assumption is tallied apart, with the bound); a size it allows where
  onnxruntime refuses: **too wide**; a contradiction (exit 2) where onnxruntime runs at some
  size: **false contradiction**.

    python -m tests.float_attack --count 300 --seed 0 [--show]

It also tallies why dims stay fresh (unknown, honestly): where each chain's elements were lost.
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

FLOATS = (T.FLOAT, T.FLOAT, T.FLOAT16, T.DOUBLE)
NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16, T.DOUBLE: np.float64}
CONSTS = (0.5, 1.5, 2.0, 3.0, 0.3, 0.7, 1 / 3, 10.0, 16.0, 160.0, 0.1, 2.5, 7.0, 0.25, 1.0, 0.0, -1.0, 64.0)
# every size run; those past SMALL only on consumers whose output has no elements
SMALL = 5000


def grid() -> list[int]:
    sizes = set(range(0, 41))
    for k in range(5, 32):
        sizes |= {2**k - 1, 2**k, 2**k + 1}
    sizes |= set(range(995, 1006)) | set(range(2045, 2052)) | {65503, 65504, 65505, 65519, 65520, 65521}
    sizes |= {2**24 - 3, 2**24 - 2, 2**24 + 2, 2**24 + 3, 2**24 + 5, 2**25 + 3, 10**7, 10**9}
    return sorted(v for v in sizes if v < 2**31)


class _Chain:
    def __init__(self, rng: random.Random) -> None:
        self.rng, self.nodes, self.inits, self.k = rng, [], [], 0
        self.outputs: list[str] = []
        self.small_only = False  # a consumer whose output has elements: small sizes only

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

    def size(self) -> str:
        """seq as an int64 [1], computed through a float type: the chain."""
        r = self.rng
        s = self.node("Shape", ["x"], start=2)
        ft = r.choice(FLOATS)
        v = self.node("Cast", [s], to=ft)
        for _ in range(r.randint(1, 3)):
            how = r.choice(["Mul", "Div", "Add", "Sub", "Mul", "Div", "cast", "rdiv"])
            if how == "cast":
                ft = r.choice(FLOATS)
                v = self.node("Cast", [v], to=ft)
                continue
            c = r.choice(CONSTS)
            if how in ("Div", "rdiv") and c == 0.0:
                c = 2.0
            cst = self.const(np.array([c], NP[ft]))
            v = self.node("Div", [cst, v]) if how == "rdiv" else self.node(how, [v, cst])
        rnd = r.choice(["Floor", "Ceil", "Round", None, "Floor"])
        if rnd:
            v = self.node(rnd, [v])
        it = r.choice([T.INT64, T.INT64, T.INT64, T.INT32])
        v = self.node("Cast", [v], to=it)
        if it == T.INT32:
            v = self.node("Cast", [v], to=T.INT64)
        if r.random() < 0.3:
            v = self.node(r.choice(["Add", "Sub"]), [v, self.const(np.array([r.randint(1, 5)], np.int64))])
        if r.random() < 0.2:
            v = self.node("Max", [v, self.const(np.array([r.randint(0, 3)], np.int64))])
        return v

    def shape3(self, k: str) -> str:
        return self.node("Concat", [self.const(np.array([1, 0], np.int64)), k], axis=0)

    # consumers: each an output
    def constant_of_shape(self) -> str:
        return self.node("ConstantOfShape", [self.shape3(self.size())])

    def expand(self) -> str:
        return self.node("Expand", [self.const(np.zeros((1, 0, 1), np.float32)), self.shape3(self.size())])

    def reshape(self) -> str:
        """k elements reshaped to [1, k] (a target with a 0 beside a computed size is refused at
        load: onnx's propagation reads the unknown as -1): small sizes only."""
        self.small_only = True
        k = self.size()
        flat = self.node("ConstantOfShape", [k])
        return self.node("Reshape", [flat, self.node("Concat", [self.const(np.array([1], np.int64)), k], axis=0)])

    def slice(self) -> str:
        return self.node("Slice", ["x", self.const(np.array([0], np.int64)), self.size(),
                                   self.const(np.array([2], np.int64))])

    def tile(self) -> str:
        return self.node("Tile", ["x", self.node("Concat", [self.const(np.array([1, 1], np.int64)), self.size()],
                                                 axis=0)])

    def resize_sizes(self) -> str:
        """Resize's size of the last axis only (axes=[2]: a size of 0 on axis 1 has no scale)."""
        return self.node("Resize", ["x", "", "", self.size()], axes=[2], mode=self.rng.choice(["nearest", "linear"]))

    def resize_scale(self) -> str:
        c = self.rng.choice([0.5, 2.0, 1.5, 0.75, 3.0, 0.3, 0.7, 1 / 3, 0.1, 1.25, 2.5])
        return self.node("Resize", ["x", "", self.const(np.array([c], np.float32))], axes=[2],
                         mode=self.rng.choice(["nearest", "linear"]))

    def range_(self) -> str:
        self.small_only = True
        k = self.node("Squeeze", [self.size(), self.const(np.array([0], np.int64))])
        return self.node("Range", [self.const(np.array(0, np.int64)), k, self.const(np.array(1, np.int64))])

    def model(self) -> onnx.ModelProto:
        g = h.make_graph(self.nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 0, "seq"])],
                         [h.make_empty_tensor_value_info(o) for o in self.outputs], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
        m.ir_version = 9
        return m


USES = ["constant_of_shape", "expand", "reshape", "slice", "tile", "resize_sizes", "resize_scale", "range_"]


def random_model(rng: random.Random) -> tuple[onnx.ModelProto, bool]:
    """(the model, whether it is run at small sizes only)."""
    c = _Chain(rng)
    for _ in range(rng.randint(1, 2)):
        c.outputs.append(getattr(c, rng.choice(USES))())
    return c.model(), c.small_only


def _level_shapes(m: onnx.ModelProto, sizes, level: str) -> dict[int, object]:
    from onnxsym.model.isolated import Child, Crashed, Refused

    names = [o.name for o in m.graph.output]
    got: dict[int, object] = {}
    with Child() as child:
        try:
            child.load(m.SerializeToString(), {"optimization": level})
        except (Refused, Crashed):
            return {}
        for v in sizes:
            try:
                got[v] = child.run({"x": np.zeros((1, 0, v), np.float32)}, names)
            except Refused as exc:
                got[v] = f"refused: {exc}"
            except Crashed:
                got[v] = "crashed"
    return got


def ort_shapes(m: onnx.ModelProto, sizes) -> dict[int, object]:
    """Each size's run, with every optimization and with none: a list of output shapes,
    "refused: ..." or "crashed", or "levels differ" where the optimizer changes the verdict or
    a shape (it rewrites Reshape(ConstantOfShape(k), [1, k]) to one that runs at k = 0, which
    the kernel refuses: the domain follows the kernel); {} where it refuses the model at load."""
    full, none = _level_shapes(m, sizes, "all"), _level_shapes(m, sizes, "disable_all")
    if not full or not none:
        return {}
    out: dict[int, object] = {}
    for v in sizes:
        a, b = full[v], none[v]
        same = a == b or (isinstance(a, str) and isinstance(b, str) and "crashed" not in (a, b))
        out[v] = a if same else "levels differ"
    return out


def _written(m: onnx.ModelProto) -> dict[str, list]:
    """annotate's written output dims (ints or texts)."""
    import onnxsym

    a = onnxsym.annotate(m, allow_zero=True)
    out = {}
    for o in a.graph.output:
        if o.type.tensor_type.HasField("shape"):
            out[o.name] = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in o.type.tensor_type.shape.dim]
    return out


def _parse(text, seq: int):
    from onnxsym.dims.text import parse_dim

    if isinstance(text, int):
        return text
    if not text:
        return None
    try:
        v = parse_dim(text, lambda n: {"seq": seq}[n])
    except KeyError:
        return None
    return v if isinstance(v, int) else None


def judge(m: onnx.ModelProto, small_only: bool) -> dict:
    import onnxsym
    from onnxsym import dims
    from onnxsym.errors import ShapeContradiction

    sizes = [v for v in grid() if not small_only or v <= SMALL]
    runs = ort_shapes(m, sizes)
    if not runs:
        return {"verdict": "refused at load"}
    ran = [v for v, r in runs.items() if isinstance(r, list)]
    out: dict = {"wrong": [], "narrow": [], "bound": [], "wide": [], "resource": [], "written_wrong": [],
                 "crashes": 0, "levels": 0, "junk": 0, "tries": 0}
    try:
        res = onnxsym.infer(m, allow_zero=True)
        domain = res.domain()
    except ShapeContradiction as exc:
        out["verdict"] = "false contradiction" if ran else "contradiction, never runs"
        out["error"] = str(exc)[:200]
        return out
    except Exception as exc:
        return {"verdict": "onnxsym error", "error": f"{type(exc).__name__}: {exc}"[:300]}
    try:
        written = _written(m)
    except Exception as exc:
        written = {}
        out["annotate_error"] = f"{type(exc).__name__}: {exc}"[:200]
    bounds = {str(c) for c in res.positive_assumptions()} if hasattr(res, "positive_assumptions") else set()
    names = [o.name for o in m.graph.output]
    for v, r in runs.items():
        out["tries"] += 1
        if r in ("crashed", "levels differ"):
            out["crashes" if r == "crashed" else "levels"] += 1
            continue
        bad = domain.violated({"seq": v})
        if isinstance(r, str):
            if bad is None and not domain.unstated:
                # (onnxruntime's cap on an allocation's bytes, even of no elements: no size condition)
                # (or of 2**63 elements, a Cast of inf to INT64_MIN less 5 wrapped around)
                limit = "exceeds the supported maximum" in r or "overflowed" in r
                out["resource" if limit else "wide"].append(v)
            continue
        if bad is not None:
            (out["bound"] if str(bad.describe()) in bounds or "assum" in bad.describe() else out["narrow"]).append(
                (v, bad.describe()))
            continue
        if any(a > 2**62 for shape in r if shape for a in shape):
            out["junk"] += 1  # (a Resize of no elements to a negative size gives 2**63 - 3: no size)
            continue
        for name, shape in zip(names, r):
            inferred = res.shape(name)
            if inferred is None or len(inferred) != len(shape):
                out["wrong"].append((v, name, inferred, shape))
                continue
            with res.env:
                for d, a in zip(inferred, shape):
                    if any(s.name in res.fresh for s in dims.free_symbols(d)):
                        lo, hi = dims.range_of(d)
                        ok = lo <= a <= hi
                    else:
                        ok = dims.evaluate(d, {"seq": v}) == a
                    if not ok:
                        out["wrong"].append((v, name, inferred, shape))
                        break
            w = written.get(name)
            if w is not None and (len(w) != len(shape) or any(
                    (x := _parse(t, v)) is not None and x != a for t, a in zip(w, shape))):
                out["written_wrong"].append((v, name, w, shape))
    fresh_dims = [d for o in names for d in (res.shape(o) or ()) if any(s.name in res.fresh for s in dims.free_symbols(d))]
    out["resolved"] = not fresh_dims
    out["fresh dims"] = len(fresh_dims)
    out["losses"] = losses(m, res) if fresh_dims else []
    kinds = [k for k in ("wrong", "written_wrong", "narrow", "wide") if out[k]]
    out["verdict"] = ", ".join(kinds) if kinds else ("agrees" if ran else "never runs, no contradiction")
    return out


def _kind(v) -> str:
    """One element as the tally names it: int, int.0 (an integral float), frac, n (a symbolic
    integer), q (a Quotient; q2 rounded twice), near (a Near), rounded, unknown."""
    from onnxsym import dims
    from onnxsym.semantics import floatops

    if isinstance(v, floatops.Quotient):
        return "q2" if v.twice else "q"
    if isinstance(v, floatops.Near):
        return "near"
    if isinstance(v, float):
        return "int.0" if v.is_integer() else "frac"
    if isinstance(v, dims.Expr):
        return "n"
    if isinstance(v, int):
        return "int"
    return "rounded" if isinstance(v, floatops.Rounded) else "unknown"


def losses(m: onnx.ModelProto, res) -> list[str]:
    """Why each chain's size stays a fresh symbol: the first node of it whose elements are not
    known though its inputs' are, as ``Op(kinds of its inputs' elements) type`` (a Cast names its
    target, a float16 Cast of an unbounded size reads ``Cast(n) float16``), or, where every input
    is known, the node that made the fresh symbol with its reason."""
    from onnxsym.inference.values import Tensor

    def elems(name: str):
        v = res.values.get(name)
        return v.value if isinstance(v, Tensor) else None

    out = []
    for n in m.graph.node:
        if n.op_type in ("Shape",) or not n.output:
            continue
        outv = res.values.get(n.output[0])
        ins = [i for i in n.input if i and i != "x"]
        if not ins or any(elems(i) is None for i in ins):
            continue
        if isinstance(outv, Tensor) and outv.value is None and outv.shape is not None and len(outv.shape) <= 1 \
                and n.op_type not in USE_OPS:
            kinds = "/".join(sorted({_kind(e) for i in ins for e in elems(i)}))
            out.append(f"{n.op_type}({kinds}) {T.DataType.Name(outv.dtype).lower()}")
    for p in res.fresh.values():
        node = next((n for n in m.graph.node if n.name == p.node), None)
        if node is not None and all(elems(i) is not None for i in node.input if i and i != "x") \
                and not p.reason.startswith("element 0 of a size computed in float"):
            out.append(f"{p.op_type}: {p.reason}")
    return out


# the consumers: their elements are never carried (their outputs have none)
USE_OPS = frozenset({"ConstantOfShape", "Expand", "Reshape", "Slice", "Tile", "Resize", "Range"})


def describe(m: onnx.ModelProto) -> str:
    consts = {t.name: numpy_helper.to_array(t).tolist() for t in m.graph.initializer}
    parts = []
    for n in m.graph.node:
        a = [f"{x.name}={h.get_attribute_value(x)}" for x in n.attribute if x.name in ("to", "mode", "start")]
        a += [str(consts[i]) for i in n.input if i in consts and np.size(consts[i]) <= 4]
        parts.append(n.op_type + (f"({', '.join(a)})" if a else ""))
    return " -> ".join(parts)


def run(count: int, seed: int, show: bool = False) -> Counter:
    """The verdicts and size counts, with why dims stay fresh: ``fresh dims`` (over every output),
    ``models with a fresh dim`` and ``lost at: PATTERN`` (models where a chain is lost there)."""
    tally: Counter = Counter()
    for i in range(count):
        m, small = random_model(random.Random(f"{seed}:{i}"))
        r = judge(m, small)
        tally[r["verdict"]] += 1
        tally["sizes tried"] += r.get("tries", 0)
        tally["models every dim resolved"] += bool(r.get("resolved"))
        tally["models with a fresh dim"] += bool(r.get("fresh dims"))
        tally["fresh dims"] += r.get("fresh dims", 0)
        for why in set(r.get("losses", ())):
            tally[f"lost at: {why}"] += 1
        for k in ("wrong", "written_wrong", "narrow", "wide", "bound", "resource"):
            tally[f"sizes {k}"] += len(r.get(k, []))
        tally["sizes crashed"] += r.get("crashes", 0)
        tally["sizes the optimizer changes"] += r.get("levels", 0)
        tally["sizes onnxruntime gives a dim past 2**62"] += r.get("junk", 0)
        if show and r["verdict"] not in ("agrees", "refused at load", "contradiction, never runs"):
            print(f"[{seed}:{i}] {r['verdict']}: {describe(m)}")
            for k in ("wrong", "written_wrong", "narrow", "wide"):
                if r.get(k):
                    print(f"    {k}: {r[k][:3]}")
            for k in ("error", "annotate_error"):
                if k in r:
                    print(f"    {k}: {r[k]}")
    return tally


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", action="store_true", help="print each model that disagrees")
    args = ap.parse_args(argv)
    for k, v in sorted(run(args.count, args.seed, args.show).items()):
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
