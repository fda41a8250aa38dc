"""String ops: StringConcat, RegexFullMatch, StringNormalizer, StringSplit,
TfIdfVectorizer."""

from __future__ import annotations

from onnxsym import dims
from onnxsym.domain.needs import BROADCAST
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Tensor
from onnxsym.registry import Outputs, register
from onnxsym.semantics.shapes import broadcast_shapes

from .common import BOOL, F32, I64, STRING, arg, count, same_shape, static_bound


@register("StringConcat", conditions=[BROADCAST])
def string_concat(node: Node) -> Outputs:
    a, b = arg(node, 0), arg(node, 1)
    shapes = [shape_of(t, STRING, why="an input's rank unknown") for t in (a, b)]
    return [Tensor(STRING, broadcast_shapes(shapes, lambda axis, why: node.fresh(why, 0, axis), node.require_equal))]


@register("RegexFullMatch", conditions=())
def regex_full_match(node: Node) -> Outputs:
    return [same_shape(arg(node, 0), BOOL)]


@register("StringNormalizer", conditions=())
def string_normalizer(node: Node) -> Outputs:
    x = arg(node, 0)  # [C] or [1, C]
    if x.shape is None or not x.shape:
        return [Tensor(STRING, x.shape)]
    if not node.attr_strs("stopwords"):
        return [Tensor(STRING, x.shape)]
    c = x.shape[-1]
    # stop words are dropped; if every element is, one empty string is left
    lo = 1 if dims.try_le(1, c) is True else 0
    kept = count(node, "number of strings left after removing stop words", 0, len(x.shape) - 1,
                 max(static_bound(c), 1), lo)
    return [Tensor(STRING, tuple(x.shape[:-1]) + (kept,))]


@register("StringSplit", conditions=())
def string_split(node: Node) -> Outputs:
    x = arg(node, 0)
    shape = shape_of(x, STRING, I64)
    maxsplit = node.attr_int("maxsplit")
    hi = dims.INT64_MAX if maxsplit is None else maxsplit + 1
    # the last axis holds as many substrings as the longest split of any element
    k = count(node, "largest number of substrings of StringSplit", 0, len(shape), hi)
    return [Tensor(STRING, tuple(shape) + (k,)), Tensor(I64, shape)]


@register("TfIdfVectorizer", conditions=())
def tfidf_vectorizer(node: Node) -> Outputs:
    x = arg(node, 0)  # [C] or [N, C]
    width = max(node.attr_ints("ngram_indexes", [-1])) + 1
    return [Tensor(F32, tuple(shape_of(x, F32)[:-1]) + (width,))]
