"""Score shape-inference tools against onnxruntime: what
bench/compare_resolution.py and tests/test_real_models.py share.

A tool's answer is the model it writes: for every value a node of the main graph
produces, the dims in its value_info (or graph output). A dim counts as resolved when it
is a number or an expression over the graph inputs' dim_params; a resolved dim is
correct when it equals what onnxruntime computes at every assignment of the input
symbols (for a corpus entry, on every feed of feed_variants at each: a number written for
a dim that moves with the data is wrong), and wrong otherwise (a value written with the wrong rank counts all of its
dims as wrong). A tool that raises has refused the model.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(ROOT, "models", "real")

# Tool name -> ModelProto -> annotated ModelProto. onnx-shape-inference is optional.
TOOLS = ("onnxsym", "ort symbolic_shape_infer", "onnx infer_shapes", "onnx-shape-inference")

# The corpus groups of issue 35, families no rule was tuned to (models/real/make_untuned.py):
# measured beside the peers by tests/test_untuned_families.py and `compare_resolution.py --untuned`.
UNTUNED_GROUPS = ("torchvision detection", "audio front-end", "torch.fft", "diffusion UNet", "graph nets", "jax2onnx")


@dataclass
class Score:
    total: int = 0      # dims of the values onnxruntime computed
    correct: int = 0
    wrong: int = 0
    refused: bool = False
    error: str = ""
    timed_out: bool = False  # refused for taking longer than the caller's limit (run_tool_within)
    correct_at: set = field(default_factory=set)  # (value, axis) pairs
    wrong_at: set = field(default_factory=set)

    @property
    def unresolved(self) -> int:
        return self.total - self.correct - self.wrong


# ---------------------------------------------------------------- the corpus

def corpus(fetched: bool = True) -> list[dict]:
    """The manifest's entries whose file is here (fetched-only ones when fetched), with ``path``."""
    with open(os.path.join(REAL, "manifest.json")) as f:
        rows = json.load(f)
    out = []
    for e in rows:
        e = dict(e, path=os.path.join(REAL, e["file"]))
        if os.path.exists(e["path"]) and (e["commit"] or fetched):
            out.append(e)
    return out


def input_roots(model: onnx.ModelProto) -> list[str]:
    init = {t.name for t in model.graph.initializer}
    roots = []
    for i in model.graph.input:
        if i.name in init or not i.type.HasField("tensor_type"):
            continue
        for d in i.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param not in roots:
                roots.append(d.dim_param)
    return roots


def feeds_for(model: onnx.ModelProto, binding: dict[str, int], spec: dict | None = None, seed: int = 0):
    """Inputs for one run: random floats, ones for integers, unless ``spec`` (the
    manifest's ``feeds``) says otherwise for an input."""
    rng = np.random.default_rng(seed)
    init = {t.name for t in model.graph.initializer}
    out = {}
    for inp in model.graph.input:
        if inp.name in init:
            continue
        tt = inp.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else binding[d.dim_param] for d in tt.shape.dim]
        how = (spec or {}).get(inp.name, {})
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if "value" in how:  # a float value may be written as text ("nan"), which JSON has no literal for
            value = float(how["value"]) if isinstance(how["value"], str) else how["value"]
            out[inp.name] = np.full(shape, value, dtype=dtype)
        elif "strings" in how:
            out[inp.name] = rng.choice(np.array(how["strings"], dtype=object), size=shape)
        elif "int" in how:
            out[inp.name] = rng.integers(how["int"][0], how["int"][1], size=shape).astype(dtype)
        elif np.issubdtype(dtype, np.integer) or dtype == np.bool_:
            out[inp.name] = np.ones(shape, dtype=dtype)
        else:
            out[inp.name] = rng.standard_normal(shape).astype(dtype)
    return out


def feed_variants(e: dict) -> list[tuple[dict, int]]:
    """The feeds a corpus entry is run with at every size, as (spec, seed): the manifest's
    ``feeds`` at two seeds (two random draws of the same kind), then each of its ``more_feeds``
    (merged over ``feeds``): inputs whose data changes a data-dependent dim, such as a
    detector's image on which fewer boxes survive NMS. A dim is correct only if it matches
    onnxruntime on every one of them."""
    base = e.get("feeds") or {}
    return [(base, 0), (base, 1)] + [({**base, **more}, 0) for more in e.get("more_feeds", [])]


def entry_runs(model: onnx.ModelProto, e: dict):
    """(sizes, runs) for a corpus entry: every size run with every feed of feed_variants, the
    sizes repeated to line up with the runs (as score takes them)."""
    variants = feed_variants(e)
    runs = runtime_shapes(model, e["sizes"], variants=variants)
    return [b for b in e["sizes"] for _ in variants], runs


def runtime_shapes(model: onnx.ModelProto, sizes: list[dict[str, int]], spec: dict | None = None,
                   variants: list[tuple[dict, int]] | None = None):
    """Per assignment, the shape onnxruntime computes for every tensor a main-graph node produces;
    with ``variants`` ((spec, seed) pairs), one run per assignment and variant, variants inner."""
    import onnxruntime as ort

    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    for o in m.graph.output:  # declared output shapes must not constrain the run
        if o.type.HasField("tensor_type"):
            o.type.tensor_type.ClearField("shape")
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for name in n.output:
            if name and name not in have:
                have.add(name)
                m.graph.output.add().name = name  # onnxruntime takes an output without a type
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    runs = []
    for b in sizes:
        for how, seed in variants or [(spec, 0)]:
            outs = sess.run(names, feeds_for(model, b, how, seed=seed))
            runs.append({n: tuple(a.shape) for n, a in zip(names, outs) if isinstance(a, np.ndarray)})
    return runs


# ---------------------------------------------------------------- what a tool wrote

def _alias(text: str, roots: list[str]):
    """Root names that are not identifiers (paddle's ``p2o.DynamicDimension.0``) replaced by
    identifiers, so that sympy can read an expression over them."""
    names = {}
    for i, r in enumerate(sorted(roots, key=len, reverse=True)):
        if not r.isidentifier() and r in text:
            alias = f"__root{i}"
            text = text.replace(f"'{r}'", alias).replace(r, alias)
            names[alias] = r
    return text, names


def dim_function(text: str, roots: list[str]) -> Callable[[dict[str, int]], int] | None:
    """A dim_param as a function of the input symbols' values, or None when it is not an
    expression over them (a name of its own, ``unk__3``)."""
    from onnxsym import dims
    from onnxsym.dims.text import ExprSyntaxError, parse_dim

    if text in roots:
        return lambda b: b[text]
    try:
        e = parse_dim(text)
        if all(s.name in roots for s in dims.free_symbols(e)):
            return lambda b: dims.evaluate(e, b)
        return None
    except (ExprSyntaxError, ZeroDivisionError, ValueError):
        pass
    import sympy  # onnxruntime's tool writes sympy text, such as floor(height/2 - 1/2) + 1

    aliased, names = _alias(text, roots)
    try:
        e = sympy.sympify(aliased)
    except (sympy.SympifyError, TypeError, SyntaxError, ValueError):
        return None
    if not all(names.get(str(s), str(s)) in roots for s in e.free_symbols):
        return None
    return lambda b: int(e.subs({s: b[names.get(str(s), str(s))] for s in e.free_symbols}))


def written_shapes(model: onnx.ModelProto, roots: list[str]):
    """name -> list of dims (int, function of the bindings, or None), from value_info and outputs."""
    out = {}
    for vi in list(model.graph.value_info) + list(model.graph.output):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None or not tt.HasField("shape"):
            continue
        ds = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                ds.append(d.dim_value)
            elif d.HasField("dim_param"):
                ds.append(dim_function(d.dim_param, roots))
            else:
                ds.append(None)
        out[vi.name] = ds
    return out


def score(written, runs, sizes) -> Score:
    s = Score()
    for name, actual in runs[0].items():
        s.total += len(actual)
        ds = written.get(name)
        if ds is None:
            continue
        if len(ds) != len(actual) or any(len(r.get(name, actual)) != len(ds) for r in runs):
            s.wrong += len(actual)
            s.wrong_at |= {(name, a) for a in range(len(actual))}
            continue
        for axis, d in enumerate(ds):
            if d is None:
                continue
            try:
                ok = all((d if isinstance(d, int) else d(b)) == r[name][axis] for b, r in zip(sizes, runs))
            except (KeyError, TypeError, ZeroDivisionError, ValueError):
                continue  # an expression onnxruntime's bindings do not evaluate: not resolved
            s.correct += ok
            s.wrong += not ok
            (s.correct_at if ok else s.wrong_at).add((name, axis))
    return s


# ---------------------------------------------------------------- the tools

def _onnxsym(model):
    import onnxsym

    return onnxsym.annotate(model)


def _onnx(model):
    return onnx.shape_inference.infer_shapes(model, data_prop=True)


def _ort(model):
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = SymbolicShapeInference.infer_shapes(model, auto_merge=True)
    if out is None:
        raise RuntimeError("returned no model (incomplete symbolic shape inference)")
    return out


def _osi(model):
    import onnx_ir as ir
    from onnx_shape_inference import infer_symbolic_shapes

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    ir_model = ir.from_proto(copy)
    infer_symbolic_shapes(ir_model, warn_on_missing=False)
    return ir.to_proto(ir_model)


RUNNERS = {"onnxsym": _onnxsym, "ort symbolic_shape_infer": _ort, "onnx infer_shapes": _onnx,
           "onnx-shape-inference": _osi}


def available(tool: str) -> bool:
    if tool == "onnx-shape-inference":
        try:
            import onnx_shape_inference  # noqa: F401
        except ImportError:
            return False
    return True


@contextlib.contextmanager
def _scratch_dir():
    old = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(old)


def run_tool(tool: str, model: onnx.ModelProto, runs, sizes) -> Score:
    """The tool's score on ``model`` (its own value_info cleared first, as a user's export
    would be annotated from scratch)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.value_info[:]
    try:
        with _scratch_dir():  # onnxruntime's tool and onnx_ir leave temporary files in the cwd
            out = RUNNERS[tool](m)
    except Exception as exc:  # a refusal is a result: record it
        first = (str(exc).strip().splitlines() or [""])[0]
        return Score(total=sum(len(a) for a in runs[0].values()), refused=True,
                     error=f"{type(exc).__name__}: {first[:200]}")
    renamed = _renamed_roots(model, out)
    sizes = [{**b, **{new: b[old] for new, old in renamed.items() if old in b}} for b in sizes]
    return score(written_shapes(out, input_roots(model) + list(renamed)), runs, sizes)


def run_tool_within(tool: str, model: onnx.ModelProto, runs, sizes, seconds: float | None) -> Score:
    """run_tool in a forked process given ``seconds`` (None: no limit, in this process); one
    that takes longer is stopped and counts as refused, ``timed_out``."""
    if seconds is None:
        return run_tool(tool, model, runs, sizes)
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=lambda: send.send(run_tool(tool, model, runs, sizes)), daemon=True)
    child.start()
    try:
        if receive.poll(seconds):
            return receive.recv()
        return Score(total=sum(len(a) for a in runs[0].values()), refused=True, timed_out=True,
                     error=f"did not finish in {seconds:g} s")
    finally:
        if child.is_alive():
            child.kill()
        child.join()


def _renamed_roots(model: onnx.ModelProto, written: onnx.ModelProto) -> dict[str, str]:
    """The names a tool gave input dims the model names nothing with (paddle2onnx's ``?``,
    written as ``x_d2``): written name -> the model's root at that place."""
    roots = set(input_roots(model))
    out = {}
    for a, b in zip(model.graph.input, written.graph.input):
        if a.name != b.name or not (a.type.HasField("tensor_type") and b.type.HasField("tensor_type")):
            continue
        for da, db in zip(a.type.tensor_type.shape.dim, b.type.tensor_type.shape.dim):
            if da.dim_param in roots and db.dim_param and db.dim_param != da.dim_param and db.dim_param not in roots:
                out[db.dim_param] = da.dim_param
    return out

