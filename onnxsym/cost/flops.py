"""FLOPs of one node, by op family, as an expression over the input symbols.

A multiply-add counts 2. The families and what they count:

- matmul: MatMul-like ``2*M*N*K`` per output matrix (``2*numel(Y)*K``); Gemm ``2*M*N*K``
  (the bias and the scaling are not counted);
- conv: ``2*numel(Y)*(C/group)*prod(kernel)``; ConvTranspose ``2*numel(X)*(M/group)*prod(kernel)``;
- attention (ONNX Attention, com.microsoft Attention, MultiHeadAttention,
  GroupQueryAttention): ``2*L*(numel(Q) + numel(Y))`` for the scores and the weighted sum,
  with ``L`` the key length (of the present key when there is one); the packed
  com.microsoft Attention adds its QKV projection;
- elementwise (dequantizing gathers too): one per output element; pool: one per window
  element per output element; LRN: ``size`` per output element;
- recurrent (RNN, GRU, LSTM): ``2*seq*batch*(numel(W) + numel(R))``, the gates' input and
  recurrent matrix products at every step;
- reduction: one per input element; softmax: 5 per input element (max, subtract, exp,
  sum, divide); normalization: 5 per input element (BatchNormalization: 2, a scale and
  a shift);
- movement (Reshape, Transpose, Gather, Concat, Cast, Dropout at inference, ...): 0.
Other ops (control flow, unknown domains, ops not listed) are not counted: ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from onnx import helper

from .. import dims
from ..dims import Dim
from ..inference.values import Tensor
from .sizes import numel

ELEMENTWISE = set("""Abs Acos Acosh Add And Asin Asinh Atan Atanh BitShift BitwiseAnd BitwiseNot BitwiseOr
BitwiseXor Ceil Celu Clip Cos Cosh Div Elu Equal Erf Exp Floor Gelu Greater GreaterOrEqual HardSigmoid
HardSwish IsInf IsNaN LeakyRelu Less LessOrEqual Log Max Mean Min Mish Mod Mul Neg Not Or PRelu Pow
Reciprocal Relu Round Selu Shrink Sigmoid Sign Sin Sinh Softplus Softsign Sqrt Sub Sum Tan Tanh
ThresholdedRelu Where Xor Resize Upsample DequantizeLinear QuantizeLinear DynamicQuantizeLinear
FastGelu BiasGelu QuickGelu BiasAdd Swish GatherBlockQuantized""".split())
REDUCTION = set("""ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean ReduceMin ReduceProd
ReduceSum ReduceSumSquare ArgMax ArgMin GlobalAveragePool GlobalMaxPool GlobalLpPool CumSum
QLinearGlobalAveragePool""".split())
SOFTMAX = {"Softmax", "LogSoftmax", "Hardmax"}
NORMALIZATION = set("""LayerNormalization InstanceNormalization GroupNormalization RMSNormalization
LpNormalization MeanVarianceNormalization SimplifiedLayerNormalization SkipLayerNormalization
SkipSimplifiedLayerNormalization""".split())
MOVEMENT = set("""Reshape Transpose Gather GatherElements GatherND Concat Slice Split Squeeze Unsqueeze Flatten
Expand Tile Pad Identity Cast CastLike Shape Size Constant ConstantOfShape Range Trilu EyeLike
ScatterElements ScatterND DepthToSpace SpaceToDepth Compress NonZero OneHot ReverseSequence Dropout""".split())
MATMUL = {"MatMul", "MatMulInteger", "QLinearMatMul", "FusedMatMul", "MatMulNBits", "MatMulIntegerToFloat"}
CONV = {"Conv", "ConvInteger", "QLinearConv", "FusedConv"}
ATTENTION = {"Attention", "MultiHeadAttention", "GroupQueryAttention"}
POOL = {"AveragePool", "MaxPool", "LpPool", "QLinearAveragePool"}
RECURRENT = {"RNN", "GRU", "LSTM", "DynamicQuantizeLSTM"}


def _shape(values, name) -> tuple[Dim, ...] | None:
    v = values.get(name) if name else None
    return v.shape if isinstance(v, Tensor) else None


def _prod(ds: Sequence[Dim]) -> Dim:
    return numel(ds)


def _matmul(node, ins, outs, attrs) -> Dim | None:
    a, y = ins[0], outs[0]
    if node.op_type == "MatMulNBits":  # B is packed: K is an attribute
        return None if y is None else dims.mul(2 * attrs["K"], numel(y))
    if a is None or y is None or not a:
        return None
    k = a[-2] if attrs.get("transA") and len(a) >= 2 else a[-1]  # FusedMatMul may transpose A
    return dims.mul(2, dims.mul(numel(y), k))


def _gemm(_node, ins, outs, attrs) -> Dim | None:
    a, y = ins[0], outs[0]
    if a is None or y is None or len(a) != 2:
        return None
    k = a[0] if attrs.get("transA", 0) else a[1]
    return dims.mul(2, dims.mul(numel(y), k))


def _conv(node, ins, outs, _attrs) -> Dim | None:
    w = ins[3] if node.op_type == "QLinearConv" else ins[1]
    if node.op_type == "ConvTranspose":
        x = ins[0]
        return None if x is None or w is None else dims.mul(2, dims.mul(numel(x), _prod(w[1:])))
    y = outs[0]
    return None if y is None or w is None else dims.mul(2, dims.mul(numel(y), _prod(w[1:])))


def _attention(node, ins, outs, _attrs) -> Dim | None:
    y = outs[0]
    if y is None:
        return None
    present = outs[1] if len(outs) > 1 else None
    if node.op_type == "Attention" and node.domain == "com.microsoft":
        x, w = ins[0], ins[1]
        if x is None or w is None:
            return None
        length = present[-2] if present else (x[1] if len(x) == 3 else None)
        if length is None:
            return None
        return dims.add(dims.mul(2, dims.mul(numel(x), w[-1])), dims.mul(4, dims.mul(length, numel(y))))
    q, k = ins[0], ins[1] if len(ins) > 1 else None
    if present:
        length = present[-2]
    elif k is not None and len(k) in (3, 4):
        length = k[-2] if len(k) == 4 else k[1]
    else:
        return None
    if q is None:
        return None
    return dims.mul(2, dims.mul(length, dims.add(numel(q), numel(y))))


def _recurrent(_node, ins, _outs, _attrs) -> Dim | None:
    x, w, r = ins[0], ins[1], ins[2]
    if x is None or w is None or r is None or len(x) != 3:
        return None
    return dims.mul(2, dims.mul(dims.mul(x[0], x[1]), dims.add(numel(w), numel(r))))


def _lrn(_node, _ins, outs, attrs) -> Dim | None:
    return None if outs[0] is None else dims.mul(attrs.get("size", 1), numel(outs[0]))


def _pool(_node, _ins, outs, attrs) -> Dim | None:
    y, kernel = outs[0], attrs.get("kernel_shape")
    return None if y is None or not kernel else dims.mul(numel(y), _prod(kernel))


def _per_output(_node, _ins, outs, _attrs) -> Dim | None:
    return None if outs[0] is None else numel(outs[0])


def _per_input(factor: int):
    def count(_node, ins, _outs, _attrs) -> Dim | None:
        return None if ins[0] is None else dims.mul(factor, numel(ins[0]))
    return count


def _family(node) -> tuple[str, Callable] | None:
    op, domain = node.op_type, node.domain
    if domain not in ("", "ai.onnx", "com.microsoft"):
        return None
    if op in MATMUL:
        return "matmul", _matmul
    if op in ("Gemm", "QGemm"):
        return "matmul", _gemm
    if op in CONV or op == "ConvTranspose":
        return "conv", _conv
    if op in ATTENTION:
        return "attention", _attention
    if op in POOL:
        return "pool", _pool
    if op in RECURRENT:
        return "recurrent", _recurrent
    if op == "LRN":
        return "elementwise", _lrn
    if op in ELEMENTWISE:
        return "elementwise", _per_output
    if op in REDUCTION:
        return "reduction", _per_input(1)
    if op in SOFTMAX:
        return "softmax", _per_input(5)
    if op == "BatchNormalization":
        return "normalization", _per_input(2)
    if op == "EmbedLayerNormalization":  # input 0 holds token ids: count the embeddings
        return "normalization", lambda _node, _ins, outs, _attrs: None if outs[0] is None else dims.mul(5, numel(outs[0]))
    if op in NORMALIZATION:
        return "normalization", _per_input(5)
    if op in MOVEMENT:
        return "movement", lambda *_: 0
    return None


def node_flops(node, values: dict[str, object]) -> tuple[str | None, Dim | None]:
    """``(family, flops)`` of a node; ``(None, None)`` when it is not counted."""
    fam = _family(node)
    if fam is None:
        return None, None
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute
             if a.type in (a.INT, a.INTS, a.FLOAT)}
    ins = [_shape(values, n) for n in node.input]
    outs = [_shape(values, n) for n in node.output] or [None]
    return fam[0], fam[1](node, ins, outs, attrs)
