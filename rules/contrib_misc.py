"""com.microsoft contrib ops that onnxruntime's fusions emit outside attention,
normalization and quantization: fused activations, fused MatMul/Gemm/Conv, NHWC conv,
mixture-of-experts."""

from __future__ import annotations

from onnx import TensorProto

from onnxsym import dims
from onnxsym.cost import formulas
from onnxsym.errors import ShapeContradiction
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.provenance import Kind
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register
from onnxsym.semantics.shapes import broadcast_shapes, normalize_axis, prod

from . import shape_ops
from .common import BOOL, F32, I32, I64, STRING, arg, present, required_int, scalar
from .contrib_common import MS, WithInputs, channels_last_rule, exact_div, same_as, to_channels_first
from .image import GRID_SAMPLE, grid_sample
from .nn import conv, conv_transpose, gemm, matmul, pool


@register("BiasGelu FastGelu Gelu QuickGelu BiasAdd", domain=MS, cost=formulas.ELEMENTWISE)
@register("Trilu", domain=MS, cost=formulas.MOVEMENT)
@register("BiasSoftmax FusedGelu Inverse ScaledSiLU MoE QMoE MRotaryEmbedding LongformerAttention "
          "QOrderedGelu QOrderedLayerNormalization SampleOp", domain=MS)
def keeps_input_shape(node: Node) -> Outputs:
    """Output 0 has the shape of input 0 (biases, caches, routers and experts only read)."""
    return [same_as(node, 0)]


@register("BiasDropout BitmaskBiasDropout BitmaskDropout", domain=MS)
def bias_dropout(node: Node) -> Outputs:
    x = arg(node, 0)
    outs = [Tensor(x.dtype, x.shape)]
    if node.num_outputs > 1:
        if node.op_type == "BiasDropout":
            outs.append(Tensor(BOOL, x.shape))
        else:  # one bit per element, packed in uint32 words
            words = None if x.shape is None else (dims.ceil_div(prod(x.shape), 32),)
            outs.append(Tensor(TensorProto.UINT32, words))
    return outs


@register("BiasSplitGelu", domain=MS)
def bias_split_gelu(node: Node) -> Outputs:
    """(N, S, D) -> (N, S, D/2): the two halves of the last axis gate each other."""
    x = arg(node, 0)
    shape = shape_of(x, x.dtype)
    d = exact_div(shape[-1], 2, "BiasSplitGelu hidden size")
    return [Tensor(x.dtype, tuple(shape[:-1]) + (d,))]


@register("GemmFastGelu", domain=MS)
def gemm_fast_gelu(node: Node) -> Outputs:
    return matmul(node)


def _fused_operand(shape, trans_batch, trans):
    """The operand's shape after FusedMatMul's transBatch and trans flags."""
    s = list(shape)
    if trans_batch and len(s) >= 3:  # dim 0 moves in front of the last dim
        s = s[1:-1] + [s[0], s[-1]]
    if trans and len(s) >= 2:
        s[-1], s[-2] = s[-2], s[-1]
    return tuple(s)


@register("FusedMatMul", domain=MS, cost=formulas.MATMUL)
@register("TransposeMatMul FusedMatMulActivation", domain=MS)
def fused_matmul(node: Node) -> Outputs:
    """MatMul after transposing the operands as the attributes say."""
    a, b = arg(node, 0), arg(node, 1)
    a_shape, b_shape = (shape_of(t, a.dtype, why="an input's rank unknown") for t in (a, b))
    sa = _fused_operand(a_shape, node.attr_int("transBatchA", 0), node.attr_int("transA", 0))
    sb = _fused_operand(b_shape, node.attr_int("transBatchB", 0), node.attr_int("transB", 0))
    return _matmul_of(node, Tensor(a.dtype, sa), Tensor(b.dtype, sb))


def _matmul_of(node, a, b):
    """The ONNX MatMul rule applied to two given operands."""
    return matmul(WithInputs(node, [a, b], "MatMul"))


@register("FusedGemm", domain=MS)
def fused_gemm(node: Node) -> Outputs:
    return gemm(node)


@register("FusedConv", domain=MS, cost=formulas.CONV)
def fused_conv(node: Node) -> Outputs:
    return conv(node)


@register("NhwcConv NhwcFusedConv", domain=MS)
def nhwc_conv(node: Node) -> Outputs:
    """Conv in channels-last layout: X (N, spatial..., C), W (M, kernel..., C/group)."""
    x, w = arg(node, 0), arg(node, 1)
    shape = shape_of(x, x.dtype)
    w_oihw = Tensor(w.dtype, None if w.shape is None else to_channels_first(w.shape))
    return channels_last_rule(node, conv, "Conv", [Tensor(x.dtype, to_channels_first(shape)), w_oihw])


@register("CDist", domain=MS)
def cdist(node: Node) -> Outputs:
    a, b = arg(node, 0), arg(node, 1)
    a_shape, b_shape = (shape_of(t, a.dtype, why="an input's rank unknown") for t in (a, b))
    return [Tensor(a.dtype, (a_shape[0], b_shape[0]))]


@register("Range", domain=MS, cost=formulas.MOVEMENT)
def ms_range(node: Node) -> Outputs:
    """The ONNX Range, whose delta (input 2) defaults to 1 here."""
    if present(node, 2):
        return shape_ops.range_rule(node)
    start = arg(node, 0)
    delta = Tensor(start.dtype, (), (1,))
    return shape_ops.range_rule(WithInputs(node, [start, arg(node, 1), delta]))


# onnxruntime's contrib Pad reads its pads from input 1 like ONNX Pad-11 does.
register("Pad", domain=MS, conditions=shape_ops.PAD, cost=formulas.MOVEMENT)(shape_ops.pad_v11)


@register("ExpandDims", domain=MS)
def expand_dims(node: Node) -> Outputs:
    """Insert a 1 at the axis given by the scalar input 1."""
    x = arg(node, 0)
    axis = scalar(node, 1)
    shape = shape_of(x, x.dtype, why="input rank or axis unknown")
    if axis is None:
        return [node.unknown_rank("input rank or axis unknown", 0, x.dtype)]
    axis = normalize_axis(axis, len(shape) + 1)
    return [Tensor(x.dtype, tuple(shape[:axis]) + (1,) + tuple(shape[axis:]))]


@register("GemmaRotaryEmbedding", domain=MS)
def gemma_rotary_embedding(node: Node) -> Outputs:
    """Rotated q (input 1) and k (input 3)."""
    return [same_as(node, 1), same_as(node, 3)]


@register("SwiGLU", domain=MS)
def swiglu(node: Node) -> Outputs:
    """Shaped like one half: the gate itself when ``up`` is given, else half its last axis."""
    g = arg(node, 0)
    if present(node, 1) or g.shape is None:
        return [Tensor(g.dtype, g.shape)]
    half = exact_div(g.shape[-1], 2, "SwiGLU concatenated halves")
    return [Tensor(g.dtype, tuple(g.shape[:-1]) + (half,))]


@register("ComplexMul ComplexMulConj", domain=MS)
def complex_mul(node: Node) -> Outputs:
    a, b = arg(node, 0), arg(node, 1)
    shapes = [shape_of(t, a.dtype, why="an input's rank unknown") for t in (a, b)]
    return [Tensor(a.dtype, broadcast_shapes(shapes, lambda axis, why: node.fresh(why, 0, axis), node.require_equal))]


@register("MulInteger", domain=MS)
def mul_integer(node: Node) -> Outputs:
    """A (0) times B (2), broadcast, in int32."""
    a, b = arg(node, 0), arg(node, 2)
    shapes = [shape_of(t, I32, why="an input's rank unknown") for t in (a, b)]
    return [Tensor(I32, broadcast_shapes(shapes, lambda axis, why: node.fresh(why, 0, axis), node.require_equal))]


@register("IsAllFinite", domain=MS)
def is_all_finite(_node: Node) -> Outputs:
    return [Tensor(BOOL, ())]


@register("MurmurHash3", domain=MS)
def murmur_hash3(node: Node) -> Outputs:
    x = arg(node, 0)
    return [Tensor(TensorProto.UINT32 if node.attr_int("positive", 1) else I32, x.shape)]


@register("NGramRepeatBlock", domain=MS)
def ngram_repeat_block(node: Node) -> Outputs:
    return [same_as(node, 1)]


@register("TorchEmbedding", domain=MS)
def torch_embedding(node: Node) -> Outputs:
    """indices.shape + (embedding size,)."""
    w, idx = arg(node, 0), arg(node, 1)
    why = "weight or indices rank unknown"
    width, indices = shape_of(w, w.dtype, why=why)[-1], shape_of(idx, w.dtype, why=why)
    return [Tensor(w.dtype, tuple(indices) + (width,))]


@register("GridSample", domain=MS, conditions=GRID_SAMPLE)
def ms_grid_sample(node: Node) -> Outputs:
    """onnxruntime's kernel of the standard op (bilinear, nearest, bicubic), on the 4-D X and grid
    its schema takes (another rank is refused when the model loads)."""
    for what, t in (("X", arg(node, 0)), ("grid", arg(node, 1))):
        if t.shape is not None and len(t.shape) != 4:
            raise ShapeContradiction(f"com.microsoft GridSample {what} has rank {len(t.shape)}, not 4")
    return grid_sample(node)


@register("CropAndResize", domain=MS)
def crop_and_resize(node: Node) -> Outputs:
    """(num_rois, C, crop_height, crop_width); the crop size is the value of input 3."""
    x, rois = arg(node, 0), arg(node, 1)
    shape, rois_shape = (shape_of(t, x.dtype, why="input or rois rank unknown") for t in (x, rois))
    size = node.value(3)
    if size is not None and len(size) == 2:
        h, w = size
    else:
        h, w = (node.fresh("crop_size is a tensor input whose value is unknown", 0, a) for a in (2, 3))
    return [Tensor(x.dtype, (rois_shape[0], shape[1], h, w))]


@register("MaxpoolWithMask", domain=MS)
def maxpool_with_mask(node: Node) -> Outputs:
    return pool(WithInputs(node, [arg(node, 0)], "MaxPool"))[:1]


@register("NhwcMaxPool", domain=MS)
def nhwc_max_pool(node: Node) -> Outputs:
    """MaxPool in channels-last layout (N, spatial..., C)."""
    x = arg(node, 0)
    shape = shape_of(x, x.dtype)
    return channels_last_rule(node, pool, "MaxPool", [Tensor(x.dtype, to_channels_first(shape))])


@register("Unique", domain=MS)
def unique(node: Node) -> Outputs:
    """y and counts have as many entries as distinct values: data (at most len(x))."""
    x = arg(node, 0)
    n = x.shape[0] if x.shape is not None and len(x.shape) == 1 else None
    hi = n if isinstance(n, int) else dims.INT64_MAX
    k = node.fresh("the number of distinct values of x is data", 0, 0, lo=0, hi=hi)
    return [Tensor(x.dtype, (k,)), Tensor(I64, None if n is None else (n,)),
            Tensor(I64, (k,))]


@register("DecoderAttention", domain=MS)
def decoder_attention(node: Node) -> Outputs:
    """output is shaped like query (S, B, hidden); the new caches keep the cache's batch,
    heads and head size, and their length depends on the static_kv/use_past flags (data)."""
    q, cache = arg(node, 0), arg(node, 6)
    outs = [Tensor(q.dtype, q.shape)]
    for i in (1, 2):
        if cache.shape is not None and len(cache.shape) == 4:
            c = cache.shape
            outs.append(Tensor(q.dtype, (c[0], c[1], node.fresh("new cache length depends on the "
                                                                "static_kv and use_past inputs", i, 2), c[3])))
        else:
            outs.append(node.unknown_rank("cache rank unknown", i, q.dtype))
    return outs[:max(node.num_outputs, 1)]


@register("UnfoldTensor", domain=MS)
def unfold_tensor(node: Node) -> Outputs:
    """torch's unfold: axis ``dim`` holds the (d - size)//step + 1 windows, a new last
    axis the ``size`` elements of each."""
    x = arg(node, 0)
    shape = list(shape_of(x, x.dtype))
    axis = normalize_axis(node.attr_int("dim", -1), len(shape))
    size, step = required_int(node, "size"), node.attr_int("step", 1)
    shape[axis] = dims.floordiv(shape[axis] - size, step) + 1
    return [Tensor(x.dtype, tuple(shape) + (size,))]


@register("GatherND", domain=MS, cost=formulas.MOVEMENT)
def gather_nd(node: Node) -> Outputs:
    """ONNX GatherND without batch dims: indices' leading axes, then the data axes the
    last index axis does not address."""
    data, idx = arg(node, 0), arg(node, 1)
    why = "data or indices rank unknown, or the index depth symbolic"
    shape, indices = (shape_of(t, data.dtype, why=why) for t in (data, idx))
    depth = indices[-1]
    if not isinstance(depth, int):
        return [node.unknown_rank(why, 0, data.dtype)]
    return [Tensor(data.dtype, tuple(indices[:-1]) + tuple(shape[depth:]))]


@register("Rfft", domain=MS)
def rfft(node: Node) -> Outputs:
    """The last signal axis n becomes n//2 + 1 (onesided) and a trailing axis of 2 holds
    real and imaginary parts (onnxruntime's CUDA kernel, as torch.rfft)."""
    x = arg(node, 0)
    if x.shape is None or not x.shape:
        return [node.unknown_rank("input rank unknown, or a scalar", 0, x.dtype)]
    shape = list(x.shape)
    if node.attr_int("onesided", 1):
        shape[-1] = dims.floordiv(shape[-1], 2) + 1
    return [Tensor(x.dtype, tuple(shape) + (2,))]


@register("Irfft", domain=MS)
def irfft(node: Node) -> Outputs:
    """The inverse: (..., m, 2) -> (..., m) or, onesided, (..., 2*m - 1): the size
    onnxruntime's CUDA kernel gives it (not torch.irfft's 2*(m - 1))."""
    x = arg(node, 0)
    if x.shape is None or len(x.shape) < 2:
        return [node.unknown_rank("input rank unknown, or below 2", 0, x.dtype)]
    shape = list(x.shape[:-1])
    if node.attr_int("onesided", 1):
        shape[-1] = 2 * shape[-1] - 1
    return [Tensor(x.dtype, tuple(shape))]


@register("WordConvEmbedding", domain=MS)
def word_conv_embedding(node: Node) -> Outputs:
    """Sequence (words, chars): one embedding per word, as wide as the conv has filters
    (W's rows); onnxruntime's kernel keeps only the first axis of a longer Sequence."""
    seq, w = arg(node, 0), arg(node, 1)
    if seq.shape is None or not seq.shape:
        return [node.unknown_rank("sequence input rank unknown, or a scalar", 0, w.dtype)]
    width = w.shape[0] if w.shape else node.fresh("the conv weight's shape is unknown", 0, 1)
    return [Tensor(w.dtype or F32, (seq.shape[0], width))]


@register("Tokenizer", domain=MS)
def tokenizer(node: Node) -> Outputs:
    """[C] -> [C, D], [N, C] -> [N, C, D]; D, the most tokens any string has, is data."""
    x = arg(node, 0)
    shape = shape_of(x, STRING)
    d = node.fresh("the most tokens any string splits into is data", 0, len(shape), lo=0, kind=Kind.DATA_DEPENDENT)
    return [Tensor(STRING, tuple(shape) + (d,))]


@register("DynamicTimeWarping", domain=MS)
def dynamic_time_warping(node):
    """(2, path length): the path from (0, 0) to (M-1, N-1) takes between max(M, N)
    and M + N - 1 steps, which ones is data."""
    x = arg(node, 0)
    lo, hi = 0, dims.INT64_MAX
    if x.shape is not None and len(x.shape) == 2 and all(isinstance(d, int) for d in x.shape):
        lo, hi = max(x.shape), sum(x.shape) - 1
    return [Tensor(I32, (2, node.fresh("the warping path's length is data", 0, 1, lo=lo, hi=hi)))]


@register("BifurcationDetector", domain=MS)
def bifurcation_detector(node: Node) -> Outputs:
    """tokens: cur_tokens, plus the predicted tokens from the bifurcation index on (data);
    suffix_match_idx a scalar."""
    cur = arg(node, 1)
    idx = Tensor(arg(node, 2).dtype or cur.dtype, ())
    if not present(node, 3):
        return [Tensor(cur.dtype, cur.shape), idx][:max(node.num_outputs, 1)]
    n = None
    if cur.shape is not None and len(cur.shape) == 1:
        n = node.fresh("how many predicted tokens follow the bifurcation index is data", 0, 0,
                       lo=dims.range_of(cur.shape[0])[0])
    out = node.unknown_rank("input 1 rank unknown, or not 1", 0, cur.dtype) if n is None else Tensor(cur.dtype, (n,))
    return [out, idx][:max(node.num_outputs, 1)]


class _WithPads(WithInputs):
    """``node`` with its pads attribute read from a tensor input."""

    def __init__(self, node, pads):
        super().__init__(node, node.inputs, "ConvTranspose")
        self._pads = pads

    def attr_ints(self, name, default=None):
        return list(self._pads) if name == "pads" else self._node.attr_ints(name, default)


@register("ConvTransposeWithDynamicPads", domain=MS)
def conv_transpose_with_dynamic_pads(node: Node) -> Outputs:
    """ConvTranspose whose pads come from input 2."""
    pads = node.value(2)
    if pads is not None:
        return conv_transpose(_WithPads(node, pads))
    out = conv_transpose(node)[0]
    if not present(node, 2) or not isinstance(out, Tensor) or out.shape is None:
        return [out]
    sp = tuple(node.fresh("ConvTranspose pads are a tensor input whose value is unknown", 0, a)
               for a in range(2, len(out.shape)))
    return [Tensor(out.dtype, tuple(out.shape[:2]) + sp)]


@register("ConvStateReplay GatedDeltaNetStateReplay", domain=MS)
def state_replay(node: Node) -> Outputs:
    """The output is bound to destination_backing's allocation: its shape."""
    return [same_as(node, 2)]


@register("DequantizeBFP", domain=MS)
def dequantize_bfp(node: Node) -> Outputs:
    """The original tensor: its shape is the value of input 1."""
    shape = node.value(1)
    dtype = node.attr_int("dtype", F32)
    if shape is None:
        t = arg(node, 1)
        if t.shape is None or len(t.shape) != 1 or not isinstance(t.shape[0], int):
            return [node.unknown_rank("shape input's value and length unknown", 0, dtype)]
        return [Tensor(dtype, node.fresh_shape(t.shape[0], "the shape is a tensor input whose value is unknown"))]
    return [Tensor(dtype, tuple(shape))]
