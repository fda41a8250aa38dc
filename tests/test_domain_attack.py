"""What tests/domain_attack.py found (random chains of the newer ops on graph inputs whose dims
are symbols, one symbol at a time moved to 0..8), each model held to onnxruntime in a child
process (a native crash there is no verdict, and is listed):

- STFT with a window of length 0 (or a frame_length of 0): onnxruntime's kernel divides by the
  frame length and dies of SIGFPE; the domain allowed it. Now the frame length is >= 1;
- and the attack itself, with fixed seeds: no size the domain allows that onnxruntime refuses,
  none it refuses that onnxruntime runs with the inferred shapes, no dim other than
  onnxruntime's.
"""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from op_verdicts import isolated_disagreements

import onnxsym

pytest.importorskip("onnxruntime")


def _model(nodes, inputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _grid(**axes):
    import itertools

    names = sorted(axes)
    return [dict(zip(names, v)) for v in itertools.product(*(axes[n] for n in names))]


def _agrees(m, tries, crashes_outside=True):
    n, bad, crashes = isolated_disagreements(m, tries, allow_zero=True)
    assert not bad, f"{len(bad)} of {n} sizes disagree:\n" + "\n".join(bad[:10])
    domain = onnxsym.infer(m, allow_zero=True).domain()
    inside = [s for s, _ in crashes if domain.violated(s) is None]
    assert not (crashes_outside and inside), f"onnxruntime crashes inside the domain at {inside}"
    return crashes


@pytest.mark.parametrize("onesided", [0, 1])
def test_stft_window_of_length_zero_is_outside(onesided):
    """A window of 0 (no frame_length): onnxruntime crashes (SIGFPE); 1 up to the signal runs."""
    m = _model([h.make_node("STFT", ["s", "st", "w"], ["y"], onesided=onesided)],
               [("s", T.FLOAT, ["b", "n", 1]), ("w", T.FLOAT, ["k"])], [("st", np.array(1, np.int64))])
    crashes = _agrees(m, _grid(b=[1], n=[0, 1, 3], k=[0, 1, 2, 3, 4]))
    assert crashes, "onnxruntime no longer crashes at a window of 0: the condition may be looser"
    assert onnxsym.infer(m, allow_zero=True).domain().violated({"b": 1, "n": 3, "k": 0}) is not None


def test_stft_frame_length_zero_runs_at_no_size():
    m = _model([h.make_node("STFT", ["s", "st", "", "fl"], ["y"])], [("s", T.FLOAT, ["b", "n", 1])],
               [("st", np.array(1, np.int64)), ("fl", np.array(0, np.int64))])
    with pytest.raises(onnxsym.ShapeContradiction, match="frame length 0"):
        onnxsym.infer(m)
