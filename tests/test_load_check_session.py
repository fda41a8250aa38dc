"""onnxruntime's load check runs constant folding as the one basic graph transformer
(onnxsym.model.runtime.NOT_SHAPES: the others rewrite graphs to run faster and compute no shape).
Its verdict must be the one every basic transformer gives, on the light copies the check makes,
refusals that only constant folding finds included (bench/ort_load_verdicts.py does the same
over thousands of fuzzer seeds and every model under models/)."""

import fuzzing
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
    verdicts = [(runtime.load_error(d, True), runtime.load_error(d, True, all_basic=True), runtime.load_error(d, False))
                for d in copies]
    assert all(v[0] == v[1] for v in verdicts), [v for v in verdicts if v[0] != v[1]]
    folded = [v[0] for v in verdicts if v[0] is not None and v[2] is None]
    assert folded and any("TopK" in text for text in folded), verdicts
    assert any(v[0] is None for v in verdicts)  # (some copies load)
