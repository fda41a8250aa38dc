"""Resolution side by side: onnxsym, onnx's infer_shapes(data_prop=True),
onnxruntime's symbolic_shape_infer and onnx-shape-inference (PyPI, on onnx_ir),
on the models in models/ (or those given).

For every value a node produces, a dim counts as resolved when it is a number or an
expression over the graph inputs' symbols; every resolved dim is then checked
against onnxruntime at two assignments of the symbols, and a dim that differs
counts as wrong.

    python bench/compare_resolution.py [MODEL ...]
"""

import glob
import os
import sys
import warnings

import onnx

import onnxsym
from onnxsym import dims
from onnxsym.exprtext import ExprSyntaxError, parse_dim
from onnxsym.verify import default_assignments, _expose_all, _feed

HERE = os.path.dirname(os.path.abspath(__file__))


def _runtime_shapes(model, result, assignments):
    import onnxruntime as ort

    exposed = _expose_all(model, result.produced, result)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    sess = ort.InferenceSession(exposed.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    init = {t.name for t in model.graph.initializer}
    runs = []
    for b in assignments:
        feeds = {i.name: _feed(result.values[i.name], i.name, b) for i in model.graph.input if i.name not in init}
        runs.append(dict(zip(names, (tuple(a.shape) for a in sess.run(names, feeds)))))
    return runs


def _declared(model):
    """name -> list of dims (int, Expr, or None when not over input symbols)."""
    roots = set()
    for i in model.graph.input:
        for d in i.type.tensor_type.shape.dim:
            if d.HasField("dim_param"):
                roots |= {s.name for s in dims.free_symbols(parse_dim(d.dim_param))}
    out = {}
    for vi in list(model.graph.value_info) + list(model.graph.output):
        if not vi.type.tensor_type.HasField("shape"):
            continue
        ds = []
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_value"):
                ds.append(d.dim_value)
            elif d.HasField("dim_param"):
                ds.append(_peer_dim(d.dim_param, roots))
            else:
                ds.append(None)
        out[vi.name] = ds
    return out


def _peer_dim(text, roots):
    """A dim_param as a function of the bindings, or None when it is not over input symbols.
    onnxruntime's tool writes sympy text (``floor(height/2 - 1/2) + 1``): sympy reads that."""
    try:
        e = parse_dim(text)
        if all(s.name in roots for s in dims.free_symbols(e)):
            return lambda b: dims.evaluate(e, b)
        return None
    except (ExprSyntaxError, ZeroDivisionError):
        pass
    import sympy

    try:
        e = sympy.sympify(text)
    except (sympy.SympifyError, TypeError):
        return None
    if not all(str(s) in roots for s in e.free_symbols):
        return None
    return lambda b: int(e.subs({sympy.Symbol(k): v for k, v in b.items()}))


def _score(shapes, produced, runs, assignments):
    total = resolved = wrong = 0
    for name in produced:
        if name not in runs[0]:
            continue
        actual = runs[0][name]
        total += len(actual)
        ds = shapes.get(name)
        if ds is None or len(ds) != len(actual):
            wrong += ds is not None
            continue
        for axis, d in enumerate(ds):
            if d is None:
                continue
            resolved += 1
            if any((d if isinstance(d, int) else d(b)) != r[name][axis] for b, r in zip(assignments, runs)):
                wrong += 1
    return total, resolved, wrong


def peers(path):
    model = onnx.load(path)
    del model.graph.value_info[:]
    yield "onnxsym", onnxsym.annotate(model)
    try:
        yield "onnx infer_shapes", onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:
        print(f"  onnx infer_shapes failed: {exc}", file=sys.stderr)
    try:
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield "ort symbolic_shape_infer", SymbolicShapeInference.infer_shapes(model, auto_merge=True)
    except Exception as exc:
        print(f"  ort symbolic_shape_infer failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    try:
        yield "onnx-shape-inference", _onnx_shape_inference(model)
    except ImportError:
        print("  onnx-shape-inference is not installed", file=sys.stderr)
    except Exception as exc:
        print(f"  onnx-shape-inference failed: {type(exc).__name__}: {exc}", file=sys.stderr)


def _onnx_shape_inference(model):
    """onnx-shape-inference works on an onnx_ir model; its shapes come back as value_info."""
    import onnx_ir as ir
    from onnx_shape_inference import infer_symbolic_shapes

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    ir_model = ir.from_proto(copy)
    infer_symbolic_shapes(ir_model, warn_on_missing=False)
    return ir.to_proto(ir_model)


def main(paths):
    paths = paths or sorted(glob.glob(os.path.join(HERE, "..", "models", "*.onnx")))
    totals = {}
    print(f"{'model':28} {'tool':26} {'dims':>6} {'resolved':>9} {'wrong':>6}")
    for path in paths:
        result = onnxsym.infer(path)
        roots = sorted(n for n in result.symbols.symbols if n not in result.fresh)
        assignments = default_assignments(roots, seed=1)
        runs = _runtime_shapes(result.model, result, assignments)
        for tool, annotated in peers(path):
            t, r, w = _score(_declared(annotated), result.produced, runs, assignments)
            agg = totals.setdefault(tool, [0, 0, 0])
            agg[0] += t
            agg[1] += r
            agg[2] += w
            print(f"{os.path.basename(path):28} {tool:26} {t:6} {r:9} {w:6}")
    print()
    for tool, (t, r, w) in totals.items():
        print(f"{'ALL':28} {tool:26} {t:6} {r:9} {w:6}   ({100.0 * r / max(t, 1):.1f}% resolved)")


if __name__ == "__main__":
    main(sys.argv[1:])
