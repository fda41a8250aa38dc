"""What a rule sees of its node: typed attributes and ``shape_of``.

Rules read attributes with typed accessors (``node.attr_int``, ``attr_ints``, ...), each of which
refuses an attribute of another type. Every such read is checked here against the operator schemas
of onnx and of onnxruntime (its contrib ops): where an op a rule serves defines the attribute, the
accessor's type is the schema's (a mismatch would refuse valid models of that op).

``shape_of`` stops a rule at an input of unknown rank: every output gets an unknown rank, of the
type the rule names, with the reason recorded; the types are onnxruntime's."""

import ast
import inspect
import textwrap
import types

import numpy as np
import onnx
import onnxruntime as ort
import onnxruntime.capi._pybind_state as ort_schemas
import pytest
from helpers import MS, F, model, ms_node
from onnx import AttributeProto, helper

import onnxsym
import onnxsym.rules  # noqa: F401  (registers the built-in rules)
from onnxsym import registry
from onnxsym.errors import GraphError, RuleFailure
from onnxsym.inference.node import shape_of
from onnxsym.inference.values import Tensor

ACCESSORS = {"attr_int": AttributeProto.INT, "attr_ints": AttributeProto.INTS, "attr_float": AttributeProto.FLOAT,
             "attr_floats": AttributeProto.FLOATS, "attr_str": AttributeProto.STRING,
             "attr_strs": AttributeProto.STRINGS, "attr_tensor": AttributeProto.TENSOR,
             "attr_graph": AttributeProto.GRAPH, "required_int": AttributeProto.INT,
             "required_ints": AttributeProto.INTS}


def _schema_types():
    """(domain, op) -> {attribute: the set of its types over every version}, from onnx and onnxruntime."""
    out: dict = {}
    for s in onnx.defs.get_all_schemas_with_history():
        for name, a in s.attributes.items():
            out.setdefault((s.domain, s.name), {}).setdefault(name, set()).add(int(a.type.value))
    for s in ort_schemas.get_all_operator_schema():
        for name, a in s.attributes.items():
            out.setdefault((s.domain, s.name), {}).setdefault(name, set()).add(int(a.type))
    return out


def _reads(fn, seen):
    """The (accessor, attribute name) reads of ``fn`` and of the rules' functions it calls, transitively."""
    if fn in seen or not isinstance(fn, types.FunctionType) or not fn.__module__.startswith("onnxsym.rules"):
        return set()
    seen.add(fn)
    out = set()
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        args = call.args[1:] if isinstance(f, ast.Name) else call.args  # required_int(node, "N")
        if name in ACCESSORS and args and isinstance(args[0], ast.Constant):
            out.add((name, args[0].value))
        if isinstance(f, ast.Name):
            out |= _reads(fn.__globals__.get(f.id), seen)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):  # shape_ops.range_rule(...)
            mod = fn.__globals__.get(f.value.id)
            if isinstance(mod, types.ModuleType):
                out |= _reads(getattr(mod, f.attr, None), seen)
    return out


def test_every_typed_read_matches_the_schemas():
    schemas = _schema_types()
    wrong, checked = [], 0
    for (domain, op), versions in registry.registered_ops().items():
        for since in versions:
            for accessor, name in _reads(registry.find_rule(domain, op, since), set()):
                types_ = schemas.get((domain or "", op), {}).get(name)
                if types_ is None:
                    continue  # an attribute this op does not define (a helper shared with other ops)
                checked += 1
                if ACCESSORS[accessor] not in types_:
                    wrong.append(f"{domain or 'ai.onnx'}::{op}-{since}: {accessor}({name!r}), the schema: "
                                 f"{sorted(AttributeProto.AttributeType.Name(t) for t in types_)}")
    assert not wrong, "\n".join(wrong)
    assert checked > 300  # the reads of the rules were found


# -- the accessors and shape_of, through inference ----------------------------------------------------


def _custom(attr):
    """A node of a custom op with one attribute."""
    node = helper.make_node("Probe", ["x"], ["y", "z"], name="probe", domain="test.typing")
    node.attribute.append(attr)
    return model([node], [("x", F, ["n", 3])], [("y", F), ("z", F)],
                 opsets=[("test.typing", 1)])


def test_an_attribute_of_the_wrong_type_names_the_node():
    def rule(node):
        return [Tensor(1, (node.attr_int("k", 0),)), Tensor(1, ())]

    with registry.override("Probe", rule, domain="test.typing"):
        assert onnxsym.infer(_custom(helper.make_attribute("k", 4))).shape("y") == (4,)
        with pytest.raises(GraphError, match="Probe node 'probe': attribute 'k' must be INT, the model gives FLOATS"):
            onnxsym.infer(_custom(helper.make_attribute("k", [1.0, 2.0])))


def test_a_rule_reading_a_standard_attribute_as_another_type_is_a_rule_failure():
    """The schema was checked before the rule ran: the model is right, the rule is wrong."""
    def rule(node):
        node.attr_ints("axis")  # Softmax's axis is an INT
        return [node.inputs[0]]

    m = model([helper.make_node("Softmax", ["x"], ["y"], axis=1)], [("x", F, ["n", 3])], [("y", F)])
    with registry.override("Softmax", rule):
        with pytest.raises(RuleFailure, match="reads attribute 'axis' as INTS; the ONNX spec makes it INT"):
            onnxsym.infer(m)


def test_shape_of_an_unranked_input_gives_every_output_an_unknown_rank_with_its_type():
    """TopK on an input without a shape: values of the input's type, indices int64, both of unknown
    rank with the reason (onnxruntime gives other ranks for other inputs: tests/test_unknown_rank_reasons.py)."""
    m = model([helper.make_node("TopK", ["x", "k"], ["v", "i"])], [("x", F, None), ("k", onnx.TensorProto.INT64, [1])],
              [("v", F), ("i", onnx.TensorProto.INT64)])
    res = onnxsym.infer(m)
    assert res.values["v"] == Tensor(F, None) and res.values["i"] == Tensor(onnx.TensorProto.INT64, None)
    assert res.unknown_rank["v"].reason == res.unknown_rank["i"].reason == "input rank unknown"
    assert res.unknown_rank["i"].op_type == "TopK"


def test_a_rule_asking_shape_of_an_unranked_input_stops_there():
    """What the rule would have made after shape_of is never made: no fresh symbol, no output."""
    def rule(node):
        x = node.inputs[0]
        shape = shape_of(x, 7, why="the probe's input rank unknown")
        return [Tensor(1, (node.fresh("never made"),) + shape)]

    m = _custom(helper.make_attribute("k", 1))
    m.graph.input[0].type.tensor_type.ClearField("shape")
    with registry.override("Probe", rule, domain="test.typing"):
        res = onnxsym.infer(m)
    assert res.values["y"] == Tensor(7, None) and res.values["z"] == Tensor(0, None)
    assert res.unknown_rank["y"].reason == res.unknown_rank["z"].reason == "the probe's input rank unknown"
    assert not res.fresh


# -- where a rank is unknown, the outputs keep the types onnxruntime gives them ------------------------


def _unranked_cases():
    """(model, feeds at two ranks of x): x has no declared shape, so the outputs' ranks follow it."""
    u8, i64 = onnx.TensorProto.UINT8, onnx.TensorProto.INT64
    mm = model([ms_node("MatMulIntegerToFloat", ["x", "b", "sa", "sb"], ["y"])],
               [("x", u8, None), ("b", u8, [3, 2]), ("sa", F, [1]), ("sb", F, [1])], [("y", F)], opsets=[(MS, 1)])
    mm_feeds = [{"x": np.ones(s, np.uint8), "b": np.ones((3, 2), np.uint8), "sa": np.ones(1, np.float32),
                 "sb": np.ones(1, np.float32)} for s in ((4, 3), (2, 4, 3))]
    ln = model([helper.make_node("LayerNormalization", ["x", "g"], ["y", "mean", "inv"], axis=-1)],
               [("x", F, None), ("g", F, [3])], [("y", F), ("mean", F), ("inv", F)])
    ln_feeds = [{"x": np.ones(s, np.float32), "g": np.ones(3, np.float32)} for s in ((4, 3), (2, 4, 3))]
    tk = model([helper.make_node("TopK", ["x", "k"], ["v", "i"])], [("x", F, None), ("k", i64, [1])],
               [("v", F), ("i", i64)])
    tk_feeds = [{"x": np.ones(s, np.float32), "k": np.array([2], np.int64)} for s in ((4, 3), (2, 4, 3))]
    return [("MatMulIntegerToFloat", mm, mm_feeds), ("LayerNormalization", ln, ln_feeds), ("TopK", tk, tk_feeds)]


@pytest.mark.parametrize("op, m, feeds", _unranked_cases(), ids=lambda c: c if isinstance(c, str) else "")
def test_unknown_rank_outputs_have_onnxruntimes_types(op, m, feeds):
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    runs = [sess.run(None, f) for f in feeds]
    res = onnxsym.infer(m)
    for k, out in enumerate(m.graph.output):
        assert runs[0][k].ndim != runs[1][k].ndim  # the rank really follows x's
        v = res.values[out.name]
        assert isinstance(v, Tensor) and v.shape is None
        assert v.dtype == helper.np_dtype_to_tensor_dtype(runs[0][k].dtype), out.name
        assert res.unknown_rank[out.name].reason == "input rank unknown" if op != "MatMulIntegerToFloat" \
            else res.unknown_rank[out.name].reason == "an input's rank unknown"
