"""onnx's own node suite as the oracle (issue 34): every backend node case with each
graph-input dim turned into a symbol, held against onnxruntime.

(a) written dims: onnxsym's output expressions at the case's input sizes against the
    shapes onnxruntime computes on the case's inputs;
(b) the domain: on cases with floating-point inputs, one symbol at a time moved to
    1, 2, 3, its own + 1 and twice its own; onnxsym's domain says valid or not, onnxruntime
    runs or refuses. Integer, string and bool inputs (indices, counts, axes, masks) keep
    the case's values as initializers, so they stay meaningful; only the float inputs' dims
    move. A disagreement either way is a bug: too wide (the domain allows, onnxruntime
    refuses) or too narrow (the domain refuses, onnxruntime runs); a run the domain allows
    with other shapes than the inferred ones is a wrong dim at a moved size. Float inputs
    that are data rather than sizes (Dropout's ratio, OneHot's depth: ``KEEP_DATA``; Resize's
    roi and scales and Upsample's scales, in both halves: ``DATA``; each with its reason) keep
    their case values too.

``python -m tests.conformance [--ops A,B] [--out docs/conformance.md] [--jobs 2]`` writes the
per-op report. ``KNOWN`` lists the ops still disagreeing, each with the issue it belongs to.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import numpy_helper

# The ops still disagreeing, with where they are fixed (the sweep passes with these left out).
KNOWN = {
}
# Float inputs that are data, not sizes: the case's values are kept (as initializers, like the
# integer inputs), since a random normal value is no such datum; each with the reason.
KEEP_DATA = {
    "Dropout": {1: "ratio: onnxruntime refuses one outside [0, 1) at every size (the rule says so of a constant)"},
    "OneHot": {1: "depth: a count (onnxruntime refuses one below 1 at every size; the rule says so of a constant)"},
}


# Float inputs whose values, not their sizes only, decide whether onnxruntime runs: at a moved
# size they hold the case's values (repeated to fill the shape), not random ones.
VALUED = {
    # onnxruntime refuses an iou_threshold outside [0, 1] whatever the sizes
    "NonMaxSuppression": (3, 4),
}


# Inputs that are data rather than sizes to move, per op (by the node's input positions): kept at
# the case's values as initializers in both halves. Resize's roi and scales and Upsample's scales
# are floats, but random ones (of either sign) are refused whatever the sizes; a scales or roi of
# another length is refused too (a condition on a graph input's length the rules state, tested in
# tests/test_resample_ort.py). Resize's int64 sizes too in (a): onnxruntime refuses at load a sizes
# input whose length is a symbol.
DATA = {"Resize": (1, 2, 3), "Upsample": (1,)}


def _data_inputs(model: onnx.ModelProto, feeds) -> set[str]:
    node = model.graph.node[0]
    if len(model.graph.node) != 1 or node.op_type not in DATA:
        return set()
    return {node.input[i] for i in DATA[node.op_type] if i < len(node.input) and node.input[i] in feeds}


def known(op: str) -> str | None:
    """Why ``op``'s cases may still disagree, or None (a function body's case, several nodes named
    by their sorted op types, is held to onnxruntime like a one-op case)."""
    return KNOWN.get(op)


MOVES = ("1", "2", "3", "own+1", "2*own")


@dataclass
class Outcome:
    case: str
    op: str
    skipped: str | None = None  # the reason the case is left out (of both halves)
    wrong: list[str] = field(default_factory=list)  # (a): dims that differ from onnxruntime's
    unknown: int = 0  # (a): output dims left unknown (a fresh symbol: honest, not wrong)
    domain_skipped: str | None = None  # why (b) is left out
    tries: int = 0
    too_wide: list[str] = field(default_factory=list)
    too_narrow: list[str] = field(default_factory=list)
    moved_wrong: list[str] = field(default_factory=list)


def cases(ops: set[str] | None = None):
    """(case name, op type) of the backend node cases, in a fixed order."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = []
        for c in collect_testcases():
            op = c.model.graph.node[0].op_type if len(c.model.graph.node) == 1 else "+".join(
                sorted({n.op_type for n in c.model.graph.node}))
            if ops is None or op in ops:
                out.append((c.name, op))
    return sorted(out)


_CACHE: dict[str, object] = {}


def _case(name: str):
    if not _CACHE:
        from onnx.backend.test.case.node import collect_testcases

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _CACHE.update({c.name: c for c in collect_testcases()})
    return _CACHE[name]


def _sym(text: str) -> str:
    return re.sub(r"\W", "_", text)


def _is_float(dtype) -> bool:
    return np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.complexfloating)


def symbolized(model: onnx.ModelProto, feeds: dict[str, np.ndarray], keep: set[str] = frozenset()):
    """A copy of ``model`` with every tensor input's dims named ``<input>_<axis>`` (the ones in
    ``keep`` become initializers holding their case values instead); the binding of the names."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    binding = {}
    inputs = []
    for inp in m.graph.input:
        if inp.name in keep:
            m.graph.initializer.append(numpy_helper.from_array(feeds[inp.name], inp.name))
            continue
        inputs.append(inp)
        if not inp.type.HasField("tensor_type") or inp.name not in feeds:
            continue
        shape = np.shape(feeds[inp.name])
        tt = inp.type.tensor_type
        tt.ClearField("shape")
        for i, n in enumerate(shape):
            s = f"{_sym(inp.name)}_{i}"
            tt.shape.dim.add().dim_param = s
            binding[s] = int(n)
    del m.graph.input[:]
    m.graph.input.extend(inputs)
    return m, binding


def _session(m: onnx.ModelProto):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _run(m, feeds):
    """(onnxruntime's error or None, the output shapes)."""
    try:
        sess = _session(m)
    except Exception as exc:
        return f"load: {_first(exc)}", None
    try:
        outs = sess.run(None, feeds)
    except Exception as exc:
        return _first(exc), None
    return None, {o.name: _shape(a) for o, a in zip(sess.get_outputs(), outs)}


def _shape(a):
    if isinstance(a, list):
        return [tuple(np.shape(x)) for x in a]
    return None if a is None else tuple(np.shape(a))


def _first(exc) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _expected(result, name, binding):
    """The output's dims at ``binding`` (None for a dim over a fresh symbol), or None."""
    from onnxsym import Sequence, dims

    v = result.values.get(name) if hasattr(result, "values") else None
    if isinstance(v, Sequence):
        return None
    shape = result.shape(name)
    if shape is None:
        return None
    out = []
    for d in shape:
        try:
            out.append(dims.evaluate(d, binding))
        except Exception:
            out.append(None)
    return out


def _compare(result, real, binding, where):
    """(wrong texts, unknown count) of the outputs against onnxruntime's shapes."""
    wrong, unknown = [], 0
    for o in result.model.graph.output:
        got = real.get(o.name)
        if not isinstance(got, tuple):
            continue
        exp = _expected(result, o.name, binding)
        if exp is None:
            unknown += 1
            continue
        if len(exp) != len(got) or any(e is not None and e != g for e, g in zip(exp, got)):
            wrong.append(f"{where}: {o.name} inferred {exp}, onnxruntime {list(got)}")
        unknown += sum(e is None for e in exp)
    return wrong, unknown


def _valid(result, domain, binding):
    """None when onnxsym's domain (ranges and conditions) allows ``binding``, else why not."""
    from tests.domain_boundary import with_derived

    b = with_derived(result, binding)
    for n, (lo, hi) in domain.ranges.items():
        if n in b and not lo <= b[n] <= hi:
            return f"{n} = {b[n]} outside [{lo}, {hi}]"
    bad = domain.violated(b)
    return None if bad is None else bad.text


# The seed of the random floats fed at moved sizes (--seed: other draws of the same sweep).
SEED = 0


def _moved(feeds, inp_shapes, binding, valued=frozenset()):
    rng = np.random.default_rng(SEED)
    out = {}
    for name, a in feeds.items():
        shape = [binding[s] for s in inp_shapes[name]]
        if name in valued:
            out[name] = np.resize(a, shape)
        elif a.dtype == np.bool_:
            out[name] = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            out[name] = rng.standard_normal(shape).astype(a.dtype) if not np.issubdtype(a.dtype, np.complexfloating) \
                else (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(a.dtype)
    return out


def _zeros(binding):
    """The symbols the case sizes 0 (a symbol is >= 1 unless allowed 0)."""
    return [s for s, v in binding.items() if v == 0]


def check_case(name: str) -> Outcome:
    import onnxsym

    case = _case(name)
    model = case.model
    op = model.graph.node[0].op_type if len(model.graph.node) == 1 else "+".join(sorted({n.op_type for n in model.graph.node}))
    out = Outcome(name, op)
    if not case.data_sets:
        out.skipped = "no data set"
        return out
    inputs, _ = case.data_sets[0]
    names = [i.name for i in model.graph.input]
    # (some cases store their inputs as TensorProtos: bfloat16, float8, int4 and the like)
    inputs = [numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v for v in inputs]
    feeds = dict(zip(names, inputs))
    if any(isinstance(v, list) or v is None for v in feeds.values()) or len(inputs) != len(names):
        out.skipped = "a sequence, optional or missing input (no tensor dims to name)"
        return out
    feeds = {k: np.asarray(v) for k, v in feeds.items()}
    # (a) written dims
    data = _data_inputs(model, feeds)
    m, binding = symbolized(model, feeds, keep=data)
    err, real = _run(m, {k: v for k, v in feeds.items() if k not in data})
    if err is not None:
        out.skipped = f"onnxruntime cannot run it: {err}"
        return out
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = onnxsym.infer(m, allow_zero=_zeros(binding))
    except Exception as exc:
        out.skipped = f"onnxsym: {_first(exc)}"
        return out
    out.wrong, out.unknown = _compare(result, real, binding, "case inputs")
    # (b) the domain
    data |= {names[i] for i in KEEP_DATA.get(op, {}) if i < len(names)}
    floats = {k for k, v in feeds.items() if (_is_float(v.dtype) or v.dtype == np.bool_) and k not in data}
    if not any(_is_float(feeds[k].dtype) for k in floats):
        out.domain_skipped = "no floating-point input"
        return out
    kept = set(feeds) - floats
    m, binding = symbolized(model, feeds, keep=kept)
    moving = {k: v for k, v in feeds.items() if k in floats}  # (in input order: the random draws repeat)
    valued = {model.graph.node[0].input[i] for i in VALUED.get(op, ()) if i < len(model.graph.node[0].input)}
    shapes = {i.name: [d.dim_param for d in i.type.tensor_type.shape.dim] for i in m.graph.input}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = onnxsym.infer(m, allow_zero=_zeros(binding))
            domain = result.domain()
    except Exception as exc:
        out.domain_skipped = f"onnxsym: {_first(exc)}"
        return out
    if kept and _run(m, moving)[0] is not None:
        out.domain_skipped = "onnxruntime refuses it with the integer inputs as initializers"
        return out
    for s, own in binding.items():
        for v in sorted({1, 2, 3, own + 1, 2 * own} - {own}):
            b = dict(binding, **{s: v})
            try:
                why = _valid(result, domain, b)
            except Exception as exc:
                out.domain_skipped = f"the domain cannot judge a size: {_first(exc)}"
                return out
            out.tries += 1
            err, real = _run(m, _moved(moving, shapes, b, valued))
            where = f"{s}={v}"
            if why is None and err is not None:
                out.too_wide.append(f"{where}: onnxruntime: {err}")
            elif why is not None and err is None:
                out.too_narrow.append(f"{where}: the domain: {why}")
            elif why is None:
                from tests.domain_boundary import with_derived

                out.moved_wrong += _compare(result, real, with_derived(result, b), where)[0]
    return out


def sweep(names, jobs: int = 2):
    if jobs <= 1:
        return [check_case(n) for n in names]
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(min(jobs, 2), maxtasksperchild=50) as pool:
        return pool.map(check_case, names, chunksize=4)


def _failing(o: Outcome) -> bool:
    return bool(o.wrong or o.too_wide or o.too_narrow or o.moved_wrong)


def report(outcomes: list[Outcome]) -> str:
    by_op: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_op[o.op].append(o)
    tot = Counter()
    rows = []
    for op in sorted(by_op):
        os_ = by_op[op]
        c = Counter(cases=len(os_), skipped=sum(o.skipped is not None for o in os_),
                    wrong=sum(bool(o.wrong) for o in os_), tries=sum(o.tries for o in os_),
                    wide=sum(len(o.too_wide) for o in os_), wide_cases=sum(bool(o.too_wide) for o in os_),
                    narrow=sum(len(o.too_narrow) for o in os_), moved=sum(len(o.moved_wrong) for o in os_),
                    dskip=sum(o.skipped is None and o.domain_skipped is not None for o in os_))
        tot.update(c)
        k = known(op) or ""
        rows.append(f"| {op} | {c['cases']} | {c['skipped']} | {c['wrong']} | {c['tries']} | {c['wide']} "
                    f"({c['wide_cases']}) | {c['narrow']} | {c['moved']} | {c['dskip']} | {k} |")
    head = ["# Conformance: onnx's node suite against onnxruntime", "",
            "Generated by `python -m tests.conformance --out docs/conformance.md` (see tests/conformance.py).", "",
            f"Cases {tot['cases']}, skipped {tot['skipped']}; wrong-dim cases {tot['wrong']}; domain tries {tot['tries']}: "
            f"too wide {tot['wide']} in {tot['wide_cases']} cases, too narrow {tot['narrow']}, "
            f"wrong dims at moved sizes {tot['moved']}; domain half left out of {tot['dskip']} cases.", "",
            "| op | cases | skipped | wrong | tries | too wide (cases) | too narrow | wrong moved | domain left out | known |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    details = ["", "## Disagreements", ""]
    for o in outcomes:
        for kind, items in (("wrong", o.wrong), ("too wide", o.too_wide), ("too narrow", o.too_narrow),
                            ("wrong moved", o.moved_wrong)):
            for t in items[:3]:
                details.append(f"- {o.case} ({o.op}) {kind}: {t}")
    skips = ["", "## Left out", ""]
    for o in outcomes:
        if o.skipped or o.domain_skipped:
            skips.append(f"- {o.case} ({o.op}): {o.skipped or 'domain half: ' + str(o.domain_skipped)}")
    return "\n".join(head + rows + details + skips) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", help="comma-separated op types (default: every case)")
    p.add_argument("--out", default="docs/conformance.md", metavar="FILE",
                   help="where the markdown report goes (default: %(default)s, the whole sweep's page: with "
                        "--ops, give a file of your own)")
    p.add_argument("--jobs", type=int, default=2, help="processes at a time (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="the seed of the floats fed at moved sizes")
    a = p.parse_args(argv)
    global SEED
    SEED = a.seed  # (the pool's workers are forked after it is set)
    ops = set(a.ops.split(",")) if a.ops else None
    outcomes = sweep([n for n, _ in cases(ops)], a.jobs)
    with open(a.out, "w") as f:
        f.write(report(outcomes))
    bad = [o for o in outcomes if _failing(o) and not known(o.op)]
    print(report(outcomes).split("\n\n")[2])
    print(f"{len(bad)} failing cases outside the known ops: {', '.join(sorted({o.op for o in bad}))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
