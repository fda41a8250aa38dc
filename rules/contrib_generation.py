"""onnxruntime's generation loops (BeamSearch, GreedySearch, Sampling): the generated
sequences are padded to max_length, a tensor input."""

from __future__ import annotations

from onnxsym.inference.values import Tensor
from onnxsym.registry import register

from .common import F32, I32, arg, rank, scalar, unknown_ranks
from .contrib_common import MS


def _count(node, i, what, output, axis):
    v = scalar(node, i)
    return v if v is not None else node.fresh(f"{what} is a tensor input whose value is unknown", output, axis)


@register("BeamSearch WhisperBeamSearch", domain=MS)
def beam_search(node):
    """sequences (batch, num_return_sequences, max_length); sequences_scores (batch,
    num_return_sequences); the per-step scores have as many rows as steps taken (data)."""
    ids = arg(node, 0)
    if rank(ids, 2, 3) is None:
        return unknown_ranks(node, "input_ids rank unknown", I32, F32, F32)
    batch = ids.shape[0]
    n_ret = _count(node, 4, "num_return_sequences", 0, 1)
    length = _count(node, 1, "max_length", 0, 2)
    outs = [Tensor(I32, (batch, n_ret, length)), Tensor(F32, (batch, n_ret)),
            node.unknown_rank("the number of steps taken is data", 2, F32)]
    return outs[:max(node.num_outputs, 1)]


@register("GreedySearch Sampling", domain=MS)
def greedy_search(node):
    """sequences (batch, max_length); Sampling's filtered_logits (batch, vocab)."""
    ids = arg(node, 0)
    if rank(ids, 2) is None:
        return unknown_ranks(node, "input_ids rank unknown", I32, F32)
    outs = [Tensor(I32, (ids.shape[0], _count(node, 1, "max_length", 0, 1))),
            node.unknown_rank("filtered_logits is not modelled", 1, F32)]
    return outs[:max(node.num_outputs, 1)]
