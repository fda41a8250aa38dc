"""Shape values found in Hugging Face transformers exports (models/real/make_hf.py), each
checked against onnxruntime: ViT's ``num_positions ** 0.5`` (a float Pow of constants),
quotients of sizes that share a polynomial factor (ViT's and Wav2Vec2's dynamo exports
divide ``32*batch*(n + 1)`` by ``16*batch*(n + 1)``), and torch's ``repeat`` as Tile repeats
made by a OneHot (Mixtral's experts)."""

import itertools

import numpy as np
import pytest
from helpers import F, init, model
from onnx import TensorProto, helper
from oracle import check, no_fresh, random_cases

from onnxsym import dims
from onnxsym.dims.text import parse_dim

pytest.importorskip("onnxruntime")

SIZES = [{"batch": 2, "seq": 5}, {"batch": 1, "seq": 8}, {"batch": 3, "seq": 1}]


def _scalar_dims(axes=(0, 1)):
    """Nodes: dim ``a`` of x as an int64 scalar ``d{a}``."""
    nodes = [helper.make_node("Shape", ["x"], ["s"])]
    for a in axes:
        nodes.append(helper.make_node("Gather", ["s", f"ax{a}"], [f"d{a}"], axis=0))
    return nodes, [init(f"ax{a}", np.array(a, np.int64)) for a in axes]


def _as_shape(names, out):
    """Nodes: int64 scalars ``names`` as the 1-D ``out``."""
    nodes = [helper.make_node("Unsqueeze", [n, "zero1"], [n + "_1"]) for n in names]
    return nodes + [helper.make_node("Concat", [n + "_1" for n in names], [out], axis=0)]


def test_float_pow_of_constants_with_an_integral_result_is_folded():
    """Pow(16.0, 0.5) = 4, Pow(3.0, 2) = 9, Pow(4.0, 1.5) = 8 in float32, cast to int64, are the
    sizes of a ConstantOfShape: [4, 9, 8], as onnxruntime computes them."""
    pows = [("p0", 16.0, 0.5), ("p1", 3.0, 2.0), ("p2", 4.0, 1.5)]
    nodes, inits = [], [init("zero1", np.array([0], np.int64))]
    for name, base, exp in pows:
        inits += [init(name + "b", np.array(base, np.float32)), init(name + "e", np.array(exp, np.float32))]
        nodes += [helper.make_node("Pow", [name + "b", name + "e"], [name + "f"]),
                  helper.make_node("Cast", [name + "f"], [name], to=TensorProto.INT64)]
    nodes += _as_shape([p[0] for p in pows], "shape") + [helper.make_node("ConstantOfShape", ["shape"], ["y"])]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["y", "shape"], inits)
    res = check(m, random_cases([("x", F, ["batch", "seq"])], SIZES), values=("shape",))
    assert res.shape("y") == (4, 9, 8)


@pytest.mark.parametrize("base, exp", [(2.0, 0.5), (10.0, 0.3), (3.0, -1.0), (3.0, 16.0)])
def test_float_pow_without_an_exact_integral_result_is_not_guessed(base, exp):
    """sqrt(2), 10**0.3, 1/3 and 3**16 (an odd number beyond float32's 2**24) are left alone: the
    ConstantOfShape they size gets a fresh dim, whose range holds onnxruntime's size."""
    nodes = [helper.make_node("Pow", ["b", "e"], ["f"]),
             helper.make_node("Mul", ["f", "k"], ["fk"]),  # a small size from each
             helper.make_node("Cast", ["fk"], ["n"], to=TensorProto.INT64),
             helper.make_node("Unsqueeze", ["n", "zero1"], ["shape"]),
             helper.make_node("ConstantOfShape", ["shape"], ["y"])]
    inits = [init("b", np.array(base, np.float32)), init("e", np.array(exp, np.float32)),
             init("k", np.array(1e-7 if exp > 10 else 3.0, np.float32)),
             init("zero1", np.array([0], np.int64))]
    m = model(nodes, [("x", F, ["batch"])], ["y"], inits)
    res = check(m, random_cases([("x", F, ["batch"])], [{"batch": 1}]), fresh_ok=("y",))
    assert isinstance(res.shape("y")[0], dims.Expr) and res.unresolved()


def test_quotient_of_sizes_sharing_a_polynomial_factor():
    """(32*batch*(seq*seq + 1)) / (16*batch*(seq*seq + 1)) = 2 and (6*batch*(seq + 1)) / (3*(seq + 1))
    = 2*batch (integer Div), and Mod of the first pair = 0: the ConstantOfShape they size is
    [2, 2*batch, 0, seq], as onnxruntime computes it."""
    nodes, inits = _scalar_dims()
    inits += [init(f"c{k}", np.array(k, np.int64)) for k in (1, 3, 6, 16, 32)] + [init("zero1", np.array([0], np.int64))]
    nodes += [
        helper.make_node("Mul", ["d1", "d1"], ["ss"]), helper.make_node("Add", ["ss", "c1"], ["ss1"]),
        helper.make_node("Mul", ["d0", "ss1"], ["n"]),
        helper.make_node("Mul", ["n", "c32"], ["num"]), helper.make_node("Mul", ["n", "c16"], ["den"]),
        helper.make_node("Div", ["num", "den"], ["q0"]), helper.make_node("Mod", ["num", "den"], ["r0"]),
        helper.make_node("Add", ["d1", "c1"], ["s1"]), helper.make_node("Mul", ["d0", "s1"], ["bs"]),
        helper.make_node("Mul", ["bs", "c6"], ["num1"]), helper.make_node("Mul", ["s1", "c3"], ["den1"]),
        helper.make_node("Div", ["num1", "den1"], ["q1"]),
    ] + _as_shape(["q0", "q1", "r0", "d1"], "shape") + [helper.make_node("ConstantOfShape", ["shape"], ["y"])]
    m = model(nodes, [("x", F, ["batch", "seq"])], ["y", "shape"], inits)
    res = check(m, random_cases([("x", F, ["batch", "seq"])], SIZES), values=("shape",))
    no_fresh(res)
    assert [str(d) for d in res.shape("y")] == ["2", "2*batch", "0", "seq"]


@pytest.mark.parametrize("text", [
    "(32*b + 32*b*(h//8)*(w//8))//(16*b + 16*b*(h//8)*(w//8))", "(-32*b + 32*b*(h//20))//(16*(h//20) - 16)",
    "(h + 1)//(2*h + 2)", "(-4*h - 4)//(2*h + 2)", "(7*h + 7) % (2*h + 2)", "(6*b*h + 3*b)//(2*h + 1)",
    "(b*h*h + b*h)//(h*h + h)", "(6*b*h + 3*b + 1)//(2*h + 1)", "(3*h - 3)//(h - 2)"])
def test_quotient_of_proportional_or_multiple_sizes_is_python_floor_division(text):
    """Each quotient equals Python's ``//`` and ``%`` of the same integers at every point where
    the divisor is not 0 (negative values included)."""
    e = parse_dim(text)
    names = sorted({"b", "h", "w"} & set(text))
    for values in itertools.product(range(-7, 22), repeat=len(names)):
        point = dict(zip(names, values))
        try:
            want = eval(text, {}, dict(point))
        except ZeroDivisionError:
            continue
        got = dims.evaluate(e, point)
        assert got == want, (text, point)


def test_one_hot_elements_as_tile_repeats():
    """torch's ``x.repeat(1, seq, 1)`` as TorchScript writes it: Tile repeats from
    OneHot([1], 3, [1, seq]) reshaped to [-1] ([1, seq, 1]); the Tile output is
    [batch, seq*seq, 4]. Also a 2-D OneHot with a negative and an out-of-range index on axis 0,
    its elements as onnxruntime computes them."""
    nodes, inits = _scalar_dims((1,))
    inits += [init("idx", np.array([1], np.int64)), init("depth", np.array(3, np.int64)),
              init("one1", np.array([1], np.int64)), init("minus1", np.array([-1], np.int64)),
              init("zero1", np.array([0], np.int64)),
              init("idx2", np.array([[0, -1, 7], [2, 1, -3]], np.int64)), init("vals2", np.array([5, 9], np.int64))]
    nodes += [helper.make_node("Unsqueeze", ["d1", "zero1"], ["seq1"]),
              helper.make_node("Concat", ["one1", "seq1"], ["vals"], axis=0),
              helper.make_node("OneHot", ["idx", "depth", "vals"], ["oh"]),
              helper.make_node("Reshape", ["oh", "minus1"], ["reps"]),
              helper.make_node("Tile", ["x", "reps"], ["y"]),
              helper.make_node("OneHot", ["idx2", "depth", "vals2"], ["oh2"], axis=0)]
    m = model(nodes, [("x", F, ["batch", "seq", 4])], ["y", "reps", "oh2"], inits)
    res = check(m, random_cases([("x", F, ["batch", "seq", 4])], SIZES), values=("reps", "oh2"))
    no_fresh(res)
    assert [str(d) for d in res.shape("y")] == ["batch", "seq**2", "4"]


def test_reshape_to_a_product_of_sizes_minus_one_is_not_zero():
    """BEiT's relative-position table: Reshape to [(2*h - 1)*(2*w - 1), -1] with h, w the patch
    grid after a Conv of kernel and stride 8 (so h, w >= 1). Expanded, 4*h*w - 2*h - 2*w + 1 is
    at least 1 (it grows with h where 4*w - 2 >= 0): a size, not 0 or -1; onnxruntime agrees."""
    nodes = [helper.make_node("Conv", ["x", "wt"], ["y"], kernel_shape=[8, 8], strides=[8, 8]),
             helper.make_node("Shape", ["y"], ["s"]),
             helper.make_node("Gather", ["s", "ax2"], ["h"], axis=0), helper.make_node("Gather", ["s", "ax3"], ["w"], axis=0),
             helper.make_node("Mul", ["h", "two"], ["h2"]), helper.make_node("Sub", ["h2", "one"], ["h3"]),
             helper.make_node("Mul", ["w", "two"], ["w2"]), helper.make_node("Sub", ["w2", "one"], ["w3"]),
             helper.make_node("Mul", ["h3", "w3"], ["t"]), helper.make_node("Mul", ["t", "two"], ["t2"])]
    nodes += _as_shape(["t2"], "flat") + _as_shape(["t", "minus1"], "target")
    nodes += [helper.make_node("ConstantOfShape", ["flat"], ["c"]), helper.make_node("Reshape", ["c", "target"], ["r"])]
    inits = [init("wt", np.ones((2, 3, 8, 8), np.float32)), init("ax2", np.array(2, np.int64)),
             init("ax3", np.array(3, np.int64)), init("two", np.array(2, np.int64)), init("one", np.array(1, np.int64)),
             init("minus1", np.array(-1, np.int64)), init("zero1", np.array([0], np.int64))]
    shape = ["batch", 3, "height", "width"]
    m = model(nodes, [("x", F, shape)], ["r"], inits)
    sizes = [{"batch": 1, "height": 8, "width": 8}, {"batch": 2, "height": 40, "width": 15},
             {"batch": 1, "height": 23, "width": 64}]
    res = check(m, random_cases([("x", F, shape)], sizes))
    no_fresh(res)
    assert str(res.shape("r")[1]) == "2"


def test_monotone_lower_bound_is_sound():
    """The bound from substituting a symbol's lower end where its coefficient is nonnegative,
    against every point of a grid (including polynomials where it must not apply)."""
    a, b = dims.sym("a", 1, 40), dims.sym("b", 2, 40)
    c = dims.sym("c", 0, 40) // 3
    for e in [(2*a - 1)*(2*b - 1), a*b - a - b, a*b - 3*a, a*b*c - 2*a*c - b + 1, (a - 2)*(b - 3), a*a*b - 5*a]:
        low = dims.ranges.lower_bound(e)
        true_min = min(dims.evaluate(e, {"a": x, "b": y, "c": z}) for x in range(1, 41) for y in range(2, 41)
                       for z in range(0, 41, 4))
        assert low <= true_min, (e, low, true_min)
    assert dims.ranges.lower_bound((2*a - 1)*(2*b - 1)) == 3
