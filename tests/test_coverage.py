"""Every operator of onnx's standard domains has a registered rule."""

from onnxsym.commands.coverage import coverage, markdown


def test_every_standard_operator_has_a_rule():
    table = coverage()
    print("\n" + markdown(table))
    missing = {f"{c.domain}::{op}" for c in table for op in c.missing}
    assert not missing, "operators without a rule: " + ", ".join(sorted(missing))


def test_table_counts_match_the_schema_set():
    import onnx

    table = {c.domain: c for c in coverage()}
    ml = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == "ai.onnx.ml"}
    assert set(table["ai.onnx.ml"].ops) == ml and len(ml) == 19
    assert "| ai.onnx.ml | 19 | 19 |" in markdown(list(table.values()))
