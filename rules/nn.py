"""Rules for neural-network ops: MatMul, Gemm, Conv, pools, normalizations,
Einsum, TopK, ArgMax, Resize and friends."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.dims import Dim
from onnxsym.domain.needs import ARG_AXIS, EINSUM_LETTERS, GEMM_C, LAYER_NORM_SCALE, MATMUL_BATCH, NORM_ELEMENTS, POOL_ELEMENTS
from onnxsym.errors import InvalidModel, ShapeContradiction
from onnxsym.facts.fact import Rel, Relation
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.provenance import Kind
from onnxsym.inference.values import Tensor
from onnxsym.registry import Condition, Outputs, register, unlearned
from onnxsym.semantics import intops, scaled
from onnxsym.semantics.shapes import Shape, broadcast_dim, broadcast_shapes, normalize_axis, prod

from .common import F32, I32, I64, arg, present, single_move, spec_one_element, spec_shape


def _bshapes(node, shapes, output=0):
    return broadcast_shapes(shapes, lambda axis, why: node.fresh(why, output, axis), node.require_equal)


# --------------------------------------------------------------------------- MatMul, Gemm

INNER_DIMS = "A[-1] == B[-2] (the inner dims)"

def operand_shapes(dtype: int, *ts: Tensor) -> list[Shape]:
    """The shapes of a product's operands; where a rank is unknown, so is the output's (of ``dtype``)."""
    return [shape_of(t, dtype, why="an input's rank unknown") for t in ts]


@register("MatMul MatMulInteger", conditions=[INNER_DIMS, MATMUL_BATCH], cost=formulas.MATMUL)
def matmul(node: Node) -> Outputs:
    a, b = arg(node, 0), arg(node, 1)
    dtype = a.dtype
    if node.op_type == "MatMulInteger":
        dtype = I32
    return [Tensor(dtype, matmul_shape(node, *operand_shapes(dtype, a, b)))]


def matmul_shape(node, sa, sb):
    """numpy matmul of shapes ``sa`` and ``sb``."""
    sa, sb = tuple(sa), tuple(sb)
    if not sa or not sb:
        raise ShapeContradiction("MatMul of a scalar")
    a1, b1 = len(sa) == 1, len(sb) == 1
    if a1:
        sa = (1,) + sa
    if b1:
        sb = sb + (1,)
    if dims.try_eq(sa[-1], sb[-2]) is False:
        raise ShapeContradiction(f"MatMul inner dims {sa[-1]} and {sb[-2]} differ")
    if sa[-1] != sb[-2]:
        node.require_equal(sa[-1], sb[-2], "MatMul inner dims")
    batch = _bshapes(node, [sa[:-2], sb[:-2]])
    out = tuple(batch)
    if not a1:
        out += (sa[-2],)
    if not b1:
        out += (sb[-1],)
    return out


def gemm_shape(node, sa: Shape, sb: Shape) -> tuple[Dim, Dim]:
    """``(M, N)`` of ``op(A) @ op(B)`` under transA/transB."""
    ta, tb = node.attr_int("transA", 0), node.attr_int("transB", 0)
    m = sa[1] if ta else sa[0]
    n = sb[0] if tb else sb[1]
    if len(sa) == 2 and len(sb) == 2:
        node.require_equal(sa[0] if ta else sa[1], sb[1] if tb else sb[0], "Gemm inner dims (K)")
    return m, n


@register("Gemm", conditions=["op(A)[1] == op(B)[0] (K)", GEMM_C],
          cost=formulas.GEMM)
def gemm(node: Node) -> Outputs:
    a = arg(node, 0)
    return [Tensor(a.dtype, gemm_shape(node, *operand_shapes(a.dtype, a, arg(node, 1))))]


# --------------------------------------------------------------------------- Conv and pools


SAME = ("SAME_UPPER", "SAME_LOWER")


def _windows(node, in_dims, kernel):
    """auto_pad, and for each spatial axis: its index, the input dim, the kernel size, stride
    and dilation, and the pads at its begin and end (0 under VALID; SAME derives its own)."""
    nsp = len(in_dims)
    strides = node.attr_ints("strides") or [1] * nsp
    dil = node.attr_ints("dilations") or [1] * nsp
    pads = node.attr_ints("pads") or [0] * (2 * nsp)
    auto_pad = node.attr_str("auto_pad", "NOTSET")
    for name, v, n in (("kernel_shape", kernel, nsp), ("strides", strides, nsp), ("dilations", dil, nsp),
                       ("pads", pads, 2 * nsp)):
        if len(v) != n:  # onnxruntime refuses it too
            raise ShapeContradiction(f"{name} has {len(v)} entries; the input has {nsp} spatial axes")
    if auto_pad == "VALID":
        pads = [0] * (2 * nsp)
    return auto_pad, [(i, d, kernel[i], strides[i], dil[i], pads[i], pads[i + nsp]) for i, d in enumerate(in_dims)]


def _conv_out(node, in_dims, kernel):
    """Conv output sizes (the spec's formulas; onnxruntime computes them in int64
    and rejects inputs shorter than the dilated kernel)."""
    auto_pad, axes = _windows(node, in_dims, kernel)
    out = []
    for i, d, k, s, dl, pb, pe in axes:
        if auto_pad in SAME:
            if dl != 1:  # onnxruntime's ConvAttributes refuse it at every size
                raise ShapeContradiction(f"onnxruntime does not support dilations ({dl} on axis {i + 2}) "
                                         f"with auto_pad {auto_pad}")
            # (onnxruntime refuses an output size 0: an empty input axis)
            node.require_at_least(d, 1, f"onnxruntime refuses a {node.op_type} output size 0 with auto_pad "
                                        f"{auto_pad} (an empty axis {i + 2})")
            out.append(dims.ceil_div(d, s))
            continue
        node.require_at_least(d, dl * (k - 1) + 1 - pb - pe,
                              f"onnxruntime runs a {node.op_type} only on input dims at least the "
                              f"dilated kernel minus the pads (axis {i + 2})")
        out.append(dims.floordiv(d + pb + pe - dl * (k - 1) - 1, s) + 1)
    return out


# Integers up to 2**24 are exact in float32. A float32 size formula exact up to a bound
# intops.assumable allows is taken as exact, with the bound recorded as an assumption.
FLOAT32_EXACT = 2 ** 24


def _pool_out(node, in_dims, kernel, ceil_mode):
    """Pool output sizes as onnxruntime computes them: SAME padding from the
    undilated kernel, int64 division rounding toward zero (an input shorter than
    the kernel still gives a window), and in ceil_mode a float32 ceil, with the
    last window dropped when it would start in the end padding."""
    auto_pad, axes = _windows(node, in_dims, kernel)
    out = []
    for i, d, k, s, dl, pb, pe in axes:
        if auto_pad in SAME:
            total = (dims.ceil_div(d, s) - 1) * s + k - d
            head = intops.trunc_div(total + (1 if auto_pad == "SAME_LOWER" else 0), 2)
            # a stride past the kernel makes these pads negative at some sizes: MaxPool's plain
            # kernel refuses them (with dilations or indices it runs another, that does not), and
            # so does AveragePool's before opset 19 (from 19 on, its kernel runs them; LpPool runs)
            plain = (node.op_type == "MaxPool" and dl == 1 and node.num_outputs == 1) or \
                (node.op_type == "AveragePool" and node.opset < 19)
            if k < s and plain:
                node.require_at_least(total, 0, f"onnxruntime refuses the negative SAME pads {total} "
                                                 f"of a stride past the kernel (axis {i + 2})")
        else:
            total, head = pb + pe, pb
        n = d + total - dl * (k - 1) - 1
        if auto_pad in SAME and dl > 1:  # (the pads come from the undilated kernel)
            node.require_at_least(intops.trunc_div(n, s) + 1, 0,
                                  f"onnxruntime runs a {node.op_type} only where its output size "
                                  f"is not negative (axis {i + 2})")
        if auto_pad not in SAME:
            # onnxruntime refuses a negative output size, trunc(n/s) + 1 < 0 (ceil mode too)
            node.require_at_least(d, 2 - 2 * s - total + dl * (k - 1),
                                  f"onnxruntime runs a {node.op_type} only where its output size "
                                  f"is not negative (axis {i + 2})")
        if not ceil_mode:
            out.append(intops.trunc_div(n, s) + 1)
            continue
        lo, hi = dims.range_of(n)
        if auto_pad in SAME:  # (the SAME pads total k - s to k - 1: n's range from d's, where the algebra's is looser)
            d_lo, d_hi = dims.range_of(d)
            lo, hi = max(lo, d_lo + k - s - dl * (k - 1) - 1), min(hi, d_hi + k - 2 - dl * (k - 1))
        if lo < -FLOAT32_EXACT or lo > FLOAT32_EXACT or \
                (hi > FLOAT32_EXACT and not intops.assumable(n, FLOAT32_EXACT)):
            out.append(node.fresh(f"ceil_mode pool size over {n}: onnxruntime rounds it through "
                                  f"float32, exact only within +-2**24", 0, i + 2))
            continue
        if hi > FLOAT32_EXACT:
            node.assume_at_most(n, FLOAT32_EXACT, "ceil_mode pool sizes go through float32 in onnxruntime, "
                                                  "exact up to 2**24")
        out.append(dims.dmin(dims.ceil_div(n, s) + 1, dims.ceil_div(d + head, s)))
    return out


CONV_CONDITIONS: list[Condition | str] = ["X[2+i] + pads >= the dilated kernel on each spatial axis (not under SAME padding)",
                                         "SAME padding: no dilation (onnxruntime refuses it at every size)",
                                         "X[1] == group * W[1] (the input channels)",
                                         "Conv, ConvInteger: group divides W[0] (the output channels M); "
                                         "Conv's B is 1-D of M elements"]


@register("Conv ConvInteger", conditions=CONV_CONDITIONS, cost=formulas.CONV)
def conv(node: Node) -> Outputs:
    xi, wi = (0, 3) if node.op_type == "QLinearConv" else (0, 1)
    x, w = arg(node, xi), arg(node, wi)
    dtype = x.dtype
    if node.op_type == "ConvInteger":
        dtype = I32
    elif node.op_type == "QLinearConv":
        dtype = arg(node, 7).dtype or x.dtype
    shape = shape_of(x, dtype)
    nsp = len(shape) - 2
    kernel: Sequence[Dim] | None = node.attr_ints("kernel_shape")
    if kernel is None:
        if w.shape is None:
            return [Tensor(dtype, (shape[0],) + tuple(node.fresh("Conv weight shape unknown", 0, a)
                                                      for a in range(1, nsp + 2)))]
        kernel = list(w.shape[2:])
    elif w.shape is not None and len(w.shape) == len(kernel) + 2:
        _kernel_is_weight(node, kernel, w.shape)
    m = w.shape[0] if w.shape is not None else node.fresh("Conv weight shape unknown", 0, 1)
    if w.shape is not None and len(w.shape) == len(shape):
        node.require_equal(shape[1], dims.mul(node.attr_int("group", 1), w.shape[1]),
                           f"{node.op_type}: the input channels are group * W[1]")
    if node.op_type in ("Conv", "ConvInteger"):
        _output_channels(node, m)
    if node.op_type == "DeformConv" and len(shape) != 4:
        raise ShapeContradiction(f"onnxruntime's DeformConv takes a 4-D X (N, C, H, W), not rank {len(shape)}")
    sp = _conv_out(node, list(shape[2:]), kernel)
    if node.op_type == "DeformConv":
        # onnxruntime: "Offset batch size must match input batch size", and its spatial dims are
        # the output's, its channels offset_group * 2 * prod(kernel) (the mask's: without the 2);
        # B has M elements
        taps: Dim = node.attr_int("offset_group", 1)
        for k in kernel:
            taps = dims.mul(taps, k)
        for i, what, per in ((2, "offset", 2), (4, "mask", 1)):
            t = arg(node, i) if present(node, i) else None
            if t is not None and t.shape is not None and len(t.shape) == len(shape):
                node.require_equal(t.shape[0], shape[0], f"DeformConv: the {what}'s batch is X's")
                node.require_equal(t.shape[1], dims.mul(per, taps),
                                   f"DeformConv: the {what} has offset_group * {per} * prod(kernel) channels")
                for a, (d, o) in enumerate(zip(t.shape[2:], sp)):
                    node.require_equal(d, o, f"DeformConv: the {what}'s axis {a + 2} is the output's")
        b = arg(node, 3) if present(node, 3) else None
        if b is not None and b.shape is not None and len(b.shape) == 1:
            node.require_equal(b.shape[0], m, "DeformConv: B has M elements")
    return [Tensor(dtype, (shape[0], m) + tuple(sp))]


def _output_channels(node: Node, m: Dim) -> None:
    """onnxruntime: "Output channels M is not divisible by group", and Conv's "bias must be a 1D
    tensor of size output_channels" (no broadcasting)."""
    group = node.attr_int("group", 1)
    if group > 1:
        node.require_equal(dims.mul(group, dims.floordiv(m, group)), m,
                           f"{node.op_type}: group {group} divides the output channels W[0]")
    b = arg(node, 2) if node.op_type == "Conv" and present(node, 2) else None
    if b is None or b.shape is None:
        return
    if len(b.shape) != 1:
        raise ShapeContradiction(f"Conv: B has rank {len(b.shape)}; onnxruntime takes a 1-D bias of W[0] elements")
    node.require_equal(b.shape[0], m, "Conv: B has W[0] elements (the output channels)")


def _kernel_is_weight(node: Node, kernel: Sequence[Dim], w: Sequence[Dim]) -> None:
    """onnxruntime: "kernel_shape is not compatible with W shape"."""
    for i, (k, d) in enumerate(zip(kernel, w[2:])):
        node.require_equal(d, k, f"{node.op_type}: W[{i + 2}] is kernel_shape[{i}]")


@register("ConvTranspose", conditions=["the output size is >= 1 on each spatial axis (pads crop it); output_padding < strides",
                                       "X[2+i] >= 1 with output_shape, SAME padding or an output_padding",
                                       "group divides X[1]",
                                       "an explicit output_shape is at most strides * X + (kernel - 1) * dilations",
                                       "X[1] == W[0] (the input channels); W's spatial dims are kernel_shape"],
          cost=formulas.CONV)
def conv_transpose(node: Node) -> list[Tensor]:
    x, w = arg(node, 0), arg(node, 1)
    shape = shape_of(x, x.dtype)
    nsp = len(shape) - 2
    group = node.attr_int("group", 1)
    if w.shape is not None and len(w.shape) == len(shape):
        # onnxruntime: "filter number not equal to input channel number"
        node.require_equal(shape[1], w.shape[0], "ConvTranspose: the input channels X[1] are W[0]")
        if group > 1:  # onnxruntime: the groups split the input channels
            c = shape[1]
            node.require_equal(dims.mul(group, dims.floordiv(c, group)), c,
                               f"ConvTranspose: {group} groups divide the input channels {c}")
        given = node.attr_ints("kernel_shape")
        if given is not None:
            _kernel_is_weight(node, given, w.shape)
    if w.shape is not None:
        m = dims.mul(w.shape[1], group)
    else:
        m = node.fresh("ConvTranspose weight shape unknown", 0, 1)
    kernel: Sequence[Dim] | None = node.attr_ints("kernel_shape")
    if kernel is None:
        if w.shape is None:
            return [Tensor(x.dtype, (shape[0], m) + tuple(node.fresh("ConvTranspose weight shape unknown", 0, a)
                                                           for a in range(2, nsp + 2)))]
        kernel = list(w.shape[2:])
    out_shape = node.attr_ints("output_shape")
    opad = node.attr_ints("output_padding") or [0] * nsp
    same = node.attr_str("auto_pad", "NOTSET") in SAME
    for i, d in enumerate(shape[2:]):
        # onnxruntime refuses an empty spatial input there: under an explicit output_shape ("must be
        # positive"), SAME padding ("<= 0") or an output_padding ("inconsistent with the input")
        if out_shape or same or (i < len(opad) and opad[i] > 0):
            node.require_at_least(d, 1, f"ConvTranspose: X[{i + 2}] >= 1 (onnxruntime refuses an empty spatial "
                                        "input with output_shape, SAME padding or output_padding)")
    if out_shape:
        strides = node.attr_ints("strides") or [1] * nsp
        dilations = node.attr_ints("dilations") or [1] * nsp
        for i, (d, o) in enumerate(zip(shape[2:], out_shape[-nsp:])):
            # onnxruntime refuses an output_shape past the largest it makes: strides * X + (kernel - 1) * dilations
            most = dims.add(dims.mul(strides[i], d), dims.mul(dims.sub(kernel[i], 1), dilations[i]))
            node.require_at_least(dims.sub(most, o), 0, f"ConvTranspose: output_shape {o} on axis {i + 2} is at "
                                                        f"most {most}")
        return [Tensor(x.dtype, (shape[0], m) + tuple(out_shape[-nsp:]))]
    auto_pad, axes = _windows(node, list(shape[2:]), kernel)
    sp: list[Dim] = []
    for i, d, k, s, dl, pb, pe in axes:
        if opad[i] >= s:  # onnxruntime: "Computed output shape is inconsistent with input spatial dimensions"
            raise ShapeContradiction(f"output_padding {opad[i]} on axis {i + 2} is not less than the stride {s}")
        full = s * (d - 1) + opad[i] + (k - 1) * dl + 1
        if auto_pad in SAME:
            # the total padding full - d*s does not depend on d; onnxruntime clamps it at 0
            sp.append(dims.mul(d, s) if opad[i] + (k - 1) * dl + 1 - s >= 0 else full)
            continue
        node.require_at_least(full - pb - pe, 1, f"onnxruntime refuses a ConvTranspose output size <= 0 (axis {i + 2})")
        sp.append(full - pb - pe)
    return [Tensor(x.dtype, (shape[0], m) + tuple(sp))]


@register("MaxPool AveragePool LpPool", conditions=[
    "the output size is >= 0 on each spatial axis: X[2+i] + pads >= dilated kernel - 2*strides + 2",
    "MaxPool (not with dilations or indices) and AveragePool before opset 19, SAME padding with a stride past the "
    "kernel: the derived pads are >= 0",
    "ceil_mode: the size arithmetic stays within float32's exact integers (2**24)", POOL_ELEMENTS], cost=formulas.POOL)
def pool(node: Node) -> Outputs:
    x = arg(node, 0)
    in_shape = shape_of(x, x.dtype, I64)
    kernel = node.attr_ints("kernel_shape")
    if kernel is None:
        raise ShapeContradiction("pool without kernel_shape")
    ceil_mode = bool(node.attr_int("ceil_mode", 0))
    sp = _pool_out(node, list(in_shape[2:]), list(kernel), ceil_mode)
    shape = tuple(in_shape[:2]) + tuple(sp)
    outs = [Tensor(x.dtype, shape)]
    if node.num_outputs > 1:
        outs.append(Tensor(I64, shape))
    return outs


@register("GlobalAveragePool GlobalMaxPool GlobalLpPool", conditions=[POOL_ELEMENTS], cost=formulas.REDUCTION)
def global_pool(node: Node) -> Outputs:
    x = arg(node, 0)
    shape = shape_of(x, x.dtype)
    if len(shape) < 3:  # (N, C, spatial...): onnxruntime refuses fewer axes at every size
        raise ShapeContradiction(f"{node.op_type} needs rank 3 or more, got shape {[str(d) for d in shape]}")
    return [Tensor(x.dtype, tuple(shape[:2]) + (1,) * (len(shape) - 2))]


# --------------------------------------------------------------------------- normalizations


@register("BatchNormalization", conditions=["scale, B, mean and var are 1-D of X[1] elements (before opset 9 with "
                                           "spatial=0: of shape X[1:])"],
          cost=formulas.BATCH_NORMALIZATION)
def batch_norm(node: Node) -> Outputs:
    x = arg(node, 0)
    # onnxruntime: each parameter is 1-D of the channels; before opset 9 with spatial=0, of
    # X's shape past the batch (X[1:]), per element
    want = tuple(x.shape[1:]) if x.shape is not None and node.opset < 9 and node.attr_int("spatial", 1) == 0 \
        else None if x.shape is None else (x.shape[1],)
    if x.shape is not None and len(x.shape) >= 2 and want is not None:
        for i, what in ((1, "scale"), (2, "B"), (3, "mean"), (4, "var")):
            t = arg(node, i) if present(node, i) else None
            if t is None or t.shape is None:
                continue
            if len(t.shape) != len(want):
                raise ShapeContradiction(f"BatchNormalization: {what} has shape {[str(d) for d in t.shape]}; "
                                         f"onnxruntime needs {[str(d) for d in want]}")
            for j, (d, e) in enumerate(zip(t.shape, want)):
                node.require_equal(d, e, f"BatchNormalization: {what}[{j}] is X[{j + 1}]"
                                   + (" (the input's channels)" if j == 0 else ""))
    outs = [Tensor(x.dtype, x.shape)]
    scale = arg(node, 1)
    if scale.shape is not None and len(scale.shape) == 1:
        c = scale.shape
    elif x.shape is not None and len(x.shape) >= 2:
        c = (x.shape[1],)
    else:
        c = None
    for i in range(1, node.num_outputs):
        src = arg(node, 3 if i in (1, 3) else 4) if i < 3 else scale
        outs.append(Tensor(src.dtype or x.dtype, c))
    return outs


@register("LayerNormalization", conditions=[LAYER_NORM_SCALE, NORM_ELEMENTS],
          cost=formulas.NORMALIZATION)
def layer_norm(node: Node) -> Outputs:
    """Y has X's shape; Mean and InvStdDev keep the axes before ``axis`` and have 1 on the
    others, in the element type stash_type names."""
    x = arg(node, 0)
    stash = node.attr_int("stash_type", 1)
    shape = shape_of(x, x.dtype, stash, stash)
    axis = normalize_axis(node.attr_int("axis", -1), len(shape))  # (onnxruntime refuses one out of range)
    for i in (1, 2):  # (a Scale or B longer than X: refused at every size)
        p = arg(node, i) if present(node, i) else None
        if p is not None and p.shape is not None and len(p.shape) > len(shape):
            raise ShapeContradiction(f"LayerNormalization input {i} has rank {len(p.shape)} > X's {len(shape)}")
    red = tuple(shape[:axis]) + (1,) * (len(shape) - axis)
    return [Tensor(x.dtype, shape)] + [Tensor(stash, red)] * (node.num_outputs - 1)


def _group_norm_params(site):
    """scale and bias hold one value per group (opset 18) or per channel (21). onnxruntime runs
    the op's function body, which reshapes them to one axis and broadcasts it: any shape of
    that many elements, or of 1 element, runs."""
    x, g = site.shape(0), site.attr_int("num_groups", 0)
    if x is None or len(x) < 2 or g <= 0:
        return
    want = g if site.opset < 21 else x[1]
    for i, what in ((1, "scale"), (2, "bias")):
        s = site.shape(i)
        if s is None:
            continue
        n = prod(s)
        if dims.try_eq(n, 1) is True or dims.try_eq(n, want) is True:
            continue
        yield site.raw("or", n, want, f"GroupNormalization: {what} has {want} elements (or 1)", alts=((n, want), (n, 1)))


GROUP_NORM_PARAMS = Condition("scale and bias have num_groups elements (opset 18) or X[1] (opset 21), or 1",
                              _group_norm_params, replayable=True)


@register("GroupNormalization", conditions=["num_groups divides X[1]", "X has elements", GROUP_NORM_PARAMS],
          cost=formulas.NORMALIZATION)
def group_norm(node: Node) -> Outputs:
    x = arg(node, 0)
    g = node.attr_int("num_groups")
    if x.shape is not None and len(x.shape) < 2:  # (the body reads X[1]: refused at every size)
        raise ShapeContradiction(f"GroupNormalization X has rank {len(x.shape)}, not at least 2")
    if x.shape is not None:  # onnxruntime's function body refuses an X without elements (its Reshape)
        for i, d in enumerate(x.shape):
            node.require_at_least(d, 1, f"GroupNormalization: X[{i}] >= 1 (onnxruntime refuses an X without elements)")
    if x.shape is not None and g:
        c = x.shape[1]
        node.require_equal(dims.mul(g, dims.floordiv(c, g)), c, f"GroupNormalization: {g} groups divide the channels {c}")
    return [Tensor(x.dtype, x.shape)]


@register("LpNormalization MeanVarianceNormalization", conditions=(), cost=formulas.NORMALIZATION)
def keeps_input_shape(node: Node) -> Outputs:
    x = arg(node, 0)
    if x.shape is not None:  # (onnxruntime refuses an axis out of range at every size)
        if node.op_type == "LpNormalization":
            normalize_axis(node.attr_int("axis", -1), len(x.shape))
        elif not any(-len(x.shape) <= a < len(x.shape) for a in node.attr_ints("axes") or (0, 2, 3)):
            # (onnxruntime skips the axes out of range, and refuses where none is left)
            raise ShapeContradiction(f"no axis of {list(node.attr_ints('axes') or ())} is in range for rank "
                                     f"{len(x.shape)}")
    return [Tensor(x.dtype, x.shape)]


@register("InstanceNormalization", conditions=[unlearned("scale and B have X[1] elements")],
          cost=formulas.NORMALIZATION)
def instance_normalization(node: Node) -> Outputs:
    """The input's shape; scale and B hold one value per channel (axis 1)."""
    x = arg(node, 0)
    if x.shape is not None and len(x.shape) < 3:  # (onnxruntime refuses fewer axes at every size)
        raise ShapeContradiction(f"InstanceNormalization needs rank 3 or more, got shape {[str(d) for d in x.shape]}")
    if x.shape is not None:
        for i, what in ((1, "scale"), (2, "B")):
            spec_shape(node, what, arg(node, i), (x.shape[1],), "[C], the input's channels")
    return [Tensor(x.dtype, x.shape)]


@register("CumSum", conditions=(), cost=formulas.REDUCTION)
def cumsum(node: Node) -> Outputs:
    """The input's shape; the axis is one element."""
    spec_one_element(node, "axis", arg(node, 1))
    x = arg(node, 0)
    axis = node.value(1)
    if x.shape is not None and axis is not None and len(axis) == 1 and isinstance(axis[0], int):
        normalize_axis(axis[0], len(x.shape))  # (onnxruntime refuses one out of range)
    return [Tensor(x.dtype, x.shape)]


@register("Trilu", conditions=(), cost=formulas.MOVEMENT)
def trilu(node: Node) -> Outputs:
    """The input's shape; k, when given, is one element."""
    if present(node, 1):
        spec_one_element(node, "k", arg(node, 1))
    x = arg(node, 0)
    return [Tensor(x.dtype, x.shape)]


@register("LRN", conditions=(), cost=formulas.LRN)
def lrn(node: Node) -> Outputs:
    """The input's shape; ``size`` channels are summed, at least one (onnxruntime refuses 0)."""
    size = node.attr_int("size")
    if size is not None and size <= 0:
        raise InvalidModel(f"size is {size}; the ONNX spec of LRN sums over size channels, at least one")
    x = arg(node, 0)
    return [Tensor(x.dtype, x.shape)]


# --------------------------------------------------------------------------- Einsum


def _parse_term(term):
    letters = []
    i = 0
    while i < len(term):
        if term.startswith("...", i):
            letters.append("...")
            i += 3
        else:
            if term[i].isalpha():
                letters.append(term[i])
            i += 1
    return letters


def _transpose_needs(node, ds, perm, what) -> None:
    """onnxruntime's transpose of dims ``ds`` by ``perm``: where it moves one axis alone and is
    not a copy (that axis, or all it moves past, 1), its kernel divides by the moved dim and every
    dim it does not move past, and dies (SIGFPE) on a 0 there."""
    move = single_move(perm)
    if move is None:
        return
    moved, shifted = move
    past = [ds[i] for i in shifted]
    divisors = [ds[i] for i in range(len(ds)) if i not in shifted]
    where = [(Relation(Rel.NE, ds[moved], 1), f"{ds[moved]} != 1"),
             (Relation(Rel.NE, prod(past), 1), f"{' * '.join(map(str, past))} != 1")]
    node.require_at_least_where(prod(divisors), 1, where, f"Einsum: {what} moves one axis: onnxruntime's kernel "
                                f"divides by {', '.join(map(str, divisors))} (crashes on 0)")


def _diagonal_transposes(terms, shapes) -> Iterator[tuple[str, list[Dim], list[int]]]:
    """onnxruntime takes a repeated letter's diagonal, at each repeat as met, between its first
    axis and this one of the operand as reduced so far. Unless the tensor is 2-D or the two are its
    innermost axes, it transposes them innermost (the others in order, the first axis before the
    second, or after it where the second is already next to last), takes the diagonal there (the
    pair becomes (d, 1), or (1, d) in that last case) and transposes back: each transpose is the
    kernel's (what, dims, perm), which crashes on a 0 where it moves one axis (``bib->bi`` at b 0,
    i not 1)."""
    for t, (term, shape) in enumerate(zip(terms, shapes)):
        keys: list[object] = []
        cur: list[Dim] = []
        pos = 0
        for x in term:
            if x == "...":
                n = len(shape) - len([y for y in term if y != "..."])
                keys += [("...", k) for k in range(n)]
                cur += list(shape[pos:pos + n])
                pos += n
                continue
            if x not in keys:
                keys.append(x)
                cur.append(shape[pos])
                pos += 1
                continue
            full = cur + list(shape[pos:])
            rank, first, second = len(full), keys.index(x), len(cur)
            pos += 1
            if rank == 2 or (first == rank - 2 and second == rank - 1):
                continue
            swapped = second == rank - 2
            perm = [i for i in range(rank) if i not in (first, second)] + ([second, first] if swapped else
                                                                          [first, second])
            what = f"operand {t}'s diagonal of {x}: the transpose"
            yield what + " of its axes innermost", full, perm
            moved = [full[i] for i in perm]
            taken = moved[:-2] + ([1, moved[-1]] if swapped else [moved[-1], 1])
            back = [0] * rank
            for j, i in enumerate(perm):
                back[i] = j
            yield what + " back", taken, back


def _homogenize_transposes(terms, shapes) -> Iterator[tuple[str, list[Dim], list[int]]]:
    """onnxruntime first transposes each operand to one order of the labels (the ellipsis' dims,
    then the letters as first met; a repeated letter's diagonal taken). That transpose is a copy
    where the dims other than 1 keep their order; else, where it moves one axis alone, its kernel
    divides by the moved dim and by every dim it does not move past, and dies (SIGFPE) on a 0
    there (``ay,zy->az`` at y 0 and z not 1; ``aby,bzy->abz`` at b 0). (what, dims, perm) each."""
    order: dict[object, int] = {("...", k): k for k in range(max(len(s) for s in shapes) + 1)}
    for term in terms:
        for x in term:
            if x != "...":
                order.setdefault(x, len(order))
    for term, shape in zip(terms, shapes):
        keys: list[object] = []
        ds: list[Dim] = []
        pos = 0
        for x in term:
            if x == "...":
                n = len(shape) - len([y for y in term if y != "..."])
                keys += [("...", k) for k in range(n)]
                ds += list(shape[pos:pos + n])
                pos += n
            else:
                if x not in keys:
                    keys.append(x)
                    ds.append(shape[pos])
                pos += 1
        perm = sorted(range(len(keys)), key=lambda i: order[keys[i]])
        name = "".join(x if isinstance(x, str) else "." for x in keys)
        yield f"operand {name}'s transpose to the label order", ds, perm


def _einsum_transposes(terms, shapes) -> list[tuple[str, list[Dim], list[int]]]:
    return list(_diagonal_transposes(terms, shapes)) + list(_homogenize_transposes(terms, shapes))


def _blocks_over_zero(site):
    """A transpose of onnxruntime's Einsum that moves two blocks of axes or more (``aabb->ab``'s
    diagonal, ``ca...->...`` over an ellipsis of two dims), not a copy, of an operand with a dim
    that may be 0: its kernel dies (SIGFPE) on some such 0s, for which no exact rule is known:
    said not stated."""
    eq = next((a.s.decode() for a in site.node.attribute if a.name == "equation"), "").replace(" ", "")
    shapes = [site.shape(i) for i in range(len(site.node.input))]
    terms = [_parse_term(t) for t in eq.partition("->")[0].split(",")]
    if not shapes or any(s is None for s in shapes) or len(terms) != len(shapes):
        return
    try:
        moves = _einsum_transposes(terms, shapes)
    except (IndexError, ValueError):  # (an equation that does not match the ranks: inference says so)
        return
    blocks, zero = [], []
    for what, ds, perm in moves:
        if perm == sorted(perm) or single_move(perm) is not None:
            continue
        kept = [i for i in perm if not (isinstance(ds[i], int) and ds[i] == 1)]
        if kept == sorted(kept):  # (the dims other than 1 keep their order: a copy)
            continue
        may = [d for d in ds if dims.range_of(d)[0] <= 0]
        if may:
            blocks.append(what)
            zero += [d for d in dict.fromkeys(may) if d not in zero]
    if blocks:  # (one line a node)
        yield site.unstated(f"what onnxruntime's kernel needs of {', '.join(map(str, zero))} where they may be 0",
                            f"Einsum: {'; '.join(blocks)} moves two blocks of axes or more, and onnxruntime's "
                            "kernel crashes (SIGFPE) on some 0 dims there (no exact rule known)")


@register("Einsum", conditions=[EINSUM_LETTERS, "where an operand's transpose to the label order moves one axis past "
                                "dims not all 1, and that axis is not 1: the other dims are >= 1 (onnxruntime's kernel "
                                "divides by them)", "the same for each transpose of a repeated letter's diagonal "
                                "(its pair moved innermost and back)",
                                Condition("such a transpose that moves two blocks of axes or more, over dims that "
                                          "may be 0 (allow_zero): not stated (onnxruntime crashes on some 0s there)",
                                          _blocks_over_zero)])
def einsum(node):
    eq = node.attr_str("equation", "").replace(" ", "")
    ts = [arg(node, i) for i in range(len(node.inputs))]
    dtype = ts[0].dtype if ts else 0
    shapes = [shape_of(t, dtype, why="an input's rank unknown") for t in ts]
    lhs, arrow, rhs = eq.partition("->")
    terms = [_parse_term(t) for t in lhs.split(",")]
    if len(terms) != len(ts):
        raise ShapeContradiction(f"Einsum equation '{eq}' has {len(terms)} operands, node has {len(ts)}")
    letter_dims: dict[str, list[Dim]] = {}
    ell_shapes = []
    counts: dict[str, int] = {}
    for term, given in zip(terms, shapes):
        shape = tuple(given)
        nlet = len([x for x in term if x != "..."])
        ell_rank = len(shape) - nlet
        if "..." not in term and ell_rank != 0:
            raise ShapeContradiction(f"Einsum term {''.join(term)} does not match rank {len(shape)}")
        pos = 0
        own: dict[str, Dim] = {}
        for x in term:
            if x == "...":
                ell_shapes.append(shape[pos:pos + ell_rank])
                pos += ell_rank
            else:
                if x in own:  # a label repeated in one term (ii->i, a diagonal): equal dims, no broadcast
                    node.require_equal(own[x], shape[pos], f"Einsum: the dims of the repeated label {x} agree")
                own.setdefault(x, shape[pos])
                letter_dims.setdefault(x, []).append(shape[pos])
                counts[x] = counts.get(x, 0) + 1
                pos += 1
    # onnxruntime: every operand's "..." that is not empty covers as many dims (then they broadcast)
    if len({len(e) for e in ell_shapes if e}) > 1:
        raise ShapeContradiction(f"Einsum equation '{eq}': the ellipses cover different numbers of dims")
    ell = _bshapes(node, ell_shapes) if ell_shapes else ()
    if arrow:
        out_terms = _parse_term(rhs)
        if "..." not in out_terms and any(ell_shapes):  # (numpy sums them; onnxruntime refuses at every size)
            raise ShapeContradiction(f"Einsum equation '{eq}': an input's ellipsis covers dims and the output has "
                                     f"no ellipsis (onnxruntime refuses it)")
    else:
        out_terms = (["..."] if ell_shapes else []) + sorted(x for x, c in counts.items() if c == 1)
    for x, ds in letter_dims.items():
        if x not in out_terms and len(ds) > 1:  # a summed letter's dims agree too (the result is dropped)
            broadcast_dim(ds, lambda why: 1, node.require_equal)
    for what, ds, perm in _einsum_transposes(terms, shapes):
        _transpose_needs(node, ds, perm, what)
    out: list[Dim] = []
    for axis, x in enumerate(out_terms):
        if x == "...":
            out.extend(ell)
        else:
            out.append(broadcast_dim(letter_dims[x], lambda why, a=axis: node.fresh(why, 0, a), node.require_equal))
    return [Tensor(dtype, tuple(out))]


# --------------------------------------------------------------------------- TopK, ArgMax


def _topk_data(site):
    """A k onnxsym could not see (read from the data, or computed): at most X[axis], over the
    fresh size the rule gave the output's axis (the domain says it: data-dependent)."""
    x, y = site.shape(0), site.values.get(site.node.output[0])
    if site.opset < 10 or x is None or not x or site.value(1) is not None or not isinstance(y, Tensor) \
            or y.shape is None or len(y.shape) != len(x):
        return
    axis = site.attr_int("axis", -1)
    axis = axis + len(x) if axis < 0 else axis
    if 0 <= axis < len(x) and not isinstance(y.shape[axis], int):
        yield site.raw("<=", y.shape[axis], x[axis], f"TopK: k (the elements of '{site.node.input[1]}') is at most "
                       f"X[{axis}] = {x[axis]}")


@register("TopK", conditions=["k <= X[axis]", Condition("k onnxsym cannot see (the input data) is at most X[axis]: "
                                                        "data-dependent", _topk_data)])
def topk(node: Node) -> Outputs:
    x = arg(node, 0)
    in_shape = shape_of(x, x.dtype, I64)
    axis = normalize_axis(node.attr_int("axis", -1), len(in_shape))
    if node.opset >= 10:
        spec_shape(node, "k", arg(node, 1), (1,), "1-D of one element")
        kv = node.value(1)
        k = kv[0] if kv is not None and len(kv) == 1 else None
    else:
        k = node.attr_int("k")
    if isinstance(k, int) and k < 0:
        raise InvalidModel(f"k is {k}; onnxruntime refuses a negative k")
    if k is None:
        k = node.fresh("TopK k is not known", 0, axis, hi=dims.range_of(in_shape[axis])[1],
                       kind=Kind.DATA_DEPENDENT, bound=in_shape[axis])  # (onnxruntime needs k <= the axis)
    elif intops.is_dim(k) and node.is_resolved(k):  # onnxruntime needs 0 <= k <= the axis' dim
        node.require_at_least(k, 0, f"TopK: k = {k} is >= 0")
        node.require_at_least(dims.sub(in_shape[axis], k), 0, f"TopK: k = {k} is at most axis {axis}'s {in_shape[axis]}")
    elif intops.is_dim(k):  # a k made unknown upstream (float math): still at most the axis wherever TopK runs
        node.bound_fresh(k, in_shape[axis])
    shape = tuple(in_shape[:axis]) + (k,) + tuple(in_shape[axis + 1:])
    return [Tensor(x.dtype, shape), Tensor(I64, shape)]


@register("ArgMax ArgMin", conditions=[ARG_AXIS], cost=formulas.REDUCTION)
def argmax(node: Node) -> Outputs:
    x = arg(node, 0)
    in_shape = shape_of(x, I64)
    axis = normalize_axis(node.attr_int("axis", 0), len(in_shape))
    if node.attr_int("keepdims", 1):
        shape = tuple(in_shape[:axis]) + (1,) + tuple(in_shape[axis + 1:])
    else:
        shape = tuple(in_shape[:axis]) + tuple(in_shape[axis + 1:])
    return [Tensor(I64, shape)]


# --------------------------------------------------------------------------- Resize, Upsample


SCALED = ("scale*X[i] in float32 is exact: X[i] <= 2**24 / scale's numerator, or for another scale (0.3) the "
          "simplest fraction gives the same size up to X[i]'s bound (floor(3*X[i]/10) up to 3495262)")


def _scaled(node, d, scale, axis):
    """onnxruntime's ``(int64_t)(scale * dim)``: both operands float32, the product
    rounded to float32, then truncated. For a symbolic dim that is the closed form
    ``floor(p*d / 2**k)`` (``scale == p / 2**k`` exactly) only when the dim's range
    keeps every float32 step exact: beyond that an assumed bound, recorded."""
    s = np.float32(scale)
    if s == 1.0:
        return d
    if isinstance(d, int):
        return int(s * np.float32(d))
    p, q = float(s).as_integer_ratio()  # q is a power of two
    # The closed form floor(p*d/q) holds when p*d < 2**24 (then d is exact in float32 and
    # the rounding error of the product stays below 1/q, the gap to the next integer),
    # or p*d <= 2**24 for an integral scale (the product is then an exact integer).
    bound = FLOAT32_EXACT if q == 1 else FLOAT32_EXACT - 1
    lo, hi = dims.range_of(d)
    lo = max(lo, 0)  # (a dim of X: never negative, whatever a loose range of its expression says)
    if p * lo > bound or (p * hi > bound and not intops.assumable(d, bound // p)):
        # a scale far from a short power-of-two fraction (0.3): the simplest fraction that gives
        # the same size at every dim up to a bound (floor(3*d/10) up to 3495262), if one does
        near = scaled.as_fraction(float(s))
        if near is not None and near[2] >= lo and (hi <= near[2] or intops.assumable(d, near[2])):
            a, b, last = near
            if hi > last:
                node.assume_at_most(d, last, f"onnxruntime computes the size of {d} times {float(s)!r} in float32, "
                                             f"floor({d}*{a}/{b}) up to {last}")
            return dims.floordiv(dims.mul(d, a), b)
    if p * lo > bound or (p * hi > bound and not intops.assumable(d, bound // p)):
        return node.fresh(f"Resize of {d} by scale {float(s)!r}: onnxruntime computes the size in float32, "
                          f"equal to floor({d}*{float(s)!r}) only while {d} <= {bound // p}", 0, axis)
    if p * hi > bound:
        # Exact for every size a real model has; the bound is recorded and reported, never silent.
        node.assume_at_most(d, bound // p, f"onnxruntime computes the size of {d} times {float(s)!r} in float32, "
                                           f"exact up to {bound // p}")
    return dims.floordiv(dims.mul(d, p), q)


def _policy_sizes(x, sizes, axes, policy):
    """keep_aspect_ratio_policy as onnxruntime applies it (float32 throughout):
    one scale, the min (not_larger) or max (not_smaller) of sizes/dims over
    ``axes``, then ``round(scale * dim)`` on those axes."""
    in_dims = [x.shape[a] for a in axes]
    if not all(isinstance(v, int) for v in list(sizes) + in_dims):
        return None
    ratios = [np.float32(v) / np.float32(d) if d else np.float32(1) for v, d in zip(sizes, in_dims)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    # std::round: halves away from zero
    return [math.floor(float(scale * np.float32(d)) + 0.5) if d else 0 for d in in_dims]


def _nonempty(node, i):
    if not present(node, i):
        return None
    t = arg(node, i)
    if t.shape is not None and len(t.shape) == 1 and t.shape[0] == 0:
        return None
    return t


def _resize_shape(node, x, scales, sizes, axes):
    rank = len(x.shape)
    if axes is None:
        axes = list(range(rank))
    else:
        axes = [normalize_axis(a, rank) for a in axes]
    out = list(x.shape)
    policy = node.attr_str("keep_aspect_ratio_policy", "stretch")
    _lengths(node, scales if sizes is None else sizes, "scales" if sizes is None else "sizes", len(axes))
    if sizes is not None:
        if sizes.value is None:
            for a in axes:
                out[a] = node.fresh("Resize sizes not known", 0, a)
                if dims.range_of(x.shape[a])[0] >= 1:  # (a scale > 0: the domain says it is not stated)
                    node.require_at_least(out[a], 1, f"Resize: sizes[{a}] over X's {x.shape[a]} is a scale > 0")
            return tuple(out)
        if policy != "stretch" and node.opset >= 18:
            adjusted = _policy_sizes(x, sizes.value, axes, policy)
            for i, a in enumerate(axes):
                out[a] = adjusted[i] if adjusted is not None else \
                    node.fresh(f"Resize keep_aspect_ratio_policy={policy} over symbolic dims", 0, a)
            return tuple(out)
        for a, v in zip(axes, sizes.value):
            out[a] = v
        _sizes_need(node, x.shape, out)
        return tuple(out)
    if scales is None or scales.value is None:
        for a in axes:
            out[a] = node.fresh("Resize scales not known", 0, a)
        return tuple(out)
    if all(isinstance(s, (int, float)) for s in scales.value):
        full = [1.0] * rank
        for a, s in zip(axes, scales.value):
            full[a] = s
        _scales_form(node, full)
    for a, s in zip(axes, scales.value):
        # a scale computed from sizes (Cast(h) / 10) is an expression or a quotient, not a number
        out[a] = _scaled(node, x.shape[a], s, a) if isinstance(s, (int, float)) else \
            node.fresh(f"Resize: the scale of axis {a} is computed from sizes, not a number onnxsym knows", 0, a)
    return tuple(out)


LENGTHS = ("scales or sizes has one element per resized axis (X's rank, or axes' count); roi two under "
           "tf_crop_and_resize")


def _lengths(node, t, what, n):
    """onnxruntime: "Number of elements in scales should be equal to rank of the data" (or to
    the number of axes); sizes of another length it refuses when it loads the model."""
    if t is None or t.shape is None or len(t.shape) != 1:
        return
    if isinstance(t.shape[0], int) and t.shape[0] != n:
        raise ShapeContradiction(f"{node.op_type} {what} has {t.shape[0]} elements, not one per resized axis ({n})")
    node.require_equal(t.shape[0], n, f"{node.op_type}: {what} has one element per resized axis ({n})")


def _roi_length(node, n):
    """Under tf_crop_and_resize onnxruntime reads roi: "size of roi array should be 2 * N"."""
    if node.attr_str("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize" or not present(node, 1):
        return
    roi = arg(node, 1)
    if roi.shape is not None and len(roi.shape) == 1:
        if isinstance(roi.shape[0], int) and roi.shape[0] != 2 * n:
            raise ShapeContradiction(f"Resize roi has {roi.shape[0]} elements, not 2 per resized axis ({2 * n})")
        node.require_equal(roi.shape[0], 2 * n, f"Resize: roi has 2 elements per resized axis ({2 * n})")


SIZES = ("sizes: each scale sizes[i] / X[i] onnxruntime computes is > 0 (sizes[i] == 0 where X[i] is 0); "
         "linear and cubic: the scales its kernels support are 1 (linear 4-D: axis 0 and axis 1 or 3; "
         "5-D: axes 0 and 1; cubic 4-D: axes 0 and 1, or 0 and 3 with the others >= 1)")
COMPUTED_SCALES = unlearned("scales computed at run time are > 0 (Upsample: >= 1) and of the form linear and cubic support")


def _scales_form(node, scales) -> None:
    """onnxruntime refuses, when it loads the model, constant scales that are not all > 0, and
    those of a form its linear and cubic kernels do not take (the form _sizes_need states of the
    scales it derives from sizes)."""
    if any(s <= 0 for s in scales):  # (onnxruntime: "Scale value should be greater than 0")
        raise InvalidModel(f"{node.op_type} scales {list(scales)}: onnxruntime needs every scale > 0")
    mode, r = node.attr_str("mode", "nearest"), len(scales)
    one = [s == 1 for s in scales]
    if mode == "linear":
        ok = r in (2, 3) or (r == 4 and one[0] and (one[1] or one[3])) or (r == 5 and one[0] and one[1])
    elif mode == "cubic":
        # (the outermost and innermost scales 1: the other two >= 1 unless antialias)
        inner = r == 4 and one[0] and one[3] and (node.attr_int("antialias", 0) or min(scales[1], scales[2]) >= 1)
        ok = r == 2 or (r == 4 and one[0] and one[1]) or bool(inner)
    else:
        return
    if not ok:
        raise InvalidModel(f"{node.op_type}: onnxruntime's {mode} mode does not take the scales {list(scales)} "
                           f"of a {r}-D input; it refuses them at every size (when it loads a model whose "
                           "scales are constant)")


def _sizes_need(node, in_shape, out):
    """What onnxruntime checks of the scales it derives from Resize's ``sizes``
    (``out[i] / in_shape[i]`` in float32, 1 where the input dim is 0): each > 0, and for
    linear and cubic the form its kernels support. A scale is 1 exactly where the dims are
    equal (for sizes below 2**24, where float32 holds them exactly)."""
    for i, (d, v) in enumerate(zip(in_shape, out)):
        if v is d:
            continue
        if dims.range_of(d)[0] >= 1:
            node.require_at_least(v, 1, f"Resize: sizes[{i}] = {v} over X's {d} is a scale > 0")
        else:  # an input dim of 0 must stay 0; any other gives a scale > 0
            node.require_at_least(v, 0, f"Resize: sizes[{i}] = {v} is >= 0")
            node.require_equal(dims.dmin(v, 1), dims.dmin(d, 1), f"Resize: sizes[{i}] = {v} is 0 exactly where X's {d} is")

    mode, r = node.attr_str("mode", "nearest"), len(out)
    if mode == "linear":
        if r in (2, 3):
            return
        cases = {4: [[("==", 0), ("==", 1)], [("==", 0), ("==", 3)]], 5: [[("==", 0), ("==", 1)]]}.get(r)
        if cases is None:
            raise ShapeContradiction(f"Resize: onnxruntime's linear mode supports inputs of 2 to 5 dims, not {r}")
        _any_case(node, in_shape, out, cases, "linear")
    elif mode == "cubic":
        if r == 2:
            return
        if r != 4:
            raise ShapeContradiction(f"Resize: onnxruntime's cubic mode supports inputs of 2 or 4 dims, not {r}")
        other = [("==", 0), ("==", 3)] + ([] if node.attr_int("antialias", 0) else [(">=", 1), (">=", 2)])
        _any_case(node, in_shape, out, [[("==", 0), ("==", 1)], other], "cubic")


def _any_case(node, in_shape, out, cases, mode):
    """Record that one of ``cases`` holds at the sizes: each a list of parts, ``("==", i)``
    (scale i is 1: ``out[i] == in_shape[i]``) or ``(">=", i)`` (scale i is >= 1)."""
    def gap(part):  # >= 0, and 0 exactly where the part holds
        rel, i = part
        below = dims.sub(in_shape[i], out[i])
        return dims.dmax(below, 0) if rel == ">=" else dims.dmax(below, dims.neg(below))

    open_cases = []
    for parts in cases:
        parts = [p for p in parts if dims.try_eq(gap(p), 0) is not True]
        if not parts:
            return  # this case holds at every size
        if all(dims.try_eq(gap(p), 0) is not False for p in parts):
            open_cases.append(parts)
    why = f"Resize: the scales from sizes are of a form onnxruntime's {mode} mode supports"
    if not open_cases:
        raise ShapeContradiction(why + ": they are not, at any size")
    # a part every case has is needed by itself (linear's and cubic's scale 0 is 1)
    common = [p for p in open_cases[0] if all(p in parts for parts in open_cases[1:])]
    def need(part):
        rel, i = part
        if rel == "==":
            node.require_equal(out[i], in_shape[i], f"{why}: scale {i} is 1")
        else:
            node.require_at_least(dims.sub(out[i], in_shape[i]), 0, f"{why}: scale {i} is >= 1")

    for p in common:
        need(p)
    rest = [[p for p in parts if p not in common] for parts in open_cases]
    if any(not parts for parts in rest):
        return  # a case holds wherever the common parts do
    if len(rest) == 1:
        for p in rest[0]:
            need(p)
        return
    # one of several cases: the least of their summed gaps is 0
    least = None
    for parts in rest:
        total = gap(parts[0])
        for p in parts[1:]:
            total = dims.add(total, gap(p))
        least = total if least is None else dims.dmin(least, total)
    node.require_equal(least, 0, why)


@register("Resize", conditions=[SCALED, LENGTHS, COMPUTED_SCALES], cost=formulas.ELEMENTWISE)
def resize_v10(node: Node) -> Outputs:
    """Resize-10: inputs X and scales."""
    return _resized(node, arg(node, 1), None)


@register("Resize", since=11, conditions=[SCALED, SIZES, LENGTHS, COMPUTED_SCALES], cost=formulas.ELEMENTWISE)
def resize_v11(node: Node) -> Outputs:
    """Resize-11: inputs X, roi, scales, sizes; a non-empty scales is used over sizes."""
    scales, sizes = _nonempty(node, 2), _nonempty(node, 3)
    if scales is None and sizes is None:  # (both empty or absent: onnxruntime refuses it at every size)
        raise ShapeContradiction("Resize has neither scales nor sizes: onnxruntime needs one of them")
    if scales is not None and scales.value is not None and len(scales.value) > 0:
        sizes = None
    return _resized(node, scales, sizes)


@register("Resize", since=13, conditions=[SCALED, SIZES, LENGTHS, COMPUTED_SCALES], cost=formulas.ELEMENTWISE)
def resize(node: Node) -> Outputs:
    """Inputs X, roi, scales, sizes (one of scales and sizes); from opset 18 on, the axes attribute."""
    return _resized(node, _nonempty(node, 2), _nonempty(node, 3), node.attr_ints("axes") if node.opset >= 18 else None)


@register("Upsample", conditions=[SCALED, LENGTHS], cost=formulas.ELEMENTWISE)
def upsample_v7(node: Node) -> Outputs:
    """Upsample-7: the scales attribute."""
    s = node.attr_floats("scales")
    _upsample_scales(s)
    return _resized(node, Tensor(F32, (len(s),), tuple(s)) if s is not None else None, None)


@register("Upsample", since=9, conditions=[SCALED, LENGTHS, COMPUTED_SCALES], cost=formulas.ELEMENTWISE)
def upsample(node: Node) -> Outputs:
    """The scales input."""
    _upsample_scales(node.value(1))
    return _resized(node, arg(node, 1), None)


def _upsample_scales(scales) -> None:
    """onnxruntime refuses an Upsample whose constant scales include one below 1, when it loads the model."""
    low = [v for v in scales or () if isinstance(v, (int, float)) and v < 1]
    if low:
        raise InvalidModel(f"Upsample scale {low[0]} is below 1; onnxruntime refuses it when it loads the model")


def _resized(node, scales, sizes, axes=None):
    x = arg(node, 0)
    shape_of(x, x.dtype)
    if node.op_type == "Resize" and node.opset >= 11:
        _roi_length(node, len(axes) if axes is not None else len(x.shape))
    return [Tensor(x.dtype, _resize_shape(node, x, scales, sizes, axes))]
