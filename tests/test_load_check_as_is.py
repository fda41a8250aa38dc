"""onnx's verdict on a written model is asked of its own bytes where its light copy would hold
what inference reads alike (loadcheck.light_as_is): the verdict must be the light copy's, on a
model taken and on one refused, with weights the copy keeps and weights it makes typed inputs."""

import numpy as np
import onnx
from helpers import F, init, model
from onnx import helper

from onnxsym import api
from onnxsym.output import loadcheck

N = helper.make_node


def _both(m: onnx.ModelProto) -> tuple[bool, bool]:
    """(refused as the model itself, refused as its light copy)"""
    light = loadcheck.LightModel(m, False, True)
    return (loadcheck.onnx_refusal(m.SerializeToString()) is not None,
            loadcheck.refusal(light, light.model, True, False) is not None)


def _matmul(weight_cols: int, declared: int | None = None) -> onnx.ModelProto:
    """x [n, 64] @ w [64, cols] (a weight of more elements than the copy keeps when cols > 64),
    with Reshape reading a small shape initializer; ``declared``: a wrong dim written on the output."""
    w = np.ones((64, weight_cols), np.float32)
    out = helper.make_tensor_value_info("y", F, ["n", declared if declared is not None else weight_cols])
    return model([N("MatMul", ["x", "w"], ["h"]), N("Reshape", ["h", "s"], ["y"])],
                 [helper.make_tensor_value_info("x", F, ["n", 64])], [out],
                 [init("w", w), init("s", np.array([-1, weight_cols], np.int64))])


def test_a_matmul_weight_the_copy_leaves_out_is_read_as_is_and_judged_alike():
    for cols in (32, 128):  # (2048 and 8192 elements: kept, and a typed input of the copy)
        taken = api.write_result(api.infer(_matmul(cols)), metadata_entries=False)
        assert loadcheck.light_as_is(taken, True)
        assert _both(taken) == (False, False)
        refused = _matmul(cols, declared=cols + 1)  # (onnx infers cols there: a wrong declared output dim)
        assert loadcheck.light_as_is(refused, True)
        assert _both(refused) == (True, True)
    assert not loadcheck.light_as_is(_matmul(512), True)  # (32768 elements: serialized, they cost more than the copy)


def test_an_embedding_table_the_copy_leaves_out_is_read_as_is_and_judged_alike():
    for declared in (128, 127):  # (taken, and refused: onnx infers 128 there)
        m = model([N("Gather", ["w", "i"], ["y"])], [helper.make_tensor_value_info("i", onnx.TensorProto.INT64, ["n"])],
                  [helper.make_tensor_value_info("y", F, ["n", declared])], [init("w", np.ones((64, 128), np.float32))])
        assert loadcheck.light_as_is(m, True)
        assert _both(m) == (declared != 128, declared != 128)


def test_a_large_initializer_a_node_reads_the_elements_of_is_not_read_as_is():
    m = model([N("Reshape", ["x", "s"], ["y"])], [helper.make_tensor_value_info("x", F, [4096, 2])],
              [helper.make_tensor_value_info("y", F, None)], [init("s", np.ones(4097, np.int64))])
    assert not loadcheck.light_as_is(m, True)  # (a Reshape reads its shape's elements)
    assert not loadcheck.light_as_is(_matmul(32), False)  # (nor a model whose nodes may be out of order)
