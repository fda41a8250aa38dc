"""int(sqrt(n)) where n is provably a square: a ViT's grid side from its token count on a
square image ((s//8)**2 tokens give s//8). IEEE's sqrt is correctly rounded, so the square
root of a perfect square held exactly is exact; the exactness of n itself in the float type
need not hold: past float32's 2**24 the cast rounds s*s, and sqrt of the rounded square is
still s while s <= 2**24 (float64: 2**53), a bound of the domain. Checked against
onnxruntime, also at the bound, where one more is outside and onnxruntime's answer differs."""

import numpy as np
import pytest
from helpers import I64, F, init, model
from onnx import TensorProto, helper
from oracle import ANY, check

import onnxsym
from onnxsym import dims

N = helper.make_node


def _grid_model(dims_, pool, float_type=F):
    """x -> (MaxPool 8x8) -> tokens = the product of the last two dims -> int(sqrt(tokens)) ->
    Reshape to [batch, 8, side, side] and ConstantOfShape([side])."""
    nodes = []
    src = "x"
    if pool:
        nodes.append(N("MaxPool", ["x"], ["p"], kernel_shape=[8, 8], strides=[8, 8]))
        src = "p"
    nodes += [N("Shape", [src], ["s"]),
              N("Gather", ["s", "i2"], ["a"]), N("Gather", ["s", "i3"], ["b"]),
              N("Mul", ["a", "b"], ["tokens"]),
              N("Cast", ["tokens"], ["tf"], to=float_type), N("Sqrt", ["tf"], ["side_f"]),
              N("Cast", ["side_f"], ["side"], to=I64), N("Unsqueeze", ["side", "zero"], ["side1"]),
              N("Concat", ["lead", "side1", "side1"], ["target"], axis=0),
              N("Reshape", [src, "target"], ["grid"]),
              N("ConstantOfShape", ["side1"], ["row"])]
    inits = [init("i2", np.array(2, np.int64)), init("i3", np.array(3, np.int64)),
             init("zero", np.array([0], np.int64)), init("lead", np.array([0, 0], np.int64))]
    return model(nodes, [("x", F, dims_)], ["grid", "row"], inits=inits, opset=13)


@pytest.mark.parametrize("pool", [False, True])
def test_the_side_of_a_square_grid_is_known(pool):
    m = _grid_model(["batch", 8, "s", "s"], pool)
    sizes = (8, 16, 40) if pool else (1, 3, 7)
    cases = [({"batch": b, "s": s}, {"x": np.random.rand(b, 8, s, s).astype(np.float32)})
             for b in (1, 2) for s in sizes]
    res = check(m, cases)
    grid = res.shape("grid")
    assert str(grid[0]) == "batch" and grid[1] == 8 and grid[2] is grid[3] is res.shape("row")[0]
    # (the pooled side: max(0, s - 8)//8 + 1, whose square is q**2 + 2*q + 1; check() ran them)
    assert {x.name for x in dims.free_symbols(grid[2])} == {"s"} and (pool or str(grid[2]) == "s")


def test_a_product_that_may_be_no_square_stays_unknown():
    m = _grid_model(["batch", 8, "h", "w"], False)
    cases = [({"batch": 1, "h": h, "w": w}, {"x": np.random.rand(1, 8, h, w).astype(np.float32)})
             for h, w in ((2, 8), (3, 3))]
    res = check(m, cases, fresh_ok=ANY)
    assert str(res.shape("row")[0]) in res.fresh


def _side_only(float_type):
    """side = int(sqrt(float(s*s))) of a [1, s] input, as ConstantOfShape([side]): small tensors
    at sizes where s*s passes the float type's exact integers."""
    nodes = [N("Shape", ["x"], ["sh"]), N("Gather", ["sh", "one"], ["s"]), N("Mul", ["s", "s"], ["n"]),
             N("Cast", ["n"], ["nf"], to=float_type), N("Sqrt", ["nf"], ["rf"]),
             N("Cast", ["rf"], ["r"], to=I64), N("Unsqueeze", ["r", "zero"], ["r1"]),
             N("ConstantOfShape", ["r1"], ["row"])]
    return model(nodes, [("x", F, [1, "s"])], ["row"],
                 inits=[init("one", np.array(1, np.int64)), init("zero", np.array([0], np.int64))], opset=13)


def test_float32_rounds_the_square_but_not_its_root_up_to_two_to_the_24():
    """float32 rounds s*s past 2**24, yet sqrt of the rounded square is s while s <= 2**24
    (floatops._square_roots); past it s itself is no float32, and onnxruntime's answer is not s."""
    m = _side_only(F)
    limit = 2**24
    cases = [({"s": s}, {"x": np.zeros((1, s), np.float32)}) for s in (1, 4097, 5793, limit - 1, limit)]
    res = check(m, cases)
    assert [str(d) for d in res.shape("row")] == ["s"]
    domain = res.domain()
    assert domain.violated({"s": limit}) is None and domain.violated({"s": limit + 1}) is not None
    from oracle import run_ort
    assert run_ort(m, {"x": np.zeros((1, limit + 1), np.float32)})["row"].shape != (limit + 1,)


def test_float64_keeps_sizes_far_beyond_float32s():
    m = _side_only(TensorProto.DOUBLE)
    res = check(m, [({"s": s}, {"x": np.zeros((1, s), np.float32)}) for s in (4097, 5000)])
    assert [str(d) for d in res.shape("row")] == ["s"]
    domain = res.domain()  # the cast keeps s*s exact, assuming s*s <= 2**53 (s <= 94906265)
    assert domain.violated({"s": 94906265}) is None and domain.violated({"s": 94906266}) is not None


def test_square_root_of_forms():
    from onnxsym.semantics.floatops import square_root
    s, t = dims.sym("s"), dims.sym("t")
    assert square_root(dims.mul(dims.mul(4, s), s)) is dims.mul(2, s)
    assert square_root(dims.mul(s, t)) is None and square_root(dims.add(dims.mul(s, s), 1)) is None
    assert square_root(49) == 7 and square_root(50) is None
    assert onnxsym is not None
