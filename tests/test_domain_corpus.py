"""`domain` judged by onnxruntime on corpus models: every condition a model's domain states
is checked at its boundary (just inside runs with the inferred shapes, just outside fails or
gives other shapes; onnxsym.commands.boundary). The whole corpus: bench/domain_boundary.py;
here a sample that states conditions of each kind (a range from a position table, an equality
from a MatMul, a divisibility from a UNet's Concat, a Squeeze's rank, the Whisper table's cases)."""

import json
import os

import onnx
import pytest

from onnxsym.commands.boundary import check_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = {
    "models/domain/kv_decoder_ts.onnx": {"batch": 2, "seq": 3, "past_k": 4, "past_v": 4},
    "models/domain/gpt2_mask_ts.onnx": {"batch": 2, "seq": 5},
    "models/domain/unet_tiny_ts.onnx": {"batch": 1, "height": 16, "width": 16},
    "models/real/genai_whisper_decoder.onnx": None,  # (the manifest's sizes and feeds)
    "models/real/hummingbird_gemm.onnx": None,
}


def _manifest(path):
    with open(os.path.join(ROOT, "models/real/manifest.json")) as f:
        entry = next(e for e in json.load(f) if e["file"] == os.path.basename(path))
    return entry["sizes"][0], entry.get("feeds") or {}


@pytest.mark.parametrize("path", sorted(SAMPLE))
def test_every_condition_the_domain_states_holds_at_its_boundary(path):
    from resolution import feeds_for

    model = onnx.load(os.path.join(ROOT, path))
    base, spec = (SAMPLE[path], {}) if SAMPLE[path] is not None else _manifest(path)
    outcomes = check_model(model, base, lambda b: feeds_for(model, dict(b), spec))
    bad = [o for o in outcomes if o.verdict in ("too wide", "too narrow")]
    assert not bad, bad
    assert any(o.verdict == "ok" for o in outcomes), outcomes
