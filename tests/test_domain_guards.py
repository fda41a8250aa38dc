"""A condition from a subgraph holds only where that subgraph runs (issue 21, item 7): it
carries the subgraph's guards (an If's condition, a Loop's ``M >= 1``), the domain states it
as ``if G: C``, and a size is in the domain when some choice of the data runs it. Checked
against onnxruntime at every size of a small range."""

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

import onnxsym
from onnxsym.cli import main
from onnxsym.commands.verify import feeds
from tests.helpers import model
from tests.oracle import run_ort

F = T.FLOAT


def _ints(name, vals):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name, T.INT64, [len(vals)], vals))


def _scalar(name, v):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name, T.INT64, [], [v]))


def _n_of_x():
    """``n0``: x's length as a scalar."""
    return [h.make_node("Shape", ["x"], ["s"]), _ints("z", [0]), h.make_node("Gather", ["s", "z"], ["n1"]),
            h.make_node("Squeeze", ["n1", "z"], ["n0"])]


def _runs(m, feeds_):
    try:
        run_ort(m, feeds_)
        return True
    except Exception:  # onnxruntime refuses the sizes
        return False


def _check(m, path, box, ok, at=None):
    onnx.save(m, path)
    r = CliRunner().invoke(main, ["check", path, "--require", box, "--allow-data-dependent", "--max-unresolved", "99"])
    assert (r.exit_code == 0) == ok, (box, r.output)
    if at is not None:
        assert f"fails at {at}" in r.output, r.output


def test_a_loop_body_that_may_run_no_iteration_needs_its_condition_only_where_it_runs(tmp_path):
    """Loop(M = n - 3) whose body reshapes x [n] to [2, -1]: n must be even only where M >= 1."""
    body = h.make_graph([_ints("t", [2, -1]), h.make_node("Reshape", ["x", "t"], ["r"], name="body_reshape"),
                         h.make_node("Identity", ["cin"], ["cout"]),
                         h.make_node("ReduceSum", ["r"], ["rs"], keepdims=0)], "body",
                        [h.make_tensor_value_info("it", T.INT64, []), h.make_tensor_value_info("cin", T.BOOL, [])],
                        [h.make_tensor_value_info("cout", T.BOOL, []), h.make_tensor_value_info("rs", F, None)])
    m = model(_n_of_x() + [_scalar("three", 3), h.make_node("Sub", ["n0", "three"], ["M"]),
                           h.make_node("Loop", ["M", ""], ["scan"], body=body, name="loop")],
              [("x", F, ["n"])], ["scan"], ir=8)
    d = onnxsym.infer(m).domain()
    (c,) = d.conditions
    assert c.describe().startswith("if n - 3 >= 1: n % 2 == 0: Reshape 'body_reshape'")
    for n in range(1, 10):
        assert (d.violated({"n": n}) is None) == _runs(m, {"x": np.ones(n, np.float32)}) == (n <= 4 or n % 2 == 0), n
    _check(m, str(tmp_path / "loop.onnx"), "n=1:4", True)
    _check(m, str(tmp_path / "loop.onnx"), "n=1:6", False, "n = 5")


def test_an_if_on_the_sizes_needs_its_branch_condition_only_where_it_takes_that_branch(tmp_path):
    """If(n > 2) whose then branch takes TopK(5) of x [n]: onnxruntime runs n <= 2 and n >= 5."""
    then = h.make_graph([_ints("k", [5]), h.make_node("TopK", ["x", "k"], ["a", "ai"], name="then_topk")], "then",
                        [], [h.make_empty_tensor_value_info("a")])
    other = h.make_graph([h.make_node("Identity", ["x"], ["b"])], "else", [], [h.make_empty_tensor_value_info("b")])
    m = model(_n_of_x() + [_scalar("two", 2), h.make_node("Greater", ["n0", "two"], ["c"]),
                           h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="if")],
              [("x", F, ["n"])], ["y"], ir=8)
    d = onnxsym.infer(m).domain()
    (c,) = d.conditions
    assert c.describe().startswith("if 2 < n: n >= 5: TopK 'then_topk'") and d.ranges["n"][0] == 1
    for n in range(1, 9):
        assert (d.violated({"n": n}) is None) == _runs(m, {"x": np.ones(n, np.float32)}) == (n <= 2 or n >= 5), n
    _check(m, str(tmp_path / "if.onnx"), "n=1:2", True)
    _check(m, str(tmp_path / "if.onnx"), "n=5:4096", True)
    _check(m, str(tmp_path / "if.onnx"), "n=1:3", False, "n = 3")


def _if_on_flag(then_nodes, else_nodes, inputs):
    then = h.make_graph(then_nodes, "then", [], [h.make_empty_tensor_value_info("a")])
    other = h.make_graph(else_nodes, "else", [], [h.make_empty_tensor_value_info("b")])
    return model([h.make_node("If", ["flag"], ["out"], then_branch=then, else_branch=other, name="if")],
                 inputs + [("flag", T.BOOL, [])], ["out"], ir=8)


def test_a_broadcast_in_a_branch_is_a_condition_under_that_branch():
    """Add(x [n], y [m]) in the then branch of an If on a bool input: n and m must agree (or
    one be 1) only with flag true; verify feeds flag false where they do not."""
    m = _if_on_flag([h.make_node("Add", ["x", "y"], ["a"], name="then_add")],
                    [h.make_node("Identity", ["x"], ["b"])], [("x", F, ["n"]), ("y", F, ["m"])])
    res = onnxsym.infer(m)
    d = res.domain()
    (c,) = d.conditions
    assert c.describe().startswith("if flag: n == m (or n == 1 or m == 1): Add 'then_add'"), c.describe()
    assert d.violated({"n": 2, "m": 3}) is None
    x, y = np.ones(2, np.float32), np.ones(3, np.float32)
    assert not _runs(m, {"x": x, "y": y, "flag": np.array(True)}) and _runs(m, {"x": x, "y": y, "flag": np.array(False)})
    fed = feeds(res, {"n": 2, "m": 3})
    assert fed["flag"].tolist() is False and _runs(m, fed)
    assert feeds(res, {"n": 3, "m": 3})["flag"].tolist() is True  # (either runs: the first choice)


@pytest.mark.parametrize("n", range(1, 9))
def test_two_branches_each_with_its_own_divisibility(n, tmp_path):
    """Then reshapes x [n] to [2, -1], else to [3, -1]: a size runs where either divides it."""
    m = _if_on_flag([_ints("t2", [2, -1]), h.make_node("Reshape", ["x", "t2"], ["a"], name="then_reshape")],
                    [_ints("t3", [3, -1]), h.make_node("Reshape", ["x", "t3"], ["b"], name="else_reshape")],
                    [("x", F, ["n"])])
    d = onnxsym.infer(m).domain()
    assert sorted(c.describe().split(": R")[0] for c in d.conditions) == ["if flag: n % 2 == 0",
                                                                         "if not flag: n % 3 == 0"]
    x = np.ones(n, np.float32)
    runs = _runs(m, {"x": x, "flag": np.array(True)}) or _runs(m, {"x": x, "flag": np.array(False)})
    assert (d.violated({"n": n}) is None) == runs == (n % 2 == 0 or n % 3 == 0)
    if n == 1:
        _check(m, str(tmp_path / "two.onnx"), "n=2:4", True)
        _check(m, str(tmp_path / "two.onnx"), "n=2:5", False, "n = 5")


def test_nested_guards_and_a_negated_condition():
    """If(not flag): then an If(n > 2) whose then takes TopK(5); else Reshape [3, -1]. The TopK's
    need holds under both guards; a size is in the domain where either value of flag runs it."""
    ithen = h.make_graph([_ints("k", [5]), h.make_node("TopK", ["x", "k"], ["a", "ai"], name="inner_topk")], "ithen",
                         [], [h.make_empty_tensor_value_info("a")])
    ielse = h.make_graph([h.make_node("Identity", ["x"], ["b"])], "ielse", [], [h.make_empty_tensor_value_info("b")])
    then = h.make_graph(_n_of_x() + [_scalar("two", 2), h.make_node("Greater", ["n0", "two"], ["c"]),
                                     h.make_node("If", ["c"], ["t"], then_branch=ithen, else_branch=ielse,
                                                 name="inner_if")],
                        "then", [], [h.make_empty_tensor_value_info("t")])
    other = h.make_graph([_ints("t3", [3, -1]), h.make_node("Reshape", ["x", "t3"], ["e"], name="else_reshape"),
                          _ints("m1", [-1]), h.make_node("Reshape", ["e", "m1"], ["e2"])], "else", [],
                         [h.make_empty_tensor_value_info("e2")])
    m = model([h.make_node("Not", ["flag"], ["nf"]),
               h.make_node("If", ["nf"], ["out"], then_branch=then, else_branch=other, name="outer_if")],
              [("x", F, ["n"]), ("flag", T.BOOL, [])], ["out"], ir=8)
    d = onnxsym.infer(m).domain()
    assert sorted(c.describe().split(": ", 2)[0] + ": " + c.text for c in d.conditions) == [
        "if flag: n % 3 == 0", "if not flag and 2 < n: n >= 5"]
    for n in range(1, 10):
        x = np.ones(n, np.float32)
        runs = _runs(m, {"x": x, "flag": np.array(True)}) or _runs(m, {"x": x, "flag": np.array(False)})
        assert (d.violated({"n": n}) is None) == runs == (n != 4), n


def test_a_branch_taken_by_a_known_condition_needs_its_conditions_unconditionally(tmp_path):
    """If(n >= 1) (true at every size) whose then branch takes TopK(5): n >= 5, no guard."""
    then = h.make_graph([_ints("k", [5]), h.make_node("TopK", ["x", "k"], ["a", "ai"], name="then_topk")], "then",
                        [], [h.make_empty_tensor_value_info("a")])
    other = h.make_graph([h.make_node("Identity", ["x"], ["b"])], "else", [], [h.make_empty_tensor_value_info("b")])
    m = model(_n_of_x() + [_scalar("one", 1), h.make_node("GreaterOrEqual", ["n0", "one"], ["c"]),
                           h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="if")],
              [("x", F, ["n"])], ["y"], ir=8)
    d = onnxsym.infer(m).domain()
    (c,) = [c for c in d.conditions if not c.assumed]  # (and "assumed n >= 1": the If's decision)
    assert c.text == "n >= 5" and not c.when and d.ranges["n"][0] == 5
    for n in (4, 5):
        assert (d.violated({"n": n}) is None) == _runs(m, {"x": np.ones(n, np.float32)}) == (n >= 5)
    _check(m, str(tmp_path / "known.onnx"), "n=4:8", False, "n = 4")
