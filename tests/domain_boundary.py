"""Boundary checks of a model's domain against onnxruntime: for a condition, sizes
just inside run and give the inferred shapes; sizes just outside fail at one of the
condition's nodes, or give shapes that differ from the inferred expressions."""


import numpy as np
import onnx

import onnxsym
from onnxsym import dims

# Sizes searched for a boundary of a condition that does not simplify.
SEARCH = 4096


def feeds(result, binding: dict[str, int]) -> dict[str, np.ndarray]:
    """Inputs of the given sizes (ids and indices are 1: valid for any table)."""
    inits = {t.name for t in result.model.graph.initializer}
    out = {}
    for inp in result.model.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else binding[d.dim_param] for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if np.issubdtype(dtype, np.integer):
            out[inp.name] = np.ones(shape, dtype=dtype)
        elif dtype == np.object_:  # strings
            out[inp.name] = np.full(shape, "a", dtype=object)
        else:
            out[inp.name] = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    return out


def run(model, result, binding, optimized: bool = False) -> tuple[str | None, dict[str, tuple]]:
    """(onnxruntime's error or None, the output shapes). Unoptimized by default: the graph
    runs as written (onnxruntime's optimizer turns a Gather of a Range into a Slice, which
    clamps, so a bad index then fails at a later node instead)."""
    import onnxruntime as ort

    data = model if isinstance(model, bytes) else (model.SerializeToString() if isinstance(model, onnx.ModelProto)
                                                   else open(model, "rb").read())
    opts = ort.SessionOptions()
    opts.log_severity_level = 4  # the error is returned; not also printed
    if not optimized:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
    try:
        outs = sess.run(None, feeds(result, binding))
    except Exception as exc:  # onnxruntime's own failure: what the test looks at
        return str(exc), {}
    return None, {o.name: a.shape for o, a in zip(sess.get_outputs(), outs)}


def expected(result, binding) -> dict[str, tuple]:
    return {o.name: tuple(dims.evaluate(d, binding) for d in result.shape(o.name))
            for o in result.model.graph.output if result.shape(o.name) is not None}


def with_derived(result, binding: dict[str, int]) -> dict[str, int]:
    out = dict(binding)
    for s, v in result.derived.items():
        if s.name not in out:
            try:
                out[s.name] = dims.evaluate(v, out)
            except KeyError:
                pass
    return out


def _roots(result, binding):
    derived = set(result.derived_symbols())  # (a symbol inference only narrowed keeps its name)
    return {k: v for k, v in binding.items() if k not in derived}


def points(result, domain, cond, base: dict[str, int]):
    """(inside, outside) sizes around ``cond``'s boundary, starting from ``base``."""
    f = cond.form
    if cond.kind == "equal":
        inside = dict(base)
        inside[cond.symbols[0]] = dims.evaluate(cond.definition, base)
        return inside, dict(inside, **{cond.symbols[0]: inside[cond.symbols[0]] + 1})
    if cond.kind == "range":
        if f.hi < SEARCH:
            return dict(base, **{f.symbol: f.hi}), dict(base, **{f.symbol: f.hi + 1})
        return dict(base, **{f.symbol: f.lo}), dict(base, **{f.symbol: f.lo - 1})
    s = cond.symbols[0]
    for v in range(base[s], base[s] + SEARCH):
        inside = with_derived(result, _roots(result, dict(base, **{s: v})))
        outside = with_derived(result, _roots(result, dict(base, **{s: v + 1})))
        if cond.holds(inside) and not cond.holds(outside) and domain.violated(inside) is None:
            return inside, outside
    raise AssertionError(f"no boundary of {cond.text} from {base}")


def check_condition(model, result, domain, cond, base):
    """The boundary test of one condition; returns (inside, outside, what happened outside)."""
    inside, outside = points(result, domain, cond, with_derived(result, base))
    if cond.kind != "equal":  # (an equality's outside breaks the definition on purpose)
        inside, outside = with_derived(result, _roots(result, inside)), with_derived(result, _roots(result, outside))
    assert domain.violated(inside) is None, f"{inside} breaks {domain.violated(inside).text}"
    assert not cond.holds(outside)
    err, shapes = run(model, result, inside)
    assert err is None, f"{cond.text}: inside {inside} fails: {err}"
    assert shapes == expected(result, inside), f"{cond.text}: inside {inside}: {shapes} != {expected(result, inside)}"
    err, shapes = run(model, result, outside, optimized=True)
    assert err is not None or shapes != expected(result, outside), \
        f"{cond.text}: outside {outside} runs optimized with the inferred shapes"
    err, shapes = run(model, result, outside)
    if err is not None:
        # (a function's nodes are named by onnxruntime with a prefix: "_inlfunc_SequenceMap_" + name)
        named = [s.node for s in cond.sources if f"Name:'{s.node}'" in err or f"_{s.node}'" in err]
        assert named, f"{cond.text}: outside {outside} fails elsewhere: {err}"
        return inside, outside, f"fails at {named[0]}"
    assert shapes != expected(result, outside), f"{cond.text}: outside {outside} runs with the inferred shapes"
    return inside, outside, "shapes differ"


def check_all(model, base, expect=None, **infer_args):
    """Infer ``model``, compute its domain and check every condition's boundary;
    ``expect``: the condition texts, in order."""
    result = onnxsym.infer(model, **infer_args)
    domain = result.domain()
    if expect is not None:
        assert [c.text for c in domain.conditions] == list(expect), [c.text for c in domain.conditions]
    outcomes = [check_condition(model, result, domain, c, base) for c in domain.conditions]
    return result, domain, outcomes
