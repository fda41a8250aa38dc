"""The corpus of real models (models/real/, none made by this project): onnxsym writes no
wrong dim against onnxruntime at the manifest's sizes, and refuses no model that
onnxruntime runs."""

import functools
import json
import os

import onnx
import pytest

from bench.resolution import REAL, corpus, run_tool, runtime_shapes

ENTRIES = corpus(fetched=False)
SOURCES = {"torch TorchScript", "torch dynamo", "paddle", "tf2onnx", "sklearn/onnxmltools", "zoo IR 3", "quantized"}


@functools.lru_cache(maxsize=None)
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
