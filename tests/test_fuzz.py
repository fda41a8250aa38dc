"""The fast fuzz tier: a few dozen seeded random graphs, every dim checked against
onnxruntime, and each written model run at fresh sizes with its value_info in place
(the long tier is bench/fuzz.py)."""

import fuzzing
import onnx
import pytest
from onnx import helper

import onnxsym.rules  # noqa: F401  (the built-in rules, so that Relu can be swapped)
from onnxsym import registry
from onnxsym.inference.values import Tensor

SEEDS = range(204, 241)


@pytest.mark.slow
def test_random_graphs_have_no_wrong_dim_and_never_crash_or_hang(tmp_path):
    counts, failures = fuzzing.run(SEEDS, failures_dir=str(tmp_path), time_limit=60)
    report = "\n".join(f"seed {s}: {o.kind}: {o.detail} (reproducer {p})" for s, o, p in failures)
    assert not failures, report
    # the generator must mostly make graphs the runtime runs, or the tier checks little
    assert counts.get("ok", 0) >= 0.75 * len(SEEDS), counts
    assert counts["dims"] > 1000 and counts["written dims"] > 500, counts


def test_the_trust_steps_make_what_they_say():
    """Among the seeds: float Range (float32 and float64, deltas of both signs), narrow-int
    casts as Slice and Reshape arguments, If branches with needs of their own, declarations
    on produced values, and annotate given bind, range, assume or keep_declared_names."""
    ranges, casts, ifs, declared, given = set(), set(), 0, 0, set()
    for seed in range(200):
        model, _, _, g = fuzzing.case_for(seed)
        inits = {t.name: t for t in model.graph.initializer}
        for n in model.graph.node:
            if n.op_type == "Range" and n.input[2] in inits:
                delta = float(onnx.numpy_helper.to_array(inits[n.input[2]]))
                ranges.add((inits[n.input[2]].data_type, delta > 0))
            if n.op_type == "Cast":
                casts.add(n.attribute[0].i)
            if n.op_type == "If" and any(m.op_type in ("Reshape", "Pad", "TopK", "Squeeze", "Conv", "SpaceToDepth")
                                         for a in n.attribute for m in a.g.node):
                ifs += 1
        declared += bool(model.graph.value_info)
        given.update(g)
    T = onnx.TensorProto
    assert {(T.FLOAT, True), (T.FLOAT, False), (T.DOUBLE, True), (T.DOUBLE, False)} <= ranges
    assert {T.INT8, T.INT16, T.INT32, T.UINT8} <= casts
    assert ifs >= 10 and declared >= 10, (ifs, declared)
    assert given == {"bind", "ranges", "assume", "keep_declared_names"}


def test_a_wrong_rule_is_caught_and_shrunk_to_a_small_reproducer(tmp_path):
    """Plant a wrong rule (Relu adds 1 to the last dim) and fuzz: the fuzzer must report
    it as a wrong dim and shrink the graph to the Relu alone."""
    def wrong_relu(node):
        x = node.tensor(0)
        return [Tensor(x.dtype, x.shape[:-1] + (x.shape[-1] + 1,)) if x.shape else x]

    with registry.override("Relu", wrong_relu):
        m = helper.make_model(helper.make_graph(
            [helper.make_node("Sigmoid", ["x"], ["s"], name="s"), helper.make_node("Relu", ["s"], ["r"], name="r"),
             helper.make_node("Tanh", ["r"], ["t"], name="t"), helper.make_node("Neg", ["s"], ["n"], name="n")],
            "planted", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", "seq"])],
            [helper.make_empty_tensor_value_info("t"), helper.make_empty_tensor_value_info("n")]),
            opset_imports=[helper.make_opsetid("", 17)])
        a = fuzzing.assignments_for(0)
        outcome = fuzzing.check_model(m, a)
        assert outcome.kind == "wrong" and "seq + 1" in outcome.detail
        small = fuzzing.shrink(m, a, "wrong")
        assert [n.op_type for n in small.graph.node] == ["Sigmoid", "Relu"]
        path = fuzzing.save_failure(small, fuzzing.check_model(small, a), a, str(tmp_path))
        assert onnx.load(path).graph.node[1].op_type == "Relu"
