"""Every operator of onnx's standard domains has a registered rule."""

from onnxsym.coverage import coverage, markdown

# Operators whose rules other branches are writing (control flow, sequences and
# optionals). The lead empties this set when those branches are merged.
PENDING_ELSEWHERE = set()


def test_every_standard_operator_has_a_rule():
    table = coverage()
    print("\n" + markdown(table))
    missing = {f"{c.domain}::{op}" for c in table for op in c.missing if op not in PENDING_ELSEWHERE}
    assert not missing, "operators without a rule: " + ", ".join(sorted(missing))


def test_pending_ops_are_real_and_still_pending():
    # a pending op that gained a rule (or left onnx) must leave the set
    table = coverage()
    known = {op for c in table for op in c.ops}
    covered = {op for c in table for op in c.covered}
    assert PENDING_ELSEWHERE <= known, sorted(PENDING_ELSEWHERE - known)
    assert not PENDING_ELSEWHERE & covered, sorted(PENDING_ELSEWHERE & covered)


def test_table_counts_match_the_schema_set():
    import onnx

    table = {c.domain: c for c in coverage()}
    ml = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == "ai.onnx.ml"}
    assert set(table["ai.onnx.ml"].ops) == ml and len(ml) == 19
    assert "| ai.onnx.ml | 19 | 19 |" in markdown(list(table.values()))
