"""``d >= lo`` with ``d`` linear in the symbols narrows each symbol in closed form
(``facts.narrowing._narrowed_linear``): the same range the bisection over the symbol's range
finds (it asks the interval range at each probe, which for a linear ``d`` is exact), the same
refusal where no value reaches ``lo``. What the narrowed ranges mean for a model is checked
against onnxruntime in test_domain.py."""

import random

import pytest

from onnxsym import dims
from onnxsym.dims.env import RangeEnv
from onnxsym.facts import narrowing


def _outcome(f, *args):
    try:
        return f(*args)
    except narrowing.Unreachable as exc:
        return ("unreachable", str(exc))


@pytest.mark.parametrize("seed", range(4))
def test_the_closed_form_is_the_bisection(seed):
    rng = random.Random(seed)
    compared = 0
    for _ in range(400):
        with RangeEnv():
            d: dims.Dim = rng.randint(-50, 50)
            for i in range(rng.randint(1, 3)):
                lo = rng.choice([0, 1, 2, 5, 100, 2**40])
                hi = max(lo, rng.choice([lo, lo + 1, lo + 7, lo + 1000, 2**62, 2**63 - 1]))
                d = dims.add(d, dims.mul(rng.choice([-3, -2, -1, 1, 2, 4, 7]), dims.expr_of(dims.Sym(f"s{i}", lo, hi))))
            bound = rng.randint(-100, 3000)
            linear = narrowing._linear(d)
            assert linear is not None
            for s in dims.free_symbols(d):
                k = linear[s]
                assert narrowing.direction(d, s) == (1 if k > 0 else -1)
                assert _outcome(narrowing._narrowed_linear, d, bound, s, k) == \
                    _outcome(narrowing._narrowed, d, bound, s, 1 if k > 0 else -1)
                compared += 1
    assert compared > 400


def test_a_product_or_a_division_is_not_linear():
    with RangeEnv():
        a, b = dims.sym("a"), dims.sym("b")
        assert narrowing._linear(dims.add(dims.mul(a, b), 1)) is None
        assert narrowing._linear(dims.floordiv(a, 2)) is None
        assert narrowing._linear(dims.sub(dims.mul(2, a), b)) == {dims.as_sym(a): 2, dims.as_sym(b): -1}
        # (seq - 3 >= 8: seq from 11 on, as the bisection finds)
        assert narrowing.implied_ranges(dims.sub(a, 3), 8) == {dims.as_sym(a): (11, dims.INT64_MAX)}
