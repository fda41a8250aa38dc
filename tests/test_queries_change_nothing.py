"""A query changes nothing of the result it asks (issue 23, point 2): writing a result, settling
what of it loads, computing its domain or narrowing it to the domain leave it as it was; what
they find goes into what they return (or into the list the caller hands over for it)."""

import copy
import json
import os

import numpy as np
from click.testing import CliRunner
from helpers import F, init, model
from onnx import helper

import onnxsym
from onnxsym import api
from onnxsym.cli import main

N = helper.make_node
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def _declares_a_number():
    """x ``[seq, 3]`` through two Relus; the model declares the middle value ``[4, 3]``:
    a claim (seq may be 4), so ``seq`` is written, with a warning."""
    m = model([N("Relu", ["x"], ["m"]), N("Relu", ["m"], ["y"])], [("x", F, ["seq", 3])], [("y", F)])
    m.graph.value_info.append(helper.make_tensor_value_info("m", F, [4, 3]))
    return m


def _split_refused_at_load():
    """An opset-18 Split without ``num_outputs`` of a value onnxsym knows to be ``[3, seq]``
    and onnx's inference does not: written, onnxruntime refuses to load the model, so the
    dims that lead to the Split are withheld (test_written_sizes)."""
    nodes = [N("Shape", ["x"], ["s"]), N("Slice", ["s", "one", "two"], ["c3"]),
             N("Slice", ["s", "zero", "one"], ["n"]), N("Concat", ["c3", "n"], ["tgt"], axis=0),
             N("Reshape", ["x", "tgt"], ["t"]), N("Split", ["t"], ["a", "b", "c"], axis=0, name="split")]
    return model(nodes, [("x", F, ["seq", 3])], [("a", F), ("b", F), ("c", F)],
                 [init("zero", np.array([0], np.int64)), init("one", np.array([1], np.int64)),
                  init("two", np.array([2], np.int64))], opset=18)


def _state(result):
    """What a caller can see of a result (the fields a query might write)."""
    return (list(result.warnings), dict(result.withheld), result.load_checked, result.load_verdict,
            dict(result.values), result.symbol_ranges(), result.narrowed_to)


def test_writing_a_result_twice_leaves_it_as_it_was_and_writes_the_same_model():
    result = onnxsym.infer(_declares_a_number())
    before = _state(result)
    given = copy.deepcopy(result.model)
    first: list[str] = []
    a = onnxsym.write_result(result, warnings=first)
    b = onnxsym.write_result(result)
    assert _state(result) == before and result.model == given
    assert a.SerializeToString() == b.SerializeToString()
    # what writing warns of is handed to the caller, once per write
    assert first == ["value 'm'[0]: the model declares 4, the graph computes seq; writing 'seq'"]


def test_settling_what_loads_changes_nothing_of_the_result_asked():
    result = onnxsym.infer(_split_refused_at_load())
    before = _state(result)
    written = api.written_result(result)
    assert written is not result and "t" in written.withheld and written.load_checked
    assert _state(result) == before and not result.withheld
    assert api.written_result(written) is written  # settled: asked again, the same answer
    meta = {p.key: p.value for p in onnxsym.write_result(result).metadata_props}
    assert "t" in json.loads(meta["onnxsym.withheld"]) and _state(result) == before


def test_the_domain_and_the_narrowed_result_leave_the_result_as_it_was():
    result = onnxsym.infer(os.path.join(ROOT, "models", "domain", "gpt2_mask_ts.onnx"))  # seq <= 16
    before = _state(result)
    assert result.domain().ranges["seq"] == (1, 16)
    narrow = result.within_domain()
    onnxsym.write_result(narrow)
    assert _state(result) == before and narrow is not result and narrow.symbol_ranges()["seq"] == (1, 16)


def test_the_command_line_still_prints_what_writing_warns_of(tmp_path):
    import onnx

    path = tmp_path / "m.onnx"
    onnx.save(_declares_a_number(), path)
    r = CliRunner().invoke(main, ["annotate", str(path), "-o", str(tmp_path / "out.onnx")])
    assert r.exit_code == 0, r.output
    assert "warning: value 'm'[0]: the model declares 4, the graph computes seq; writing 'seq'" in r.output


def _deep_state(result):
    """Every field of a result a query could write, as plain copies (memos aside)."""
    return (_state(result), list(result.produced), dict(result.fresh), dict(result.unknown_rank),
            list(result.assumptions), dict(result.derived), dict(result.subgraph_values), list(result.rule_failures),
            dict(result.no_rule), result.given, dict(result.given_values), result.model.SerializeToString())


def test_every_query_a_command_makes_leaves_the_result_as_it_was():
    """The queries behind annotate, check, domain, cost, mlir and verify, one after another on
    one result of a decoder with a past (kv cache) and one whose domain narrows seq."""
    from onnxsym.commands.verify import verify
    from onnxsym.mlir import to_mlir

    for name in ("llama_tiny_ts.onnx", os.path.join("domain", "gpt2_mask_ts.onnx")):
        path = os.path.join(ROOT, "models", name)
        result = onnxsym.infer(path)
        before = _deep_state(result)
        result.unresolved(), result.stats(), result.domain(), result.cost(), result.positive_assumptions()
        narrow = result.within_domain()
        to_mlir(result), to_mlir(narrow)
        api.written_result(narrow)
        onnxsym.write_result(result, keep_declared_names=True)
        report = verify(path, result=result)
        assert report.checked_dims and not report.mismatches
        assert _deep_state(result) == before, name
