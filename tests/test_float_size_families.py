"""The corpus group of sizes computed in float (models/real/make_float_sizes.py): audio
front-ends whose frame count is ``floor((T - 64) / 16) + 1`` in float32 or float64, a detector's
anchor grid from float strides, upsamplers by float scales. Each is run in onnxruntime at the
manifest's sizes, from an empty signal through the frame edges (T = 0, 1, 63, 64, 65, ...,
16000), on every feed of resolution.feed_variants; onnxsym must write every dim, none wrong."""

import functools

import onnx
import pytest
from resolution import corpus, entry_runs, run_tool

GROUP = "float-computed sizes"
MODELS = ["float_frames_dynamo", "float_frames_tensor_ts", "float_frames_tensor_dynamo", "float_frames_onnxscript",
          "float_anchor_grid_onnxscript", "float_upsample_ts", "float_upsample_dynamo", "float_sym_arith_dynamo"]
ENTRIES = {e["name"]: e for e in corpus(fetched=False) if e["group"] == GROUP}


def test_the_group_is_in_the_corpus_with_edge_sizes():
    assert set(ENTRIES) == set(MODELS)
    for name in ("float_frames_onnxscript", "float_frames_dynamo"):
        ts = {b["T"] for b in ENTRIES[name]["sizes"]}
        assert {0, 1, 63, 64, 65, 399, 400, 401, 16000} <= ts, name


@functools.cache
def _runs(name):
    e = ENTRIES[name]
    model = onnx.load(e["path"])
    sizes, runs = entry_runs(model, e)
    return model, sizes, runs


@pytest.mark.parametrize("name", MODELS)
def test_every_dim_resolved_and_right(name):
    model, sizes, runs = _runs(name)
    s = run_tool("onnxsym", model, runs, sizes)
    assert not s.refused, s.error
    assert s.wrong == 0, f"wrong dims: {sorted(s.wrong_at)[:5]}"
    assert s.unresolved == 0 and s.correct == s.total > 0, (s.correct, s.total)
