"""The domain's verdict against onnxruntime's, one op at a time (issue 34): a model whose
graph-input dims are symbols is run at moved sizes; onnxruntime runs exactly where the domain
holds, and there with the inferred output shapes."""

from __future__ import annotations

import numpy as np
import onnx

import onnxsym
from onnxsym import dims


def symbolic(m: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, int]]:
    """A copy of ``m`` with every graph-input dim a symbol ``<input index>_<axis>`` (``i0_1``), and
    the sizes it had."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    own = {}
    inits = {t.name for t in m.graph.initializer}
    for k, inp in enumerate(i for i in m.graph.input if i.name not in inits):
        for a, d in enumerate(inp.type.tensor_type.shape.dim):
            name = f"i{k}_{a}"
            own[name] = d.dim_value
            d.Clear()
            d.dim_param = name
    for o in m.graph.output:  # (onnxruntime checks a declared output shape; onnxsym infers it)
        o.type.tensor_type.ClearField("shape")
    return m, own


def moves(own: dict[str, int], extra: dict[str, tuple[int, ...]] | None = None):
    """One symbol moved at a time to 1, 2, 3, its own + 1, twice its own (and ``extra``'s sizes)."""
    for s, v in own.items():
        for w in sorted({1, 2, 3, v + 1, 2 * v, *(extra or {}).get(s, ())} - {v}):
            yield dict(own, **{s: w})


def feeds(m: onnx.ModelProto, sizes: dict[str, int], data: dict[str, np.ndarray] | None = None):
    """Inputs of ``sizes``: a case's own data where its shape is kept, else random floats, True
    and integer zeros (a position, a length or an index of 0 is in range at every size)."""
    rng = np.random.default_rng(0)
    inits = {t.name for t in m.graph.initializer}
    out = {}
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        shape = tuple(d.dim_value if d.HasField("dim_value") else sizes[d.dim_param] for d in tt.shape.dim)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if data is not None and inp.name in data and data[inp.name].shape == shape:
            out[inp.name] = data[inp.name]
        elif dtype == np.bool_:
            out[inp.name] = np.ones(shape, np.bool_)
        elif np.issubdtype(dtype, np.integer):
            out[inp.name] = np.zeros(shape, dtype)
        else:
            out[inp.name] = rng.standard_normal(shape).astype(dtype)
    return out


def session(m: onnx.ModelProto):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _value(d, sizes):
    """The dim at ``sizes``, or None for one over a fresh symbol (an honest unknown)."""
    try:
        return dims.evaluate(d, sizes)
    except KeyError:
        return None


def _outside(domain, sizes) -> str | None:
    """Why ``sizes`` are outside the domain (a range, then a condition), or None; a domain that
    is a contradiction's text leaves every size outside."""
    if isinstance(domain, str):
        return domain
    for n, (lo, hi) in domain.ranges.items():
        if n in sizes and not lo <= sizes[n] <= hi:
            return f"{n} = {sizes[n]} outside [{lo}, {hi}]"
    bad = domain.violated(sizes)
    return None if bad is None else bad.text


def disagreements(m: onnx.ModelProto, tries, data=None, **infer_args) -> tuple[int, list[str]]:
    """(the number of tries, what differs): each try's sizes where onnxruntime runs outside the
    domain, refuses inside it, or gives shapes other than the inferred ones (``infer_args``:
    ``allow_zero=True`` to judge sizes of 0 too)."""
    from onnxsym.errors import ShapeContradiction

    res = onnxsym.infer(m, **infer_args)
    try:
        domain = res.domain()
    except ShapeContradiction as exc:  # (a condition that holds at no size: every size is outside)
        domain = str(exc)
    sess = session(m)
    out, n = [], 0
    for sizes in tries:
        n += 1
        try:
            got = [a.shape for a in sess.run(None, feeds(m, sizes, data))]
        except Exception as exc:  # onnxruntime's refusal is the verdict
            text = str(exc).splitlines()[0]
            node = text.split("running ")[-1].split(" node")[0] if "running " in text else "load"
            got, err = None, f"{node}: {text.split('Status Message:')[-1].strip()[:200]}"
        broken = _outside(domain, sizes)
        if got is None and broken is None:
            out.append(f"{sizes}: onnxruntime refuses inside the domain: {err}")
        elif got is not None and broken is not None:
            out.append(f"{sizes}: onnxruntime runs outside the domain ({broken})")
        elif got is not None:
            for o, shape in zip(m.graph.output, got):
                want = res.shape(o.name)
                if want is None or len(want) != len(shape) or any(
                        e is not None and e != g for e, g in zip((_value(d, sizes) for d in want), shape)):
                    out.append(f"{sizes}: {o.name} is {shape}, inferred {want}")
    return n, out


def backend_counts(prefixes: tuple[str, ...]) -> dict[str, tuple[int, int, int]]:
    """Per op: (tries, disagreements, cases with one) over onnx's backend node cases whose name starts
    with one of ``prefixes`` (their `_expanded` twins left out: other ops). A case onnxruntime
    cannot load at any size (no kernel for its type) counts as 1 disagreement."""
    import warnings

    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in collect_testcases() if c.name.startswith(prefixes) and "expanded" not in c.name]
    out: dict[str, tuple[int, int, int]] = {}
    for c in cases:
        op = c.model.graph.node[0].op_type
        m, own = symbolic(c.model)
        data = dict(zip((i.name for i in c.model.graph.input), c.data_sets[0][0])) if c.data_sets else None
        try:
            n, bad = disagreements(m, list(moves(own)), data)
        except Exception as exc:  # (onnxruntime refuses the model at load, or the domain is not evaluable)
            n, bad = 1, [f"{c.name}: {type(exc).__name__}"]
        t, d, k = out.get(op, (0, 0, 0))
        out[op] = (t + n, d + len(bad), k + bool(bad))
    return out


if __name__ == "__main__":  # PYTHONPATH=. python tests/op_verdicts.py test_attention test_rms_normalization ...
    import sys

    for op, (t, d, k) in sorted(backend_counts(tuple(sys.argv[1:])).items()):
        print(f"{op}: {t} tries, {d} disagreements in {k} cases")


def isolated_disagreements(m: onnx.ModelProto, tries, data=None, other_shapes_outside: bool = False,
                           **infer_args) -> tuple[int, list[str], list]:
    """:func:`disagreements` with onnxruntime in a child process (onnxsym.model.isolated), as a
    user's session runs it (every optimization): a size where it crashes natively (an Einsum over
    an empty batch) is no verdict, listed apart. ``other_shapes_outside``: a run outside the domain
    with output shapes other than the inferred ones is no disagreement (the domain is where the
    model runs with the inferred shapes). (the number of tries, what differs, the crashes)"""
    from onnxsym.model.isolated import Child, Crashed, Refused

    res = onnxsym.infer(m, **infer_args)
    domain = res.domain()
    names = [o.name for o in m.graph.output]
    out, crashes, n = [], [], 0
    with Child() as child:
        child.load(m.SerializeToString(), {"optimization": "all"})
        for sizes in tries:
            n += 1
            try:
                got, err = child.run(feeds(m, sizes, data), names), ""
            except Crashed as exc:
                crashes.append((sizes, exc.signal))
                continue
            except Refused as exc:  # onnxruntime's refusal is the verdict
                got, err = None, str(exc).splitlines()[0][:160]
            broken = domain.violated(sizes)
            wrong = [] if got is None else [f"{sizes}: {name} is {shape}, inferred {want}"
                                            for name, shape in zip(names, got) for want in [res.shape(name)]
                                            if not _matches(want, shape, sizes, res.fresh)]
            if got is None and broken is None:
                out.append(f"{sizes}: onnxruntime refuses inside the domain: {err}")
            elif got is not None and broken is not None:
                if not (other_shapes_outside and wrong):
                    out.append(f"{sizes}: onnxruntime runs outside the domain ({broken.text})")
            else:
                out.extend(wrong)
    return n, out, crashes


def _matches(want, shape, sizes, fresh) -> bool:
    """Whether the inferred ``want`` is onnxruntime's ``shape`` at ``sizes`` (a dim of a fresh
    symbol, which the data decides, matches any)."""
    if want is None or len(want) != len(shape):
        return False
    return all(any(s.name in fresh for s in dims.free_symbols(d)) or dims.evaluate(d, sizes) == a
               for d, a in zip(want, shape))
