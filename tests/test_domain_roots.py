"""onnxsym.domain.roots: the sizes where a dim in one symbol is 0, against every size tried
(a pin through an expression: 2*seq == 8, seq//2 == 4, a pooled max(0, seq - 2)//2 + 1 == 4)."""

import pytest

from onnxsym import dims
from onnxsym.domain.roots import roots

s = dims.sym("s", 0)
CASES = {
    "linear": dims.sub(dims.mul(2, s), 8),
    "floor": dims.sub(dims.floordiv(s, 2), 4),
    "pooled": dims.sub(dims.floordiv(dims.dmax(0, dims.sub(s, 2)), 2), 3),
    "square": dims.sub(dims.mul(s, s), 16),
    "ceil": dims.sub(dims.ceil_div(dims.add(s, 1), 3), 5),
    "min then floor": dims.sub(dims.floordiv(dims.dmin(s, 40), 4), 7),
    "no root": dims.add(dims.mul(2, s), 1),
    # a pool of kernel 3 (pads as onnxruntime clamps them), then a Slice to 1000: nested mins and maxes
    "nested": dims.sub(dims.dmin(1000, dims.add(dims.sub(dims.dmax(0, dims.sub(s, 3)), dims.dmax(0, dims.sub(3, s))), 1)), 8),
    "nested floor": dims.sub(dims.floordiv(dims.dmin(1000, dims.add(dims.dmax(0, dims.sub(s, 3)), 1)), 2), 4),
    # a min or max whose argument holds a floor (a Reshape's seq//2 sliced to 1000, then pooled)
    "floor in a min": dims.sub(dims.floordiv(dims.add(dims.dmin(1000, dims.floordiv(s, 2)), 1), 2), 8),
    "floor in a max in a floor": dims.sub(dims.floordiv(dims.dmax(0, dims.sub(dims.dmin(1000, dims.floordiv(s, 2)), 1)), 2), 7),
    # two floors of other slopes that cross on each residue at another size
    "floors crossing": dims.sub(dims.dmin(dims.floordiv(s, 3), dims.sub(60, dims.floordiv(s, 2))), 15),
    # a min that changes its pick only at 2**62 (a Slice to 2**62 by 2): the search gave up there
    "a far crossing": dims.sub(dims.floordiv(dims.add(dims.dmin(2**62, s), 1), 2), 12),
    # 0 on the whole stretch before a max changes its pick, (max(11, s) + 1)//2 == 6 at s <= 12
    "zero before a crossing": dims.sub(dims.floordiv(dims.add(dims.dmax(11, s), 1), 2), 6),
    # a min or max of squares (a Range of (seq*seq - seq)//3 broadcast against 12: shape_pin_attack 1:31)
    "squares under maxes": dims.sub(dims.floordiv(dims.add(dims.dmax(0, dims.sub(dims.mul(s, s), dims.mul(5, s))),
                                                           dims.dmax(0, dims.sub(dims.mul(5, s), dims.mul(s, s)))), 3), 4),
    "a parabola crossing a line": dims.sub(dims.dmax(dims.floordiv(dims.mul(s, s), 7), dims.add(dims.mul(3, s), 10)), 40),
    "a parabola's floor under a min": dims.sub(dims.dmin(dims.floordiv(dims.sub(dims.mul(s, s), s), 3),
                                                         dims.sub(dims.mul(s, s), 30)), 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_roots_are_every_size_where_the_dim_is_0(name):
    g = CASES[name]
    found = roots(g, "s", 0, dims.INT64_MAX)
    assert found == {v for v in range(0, 5000) if dims.evaluate(g, {"s": v}) == 0}
    assert roots(g, "s", 3, 30) == {v for v in found if 3 <= v <= 30}


@pytest.mark.parametrize("g", [dims.sub(dims.dmin(s, 10), 10), dims.sub(dims.mod(s, 4), 1), dims.sub(s, s)],
                         ids=["a min that settles at 10", "a residue", "zero"])
def test_sizes_without_end_are_not_listed(g):
    assert roots(g, "s", 0, dims.INT64_MAX) is None


def _random_dim(r, depth):
    """Sums, floors, mins and maxes of s, s*s and numbers (polynomials under floors and maxes)."""
    k = r.random()
    if depth == 0 or k < 0.2:
        return r.choice([s, dims.mul(s, s), r.randint(-5, 20), dims.mul(r.randint(1, 4), s)])
    a, b = _random_dim(r, depth - 1), _random_dim(r, depth - 1)
    if k < 0.45:
        return dims.add(a, b) if k < 0.35 else dims.sub(a, b)
    if k < 0.6:
        return dims.floordiv(a, r.randint(2, 6))
    if k < 0.9:
        return dims.dmax(a, b) if k < 0.75 else dims.dmin(a, b)
    return dims.mul(a, r.randint(-3, 3))


def test_roots_of_random_polynomials_under_floors_and_maxes_are_every_size_where_they_are_0():
    import random

    listed = 0
    for i in range(120):
        r = random.Random(i)
        g = dims.sub(_random_dim(r, 4), r.randint(0, 40))
        if not dims.free_symbols(g):
            continue
        found = roots(g, "s", 0, 1500)
        if found is not None:
            listed += 1
            assert found == {v for v in range(0, 1501) if dims.evaluate(g, {"s": v}) == 0}, (i, g)
    assert listed > 80
