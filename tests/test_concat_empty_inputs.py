"""Concat and ConcatFromSequence with inputs that may have no elements, against onnxruntime.

onnxruntime skips an input without elements and takes the output's dims off the axis from the
first input that has elements (input 0 where none has; the axis dim is the sum of all). The
rules take them from an input proven to have elements where there is one (then the domain is
exactly where onnxruntime runs), else by the sizes: those of the first input with elements, input
0's where none has (``e*t + (1 - e)*5`` with ``e = min(1, s*t)`` for ``[0, 5] ++ [s, t]``); the
domain is then exactly where onnxruntime runs too (it left out the sizes where the first input
not proven empty is skipped and a later one with other dims is not)."""

import pytest
from onnx import TensorProto as T
from onnx import helper as h
from test_adversarial_conditions import _agrees, _grid, _model

import onnxsym

pytest.importorskip("onnxruntime")

F = T.FLOAT


def _concat(shapes, axis, seq=False, new_axis=0):
    names = [f"x{i}" for i in range(len(shapes))]
    if seq:
        nodes = [h.make_node("SequenceConstruct", names, ["s"]),
                 h.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)]
    else:
        nodes = [h.make_node("Concat", names, ["y"], axis=axis)]
    return _model(nodes, [(n, F, s) for n, s in zip(names, shapes)])


def _symbols(shapes):
    return sorted({d for s in shapes for d in s if isinstance(d, str)})


# (shapes, axis): an input proven to have elements (static) beside ones that may be empty
WITH_ELEMENTS = [([["p", "q"], [3, 7]], 0), ([["p", "q"], [3, 7]], 1), ([[3, 7], ["p", "q"]], 0),
                 ([["p", "q"], [0, 5], [2, 5], ["s", "t"]], 0)]


@pytest.mark.parametrize("seq, new_axis", [(False, 0), (True, 0), (True, 1)])
@pytest.mark.parametrize("shapes, axis", WITH_ELEMENTS)
def test_an_input_with_elements_gives_the_dims_and_the_domain_is_exact(shapes, axis, seq, new_axis):
    """x[p, q] ++ y[3, 7]: onnxruntime runs at p*q == 0 whatever the other dim (x is skipped), with
    y's dims: the domain holds there, and the inferred dims are y's."""
    m = _concat(shapes, axis, seq, new_axis)
    _agrees(m, _grid(**{s: (0, 1, 2, 3, 5, 7) for s in _symbols(shapes)}), allow_zero=True)


def test_an_empty_first_input_before_one_with_elements():
    """The brief's case: x[0, 5] ++ y[3, 7] on axis 0 runs, giving (3, 7)."""
    m = _concat([["p", "q"], [3, 7]], 0)
    res = onnxsym.infer(m, allow_zero=True)
    assert [str(d) for d in res.shape("y")] == ["p + 3", "7"]
    assert res.domain().violated({"p": 0, "q": 5}) is None
    assert res.domain().violated({"p": 1, "q": 5}) is not None


# (shapes, axis): no input proven to have elements
MAYBE_EMPTY = [([[0, 5], ["s", "t"]], 0), ([[0, 5], ["s", "t"]], 1), ([[0, 5], ["s", "t"], [2, "u"]], 0),
               ([["p", "q"], [0, 5], ["s", "t"]], 1), ([[1, 8, 0, 4], ["b", 8, "s", 4]], 2)]


@pytest.mark.parametrize("seq, new_axis", [(False, 0), (True, 0), (True, 1)])
@pytest.mark.parametrize("shapes, axis", MAYBE_EMPTY)
def test_without_an_input_proven_to_have_elements(shapes, axis, seq, new_axis):
    """The domain is exactly where onnxruntime runs, with the inferred dims: those of the first
    input with elements, picked by the sizes (the first not proven empty skipped, a later one
    with its own dims kept, ran outside the domain)."""
    m = _concat(shapes, axis, seq, new_axis)
    _agrees(m, _grid(**{s: (0, 1, 2, 3, 5) for s in _symbols(shapes)}), allow_zero=True)


@pytest.mark.parametrize("seq", [False, True])
def test_two_inputs_that_may_be_empty_with_other_dims(seq):
    """x[a, n] ++ y[b, m] on axis 0, every dim may be 0: onnxruntime runs at a*n == 0 with y's m
    (x skipped) and at b*m == 0 with x's n; the domain refused the first (it said m == n or
    b*m == 0): now every size of the grid agrees, dims too."""
    m = _concat([["a", "n"], ["b", "m"]], 0, seq)
    res = onnxsym.infer(m, allow_zero=True)
    assert res.domain().violated({"a": 0, "n": 0, "b": 2, "m": 3}) is None
    assert res.domain().violated({"a": 1, "n": 2, "b": 2, "m": 3}) is not None
    _agrees(m, _grid(a=(0, 1, 2), n=(0, 1, 3), b=(0, 2), m=(0, 1, 3)), allow_zero=True)


def test_an_empty_static_past_does_not_pin_the_batch():
    """A KV cache exported with a static empty past (1, 8, 0, 4) ++ (b, 8, s, 4) on axis 2:
    onnxruntime skips the past, so any batch runs, with dims (b, 8, s, 4)."""
    m = _concat([[1, 8, 0, 4], ["b", 8, "s", 4]], 2)
    res = onnxsym.infer(m)
    assert [str(d) for d in res.shape("y")] == ["b", "8", "s", "4"]
    assert not res.domain().conditions
    _agrees(m, _grid(b=(1, 2, 3), s=(1, 2, 5)))
    _agrees(m, _grid(b=(0, 1, 2, 3), s=(0, 1, 2, 5)), other_shapes_outside=True, allow_zero=True)


def test_every_input_with_elements_is_still_equated():
    m = _concat([["a", "b"], ["c", "d"], [2, 3]], 0)
    res = onnxsym.infer(m)
    assert [str(d) for d in res.shape("y")] == ["a + c + 2", "3"]
    assert res.domain().violated({"a": 1, "b": 3, "c": 1, "d": 3}) is None
    assert res.domain().violated({"a": 1, "b": 3, "c": 1, "d": 4}) is not None
