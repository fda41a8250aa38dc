"""MLIR export: parsed and verified by upstream MLIR, bindings checked against onnxruntime,
and the symbol dialect seed's two examples reproduced."""

import glob
import os
import re

import compilers  # noqa: F401  (first: without the compilers, this module is skipped)
import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from helpers import init, model
from mlir_check import Checker, bound_symbols, parse, runtime_shapes, runtime_shapes_at, with_definitions
from onnx import TensorProto, helper, numpy_helper

import onnxsym
from onnxsym.cli import main
from onnxsym.commands.verify import default_assignments
from onnxsym.dims import INT64_MAX
from onnxsym.mlir import STYLES, encoding_to_symbol, to_mlir
from onnxsym.mlir.encoding import MlirFormatError
from onnxsym.mlir.types import ELEMENT_TYPES

pytestmark = pytest.mark.compilers

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = sorted(glob.glob(os.path.join(HERE, "..", "models", "*.onnx")))
F16 = TensorProto.FLOAT16


def _roots(result):
    return sorted(result.roots())


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_every_model_parses_and_its_bindings_match_the_runtime(path):
    result = onnxsym.infer(path)
    modules = {style: parse(to_mlir(result, style=style, generic=True)) for style in STYLES}
    runs = runtime_shapes_at(result, default_assignments(_roots(result), count=2, seed=3))
    check = Checker(modules["propagate"], result.model)
    assert check.dynamic_dims_are_bound() > 0
    for shapes in runs:
        assert check.maps_match_runtime(shapes) > 0
    # unfold-symbolic-int leaves no binding; each dynamic dim a value reads is a tensor.dim
    unfolded = to_mlir(result, style="unfolded")
    assert "symbol.bind_symbolic_shape" not in unfolded and "tensor.dim" in unfolded
    # the erased form has no symbol op; the pretty erased form is plain MLIR too
    erased = to_mlir(result, style="erased")
    assert "symbol." not in erased
    parse(erased)


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_encoding_form_reads_back_to_the_propagate_forms_bindings(path):
    result = onnxsym.infer(path)
    default = to_mlir(result, generic=True)
    encoded = to_mlir(result, style="encoding", generic=True)
    assert "symbol." not in encoded and re.search(r", \[@S\d+, \d+", encoded)  # every dim named
    with pytest.raises(MlirFormatError, match="no symbol.symbolic_int defines"):
        encoding_to_symbol(encoded)  # symbol-to-encoding drops the definitions
    back = encoding_to_symbol(with_definitions(default, encoded))
    assert bound_symbols(parse(back), result.model) == bound_symbols(parse(default), result.model)


# --------------------------------------------------------------------------- the seed's examples

def _ssa_normalized(lines):
    """The lines with SSA names renamed %v0, %v1, ... in order of first appearance."""
    names = {}

    def rename(m):
        return names.setdefault(m.group(0), f"%v{len(names)}")
    return [re.sub(r"%[A-Za-z0-9_$.-]+", rename, line.strip()) for line in lines]


def _concat_graph():
    # seed 002, propagate-symbol: %add0 = %arg0 + %arg0; %concat = concat dim(0) %add0, %add0; %add1 = %concat + %concat
    return model([helper.make_node("Add", ["arg0", "arg0"], ["add0"]),
                  helper.make_node("Concat", ["add0", "add0"], ["concat"], axis=0),
                  helper.make_node("Add", ["concat", "concat"], ["add1"])],
                 [("arg0", F16, ["n", 640])], ["add1"])


# The seed's lines after propagate-symbol, without the bindings of its tensor.empty values
# (the ONNX graph has none). The seed abbreviates the bindings and symbolic_ints; the parts
# it leaves out are written as in its unfold-symbolic-int example: the attribute dictionary,
# the affine map and the type.
SEED_PROPAGATE = """\
%S0 = symbol.symbolic_int @S0 {max_val = 9223372036854775807 : i64, min_val = 1 : i64} : index
symbol.bind_symbolic_shape %arg0, [%S0], affine_map<()[s0] -> (s0, 640)> : tensor<?x640xf16>
symbol.bind_symbolic_shape %add0, [%S0], affine_map<()[s0] -> (s0, 640)> : tensor<?x640xf16>
%S1 = symbol.symbolic_int @S1 [%S0, %S0], affine_map<()[s0, s1] -> (s0 + s1)> {max_val = 9223372036854775807 : i64, min_val = 2 : i64} : index
symbol.bind_symbolic_shape %concat, [%S1], affine_map<()[s0] -> (s0, 640)> : tensor<?x640xf16>
symbol.bind_symbolic_shape %add1, [%S1], affine_map<()[s0] -> (s0, 640)> : tensor<?x640xf16>
"""


def test_seed_propagate_symbol_concat_example():
    m = _concat_graph()
    text = to_mlir(m)
    symbol_lines = [line for line in text.splitlines() if "symbol." in line]
    assert _ssa_normalized(symbol_lines) == _ssa_normalized(SEED_PROPAGATE.splitlines())
    # and the binding of %concat is right at runtime
    result = onnxsym.infer(m)
    check = Checker(parse(to_mlir(result, generic=True)), m)
    for n in (1, 5):
        assert check.maps_match_runtime(runtime_shapes(result, {"n": n})) == 8


SEED_UNFOLD_BEFORE = """\
func.func @test_already_bind_symbol_0(%arg0: tensor<?x640x?xf16>) -> tensor<?x640x?xf16> {
  %S0 = symbol.symbolic_int @S0 {max_val = 9223372036854775807 : i64, min_val = 0 : i64} : index
  %S1 = symbol.symbolic_int @S1 {max_val = 9223372036854775807 : i64, min_val = 0 : i64} : index
  symbol.bind_symbolic_shape %arg0, [%S0, %S1], affine_map<()[s0, s1] -> (s0, 640, s1)> : tensor<?x640x?xf16>
}
"""

# As bishengir-opt writes it (and its own test of the pass checks): each tensor.dim is inserted
# at the start of the block, so the last unfolded comes first; the seed lists them the other way.
SEED_UNFOLD_AFTER = """\
func.func @test_already_bind_symbol_0(%arg0: tensor<?x640x?xf16>) -> tensor<?x640x?xf16> {
  %c2 = arith.constant 2 : index
  %dim_0 = tensor.dim %arg0, %c2 : tensor<?x640x?xf16>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?x640x?xf16>
}
"""


def _function_lines(text):
    """The function of a one-function module, without its return (the seed's examples have none)."""
    lines = [line for line in text.splitlines() if line.strip() not in ("module {", "")]
    assert lines[-1] == "}" and lines[-2] == "  }" and lines[-3].strip().startswith("return ")
    return lines[:-3] + [lines[-2]]


def test_seed_unfold_symbolic_int_example():
    g = helper.make_graph([], "test_already_bind_symbol_0",
                          [helper.make_tensor_value_info("arg0", F16, ["S0", 640, "S1"])],
                          [helper.make_tensor_value_info("arg0", F16, ["S0", 640, "S1"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    # the seed's symbols range from 0
    result = onnxsym.infer(m, ranges={"S0": (0, INT64_MAX), "S1": (0, INT64_MAX)})
    before = _function_lines(to_mlir(result))
    after = _function_lines(to_mlir(result, style="unfolded"))
    assert _ssa_normalized(before) == _ssa_normalized(SEED_UNFOLD_BEFORE.splitlines())
    assert _ssa_normalized(after) == _ssa_normalized(SEED_UNFOLD_AFTER.splitlines())
    parse(to_mlir(result, style="unfolded", generic=True))


# --------------------------------------------------------------------------- forms and options

def test_derived_and_opaque_symbols():
    """A flatten gives a product of symbols (opaque: own symbol, expression recorded);
    a slice by one gives s0 - 1 (derived: a map over the root)."""
    text = to_mlir(os.path.join(HERE, "..", "models", "edge_shape_arith.onnx"), names=True)
    assert re.search(r'symbol.symbolic_int @S\d+ \{expression = "batch\*seq"', text)
    assert re.search(r"@S\d+ \[%seq\], affine_map<\(\)\[s0\] -> \(s0 \* 8\)>", text)
    assert re.search(r"@S\d+ \[%seq\], affine_map<\(\)\[s0\] -> \(s0 - 1\)>", text)
    assert "%batch = symbol.symbolic_int @batch {" in text


def test_min_of_two_symbols_gets_its_own_symbolic_int():
    # x[:len(y)] has min(a, b) rows: not affine, so a symbolic_int of its own with the expression
    m = model([helper.make_node("Shape", ["y"], ["n"]),
               helper.make_node("Slice", ["x", "zero", "n", "axis"], ["z"]),
               helper.make_node("Concat", ["z", "x"], ["w"], axis=0)],
              [("x", TensorProto.FLOAT, ["a", 3]), ("y", TensorProto.FLOAT, ["b"])], ["w"],
              [init("zero", np.array([0], np.int64)), init("axis", np.array([0], np.int64))])
    result = onnxsym.infer(m)
    assert str(result.shape("z")[0]) == "min(a, b)"
    text = to_mlir(result)
    assert '%S2 = symbol.symbolic_int @S2 {expression = "min(S0, S1)", max_val = 9223372036854775807 : i64, ' \
           'min_val = 1 : i64} : index' in text
    # the concat's rows, min(a, b) + a, are affine over that symbol and a
    assert "@S3 [%S2, %S0], affine_map<()[s0, s1] -> (s0 + s1)>" in text
    check = Checker(parse(to_mlir(result, generic=True)), m)
    assert check.dynamic_dims_are_bound() == 4
    for a, b in ((2, 5), (6, 3)):
        assert check.maps_match_runtime(runtime_shapes(result, {"a": a, "b": b})) == 7


def test_element_types_are_mapped_exactly_and_parse():
    mapped = {TensorProto.BFLOAT16: "bf16", TensorProto.FLOAT8E4M3FN: "f8E4M3FN", TensorProto.FLOAT8E5M2: "f8E5M2",
              TensorProto.BOOL: "i1", TensorProto.UINT8: "ui8", TensorProto.COMPLEX64: "complex<f32>",
              TensorProto.STRING: "!onnx.string", TensorProto.FLOAT16: "f16", TensorProto.INT4: "i4"}
    for k, v in mapped.items():
        assert ELEMENT_TYPES[k] == v
    types = sorted(ELEMENT_TYPES)
    g = helper.make_graph([helper.make_node("Identity", [f"x{t}"], [f"y{t}"]) for t in types], "types",
                          [helper.make_tensor_value_info(f"x{t}", t, ["n", 2]) for t in types],
                          [helper.make_tensor_value_info(f"y{t}", t, None) for t in types])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    text = to_mlir(m, generic=True)
    for t in types:
        assert f"tensor<?x2x{ELEMENT_TYPES[t]}>" in text
    parse(text)


def _subgraph_model():
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    return model([helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                  helper.make_node("Greater", ["s", "zero"], ["c"]),
                  helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other),
                  helper.make_node("Split", ["y", "sizes"], ["p", "q"], axis=1),
                  helper.make_node("Concat", ["q", "p", "x"], ["r"], axis=1)],
                 [("x", TensorProto.FLOAT, ["batch", 6])], ["r"],
                 [init("zero", np.float32(0)), init("sizes", np.array([2, 4], np.int64))], opset=17)


def test_subgraphs_are_regions_and_multi_results_parse():
    m = _subgraph_model()
    result = onnxsym.infer(m)
    for style in STYLES:
        text = to_mlir(result, style=style, generic=True)
        module = parse(text)
        assert '"onnx.If"(%c) ({' in text and '"onnx.Yield"' in text and "%p:2 = " in text
        assert 'onnx.regions = ["then_branch", "else_branch"]' in text
        assert text.index('"onnx.Relu"') < text.index('"onnx.Neg"')  # then before else
        check = Checker(module, m)
        if style == "propagate":
            assert check.dynamic_dims_are_bound() > 0
            for b in (1, 4):
                check.maps_match_runtime(runtime_shapes(result, {"batch": b}))
    default = to_mlir(result, generic=True)
    back = encoding_to_symbol(with_definitions(default, to_mlir(result, style="encoding", generic=True)))
    assert bound_symbols(parse(back), m) == bound_symbols(parse(default), m)


def test_weights_are_elided_by_default_and_embedded_on_request():
    path = os.path.join(HERE, "..", "models", "cnn_tiny_ts.onnx")
    model = onnx.load(path)
    big = next(t for t in model.graph.initializer if np.prod(t.dims) > 8)
    assert "dense_resource<__elided__>" in to_mlir(path) and "dialect_resources" not in to_mlir(path)
    text = to_mlir(path, weights=True, generic=True)
    parse(text)
    key = re.sub(r"[^A-Za-z0-9_]", "_", big.name)
    blob = re.search(rf"^\s*{re.escape(key)}: \"0x([0-9A-F]+)\"", text, re.M).group(1)
    data = bytes.fromhex(blob)
    assert int.from_bytes(data[:4], "little") == 4  # alignment of f32
    assert np.array_equal(np.frombuffer(data[4:], np.float32), numpy_helper.to_array(big).reshape(-1))


def test_symbol_names_are_stable_and_user_names_on_request():
    path = os.path.join(HERE, "..", "models", "llama_tiny_dynamo.onnx")
    a, b = to_mlir(path), to_mlir(path)
    assert a == b
    assert re.findall(r"symbol.symbolic_int @(\w+)", a)[:3] == ["S0", "S1", "S2"]
    named = to_mlir(path, names=True)
    assert {"batch", "seq", "past"} <= set(re.findall(r"symbol.symbolic_int @(\w+)", named))


def test_encoding_to_symbol_refuses_other_text():
    with pytest.raises(MlirFormatError):
        encoding_to_symbol(to_mlir(_concat_graph()))


# --------------------------------------------------------------------------- command line

def test_cli_mlir_and_annotate_mlir(tmp_path):
    src = str(tmp_path / "m.onnx")
    onnx.save(_concat_graph(), src)
    r = CliRunner().invoke(main, ["mlir", src, "-o", str(tmp_path / "g.mlir"), "--generic", "--style", "unfolded"])
    assert r.exit_code == 0, r.output
    parse((tmp_path / "g.mlir").read_text())
    r = CliRunner().invoke(main, ["annotate", src, "--mlir", str(tmp_path / "a.mlir"), "-q"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a.mlir").read_text() == to_mlir(_concat_graph())
    # the encoding form has lost its symbolic_ints: it cannot be read back alone
    r = CliRunner().invoke(main, ["mlir", src, "--style", "encoding"])
    assert r.exit_code == 0 and (tmp_path / "m.mlir").exists()
    r = CliRunner().invoke(main, ["mlir", str(tmp_path / "m.mlir"), "-o", str(tmp_path / "back.mlir")])
    assert r.exit_code == 2 and "names @S0, which no symbol.symbolic_int defines" in r.output
    assert not (tmp_path / "back.mlir").exists()
    # with its definitions kept, encoding-to-symbol gives back the bindings
    m = _concat_graph()
    kept = tmp_path / "kept.mlir"
    kept.write_text(with_definitions(to_mlir(m, generic=True), to_mlir(m, style="encoding", generic=True)))
    r = CliRunner().invoke(main, ["mlir", str(kept), "-o", str(tmp_path / "back.mlir")])
    assert r.exit_code == 0, r.output
    assert bound_symbols(parse((tmp_path / "back.mlir").read_text()), m) == bound_symbols(parse(to_mlir(m, generic=True)), m)
    r = CliRunner().invoke(main, ["mlir", src, "--style", "encoding"])
    assert r.exit_code == 2 and "--force" in r.output  # m.mlir exists
    r = CliRunner().invoke(main, ["mlir", str(tmp_path / "a.mlir")])
    assert r.exit_code == 2 and "encoding form" in r.output
    (tmp_path / "junk.mlir").write_text("not mlir")
    r = CliRunner().invoke(main, ["mlir", str(tmp_path / "junk.mlir")])
    assert r.exit_code == 2 and "not an MLIR module" in r.output


def test_the_mlir_pages_snippet_is_the_tools_output():
    page = open(os.path.join(HERE, "..", "docs", "mlir.md"), encoding="utf-8").read()
    snippet = page.split("```mlir", 1)[1].split("```", 1)[0]
    out = {line.strip() for line in to_mlir(os.path.join(HERE, "..", "models", "cnn_tiny_dynamo.onnx")).splitlines()}
    lines = [line.strip() for line in snippet.strip().splitlines() if line.strip() != "..."]
    assert len(lines) >= 8 and all(line in out for line in lines)


def test_names_that_are_not_identifiers_are_quoted_and_parse():
    m = model([helper.make_node("Relu", ["x"], ["y"])], [("x", TensorProto.FLOAT, ["sequence length", "2*b", "x, y"])], ["y"])
    text = to_mlir(m, names=True)
    assert '@"sequence length"' in text and '@"x, y"' in text
    parse(to_mlir(m, names=True, generic=True))
    default = to_mlir(m, names=True, generic=True)
    back = encoding_to_symbol(with_definitions(default, to_mlir(m, style="encoding", names=True, generic=True)))
    assert bound_symbols(parse(back), m) == bound_symbols(parse(default), m)
    assert bound_symbols(parse(back), m)["y"] == ("sequence length", "S0", "x, y")


def test_small_tensors_are_written_out_and_strings_are_opaque_elements():
    m = model([helper.make_node("Reshape", ["x", "shape"], ["y"]), helper.make_node("Identity", ["words"], ["w"])],
              [("x", TensorProto.FLOAT, ["n", 4])], ["y", "w"],
              [init("shape", np.array([-1, 2], np.int64)),
               helper.make_tensor("words", TensorProto.STRING, [2], [b"a", b'"b'])])
    text = to_mlir(m, generic=True)
    assert "value = dense<[-1, 2]> : tensor<2xi64>" in text
    assert 'value = dense<["a", "\\22b"]> : tensor<2x!onnx.string>' in text
    parse(text)


@pytest.mark.parametrize("text", ["a - 2*b + 3", "7 - a", "(a + 1)//2", "(a - b)//3 + 1", "a % 5 + b",
                                  "((a + 1)//2 + 1)//2*2", "3*(a//4) - b % 2", "-(a//2) + b",
                                  "max(a, b) + 1", "a*b + a", "(a*b)//2 - 2*min(a, 3)", "(2*a + 3)//(b + 1)"])
def test_affine_text_evaluates_in_mlir_as_the_dim(text):
    """Each dim's map, evaluated by MLIR's own affine expressions, equals the dim."""
    from iree.compiler import ir
    from mlir_check import evaluate

    from onnxsym.mlir.names import Namer
    from onnxsym.mlir.symbols import Symbols

    d = onnxsym.parse_dim(text, lambda n: onnxsym.sym(n, 0, 50))
    syms = Symbols(Namer())
    s = syms.of(d)
    with ir.Context():
        for a in range(0, 12, 3):
            for b in (1, 4, 9):
                env = {"a": a, "b": b}

                def value(x):
                    if x.map is None:
                        return onnxsym.evaluate(x.dim, env)
                    amap = ir.Attribute.parse(x.map).value
                    return evaluate(amap.results[0], [value(o) for o in x.operands])
                assert value(s) == onnxsym.evaluate(d, env), (text, env, s.map)


def _branch_of(node):
    """A test op with If's branches: infers both, gives the then branch's outputs."""
    out = node.infer_graph(node.attr("then_branch"), [])
    node.infer_graph(node.attr("else_branch"), [])
    return out


@pytest.fixture
def branch_of_rule():
    """BranchOf's rule, for one test: registered for good it would stay in the registry, whose
    conditions page a test compares with docs/conditions.md."""
    with onnxsym.registry.override("BranchOf", _branch_of, domain="test.mlir"):
        yield


def test_values_inside_regions_are_bound_to_the_functions_symbols(branch_of_rule):
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Concat", ["t", "t"], ["t2"], axis=0)],
                             "then", [], [helper.make_tensor_value_info("t2", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["e"], axis=0)], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    m = model([helper.make_node("BranchOf", [], ["y"], domain="test.mlir", then_branch=then, else_branch=other),
               helper.make_node("Concat", ["x", "x"], ["z"], axis=0)],
              [("x", TensorProto.FLOAT, ["batch", 6])], ["y", "z"])
    m.opset_import.append(helper.make_opsetid("test.mlir", 1))
    result = onnxsym.infer(m)
    assert str(result.shape("y")[0]) == "2*batch"
    for style in STYLES:
        text = to_mlir(result, style=style, generic=True)
        module = parse(text)
        if style == "propagate":
            assert Checker(module, m).dynamic_dims_are_bound() == 6  # x, t, t2, e, y, z
    # 2*batch is first needed inside a region: defined before the op that holds it, so it dominates z's use too
    text = to_mlir(result)
    assert text.index("symbol.symbolic_int @S1 [%S0, %S0]") < text.index('"onnx.BranchOf"')
    text = to_mlir(result, style="unfolded")
    assert text.index("%S1 = affine.apply") < text.index('"onnx.BranchOf"')
    assert "%S0 = tensor.dim %arg0" in text
