"""Where a written model with subgraphs is what its light copy for onnxruntime would be but for node
names, doc strings and metadata (loadcheck.runtime_as_is), the drop-in asks both judges of the
written model's own bytes: each judge's verdict must be the one it gives the light copy, on copies
taken and refused, and a refusal still ends in a model that loads."""

import numpy as np
import onnx
from helpers import F, graph, init, model
from onnx import helper

from onnxsym.model import runtime
from onnxsym.ort_compat import SymbolicShapeInference
from onnxsym.output import loadcheck

N = helper.make_node


def _asked(seeds, monkeypatch) -> list[onnx.ModelProto]:
    """The written models the drop-in judges as they are, for the fuzzer's graphs of ``seeds``."""
    import fuzzing

    asked: list[onnx.ModelProto] = []
    real = loadcheck.loads_as_is

    def loads_as_is(m, onnx_judge):
        asked.append(m)
        return real(m, onnx_judge)

    monkeypatch.setattr(loadcheck, "loads_as_is", loads_as_is)
    for seed in seeds:
        loadcheck.forget_verdicts()
        try:
            SymbolicShapeInference.infer_shapes(fuzzing.random_model(seed))
        except Exception:  # noqa: BLE001  (a graph the drop-in gives up on asks nothing more)
            pass
    return asked


def test_each_judge_gives_the_written_model_its_light_copys_verdict_on_fuzz_graphs(monkeypatch):
    """Seeds 6510-6519 hold Ifs and Loops, often of unnamed nodes; seed 6515's TopK in an If branch
    is refused by onnxruntime once constant folding makes a written dim its rows."""
    asked = _asked(range(6510, 6520), monkeypatch)
    verdicts, renamed = [], 0
    for m in asked:
        a, b = m.SerializeToString(), loadcheck.LightModel(m, True, False).model.SerializeToString()
        renamed += a != b  # (the copy names unnamed nodes by their place)
        assert (runtime.load_error(a, True) is None) == (runtime.load_error(b, True) is None)
        assert (loadcheck._onnx_refusal(a) is None) == (loadcheck._onnx_refusal(b) is None)
        verdicts.append(runtime.load_error(a, True))
    assert any(v is None for v in verdicts) and any(v is not None and "TopK" in v for v in verdicts), verdicts
    assert renamed


def test_a_model_refused_as_it_is_is_judged_again_and_written_so_that_it_loads():
    import fuzzing

    loadcheck.forget_verdicts()
    out = SymbolicShapeInference.infer_shapes(fuzzing.random_model(6515))
    assert runtime.load_error(out.SerializeToString(), True) is None


def _if_model(nodes_before=(), inits=()) -> onnx.ModelProto:
    then_g = graph([N("Relu", ["x"], ["r"])], [], [("r", F)], name="then")
    else_g = graph([N("Neg", ["x"], ["e"])], [], [("e", F)], name="else")
    return model([*nodes_before, N("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                 [("x", F, ["n"]), ("c", onnx.TensorProto.BOOL, [])], [("y", F)], list(inits))


def test_what_the_light_copy_would_change_is_judged_as_the_copy(monkeypatch):
    assert loadcheck.runtime_as_is(_if_model(), True)
    big = init("w", np.ones(4097, np.float32))  # (a typed input of the copy, without its elements)
    assert not loadcheck.runtime_as_is(_if_model(inits=[big]), True)
    const = N("Constant", [], ["k"], value=helper.make_tensor("k", F, [4097], np.ones(4097).tolist()))
    assert not loadcheck.runtime_as_is(_if_model([const]), True)  # (so is a large constant)
    late = _if_model()
    body = late.graph.node[0].attribute[0].g
    body.node.extend([N("Relu", ["h"], ["r2"]), N("Neg", ["x"], ["h"])])  # (out of order: the copy sorts them)
    assert not loadcheck.runtime_as_is(late, True)
    monkeypatch.setenv("ORT_LOAD_CONFIG_FROM_MODEL", "1")  # (onnxruntime then reads the metadata the copy drops)
    assert not loadcheck.runtime_as_is(_if_model(), True)


def _judged(m: onnx.ModelProto, monkeypatch) -> tuple[onnx.ModelProto, list[str]]:
    """The drop-in's model for ``m``, and the judges asked of the written model as it is."""
    asked: list[str] = []
    onnx_judge, session = loadcheck.onnx_refusal, loadcheck.runtime_refusal
    monkeypatch.setattr(loadcheck, "onnx_refusal", lambda data: asked.append("onnx") or onnx_judge(data))
    monkeypatch.setattr(loadcheck, "runtime_refusal", lambda data: asked.append("onnxruntime") or session(data))
    loadcheck.forget_verdicts()
    return SymbolicShapeInference.infer_shapes(m), asked


def test_a_model_whose_scan_body_runs_wherever_it_does_is_judged_by_onnx_alone(monkeypatch):
    """onnxscript_scan_rnn: the Scan's length is at least 1 wherever the domain holds, so every node
    of its body runs at every size it allows, as in a graph without subgraphs."""
    from resolution import corpus

    from onnxsym import api

    path = {e["name"]: e for e in corpus(fetched=False)}["onnxscript_scan_rnn"]["path"]
    m = onnx.load(path)
    assert api._every_subgraph_runs(api.infer(m))
    out, asked = _judged(m, monkeypatch)
    assert asked == ["onnx"]
    assert runtime.load_error(out.SerializeToString(), True) is None


def test_a_branch_the_data_pick_is_judged_by_onnxruntime_too(monkeypatch):
    from onnxsym import api

    m = _if_model()
    assert not api._every_subgraph_runs(api.infer(m))
    out, asked = _judged(m, monkeypatch)
    assert asked == ["onnx", "onnxruntime"]
    assert runtime.load_error(out.SerializeToString(), True) is None


def test_annotate_asks_onnxruntime_only_where_a_subgraph_may_not_run(monkeypatch):
    from resolution import corpus

    import onnxsym

    asked: list[bytes] = []
    session = loadcheck.runtime_refusal
    monkeypatch.setattr(loadcheck, "runtime_refusal", lambda data: asked.append(data) or session(data))
    loadcheck.forget_verdicts()
    path = {e["name"]: e for e in corpus(fetched=False)}["onnxscript_scan_rnn"]["path"]
    result = onnxsym.infer(onnx.load(path))
    out = onnxsym.write_result(result)
    assert onnxsym.api.written_result(result).load_checked and not asked
    assert runtime.load_error(out.SerializeToString(), True) is None
    result = onnxsym.infer(_if_model())
    onnxsym.write_result(result)
    assert onnxsym.api.written_result(result).load_checked and asked


def test_a_branch_never_taken_is_judged_by_onnxruntime_too(monkeypatch):
    """An If whose condition is a constant: the other branch never runs, and onnxruntime still
    loads (and folds) it."""
    from onnxsym import api

    m = _if_model(inits=[helper.make_tensor("c", onnx.TensorProto.BOOL, [], [True])])
    del m.graph.input[1:]
    result = api.infer(m)
    assert result.sure_runs and not api._every_subgraph_runs(result)
    _, asked = _judged(m, monkeypatch)
    assert "onnxruntime" in asked


def test_a_verdict_is_asked_once_for_the_same_bytes_and_the_bytes_held_are_bounded(monkeypatch):
    asked: list[bytes] = []

    def ask(data: bytes) -> str | None:
        asked.append(data)
        return "refused" if data.endswith(b"x") else None

    loadcheck.forget_verdicts()
    small, large = b"a" * 100 + b"x", b"b" * (loadcheck._KEY_AS_IS + 1)  # (kept as they are; by their digest)
    for _ in range(2):
        assert loadcheck._verdict("judge", small, ask) == "refused"
        assert loadcheck._verdict("judge", large, ask) is None
    assert len(asked) == 2
    assert loadcheck._verdict("judge", b"a" * 100 + b"y", ask) is None  # (other bytes: asked)
    assert loadcheck._verdict("other judge", small, ask) == "refused" and len(asked) == 4
    monkeypatch.setattr(loadcheck, "_MOST_HELD", 250)
    loadcheck._verdict("judge", b"c" * 100, ask)
    assert loadcheck._HELD[0] <= 250
    loadcheck.forget_verdicts()
