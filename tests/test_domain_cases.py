"""onnxsym.domain.cases: a disjunction of equalities over min and max split into linear pieces
is the same set of sizes (checked at every size of a grid), and reads as the cases."""

import itertools

import pytest

from onnxsym import dims
from onnxsym.dims import Sym
from onnxsym.domain import cases


def _syms():
    return dims.expr_of(Sym("p", 1, dims.INT64_MAX)), dims.expr_of(Sym("s", 1, dims.INT64_MAX))


def _examples():
    p, s = _syms()
    rows = dims.sub(dims.dmin(64, dims.add(p, s)), dims.dmin(64, p))
    return {
        "position table": [(s, rows), (s, 1), (rows, 1)],
        "a clamp": [(dims.dmax(0, dims.sub(s, 3)), 2), (s, 1)],
        "two mins": [(dims.dmin(p, 10), dims.dmin(s, 7)), (p, s)],
    }


@pytest.mark.parametrize("name", sorted(_examples()))
def test_the_pieces_are_the_same_sizes(name):
    alts = _examples()[name]
    pieces = cases.split(alts)
    assert pieces is not None
    for p, s in itertools.product(range(1, 80), range(1, 20)):
        b = {"p": p, "s": s}
        want = any(dims.evaluate(x, b) == dims.evaluate(y, b) for x, y in alts)
        assert cases.holds(pieces, b) == want, (b, cases.text(pieces))


def test_the_position_table_reads_as_its_cases():
    assert cases.text(cases.split(_examples()["position table"])) == "p + s <= 64 (or s == 1 or p == 63)"
