"""The oracle of the tests: what onnxsym infers, checked against what a runtime computes.

``check`` infers a model, runs it (onnxruntime, or onnx's reference evaluator where
onnxruntime has no kernel) on each case, a ``(binding of the input symbols, feeds)``
pair, and compares every output with ``compare``: the rank, the element type, every
dim over the input symbols evaluated at the binding (sequences item by item), the
elements of the outputs named in ``values``. A dim holding a fresh symbol fails unless
its output is named in ``fresh_ok`` (or ``fresh_ok=ANY``), and then it must lie in the
symbol's range. A check that compared no dim (and no element) fails: it could not have caught a wrong
one. ``random_cases`` makes random feeds; ``check_written`` checks the dims an annotated model
writes, parsed back from its text.
"""

from typing import NamedTuple

import numpy as np
import onnx
from onnx import TensorProto, helper

import onnxsym
from onnxsym import Optional_, Sequence, Tensor, dims
from onnxsym.inference.values import Opaque

B2 = [{"batch": 2, "seq": 5}, {"batch": 3, "seq": 8}]
ANY = "any output"  # fresh_ok=ANY: a fresh dim may appear anywhere (within its range)


# ---------------------------------------------------------------- feeds and runs

def random_cases(inputs, assignments=B2, fixed=None, ints=(1, 5), seed=0):
    """``(binding, feeds)`` for each assignment: for ``inputs`` ((name, element type, shape)
    triples, shape entries ints or symbol names) random normal floats, random bools, random
    integers in ``[ints[0], ints[1])``; ``fixed`` maps an input name to a function of the
    binding that gives its value (lengths, offsets, position ids)."""
    rng = np.random.default_rng(seed)
    out = []
    for binding in assignments:
        feeds = {}
        for name, et, shape in inputs:
            if fixed and name in fixed:
                feeds[name] = fixed[name](binding)
                continue
            concrete = [binding[d] if isinstance(d, str) else d for d in shape]
            if et == TensorProto.FLOAT:
                feeds[name] = rng.standard_normal(concrete).astype(np.float32)
            elif et == TensorProto.BOOL:
                feeds[name] = rng.integers(0, 2, concrete).astype(np.bool_)
            else:
                feeds[name] = rng.integers(*ints, concrete).astype(helper.tensor_dtype_to_np_dtype(et))
        out.append((binding, feeds))
    return out


def _ort_session(m):
    import onnxruntime as ort

    return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])


def _outputs(sess, feeds):
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def run_ort(m, feeds):
    """Every output of ``m`` run by onnxruntime's CPU kernels: {name: array (or list, dict)}."""
    return _outputs(_ort_session(m), feeds)


def _runner(run):
    """``run``, with one onnxruntime session per model for the duration of a check (a
    session kept longer keeps its spinning thread pool)."""
    if run is not run_ort:
        return run
    sessions = {}

    def go(m, feeds):
        if id(m) not in sessions:
            sessions[id(m)] = _ort_session(m)
        return _outputs(sessions[id(m)], feeds)
    return go


def run_reference(m, feeds):
    """Every output of ``m`` run by onnx's reference evaluator."""
    from onnx.reference import ReferenceEvaluator

    names = [o.name for o in m.graph.output]
    return dict(zip(names, ReferenceEvaluator(m).run(None, feeds)))


# ---------------------------------------------------------------- the comparison

def compare(name, inferred, real, binding, fresh, fresh_allowed=False, unknown_ok=False):
    """One value of one run: ``inferred`` (a Tensor, Sequence or Optional_) against the runtime's
    ``real``. Returns how many dims were compared with the run (a fresh one with its range;
    a scalar counts one)."""
    while isinstance(inferred, Optional_):
        inferred = inferred.elem
    if isinstance(inferred, Opaque):  # a map or a sequence of maps: no dims
        assert not isinstance(real, np.ndarray), f"{name}: a tensor was inferred as {inferred}"
        return 0
    if isinstance(inferred, Sequence):
        assert isinstance(real, list), f"{name}: a sequence was inferred, the runtime gave {type(real)}"
        compared = 0
        n = inferred.count
        if n is not None:
            if _fresh_in(n, fresh):
                assert fresh_allowed, f"{name}: item count {n} is unresolved"
            else:
                assert dims.evaluate(n, binding) == len(real), f"{name}: {n} items inferred, {len(real)} real"
                compared += 1
        if inferred.items is not None:
            assert len(inferred.items) == len(real), f"{name}: {len(inferred.items)} items inferred, {len(real)} real"
            for k, (t, arr) in enumerate(zip(inferred.items, real)):
                compared += compare(f"{name}[{k}]", t, arr, binding, fresh, fresh_allowed, unknown_ok)
        for k, arr in enumerate(real):
            compared += compare(f"{name}[item {k}]", inferred.elem, arr, binding, fresh, fresh_allowed, unknown_ok)
        return compared
    if unknown_ok and (inferred is None or isinstance(inferred, Tensor) and inferred.shape is None):
        return 0
    assert isinstance(inferred, Tensor) and inferred.shape is not None, f"{name}: rank unknown"
    shape = np.shape(real)
    assert len(inferred.shape) == len(shape), f"{name}: inferred {inferred.shape}, real {shape}"
    if inferred.dtype and isinstance(real, np.ndarray) and real.dtype != object:
        assert inferred.dtype == helper.np_dtype_to_tensor_dtype(real.dtype), \
            f"{name}: dtype {inferred.dtype}, real {real.dtype}"
    compared = 0
    for axis, (d, a) in enumerate(zip(inferred.shape, shape)):
        if _fresh_in(d, fresh):
            assert fresh_allowed, f"{name}[{axis}] is unresolved: {d}"
            lo, hi = dims.range_of(d)
            assert lo <= a <= hi, f"{name}[{axis}] at {binding}: {a} outside [{lo}, {hi}] of {d}"
        else:
            got = dims.evaluate(d, binding)
            assert got == a, f"{name}[{axis}] at {binding}: inferred {inferred.shape} -> {d} = {got}, real {shape}"
        compared += 1
    return compared if shape else 1  # a scalar's shape, (), is compared whole


def _fresh_in(d, fresh):
    return any(s.name in fresh for s in dims.free_symbols(d))


def check(m, cases, fresh_ok=(), values=(), ranges=None, run=run_ort, annotated=False):
    """Infer ``m`` (with the symbol ``ranges`` given, if any), run it on each ``(binding, feeds)``
    of ``cases`` and compare every output. ``values``: outputs whose inferred elements must be
    the real ones. ``annotated``: the annotated model must also pass the full checker and
    compute the same outputs. Returns the inference result."""
    res = onnxsym.infer(m, ranges=ranges)
    written = None
    if annotated:
        written = onnxsym.annotate(m)
        onnx.checker.check_model(written, full_check=True)
    compared = 0
    run = _runner(run)
    for binding, feeds in cases:
        real = run(m, feeds)
        again = run(written, feeds) if written is not None else real
        for o in m.graph.output:
            arr = real[o.name]
            allowed = fresh_ok == ANY or o.name in fresh_ok
            with res.env:  # a fresh dim's range is the result's
                compared += compare(o.name, res.values[o.name], arr, binding, res.fresh, allowed)
            if o.name in values:
                v = res.values[o.name].value
                assert v is not None, f"{o.name}: value unknown"
                assert tuple(dims.evaluate(e, binding) for e in v) == tuple(arr.reshape(-1).tolist()), o.name
                compared += len(v)
            if annotated:
                assert all(np.array_equal(a, b) for a, b in zip(_flat(arr), _flat(again[o.name]))), \
                    f"{o.name}: the annotated model computes another value"
    assert compared > 0, "no dim or element compared: this check could not catch a wrong one"
    return res


def _flat(x):
    return x if isinstance(x, list) else [x]


# ---------------------------------------------------------------- assertions on a result

def no_fresh(res):
    assert not res.unresolved(), res.unresolved()


class Fresh(NamedTuple):
    """A fresh symbol with its range in the result's environment."""
    name: str
    lo: int
    hi: int


def fresh_of(res, name, axis):
    """The fresh symbol that is dim ``axis`` of value ``name`` (a :class:`Fresh`), and its provenance."""
    d = res.shape(name)[axis]
    s = dims.as_sym(d)
    assert s is not None and s.name in res.fresh, f"{name}[{axis}] = {d} is not a fresh symbol"
    return Fresh(s.name, *res.symbol_ranges()[s.name]), res.fresh[s.name]


# ---------------------------------------------------------------- what an annotated model writes

def written_dims(vi):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim]


def _evaluate_written(text, binding):
    """The written dim at ``binding``; None when it names something the run does not give
    (a fresh symbol, or a name kept for one)."""
    from onnxsym.dims.text import parse_dim

    if isinstance(text, int):
        return text
    if not text:
        return None  # a dim with neither a number nor a name: unknown, nothing claimed
    try:
        value = parse_dim(text, lambda n: binding[n])
    except KeyError:
        return None
    return value if isinstance(value, int) else None


def check_written(annotated, bindings, feeds=None):
    """Run ``annotated`` with every value it annotates exposed; each dim written on a produced
    value (graph outputs, value_info), parsed back from its text, must be the real one (dims
    naming no input symbol are skipped). Returns how many dims were checked."""
    from resolution import feeds_for

    m = onnx.ModelProto()
    m.CopyFrom(annotated)
    written = {vi.name: written_dims(vi) for vi in list(m.graph.value_info) + list(m.graph.output)
               if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")}
    outputs = {o.name for o in m.graph.output}
    for vi in m.graph.value_info:
        if vi.name not in outputs and vi.name in written:
            m.graph.output.add().CopyFrom(vi)
    for o in m.graph.output:  # a declared output shape must not shape the run
        o.type.tensor_type.ClearField("shape")
    del m.graph.value_info[:]
    checked = 0
    run = _runner(run_ort)
    for binding in bindings:
        got = run(m, feeds(binding) if feeds else feeds_for(annotated, binding))
        for name, arr in got.items():
            if name not in written:
                continue
            assert len(written[name]) == arr.ndim, f"{name}: written {written[name]}, real {arr.shape}"
            for axis, (text, real) in enumerate(zip(written[name], arr.shape)):
                value = _evaluate_written(text, binding)
                if value is None:
                    continue
                assert value == real, f"{name}[{axis}] at {binding}: written {text!r} = {value}, real {real}"
                checked += 1
    return checked


# ---------------------------------------------------------------- the written model, run as a user runs it

def session_of(m, optimize=True):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 4
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _first_line(exc):
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]


def written_model_failure(original, annotated, bindings, feeds):
    """Run ``annotated`` as a user's onnxruntime runs it (its value_info in place, every graph
    optimization: onnxruntime folds shapes and plans buffers from the dims it declares) at
    each binding its declared inputs allow where ``original`` runs (judged without graph
    optimizations, as verify runs it): it must run too, and every dim it declares on a
    produced value (value_info and graph outputs, parsed back from its text; dims naming no
    input symbol skipped) must be the real one. ``feeds(binding)`` gives the inputs.
    Returns ``(dims checked, the first failure or None, bindings run)``."""
    try:  # the judge of where the model runs, as verify runs it (optimizations run some invalid graphs)
        orig = session_of(original, optimize=False)
    except Exception:  # noqa: BLE001 - onnxruntime refuses the original: nothing to hold the written one to
        return 0, None, 0
    try:
        as_is = session_of(annotated)
    except Exception as exc:  # noqa: BLE001
        try:  # the model as given, optimized as the written one is, is refused too: onnxruntime's doing
            session_of(original)
        except Exception:  # noqa: BLE001
            return 0, None, 0
        return 0, f"onnxruntime cannot load the written model: {_first_line(exc)}", 0
    exposed = onnx.ModelProto()
    exposed.CopyFrom(annotated)
    written: dict[str, list] = {}  # every declaration of a value (it may be declared at two places)
    for vi in list(exposed.graph.value_info) + list(exposed.graph.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            written.setdefault(vi.name, []).append(written_dims(vi))
    outputs = {o.name for o in exposed.graph.output}
    for vi in exposed.graph.value_info:
        if vi.name not in outputs and vi.name in written:
            outputs.add(vi.name)
            exposed.graph.output.add().CopyFrom(vi)
    for o in exposed.graph.output:  # here the run itself is looked at, not shaped by the declarations
        o.type.tensor_type.ClearField("shape")
    del exposed.graph.value_info[:]
    checked = ran = 0
    inspect = None
    for binding in bindings:
        run_feeds = feeds(binding)
        if not _declared_inputs_allow(annotated, run_feeds):
            continue  # (a bound symbol's number is written into the inputs: other sizes are refused)
        try:
            orig.run(None, run_feeds)
        except Exception:  # noqa: BLE001 - the model itself does not run at this size
            continue
        ran += 1
        try:
            as_is.run(None, run_feeds)
        except Exception as exc:  # noqa: BLE001
            try:  # the model as given, optimized as the written one is, fails too: onnxruntime's doing
                session_of(original).run(None, run_feeds)
            except Exception:  # noqa: BLE001
                continue
            return checked, f"the written model fails at {binding} where the model runs: {_first_line(exc)}", ran
        if inspect is None:
            inspect = session_of(exposed, optimize=False)
        names = [o.name for o in inspect.get_outputs()]
        for name, arr in zip(names, inspect.run(names, run_feeds)):
            if name not in written or not isinstance(arr, np.ndarray):
                continue
            for declared in written[name]:
                if len(declared) != arr.ndim:
                    return checked, f"'{name}' at {binding}: written {declared}, real {list(arr.shape)}", ran
                for axis, (text, real) in enumerate(zip(declared, arr.shape)):
                    value = _evaluate_written(text, binding)
                    if value is None:
                        continue
                    if value != real:
                        return checked, (f"'{name}'[{axis}] at {binding}: written {text!r} = {value}, "
                                         f"real {list(arr.shape)}"), ran
                    checked += 1
    return checked, None, ran


def _declared_inputs_allow(m, feeds):
    """Whether the feeds have the numbers ``m``'s graph inputs declare."""
    for inp in m.graph.input:
        if inp.name in feeds and inp.type.HasField("tensor_type"):
            dims_ = inp.type.tensor_type.shape.dim
            shape = np.shape(feeds[inp.name])
            if len(dims_) != len(shape) or any(d.HasField("dim_value") and d.dim_value != n
                                               for d, n in zip(dims_, shape)):
                return False
    return True


def check_written_runs(original, annotated, bindings, feeds):
    """:func:`written_model_failure` as an assertion; returns how many dims were checked
    (at least one binding must run and at least one dim be compared)."""
    checked, failure, ran = written_model_failure(original, annotated, bindings, feeds)
    assert failure is None, failure
    assert ran and checked, f"nothing checked: {ran} bindings ran, {checked} dims compared"
    return checked


def check_written_names(annotated, bindings, feeds=None):
    """``check_written``, with the names the annotated model keeps (``onnxsym.aliases``: each
    declared name and the dim it names) evaluated at each binding too, so that a kept name
    (``--keep-declared-names``) is checked against the run like an expression; a name kept
    for a fresh symbol is skipped. Returns how many dims were checked."""
    import json

    meta = {p.key: p.value for p in annotated.metadata_props}
    aliases = json.loads(meta.get("onnxsym.aliases", "{}"))
    extended = []
    for b in bindings:
        e = dict(b)
        for name, text in aliases.items():
            value = _evaluate_written(text, b)
            if value is not None:
                e[name] = value
        extended.append(e)
    if feeds is None:
        from resolution import feeds_for

        def feeds(b):
            return feeds_for(annotated, b)
    return check_written(annotated, extended, feeds)
