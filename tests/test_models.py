"""Every shipped model: zero wrong dims against onnxruntime, and how much resolves."""

import glob
import os

import onnx
import pytest

import onnxsym
from onnxsym.verify import verify

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
        pytest.skip(f"onnxruntime cannot run it: {exc}")
    assert report.ok, "\n".join(map(str, report.mismatches[:5]))


def test_shipped_models_are_found():
    assert len(MODELS) >= 10
    assert len(SHIPPED) > 100
