"""An attack on what the domain says of index data: random one-index-op models on a[n, 4]
(Gather on either axis, GatherElements, GatherND, ScatterND, ScatterElements) whose indices are
a constant, a size (``n - c`` from a Shape) or a graph input, the op alone or in an If's then
branch. onnxruntime runs each at n = 1..SIZES (in a child: a native crash is no verdict):

- constant or size indices: the domain's verdict at each n is onnxruntime's (a condition that
  holds at no size raises a contradiction, and onnxruntime then runs at no size); in a branch,
  every size runs with the branch not taken, and the branch's own conditions hold exactly
  where it runs taken;
- fed indices: the domain says the index range as data-dependent, naming the node, and
  refuses no size; onnxruntime runs in-range indices and refuses out-of-range ones.

    python -m tests.data_attack --count 200 --seed 0 [--show]
"""

from __future__ import annotations

import argparse
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

SIZES = 6
OPS = ("Gather0", "Gather1", "GatherElements0", "GatherElements1", "GatherND", "ScatterND", "ScatterElements0")
SOURCES = ("constant", "size", "fed")
F, I64 = T.FLOAT, T.INT64


def _c(name: str, a) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(a, np.int64), name)


def _index_shape(op: str) -> tuple[int, ...]:
    """The indices' shape (a constant one: it fits a[n, 4] at every n >= 1)."""
    return {"Gather0": (2,), "Gather1": (2,), "GatherElements0": (1, 4), "GatherElements1": (1, 2),
            "GatherND": (1, 2), "ScatterND": (1, 1), "ScatterElements0": (1, 4)}[op]


def random_model(rng: random.Random, op: str | None = None, source: str | None = None,
                 branch: bool | None = None):
    """(model, op, source, branch, fed index shape or None)."""
    op = op or rng.choice(OPS)
    source = source or rng.choice(SOURCES)
    branch = rng.random() < 0.4 if branch is None else branch
    shape = _index_shape(op)
    nodes, inits, inputs = [], [], [h.make_tensor_value_info("a", F, ["n", 4])]
    if source == "constant":
        inits.append(_c("i", rng.choices(range(-8, 9), k=int(np.prod(shape))) if shape else rng.randint(-8, 8)))
        inits[-1].dims[:] = shape
    elif source == "size":  # every element n - c: Shape(a)[0] less a constant, expanded to the shape
        c = rng.randint(-3, 9)
        inits += [_c("c", [c]), _c("sh", list(shape)), _c("z", [0]), _c("one", [1])]
        nodes += [h.make_node("Shape", ["a"], ["s"]), h.make_node("Slice", ["s", "z", "one"], ["s0"]),
                  h.make_node("Sub", ["s0", "c"], ["d"]), h.make_node("Expand", ["d", "sh"], ["i"])]
    else:
        inputs.append(h.make_tensor_value_info("i", I64, list(shape)))
    body = []
    name = op.rstrip("01")
    axis = {"attrs": {"axis": int(op[-1])}} if op[-1] in "01" else {"attrs": {}}
    ins = ["a", "i"]
    if name.startswith("Scatter"):
        inits.append(numpy_helper.from_array(np.ones(shape[:-1] + (4,) if name == "ScatterND" else shape,
                                                     np.float32), "u"))
        ins.append("u")
    body.append(h.make_node(name, ins, ["y"], name="idx", **axis["attrs"]))
    if branch:
        then = h.make_graph(body, "then", [], [h.make_empty_tensor_value_info("y")])
        other = h.make_graph([h.make_node("Identity", ["a"], ["e"])], "else", [], [h.make_empty_tensor_value_info("e")])
        nodes.append(h.make_node("If", ["cond"], ["out"], name="if", then_branch=then, else_branch=other))
        inputs.insert(0, h.make_tensor_value_info("cond", T.BOOL, []))
        output = "out"
    else:
        nodes += body
        output = "y"
    m = h.make_model(h.make_graph(nodes, "attack", inputs, [h.make_empty_tensor_value_info(output)], inits),
                     opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m, op, source, branch, (shape if source == "fed" else None)


def _runs(child, feeds, out: str) -> bool | None:
    from onnxsym.model.isolated import Crashed, Refused

    try:
        child.run(feeds, [out])
        return True
    except Refused:
        return False
    except Crashed:
        return None


def judge(m, source: str, branch: bool, fed) -> list[str]:
    """What the domain gets wrong about ``m`` against onnxruntime (empty: nothing)."""
    import onnxsym
    from onnxsym.errors import ShapeContradiction
    from onnxsym.model.isolated import Child

    out = m.graph.output[0].name
    try:
        domain = onnxsym.infer(m).domain()
        contradiction = None
    except ShapeContradiction as exc:
        domain, contradiction = None, str(exc)
    bad: list[str] = []
    with Child() as child:
        child.load(m.SerializeToString())
        for n in range(1, SIZES + 1):
            feeds: dict[str, np.ndarray] = {"a": np.ones((n, 4), np.float32)}
            if fed is not None:
                feeds["i"] = np.zeros(fed, np.int64)
            if branch:
                feeds["cond"] = np.array(True)
            taken = _runs(child, feeds, out)
            if taken is None:
                continue
            if contradiction is not None:
                if taken or branch:
                    bad.append(f"n={n}: a contradiction ({contradiction}), yet onnxruntime runs"
                               + (" (in a branch: it can be not taken)" if branch else ""))
                continue
            assert domain is not None
            sizes = {"n": n}
            if domain.violated(sizes) is not None and (taken or branch):
                bad.append(f"n={n}: the domain refuses it ({domain.violated(sizes).describe()}), onnxruntime runs")
            if fed is not None:
                said = domain.on_data()
                if not said or not all(src.node == "idx" for _, src in said):
                    bad.append(f"n={n}: fed indices, the domain says no data condition of node 'idx'")
                feeds["i"] = np.full(fed, 100, np.int64)
                if _runs(child, feeds, out) is not False:
                    bad.append(f"n={n}: onnxruntime runs indices of 100")
                if not taken:
                    bad.append(f"n={n}: onnxruntime refuses zero indices")
                continue
            own = [c for c in domain.conditions if c.when] if branch else list(domain.conditions)
            holds = all(c.holds(sizes) for c in own)
            if branch and taken is not holds:
                bad.append(f"n={n}: the branch's conditions {'hold' if holds else 'fail'}, onnxruntime "
                           f"{'runs' if taken else 'refuses'} it taken")
            if not branch and taken is not (domain.violated(sizes) is None):
                bad.append(f"n={n}: the domain {'allows' if domain.violated(sizes) is None else 'refuses'} it, "
                           f"onnxruntime {'runs' if taken else 'refuses'}")
            if branch:
                feeds["cond"] = np.array(False)
                if _runs(child, feeds, out) is False:
                    bad.append(f"n={n}: onnxruntime refuses the branch not taken")
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    failing = 0
    for k in range(args.count):
        m, op, source, branch, fed = random_model(rng)
        bad = judge(m, source, branch, fed)
        failing += bool(bad)
        if args.show or bad:
            print(f"#{k} {op} {source}{' in a branch' if branch else ''}: " + ("; ".join(bad) or "ok"), flush=True)
    print(f"models {args.count}, disagreeing {failing}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
