"""Rules for image and spatial ops: DepthToSpace, SpaceToDepth, Col2Im,
GridSample, AffineGrid, MaxUnpool, MaxRoiPool, RoiAlign, DeformConv and
CausalConvWithState."""

from __future__ import annotations

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.dims import Dim
from onnxsym.errors import InvalidModel, ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register, unlearned
from onnxsym.semantics import intops
from onnxsym.semantics.shapes import prod

from .common import arg, exact_quotient, present, required_int, required_ints
from .nn import CONV_CONDITIONS, conv

# DeformConv sizes its output exactly as Conv does (X, W first; no auto_pad).
register("DeformConv", conditions=CONV_CONDITIONS)(conv)


@register("DepthToSpace", conditions=["blocksize**2 divides X[1]"], cost=formulas.MOVEMENT)
@register("SpaceToDepth", conditions=["blocksize divides X[2] and X[3]"], cost=formulas.MOVEMENT)
def depth_space(node):
    """Blocks of blocksize x blocksize pixels move into the channels (SpaceToDepth) or out of them."""
    x, b = arg(node, 0), required_int(node, "blocksize")
    n, c, h, w = shape_of(x, x.dtype, rank=4)
    # (onnxruntime runs it only on whole blocks)
    if node.op_type == "DepthToSpace":
        cb = exact_quotient(node, c, b * b, f"DepthToSpace: the channels {c} divide into blocks of {b}x{b}")
        return [Tensor(x.dtype, (n, cb, h * b, w * b))]
    hb = exact_quotient(node, h, b, f"SpaceToDepth: the height {h} is a multiple of the blocksize {b}")
    wb = exact_quotient(node, w, b, f"SpaceToDepth: the width {w} is a multiple of the blocksize {b}")
    return [Tensor(x.dtype, (n, c * (b * b), hb, wb))]


@register("Col2Im", conditions=[
    "the padded image holds the dilated block; input[2] (L) is the block count image_shape, block_shape, pads, "
    "dilations and strides give",
    "prod(block_shape) divides input[1], at least once"])
def col2im(node):
    """(N, C * prod(block_shape), L) -> (N, C, *image_shape)."""
    x = arg(node, 0)
    image, block = node.value(1), node.value(2)
    n, cols, length = shape_of(x, x.dtype, rank=3)
    n_sp = len(image) if image is not None else len(block) if block is not None else None
    if n_sp is None:
        return [node.unknown_rank("image_shape and block_shape values unknown", 0, x.dtype)]
    if block is not None:  # (onnxruntime: "a positive multiple of prod(block_shape)")
        node.require_equal(dims.mul(prod(block), dims.floordiv(cols, prod(block))), cols,
                           f"Col2Im: prod(block_shape) = {prod(block)} divides input[1], {cols}")
        node.require_at_least(cols, prod(block), f"Col2Im: input[1], {cols}, holds a block of {prod(block)}")
    if image is not None and block is not None and len(image) == len(block):
        node.require_equal(length, _sliding_blocks(node, image, block), "Col2Im: input[2] is the number of sliding blocks")
    c = dims.floordiv(cols, prod(block)) if block is not None else \
        node.fresh("Col2Im block_shape is not known", 0, 1)
    sp = tuple(image) if image is not None else \
        tuple(node.fresh("Col2Im image_shape is not known", 0, 2 + i) for i in range(n_sp))
    return [Tensor(x.dtype, (n, c) + sp)]


def _sliding_blocks(node, image, block):
    """How many positions the block takes in the padded image, as onnxruntime counts them."""
    k = len(image)
    pads = node.attr_ints("pads") or [0] * 2 * k
    dil = node.attr_ints("dilations") or [1] * k
    strides = node.attr_ints("strides") or [1] * k
    count: Dim = 1
    for i in range(k):
        span = dims.sub(dims.add(image[i], pads[i] + pads[i + k]), dims.add(dims.mul(dil[i], dims.sub(block[i], 1)), 1))
        node.require_at_least(span, 0, f"Col2Im: the padded image holds the dilated block on axis {i}")
        count = dims.mul(count, dims.add(dims.floordiv(span, strides[i]), 1))
    return count


GRID_SAMPLE = ["grid[0] == X[0]", "grid[-1] is the number of spatial axes (2 or 3)", "X's spatial dims are >= 1"]


@register("GridSample", conditions=GRID_SAMPLE)
def grid_sample(node: Node) -> Outputs:
    """(N, C, *grid.shape[1:-1]): the grid's spatial dims (2-D before opset 20, N-D after;
    onnxruntime's kernel takes 4-D and 5-D X at every opset)."""
    x, grid = arg(node, 0), arg(node, 1)
    shape, grid_shape = (shape_of(t, x.dtype, why="input or grid rank unknown") for t in (x, grid))
    # (onnxruntime refuses these at every size)
    if len(shape) not in (4, 5):
        raise ShapeContradiction(f"GridSample X has rank {len(shape)}; onnxruntime takes 4-D or 5-D only")
    if len(grid_shape) != len(shape):
        raise ShapeContradiction(f"GridSample grid has rank {len(grid_shape)}, not X's {len(shape)}")
    if len(shape) == 5 and node.attr_str("mode", "") in ("cubic", "bicubic"):
        raise ShapeContradiction("GridSample: onnxruntime's cubic mode takes 4-D X only")
    node.require_equal(grid_shape[0], shape[0], "GridSample: the grid has the input's batch")
    node.require_equal(grid_shape[-1], len(shape) - 2, f"GridSample: the grid's last dim is {len(shape) - 2}")
    for i, d in enumerate(shape[2:]):  # (onnxruntime: "Input spatial dimensions must be non-empty")
        node.require_at_least(d, 1, f"GridSample: X's spatial axis {i + 2} is not empty")
    return [Tensor(x.dtype, (shape[0], shape[1]) + tuple(grid_shape[1:-1]))]


@register("AffineGrid", conditions=["theta[0] == size[0]", "theta is (N, 2, 3) for a size of 4 elements, "
                                    "(N, 3, 4) for 5 (onnxruntime checks both)"])
def affine_grid(node: Node) -> Outputs:
    """size (N, C, H, W) -> (N, H, W, 2); size (N, C, D, H, W) -> (N, D, H, W, 3)."""
    theta, size = arg(node, 0), arg(node, 1)
    n_sp = None
    if size.shape is not None and len(size.shape) == 1 and isinstance(size.shape[0], int):
        n_sp = size.shape[0] - 2
    elif theta.shape is not None and len(theta.shape) == 3 and isinstance(theta.shape[1], int):
        n_sp = theta.shape[1]
    if n_sp is None:
        return [node.unknown_rank("size input's length and theta's rank unknown", 0, theta.dtype)]
    # (onnxruntime refuses these at every size: theta is 3-D, size has 4 or 5 elements)
    if theta.shape is not None and len(theta.shape) != 3:
        raise ShapeContradiction(f"AffineGrid theta has rank {len(theta.shape)}, not 3")
    if n_sp not in (2, 3):
        raise ShapeContradiction(f"AffineGrid size has {n_sp + 2} elements, not 4 or 5")
    if theta.shape is not None:
        node.require_equal(theta.shape[1], n_sp, f"AffineGrid: theta is (N, {n_sp}, {n_sp + 1})")
        node.require_equal(theta.shape[2], n_sp + 1, f"AffineGrid: theta is (N, {n_sp}, {n_sp + 1})")
    values = size.value
    if values is None:
        return [Tensor(theta.dtype, node.fresh_shape(n_sp + 2, "AffineGrid size is not known"))]
    for i, v in enumerate(values[2:]):  # (onnxruntime: "size[i] must be positive")
        if isinstance(v, int) and v <= 0:
            raise ShapeContradiction(f"AffineGrid size {list(values)}: onnxruntime needs positive spatial sizes")
        if intops.is_dim(v):
            node.require_at_least(v, 1, f"AffineGrid: size[{i + 2}] is positive")
    if theta.shape is not None:
        node.require_equal(theta.shape[0], values[0], "AffineGrid: theta has size's batch")
    return [Tensor(theta.dtype, (values[0],) + tuple(values[2:]) + (n_sp,))]


@register("MaxUnpool", conditions=[
    "I has X's shape", "each computed spatial size (X[i] - 1) * stride + kernel - pads is >= 1",
    "output_shape, when given, has X's rank, batch and channels and at least the computed shape's element count",
    unlearned("each index in I is below the output's element count (data)")])
def max_unpool(node: Node) -> Outputs:
    """``output_shape`` when given, else ``(d - 1) * stride + kernel - pads`` per spatial axis."""
    x, ind = arg(node, 0), arg(node, 1)
    out_shape = arg(node, 2) if present(node, 2) else None
    if x.shape is None:
        if out_shape is not None and out_shape.value is not None:
            return [Tensor(x.dtype, tuple(out_shape.value))]
        if out_shape is not None and out_shape.shape is not None and isinstance(out_shape.shape[0], int):
            return [Tensor(x.dtype, node.fresh_shape(out_shape.shape[0], "MaxUnpool output_shape is not known"))]
    shape = shape_of(x, x.dtype)
    kernel = required_ints(node, "kernel_shape")
    nsp = len(kernel)
    # (onnxruntime refuses these at every size)
    if not 3 <= len(shape) <= 5 or nsp != len(shape) - 2:
        raise ShapeContradiction(f"MaxUnpool X has rank {len(shape)} with a kernel of {nsp} axes; onnxruntime "
                                 "takes 1 to 3 spatial axes, as many as the kernel's")
    if ind.shape is not None:
        if len(ind.shape) != len(shape):
            raise ShapeContradiction(f"MaxUnpool I has rank {len(ind.shape)}, not X's {len(shape)}")
        for i, (a, b) in enumerate(zip(ind.shape, shape)):
            node.require_equal(a, b, f"MaxUnpool: I has X's shape (axis {i})")
    strides = node.attr_ints("strides") or [1] * nsp
    pads = node.attr_ints("pads") or [0] * (2 * nsp)
    if len(pads) == 2 * nsp and any(max(pads[i], pads[i + nsp]) >= k for i, k in enumerate(kernel)):
        raise InvalidModel(f"MaxUnpool pads {pads} are not all below the kernel {kernel}; onnxruntime refuses "
                           "it when it loads the model")
    sp = tuple((d - 1) * strides[i] + kernel[i] - pads[i] - pads[i + nsp] for i, d in enumerate(shape[2:]))
    for i, d in enumerate(sp):  # (onnxruntime: "Computed output dimension is not positive")
        node.require_at_least(d, 1, f"MaxUnpool: the computed size of axis {i + 2} is >= 1")
    computed = tuple(shape[:2]) + sp
    if out_shape is None:
        return [Tensor(x.dtype, computed)]
    given = out_shape.value
    if given is None:
        n = out_shape.shape[0] if out_shape.shape is not None and len(out_shape.shape) == 1 else len(shape)
        if isinstance(n, int) and n != len(shape):
            raise ShapeContradiction(f"MaxUnpool output_shape has {n} elements, not X's rank {len(shape)}")
        node.require_equal(n, len(shape), f"MaxUnpool: output_shape has X's rank, {len(shape)} elements")
        return [Tensor(x.dtype, node.fresh_shape(len(shape), "MaxUnpool output_shape is not known"))]
    if len(given) != len(shape):
        raise ShapeContradiction(f"MaxUnpool output_shape has {len(given)} elements, not X's rank {len(shape)}")
    # onnxruntime: batch and channels are X's; the element count at least the computed shape's
    node.require_equal(given[0], shape[0], "MaxUnpool: output_shape has X's batch")
    node.require_equal(given[1], shape[1], "MaxUnpool: output_shape has X's channels")
    node.require_at_least(dims.sub(prod(given), prod(computed)), 0,
                          "MaxUnpool: output_shape has at least as many elements as the computed shape")
    return [Tensor(x.dtype, tuple(given))]


@register("MaxRoiPool", conditions=[unlearned("rois[1] == 5")])
def max_roi_pool(node: Node) -> Outputs:
    """(num_rois, C, pooled_h, pooled_w); rois is (num_rois, 5)."""
    x, rois = arg(node, 0), arg(node, 1)
    ph, pw = required_ints(node, "pooled_shape")
    r = rois.shape[0] if rois.shape is not None else node.fresh("MaxRoiPool rois shape is not known", 0, 0)
    c = x.shape[1] if x.shape is not None else node.fresh("MaxRoiPool input shape is not known", 0, 1)
    return [Tensor(x.dtype, (r, c, ph, pw))]


@register("RoiAlign", conditions=[unlearned("batch_indices has rois[0] elements")])
def roi_align(node: Node) -> Outputs:
    """(num_rois, C, output_height, output_width); rois is (num_rois, 4)."""
    x, rois, idx = arg(node, 0), arg(node, 1), arg(node, 2)
    if rois.shape is not None:
        r = rois.shape[0]
    elif idx.shape is not None:
        r = idx.shape[0]
    else:
        r = node.fresh("RoiAlign rois shape is not known", 0, 0)
    c = x.shape[1] if x.shape is not None else node.fresh("RoiAlign input shape is not known", 0, 1)
    return [Tensor(x.dtype, (r, c, node.attr_int("output_height", 1), node.attr_int("output_width", 1)))]


@register("CausalConvWithState", conditions=[unlearned("X[1] == W[1]*group and the state has W[2] - 1 steps")])
def causal_conv_with_state(node: Node) -> Outputs:
    """output has the input's shape; present_state is (batch, channels, k - 1), k = weight.shape[2]."""
    x, w = arg(node, 0), arg(node, 1)
    outs = [Tensor(x.dtype, x.shape)]
    if node.num_outputs > 1:
        if x.shape is None:
            state = None
        else:
            k1 = w.shape[2] - 1 if w.shape is not None and len(w.shape) == 3 else \
                node.fresh("CausalConvWithState kernel size is not known", 1, 2)
            state = (x.shape[0], x.shape[1], k1)
        outs.append(Tensor(x.dtype, state))
    return outs
