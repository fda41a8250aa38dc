"""Bad input: one clear line naming the place, exit code 2, a typed exception from
the library, and nothing written; a legal but unknowable model gets fresh symbols
and a warning instead."""

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from helpers import F, model
from onnx import helper, numpy_helper

import onnxsym
from onnxsym import GraphError, ModelLoadError, ShapeContradiction
from onnxsym.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
BERT = os.path.join(HERE, "..", "models", "bert_tiny_ts.onnx")


def _relu(inputs=(("x", F, ["batch", 3]),), outputs=(("y", F, None),), **kw):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu_1")], list(inputs), list(outputs), **kw)


def write_not_onnx(p):
    p.write_text("name,value\nbatch,3\n")


def write_empty(p):
    p.write_bytes(b"")


def write_truncated(p):
    data = open(BERT, "rb").read()
    p.write_bytes(data[: len(data) // 2])


def write_cycle(p):
    onnx.save(model([helper.make_node("Relu", ["b"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["b"], name="n2")],
                    [("x", F, [2])], [("a", F, None)]), str(p))


def write_dangling(p):
    onnx.save(model([helper.make_node("Relu", ["ghost"], ["y"], name="reader")], [("x", F, [2])], [("y", F, None)]),
              str(p))


def write_produced_twice(p):
    onnx.save(model([helper.make_node("Relu", ["x"], ["y"], name="first"),
                     helper.make_node("Sigmoid", ["x"], ["y"], name="second")], [("x", F, [2])], [("y", F, None)]),
              str(p))


def write_no_opset(p):
    m = _relu()
    del m.opset_import[:]
    onnx.save(m, str(p))


def write_future_opset(p):
    m = _relu()
    m.opset_import[0].version = 999
    onnx.save(m, str(p))


def write_wrong_attr_type(p):
    onnx.save(model([helper.make_node("Transpose", ["x"], ["y"], name="tr", perm=[1.0, 0.0])],
                    [("x", F, ["batch", 3])], [("y", F, None)]), str(p))


def write_broadcast_contradiction(p):
    onnx.save(model([helper.make_node("Add", ["x", "z"], ["y"], name="adder")],
                    [("x", F, ["batch", 3]), ("z", F, ["batch", 4])], [("y", F, None)]), str(p))


def write_reshape_bad_product(p):
    shape = numpy_helper.from_array(np.array([4, 2], np.int64), "target")
    onnx.save(model([helper.make_node("Reshape", ["x", "target"], ["y"], name="bad_reshape")],
                    [("x", F, [2, 3])], [("y", F, None)], inits=[shape]), str(p))


def write_missing_external_data(p):
    w = numpy_helper.from_array(np.ones((3, 3), np.float32), "weight")
    m = model([helper.make_node("MatMul", ["x", "weight"], ["y"], name="mm")], [("x", F, ["batch", 3])],
              [("y", F, None)], inits=[w])
    onnx.save(m, str(p), save_as_external_data=True, location="weights.bin", size_threshold=0)
    os.remove(os.path.join(os.path.dirname(str(p)), "weights.bin"))


ERRORS = [
    # (case, writer, library exception, text the message must contain)
    ("not_onnx", write_not_onnx, ModelLoadError, "not an ONNX model"),
    ("empty", write_empty, ModelLoadError, "empty"),
    ("truncated", write_truncated, ModelLoadError, "not an ONNX model"),
    ("cycle", write_cycle, GraphError, "cycle through nodes: n1, n2"),
    ("dangling_input", write_dangling, GraphError, "'reader' reads 'ghost'"),
    ("produced_twice", write_produced_twice, GraphError, "'first' and by node 'second'"),
    ("no_opset_import", write_no_opset, GraphError, "'relu_1': the model imports no opset"),
    ("future_opset", write_future_opset, ModelLoadError, "opset 999 of 'ai.onnx'"),
    ("wrong_attribute_type", write_wrong_attr_type, GraphError, "'tr': attribute 'perm' must be INTS"),
    ("broadcast_contradiction", write_broadcast_contradiction, ShapeContradiction, "'adder'"),
    ("reshape_bad_product", write_reshape_bad_product, ShapeContradiction, "'bad_reshape'"),
    ("missing_external_data", write_missing_external_data, ModelLoadError, "'weights.bin' is missing"),
]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "onnxsym.cli", *args], capture_output=True, text=True,
                          cwd=os.path.join(HERE, ".."))


@pytest.mark.parametrize("case,writer,exc,text", ERRORS, ids=[e[0] for e in ERRORS])
def test_library_raises_a_typed_error_naming_the_place(tmp_path, case, writer, exc, text):
    p = tmp_path / "m.onnx"
    writer(p)
    with pytest.raises(exc, match=None) as info:
        onnxsym.annotate(str(p))
    assert text in str(info.value)
    assert len(str(info.value).splitlines()) == 1


@pytest.mark.parametrize("case,writer,exc,text", ERRORS, ids=[e[0] for e in ERRORS])
def test_cli_prints_one_line_exits_2_and_writes_nothing(tmp_path, case, writer, exc, text):
    p = tmp_path / "m.onnx"
    writer(p)
    before = sorted(os.listdir(tmp_path))
    data = p.read_bytes()
    r = CliRunner().invoke(main, ["annotate", str(p), "-o", str(tmp_path / "out.onnx")])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert text in lines[0]
    assert sorted(os.listdir(tmp_path)) == before  # no output, no temporary file left behind
    assert p.read_bytes() == data


@pytest.mark.parametrize("writer", [write_truncated, write_wrong_attr_type])
def test_a_real_process_prints_one_line_without_traceback(tmp_path, writer):
    p = tmp_path / "m.onnx"
    writer(p)
    r = _cli("annotate", str(p))
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert not os.path.exists(tmp_path / "m.sym.onnx")


def test_unknown_domain_is_legal_but_unknowable_fresh_symbols_and_a_warning(tmp_path):
    m = model([helper.make_node("Foo", ["x"], ["y"], name="foo", domain="acme.ops"),
               helper.make_node("Relu", ["x"], ["z"], name="r")],
              [("x", F, ["batch", 3])], [("y", F, None), ("z", F, None)], opsets=[("acme.ops", 1)])
    r = onnxsym.infer(m)
    assert any("unknown operator 'acme.ops::Foo'" in w for w in r.warnings)
    assert [u.value for u in r.unresolved()] == ["y"]
    assert [str(d) for d in r.shape("z")] == ["batch", "3"]
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    cli = CliRunner().invoke(main, ["annotate", str(p), "-o", str(tmp_path / "out.onnx")])
    assert cli.exit_code == 0 and "acme.ops::Foo" in cli.stderr


def test_if_with_branches_of_different_rank_is_an_unknown_rank_with_its_reason(tmp_path):
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                               [helper.make_empty_tensor_value_info("t")])
    else_g = helper.make_graph([helper.make_node("Unsqueeze", ["x", "axes"], ["e"])], "else", [],
                               [helper.make_empty_tensor_value_info("e")])
    axes = numpy_helper.from_array(np.array([0], np.int64), "axes")
    m = model([helper.make_node("If", ["c"], ["y"], name="branchy", then_branch=then_g, else_branch=else_g)],
              [("c", onnx.TensorProto.BOOL, []), ("x", F, ["batch", 3])], [("y", F, None)], inits=[axes])
    (u,) = onnxsym.infer(m).unresolved()
    assert (u.value, u.axis) == ("y", None) and "ranks 2 and 3" in u.provenance[0].reason
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    r = CliRunner().invoke(main, ["annotate", str(p), "-o", str(tmp_path / "out.onnx")])
    assert r.exit_code == 0 and "    y (rank unknown): If 'branchy': the If branches give ranks 2 and 3" in r.output
    assert "next: the If is decided by the graph input c: give its value (--value c=...)" in r.output, r.output


def test_unparsable_dim_param_is_one_symbol_with_a_warning():
    r = onnxsym.infer(_relu(inputs=(("x", F, ["(batch", 3]),)))
    (d, three) = r.shape("y")
    assert onnxsym.evaluate(d, {"(batch": 5}) == 5 and three == 3
    assert any("'(batch' is not an expression" in w for w in r.warnings)


@pytest.mark.parametrize("text", ["+".join(["a"] * 5000), "*".join(["(a + b + c + d + e + f + g + h)"] * 6)])
def test_a_dim_param_too_large_to_read_is_one_symbol_with_a_warning(text):
    """5000 terms deep (a RecursionError), or a product expanding past what the algebra follows:
    both were an internal error; as any text outside the grammar, it names one symbol."""
    r = onnxsym.infer(_relu(inputs=(("x", F, [text, 3]),)))
    (d, three) = r.shape("y")
    assert onnxsym.evaluate(d, {text: 5}) == 5 and three == 3
    assert any("is not an expression" in w for w in r.warnings)


def test_annotate_refuses_to_replace_an_existing_output_without_force(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(_relu(), str(p))
    out = tmp_path / "out.onnx"
    out.write_bytes(b"precious")
    r = CliRunner().invoke(main, ["annotate", str(p), "-o", str(out)])
    assert r.exit_code == 2 and "--force" in r.stderr
    assert out.read_bytes() == b"precious"
    r = CliRunner().invoke(main, ["annotate", str(p), "-o", str(out), "--force", "-q"])
    assert r.exit_code == 0, r.output
    assert onnx.load(str(out)).graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"


def test_an_interrupted_write_leaves_no_file_and_the_old_one_intact(tmp_path, monkeypatch):
    """Ctrl-C after the bytes are written but before the rename: the temporary file goes,
    the existing output stays as it was."""
    from onnxsym.output import atomic

    out = tmp_path / "out.onnx"
    out.write_bytes(b"the old output")

    def interrupted(src, dst):
        raise KeyboardInterrupt()

    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.save_model(_relu(), str(out))
    assert os.listdir(tmp_path) == ["out.onnx"] and out.read_bytes() == b"the old output"


def test_the_annotated_file_gets_the_mode_a_plain_write_gives(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(_relu(), str(p))
    out = tmp_path / "out.onnx"
    r = CliRunner().invoke(main, ["annotate", str(p), "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask
