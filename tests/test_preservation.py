"""Annotating changes value_info, graph output shapes and onnxsym.* metadata, and
nothing else; the annotated model is valid and computes what the original did."""

import glob
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import onnxsym
from onnxsym.commands.verify import default_assignments, feeds

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = sorted(glob.glob(os.path.join(HERE, "..", "models", "*.onnx")))


def _stripped(m: onnx.ModelProto) -> onnx.ModelProto:
    """The parts annotation may change, removed: value_info, output shapes, onnxsym metadata."""
    c = onnx.ModelProto()
    c.CopyFrom(m)
    del c.graph.value_info[:]
    for o in c.graph.output:
        if o.type.HasField("tensor_type"):
            o.type.tensor_type.ClearField("shape")
    kept = [p for p in c.metadata_props if not p.key.startswith("onnxsym.")]
    del c.metadata_props[:]
    c.metadata_props.extend(kept)
    return c


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_annotation_changes_nothing_but_shapes_and_metadata(path, tmp_path):
    original = onnx.load(path)
    out = tmp_path / "annotated.onnx"
    from click.testing import CliRunner

    from onnxsym.cli import main

    r = CliRunner().invoke(main, ["annotate", path, "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    annotated = onnx.load(str(out))
    assert _stripped(annotated) == _stripped(original)
    # what annotation may change still keeps the names, order and types of the outputs
    assert [(o.name, o.type.tensor_type.elem_type) for o in annotated.graph.output] == \
        [(o.name, o.type.tensor_type.elem_type) for o in original.graph.output]
    # declared dims that were there are still there (a dim_value never changes)
    for a, b in zip(annotated.graph.output, original.graph.output):
        for da, db in zip(a.type.tensor_type.shape.dim, b.type.tensor_type.shape.dim):
            if db.HasField("dim_value"):
                assert da.dim_value == db.dim_value
    assert any(p.key.startswith("onnxsym.") for p in annotated.metadata_props)
    onnx.checker.check_model(annotated, full_check=True)

    result = onnxsym.infer(original)
    roots = sorted(n for n in result.symbols.symbols if n not in result.fresh)
    (bindings,) = default_assignments(roots, count=1, seed=3)
    # optimizations off: fusions chosen from value_info must not blur the comparison
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL

    def run(m):
        session = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return session.run(None, feeds(result, bindings))

    runs = [run(m) for m in (original, annotated)]
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
