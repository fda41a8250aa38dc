"""The fast paths give the same answers as the general ones: value_info bytes,
reused rule results, graphs stored out of order."""

import os
import subprocess
import sys

import onnx
import pytest
from helpers import I64, F, model
from onnx import TensorProto, helper

import onnxsym
from onnxsym import GraphError, dims
from onnxsym.output.wire import ValueInfoBytes, tensor_type_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_value_info_bytes_parse_as_the_type_protobuf_builds():
    b = dims.sym("batch")
    for shape in [(), (3,), (b, 2 * b + 1, 0), (2**40, b // 2), None]:
        want = helper.make_tensor_type_proto(TensorProto.FLOAT, None if shape is None else
                                             [d if isinstance(d, int) else str(d) for d in shape])
        got = onnx.TypeProto.FromString(tensor_type_bytes(TensorProto.FLOAT, shape))
        assert got == want, shape


def test_identical_nodes_that_make_fresh_symbols_get_their_own():
    # A Reshape to a shape that is runtime data: two of them are two unknowns each.
    m = model([helper.make_node("Reshape", ["x", "s"], ["a"], name="r1"),
               helper.make_node("Reshape", ["x", "s"], ["b"], name="r2")],
              [("x", F, ["batch", 4]), ("s", I64, [2])], ["a", "b"])
    r = onnxsym.infer(m)
    a, b = r.shape("a"), r.shape("b")
    assert len(a) == len(b) == 2
    assert all(x is not y for x, y in zip(a, b))
    assert {u.value for u in r.unresolved()} == {"a", "b"}


def test_identical_nodes_share_results_and_names_stay_their_own():
    nodes = [helper.make_node("Transpose", ["x"], ["t1"], name="a", perm=[1, 0]),
             helper.make_node("Transpose", ["x"], ["t2"], name="b", perm=[1, 0]),
             helper.make_node("Transpose", ["x"], ["t3"], name="c", perm=[0, 1])]
    r = onnxsym.infer(model(nodes, [("x", F, ["batch", 4])], ["t1", "t2", "t3"]))
    batch = dims.expr_of(r.symbols.symbols["batch"])
    assert r.shape("t1") == r.shape("t2") == (4, batch)
    assert r.shape("t3") == (batch, 4)  # another attribute: not the cached result


def test_a_graph_stored_out_of_order_infers_the_same():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r"),
             helper.make_node("Shape", ["y"], ["s"], name="s"),
             helper.make_node("Reshape", ["x", "s"], ["z"], name="z")]
    inputs = [("x", F, ["batch", 3])]
    forward = onnxsym.infer(model(nodes, inputs, ["z"]))
    backward = onnxsym.infer(model(nodes[::-1], inputs, ["z"]))
    assert forward.shape("z") == backward.shape("z") == forward.shape("y")


def test_an_order_that_breaks_midway_infers_the_same_and_reports_progress_once_per_node():
    # 'late' reads 'b' before the node making it: the nodes before it ran in stored order.
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="a"),
             helper.make_node("Add", ["b", "a"], ["late"], name="late"),
             helper.make_node("Relu", ["x"], ["b"], name="b"),
             helper.make_node("Relu", ["a"], ["c"], name="c"),
             helper.make_node("Shape", ["late"], ["s"], name="s")]
    inputs = [("x", F, ["batch", 3])]
    in_order = onnxsym.infer(model([nodes[0], nodes[2], nodes[1], nodes[3], nodes[4]], inputs, ["s", "c"]))
    calls = []
    broken = onnxsym.infer(model(nodes, inputs, ["s", "c"]), progress=lambda done, total: calls.append((done, total)))
    for name in "a", "b", "c", "late", "s":
        assert broken.shape(name) == in_order.shape(name), name
    assert broken.values["s"].value == in_order.values["s"].value
    assert calls == [(k, 5) for k in range(1, 6)]


def test_a_bad_graph_after_a_good_start_is_still_named():
    start = [helper.make_node("Relu", ["x"], ["a"], name="fine")]
    bad = {
        "cycle through nodes: n1, n2": [helper.make_node("Relu", ["q"], ["p"], name="n1"),
                                        helper.make_node("Relu", ["p"], ["q"], name="n2")],
        "'x2' produces 'x', which is already a graph input": [helper.make_node("Relu", ["a"], ["x"], name="x2")],
        "'a' is produced twice": [helper.make_node("Relu", ["x"], ["a"], name="again")],
        "reads its own output 'o'": [helper.make_node("Add", ["a", "o"], ["o"], name="self")],
    }
    for message, nodes in bad.items():
        with pytest.raises(GraphError, match=message):
            onnxsym.infer(model(start + nodes, [("x", F, ["batch", 3])], ["a"]))


def test_the_mlir_export_loads_only_when_used():
    # annotating needs none of it: the command line starts faster
    code = ("import sys, onnxsym.cli; assert 'onnxsym.mlir' not in sys.modules; "
            "from onnxsym import to_mlir; print(to_mlir.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith("onnxsym.mlir")


@pytest.mark.parametrize("command", ["", "annotate", "check", "show", "explain", "verify", "domain", "cost", "mlir"])
def test_help_and_usage_errors_import_no_onnx_numpy_or_rules(command):
    # a person waits on --help and on a typo: those need click alone (bench/speed.py --quick times it)
    code = ("import sys; from onnxsym.cli import main\n"
            "try:\n    main(sys.argv[1:], prog_name='onnxsym')\nexcept SystemExit as e:\n    code = e.code\n"
            "heavy = sorted(m for m in ('onnx', 'numpy', 'onnxruntime', 'sympy', 'onnxsym.rules', 'onnxsym.dims')"
            " if m in sys.modules)\nprint(code, heavy)")
    for args in ([command, "--help"], [command, "--no-such-option"] if command else ["nosuch"]):
        out = subprocess.run([sys.executable, "-c", code, *filter(None, args)], capture_output=True, text=True, cwd=ROOT)
        assert out.stdout.strip().splitlines()[-1] in ("0 []", "2 []"), (args, out.stdout, out.stderr)


def test_value_info_entries_of_any_name_length_parse_as_protobuf_builds_them():
    b = dims.sym("batch")
    names = ["y", "x" * 120, "z" * 200, "w" * 3000, "größe/Mul_output_0"]
    shapes = [(b, 4), (b, 2 * b + 1), (), None, (b, 3)]
    added = ValueInfoBytes()
    for name, shape in zip(names, shapes):
        added.add_tensor(name, TensorProto.FLOAT, shape)
    got = onnx.GraphProto()
    added.merge_into(got)
    want = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None if shape is None else
                                          [d if isinstance(d, int) else str(d) for d in shape])
            for name, shape in zip(names, shapes)]
    assert list(got.value_info) == want
