"""An inference leaves no reference cycle behind: its engine and everything it holds (every
value, the rule memo) are freed by reference counting when the call returns, not by Python's
cyclic garbage collector, whose passes over them cost a large model's call as much as a third of
its time (the collector traverses every object a cycle keeps alive, again at each pass)."""

import gc
import os

import onnx
import pytest

import onnxsym
from onnxsym.ort_compat import SymbolicShapeInference

REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "real")


def _garbage_left(call) -> int:
    """How many objects ``call()`` left in reference cycles (what the collector then frees)."""
    call()  # (a first call fills the process's caches)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        call()
        return gc.collect()
    finally:
        if enabled:
            gc.enable()


@pytest.mark.parametrize("name", ["hummingbird_gemm", "silero_vad_16k_op15", "tf_gru_text"])
def test_an_inference_leaves_no_cycle(name):
    # (a Squeeze tried both ways, Ifs, a Loop: the trial engines, the If branches' outputs)
    m = onnx.load(os.path.join(REAL, f"{name}.onnx"))
    assert _garbage_left(lambda: onnxsym.infer(m)) == 0
    assert _garbage_left(lambda: SymbolicShapeInference.infer_shapes(m)) == 0


def test_the_count_sees_a_cycle():
    class Node:
        pass

    def make():
        a, b = Node(), Node()
        a.other, b.other = b, a

    assert _garbage_left(make) > 0

