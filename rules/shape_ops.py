"""Rules for shape-manipulating ops: Shape, Reshape, Slice, Gather, Concat, ..."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.dims import structure
from onnxsym.domain.needs import (
    BROADCAST,
    CONCAT_EMPTY,
    EXPAND,
    GATHER_INDICES,
    SPLIT_SIZES,
    TILE_REPEATS,
    concat_dims,
    concat_reference,
    may_be_empty,
)
from onnxsym.errors import InvalidModel, ShapeContradiction
from onnxsym.facts.edges import never_equals, never_equals_generalized
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.provenance import Kind
from onnxsym.inference.values import MAX_VALUE_ELEMENTS, Tensor
from onnxsym.registry import Condition, Outputs, register, unlearned
from onnxsym.semantics import floatops, intops
from onnxsym.semantics.shapes import broadcast_shapes, normalize_axis, prod, total

from .common import BOOL, I64, arg, count, exact_quotient, present, required_int, spec_vector

FLOAT_TYPES = frozenset(intops.FLOAT_EXACT)  # float, float16, double, bfloat16


def _keep(value):
    return None if value is None or len(value) > MAX_VALUE_ELEMENTS else tuple(value)


def _ints(v):
    """A tuple of Python ints from a numpy array / list attr, or None."""
    if v is None:
        return None
    return tuple(int(x) for x in np.asarray(v).reshape(-1).tolist())


def _static_ints(vals):
    if vals is None or not all(isinstance(x, int) for x in vals):
        return None
    return tuple(vals)


def _one_d(node, i, what):
    """Input ``i`` (a shape or a list of indices, named ``what``) where the spec makes it
    1-D: a known rank other than 1 breaks it (onnxruntime refuses the node at every size)."""
    t = node.tensor(i)
    if t is not None and t.shape is not None and len(t.shape) != 1:
        raise InvalidModel(f"{what} has rank {len(t.shape)}; the ONNX spec of {node.op_type} makes it 1-D")


def _unknown(node, out, rank, why, dtype):
    if rank is None:
        return node.unknown_rank(why, out, dtype)
    return Tensor(dtype, node.fresh_shape(rank, why, out))


def _strides(shape):
    st, acc = [], 1
    for d in reversed(shape):
        st.append(acc)
        acc *= d
    return list(reversed(st))


def _np_value(t):
    """Known value as a numpy object array of the tensor's static shape, or None."""
    if t is None or t.value is None or t.shape is None or not all(isinstance(d, int) for d in t.shape):
        return None
    arr = np.empty(len(t.value), dtype=object)
    arr[:] = list(t.value)
    return arr.reshape(t.shape)


def _from_np(arr):
    if not isinstance(arr, np.ndarray):
        return (arr,)
    return _keep(arr.reshape(-1).tolist())


# --------------------------------------------------------------------- Shape, Size

@register("Shape", conditions=(), cost=formulas.MOVEMENT)
def shape_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    if x.shape is None:
        return [Tensor(I64, (node.fresh("rank of input unknown", 0, 0),))]
    r = len(x.shape)
    start = node.attr_int("start", 0) if node.opset >= 15 else 0
    end = node.attr_int("end") if node.opset >= 15 else None
    start = min(max(start + r if start < 0 else start, 0), r)
    end = r if end is None else min(max(end + r if end < 0 else end, 0), r)
    ds = tuple(x.shape[start:end])
    return [Tensor(I64, (len(ds),), ds)]


@register("Size", conditions=(), cost=formulas.MOVEMENT)
def size_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    if x.shape is None:
        return [Tensor(I64, ())]
    return [Tensor(I64, (), (prod(x.shape),))]


# --------------------------------------------------------------------- constants

@register("Constant", conditions=(), cost=formulas.MOVEMENT)
def constant_rule(node: Node) -> Outputs:
    v = node.attr_tensor_value("value")
    if v is not None:
        return [v]
    value_int, value_ints = node.attr_int("value_int"), node.attr_ints("value_ints")
    value_float, value_floats = node.attr_float("value_float"), node.attr_floats("value_floats")
    if value_int is not None:
        return [Tensor(I64, (), (value_int,))]
    if value_ints is not None:
        return [Tensor(I64, (len(value_ints),), tuple(value_ints))]
    if value_float is not None:
        return [Tensor(1, (), (value_float,))]
    if value_floats is not None:
        return [Tensor(1, (len(value_floats),), tuple(value_floats))]
    if node.has_attr("sparse_value"):
        return [node.unknown_rank("a sparse_value Constant is not read")]
    return [node.unknown_rank("the Constant has no value attribute")]


@register("ConstantOfShape", conditions=["shape's elements are >= 0"], cost=formulas.MOVEMENT)
def constant_of_shape_rule(node: Node) -> Outputs:
    t = node.attr_tensor_value("value")
    if t is not None:
        dtype, fill = t.dtype, (t.value[0] if t.value else None)  # (None: an element not read)
    else:
        dtype, fill = 1, 0.0
    s = arg(node, 0)
    _one_d(node, 0, "the shape input")
    shp = s.value
    if shp is None:
        n = s.shape[0] if s.shape and isinstance(s.shape[0], int) else None
        return [_unknown(node, 0, n, "shape input value unknown", dtype)]
    shp = tuple(shp)
    for d in shp:  # (onnxruntime refuses a negative dim)
        if intops.is_dim(d):  # (a constant one too: a computed -4 runs nowhere)
            node.require_at_least(d, 0, f"ConstantOfShape: its shape's element {d} is >= 0")
    value = None
    st = _static_ints(shp)
    if st is not None and fill is not None and int(np.prod(st, dtype=np.int64)) <= MAX_VALUE_ELEMENTS:
        value = (fill,) * int(np.prod(st, dtype=np.int64))
    return [Tensor(dtype, shp, value)]


@register("Identity", conditions=(), cost=formulas.MOVEMENT)
def identity_rule(node: Node) -> Outputs:
    return [node.inputs[0]]


# --------------------------------------------------------------------- Reshape

def _element_case(d, allowzero, same):
    """What else than a size a computed target element may be: "0" (copy the input's
    dim; no matter when ``same``, the element being that dim), "-1" (infer), both, or None."""
    zero = not allowzero and not same and not never_equals(d, 0)
    cases = [w for w, m in (("0", zero), ("-1", not never_equals(d, -1))) if m]
    return " or ".join(cases) or None


def _copy_is_itself(e, d) -> bool:
    """Whether input dim ``e`` is ``d`` wherever ``d`` is 0, so that a target element ``d`` read
    as 0 (copy ``e``) gives ``d`` too: ``e`` is ``d`` or a constant multiple of it (a framing
    Reshape of ``[B, 160*nf]`` to ``[B, nf, 160]``, ``nf`` 0 for a short signal)."""
    return d == e or isinstance(structure.exact_quotient(e, d), int)


def _counts_match(lit, x):
    """Whether a target taken literally keeps the element count identically, for an input
    of at least one element: then no element can be 0 or -1 in a run that is valid."""
    return dims.try_le(1, x) is True and dims.try_eq(lit, x) is True


def _literal(x, target, allowzero):
    """The target's elements as sizes, a static 0 copying the input's dim (None: -1)."""
    out = []
    for i, d in enumerate(target):
        if isinstance(d, int) and d == -1:
            out.append(None)
        elif isinstance(d, int) and d == 0 and not allowzero and x.shape is not None and i < len(x.shape):
            out.append(x.shape[i])
        else:
            out.append(d)
    return out


def _zero_copy_fails(x, target, allowzero, i, unclear) -> bool:
    """Whether element ``i`` (``>= 0``, maybe 0) being 0 is proven to fail: where it is 0 (its
    symbols' ranges narrowed to that, when they can say where: else at every size), copying
    the input's dim gives a count that cannot match the input's, whichever of the other unclear
    elements are 0 too (timm's MaxViT window partition: ``A//2`` with ``A`` a max of two pool
    sizes, 0 for small heights)."""
    from onnxsym.facts.narrowing import Unreachable, implied_ranges

    d = target[i]
    # (a d below 0 other than -1 fails by itself: where d is never -1, its region is d <= 0)
    if x.shape is None or i >= len(x.shape) or (dims.range_of(d)[0] < 0 and not never_equals(d, -1)):
        return False
    try:
        region = implied_ranges(dims.neg(d), 0)
    except Unreachable:
        return True
    # (where the ranges cannot say where it is 0, the count must mismatch at every size)
    if any("-1" in c for j, c in unclear.items() if j != i):
        return False  # another element read as -1 would make the count match
    others = [j for j, c in unclear.items() if j != i and "0" in c]
    if len(others) > 3:
        return False
    total = prod(x.shape)
    with dims.current().child({s.name: r for s, r in region.items()}):
        for mask in range(1 << len(others)):
            zero = {i} | {j for k, j in enumerate(others) if mask >> k & 1}
            if any(j >= len(x.shape) for j in zero):
                continue  # a 0 beyond the input's rank fails by itself
            where = _where_cases(target, [j for j in others if j in zero], [j for j in others if j not in zero])
            if where is None:
                continue  # the other elements cannot be 0 and not 0 that way together
            with dims.current().child(where):
                lit = [x.shape[j] if j in zero else v for j, v in enumerate(_literal(x, target, allowzero))]
                if None in lit:
                    if any(_zero_where_zero(x.shape[j], target[j]) for j in zero):
                        continue  # the copied dim is 0 too: a -1 beside a product of 0 fails
                    rest = prod(v for v in lit if v is not None)
                    if not (dims.try_le(1, rest) is True and never_equals(dims.mod(total, rest), 0)):
                        return False
                elif _zero_where_zero(total, d) and dims.try_le(1, prod(lit)) is True:
                    continue  # the input is empty where d is 0, the target is not: the counts differ
                elif not _counts_differ(lit, x.shape):
                    return False
    return True


def _zero_where_zero(e, d) -> bool:
    """Whether ``e`` is 0 wherever ``d`` (>= 0) is: each of its terms has a factor that is ``d``
    (or the one factor of ``d`` that may be 0, the others being >= 1), or a min of such a factor
    and dims >= 0 (a broadcast's ``max(s, d)*min(1, d)``), or is so itself."""
    ts = structure.terms(d)
    may_be_0 = [f for f, _ in ts[0][1] if dims.range_of(f)[0] < 1] if len(ts) == 1 and ts[0][0] > 0 else []
    zeros = (d, may_be_0[0]) if len(may_be_0) == 1 else (d,)

    def factor_zero(f):
        if any(f is z for z in zeros):
            return True
        op = structure.operation(f)
        if op is None or op[0] != "min":
            return False
        zero = [a for a in op[1] if factor_zero(a)]
        return bool(zero) and all(dims.range_of(a)[0] >= 0 for a in op[1] if a not in zero)
    es = structure.terms(e)
    return bool(es) and all(any(factor_zero(f) for f, _ in factors) for _, factors in es)


def _where_cases(target, zero, sizes):
    """The symbols' ranges narrowed to where the elements ``zero`` are 0 and the elements
    ``sizes`` are at least 1 (``{}``: no narrowing), or None where that is proven never to be."""
    from onnxsym.facts.narrowing import Unreachable, implied_ranges

    out: dict[str, tuple[int, int]] = {}
    try:
        for d, lo in [(dims.neg(target[j]), 0) for j in zero] + [(target[j], 1) for j in sizes]:
            for sym, (a, b) in implied_ranges(d, lo).items():
                old = out.get(sym.name, (sym.lo, sym.hi))
                out[sym.name] = (max(a, old[0]), min(b, old[1]))
                if out[sym.name][0] > out[sym.name][1]:
                    return None
    except Unreachable:
        return None
    return out


def _counts_differ(lit, shape) -> bool:
    """Whether ``prod(lit)`` never equals ``prod(shape)``: the factors the two share and that
    are never 0 cancel first, and what is left is compared with each max and min in it taken
    over its range (timm's window partition: ``16*(w//4)`` is never ``w`` for ``w >= 1``)."""
    if dims.try_eq(prod(lit), prod(shape)) is False:
        return True
    left, right = list(lit), list(shape)
    for d in list(left):
        if d in right and never_equals(d, 0):
            left.remove(d)
            right.remove(d)
    return never_equals_generalized(dims.sub(prod(left), prod(right)), 0)


def _unclear_elements(node, x, target, allowzero):
    """The computed target elements whose case (a size, 0, -1) is not known, with why.
    An element that may be -1 beside a literal -1 may be taken as a size (two -1s are
    invalid); without a -1, a target whose literal reading keeps the element count
    identically has no element 0 or -1 in any valid run."""
    unclear = {}
    for i, d in enumerate(target):
        if not isinstance(d, int):
            same = x.shape is not None and i < len(x.shape) and _copy_is_itself(x.shape[i], d)
            case = node.decide(_element_case, (d, allowzero, same),
                               lambda _, i=i, d=d: f"target element {i} ({d}) taken as a size, not 0 or -1")
            if case is not None:
                unclear[i] = case
    if not unclear:
        return unclear
    for i in [i for i, c in unclear.items() if c == "0"]:
        if not allowzero and x.shape is not None and i >= len(x.shape):
            # a 0 copies the input's dim i, which it has not: onnxruntime refuses ("The dimension
            # with value zero exceeds the dimension size of the input tensor"), so the element is >= 1
            node.require_at_least(target[i], 1, f"reshape target element {i} ({target[i]}) is 0 only where it "
                                                f"would copy dim {i} of a rank-{len(x.shape)} input")
            del unclear[i]
        elif _zero_copy_fails(x, target, allowzero, i, unclear):
            # a 0 there copies the input's dim, and no run keeps the element count then:
            # onnxruntime fails, so the domain has the element >= 1 (timm's window partition)
            node.require_at_least(target[i], 1, f"reshape target element {i} ({target[i]}) is 0 only "
                                                f"where copying the input's dim breaks the element count")
            del unclear[i]
    if -1 in target:
        return {i: c for i, c in unclear.items() if "0" in c}
    lit = _literal(x, target, allowzero)
    if x.shape is not None and None not in lit and \
            node.decide(_counts_match, (prod(lit), prod(x.shape)),
                        lambda _: f"target {', '.join(map(str, target))} taken as sizes: it keeps the element count"):
        return {}
    return unclear


def _reshape(node, x, target, allowzero):
    unclear = _unclear_elements(node, x, target, allowzero)
    out = _literal(x, target, allowzero)
    for i, case in unclear.items():
        out[i] = node.fresh(f"reshape target element {target[i]} may be {case}", 0, i)
    for i, d in enumerate(target):
        if isinstance(d, int) and d == 0 and not allowzero and (x.shape is None or i >= len(x.shape)):
            out[i] = node.fresh("reshape 0 copies an unknown dim", 0, i)
    if out.count(None) > 1:  # (the spec: at most one -1; onnxruntime refuses the node)
        raise ShapeContradiction(f"Reshape target {', '.join(map(str, target))} holds more than one -1")
    minus = out.index(None) if None in out else None
    if minus is not None:
        if x.shape is None:
            out[minus] = node.fresh("reshape -1 of input of unknown rank", 0, minus)
        elif unclear:
            out[minus] = node.fresh("reshape -1 beside a target element whose case is unknown", 0, minus)
        else:
            rest = prod(d for d in out if d is not None)
            total = prod(x.shape)
            if isinstance(rest, int) and rest == 0:
                out[minus] = node.fresh("reshape -1 with zero-size rest", 0, minus)
            else:
                if isinstance(total, int) and isinstance(rest, int) and total % rest:
                    raise ShapeContradiction(f"cannot reshape {total} elements into a multiple of {rest}")
                # (onnxruntime infers a -1 only beside other elements whose product is not 0)
                node.require_at_least(rest, 1, f"Reshape -1: the other elements' product {rest} is not 0")
                out[minus] = exact_quotient(node, total, rest,
                                            f"Reshape -1: the element count {total} is a multiple of {rest}")
    elif x.shape is not None and not unclear:
        node.require_equal(prod(out), prod(x.shape), "Reshape keeps the number of elements")
    return tuple(out)


RESHAPE = ["prod(shape) == numel(data) (a 0 element copies data's dim there, unless allowzero)",
           "a -1 element: the other elements' product is >= 1 and divides numel(data)",
           "a computed element that may be 0 (allowzero=0) copies data's dim: where that breaks the count, "
           "the element is >= 1"]


@register("Reshape", since=1, conditions=RESHAPE, cost=formulas.MOVEMENT)
def reshape_v1(node: Node) -> Outputs:
    x = arg(node, 0)
    shape = _ints(node.attr_ints("shape"))
    out = _reshape(node, x, shape, False)
    return [x.reshaped(out)]


@register("Reshape", since=5, conditions=RESHAPE, cost=formulas.MOVEMENT)
def reshape_v5(node: Node) -> Outputs:
    x = arg(node, 0)
    s = arg(node, 1)
    allowzero = node.attr_int("allowzero", 0) if node.opset >= 14 else 0
    _one_d(node, 1, "the shape input")
    if s.value is None:
        n = s.shape[0] if s.shape and isinstance(s.shape[0], int) else None
        return [_unknown(node, 0, n, "reshape target unknown", x.dtype)]
    out = _reshape(node, x, tuple(s.value), allowzero)
    return [x.reshaped(out)]


@register("Flatten", conditions=(), cost=formulas.MOVEMENT)
def flatten_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    if x.shape is None:
        return [_unknown(node, 0, 2, "flatten of unknown rank", x.dtype)]
    r = len(x.shape)
    axis = node.attr_int("axis", 1)
    if axis < 0:
        axis += r
    out = (prod(x.shape[:axis]), prod(x.shape[axis:]))
    return [x.reshaped(out)]


# --------------------------------------------------------------------- Transpose, Squeeze, Unsqueeze

@register("Transpose", conditions=(), cost=formulas.MOVEMENT)
def transpose_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    perm = _ints(node.attr_ints("perm"))
    if x.shape is None:
        if perm is None:
            return [node.unknown_rank("input rank unknown", 0, x.dtype)]
        return [_unknown(node, 0, len(perm), "rank unknown", x.dtype)]
    r = len(x.shape)
    if perm is None:
        perm = tuple(reversed(range(r)))
    if sorted(perm) != list(range(r)):  # onnxruntime refuses it: a rank the sizes chose may be wrong
        raise ShapeContradiction(f"perm {list(perm)} does not fit an input of rank {r}")
    out = tuple(x.shape[p] for p in perm)
    arr = _np_value(x)
    value = None if arr is None else _from_np(arr.transpose(perm))
    return [Tensor(x.dtype, out, value)]


def _axes_from(node):
    if node.opset >= 13:
        if present(node, 1):
            v = node.value(1)
            return "unknown" if v is None else _static_ints(v) or "unknown"
        return None
    return _ints(node.attr_ints("axes"))


def _squeeze_by_sizes(node, x):
    """A Squeeze without axes whose one undecided dim ``d`` may be 1: its rank depends on
    ``d == 1`` (hummingbird's GEMM trees squeeze ``[30, 1, n]``). As for an If on the sizes
    (onnxsym.facts.branching), inference is tried both ways: where the nodes after it run only
    with ``d`` kept (a Transpose of rank 2), ``d >= 2`` joins the domain, and the other way round."""
    from onnxsym.facts.fact import Rel, Relation

    maybe = [i for i, d in enumerate(x.shape) if not (d == 1 or dims.try_eq(d, 1) is False)]
    if len(maybe) != 1 or not node.is_resolved(x.shape[maybe[0]]):
        return node.unknown_rank("which dims are 1 unknown", 0, x.dtype)
    k = maybe[0]
    d = x.shape[k]
    is_one = Relation(Rel.EQ, d, 1)
    choice = node.branch_choice()
    if choice is None:
        node.note_split(is_one)
        return node.unknown_rank(f"the rank depends on {d} == 1", 0, x.dtype)
    kept = Relation(Rel.LE, 2, d) if dims.range_of(d)[0] >= 1 else is_one.negated()
    node.require_relation(is_one if choice.then else kept,
                          f"the Squeeze {'drops' if choice.then else 'keeps'} dim {k}: otherwise, {choice.why}")
    out = tuple(e for i, e in enumerate(x.shape) if not (isinstance(e, int) and e == 1) and not (choice.then and i == k))
    return x.reshaped(out)


@register("Squeeze", conditions=["a squeezed axis is 1 (with no axes: the rank is the one the 1s give)"], cost=formulas.MOVEMENT)
def squeeze_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    if node.opset >= 13 and present(node, 1):
        spec_vector(node, "axes", arg(node, 1))
    axes = _axes_from(node)
    why = "input rank or axes unknown"
    shape = shape_of(x, x.dtype, why=why)
    if axes == "unknown":
        return [node.unknown_rank(why, 0, x.dtype)]
    if axes is None:
        if not all(isinstance(d, int) for d in shape):
            if all(dims.try_eq(d, 1) is False or d == 1 for d in shape):
                out = tuple(d for d in shape if not (isinstance(d, int) and d == 1))
                return [x.reshaped(out)]
            return [_squeeze_by_sizes(node, x)]
        out = tuple(d for d in shape if d != 1)
    else:
        ax = {normalize_axis(a, len(shape)) for a in axes}
        for i in sorted(ax):  # onnxruntime squeezes only a dim of 1
            node.require_equal(shape[i], 1, f"Squeeze: axis {i} is 1")
        out = tuple(d for i, d in enumerate(shape) if i not in ax)
    return [x.reshaped(out)]


@register("Unsqueeze", conditions=(), cost=formulas.MOVEMENT)
def unsqueeze_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    if node.opset >= 13:
        spec_vector(node, "axes", arg(node, 1), scalar_ok=True)
    axes = _axes_from(node)
    if axes == "unknown" or axes is None:
        return [node.unknown_rank("axes input's value unknown", 0, x.dtype)]
    shape = shape_of(x, x.dtype)
    r = len(shape) + len(axes)
    ax = {normalize_axis(a, r) for a in axes}
    it = iter(shape)
    out = tuple(1 if i in ax else next(it) for i in range(r))
    return [x.reshaped(out)]


# --------------------------------------------------------------------- Concat, Split

@register("Concat", conditions=["the inputs agree on every axis but axis", CONCAT_EMPTY], cost=formulas.MOVEMENT)
def concat_rule(node):
    ts = [arg(node, i) for i in range(len(node.inputs)) if present(node, i)]
    dtype = next((t.dtype for t in ts if t.dtype), 0)
    known = [t for t in ts if t.shape is not None]
    if not known:
        return [node.unknown_rank("every input's rank unknown", 0, dtype)]
    r = len(known[0].shape)
    axis = normalize_axis(node.attr_int("axis", 0), r)
    # onnxruntime skips an input without elements and takes the dims off the axis from the first
    # with elements: where one may have none (a dim that may be 0), they are those of an input
    # proven to have elements where one is (concat_reference), else a pick by the sizes
    # (concat_dims), and the others agree with them or have none (a condition, CONCAT_EMPTY)
    empty = len(known) == len(ts) and any(may_be_empty(t.shape) for t in known)
    ref = known[concat_reference([t.shape for t in known])] if empty else known[0]
    picked = concat_dims([t.shape for t in known], axis) if empty else ()
    out = []
    for i in range(r):
        if i == axis:
            if len(known) != len(ts):
                out.append(node.fresh("concat of input of unknown rank", 0, i))
            else:
                out.append(dims.add(0, total(t.shape[i] for t in ts)))
        elif empty:  # (an input without elements is skipped: the reference's dims, CONCAT_EMPTY)
            for t in known:
                if t is not ref and not may_be_empty(t.shape):
                    node.require_equal(t.shape[i], ref.shape[i], f"Concat inputs agree on axis {i}")
            out.append(picked[i])
        else:
            d = next((t.shape[i] for t in known if isinstance(t.shape[i], int)), known[0].shape[i])
            for t in known:
                node.require_equal(t.shape[i], d, f"Concat inputs agree on axis {i}")
            out.append(d)
    value = None
    if r == 1 and dtype in FLOAT_TYPES and any(t.value is not None for t in ts) \
            and all(t.value is not None or _short(t) for t in ts):
        # a float vector partly known (Resize's scales Concat([1.0, 1.0], computed)): the known stay
        value = _keep(tuple(v for t in ts for v in (t.value if t.value is not None
                                                      else (floatops.UNKNOWN,) * t.shape[0])))
    elif all(t.value is not None for t in ts):
        if r == 1:
            value = _keep(tuple(v for t in ts for v in t.value))
        else:
            arrs = [_np_value(t) for t in ts]
            if all(a is not None for a in arrs):
                value = _from_np(np.concatenate(arrs, axis=axis))
    return [Tensor(dtype, tuple(out), value)]


def _short(t: Tensor) -> bool:
    return t.shape is not None and len(t.shape) == 1 and isinstance(t.shape[0], int) \
        and t.shape[0] <= _SHAPE_TENSOR_ELEMENTS


@register("Split", conditions=[SPLIT_SIZES], cost=formulas.MOVEMENT)
def split_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    n = node.num_outputs
    shape = shape_of(x, *[x.dtype] * n)
    r = len(shape)
    axis = normalize_axis(node.attr_int("axis", 0), r)
    if node.opset >= 13:
        split = None
        if present(node, 1):
            spec_vector(node, "split", arg(node, 1))
            split = node.value(1)
            if split is None and node.reads_data(1):
                # sizes read from a graph input's elements are data: each piece keeps X's other dims,
                # and that the sizes add up to X[axis] is a condition on the data (SPLIT_SIZES says it)
                d = shape[axis]
                return [Tensor(x.dtype, shape[:axis] + (count(node, "split sizes read from the input data", k, axis,
                                                              dims.INT64_MAX, bound=d),) + shape[axis + 1:])
                        for k in range(n)]
            if split is None:
                return [_unknown(node, k, r, "split sizes unknown", x.dtype) for k in range(n)]
    else:
        split = _ints(node.attr_ints("split"))
    d = shape[axis]
    k = node.attr_int("num_outputs") if node.opset >= 18 else None
    if split is None:
        if k is not None:
            c = dims.ceil_div(d, k)
            sizes = [c] * (n - 1) + [dims.sub(d, dims.mul(c, n - 1))]
            if isinstance(sizes[-1], int) and sizes[-1] < 0:  # (a symbolic one is a condition of the domain)
                raise ShapeContradiction(f"num_outputs {k} parts of {c} leave {sizes[-1]} for the last of {d}; "
                                         "onnxruntime refuses a negative final split")
        else:
            sizes = [dims.floordiv(d, n)] * n
    else:
        sizes = list(split)
        if any(isinstance(v, int) and v < 0 for v in sizes):  # (a symbolic one is a condition of the domain)
            raise InvalidModel(f"split {list(sizes)} holds a negative size; onnxruntime refuses one at every size")
    # known elements split too (tf2onnx splits a shape value into the pads of SAME padding)
    arr = _np_value(x)
    starts = np.cumsum([0] + list(sizes)).tolist() if arr is not None and _static_ints(sizes) else None
    outs = []
    for j in range(n):
        shp = list(shape)
        shp[axis] = sizes[j]
        part = None if starts is None else _from_np(np.take(arr, range(starts[j], starts[j + 1]), axis=axis))
        outs.append(Tensor(x.dtype, tuple(shp), part))
    return outs


# --------------------------------------------------------------------- Slice

def _clamp_index(v, d, lo_end):
    """A start or end ``v`` against dim ``d`` (ONNX Slice): a negative one counts from the
    end, then it is clamped to ``[lo_end, d + lo_end]`` (``lo_end`` is 0, or -1 for the
    end of a negative step; -1 also shifts the upper end to ``d - 1``). The ranges drop the clamps that cannot bind: an end of
    INT64_MAX is ``d`` because no dim is larger. Where the sign of ``v`` is not known, both
    cases, each where it holds."""
    neg = dims.try_lt(v, 0)
    if neg is None:  # (either sign: each case's clamp, picked by 1 where v >= 0, else 0: min(1, max(0, v + 1)))
        nonneg = dims.dmin(1, dims.dmax(0, dims.add(v, 1)))
        return dims.add(dims.mul(nonneg, _clamped(v, d, lo_end, False)),
                        dims.mul(dims.sub(1, nonneg), _clamped(v, d, lo_end, True)))
    return _clamped(v, d, lo_end, neg)


def _clamped(v, d, lo_end, neg):
    """:func:`_clamp_index` where ``v`` is negative (``neg``) or not; what it returns holds for
    every ``v`` of its range that has that sign."""
    # A real dim is at most INT64_MAX (what the algebra cannot know of, say, past + seq).
    top = min(dims.range_of(d)[1], dims.INT64_MAX)
    if neg:
        if dims.range_of(v)[1] + top <= lo_end:
            return lo_end
        v = dims.add(v, d)
    elif dims.range_of(v)[0] >= top + lo_end:
        return dims.add(d, lo_end)
    return dims.dmin(dims.dmax(v, lo_end), dims.add(d, lo_end))


def _slice_len(d, start, end, step):
    """The length of ``x[start:end:step]`` along a dim ``d``, or ``None`` when undecidable.
    An ``end`` of ``None`` runs to the end of the dim in the step's direction."""
    up = dims.try_lt(0, step)
    if up is None or (isinstance(step, int) and step == 0):
        return None
    if up:
        s = _clamp_index(start, d, 0)
        e = d if end is None else _clamp_index(end, d, 0)
        if s is None or e is None:
            return None
        return dims.dmax(0, dims.ceil_div(dims.sub(e, s), step))
    s = _clamp_index(start, d, -1)
    e = -1 if end is None else _clamp_index(end, d, -1)
    if s is None or e is None:
        return None
    # the start of a negative step is clamped to [0, d - 1]
    s = dims.dmax(s, 0)
    n = dims.dmax(0, dims.ceil_div(dims.sub(s, e), dims.neg(step)))
    # an empty dim gives nothing (the clamps above assume d >= 1); elsewhere n <= d already
    return n if dims.range_of(d)[0] >= 1 else dims.dmin(d, n)


_SLICE_PARTS = ("starts", "ends", "axes", "steps")


def _check_slice_parts(node, lengths, axes=None, steps=None) -> None:
    """The spec's rules on a Slice's parts (onnx's inference and onnxruntime refuse the node
    otherwise): starts, ends and the axes and steps given have one entry per sliced axis,
    no axis is named twice, no step is 0. ``lengths`` holds each part's length (None where
    unknown or absent); ``axes`` and ``steps``, the known elements."""
    known = [(part, n) for part, n in zip(_SLICE_PARTS, lengths) if n is not None]
    for part, n in known[1:]:
        if n != known[0][1]:
            raise InvalidModel(f"{part} has {n} entries and {known[0][0]} {known[0][1]}; the ONNX spec of Slice "
                               f"gives starts, ends, axes and steps one entry per sliced axis")
    rank = node.tensor(0).rank if node.tensor(0) is not None else None
    if axes is not None and all(isinstance(a, int) for a in axes):
        named = [a + rank if rank is not None and a < 0 else a for a in axes]
        if len(set(named)) < len(named):
            raise InvalidModel(f"axes {list(axes)} names an axis twice; the ONNX spec of Slice names each "
                               f"at most once")
    if steps is not None and any(isinstance(st, int) and st == 0 for st in steps):
        raise InvalidModel(f"steps {list(steps)} holds a 0; the ONNX spec of Slice allows no step 0")


def _slice_input_length(node, i):
    """The number of entries of Slice input ``i`` (starts, ends, axes, steps) where its shape
    tells; a part that is not 1-D breaks the spec."""
    if not present(node, i):
        return None
    t = node.tensor(i)
    if t is None or t.shape is None:
        return None
    if len(t.shape) != 1:
        raise InvalidModel(f"{_SLICE_PARTS[i - 1]} has rank {len(t.shape)}; the ONNX spec of Slice makes it 1-D")
    return t.shape[0] if isinstance(t.shape[0], int) else None


@register("Slice", since=1, conditions=(), cost=formulas.MOVEMENT)  # starts and ends clamp
def slice_v1(node: Node) -> Outputs:
    starts = _ints(node.attr_ints("starts"))
    ends = _ints(node.attr_ints("ends"))
    axes = _ints(node.attr_ints("axes"))
    _check_slice_parts(node, [None if v is None else len(v) for v in (starts, ends, axes)], axes)
    return _slice(node, starts, ends, axes, None)


@register("Slice", since=10, conditions=[unlearned("steps are not 0")], cost=formulas.MOVEMENT)
def slice_v10(node):
    def get(i):
        if not present(node, i):
            return None
        v = node.value(i)
        return "unknown" if v is None else tuple(v)
    starts, ends, axes, steps = get(1), get(2), get(3), get(4)
    _check_slice_parts(node, [_slice_input_length(node, i) for i in range(1, 5)],
                       axes if isinstance(axes, tuple) else None, steps if isinstance(steps, tuple) else None)
    if "unknown" in (starts, ends) or (isinstance(axes, str)) or isinstance(steps, str):
        x = arg(node, 0)
        rank = len(shape_of(x, x.dtype))
        sliced = None
        if axes is None:
            st = arg(node, 1)
            n = len(starts) if starts != "unknown" else (
                st.shape[0] if st.shape and isinstance(st.shape[0], int) else None)
            if n is not None:
                sliced = set(range(n))
        elif not isinstance(axes, str) and all(isinstance(a, int) for a in axes):
            sliced = {normalize_axis(a, rank) for a in axes}
        # axes that are not sliced keep their dims
        out = tuple(d if sliced is not None and i not in sliced
                    else node.fresh("slice bounds unknown", 0, i, hi=dims.range_of(d)[1], bound=d)
                    for i, d in enumerate(x.shape))
        return [Tensor(x.dtype, out)]
    # onnxruntime reads an end of INT_MAX (32- or 64-bit) as numpy's None: to the end
    # in the step's direction, so with a negative step to before the first element,
    # where the spec's clamping would stop at the last one. Its result is the truth here.
    ends = tuple(None if isinstance(e, int) and e in (2**31 - 1, 2**63 - 1) else e for e in ends)
    return _slice(node, starts, ends, axes, steps)


def _slice(node, starts, ends, axes, steps):
    x = arg(node, 0)
    r = len(shape_of(x, x.dtype))
    if axes is None:
        axes = tuple(range(len(starts)))
    if steps is None:
        steps = (1,) * len(starts)
    if not all(isinstance(a, int) for a in axes):
        return [_unknown(node, 0, r, "slice axes symbolic", x.dtype)]
    out = list(x.shape)
    spec = {}
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = normalize_axis(a, r)
        spec[a] = (s, e, st)
        n = _slice_len(x.shape[a], s, e, st)
        out[a] = n if n is not None else node.fresh("slice length undecidable", 0, a,
                                                    hi=dims.range_of(x.shape[a])[1], bound=x.shape[a])
    value = None
    arr = _np_value(x)
    if arr is not None and all(v is None or isinstance(v, int) for sp in spec.values() for v in sp):
        idx = [slice(None)] * r
        for a, (s, e, st) in spec.items():
            idx[a] = slice(s, e, st)
        sub = arr[tuple(idx)]
        if tuple(sub.shape) == tuple(out):
            value = _from_np(sub)
    return [Tensor(x.dtype, tuple(out), value)]


# --------------------------------------------------------------------- Gather

@register("Gather", conditions=[GATHER_INDICES], cost=formulas.MOVEMENT)
def gather_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    idx = arg(node, 1)
    shape, indices = (shape_of(t, x.dtype, why="data or indices rank unknown") for t in (x, idx))
    axis = normalize_axis(node.attr_int("axis", 0), len(shape))
    d = shape[axis]
    out = tuple(shape[:axis]) + tuple(indices) + tuple(shape[axis + 1:])
    value = None
    iv = _static_ints(idx.value)
    arr = _np_value(x)
    if iv is not None and arr is not None and isinstance(d, int):
        ia = np.array([i + d if i < 0 else i for i in iv], dtype=np.int64).reshape(
            tuple(indices) if all(isinstance(s, int) for s in indices) else (len(iv),))
        value = _from_np(np.take(arr, ia, axis=axis))
    return [Tensor(x.dtype, out, value)]


ELEMENTS_FIT = "indices has X's rank, and on each axis but axis at most X's dim"


@register("GatherElements", conditions=[GATHER_INDICES, ELEMENTS_FIT], cost=formulas.MOVEMENT)
def gather_elements_rule(node: Node) -> Outputs:
    x, idx = arg(node, 0), arg(node, 1)
    elements_fit(node, x, idx)
    return [Tensor(x.dtype, shape_of(idx, x.dtype, why="indices rank unknown"))]


def elements_fit(node: Node, x: Tensor, idx: Tensor) -> None:
    """onnxruntime's GatherElements and ScatterElements need indices no larger than the data
    on every axis but ``axis`` (and of its rank)."""
    if x.shape is None or idx.shape is None:
        return
    if len(x.shape) != len(idx.shape):
        raise ShapeContradiction(f"indices has rank {len(idx.shape)}, the data {len(x.shape)}")
    axis = normalize_axis(node.attr_int("axis", 0), len(x.shape))
    for i, (d, k) in enumerate(zip(x.shape, idx.shape)):
        if i != axis:
            node.require_at_least(dims.sub(d, k), 0, f"{node.op_type}: indices' axis {i}, {k}, is at most the data's {d}")


# --------------------------------------------------------------------- Expand, Tile, Range, Where

def _fresh_fn(node, out=0):
    return lambda axis, why: node.fresh(why, out, axis)


def _broadcast_value(ts, out_shape):
    arrs = [_np_value(t) for t in ts]
    if any(a is None for a in arrs) or not all(isinstance(d, int) for d in out_shape):
        return None
    if int(np.prod(out_shape, dtype=np.int64)) > MAX_VALUE_ELEMENTS:
        return None
    return arrs


@register("Expand", conditions=[EXPAND, "shape's elements are >= 0"], cost=formulas.MOVEMENT)
def expand_rule(node):
    x, s = arg(node, 0), arg(node, 1)
    if s.value is None:  # (a constant shape of another rank onnxruntime reads flattened; onnx refuses others)
        _one_d(node, 1, "the shape input")
    if s.value is None or x.shape is None:
        n = s.shape[0] if s.shape and isinstance(s.shape[0], int) else None
        if n is None or x.shape is None:
            return [node.unknown_rank("input rank or shape length unknown", 0, x.dtype)]
        r = max(n, len(x.shape))
        xs = (1,) * (r - len(x.shape)) + tuple(x.shape)
        # a dim of the input that is not 1 survives broadcasting unchanged
        out = tuple(d if dims.try_eq(d, 1) is False else node.fresh("expand shape unknown", 0, i)
                    for i, d in enumerate(xs))
        return [Tensor(x.dtype, out)]
    # every target element is >= 0: a 1 expanded to a negative one fails to allocate, and
    # against any other dim it does not broadcast
    for i, t in enumerate(s.value):
        if intops.is_dim(t):
            node.require_at_least(t, 0, f"Expand: shape element {i}, {t}, is >= 0")
    out = broadcast_shapes([x.shape, tuple(s.value)], _fresh_fn(node), node.require_equal)
    value = None
    arrs = _broadcast_value([x], out)
    if arrs is not None:
        value = _from_np(np.broadcast_to(arrs[0], out))
    return [Tensor(x.dtype, out, value)]


@register("Tile", since=1, conditions=[TILE_REPEATS], cost=formulas.MOVEMENT)
def tile_v1(node: Node) -> Outputs:
    """Tile-1 repeats along one axis: inputs (input, tiles, axis), scalars."""
    x = arg(node, 0)
    tiles, axis = node.value(1), node.value(2)
    out = list(shape_of(x, x.dtype))
    if axis is None or len(axis) != 1:
        return [_unknown(node, 0, len(out), "tile axis unknown", x.dtype)]
    a = normalize_axis(int(axis[0]), len(out))
    n = tiles[0] if tiles is not None and len(tiles) == 1 else None
    if not isinstance(n, (int, float)) or not float(n).is_integer():
        out[a] = node.fresh("tile count unknown", 0, a)
    else:
        out[a] = dims.mul(out[a], int(n))
    return [Tensor(x.dtype, tuple(out))]


@register("Tile", since=6, conditions=[TILE_REPEATS], cost=formulas.MOVEMENT)
def tile_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    reps = node.value(1)
    shape = shape_of(x, x.dtype)
    if reps is None:
        return [_unknown(node, 0, len(shape), "tile repeats unknown", x.dtype)]
    out = tuple(dims.mul(d, k) for d, k in zip(shape, reps))
    value = None
    arr = _np_value(x)
    sr = _static_ints(reps)
    if arr is not None and sr is not None and int(np.prod([a * b for a, b in zip(arr.shape, sr)])) <= MAX_VALUE_ELEMENTS:
        value = _from_np(np.tile(arr, sr))
    return [Tensor(x.dtype, out, value)]


# (a limit short of start gives 0 elements: no condition)
@register("Range", conditions=[unlearned("delta is not 0 (a constant 0 is refused; a computed one leaves the length "
                                         "unresolved, and the domain says so)")], cost=formulas.MOVEMENT)
def range_rule(node):
    dtype = arg(node, 0).dtype  # start, limit and delta have one type
    vals = [node.value(i) for i in range(3)]
    if any(v is None or len(v) != 1 for v in vals):
        return [Tensor(dtype, (node.fresh("range bounds unknown", 0, 0),))]
    start, limit, delta = (v[0] for v in vals)
    if isinstance(delta, (int, float)) and not isinstance(delta, bool) and delta == 0:
        raise ShapeContradiction("delta is 0: onnxruntime refuses a Range of delta 0")
    if dtype in FLOAT_TYPES or any(isinstance(v, float) for v in (start, limit, delta)):
        if all(isinstance(v, (int, float)) for v in (start, limit, delta)):
            got = floatops.range_values(dtype, start, limit, delta, MAX_VALUE_ELEMENTS)
            if got is None:
                return [Tensor(dtype, (node.fresh(f"Range({start}, {limit}, {delta}) in {intops.type_name(dtype)}: "
                                                  f"onnxruntime's count is not defined or not known", 0, 0),))]
            n, elements = got
            return [Tensor(dtype, (n,), elements)]
        n = floatops.range_length(node, dtype, start, limit, delta)
        return [Tensor(dtype, (n if n is not None else node.fresh("range of float bounds", 0, 0),))]
    up = dims.try_lt(0, delta)
    if up is None or (isinstance(delta, int) and delta == 0):
        return [Tensor(dtype, (node.fresh("range delta of unknown sign", 0, 0),))]
    span = dims.sub(limit, start)
    n = dims.dmax(dims.ceil_div(span, delta) if up else dims.ceil_div(dims.neg(span), dims.neg(delta)), 0)
    value = extremes = None
    if isinstance(n, int) and n <= MAX_VALUE_ELEMENTS:
        value = tuple(dims.add(start, i * delta) for i in range(n))
    elif isinstance(delta, int):
        # the first and the last element, start + (n - 1)*delta, if it has any: ReduceMax of
        # a position Range (onnxscript's ort_fusions) is its last position
        last = dims.add(start, dims.mul(dims.sub(n, 1), delta))
        extremes = (start, last) if delta > 0 else (last, start)
    return [Tensor(dtype, (n,), value, extremes)]


@register("Where", conditions=[BROADCAST], cost=formulas.ELEMENTWISE)
def where_rule(node):
    c, a, b = arg(node, 0), arg(node, 1), arg(node, 2)
    dtype = a.dtype or b.dtype
    shapes = [shape_of(t, dtype, why="an input's rank unknown") for t in (c, a, b)]
    out = broadcast_shapes(shapes, _fresh_fn(node), node.require_equal)
    value = None
    arrs = _broadcast_value([c, a, b], out)
    if arrs is not None:
        ca, aa, ba = (np.broadcast_to(x, out) for x in arrs)
        flat = [av if bool(cv) else bv for cv, av, bv in zip(ca.reshape(-1), aa.reshape(-1), ba.reshape(-1))]
        value = _keep(flat)
        node.act_on(0, "condition")
    elif c.value is None:
        value = _where_by_sizes(node, c, a, b, out)
    return [Tensor(dtype, out, value)]


def _where_by_sizes(node, c, a, b, out):
    """A one-element Where whose condition is a test of the sizes and whose picks are shape
    values: ``b + [cond] * (a - b)``, the condition as a 0/1 dim (exact at every size, so a later
    Reshape or Expand over it states what it needs instead of leaving it unknown)."""
    one = [t.value[0] if t.value is not None and len(t.value) == 1 and intops.is_dim(t.value[0]) else None
           for t in (a, b)]
    if None in one or (a.dtype or b.dtype) not in intops.INT_TYPES or any(not isinstance(d, int) or d != 1 for d in out) or \
            c.shape is None or any(not isinstance(d, int) or d != 1 for d in c.shape):
        return None
    cond = node.indicator(0)
    if cond is None:
        return None
    x, y = one
    if dims.range_of(x)[0] >= 0 and dims.range_of(y)[0] >= 0:
        # min(max(x, (x + y)(1 - cond)), max(y, (x + y) cond)): the same pick, in a form whose
        # range starts at the smaller pick's (a Reshape or Expand after it sees a size >= 1)
        both = dims.add(x, y)
        return (dims.dmin(dims.dmax(x, dims.mul(both, dims.sub(1, cond))), dims.dmax(y, dims.mul(both, cond))),)
    return (dims.add(y, dims.mul(cond, dims.sub(x, y))),)


# --------------------------------------------------------------------- Pad, Cast

def _pad_kept(x_shape, pads, axes, mode):
    """What edge, reflect and wrap need of a non-empty input, per padded axis ``(a, kept,
    need)``: the extent ``kept`` the negative pads leave is ``>= need``. onnxruntime copies
    from it, so it refuses it empty, and reflect mirrors inside it (a pad at most kept - 1)."""
    k = len(axes)
    out = []
    for j, a in enumerate(axes):
        before, after = pads[j], pads[j + k]
        if mode == "constant" or not (isinstance(before, int) and isinstance(after, int)):
            continue
        kept = dims.add(x_shape[a], min(before, 0) + min(after, 0))
        wide = max(before, after)
        out.append((a, kept, wide + 1 if mode == "reflect" and wide > 0 else 1))
    return out


def _pad_args(site):
    """(pads, axes, mode) of a Pad node as its domain check sees them; None where unknown."""
    mode = next((a.s.decode() for a in site.node.attribute if a.name == "mode"), "constant")
    a = next((a for a in site.node.attribute if a.name in ("pads", "paddings")), None)
    if a is not None:  # (before opset 11; onnxruntime's contrib Pad reads input 1 as Pad-11)
        return tuple(a.ints), None, mode
    pads = site.value(1)
    axes = None
    if site.opset >= 18 and len(site.node.input) > 3 and site.node.input[3]:
        axes = _static_ints(site.value(3))
        if axes is None:
            return None
    return (tuple(pads), axes, mode) if pads is not None else None


def _pad_unless_empty(site):
    """An input that may be empty is padded apart by onnxruntime (no copy from it): what edge
    and reflect need of the cropped extent holds unless some dim is 0. (Where the input is not
    empty after all, as a later node narrowed it, this is the rule's own need again.)"""
    x, args = site.shape(0), _pad_args(site)
    if x is None or args is None:
        return
    pads, axes, mode = args
    axes = list(range(len(x))) if axes is None else [normalize_axis(a, len(x)) for a in axes]
    if mode == "wrap" or len(pads) != 2 * len(axes):
        return  # (wrap: the rule required the input non-empty)
    empty = tuple((d, 0) for d in x if dims.range_of(d)[0] <= 0)  # (the input is empty where one is 0)
    for a, kept, need in _pad_kept(x, pads, axes, mode):
        if dims.try_le(need, kept) is not True and not (need == 1 and kept is x[a]):  # (>= 1 unless empty)
            yield site.raw("or", need, dims.dmin(need, kept),
                           f"Pad: {mode} copies from axis {a}, {kept} after cropping, so it is >= {need} "
                           f"unless the input is empty", alts=((need, dims.dmin(need, kept)),) + empty)


PAD: list[Condition | str] = ["X[i] + pads[i] + pads[rank + i] >= 0 on each axis (a negative pad crops)",
       "edge, reflect: an axis that X is empty on keeps its length, 0 (onnxruntime pads an empty input apart); "
       "wrap: X is not empty",
       Condition("edge, reflect, wrap: a non-empty X[i] cropped by the negative pads is >= 1; reflect: it is > "
                 "the pad on each side", _pad_unless_empty, replayable=True)]


@register("Pad", since=1, conditions=PAD, cost=formulas.MOVEMENT)
def pad_v1(node: Node) -> Outputs:
    pads = _ints(node.attr_ints("pads") if node.has_attr("pads") else node.attr_ints("paddings"))
    return _pad(node, pads, None)


@register("Pad", since=11, conditions=PAD, cost=formulas.MOVEMENT)
def pad_v11(node: Node) -> Outputs:
    pads = node.value(1)
    axes = None
    if node.opset >= 18 and present(node, 3):
        axes = _static_ints(node.value(3))
        if axes is None:
            x = arg(node, 0)
            return [_unknown(node, 0, x.rank, "pad axes unknown", x.dtype)]
    if pads is None:
        x = arg(node, 0)
        return [_unknown(node, 0, x.rank, "pads unknown", x.dtype)]
    return _pad(node, tuple(pads), axes)


def _pad(node, pads, axes):
    x = arg(node, 0)
    r = len(shape_of(x, x.dtype))
    if axes is None:
        axes = tuple(range(r))
    axes = [normalize_axis(a, r) for a in axes]
    k = len(axes)
    if len(pads) != 2 * k:  # onnxruntime refuses it too
        raise ShapeContradiction(f"pads has {len(pads)} entries for {k} axes, not {2 * k}")
    out = list(x.shape)
    mode = node.attr_str("mode", "constant")
    for j, a in enumerate(axes):
        out[a] = dims.add(dims.add(out[a], pads[j]), pads[j + k])
        # negative pads crop: onnxruntime refuses a dim below 0
        node.require_at_least(out[a], 0, f"Pad: axis {a} padded by {pads[j]} and {pads[j + k]} is >= 0")
    nonempty = all(dims.range_of(d)[0] >= 1 for d in x.shape)
    if mode == "wrap" and not nonempty:  # onnxruntime has no wrap for an empty input, even unpadded
        for a, d in enumerate(x.shape):
            node.require_at_least(d, 1, f"Pad: wrap of an empty input fails, so axis {a} is >= 1")
        nonempty = True
    elif mode != "constant" and not nonempty:
        # onnxruntime pads an empty input apart: edge and reflect refuse to give length to an empty axis
        for j, a in enumerate(axes):
            if isinstance(pads[j], int) and isinstance(pads[j + k], int) and pads[j] + pads[j + k] != 0:
                node.require_at_least(x.shape[a], 1, f"Pad: {mode} gives length to axis {a}, so it is >= 1")
        nonempty = all(dims.range_of(d)[0] >= 1 for d in x.shape)  # (as those needs narrowed it)
    if nonempty:  # (else the domain states them unless the input is empty: _pad_unless_empty)
        for a, kept, need in _pad_kept(x.shape, pads, axes, mode):
            what = f"more than {need - 1} elements" if need > 1 else "an element"
            node.require_at_least(kept, need, f"Pad: {mode} copies from axis {a}, which keeps {what} after "
                                              f"cropping: {kept}")
    return [Tensor(x.dtype, tuple(out))]


def _first(v, otherwise):
    return v if v is not None else otherwise()


def _cast_value(node, value, src, dst, partial=False):
    """The elements of a Cast from ``src`` to ``dst`` as onnxruntime computes them; None when
    one of them cannot be known exactly (``partial``: the tuple, None for each such one)."""
    if value is None:
        return None
    if src == dst:  # (a bool cast to bool: torch's exports do it before an If)
        return value
    if src in intops.INT_TYPES:
        (slo, shi), (dlo, dhi) = intops.INT_RANGES[src], intops.INT_RANGES.get(dst, (1, 0))
        if dlo <= slo and shi <= dhi:
            return value  # a widening cast: every element of src is one of dst
        if dst in intops.INT_TYPES:
            convert = lambda v: intops.fit(node, v, dst, f"Cast of {v} to {intops.type_name(dst)}")  # noqa: E731
        elif dst in FLOAT_TYPES:
            # a symbolic element stays an Expr: it stands for an exact integral float
            # (one it may not hold exactly is Rounded: only its square root is known)
            convert = lambda v: _first(intops.as_float(node, v, dst), lambda: floatops.rounded(v, dst))  # noqa: E731
        elif dst == BOOL:
            convert = lambda v: None if dims.try_eq(v, 0) is None else not dims.try_eq(v, 0)  # noqa: E731
        else:
            return None
        out = [convert(v) if intops.is_dim(v) else None for v in value]
    elif src in FLOAT_TYPES and dst in intops.INT_TYPES:
        ints = [v if isinstance(v, float) else floatops.truncated(v) for v in value]
        out = [intops.from_float(v, dst) if isinstance(v, float) else
               _float_to_int(node, v, src, dst) if v is not None else None for v in ints]
    elif src in FLOAT_TYPES and dst in intops.FLOAT_EXACT:
        # a float rounds to the new type; an integral expression stays exact while the new type
        # holds it (its bound recorded). A Quotient is not carried over: it is the old type's rounding.
        out = [intops.round_to(v, dst) if isinstance(v, float) else
               floatops.exact_float(node, v, dst, "Cast") if intops.is_dim(v) else None for v in value]
    elif src == BOOL and dst in intops.INT_TYPES:
        out = [int(bool(v)) for v in value]
    else:
        return None
    if partial:
        return tuple(out)
    return None if any(v is None for v in out) else tuple(out)


# onnxruntime casts a float to an integer of 8 or 16 bits through int32: the low bits of the
# integer part (Cast(-3.0) to uint8 is 253) within int32's range, 0 past it (x86's conversion
# gives INT32_MIN there); fit's wrap is that only within int32's range. A float32 or float16
# element stands for an exact integer only within its mantissa (< 2**31, the bound recorded
# where it was made); a float64 one may pass int32.
_THROUGH_INT32 = frozenset({TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16})


def _float_to_int(node, v, src, dst):
    """An integral float element (an expression) cast to integer type ``dst``, or None."""
    if dst in _THROUGH_INT32 and src == TensorProto.DOUBLE:
        lo, hi = dims.range_of(v)
        if lo < -2**31 or hi > 2**31 - 1:
            return None
    return intops.fit(node, v, dst, f"Cast of {v} to {intops.type_name(dst)}")


@register("Cast", conditions=(), cost=formulas.MOVEMENT)
def cast_rule(node: Node) -> Outputs:
    x = arg(node, 0)
    if node.opset >= 6:
        to = required_int(node, "to")
    else:  # Cast-1 names the type: "FLOAT", "INT64", ...
        name = node.attr_str("to")
        to = TensorProto.DataType.Value(name) if name in TensorProto.DataType.keys() else 0
    return [Tensor(to, x.shape, _float_derived(node, x, to, _cast_value(node, x.value, x.dtype, to)))]


# A shape tensor is short: a float tensor cast to integers with at most this many elements
# may be one, and keeps each element that is known.
_SHAPE_TENSOR_ELEMENTS = 16


def _float_derived(node, x, to, value):
    """The elements of a float tensor cast to integers, with each one float math made
    unknown a fresh symbol of its own: a detector's Resize sizes Concat(Shape(x)[:2],
    Cast(Floor(Cast(hw) * scale))) keep batch and channels. Only for a short tensor of rank
    at most 1 (what a shape tensor is); the symbol may be any integer of the type (a float
    that is negative, or -1 for a Reshape, casts to one)."""
    if value is not None or x.dtype not in FLOAT_TYPES or to not in intops.INT_TYPES or x.shape is None \
            or len(x.shape) > 1 or not all(isinstance(d, int) for d in x.shape):
        return value
    n = x.shape[0] if x.shape else 1
    if not 1 <= n <= _SHAPE_TENSOR_ELEMENTS:
        return value
    known = _cast_value(node, x.value, x.dtype, to, partial=True) if x.value is not None else (None,) * n
    lo, hi = intops.INT_RANGES[to]
    if x.value is None and node.reads_data(0):  # computed from a graph input's elements: data
        return tuple(node.fresh(f"element {i} of a size computed in float from tensor data", 0, None, lo, hi,
                                kind=Kind.DATA_DEPENDENT) for i in range(n))
    return tuple(node.fresh(f"element {i} of a size computed in float, which the algebra cannot follow",
                            0, None, lo, hi) if v is None else v for i, v in enumerate(known))


@register("CastLike", conditions=(), cost=formulas.MOVEMENT)
def castlike_rule(node: Node) -> Outputs:
    x, y = arg(node, 0), arg(node, 1)
    to = y.dtype
    return [Tensor(to, x.shape, _cast_value(node, x.value, x.dtype, to))]
