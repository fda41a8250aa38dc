"""An initializer that is also a graph input: a constant below IR version 4 (the
caller cannot override it there, in onnxruntime), a default the caller may replace
from IR 4 on, unless constant_initializers says it is a constant."""

import os

import numpy as np
import onnx
import onnxruntime as ort
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

import onnxsym
from onnxsym import dims
from onnxsym.cli import main
from onnxsym.commands.verify import verify

ZOO = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", "light_squeezenet.onnx")


def _zoo_squeezenet():
    """onnx's shipped IR-3 SqueezeNet (weights made by ConstantOfShape of initializers that are
    also graph inputs), its batch made symbolic."""
    m = onnx.load(ZOO)
    assert m.ir_version == 3
    inits = {t.name for t in m.graph.initializer}
    (x,) = [i for i in m.graph.input if i.name not in inits]
    x.type.tensor_type.shape.dim[0].dim_param = "batch"
    return m


def test_ir3_zoo_model_resolves_every_dim_as_onnxruntime_computes_it():
    m = _zoo_squeezenet()
    res = onnxsym.infer(m)
    assert res.stats()["unresolved_dims"] == 0 and not res.fresh
    report = verify(m, assignments=[{"batch": 1}, {"batch": 2}], result=res)
    assert report.ok and report.unresolved_dims == 0 and report.checked_dims > 300, report.mismatches[:3]
    # the caller-given knob changes nothing here: below IR 4 they are constants anyway
    assert onnxsym.infer(m, constant_initializers=True).stats() == res.stats()


def _shape_input_model(ir_version):
    """y = x + ConstantOfShape(s), where s is an initializer [1, 4] that is also a graph input."""
    s = numpy_helper.from_array(np.array([1, 4], np.int64), "s")
    g = helper.make_graph(
        [helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos"), helper.make_node("Add", ["x", "c"], ["y"], name="add")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]),
              helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_empty_tensor_value_info("y")], initializer=[s])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)])
    m.ir_version = ir_version
    return m


def _ort_shapes(m, feeds_of_batch):
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return {b: sess.run(["y"], feeds(b))[0].shape for b, feeds in feeds_of_batch.items()}


def _x(b):
    return {"x": np.ones((b, 4), np.float32)}


def test_below_ir4_an_initializer_input_is_a_constant():
    m = _shape_input_model(3)
    res = onnxsym.infer(m)
    assert res.shape("c") == (1, 4) and not res.fresh
    for b, shape in _ort_shapes(m, {2: _x, 5: _x}).items():
        assert tuple(dims.evaluate(d, {"batch": b}) for d in res.shape("y")) == shape == (b, 4)


def test_from_ir4_it_may_be_fed_unless_constant_initializers():
    m = _shape_input_model(8)
    res = onnxsym.infer(m)
    (c0, c1) = res.shape("c")
    assert {s.name for s in dims.free_symbols(c0) | dims.free_symbols(c1)} <= set(res.fresh)  # a fed s changes c
    # onnxruntime takes a fed s: the shape follows it, which no constant reading could know
    fed = _ort_shapes(m, {2: lambda b: {**_x(b), "s": np.array([b, 1], np.int64)},
                          3: lambda b: {**_x(b), "s": np.array([1, 4], np.int64)}})
    assert fed == {2: (2, 4), 3: (3, 4)}
    const = onnxsym.infer(m, constant_initializers=True)
    assert const.shape("c") == (1, 4) and not const.fresh
    for b, shape in _ort_shapes(m, {2: _x, 6: _x}).items():
        assert tuple(dims.evaluate(d, {"batch": b}) for d in const.shape("y")) == shape
    annotated = onnxsym.annotate(m, constant_initializers=True)
    assert [d.dim_param or d.dim_value for d in annotated.graph.output[0].type.tensor_type.shape.dim] == ["batch", 4]


def test_cli_constant_initializers(tmp_path):
    p = str(tmp_path / "m.onnx")
    onnx.save(_shape_input_model(8), p)
    assert CliRunner().invoke(main, ["check", p, "-q"]).exit_code == 1
    r = CliRunner().invoke(main, ["check", p, "--constant-initializers"])
    assert r.exit_code == 0, r.output
    out = str(tmp_path / "o.onnx")
    r = CliRunner().invoke(main, ["annotate", p, "-o", out, "--constant-initializers", "-q"])
    assert r.exit_code == 0, r.output
    assert [d.dim_param or d.dim_value for d in onnx.load(out).graph.output[0].type.tensor_type.shape.dim] == ["batch", 4]
    r = CliRunner().invoke(main, ["show", p, "--constant-initializers", "--name", "y"])
    assert r.exit_code == 0 and "float32[batch, 4]" in r.output, r.output
