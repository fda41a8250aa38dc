"""Which of the contrib ops the installed onnxruntime registers have a rule
(python -m onnxsym.commands.coverage prints them as extra rows)."""

import pytest

from onnxsym.commands.coverage import markdown, runtime_coverage, runtime_ops

# Execution-provider containers: their outputs are whatever the compiled blob (EP context
# cache, SNPE DLC) computes, not a function of the node's inputs and attributes. They keep
# the engine's fallback: fresh symbols and a warning.
NO_RULE_BY_DESIGN = {"EPContext", "Snpe"}


def test_every_registered_contrib_op_with_a_defined_shape_has_a_rule():
    if not runtime_ops():
        pytest.skip("onnxruntime does not list its operator schemas here")
    table = {c.domain.split()[0]: c for c in runtime_coverage()}
    print("\n" + markdown(list(table.values())))
    assert set(table["com.microsoft"].missing) == NO_RULE_BY_DESIGN
    assert table["com.microsoft.nchwc"].missing == []
    assert len(table["com.microsoft"].ops) >= 150 and len(table["com.microsoft.nchwc"].ops) == 8


def test_the_extra_rows_name_the_runtime():
    rows = markdown(runtime_coverage())
    if runtime_ops():
        assert "| com.microsoft (onnxruntime " in rows and "| com.microsoft.nchwc (onnxruntime " in rows
