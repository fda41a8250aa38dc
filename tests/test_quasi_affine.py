"""Equal quasi-affine dims are ``==``: one canonical form per function, checked against integers."""

import itertools
import os

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import DIVISIONS, expressions

import onnxsym
from onnxsym import dims
from onnxsym.dims import ceil_div, dmax, dmin, evaluate, sym
from onnxsym.dims.text import parse_dim
from onnxsym.facts.fact import Origin, Rel

a, b, x = sym("a"), sym("b"), sym("x")


def test_the_equalities_of_the_issue_are_identities():
    assert (a // 2) * 2 + a % 2 is a
    assert a // 2 + (a + 1) // 2 is a
    assert 2 * (a // 2) is a - a % 2
    assert dmax(a, b) + dmin(a, b) is a + b
    assert x - x // 2 is (x + 1) // 2


def test_symbolic_divisors():
    assert (a // b) * b + a % b is a
    assert a // (2 * b) is (a // 2) // b
    assert (a // b) // 2 is a // (2 * b)


def test_forms_read_as_written():
    # the canonical form is the plainest one: few divisions, no extra linear term, small factors
    assert str(a % 8) == "a % 8"
    assert str(a % b) == "a % b"
    assert str(ceil_div(a, 4)) == "(a + 3)//4"
    assert str((a + (-a) % 8) // 8) == "(a + 7)//8"
    assert str((2 * a + 1) // 4) == "a//2"
    assert str((a // 3 + a) // 2) == "(2*a)//3"
    for d in [a % 8, a % b, a % (b + 1), 3 * (a % 4) + b, (-a) % 8, x // 2 + x // 3 + x // 5]:
        assert parse_dim(str(d)) is d


def test_swin_patch_merging_is_proven():
    # Swin pads h to a multiple of 4, then merges 2x2 patches: h padded, halved, and halved again
    h = sym("height")
    quarter = (h + 3) // 4
    assert quarter - quarter // 2 is (h + 7) // 8
    assert (quarter + 1) // 2 is (h + 7) // 8
    windows = quarter - quarter // 2 + (-(quarter - quarter // 2)) % 3  # pad to a multiple of 3 windows
    assert windows is 3 * ((h + 23) // 24)


def test_merges_use_the_decision_for_several_symbols():
    # (a + b)//2 - a//2 - b//2 is 1 exactly when both are odd: the forms differ, the values agree
    left = (a + b) // 2
    right = a // 2 + b // 2 + (a % 2 + b % 2) // 2
    assert dims.same(left, right) and dims.try_eq(left, right) is True
    assert not dims.same(left, a // 2 + b // 2)


# ---------------------------------------------------------------- property: equal values imply ==

DIVISORS = st.integers(2, 4)


def _one_symbol(s):
    return expressions({dims.as_sym(s).name: s}, ints=(-3, 3), binary=("+", "-"), scales=st.integers(-3, 3),
                       divisors={op: DIVISORS for op in DIVISIONS}, neg=False, max_leaves=5)


def _period(d):
    """The period bound of a quasi-affine ``d`` (0 for one that is not)."""
    if isinstance(d, int):
        return 1
    p = dims.quasi.periods(d)
    return 0 if p is None else max(p.values(), default=1)


def _values(d, names, span):
    return tuple(evaluate(d, dict(zip(names, p))) for p in itertools.product(range(1, span + 1), repeat=len(names)))


@settings(max_examples=150, deadline=None)
@given(st.lists(_one_symbol(x), min_size=2, max_size=8))
def test_equal_functions_of_one_symbol_are_the_same_dim(ds):
    # periods here divide 4**3 = 64: 65 consecutive values decide a function
    seen = {}
    for d in ds:
        if not 0 < _period(d) <= dims.quasi.MAX_PERIOD:
            continue
        v = _values(d, ["x"], 65)
        if v in seen:
            assert d is seen[v] or d == seen[v], f"{d} and {seen[v]} agree on every point"
        seen[v] = d


@settings(max_examples=150, deadline=None)
@given(_one_symbol(a), _one_symbol(b), _one_symbol(a), _one_symbol(b))
def test_sums_of_functions_of_one_symbol_each(fa, fb, ga, gb):
    assume(all(0 < _period(f) <= dims.quasi.MAX_PERIOD for f in (fa, fb, ga, gb)))
    left, right = fa + fb, ga + gb
    equal = _values(left, ["a", "b"], 65) == _values(right, ["a", "b"], 65)
    assert (left == right) is equal


def _two_symbols():
    return expressions({"a": a, "b": b}, ints=(-3, 3), binary=("+", "-"), scales=st.integers(-2, 2),
                       divisors={"//": st.integers(2, 3), "%": st.integers(2, 3)}, neg=False, max_leaves=5)


@settings(max_examples=150, deadline=None)
@given(_two_symbols(), _two_symbols())
def test_try_eq_decides_quasi_affine_dims_of_several_symbols(d, e):
    # periods divide 3**2 * 2**2 = 36 at most: 37 values of each symbol decide
    equal = _values(d, ["a", "b"], 37) == _values(e, ["a", "b"], 37)
    assert dims.same(d, e) is equal
    if equal:
        assert dims.try_eq(d, e) is True


def test_swin_model_assumes_nothing():
    # Its patch merging used to be recorded as ((h + 7)//8)*((w + 7)//8) == (ceil(h/4) - ceil(h/4)//2)*(...)
    model = os.path.join(os.path.dirname(__file__), "..", "models", "swin_tiny_ts.onnx")
    assumed = [str(c) for c in onnxsym.infer(model).constraints if c.origin is Origin.NEEDED and c.rel is Rel.EQ]
    assert assumed == []


def test_the_shared_steps_give_each_environment_the_form_a_first_evaluation_gives():
    # one process's inferences share the steps of a function of one symbol (quasi._STEPS: they
    # depend on no range); whether a form is taken still reads each environment's range
    from onnxsym.dims import quasi
    from onnxsym.dims.env import RangeEnv

    def forms():
        out = []
        for lo, hi in ((0, 1000), (3, 9), (0, 5)):  # the last shorter than the period, 8
            with RangeEnv({"t": (lo, hi)}):
                t = dims.expr_of(dims.Sym("t"))
                e = ((t + 7) // 8) * 8 - t + (t + 3) // 4
                assert all(evaluate(e, {"t": v}) == (v + 7) // 8 * 8 - v + (v + 3) // 4 for v in range(lo, hi + 1))
                out.append(str(e))
        return out

    quasi._STEPS.clear()
    first = forms()
    assert quasi._STEPS
    assert forms() == first
