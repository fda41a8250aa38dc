"""The domain against onnxruntime's run/refuse verdict on the op patterns a third adversarial
round found (tests/op_patterns.py): for each model, at every size of a grid around its
conditions' boundaries, the domain calls a size valid exactly where onnxruntime runs the model
(and the grid holds both)."""

import itertools

import numpy as np
import pytest
from helpers import F, model
from onnx import helper
from op_patterns import CASES, batch_norm, bn_feeds, const, ones, runs

import onnxsym
from onnxsym.errors import InvalidModel, ShapeContradiction

n = helper.make_node


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_domain_is_what_onnxruntime_runs(name):
    m, grid, feeds = CASES[name]
    result = onnxsym.infer(m, allow_zero=True)
    domain = result.domain()
    verdicts, wrong = set(), []
    for values in itertools.product(*grid.values()):
        sizes = dict(zip(grid, values))
        with result.env:
            broken = domain.violated(sizes)
        ran = runs(m, feeds(**sizes))
        verdicts.add(ran)
        if ran != (broken is None):
            wrong.append((sizes, "onnxruntime runs" if ran else "onnxruntime refuses",
                          broken.text if broken is not None else "the domain holds"))
    assert not wrong, wrong[:5]
    assert verdicts == {True, False}  # the grid crosses a boundary


def test_batch_norm_7_spatial0_with_1d_parameters_fails_at_every_size():
    m = batch_norm(7, spatial=0)
    for inp in m.graph.input[1:]:
        del inp.type.tensor_type.shape.dim[1:]
    assert not any(runs(m, bn_feeds(b, c, h, p)) for b, c, h, p in itertools.product((1, 2), (1, 2), (1, 2), (1, 2, 4)))
    with pytest.raises(ShapeContradiction, match="onnxruntime needs"):
        onnxsym.infer(m)


@pytest.mark.parametrize("opset", [7, 9])
@pytest.mark.parametrize("scales", [[1, 1, 0.5, 2], [0.5, 1, 1, 1], [1, 1, 0.99, 1]])
def test_upsample_with_a_scale_below_one_is_invalid(opset, scales):
    if opset == 7:
        m = model([n("Upsample", ["x"], ["y"], scales=[float(s) for s in scales])], [("x", F, ["b", 2, "h", 4])],
                  [("y", F, None)], opset=7)
    else:
        m = model([n("Upsample", ["x", "s"], ["y"])], [("x", F, ["b", 2, "h", 4])], [("y", F, None)], opset=9,
                  inits=[const("s", np.array(scales, np.float32))])
    assert not any(runs(m, {"x": ones(b, 2, h, 4)}) for b in (1, 2) for h in (1, 4))
    with pytest.raises(InvalidModel, match="below 1; onnxruntime refuses it when it loads"):
        onnxsym.infer(m)
    up = [1.0, 1.0, 1.5, 2.0]  # (1 and above: runs)
    if opset == 7:
        m.graph.node[0].attribute[0].floats[:] = up
    else:
        m.graph.initializer[0].CopyFrom(const("s", np.array(up, np.float32)))
    assert runs(m, {"x": ones(1, 2, 4, 4)}) and onnxsym.infer(m).shape("y")[3] == 8
