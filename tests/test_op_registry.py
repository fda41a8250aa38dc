"""One registration per op: its shape rule, its conditions and its cost formula, read by
inference, the domain, cost, coverage and the generated docs/conditions.md."""

import os

from onnx import helper as h

import onnxsym
import onnxsym.rules  # noqa: F401  (the built-in rules)
from onnxsym import registry
from onnxsym.commands.coverage import conditions_page
from onnxsym.cost.formulas import Flops
from onnxsym.domain.needs import Site
from onnxsym.inference.values import Tensor
from onnxsym.registry import Condition
from tests.helpers import F, model

PAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "conditions.md")


def test_the_conditions_page_is_the_one_the_registry_gives():
    with open(PAGE) as f:
        assert f.read() == conditions_page(), \
            "docs/conditions.md is stale: python -m onnxsym.commands.coverage --conditions > docs/conditions.md"


def test_every_standard_op_states_its_conditions():
    unstated = [e.op_type for e in registry.entries() if e.domain == "" and e.conditions is None]
    assert not unstated, unstated


def test_the_engine_reads_the_subgraph_ops_from_the_registry():
    assert registry.subgraph_ops() == {"If", "Loop", "Scan", "SequenceMap"}


def _at_least_three(site: Site):
    x = site.shape(0)
    if x is not None:
        yield site.raw("<=", 3, x[0], f"{x[0]} >= 3")


def test_a_new_op_is_one_registration_read_by_rules_domain_cost_and_docs():
    flops = Flops("elementwise", "7*numel(Y)", lambda node, ins, outs, attrs: 7 * outs[0][0])

    @registry.register("Sevenfold", domain="test.registry", conditions=[Condition("X[0] >= 3", _at_least_three)],
                       cost=flops)
    def sevenfold(node):
        x = node.inputs[0]
        return [Tensor(x.dtype, x.shape)]

    try:
        m = model([h.make_node("Sevenfold", ["x"], ["y"], domain="test.registry")], [("x", F, ["n"])], ["y"],
                  opsets=[("test.registry", 1)])
        result = onnxsym.infer(m)
        assert [str(d) for d in result.shape("y")] == ["n"]
        assert [c.text for c in result.domain().conditions] == ["n >= 3"]
        assert str(result.cost().flops) == "7*n"
        page = conditions_page()
        assert "## test.registry" in page and "| Sevenfold | `X[0] >= 3` | checked on the inferred inputs |" in page
    finally:
        registry.rules.remove("Sevenfold", "test.registry")
    assert "Sevenfold" not in conditions_page()
