"""The rule registry as an object: registered rules by opset, and override() for tests."""

from helpers import F, model
from onnx import helper

import onnxsym
import onnxsym.rules  # noqa: F401  (the built-in rules)
from onnxsym import registry
from onnxsym.registry import Registry


def test_the_rule_in_force_is_the_last_registered_not_newer_than_the_opset():
    r = Registry()
    old, new = (lambda node: []), (lambda node: [])
    r.register_rule("Op", since=1)(old)
    r.register("Op Other", domain="ai.onnx", since=13)(new)
    assert (r.find_rule("", "Op", 12), r.find_rule("", "Op", 13), r.find_rule("ai.onnx", "Other", 1)) == (old, new, None)
    assert r.registered_ops() == {("", "Op"): [1, 13], ("", "Other"): [13]}


def test_override_swaps_an_op_rule_in_a_block_and_restores_it():
    relu = registry.find_rule("", "Relu", 17)
    m = model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, ["batch", "seq"])], ["y"])

    def planted(node):
        return [onnxsym.Tensor(F, (7,))]

    with registry.override("Relu", planted):
        assert registry.find_rule("", "Relu", 17) is planted
        assert onnxsym.infer(m).shape("y") == (7,)
    neg = model([helper.make_node("Neg", ["x"], ["y"])], [("x", F, ["batch", "seq"])], ["y"])
    with registry.override("Neg", None):  # (Neg has no function body to fall back on)
        assert registry.find_rule("", "Neg", 17) is None
        assert onnxsym.infer(neg).no_rule == {("ai.onnx", "Neg"): 1}
    assert not onnxsym.infer(neg).no_rule
    assert registry.find_rule("", "Relu", 17) is relu
    assert [str(d) for d in onnxsym.infer(m).shape("y")] == ["batch", "seq"]
    with registry.override("Brand", planted, domain="new.ops"):
        assert registry.find_rule("new.ops", "Brand", 1) is planted
    assert ("new.ops", "Brand") not in registry.registered_ops()
