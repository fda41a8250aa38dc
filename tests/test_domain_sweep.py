"""onnxsym.domain.sweep: the sizes of a bounded range where a pair of dims agree, each size
evaluated at once, against dims.evaluate at every size (the same value Condition.holds reads)."""

import pytest

from onnxsym import dims
from onnxsym.domain.sweep import MOST, SWEPT, swept_roots

s = dims.sym("s", 0)
a = dims.floordiv(dims.add(dims.mul(2, s), 1), 3)
# 1:153 of tests/shape_pin_attack.py: an Expand to 7 over a polynomial under floors and maxes
EXPAND = dims.dmax(0, dims.floordiv(dims.add(dims.add(
    dims.mul(-5, dims.floordiv(dims.dmax(0, dims.sub(dims.mul(4, a), dims.mul(a, a))), 5)),
    dims.dmax(0, dims.sub(dims.mul(a, a), dims.mul(4, a)))), 10), 15))
CASES = {
    "expand to 7 or 1": ((EXPAND, 7), (EXPAND, 1)),
    "a square": ((dims.mul(s, s), 49),),
    "a floor of a cube": ((dims.floordiv(dims.mul(s, dims.mul(s, s)), 10), 100),),
    "no size": ((dims.add(dims.mul(2, s), 1), 10),),
}


def _brute(pairs, lo, hi):
    return {v for v in range(lo, hi + 1) if any(dims.evaluate(x, {"s": v}) == dims.evaluate(y, {"s": v})
                                                for x, y in pairs)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_swept_sizes_are_every_size_where_a_pair_agrees(name):
    pairs = CASES[name]
    assert swept_roots(pairs, "s", 0, 20000) == _brute(pairs, 0, 20000)
    assert swept_roots(pairs, "s", 5, 17) == _brute(pairs, 5, 17)


def test_the_expand_of_the_attack_is_swept_over_its_float_bound():
    assert swept_roots(CASES["expand to 7 or 1"], "s", 6, 4194304) == {7, 8, 9, 18}


def test_a_divisor_0_is_no_size():
    # 12 // s == 12 at s == 1 only (s == 0 divides by 0: Form.holds is False there)
    assert swept_roots(((dims.floordiv(12, s), 12),), "s", 0, 50) == {1}


S4 = dims.mul(dims.mul(s, s), dims.mul(s, s))


@pytest.mark.parametrize("pairs, lo, hi", [
    (((dims.mul(S4, dims.mul(s, dims.mul(s, s))), 16),), 0, 1 << 20),  # s**7 near 2**20 leaves int64
    (((s, 3),), 0, SWEPT),  # a range wider than swept
    (((dims.mul(s, s), 4), (dims.sym("t", 0), 1)), 0, 100),  # two symbols
], ids=["overflow", "too wide", "two symbols"])
def test_what_is_not_swept_exactly_is_not_listed(pairs, lo, hi):
    assert swept_roots(pairs, "s", lo, hi) is None


def test_more_sizes_than_most_are_not_listed():
    assert swept_roots(((dims.floordiv(s, 2000), 3),), "s", 0, 10000) is None  # (2000 sizes)
    assert 2000 > MOST
