"""What an annotated model says, checked against what onnxruntime computes: every dim
written on a produced value (graph outputs, value_info) is parsed back and evaluated at
the sizes of a run."""

import onnx
import onnxruntime as ort

from bench.resolution import feeds_for
from onnxsym.exprtext import parse_dim


def written_dims(vi):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in vi.type.tensor_type.shape.dim]


def _evaluate(text, binding):
    """The written dim at ``binding``; None when it names something the run does not give
    (a fresh symbol, or a name kept for one)."""
    if isinstance(text, int):
        return text
    try:
        value = parse_dim(text, lambda n: binding[n])
    except KeyError:
        return None
    return value if isinstance(value, int) else None


def check_written(annotated, bindings, feeds=None):
    """Run ``annotated`` with every value it annotates exposed; each written dim must be the
    real one (dims naming no input symbol are skipped). Returns how many dims were checked."""
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
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    checked = 0
    for binding in bindings:
        got = sess.run(names, feeds(binding) if feeds else feeds_for(annotated, binding))
        for name, arr in zip(names, got):
            if name not in written:
                continue
            assert len(written[name]) == arr.ndim, f"{name}: written {written[name]}, real {arr.shape}"
            for axis, (text, real) in enumerate(zip(written[name], arr.shape)):
                value = _evaluate(text, binding)
                if value is None:
                    continue
                assert value == real, f"{name}[{axis}] at {binding}: written {text!r} = {value}, real {real}"
                checked += 1
    return checked


def annotate_cli(model, folder, *args):
    """Save ``model`` in ``folder`` and run ``onnxsym annotate`` on it: (model path, output path, result)."""
    import os

    from click.testing import CliRunner

    from onnxsym.cli import main

    path, out = os.path.join(str(folder), "m.onnx"), os.path.join(str(folder), "o.onnx")
    onnx.save(model, path)
    return path, out, CliRunner().invoke(main, ["annotate", path, "-o", out, *args])
