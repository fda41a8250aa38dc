"""An attack on pins: random small chains on x[1, 1, seq] (Slice, Pad, Conv and pool strides,
Reshape, Concat with constants, Resize by constant scales, Expand to a min or max of its
shape), whose result is then forced against a constant (a broadcast, an Expand or a Reshape to
it). onnxruntime runs each at every size 1..SIZES of seq (in a child: a native crash is no
verdict); where it runs at a few sizes only, a pin onnxsym states must be exactly those sizes,
and where it states none, the pin is missed. Where the domain leaves finitely many sizes, more
than a pin's few, they must be where onnxruntime runs (asked past the sweep's sizes too: a slice
from 1000 backwards runs at 6, 7, 22, 23, 1977, 1978, 1993 and 1994). The domain's verdict is
compared at every size too.

    python -m tests.pin_attack --count 300 --seed 0 [--show]
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

SIZES = 200
# a run at no size past this one: the sizes it runs at are taken as finitely many
FINITE_BELOW = 150


def _c(name: str, a) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(a), name)


class _Chain:
    def __init__(self, rng: random.Random) -> None:
        self.rng, self.nodes, self.inits, self.cur, self.k = rng, [], [], "x", 0
        self.opset = 18

    def name(self, stem: str) -> str:
        self.k += 1
        return f"{stem}{self.k}"

    def const(self, a) -> str:
        n = self.name("c")
        self.inits.append(_c(n, a))
        return n

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        out = self.name(op.lower())
        self.nodes.append(h.make_node(op, inputs, [out], name=out, **attrs))
        self.cur = out
        return out

    # each step: x[1, 1, L] -> x[1, 1, L']
    def slice(self) -> str:
        r = self.rng
        step = r.choice([1, 1, 1, 2, 3, -1])
        if step > 0:
            start, end = r.choice([0, 1, 2, 3, -3]), r.choice([1000, -1, -2, 7, 50, 2**62])
        else:
            start, end = r.choice([-1, -2, 1000]), r.choice([-1000, 0, 1])
        return self.node("Slice", [self.cur, self.const([start]), self.const([end]), self.const([2]), self.const([step])])

    def pad(self) -> str:
        r = self.rng
        a, b = r.choice([0, 1, 2, 3, -1]), r.choice([0, 1, 2, -1, -2])
        return self.node("Pad", [self.cur, self.const([0, 0, a, 0, 0, b])])

    def conv(self) -> str:
        r = self.rng
        k, s, d = r.randint(1, 4), r.randint(1, 3), r.choice([1, 1, 2])
        attrs = {"kernel_shape": [k], "strides": [s], "dilations": [d]}
        if r.random() < 0.25:
            attrs["auto_pad"] = r.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])
        else:
            attrs["pads"] = [r.randint(0, min(2, k - 1)), r.randint(0, min(2, k - 1))]
        return self.node("Conv", [self.cur, self.const(np.ones((1, 1, k), np.float32))], **attrs)

    def pool(self) -> str:
        r = self.rng
        op = r.choice(["MaxPool", "AveragePool", "LpPool"])
        k, s = r.randint(1, 4), r.randint(1, 3)
        attrs = {"kernel_shape": [k], "strides": [s]}
        if r.random() < 0.25:
            attrs["auto_pad"] = r.choice(["SAME_UPPER", "SAME_LOWER", "VALID"])
        else:
            attrs["pads"] = [r.randint(0, k - 1), r.randint(0, k - 1)]
        if op != "LpPool" and r.random() < 0.4:
            attrs["ceil_mode"] = 1
        return self.node(op, [self.cur], **attrs)

    def reshape(self) -> str:
        """[1, 1, L] -> [1, k, L/k] -> summed over k: L/k (L divisible by k)."""
        k = self.rng.choice([2, 3, 4])
        t = self.node("Reshape", [self.cur, self.const([1, k, -1])])
        return self.node("ReduceSum", [t, self.const([1])], keepdims=1)

    def concat(self) -> str:
        c = self.rng.randint(1, 5)
        return self.node("Concat", [self.cur, self.const(np.ones((1, 1, c), np.float32))], axis=2)

    def resize(self) -> str:
        scale = self.rng.choice([0.5, 2.0, 1.5, 0.75, 3.0, 0.3])
        mode = self.rng.choice(["nearest", "linear"])
        return self.node("Resize", [self.cur, "", self.const(np.array([1, 1, scale], np.float32))], mode=mode)

    def min_max(self) -> str:
        """Expand t to the Min (Max) of its shape and [1, 1, c]: runs where L <= c (L >= c) or L == 1."""
        op, c = self.rng.choice(["Min", "Max"]), self.rng.randint(2, 40)
        cur = self.cur
        sh = self.node("Shape", [cur])
        m = self.node(op, [sh, self.const(np.array([1, 1, c], np.int64))])
        return self.node("Expand", [cur, m])

    # forcing the result against a constant K
    def force(self) -> None:
        r = self.rng
        k = r.randint(1, 12)
        how = r.choice(["add", "add", "expand", "reshape", "concat1"])
        if how == "add":
            self.node("Add", [self.cur, self.const(np.ones((1, 1, k), np.float32))])
        elif how == "expand":
            self.node("Expand", [self.cur, self.const(np.array([1, 1, k], np.int64))])
        elif how == "reshape":
            self.node("Reshape", [self.cur, self.const(np.array([1, 1, k], np.int64))])
        else:
            self.node("Concat", [self.cur, self.const(np.ones((1, 1, k), np.float32))], axis=1)

    def model(self) -> onnx.ModelProto:
        self.nodes[-1].output[0] = "y"
        g = h.make_graph(self.nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 1, "seq"])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", self.opset)])
        m.ir_version = 8
        return m


STEPS = ["slice", "pad", "conv", "pool", "reshape", "concat", "resize", "min_max"]


def random_model(rng: random.Random) -> onnx.ModelProto:
    c = _Chain(rng)
    for _ in range(rng.randint(1, 3)):
        getattr(c, rng.choice(STEPS))()
    c.force()
    return c.model()


def ort_sizes(m: onnx.ModelProto, sizes, refusals: dict[int, str] | None = None
              ) -> tuple[list[int], list[int]] | None:
    """(the sizes onnxruntime runs at, those it crashes at), or None where it refuses the model at load;
    ``refusals`` (if given) gets the first line of onnxruntime's refusal at each size it refuses."""
    from onnxsym.model.isolated import Child, Crashed, Refused

    runs, crashes = [], []
    child = Child()
    try:
        try:
            child.load(m.SerializeToString(), {"optimization": "all"})
        except Refused:
            return None
        for v in sizes:
            try:
                child.run({"x": np.ones((1, 1, v), np.float32)}, ["y"])
                runs.append(v)
            except Crashed:
                crashes.append(v)
                child.close()
                child = Child()
                child.load(m.SerializeToString(), {"optimization": "all"})
            except Refused as exc:
                if refusals is not None:
                    refusals[v] = str(exc).splitlines()[0] if str(exc) else ""
    finally:
        child.close()
    return runs, crashes


def judge(m: onnx.ModelProto) -> dict:
    """What onnxruntime and onnxsym say of ``m``: the verdict and its details."""
    import onnxsym
    from onnxsym.domain.pins import FEW_SIZES, finite_sizes, pins_of
    from onnxsym.errors import ShapeContradiction

    refusals: dict[int, str] = {}
    got = ort_sizes(m, range(1, SIZES + 1), refusals)
    if got is None:
        return {"verdict": "refused at load"}
    runs, crashes = got
    try:
        res = onnxsym.infer(m)
        domain = res.domain()
        pins = [p for p in pins_of(res, domain) if p.symbol == "seq"]
    except ShapeContradiction as exc:  # (a model that runs at no size)
        verdict = "never runs, a contradiction" if not runs else "contradiction WRONG"
        return {"verdict": verdict, "error": str(exc)[:200], "runs": runs}
    except Exception as exc:  # (an inference error is an answer too: listed)
        return {"verdict": "onnxsym error", "error": f"{type(exc).__name__}: {exc}"[:200], "runs": runs}
    pin = pins[0].values if pins else None
    listed = finite_sizes("seq", domain)  # (every size the domain leaves, if finitely many: more than a pin's few too)
    if pin is None and listed is not None and any(v > SIZES for v in listed):
        # sizes past the sweep the domain allows: onnxruntime is asked there too
        extra = ort_sizes(m, [v for v in listed if v > SIZES])
        runs = runs + (extra[0] if extra else [])
    limited = [v for v, why in refusals.items() if _limit(why)]
    # (a size refused for onnxruntime's allocation cap is no verdict on the sizes: shape-pin attack
    # 3:36's x[seq] tiled to 3*seq**4 runs at 1..137 and passes the cap from 138 on, no finite set)
    finite = not any(v >= FINITE_BELOW for v in runs + limited if v <= SIZES)
    wide = [v for v in range(1, SIZES + 1) if v not in runs and v not in crashes and v not in limited
            and domain.violated({"seq": v}) is None]
    narrow = [v for v in runs if domain.violated({"seq": v}) is not None]
    out = {"runs": runs, "pin": pin, "too_wide": wide, "too_narrow": narrow, "crashes": crashes,
           "unstated": len(domain.unstated), "uncovered": _uncovered(m, res, domain, wide, refusals),
           "limited": limited}
    if pin is not None:
        beyond = [v for v in pin if v > SIZES]
        if beyond:
            extra = ort_sizes(m, beyond)
            runs = runs + (extra[0] if extra else [])
        out["verdict"] = "pin right" if sorted(pin) == sorted(runs) else "pin WRONG"
    elif not runs:
        _never_runs(m, res, domain, out, refusals)
    elif listed is not None and len(listed) > FEW_SIZES:
        # the domain's finite set must be where onnxruntime runs, past the sweep's sizes too
        right = sorted(listed) == sorted(runs)
        out["verdict"] = "finite, more than a few (listed)" if right else "finite, more than a few, WRONG"
    elif finite and len(runs) <= FEW_SIZES:
        out["verdict"] = "pin MISSED"
    elif finite:
        out["verdict"] = "finite, more than a few (not listed)"
    else:
        out["verdict"] = "not pinned"
    return out


# Sizes past the sweep at which the domain of a model onnxruntime runs at no swept size is asked
# (a Slice from -3 to 1000 leaves nothing from 1003 on, where a Reshape of its -1 then runs)
PAST_SWEEP = range(SIZES + 1, 5001)
# (and onnxruntime at the first few of them it allows)
PAST_ASKED = 4


def _never_runs(m: onnx.ModelProto, res, domain, out: dict, refusals: dict[int, str]) -> None:
    """The verdict on a model onnxruntime runs at no size of the sweep, sorted by what the domain says:
    (a) its stated conditions exclude every size tried (no contradiction raised: the forms could not
    prove it empty); (b) it allows some, each refused where a not-stated line says it may be (honest);
    (c) it allows some refused elsewhere: too wide. Sizes past the sweep the domain allows are asked
    of onnxruntime too: where it runs there, the model is no "never runs"."""
    past = [v for v in PAST_SWEEP if domain.violated({"seq": v}) is None][:PAST_ASKED]
    if past:
        got = ort_sizes(m, past, refusals)
        ran, crashed = got if got else ([], [])
        out["past_sweep"] = past
        out["too_wide"] = out["too_wide"] + [v for v in past if v not in ran and v not in crashed
                                             and not _limit(refusals.get(v, ""))]
        out["uncovered"] = _uncovered(m, res, domain, out["too_wide"], refusals)
        if ran:
            out["runs"] = ran
            out["verdict"] = "runs past the sweep only"
            return
    if not out["too_wide"]:
        out["verdict"] = "never runs, (a) the stated conditions exclude every size tried"
    elif not out["uncovered"]:
        out["verdict"] = "never runs, (b) each size allowed fails where a not-stated line says"
    else:
        out["verdict"] = "never runs, (c) too wide, WRONG"


def _limit(why: str) -> bool:
    """Whether onnxruntime refused for a cap of its own on an allocation's bytes (a Tile past 4 GiB),
    not for the sizes: no condition of the domain's."""
    return "exceeds the supported maximum" in why or "overflowed" in why


def _uncovered(m: onnx.ModelProto, res, domain, wide: list[int], refusals: dict[int, str]) -> list[int]:
    """The sizes of ``wide`` (the domain allows them, onnxruntime refuses) at which onnxruntime's
    refusal is at a node no not-stated line of the domain covers (:func:`covered_nodes`)."""
    said = covered_nodes(m, res, domain)
    return [v for v in wide if refused_at(refusals.get(v, "")) not in said]


def refused_at(why: str) -> str | None:
    """The node onnxruntime names in a refusal, or None."""
    import re

    at = re.search(r"Name:'([^']*)'", why)
    return None if at is None else at.group(1)


def covered_nodes(m: onnx.ModelProto, res, domain) -> set[str]:
    """The nodes a not-stated line of the domain covers: one it names, or one computing with a dim
    onnxsym could not resolve that such a line names, downstream of the node that made it (a Pad
    of a dim that a later Reshape's need, said not stated, solves: where that need fails, the Pad
    may fail first). A not-stated line says the sizes stated may include some where *its* node
    fails, not any node."""
    import re

    said = {src.node for _, src in domain.unstated}
    texts = " ".join(text for text, _ in domain.unstated)
    makers = {p.node for f, p in res.fresh.items() if re.search(rf"\b{re.escape(f)}\b", texts)}
    tainted: set[str] = set()
    for node in m.graph.node:  # (in topological order, as onnx requires)
        if node.name in makers or tainted.intersection(node.input):
            tainted.update(node.output)
            said.add(node.name)
    return said


def domain_bad(r: dict) -> tuple[bool, bool]:
    """(whether the domain disagrees with onnxruntime on ``r``, whether that is excused): a size it
    allows that onnxruntime refuses is excused only where onnxruntime's refusal is at a node a
    not-stated line names; a size it refuses that onnxruntime runs never is."""
    wide, narrow = bool(r.get("too_wide")), bool(r.get("too_narrow"))
    if not (wide or narrow):
        return False, False
    if not narrow and r.get("unstated") and not r.get("uncovered"):
        return False, True
    return True, False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", action="store_true", help="print each model that disagrees")
    args = ap.parse_args(argv)
    tally: Counter = Counter()
    bad_models = unstated_bad = 0
    for i in range(args.count):
        rng = random.Random(f"{args.seed}:{i}")
        m = random_model(rng)
        r = judge(m)
        tally[r["verdict"]] += 1
        bad, excused = domain_bad(r)  # (excused: at a node a not-stated line names)
        unstated_bad += excused
        bad_models += bad
        if args.show and (r["verdict"] in ("pin WRONG", "pin MISSED", "onnxsym error", "contradiction WRONG",
                                           "finite, more than a few, WRONG", "finite, more than a few (not listed)")
                          or r["verdict"].startswith("never runs, (") or bad):
            ops = " -> ".join(f"{n.op_type}{_attrs(n, m)}" for n in m.graph.node)
            print(f"[{args.seed}:{i}] {r['verdict']}: {ops}")
            print(f"    runs {r.get('runs')[:12] if r.get('runs') else r.get('runs')} pin {r.get('pin')} "
                  f"wide {r.get('too_wide', [])[:8]} narrow {r.get('too_narrow', [])[:8]} {r.get('error', '')}")
    for k, v in sorted(tally.items()):
        print(f"{k}: {v}")
    print(f"domain disagreements (models): {bad_models}")
    print(f"domain disagreements where a condition is said not stated (models): {unstated_bad}")
    return 0


def _attrs(node, m) -> str:
    consts = {t.name: numpy_helper.to_array(t).tolist() for t in m.graph.initializer}
    parts = [f"{a.name}={h.get_attribute_value(a)}" for a in node.attribute]
    parts += [str(consts[i]) for i in node.input[1:] if i in consts and np.size(consts[i]) <= 6]
    return f"({', '.join(map(str, parts))})" if parts else ""


if __name__ == "__main__":
    sys.exit(main())
