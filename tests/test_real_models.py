"""The corpus of real models (models/real/, none made by this project): onnxsym writes no
wrong dim against onnxruntime at the manifest's sizes, and refuses no model that
onnxruntime runs."""

import functools
import json
import os

import onnx
import pytest
from resolution import REAL, UNTUNED_GROUPS, corpus, run_tool, runtime_shapes

ENTRIES = corpus(fetched=False)
SOURCES = {"torch TorchScript", "torch dynamo", "paddle", "tf2onnx", "sklearn/onnxmltools", "zoo IR 3", "quantized"}


@functools.cache
def _truth(name):
    e = next(e for e in ENTRIES if e["name"] == name)
    model = onnx.load(e["path"])
    return e, model, runtime_shapes(model, e["sizes"], e["feeds"])


def test_corpus_covers_every_source_and_is_committed():
    with open(os.path.join(REAL, "manifest.json")) as f:
        rows = json.load(f)
    committed = [e for e in rows if e["commit"]]
    assert len(ENTRIES) == len(committed) >= 40  # every committed model is here
    assert SOURCES <= {e["group"] for e in ENTRIES}
    for e in rows:
        assert e["source"]["kind"] in ("wheel", "converter", "onnx package"), e["name"]
        assert any(isinstance(d, str) for ds in e["inputs"].values() for d in ds), f"{e['name']}: no symbolic dim"
        # two sizes, except where the model itself pins its only symbol (a Reshape to [1, N])
        assert len(e["sizes"]) >= 2 or "pins the batch" in e["note"], e["name"]
        # (an uncommitted model is fetched into models/real/fetched/ by make_real.py: maybe absent)
        assert not e["commit"] or os.path.getsize(e["path"] if "path" in e else os.path.join(REAL, e["file"])) < 2.5e6


@pytest.mark.parametrize("name", [e["name"] for e in ENTRIES])
def test_no_wrong_dim_and_no_refusal(name):
    e, model, runs = _truth(name)
    s = run_tool("onnxsym", model, runs, e["sizes"])
    assert not s.refused, f"onnxsym refused a model onnxruntime runs: {s.error}"
    assert s.wrong == 0, f"wrong dims: {sorted(s.wrong_at)[:5]}"
    assert s.correct > 0


# Where onnxsym still resolves fewer dims than a peer, and why (each strict: it fails once fixed).
BEHIND: dict = {}  # model name -> why onnxsym resolves fewer dims than a peer (a strict xfail)


def _peers():
    from resolution import TOOLS, available

    missing = [t for t in TOOLS if not available(t)]
    assert not missing, f"{missing} not installed: it is in the test extra"
    return [t for t in TOOLS if t != "onnxsym"]


@pytest.mark.parametrize("name", [pytest.param(e["name"], marks=pytest.mark.xfail(strict=True, reason=BEHIND[e["name"]]))
                                  if e["name"] in BEHIND else e["name"] for e in ENTRIES
                                  if e["group"] not in UNTUNED_GROUPS])  # (their own test: test_untuned_families)
@pytest.mark.slow
def test_resolves_at_least_as_many_dims_as_the_best_peer(name):
    """onnxruntime's symbolic_shape_infer, onnx's infer_shapes(data_prop=True) and
    onnx-shape-inference run here too; each correct dim of theirs is checked against
    onnxruntime like ours."""
    e, model, runs = _truth(name)
    mine = run_tool("onnxsym", model, runs, e["sizes"])
    best = max(((run_tool(t, model, runs, e["sizes"]), t) for t in _peers()), key=lambda st: st[0].correct)
    assert mine.correct >= best[0].correct, \
        f"{best[1]} resolves {best[0].correct} correct dims, onnxsym {mine.correct}: " \
        f"{sorted(best[0].correct_at - mine.correct_at)[:5]}"


def test_the_scoring_sees_a_wrong_dim_and_a_refusal():
    """The harness itself: one dim written wrong in onnxsym's output counts as one wrong dim,
    a dim over no input symbol as unresolved, and a tool that raises as a refusal."""
    import resolution

    import onnxsym

    e, model, runs = _truth("unet_dynamo")
    written = onnxsym.annotate(model)
    vi = next(v for v in written.graph.value_info if v.name in runs[0] and len(runs[0][v.name]) == 4)
    good = resolution.score(resolution.written_shapes(written, ["batch", "height", "width"]), runs, e["sizes"])
    d = vi.type.tensor_type.shape.dim
    d[0].Clear()
    d[0].dim_param = "batch + 1"
    d[2].Clear()
    d[2].dim_param = "nobody_knows"
    bad = resolution.score(resolution.written_shapes(written, ["batch", "height", "width"]), runs, e["sizes"])
    assert (good.wrong, bad.wrong) == (0, 1) and bad.correct == good.correct - 2
    assert (vi.name, 0) in bad.wrong_at
    resolution.RUNNERS["raises"] = lambda m: (_ for _ in ()).throw(RuntimeError("no"))
    try:
        s = resolution.run_tool("raises", model, runs, e["sizes"])
    finally:
        del resolution.RUNNERS["raises"]
    assert s.refused and s.correct == 0 and "RuntimeError" in s.error
