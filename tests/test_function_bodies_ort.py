"""Function bodies (the backend suite's "_expanded" cases, issue 34): the single-op rules and the
engine over many-node graphs, each verdict checked against onnxruntime at sizes it refuses and
sizes it runs."""

import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnxsym
from tests.domain_boundary import expected, run

pytest.importorskip("onnxruntime")


def _agrees(m, b):
    """The domain's verdict at ``b`` is onnxruntime's; where it runs, with the inferred shapes."""
    res = onnxsym.infer(m)
    err, shapes = run(m, res, b)
    why = res.domain().violated(b)
    assert (why is None) == (err is None), (b, why, err)
    if err is None:
        assert shapes == expected(res, b)
    return err


def _model(nodes, inputs, outputs, opset=21, functions=()):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, et, s) for n, et, s in inputs],
                     [h.make_tensor_value_info(n, T.FLOAT, None) for n in outputs])
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset), h.make_opsetid("local", 1)],
                        functions=list(functions))


# --------------------------------------------------------------------- Conv

@pytest.mark.parametrize("m", [1, 2, 3, 4, 6])
def test_conv_group_divides_the_output_channels(m):
    """onnxruntime: "Output channels M is not divisible by group" (a depthwise causal conv)."""
    model = _model([h.make_node("Conv", ["x", "w"], ["y"], group=2)],
                   [("x", T.FLOAT, [1, 4, 5]), ("w", T.FLOAT, ["m", 2, 1])], ["y"])
    err = _agrees(model, {"m": m})
    assert (err is None) == (m % 2 == 0)


@pytest.mark.parametrize("k", [1, 3, 4, 5])
def test_conv_bias_has_the_output_channels(k):
    """onnxruntime: "bias must be a 1D tensor of size output_channels" (no broadcast of 1)."""
    model = _model([h.make_node("Conv", ["x", "w", "b"], ["y"])],
                   [("x", T.FLOAT, [1, 4, 5]), ("w", T.FLOAT, [4, 4, 1]), ("b", T.FLOAT, ["k"])], ["y"])
    err = _agrees(model, {"k": k})
    assert (err is None) == (k == 4)


# --------------------------------------------------------------------- Where on a test of the sizes

def _gqa_repeat():
    """Attention's body repeats the K heads: Where(q != kv and q % kv == 0, q / kv, 1), an Expand
    to [kv, that, d] and a Reshape to [q, d], which holds only where kv divides q."""
    c = h.make_tensor
    nodes = [
        h.make_node("Shape", ["q"], ["qh"], start=0, end=1),
        h.make_node("Shape", ["k"], ["kh"], start=0, end=1),
        h.make_node("Shape", ["k"], ["kd"], start=1, end=2),
        h.make_node("Constant", [], ["zero"], value=c("zero", T.INT64, [1], [0])),
        h.make_node("Constant", [], ["one"], value=c("one", T.INT64, [1], [1])),
        h.make_node("Constant", [], ["ax"], value=c("ax", T.INT64, [1], [1])),
        h.make_node("Equal", ["qh", "kh"], ["same"]),
        h.make_node("Not", ["same"], ["differ"]),
        h.make_node("Mod", ["qh", "kh"], ["rem"]),
        h.make_node("Equal", ["rem", "zero"], ["divides"]),
        h.make_node("And", ["differ", "divides"], ["gqa"]),
        h.make_node("Div", ["qh", "kh"], ["ratio"]),
        h.make_node("Where", ["gqa", "ratio", "one"], ["rep"]),
        h.make_node("Unsqueeze", ["k", "ax"], ["k3"]),
        h.make_node("Concat", ["kh", "rep", "kd"], ["to"], axis=0),
        h.make_node("Expand", ["k3", "to"], ["kx"]),
        h.make_node("Concat", ["qh", "kd"], ["back"], axis=0),
        h.make_node("Reshape", ["kx", "back"], ["y"]),
    ]
    return _model(nodes, [("q", T.FLOAT, ["qn", 3]), ("k", T.FLOAT, ["kn", 3])], ["y"])


@pytest.mark.parametrize("qn, kn", [(2, 2), (4, 2), (6, 3), (1, 2), (3, 2), (2, 4), (5, 5)])
def test_where_on_a_size_test_keeps_the_reshape_condition(qn, kn):
    err = _agrees(_gqa_repeat(), {"qn": qn, "kn": kn})
    assert (err is None) == (qn % kn == 0)


def test_where_on_a_size_test_is_a_dim():
    res = onnxsym.infer(_gqa_repeat())
    rep = res.values["rep"].value[0]
    for qn, kn in [(2, 2), (4, 2), (3, 2), (1, 2), (6, 3)]:
        want = qn // kn if qn != kn and qn % kn == 0 else 1
        assert onnxsym.dims.evaluate(rep, {"qn": qn, "kn": kn}) == want


# --------------------------------------------------------------------- conditions in an If branch

@pytest.mark.parametrize("op", ["GatherElements", "Gather"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_index_bounds_inside_an_if_branch(op, n):
    """A branch indexing with constants (AffineGrid's body gathers theta's 6 entries in its 2-D
    branch): the indices' bounds are walked in the branch too."""
    then = h.make_graph([h.make_node("Constant", [], ["idx"], value=h.make_tensor("idx", T.INT64, [2], [0, 2])),
                         h.make_node(op, ["x", "idx"], ["t"], axis=0)],
                        "then", [], [h.make_tensor_value_info("t", T.FLOAT, None)])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, None)])
    nodes = [h.make_node("Shape", ["c"], ["cs"]), h.make_node("Size", ["cs"], ["rank"]),
             h.make_node("Constant", [], ["one"], value=h.make_tensor("one", T.INT64, [], [1])),
             h.make_node("Equal", ["rank", "one"], ["cond"]),
             h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other)]
    model = _model(nodes, [("x", T.FLOAT, ["n"]), ("c", T.FLOAT, [2])], ["y"])
    err = _agrees(model, {"n": n})
    assert (err is None) == (n >= 3)


# --------------------------------------------------------------------- a model-local function

def _calls_local_function():
    """A model calling a local function whose body broadcasts its two inputs."""
    fn = h.make_function("local", "AddScaled", ["a", "b"], ["c"],
                         [h.make_node("Add", ["a", "b"], ["s"], name="add"), h.make_node("Relu", ["s"], ["c"])],
                         [h.make_opsetid("", 21)])
    return _model([h.make_node("AddScaled", ["x", "y"], ["z"], domain="local", name="call")],
                  [("x", T.FLOAT, [2, "n"]), ("y", T.FLOAT, ["m"])], ["z"], functions=[fn])


@pytest.mark.parametrize("n, m", [(2, 3), (3, 2), (2, 2), (1, 3), (4, 1)])
def test_conditions_inside_a_local_function_reach_the_domain(n, m):
    err = _agrees(_calls_local_function(), {"n": n, "m": m})
    assert (err is None) == (n == m or 1 in (n, m))


def test_a_condition_inside_a_local_function_names_the_call():
    why = onnxsym.infer(_calls_local_function()).domain().violated({"n": 2, "m": 3})
    assert [s.node for s in why.sources] == ["call/add"]


def _picked(test):
    """ConstantOfShape([Where(test(a, b), a, b + 1)]) over a = x's dim, b = y's: the output's dim is
    the picked size."""
    nodes = [h.make_node("Shape", ["x"], ["a"]), h.make_node("Shape", ["y"], ["b"]),
             h.make_node("Constant", [], ["one"], value=h.make_tensor("one", T.INT64, [1], [1])),
             h.make_node("Add", ["b", "one"], ["b1"])]
    nodes += test
    nodes += [h.make_node("Where", ["t", "a", "b1"], ["s"]),
              h.make_node("ConstantOfShape", ["s"], ["z"], value=h.make_tensor("v", T.FLOAT, [1], [0.0]))]
    return _model(nodes, [("x", T.FLOAT, ["n"]), ("y", T.FLOAT, ["m"])], ["z"])


TESTS = {
    "Less": [h.make_node("Less", ["a", "b"], ["t"])],
    "LessOrEqual": [h.make_node("LessOrEqual", ["a", "b"], ["t"])],
    "Greater": [h.make_node("Greater", ["a", "b"], ["t"])],
    "GreaterOrEqual": [h.make_node("GreaterOrEqual", ["a", "b"], ["t"])],
    "not Equal": [h.make_node("Equal", ["a", "b"], ["e"]), h.make_node("Not", ["e"], ["t"])],
    "Or": [h.make_node("Less", ["a", "b"], ["l"]), h.make_node("Equal", ["a", "one"], ["e"]),
           h.make_node("Or", ["l", "e"], ["t"])],
    "Xor": [h.make_node("Less", ["a", "b"], ["l"]), h.make_node("Equal", ["a", "one"], ["e"]),
            h.make_node("Xor", ["l", "e"], ["t"])],
}


@pytest.mark.parametrize("test", sorted(TESTS))
def test_where_on_a_size_test_picks_what_onnxruntime_picks(test):
    model = _picked(TESTS[test])
    res = onnxsym.infer(model)
    assert res.values["s"].value is not None  # a dim, not unknown
    for n, m in [(1, 1), (1, 2), (2, 1), (3, 3), (2, 5), (5, 2)]:
        err, shapes = run(model, res, {"n": n, "m": m})
        assert err is None and shapes == expected(res, {"n": n, "m": m}), (n, m)


def _nested_gather():
    """A local function calling another, whose body gathers its input's rows 0 and 2."""
    inner = h.make_function("local", "Pick", ["a"], ["c"],
                            [h.make_node("Constant", [], ["i"], value=h.make_tensor("i", T.INT64, [2], [0, 2])),
                             h.make_node("Gather", ["a", "i"], ["c"], axis=0)],
                            [h.make_opsetid("", 21)])
    outer = h.make_function("local", "Outer", ["a"], ["c"],
                            [h.make_node("Pick", ["a"], ["p"], domain="local"), h.make_node("Relu", ["p"], ["c"])],
                            [h.make_opsetid("", 21), h.make_opsetid("local", 1)])
    return _model([h.make_node("Outer", ["x"], ["z"], domain="local")], [("x", T.FLOAT, ["n", 2])], ["z"],
                  functions=[inner, outer])


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_index_bounds_inside_a_nested_local_function(n):
    err = _agrees(_nested_gather(), {"n": n})
    assert (err is None) == (n >= 3)


def _random_size_test(rng, nodes, values, depth):
    """A boolean of comparisons of ``values`` under And, Or, Xor, Not; its name."""
    out = f"t{rng.getrandbits(48)}"
    r = rng.random()
    if depth > 0 and r < 0.4:
        p, q = (_random_size_test(rng, nodes, values, depth - 1) for _ in range(2))
        nodes.append(h.make_node(rng.choice(["And", "Or", "Xor"]), [p, q], [out]))
    elif depth > 0 and r < 0.55:
        nodes.append(h.make_node("Not", [_random_size_test(rng, nodes, values, depth - 1)], [out]))
    else:
        op = rng.choice(["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
        nodes.append(h.make_node(op, [rng.choice(values), rng.choice(values)], [out]))
    return out


@pytest.mark.slow
def test_where_on_random_size_tests_against_onnxruntime():
    """Random tests of the sizes (x's dims n, m, n % m, y's k + 2) pick a size for a
    ConstantOfShape and a Reshape of x: where the domain allows a size and states everything,
    onnxruntime runs, with the inferred dims; where it refuses one, onnxruntime does too."""
    import random

    rng = random.Random(1)
    checked = 0
    for _ in range(60):
        nodes = [h.make_node("Shape", ["x"], ["a"], start=0, end=1), h.make_node("Shape", ["x"], ["b"], start=1, end=2),
                 h.make_node("Shape", ["y"], ["c"]),
                 h.make_node("Constant", [], ["two"], value=h.make_tensor("two", T.INT64, [1], [2])),
                 h.make_node("Mod", ["a", "b"], ["ab"]), h.make_node("Add", ["c", "two"], ["c2"])]
        values = ["a", "b", "c", "ab", "c2", "two"]
        test = _random_size_test(rng, nodes, values, 3)
        nodes += [h.make_node("Where", [test, rng.choice(values), rng.choice(values)], ["s"]),
                  h.make_node("Concat", ["s", "b"], ["shp"], axis=0),
                  h.make_node("ConstantOfShape", ["shp"], ["z"], value=h.make_tensor("v", T.FLOAT, [1], [0.0])),
                  h.make_node("Mul", ["s", "b"], ["sb"]), h.make_node("Reshape", ["x", "sb"], ["w"])]
        model = _model(nodes, [("x", T.FLOAT, ["n", "m"]), ("y", T.FLOAT, ["k"])], ["z", "w"])
        res = onnxsym.infer(model)
        assert res.values["s"].value is not None
        dom = res.domain()
        for _ in range(6):
            b = {"n": rng.randint(1, 6), "m": rng.randint(1, 6), "k": rng.randint(1, 6)}
            err, shapes = run(model, res, b)
            why = dom.violated(b)
            if why is not None:
                assert err is not None, (b, why.text)
                continue
            if err is not None:
                assert dom.unstated, (b, err)  # (a Reshape target onnxsym cannot prove >= 1)
                continue
            checked += 1
            for o in ("z", "w"):
                for d, got in zip(res.shape(o), shapes[o]):
                    if all(s.name in b for s in onnxsym.dims.free_symbols(d)):
                        assert onnxsym.dims.evaluate(d, b) == got, (o, b, d)
    assert checked > 100
