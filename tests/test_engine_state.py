"""The engine's state is one dataclass whose fields say what a trial undoes (issue 23, point 3):
every ``undone`` field of the state and of the scope gets back its value from before the
trial, whatever the field; what is ``kept`` stays, a rule's failure with its warning."""

from dataclasses import fields

import onnx
from helpers import F, model
from onnx import TensorProto, helper

import onnxsym
from onnxsym import dims, registry
from onnxsym.facts.branching import Split
from onnxsym.facts.fact import Constraint, Origin, Place, Rel, Relation
from onnxsym.inference.engine import Engine
from onnxsym.inference.provenance import Provenance
from onnxsym.inference.state import State
from onnxsym.inference.values import Tensor

N = helper.make_node
BOOL, I64 = TensorProto.BOOL, TensorProto.INT64


def _trial(field_of):
    """A value of each type a field holds, to put in during a trial."""
    seq = dims.sym("seq")
    c = Constraint(Rel.GE, seq, 1, Origin.DEFAULT_RANGE, Place("n", "If"), "why")
    return {
        "warnings": ["a trial's warning"], "no_rule": {("x", "Op"): 1}, "pending": {"v": frozenset({c})},
        "acted": {c}, "positive": {(seq, "n")},
        "splits": [Split("k", "If node 'n'", Relation(Rel.EQ, seq, 1), ())],
        "subgraph_runs": [(onnx.GraphProto(), (), {})], "sure_runs": {(((), "a", -1),): True},
        "function_runs": [(onnx.GraphProto(), (), {})],
        "failed_in": (("If node 'n'", False),),
        "failure": "a trial's contradiction", "fresh": {"t": Provenance("t", "n", "Op", "v", 0, "why")},
        "rule_failures": ["Op node 'n': rule failed"],
        "subgraph_values": {"v": Tensor(F, (1,))}, "scoped_values": {((), "a", -1): {}},
        "producer": {"v": "a trial's node"}, "unknown_rank": {"u": Provenance("", "n", "Op", "u", None, "why")},
    }[field_of.name]


def _put(obj, f):
    now, new = getattr(obj, f.name), _trial(f)
    if isinstance(now, list):
        now.extend(new)
    elif isinstance(now, (dict, set)):
        now.update(new)
    else:
        setattr(obj, f.name, new)


def test_a_trial_undoes_every_field_that_says_so_and_keeps_the_others():
    engine = Engine(model([N("Relu", ["x"], ["y"], name="r")], [("x", F, ["seq"])], ["y"]))
    engine.run()
    state, scope = engine.state, engine.scope
    plain = lambda obj: {f.name: (type(getattr(obj, f.name))(getattr(obj, f.name))  # noqa: E731
                                  if isinstance(getattr(obj, f.name), (list, dict, set)) else getattr(obj, f.name))
                         for f in fields(obj)}
    before_state, before_scope = plain(state), plain(scope)
    record_fields = [(state, f) for f in fields(State)] + \
                    [(scope, f) for f in fields(scope) if f.name not in ("values", "opsets", "ops")]
    with engine.hypothetically():
        for obj, f in record_fields:
            _put(obj, f)
    for obj, before in ((state, before_state), (scope, before_scope)):
        for f in fields(obj):
            if (obj, f) not in record_fields:
                continue
            now = getattr(obj, f.name)
            if f.name == "warnings":  # a rule's failure stays reported, and so does its warning
                assert now == before[f.name] + ["Op node 'n': rule failed"]
            elif f.metadata["trial"] == "undone":
                assert now == before[f.name], f.name
            else:  # kept: what the trial put stays
                assert now != before[f.name], f.name
    assert state.rule_failures[-1] == "Op node 'n': rule failed"


def _loop_with(op: str) -> onnx.ModelProto:
    """A Loop over the rows of x whose body applies ``op`` (domain test.state) to the carried row."""
    body = helper.make_graph(
        [N(op, ["c_in"], ["c_out"], domain="test.state", name="inner"), N("Identity", ["cond"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond", BOOL, []),
                 helper.make_tensor_value_info("c_in", F, None)],
        [helper.make_tensor_value_info("cond_out", BOOL, []), helper.make_tensor_value_info("c_out", F, None)])
    nodes = [N("Shape", ["x"], ["shp"]), N("Constant", [], ["go"], value=helper.make_tensor("go", BOOL, [], [True])),
             N("Constant", [], ["zero"], value=helper.make_tensor("zero", I64, [], [0])),
             N("Gather", ["shp", "zero"], ["n"]), N("Loop", ["n", "go", "x"], ["out"], body=body, name="loop")]
    return model(nodes, [("x", F, ["n", 3])], [("out", F, None)], opsets=[("test.state", 1)])


def test_a_rule_failing_only_during_a_trial_keeps_its_failure_and_its_warning():
    calls = []

    def fails_first(node):
        calls.append(node.name)
        if len(calls) == 1:  # the first pass over the body is a trial (see rules/control_flow)
            raise RuntimeError("planted")
        x = node.inputs[0]
        return [Tensor(x.dtype, x.shape)]

    with registry.override("FailsFirst", fails_first, domain="test.state"):
        res = onnxsym.infer(_loop_with("FailsFirst"), strict=False)
    failure = "FailsFirst node 'inner': rule failed: RuntimeError: planted"
    assert len(calls) >= 2 and res.rule_failures == [failure]
    assert failure in res.warnings
    # (what the failed pass gave shaped the result: the carried value lost its rank)
    assert res.shape("out") is None and res.unknown_rank["out"]
