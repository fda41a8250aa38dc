"""An attack on the splits (onnxsym.facts.branching): random graphs of one to three Ifs and
Squeezes whose output rank the sizes decide (an If of ``(n + k-1)//k == 1`` over ``x`` [b, 4, n]
giving rank 2 or 3; a Squeeze without axes of ``w`` [4, m] or ``v`` [k, 1, 3]), each followed by a
node that takes one rank or either (a Transpose of a fixed rank, a Relu), several splits often on
one symbol. Held to onnxruntime at 40 sizes: a size the domain allows must run and give the written
dims, and the annotated model the original's outputs; a size onnxruntime runs must be in the
domain; a model onnxsym calls a contradiction must run at none of them.

    python -m tests.split_attack --count 300 --seed 0 [--show]
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

import onnxsym

SIZES = [{"b": b, "n": n, "m": m, "k": k} for b in (1, 2) for n in (1, 2, 4, 5, 8) for m in (1, 3) for k in (1, 2)]


def _const(name: str, v: int) -> onnx.NodeProto:
    return h.make_node("Constant", [], [name], value=h.make_tensor(name, T.INT64, [], [v]))


def _if_split(p: str, rng: random.Random) -> tuple[list[onnx.NodeProto], str, tuple[int, int]]:
    """``If((n + k-1)//k == 1, ReduceMean over axis 2, Identity)`` of ``x``: rank 2 or 3."""
    k = rng.choice([2, 4])
    then = h.make_graph([h.make_node("ReduceMean", ["x"], [p + "mean"], axes=[2], keepdims=0)], p + "then", [],
                        [h.make_empty_tensor_value_info(p + "mean")])
    other = h.make_graph([h.make_node("Identity", ["x"], [p + "same"])], p + "else", [],
                         [h.make_empty_tensor_value_info(p + "same")])
    nodes = [h.make_node("Shape", ["x"], [p + "shape"]), _const(p + "two", 2), _const(p + "km", k - 1),
             _const(p + "k", k), _const(p + "one", 1), h.make_node("Gather", [p + "shape", p + "two"], [p + "n"]),
             h.make_node("Add", [p + "n", p + "km"], [p + "n1"]), h.make_node("Div", [p + "n1", p + "k"], [p + "q"]),
             h.make_node("Equal", [p + "q", p + "one"], [p + "cond"]),
             h.make_node("If", [p + "cond"], [p + "y"], then_branch=then, else_branch=other)]
    return nodes, p + "y", (2, 3)


def random_model(rng: random.Random) -> onnx.ModelProto:
    inputs = [h.make_tensor_value_info("x", T.FLOAT, ["b", 4, "n"]), h.make_tensor_value_info("w", T.FLOAT, [4, "m"]),
              h.make_tensor_value_info("v", T.FLOAT, ["k", 1, 3])]
    nodes: list[onnx.NodeProto] = []
    outputs = []
    for i in range(rng.randint(1, 3)):
        p = f"s{i}_"
        kind = rng.choice(["if", "w", "v"])
        if kind == "if":
            made, y, ranks = _if_split(p, rng)
        else:
            made, y, ranks = [h.make_node("Squeeze", [kind], [p + "y"])], p + "y", (1, 2)
        then = rng.choice(["either", "either", "low", "high"])
        if then == "either":
            made.append(h.make_node("Relu", [y], [p + "z"]))
        else:
            rank = ranks[0] if then == "low" else ranks[1]
            made.append(h.make_node("Transpose", [y], [p + "z"], perm=list(reversed(range(rank)))))
        nodes += made
        outputs.append(p + "z")
    g = h.make_graph(nodes, "splits", inputs, [h.make_empty_tensor_value_info(o) for o in outputs])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8)


def _feeds(s: dict[str, int]) -> dict[str, np.ndarray]:
    return {"x": np.ones((s["b"], 4, s["n"]), np.float32), "w": np.ones((4, s["m"]), np.float32),
            "v": np.ones((s["k"], 1, 3), np.float32)}


def _session(model: onnx.ModelProto):
    import onnxruntime as ort
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _runs(session, feeds) -> list[np.ndarray] | None:
    try:
        return session.run(None, feeds)
    except Exception:  # noqa: BLE001  (a refusal at these sizes)
        return None


def judge(model: onnx.ModelProto, tally: Counter, show: bool) -> None:
    """Tally one model's answers against onnxruntime at every size of SIZES."""
    session = _session(model)
    try:
        result = onnxsym.infer(model)
        domain = result.domain()  # (conditions that leave a symbol no size are a contradiction too)
    except onnxsym.ShapeContradiction as exc:
        tally["contradictions"] += 1
        for s in SIZES:
            if _runs(session, _feeds(s)) is not None:
                tally["wrong"] += 1
                if show:
                    print(f"contradiction, but onnxruntime runs {s}: {exc}")
        return
    if result.symbols.ranges or any(c.op_type in ("If", "Squeeze") for c in result.constraints):
        tally["decided"] += 1
    try:
        written = _session(onnxsym.write_result(result))
    except Exception as exc:  # noqa: BLE001  (the written model refused where the model as given loads)
        tally["wrong"] += 1
        if show:
            print(f"the written model is refused at load: {exc}\n{onnx.printer.to_text(model.graph)}")
        return
    for s in SIZES:
        tally["tries"] += 1
        got = _runs(session, _feeds(s))
        allowed = domain.violated(s) is None
        if allowed != (got is not None):
            tally["too_wide" if allowed else "too_narrow"] += 1
            if show:
                print(f"{'too wide' if allowed else 'too narrow'} at {s}:\n{onnx.printer.to_text(model.graph)}")
            continue
        if got is None:
            continue
        again = written.run(None, _feeds(s))
        for o, a, b in zip(model.graph.output, got, again):
            shape = result.shape(o.name)
            dims = None if shape is None else tuple(int(onnxsym.dims.evaluate(d, s)) for d in shape)
            if a.shape != b.shape or not np.array_equal(a, b) or (dims is not None and dims != a.shape):
                tally["wrong"] += 1
                if show:
                    print(f"{o.name} at {s}: onnxruntime {a.shape}, written model {b.shape}, onnxsym {shape}")


def run(count: int, seed: int, show: bool = False) -> Counter:
    import onnxruntime as ort
    ort.set_default_logger_severity(4)
    tally: Counter = Counter()
    for k in range(seed, seed + count):
        tally["models"] += 1
        judge(random_model(random.Random(k)), tally, show)
    return tally


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--show", action="store_true", help="print each disagreement")
    args = p.parse_args(argv)
    tally = run(args.count, args.seed, args.show)
    for key in sorted(tally):
        print(f"{key}: {tally[key]}")
    return 1 if tally["wrong"] or tally["too_wide"] or tally["too_narrow"] else 0


if __name__ == "__main__":
    sys.exit(main())
