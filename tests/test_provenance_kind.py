"""The kind of a fresh symbol's provenance is set where the symbol is made, and
check --allow-data-dependent and explain read it (not op names, not reason wording)."""

import numpy as np
from cli_models import run
from helpers import I64, F, model
from onnx import helper

import onnxsym
from onnxsym.commands import check as report
from onnxsym.commands.explain import Lineage
from onnxsym.inference.provenance import Kind


def _two_losses():
    """x[n] -> NonZero -> Transpose (a count the data decides), and x -> a custom op no
    rule knows -> Relu (a rank lost for want of a rule)."""
    return model([helper.make_node("NonZero", ["x"], ["nz"], name="nz"),
                  helper.make_node("Transpose", ["nz"], ["t"], name="tr"),
                  helper.make_node("Mystery", ["x"], ["m"], name="mystery", domain="my.ops"),
                  helper.make_node("Relu", ["m"], ["y"], name="relu")],
                 [("x", F, ["n"])], [("t", I64, None), ("y", F, None)], opsets=[("my.ops", 1)])


def _nonzero_part():
    return model([helper.make_node("NonZero", ["x"], ["nz"], name="nz"),
                  helper.make_node("Transpose", ["nz"], ["t"], name="tr")],
                 [("x", F, ["n"])], [("t", I64, None)])


def test_nonzero_counts_are_data_dependent_and_an_unknown_op_has_no_rule():
    # The premise, from the runtime: one input shape, two output shapes.
    m = _nonzero_part()
    shapes = {run(m, {"x": np.array(x, np.float32)})["t"].shape for x in ([1, 0, 2, 0], [1, 1, 2, 0])}
    assert len(shapes) == 2
    r = onnxsym.infer(_two_losses())
    count = r.values["t"].shape[0]
    [p] = r.fresh_provenance(count)
    assert p.node == "nz" and p.kind is Kind.DATA_DEPENDENT
    assert r.unknown_rank["m"].kind is Kind.NO_RULE
    lineage = Lineage(r)
    assert lineage.cause(p).kind is Kind.DATA_DEPENDENT
    y = r.unknown_rank["y"]  # Relu could not tell the rank; the cause upstream is the custom op
    cause = lineage.cause(y)
    assert (cause.node, cause.kind, cause.data_dependent) == ("mystery", Kind.NO_RULE, False)


def test_allow_data_dependent_passes_exactly_the_nonzero_entries():
    r = onnxsym.infer(_two_losses())
    strict = report.entries_of(r)
    allowed = report.entries_of(r, report.CheckOptions(allow_data_dependent=True))
    assert {e.value for e in strict} == {e.value for e in allowed} and all(e.allowed_by is None for e in strict)
    passed = {e.value for e in allowed if e.allowed_by == "--allow-data-dependent"}
    failing = {e.value for e in allowed if e.allowed_by is None}
    assert passed and passed <= {"nz", "t"}
    assert failing and failing <= {"m", "y"}


def test_check_json_carries_the_kinds_the_schema_lists(tmp_path):
    import json

    from report_schema import SCHEMA, validate
    with open(SCHEMA) as f:
        schema = json.load(f)
    assert set(schema["$defs"]["kind"]["enum"]) == {k.value for k in Kind}
    path = tmp_path / "two.onnx"
    path.write_bytes(_two_losses().SerializeToString())
    opts = report.CheckOptions(allow_data_dependent=True)
    doc = report.to_json([report.check_model(str(path), opts)], opts)
    assert validate(doc, schema) == []
    by_value = {e["value"]: e for e in doc["models"][0]["entries"]}
    assert by_value["t"]["origins"][0]["kind"] == "data-dependent" == by_value["t"]["cause"]["kind"]
    assert by_value["y"]["cause"]["kind"] == "no rule" and by_value["y"]["allowed_by"] is None
