"""The load check judges one node of each kind (onnxsym.output.repeats): nodes with one memo key
whose values are written as their values say are one question to onnx's inference. Its verdict
must be the whole model's: checked against the whole-model check on fuzz graphs and their
copies with every node twice, on a repeated refusal, and on a value where onnx infers more
than is written (the next layer would see more: the whole model is judged)."""

import json
import os

import numpy as np
import onnx
import pytest
from helpers import F, init, model
from onnx import helper
from oracle import check_written_runs, session_of

import onnxsym
from onnxsym import api
from onnxsym.output import loadcheck, repeats

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
N = helper.make_node


def _verdicts(m, monkeypatch):
    """The load verdict as judged by kind (every node's kind tried: no share too small) and as
    judged on the whole model."""
    monkeypatch.setattr(repeats, "_WORTH", 1.0)
    by_kind = api.infer(m).load_verdict
    with monkeypatch.context() as mp:
        mp.setattr(api, "_taken_by_kind", lambda result: False)
        whole = api.infer(m).load_verdict
    return by_kind, whole


def _repeated(m, times=2):
    """``m`` with each node ``times`` times: each copy reads the copies of what the first reads."""
    out = onnx.ModelProto()
    out.CopyFrom(m)
    made = {o for n in out.graph.node for o in n.output if o}
    copies = []
    for k in range(1, times):
        for n in m.graph.node:
            c = onnx.NodeProto()
            c.CopyFrom(n)
            c.name = f"{n.name or n.op_type}_again{k}"
            c.input[:] = [f"{x}_again{k}" if x in made else x for x in n.input]
            c.output[:] = [f"{x}_again{k}" if x in made else x for x in n.output]
            copies.append(c)
    out.graph.node.extend(copies)
    return out


def _split_layers(count):
    """``count`` copies of fuzzer seed 4136's kind: x ``[seq, 3]`` reshaped to ``[3, seq]`` by a
    target computed from its shape, then an opset-18 Split without ``num_outputs`` (onnx refuses
    it once it sees the axis's dim, 3, which only onnxsym knows); each layer's parts summed."""
    nodes, outs = [], []
    for k in range(count):
        s = lambda name: f"{name}{k}"  # noqa: E731
        nodes += [N("Shape", ["x"], [s("s")]), N("Slice", [s("s"), "one", "two"], [s("c")]),
                  N("Slice", [s("s"), "zero", "one"], [s("n")]), N("Concat", [s("c"), s("n")], [s("tgt")], axis=0),
                  N("Reshape", ["x", s("tgt")], [s("t")]),
                  N("Split", [s("t")], [s("a"), s("b"), s("d")], axis=0, name=s("split")),
                  N("Sum", [s("a"), s("b"), s("d")], [s("y")])]
        outs.append((s("y"), F))
    return model(nodes, [("x", F, ["seq", 3])], outs,
                 [init("zero", np.array([0], np.int64)), init("one", np.array([1], np.int64)),
                  init("two", np.array([2], np.int64))], opset=18)


def test_a_refusal_in_a_repeated_layer_is_found_and_written_around_in_every_layer(monkeypatch):
    monkeypatch.setattr(repeats, "_WORTH", 1.0)  # (each layer's Shape and Reshape read the input: their own)
    asked = []
    takes = loadcheck.takes_as_written
    monkeypatch.setattr(loadcheck, "takes_as_written", lambda m: asked.append(takes(m)) or asked[-1])
    m = _split_layers(6)
    session_of(m)  # onnxruntime loads the model as given
    result = api.infer(m)
    assert asked == [False]  # one Split of six was asked, and refused: the whole model judged
    assert result.load_verdict is not None and "Split" in result.load_verdict.describe()
    written = onnxsym.annotate(m)
    withheld = json.loads({p.key: p.value for p in written.metadata_props}["onnxsym.withheld"])
    assert {f"t{k}" for k in range(6)} <= set(withheld), withheld
    check_written_runs(m, written, [{"seq": s} for s in (3, 6, 1)], lambda b: {"x": np.ones([b["seq"], 3], np.float32)})


def test_a_value_onnx_infers_more_of_than_is_written_sends_the_whole_model_to_the_judge():
    """Written ``n`` where onnx's inference finds 3: a reader in a layer left out would see 3."""
    m = model([N("Relu", ["x"], ["y"])], [("x", F, [3])], [("y", F)])
    m.graph.value_info.append(helper.make_tensor_value_info("y2", F, ["n"]))
    m.graph.node.append(N("Relu", ["x"], ["y2"]))
    assert not loadcheck.takes_as_written(m)
    m.graph.value_info[0].type.tensor_type.shape.dim[0].dim_value = 3
    assert loadcheck.takes_as_written(m)


def test_a_repeated_export_is_judged_on_a_few_nodes_and_the_whole_model_agrees(monkeypatch):
    """The shipped TorchScript LLaMA export, its nodes four times over."""
    m = _repeated(onnx.load(os.path.join(ROOT, "models", "llama_tiny_ts.onnx")), 4)
    kept = []
    original = repeats.kept_nodes
    monkeypatch.setattr(repeats, "kept_nodes", lambda r, s: kept.append(original(r, s)) or kept[-1])
    by_kind, whole = _verdicts(m, monkeypatch)
    assert by_kind is None and whole is None
    assert kept and kept[0] is not None and len(kept[0][0]) < len(m.graph.node) / 3


def test_an_annotated_export_is_judged_on_a_few_nodes_and_the_whole_model_agrees(monkeypatch):
    """The same export annotated (every value declared, as a CI gate sees a model it annotated
    before) and as onnx's own inference declares it: a declaration overwritten with the value
    leaves a node of one kind with its twins."""
    m = _repeated(onnx.load(os.path.join(ROOT, "models", "llama_tiny_ts.onnx")), 4)
    for declared in (onnxsym.annotate(m), onnx.shape_inference.infer_shapes(m)):
        assert len(declared.graph.value_info) > len(m.graph.node) / 2
        kept = []
        original = repeats.kept_nodes
        with monkeypatch.context() as mp:
            mp.setattr(repeats, "kept_nodes", lambda r, s: kept.append(original(r, s)) or kept[-1])
            by_kind, whole = _verdicts(declared, monkeypatch)
        assert by_kind is None and whole is None
        assert kept and kept[0] is not None and len(kept[0][0]) < len(m.graph.node) / 3


@pytest.mark.parametrize("seed", [495, 4136, 4588, 6515, *range(4100, 4120)])
def test_the_verdict_by_kind_is_the_whole_models_on_declared_fuzz_graphs(seed, monkeypatch):
    """Fuzzer graphs tripled, then declared by onnxsym (annotated) and by onnx's inference."""
    import fuzzing

    m = fuzzing.random_model(seed)
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in m.graph.node for a in n.attribute):
        return
    m = _repeated(m, 3)
    for declare in (onnxsym.annotate, onnx.shape_inference.infer_shapes):
        try:
            declared = declare(m)
            by_kind, whole = _verdicts(declared, monkeypatch)
        except (onnxsym.OnnxsymError, onnx.shape_inference.InferenceError):
            continue
        assert (by_kind is None) == (whole is None), (seed, declare, by_kind, whole)


def _fuzz_models(seeds):
    import fuzzing

    for seed in seeds:
        m = fuzzing.random_model(seed)
        yield seed, m
        if not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                   for n in m.graph.node for a in n.attribute):
            yield seed, _repeated(m)


@pytest.mark.parametrize("block", range(4))
def test_the_verdict_by_kind_is_the_whole_models_on_fuzz_graphs(block, monkeypatch):
    """Fuzzer seeds, as generated and doubled, with the kinds tried wherever they leave a node
    out; seeds 495 and 4136 are refused (a Slice onnx infers otherwise, a Split)."""
    seeds = [495, 4136, 4588, 6515] if block == 0 else range(40 * block, 40 * block + 40)
    for seed, m in _fuzz_models(seeds):
        try:
            by_kind, whole = _verdicts(m, monkeypatch)
        except onnxsym.OnnxsymError:
            continue
        assert (by_kind is None) == (whole is None), (seed, by_kind, whole)


def test_a_node_of_domain_ai_onnx_is_not_one_kind_with_its_twin_of_the_default_domain(monkeypatch):
    """To inference both are the default domain (one memo key); onnx refuses the one whose domain,
    "ai.onnx", no opset imports: judged by kind, it is asked as the whole model asks it."""
    nodes = [N("Relu", ["x"], [f"y{k}"]) for k in range(6)] + [N("Relu", ["x"], ["z"], domain="ai.onnx")]
    m = model(nodes, [("x", F, ["n", 3])], [("z", F)])
    outcomes = []
    for judge_by_kind in (True, False):
        with monkeypatch.context() as mp:
            mp.setattr(repeats, "_WORTH", 1.0)
            if not judge_by_kind:
                mp.setattr(api, "_taken_by_kind", lambda result: False)
            with pytest.raises(onnxsym.OnnxsymError) as exc:
                api.infer(m)
            outcomes.append(str(exc.value))
    assert outcomes[0] == outcomes[1] and "ai.onnx" in outcomes[0]
