"""Laws of the Dim algebra, checked against plain integer arithmetic."""

import operator

import pytest
import strategies
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import nonzero

from onnxsym import dims
from onnxsym.dims import SymbolicDimError, UndecidableError, ceil_div, dmax, evaluate, sym
from onnxsym.dims.text import parse_dim

NAMES = ["a", "b", "c"]
SYMS = {n: sym(n, lo=-50, hi=50) for n in NAMES}


def expressions(symbols):
    return strategies.expressions(symbols, ints=(-9, 9), max_leaves=8,
                                  divisors={"//": nonzero(7), "%": nonzero(7), "ceil_div": st.integers(1, 7)})


bindings = st.fixed_dictionaries({n: st.integers(-50, 50) for n in NAMES})

OPS = [operator.add, operator.sub, operator.mul]


def plain(tree_fn, b):
    return tree_fn(b)


@settings(max_examples=400, deadline=None)
@given(expressions(SYMS), expressions(SYMS), bindings, st.sampled_from(OPS))
def test_compute_then_evaluate_equals_evaluate_then_compute(x, y, b, op):
    assert evaluate(op(x, y), b) == op(evaluate(x, b), evaluate(y, b))


@settings(max_examples=400, deadline=None)
@given(expressions(SYMS), st.integers(-9, 9).filter(bool), bindings)
def test_floor_division_and_modulo_of_negatives(x, k, b):
    v = evaluate(x, b)
    assert evaluate(x // k, b) == v // k
    assert evaluate(x % k, b) == v % k


@settings(max_examples=300, deadline=None)
@given(expressions(SYMS), st.integers(1, 9), bindings)
def test_ceil_div(x, k, b):
    v = evaluate(x, b)
    assert evaluate(ceil_div(x, k), b) == -((-v) // k)


@settings(max_examples=400, deadline=None)
@given(expressions(SYMS))
def test_print_then_parse_is_the_same_expression(x):
    text = str(x)
    back = parse_dim(text, lambda n: SYMS[n])
    assert strategies.same_after_parsing(x, back), (text, str(back))


@settings(max_examples=300, deadline=None)
@given(expressions(SYMS), bindings)
def test_range_contains_every_value(x, b):
    lo, hi = dims.range_of(x)
    assert lo <= evaluate(x, b) <= hi


def test_canonical_forms_compare_equal():
    s, t = sym("seq"), sym("t")
    assert 2 * s - s == s
    assert (s * t) // t == s
    assert str((s + 3) // 4 * 4) == "4*((s + 3)//4)".replace("s", "seq")
    assert (s + t) == (t + s)
    assert hash(s + 1) == hash(1 + s)
    assert (2 * s + 4) // 2 == s + 2
    assert (s - 1) // 2 + 1 == (s + 1) // 2


def test_symbolic_to_int_fails_loudly():
    s = sym("seq")
    with pytest.raises(SymbolicDimError, match="seq"):
        int(s)
    with pytest.raises(SymbolicDimError):
        [0, 1][s]
    with pytest.raises(SymbolicDimError):
        bool(s)


def test_comparisons_answer_only_when_provable():
    s, t = sym("s"), sym("t")
    assert s + 1 > s
    assert s >= 1
    assert dmax(1, s) == s
    assert dims.try_lt(s, t) is None
    with pytest.raises(UndecidableError):
        s < t
    assert dims.known_ne(s, s + 1)
    assert not dims.known_ne(s, t)


def test_static_information_is_recovered():
    s = sym("s")
    assert s - s == 0
    assert (4 * s) % 4 == 0
    assert (4 * s + 6) % 4 == 2
    assert s * 0 == 0
    assert isinstance((s + 3) - s, int)


def test_free_symbols_and_substitute():
    a, b = sym("a"), sym("b")
    e = (a * b + 3) // 2
    assert {x.name for x in dims.free_symbols(e)} == {"a", "b"}
    assert dims.substitute(e, {dims.as_sym(a): 3}) == (3 * b + 3) // 2
    assert dims.substitute(e, {dims.as_sym(a): 1, dims.as_sym(b): 5}) == 4


def test_grammar_accepts_documented_forms():
    s, p, h, n = (sym(x) for x in "seq past h n".split())
    env = {"seq": s, "past": p, "h": h, "n": n, "batch": sym("batch")}
    assert parse_dim("batch*seq", env.get) == env["batch"] * s
    assert parse_dim("seq + past", env.get) == s + p
    assert parse_dim("(h - 1)//2 + 1", env.get) == (h - 1) // 2 + 1
    assert parse_dim("max(1, n)", env.get) == n
    assert parse_dim("'sequence length' + 1") == sym("sequence length") + 1
    assert str(sym("sequence length") + 1) == "'sequence length' + 1"
