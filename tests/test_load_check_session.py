"""onnxruntime's load check asks a session with constant folding as the one basic graph transformer
(onnxsym.model.runtime.NOT_SHAPES: the others rewrite graphs to run faster and compute no shape),
and a refusal again with every basic transformer. Its verdict must be the one every basic
transformer gives, on the light copies the check makes, refusals that only constant folding finds
included (bench/ort_load_verdicts.py does the same over thousands of fuzzer seeds and every model
under models/)."""

import fuzzing
import onnx
import pytest

import onnxsym
from onnxsym.model import runtime
from onnxsym.ort_compat import SymbolicShapeInference
from onnxsym.output import loadcheck

pytest.importorskip("onnxruntime")


def _copies(seeds, monkeypatch) -> list[bytes]:
    """The light copies onnxruntime is asked about while the fuzzer's graphs for ``seeds`` are
    annotated, by ``annotate`` and by the drop-in."""
    asked: list[bytes] = []
    judge = runtime.load_error
    monkeypatch.setattr(loadcheck, "load_error", lambda data, optimize: asked.append(data) or judge(data, optimize))
    for seed in seeds:
        m = fuzzing.random_model(seed)
        for annotate in (onnxsym.annotate, SymbolicShapeInference.infer_shapes):
            monkeypatch.setattr(loadcheck, "_VERDICTS", {})
            try:
                annotate(m)
            except onnxsym.OnnxsymError:
                pass
    return list(dict.fromkeys(asked))


def test_constant_folding_alone_gives_every_basic_transformers_verdict_on_fuzz_copies(monkeypatch):
    """Seeds 6510-6519 hold Ifs and Loops; seed 6515's TopK in an If branch is refused only where
    constant folding turns a written dim into its rows (without any optimization it loads)."""
    copies = _copies(range(6510, 6520), monkeypatch)
    verdicts = [(runtime.load_error(d, True), runtime.load_error(d, True, all_basic=True),
                 runtime.session_error(d, True, runtime.NOT_SHAPES), runtime.load_error(d, False)) for d in copies]
    assert all(v[0] == v[1] for v in verdicts), [v for v in verdicts if v[0] != v[1]]
    assert all(v[2] is not None for v in verdicts if v[1] is not None)  # (folding alone refuses them too)
    folded = [v[0] for v in verdicts if v[0] is not None and v[3] is None]
    assert folded and any("TopK" in text for text in folded), verdicts
    assert any(v[0] is None for v in verdicts)  # (some copies load)


def test_a_copy_folding_alone_refuses_is_asked_again_with_every_basic_transformer():
    """d = 1 / Unsqueeze(x) read by two Shapes, both folded, and by the branches of an If: with
    constant folding alone onnxruntime drops d's producer and refuses the branches' read of it;
    with common subexpression elimination first (the two Shapes one) the model loads, as a user's
    session loads it. The check's verdict is that one. (Two of 2,204 light copies of fuzzer
    graphs were of this kind.)"""
    import numpy as np
    from helpers import F, graph, init, model
    from onnx import helper

    N = helper.make_node
    then_g = graph([N("Relu", ["d"], ["r"])], [], [("r", F)], name="then")
    else_g = graph([N("Concat", ["d", "d"], ["c"], axis=0)], [], [("c", F)], name="else")
    m = model([N("Unsqueeze", ["x", "two"], ["u"]), N("Div", ["one_f", "u"], ["d"]),
               N("Shape", ["d"], ["s1"]), N("Gather", ["s1", "zero"], ["g"]),
               N("Shape", ["d"], ["s2"]), N("Gather", ["s2", "two_s"], ["k"]), N("Greater", ["k", "one"], ["cond"]),
               N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
              [("x", F, [2, 3])], [("g", onnx.TensorProto.INT64), ("y", F)],
              [init("two", np.array([2], np.int64)), init("one_f", np.array([1.0], np.float32)),
               init("zero", np.array(0, np.int64)), init("two_s", np.array(2, np.int64)),
               init("one", np.array(1, np.int64))])
    data = m.SerializeToString()
    assert runtime.session_error(data, True, runtime.NOT_SHAPES) is not None
    assert runtime.session_error(data, True, ()) is None
    assert runtime.load_error(data, True) is None



def test_the_session_made_through_the_binding_gives_inference_sessions_verdict(monkeypatch):
    """runtime makes the session through onnxruntime's binding directly (InferenceSession's checks
    of the providers and reads of the metadata are none of a verdict's): on the fuzzer's light
    copies, refused and loading, its message is InferenceSession's own, and where the binding
    takes other arguments InferenceSession is asked instead."""
    import onnxruntime as ort

    def asked_of_inference_session(data, disabled):
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.log_severity_level = 4
        try:
            ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled))
        except Exception as exc:  # noqa: BLE001
            return str(exc)
        return None

    copies = _copies(range(6510, 6520), monkeypatch)
    verdicts = [(runtime.session_error(d, True, runtime.NOT_SHAPES), asked_of_inference_session(d, runtime.NOT_SHAPES))
                for d in copies]
    assert runtime._DIRECT
    assert all(ours == theirs for ours, theirs in verdicts), [v for v in verdicts if v[0] != v[1]]
    assert any(ours is None for ours, _ in verdicts) and any(ours is not None for ours, _ in verdicts)

    class Other:  # a binding whose session takes other arguments
        def InferenceSession(self, *args):  # noqa: N802
            raise TypeError("incompatible constructor arguments")

    monkeypatch.setattr(runtime, "_DIRECT", True)  # (restored so at the end)
    monkeypatch.setattr(ort.capi, "_pybind_state", Other())
    refused = next(d for d, (ours, _) in zip(copies, verdicts) if ours is not None)
    assert runtime.session_error(refused, True, runtime.NOT_SHAPES) == verdicts[copies.index(refused)][1]
    assert runtime._DIRECT is False
