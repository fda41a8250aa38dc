"""The hypothesis strategies of the property tests: random expression trees over named
symbols and integers, built twice by ``build`` (as Dims, with every simplification the
algebra does, and as plain Python ints, the reference).

A tree is ``("int", v)``, ``("sym", name)``, ``(op, a, b)`` for op in ``+ - * max min``,
``("scale", a, k)`` (times the integer k), ``(op, a, k)`` for op in ``// % ceil_div``
(by the integer k), or ``("neg", a)``.
"""

from hypothesis import strategies as st

from onnxsym import dims

BINARY = ("+", "-", "*", "max", "min")
DIVISIONS = ("//", "%", "ceil_div")


def nonzero(k):
    """The integers in [-k, -1] and [1, k]."""
    return st.integers(1, k) | st.integers(-k, -1)


def trees(names, ints=(-20, 20), binary=BINARY, scales=None, divisors=None, neg=True, max_leaves=10,
          grouped=False):
    """Trees with the symbols ``names`` and integers in ``ints`` at the leaves, made with the
    ``binary`` ops of two subtrees, ``scales`` (a strategy of integer factors, or None),
    ``divisors`` ({op: strategy of divisors} for ``// % ceil_div``) and, if ``neg``, negation.
    Each op is drawn as often as each other one; ``grouped``: the binary ops together as
    often as the divisions together (which then share one divisor strategy) and negation."""
    leaf = st.integers(*ints).map(lambda v: ("int", v)) | st.sampled_from(list(names)).map(lambda n: ("sym", n))
    divisors = divisors or {}

    def extend(children):
        if grouped:
            (ks,) = set(divisors.values())
            parts = [st.tuples(st.sampled_from(binary), children, children),
                     st.tuples(st.sampled_from(list(divisors)), children, ks)]
        else:
            parts = [st.tuples(st.just(op), children, children) for op in binary]
            parts += [st.tuples(st.just(op), children, ks) for op, ks in divisors.items()]
        if scales is not None:
            parts.append(st.tuples(st.just("scale"), children, scales))
        if neg:
            parts.append(st.tuples(st.just("neg"), children))
        return st.one_of(*parts)

    return st.recursive(leaf, extend, max_leaves=max_leaves)


def build(tree, leaf):
    """The value of ``tree`` with ``leaf(name)`` at each symbol: a Dim when a leaf is one,
    a Python int (floor division, Python's remainder) when every leaf is an int."""
    kind = tree[0]
    if kind == "int":
        return tree[1]
    if kind == "sym":
        return leaf(tree[1])
    a = build(tree[1], leaf)
    if kind == "neg":
        return -a
    plain = isinstance(a, int)
    if kind == "scale":
        return a * tree[2]
    if kind in DIVISIONS:
        k = tree[2]
        return a // k if kind == "//" else a % k if kind == "%" else (-((-a) // k) if plain else dims.ceil_div(a, k))
    b = build(tree[2], leaf)
    plain = plain and isinstance(b, int)
    if kind == "+":
        return a + b
    if kind == "-":
        return a - b
    if kind == "*":
        return a * b
    if kind == "max":
        return max(a, b) if plain else dims.dmax(a, b)
    return min(a, b) if plain else dims.dmin(a, b)


def expressions(leaves, **kw):
    """Dims: ``trees`` over the names of ``leaves`` (name -> Dim) built with those Dims."""
    return trees(sorted(leaves), **kw).map(lambda t: build(t, leaves.__getitem__))


def with_reference(leaves, **kw):
    """``(dim, plain)`` pairs: the Dim built over ``leaves`` and the function of a binding
    (name -> int) that computes the same tree on ints."""
    return trees(sorted(leaves), **kw).map(lambda t: (build(t, leaves.__getitem__),
                                                      lambda b, t=t: build(t, b.__getitem__)))


def bindings(ranges):
    """Assignments of the symbols in ``ranges`` (name -> (lo, hi)) to integers in their range."""
    return st.fixed_dictionaries({n: st.integers(lo, hi) for n, (lo, hi) in ranges.items()})


def same_after_parsing(x, back) -> bool:
    """``back`` (``x`` printed, then parsed) is ``x``: ``==`` wherever the algebra decides
    equality by form (every quasi-affine period at most ``quasi.MAX_PERIOD``); beyond that a
    function keeps the form its construction gave, so only its values must agree."""
    from onnxsym.dims import quasi
    periods = quasi.periods(x)
    if periods is None or max(periods.values(), default=0) <= quasi.MAX_PERIOD:
        return back == x
    syms = sorted(dims.free_symbols(x), key=lambda s: s.name)
    lo = max([max(s.lo, -150) for s in syms], default=0)
    hi = min([min(s.hi, 150) for s in syms], default=0)
    points = [{s: v for s in syms} for v in range(lo, hi + 1)]
    points += [{s: min(v + i, hi) for i, s in enumerate(syms)} for v in range(lo, hi + 1)]
    return all(dims.evaluate(x, p) == dims.evaluate(back, p) for p in points)
