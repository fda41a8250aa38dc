"""The symbol dialect's own tool judges the export: bishengir-opt (the ascendnpu-ir wheel) parses and
verifies it, and each style equals what the tool's pass makes of the default form, after both texts
go through the tool once (so the printing is the tool's)."""

import glob
import os
import random

import compilers  # noqa: F401  (first: without the compilers, this module is skipped)
import pytest
from bisheng import BISHENGIR_OPT, opt
from iree.compiler import ir
from mlir_check import evaluate, walk, with_definitions
from onnx import TensorProto, helper
from test_mlir import SEED_UNFOLD_BEFORE

import onnxsym
from onnxsym.mlir import encoding_to_symbol, to_mlir

pytestmark = pytest.mark.compilers

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = sorted(glob.glob(os.path.join(HERE, "..", "models", "*.onnx")))
PASSES = {"erased": "--erase-symbol", "encoding": "--symbol-to-encoding", "unfolded": "--unfold-symbolic-int"}


def test_the_tool_is_found_inside_the_installed_package():
    assert os.access(BISHENGIR_OPT, os.X_OK) and os.sep + os.path.join("ascendnpuir", "bin") in BISHENGIR_OPT


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_styles_equal_the_tools_passes(path):
    result = onnxsym.infer(path)
    for generic in (False, True):
        default = to_mlir(result, generic=generic)
        assert opt(default) == opt(to_mlir(result)), "the generic form is the pretty one"
        for style, flag in PASSES.items():
            assert opt(to_mlir(result, style=style, generic=generic)) == opt(default, flag), style


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_encoding_to_symbol_is_the_tools(path):
    """With the symbolic_ints the encoding names, onnxsym's reader inserts the bindings where the
    tool's --encoding-to-symbol does; without them (symbol-to-encoding drops them), the tool binds
    nothing, which is why onnxsym refuses such a text."""
    result = onnxsym.infer(path)
    default = to_mlir(result)
    kept = with_definitions(default, to_mlir(result, style="encoding"))
    assert opt(encoding_to_symbol(kept)) == opt(kept, "--encoding-to-symbol")
    lost = opt(default, "--symbol-to-encoding", "--encoding-to-symbol")
    assert "symbol.bind_symbolic_shape" not in lost and ", [@S" in lost


def test_seed_unfold_example_is_the_tools():
    text = SEED_UNFOLD_BEFORE.replace("}\n", "  return %arg0 : tensor<?x640x?xf16>\n}\n")
    g = helper.make_graph([], "test_already_bind_symbol_0",
                          [helper.make_tensor_value_info("arg0", TensorProto.FLOAT16, ["S0", 640, "S1"])],
                          [helper.make_tensor_value_info("arg0", TensorProto.FLOAT16, ["S0", 640, "S1"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    result = onnxsym.infer(m, ranges={"S0": (0, 2**63 - 1), "S1": (0, 2**63 - 1)})
    assert opt(to_mlir(result, style="unfolded")) == opt(text, "--unfold-symbolic-int")


def _symbol_of(v):
    """The symbolic_int a value comes from, through the casts convert-torch-to-symbol puts between."""
    op = v.owner
    while op.name != "symbol.symbolic_int":
        assert len(op.operands) == 1, op
        op = op.operands[0].owner
    return op


def _binds(text, env):
    """Per symbol.bind_symbolic_shape in text order, the dims its map gives for root values ``env``."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    module = ir.Module.parse(text, ctx)
    entry = module.body.operations[0].operation.regions[0].blocks[0]
    value, out = {}, []

    def of(op):
        key = op.results[0]
        if key not in value:
            name = op.attributes["symbol_name"].value
            amap = op.attributes["int_expressions"].value
            if len(amap.results):
                value[key] = evaluate(amap.results[0], [of(_symbol_of(o)) for o in op.operands])
            else:
                expr = op.attributes["expression"].value if "expression" in op.attributes else name
                value[key] = onnxsym.evaluate(onnxsym.parse_dim(expr), env)
        return value[key]

    for op in walk(entry):
        if op.name == "symbol.bind_symbolic_shape":
            syms = [of(_symbol_of(o)) for o in op.operands[1:]]
            out.append(tuple(evaluate(e, syms) for e in op.attributes["shape_expressions"].value.results))
    return out


def _mapless(text):
    """The symbolic_ints without a map: name (or expression, when it has one) -> range."""
    out = {}
    module = ir.Module.parse(text, _ctx())  # the ops are views into it: keep it alive
    for op in walk(module.body.operations[0].operation.regions[0].blocks[0]):
        if op.name == "symbol.symbolic_int" and not len(op.attributes["int_expressions"].value.results):
            name = op.attributes["expression"].value if "expression" in op.attributes else op.attributes["symbol_name"].value
            out[name] = (op.attributes["min_val"].value, op.attributes["max_val"].value)
    return out


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_convert_torch_to_symbol_of_the_torch_export_gives_the_symbol_exports_bindings(path):
    """Same roots with the same ranges (a dim no map expresses is named by its expression in the
    torch form), and binding for binding the same dims at random sizes of the roots."""
    result = onnxsym.infer(path)
    converted = opt(to_mlir(result, dialect="torch"), "--convert-torch-to-symbol", generic=True)
    default = opt(to_mlir(result, generic=True), generic=True)
    mapless = _mapless(default)
    assert _mapless(converted) == mapless
    rng = random.Random(7)
    for _ in range(2):
        env = {r: rng.randint(2, 40) for r in mapless if r.isidentifier()}  # the roots, not the expressions
        theirs, ours = _binds(converted, env), _binds(default, env)
        assert theirs == ours and len(ours) > 0


def _ctx():
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    return ctx
