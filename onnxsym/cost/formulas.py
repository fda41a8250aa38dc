"""The cost formulas (FLOPs) an op registers with its rule (see :mod:`onnxsym.registry`).

A multiply-add counts 2. A formula is a :class:`Flops`: the family it counts in, its text
for the docs, and ``count(node, ins, outs, attrs)`` over the node's input and output shapes
(None where unknown) and its int and float attributes, giving an expression over the input
symbols, or None where the shapes do not tell. An op without a formula is not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import dims
from ..dims import Dim
from .sizes import numel

Shape = Sequence[Dim] | None
Count = Callable[[Any, Sequence[Shape], Sequence[Shape], dict[str, Any]], Dim | None]


@dataclass(frozen=True)
class Flops:
    family: str
    text: str
    count: Count


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
        return None if x is None or w is None else dims.mul(2, dims.mul(numel(x), numel(w[1:])))
    y = outs[0]
    return None if y is None or w is None else dims.mul(2, dims.mul(numel(y), numel(w[1:])))


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
    return None if y is None or not kernel else dims.mul(numel(y), numel(kernel))


def _per_output(factor: int) -> Count:
    def count(_node, _ins, outs, _attrs) -> Dim | None:
        return None if outs[0] is None else dims.mul(factor, numel(outs[0]))
    return count


def _per_input(factor: int) -> Count:
    def count(_node, ins, _outs, _attrs) -> Dim | None:
        return None if ins[0] is None else dims.mul(factor, numel(ins[0]))
    return count


MATMUL = Flops("matmul", "2*numel(Y)*K (MatMulNBits: K from its attribute)", _matmul)
GEMM = Flops("matmul", "2*M*N*K (bias and scaling not counted)", _gemm)
CONV = Flops("conv", "2*numel(Y)*(C/group)*prod(kernel); ConvTranspose 2*numel(X)*(M/group)*prod(kernel)", _conv)
ATTENTION = Flops("attention", "2*L*(numel(Q) + numel(Y)), L the key length (com.microsoft Attention: "
                  "plus its QKV projection)", _attention)
POOL = Flops("pool", "numel(Y)*prod(kernel)", _pool)
RECURRENT = Flops("recurrent", "2*seq*batch*(numel(W) + numel(R))", _recurrent)
LRN = Flops("elementwise", "size*numel(Y)", _lrn)
ELEMENTWISE = Flops("elementwise", "numel(Y)", _per_output(1))
REDUCTION = Flops("reduction", "numel(X)", _per_input(1))
SOFTMAX = Flops("softmax", "5*numel(X) (max, subtract, exp, sum, divide)", _per_input(5))
NORMALIZATION = Flops("normalization", "5*numel(X)", _per_input(5))
BATCH_NORMALIZATION = Flops("normalization", "2*numel(X) (a scale and a shift)", _per_input(2))
# input 0 holds token ids: the embeddings are counted
EMBED_NORMALIZATION = Flops("normalization", "5*numel(Y)", _per_output(5))
MOVEMENT = Flops("movement", "0", lambda *_: 0)
