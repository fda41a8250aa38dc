"""Property tests of the algebra against plain integers: an expression tree is
evaluated twice, once with Python ints at the leaves (the reference) and once
built symbolically (with every simplification the algebra does) and then
evaluated. They must agree for every binding, and the text must parse back."""

import strategies
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import DIVISIONS, build, nonzero

from onnxsym import dims
from onnxsym.dims.text import parse_dim

NAMES = ["a", "b", "c"]


def trees():
    divisor = nonzero(9)
    return strategies.trees(NAMES, ints=(-20, 20), divisors={op: divisor for op in DIVISIONS}, max_leaves=10,
                            grouped=True)


# Symbols with the range graph inputs get ([1, ...]) and with a signed range: the
# range-based simplifications must hold across the whole range, nothing else.
POSITIVE = {n: dims.sym(n) for n in NAMES}
SIGNED = {n: dims.sym(n + "_s", lo=-30, hi=30) for n in NAMES}


@settings(max_examples=300, deadline=None)
@given(trees(), st.fixed_dictionaries({n: st.integers(1, 40) for n in NAMES}))
def test_simplification_never_changes_the_value_positive_symbols(tree, b):
    reference = build(tree, lambda n: b[n])
    symbolic = build(tree, lambda n: POSITIVE[n])
    assert dims.evaluate(symbolic, b) == reference, str(symbolic)


@settings(max_examples=300, deadline=None)
@given(trees(), st.fixed_dictionaries({n: st.integers(-30, 30) for n in NAMES}))
def test_simplification_never_changes_the_value_signed_symbols(tree, b):
    reference = build(tree, lambda n: b[n])
    symbolic = build(tree, lambda n: SIGNED[n])
    assert dims.evaluate(symbolic, {n + "_s": v for n, v in b.items()}) == reference, str(symbolic)


@settings(max_examples=200, deadline=None)
@given(trees())
def test_printing_then_parsing_gives_the_same_expression(tree):
    symbolic = build(tree, lambda n: POSITIVE[n])
    back = parse_dim(str(symbolic), lambda n: POSITIVE[n])
    assert strategies.same_after_parsing(symbolic, back), (str(symbolic), str(back))


@settings(max_examples=150, deadline=None)
@given(trees(), trees(), st.fixed_dictionaries({n: st.integers(1, 40) for n in NAMES}))
def test_substituting_a_symbol_then_evaluating_is_evaluating_with_its_value(tree, sub_tree, b):
    e = build(tree, lambda n: POSITIVE[n])
    replacement = build(sub_tree, lambda n: POSITIVE[n])
    value = dims.evaluate(replacement, b)
    if value < 1:  # outside the symbol's range: a substitution there means nothing
        return
    out = dims.substitute(e, {dims.as_sym(POSITIVE["a"]): replacement})
    assert dims.evaluate(out, b) == dims.evaluate(e, {**b, "a": value})
