"""infer/annotate take the objects export scripts hold: an ``onnx_ir.Model`` and a torch
``ONNXProgram``; annotate gives the same kind back, and the object given stays as it was.
The dims written are checked against onnxruntime's runs at two sizes."""

import subprocess
import sys

import numpy as np
import onnx
import pytest
from oracle import check_written_runs

import onnxsym
from onnxsym.errors import UserInputError

ir = pytest.importorskip("onnx_ir")

BERT = "models/bert_tiny_ts.onnx"
SIZES = [{"batch": 1, "seq": 3}, {"batch": 2, "seq": 7}]


def _bert_feeds(binding):
    shape = (binding["batch"], binding["seq"])
    return {"input_ids": np.ones(shape, np.int64), "attention_mask": np.ones(shape, np.int64)}


def _proto(model):
    return ir.to_proto(model)


def test_infer_takes_an_ir_model():
    result = onnxsym.infer(ir.load(BERT))
    assert [str(d) for d in result.shape("last_hidden_state")] == ["batch", "seq", "64"]
    assert result.unresolved() == []


def test_annotate_returns_an_ir_model_that_runs_as_written():
    given = ir.load(BERT)
    assert [i.name for i in given.graph.inputs] == list(_bert_feeds(SIZES[0]))
    before = onnx.load(BERT)
    as_given = _proto(given).SerializeToString()
    annotated = onnxsym.annotate(given)
    assert isinstance(annotated, ir.Model) and annotated is not given
    proto = _proto(annotated)
    assert len(proto.graph.value_info) > 100
    assert _proto(given).SerializeToString() == as_given  # the one given: unchanged
    assert check_written_runs(before, proto, SIZES, _bert_feeds) > 100
    meta = {p.key for p in proto.metadata_props}
    assert any(k.startswith("onnxsym") for k in meta)


def test_an_ir_model_with_a_wrong_input_is_refused_by_name():
    with pytest.raises(UserInputError, match="onnx_ir.Model or a torch ONNXProgram, got list"):
        onnxsym.infer([])


def test_nothing_imports_onnx_ir_or_torch_for_a_proto():
    code = (f"import sys, onnxsym; onnxsym.annotate(r'{BERT}'); onnxsym.infer(open(r'{BERT}','rb').read()); "
            "print(sorted(m for m in ('onnx_ir', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_kind_is_told_without_importing():
    from onnxsym.model import objects

    class ONNXProgram:  # a class of that name from elsewhere is no torch program
        pass

    assert objects.kind(ONNXProgram()) is None
    assert objects.kind(onnx.load(BERT)) is None
    assert objects.kind(ir.load(BERT)) == "onnx_ir"


# ---------------------------------------------------------------- torch's dynamo exporter

def _exported(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(8, 6)

        def forward(self, x):  # x: [batch, seq, 8]
            y = self.proj(x).relu()
            b, s, _ = y.shape
            return y.reshape(b, s * 2, 3).softmax(-1), y.mean(1)

    torch.manual_seed(0)
    batch, seq = torch.export.Dim("batch", min=1, max=64), torch.export.Dim("seq", min=2, max=128)
    program = torch.onnx.export(Net().eval(), (torch.randn(2, 5, 8),), dynamo=True, optimize=False,
                                input_names=["x"], dynamic_shapes=({0: batch, 1: seq},), verbose=False)
    return program


def _x_feeds(binding):
    return {"x": np.random.default_rng(0).standard_normal((binding["batch"], binding["seq"], 8)).astype(np.float32)}


@pytest.mark.torch
@pytest.mark.slow  # importing torch and exporting: about 10 s
def test_annotate_takes_an_onnx_program(tmp_path):
    program = _exported(tmp_path)
    before = ir.to_proto(program.model)
    as_given = before.SerializeToString()
    assert [d.dim_param for d in before.graph.input[0].type.tensor_type.shape.dim[:2]] == ["batch", "seq"]
    result = onnxsym.infer(program)
    out = result.model.graph.output
    assert [str(d) for d in result.shape(out[0].name)] == ["batch", "2*seq", "3"]
    annotated = onnxsym.annotate(program)
    assert type(annotated) is type(program) and annotated is not program
    assert annotated.exported_program is program.exported_program
    proto = ir.to_proto(annotated.model)
    assert len(proto.graph.value_info) > len(before.graph.value_info)
    assert ir.to_proto(program.model).SerializeToString() == as_given  # the one given: unchanged
    sizes = [{"batch": 1, "seq": 3}, {"batch": 3, "seq": 9}]
    assert check_written_runs(before, proto, sizes, _x_feeds) > 10
    path = tmp_path / "saved.onnx"
    annotated.save(str(path))  # saves as the one given does
    assert len(onnx.load(str(path)).graph.value_info) == len(proto.graph.value_info)
