"""Every shipped model: zero wrong dims against onnxruntime, and how much resolves."""

import glob
import os

import onnx
import pytest

import onnxsym
from onnxsym.commands.verify import verify
from onnxsym.facts.fact import Origin

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = sorted(glob.glob(os.path.join(HERE, "..", "models", "*.onnx")))
ONNX_DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
SHIPPED = sorted(glob.glob(os.path.join(ONNX_DATA, "*", "*", "model.onnx")))


@pytest.mark.parametrize("path", MODELS, ids=os.path.basename)
def test_project_models_have_no_wrong_dim(path):
    result = onnxsym.infer(path)
    report = verify(path, result=result)
    assert report.ok, "\n".join(map(str, report.mismatches[:5]))
    assert report.checked_dims > 0


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: os.path.relpath(os.path.dirname(p), ONNX_DATA))
def test_onnx_shipped_models_have_no_wrong_dim(path):
    try:
        result = onnxsym.infer(path)
    except onnxsym.ShapeContradiction as exc:  # a model that contradicts itself must say where
        pytest.fail(f"contradiction reported: {exc}")
    try:
        report = verify(path, result=result)
    except onnxsym.OnnxsymError as exc:
        # refused inside the domain: only where the domain says the model needs something of its
        # input data it cannot promise (verify's ones need not meet it); else the domain is too wide
        assert "inside the domain" not in str(exc) or "needs of its input data" in str(exc), str(exc)
        pytest.skip(f"onnxruntime cannot run it: {exc}")
    assert report.ok, "\n".join(map(str, report.mismatches[:5]))
    name = os.path.basename(os.path.dirname(path))
    if name in NO_DIM_TO_COMPARE:  # the rank (0, or 1 with a fresh length) is still compared
        assert report.checked_dims == 0 and report.checked_values > 0
    else:
        assert report.checked_dims > 0


# Shipped models whose every tensor has no dim that a run decides: SequenceLength's
# scalar, and StringNormalizer's data-dependent length (a fresh symbol) with stopwords.
NO_DIM_TO_COMPARE = {"test_sequence_model6", "test_strnorm_model_monday_casesensintive_nochangecase"}


def test_shipped_models_are_found():
    assert len(MODELS) >= 18
    assert len(SHIPPED) > 100


@pytest.mark.parametrize("name", ["bert_tiny_ts", "gpt_tiny_ts", "llama_tiny_ts", "bert_tiny_dynamo",
                                  "gpt_tiny_dynamo", "llama_tiny_dynamo", "cnn_tiny_ts", "cnn_tiny_dynamo",
                                  "swin_tiny_ts", "swin_tiny_dynamo", "vit_tiny_ts", "vit_tiny_dynamo",
                                  "whisper_tiny_ts", "whisper_tiny_dynamo", "t5_tiny_ts", "t5_tiny_dynamo"])
def test_real_exports_resolve_every_dim(name):
    result = onnxsym.infer(os.path.join(HERE, "..", "models", name + ".onnx"))
    assert result.unresolved() == []
    assert result.stats()["symbolic_dims"] > 0


def test_float32_sizes_are_exact_under_a_recorded_bound():
    """The CNNs upsample by 2 and pool with ceil_mode: onnxruntime sizes those in float32,
    equal to the closed form only up to about 2**23; that bound is recorded, and a range
    within it needs no assumption."""
    path = os.path.join(HERE, "..", "models", "cnn_tiny_ts.onnx")
    bounds = [c for c in onnxsym.infer(path).constraints if c.origin is Origin.EXACT_WITHIN]
    assert bounds and all("float32" in c.reason for c in bounds)
    narrow = onnxsym.infer(path, ranges={"height": (1, 4096), "width": (1, 4096)})
    assert not [c for c in narrow.constraints if c.origin is Origin.EXACT_WITHIN] and not narrow.unresolved()


@pytest.mark.parametrize("name", ["edge_shape_arith", "edge_concat_pad"])
def test_edge_graphs_match_their_hand_written_expectations(name):
    """Each output's doc_string holds the shape worked out by hand when the graph was made."""
    result = onnxsym.infer(os.path.join(HERE, "..", "models", name + ".onnx"))
    compared = 0
    for out in result.model.graph.output:
        text = out.doc_string.split("expected:", 1)[1].strip().strip("[]")
        expected = [onnxsym.parse_dim(t) for t in _split_top(text)]
        got = result.shape(out.name)
        assert len(got) == len(expected)
        for b in range(1, 4):
            for s in range(1, 20):
                env = {"batch": b, "seq": s}
                assert [onnxsym.evaluate(d, env) for d in got] == [onnxsym.evaluate(d, env) for d in expected]
                compared += len(got)
    assert compared > 0


def _split_top(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def test_split_sizes_from_the_data_are_a_condition_on_the_data():
    """onnx's test_sequence_model8 splits X[n] by sizes read from a graph input: the domain says
    that they add up to n is data-dependent, and onnxruntime runs exactly where the data meet it
    (its own test data, and sizes that do or do not add up)."""
    import numpy as np
    from onnx import numpy_helper

    from onnxsym.model.isolated import Child, Refused

    folder = os.path.join(ONNX_DATA, "simple", "test_sequence_model8")
    path = os.path.join(folder, "model.onnx")
    domain = onnxsym.infer(path, allow_zero=True).domain()  # (its own data has n = 0)
    (text, src), = domain.on_data()
    assert "== n" in text and "'Splits'" in src.reason and src.op_type == "SplitToSequence"
    own = [numpy_helper.to_array(onnx.load_tensor(os.path.join(folder, "test_data_set_0", f"input_{i}.pb")))
           for i in range(2)]
    with Child() as child:
        child.load(onnx.load(path).SerializeToString())
        for x, splits, runs in [(*own, True), (np.ones(6, np.float32), np.array([1, 2, 3]), True),
                                (np.ones(6, np.float32), np.array([1, 2, 2]), False),
                                (np.ones(1, np.float32), np.array([1, 1, 1]), False)]:
            assert domain.violated({"n": len(x)}) is None  # (the sizes alone decide nothing)
            try:
                child.run({"X": x, "Splits": splits.astype(np.int64)}, ["len"])
                ran = True
            except Refused:
                ran = False
            assert ran is runs and (int(splits.sum()) == len(x)) is runs
