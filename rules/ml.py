"""The ai.onnx.ml operators (classical machine learning).

Most take a batch ``X`` of shape [N, C] (a 1-D ``X`` is one sample, [1, C]) and
return one row per sample; labels are [N], scores [N, E]. Where the spec leaves
a width to the runtime, the width onnxruntime computes is used."""

from __future__ import annotations

from collections.abc import Iterator

from onnxsym.domain.needs import Raw, Site, index_range
from onnxsym.inference.node import Node, shape_of
from onnxsym.inference.values import Opaque, Tensor, tensor_from_array
from onnxsym.registry import Condition, Outputs, register
from onnxsym.semantics.shapes import prod

from .common import F32, I64, STRING, arg, same_shape

ML = "ai.onnx.ml"


def _batch(node, x):
    """N of a batch ``x``: a 1-D input is a single sample."""
    if x.shape is None or len(x.shape) > 2:
        return node.fresh("batch of an input of unknown or unexpected rank", 0, 0)
    return 1 if len(x.shape) <= 1 else x.shape[0]


def _rows(node, width, dtype=F32):
    return Tensor(dtype, (_batch(node, arg(node, 0)), width))


def _labels(node, dtype):
    return Tensor(dtype, (_batch(node, arg(node, 0)),))


def _label_type(node, strings="classlabels_strings"):
    return STRING if node.attr_strs(strings) else I64


@register("Binarizer Imputer", domain=ML)
def same_type(node: Node) -> Outputs:
    return [same_shape(arg(node, 0))]


@register("Normalizer Scaler", domain=ML)
def float_same_shape(node: Node) -> Outputs:
    return [same_shape(arg(node, 0), F32)]


def _feature_indices(site: Site) -> Iterator[Raw]:
    """onnxruntime refuses a negative index as one past the last axis."""
    x = site.shape(0)
    b = site.elements.bounds(site.node.input[1]) if site.elements is not None and len(site.node.input) > 1 else None
    if x and b is not None:
        yield from index_range(site, x[-1], b, 1, "of X's last axis", negative=False)


FEATURE_INDICES = Condition("0 <= Y < X[-1] (where Y's elements are known: onnxruntime refuses a negative one)",
                            _feature_indices, replayable=True)


@register("ArrayFeatureExtractor", domain=ML,
          conditions=[FEATURE_INDICES, "Y has elements (onnxruntime refuses num_indices = 0)"])
def array_feature_extractor(node: Node) -> Outputs:
    x, idx = arg(node, 0), arg(node, 1)
    shape, indices = (shape_of(t, x.dtype, why="input or indices rank unknown") for t in (x, idx))
    node.require_at_least(prod(indices), 1, "ArrayFeatureExtractor: Y has elements (onnxruntime refuses none)")
    lead = tuple(shape[:-1]) if len(shape) > 1 else (1,)  # a 1-D input is one row
    return [Tensor(x.dtype, lead + (prod(indices),))]


@register("CategoryMapper", domain=ML)
def category_mapper(node: Node) -> Outputs:
    x = arg(node, 0)
    return [same_shape(x, I64 if x.dtype == STRING else STRING)]


@register("LabelEncoder", domain=ML, since=1)
def label_encoder_v1(node: Node) -> Outputs:
    x = arg(node, 0)
    return [same_shape(x, I64 if x.dtype == STRING else STRING)]


@register("LabelEncoder", domain=ML, since=2)
def label_encoder_v2(node: Node) -> Outputs:
    """The output type is that of whichever ``values_*`` attribute is set."""
    x = arg(node, 0)
    dtype = 0
    for attr, t in (("values_strings", STRING), ("values_int64s", I64), ("values_floats", F32)):
        if node.has_attr(attr):
            dtype = t
    values = node.attr_tensor("values_tensor")
    if values is not None:
        dtype = tensor_from_array(values).dtype
    return [same_shape(x, dtype)]


@register("OneHotEncoder", domain=ML)
def one_hot_encoder(node: Node) -> Outputs:
    x = arg(node, 0)
    cats = node.attr_ints("cats_int64s") or node.attr_strs("cats_strings") or []
    return [Tensor(F32, tuple(shape_of(x, F32)) + (len(cats),))]


@register("FeatureVectorizer", domain=ML)
def feature_vectorizer(node: Node) -> Outputs:
    return [_rows(node, sum(node.attr_ints("inputdimensions", [])))]


@register("LinearRegressor", domain=ML)
def linear_regressor(node: Node) -> Outputs:
    return [_rows(node, node.attr_int("targets", 1))]


@register("SVMRegressor", domain=ML)
def svm_regressor(node: Node) -> Outputs:
    return [_rows(node, 1)]


@register("TreeEnsembleRegressor", domain=ML)
def tree_ensemble_regressor(node: Node) -> Outputs:
    return [_rows(node, node.attr_int("n_targets", 1))]


@register("TreeEnsemble", domain=ML)
def tree_ensemble(node: Node) -> Outputs:
    return [_rows(node, node.attr_int("n_targets"), arg(node, 0).dtype)]


@register("LinearClassifier", domain=ML)
def linear_classifier(node: Node) -> Outputs:
    # one intercept means a binary classifier, which reports both classes' scores
    classes = len(node.attr_floats("intercepts", []))
    return [_labels(node, _label_type(node)), _rows(node, 2 if classes == 1 else classes)]


@register("SVMClassifier", domain=ML)
def svm_classifier(node: Node) -> Outputs:
    k = len(node.attr_ints("classlabels_ints") or node.attr_strs("classlabels_strings") or [])
    width = k
    if node.attr_ints("vectors_per_class") and not node.attr_floats("prob_a") and k > 2:
        width = k * (k - 1) // 2  # one score per pair of classes (one-vs-one votes)
    return [_labels(node, _label_type(node)), _rows(node, width)]


@register("TreeEnsembleClassifier", domain=ML)
def tree_ensemble_classifier(node: Node) -> Outputs:
    k = len(node.attr_ints("classlabels_int64s") or node.attr_strs("classlabels_strings") or [])
    return [_labels(node, _label_type(node)), _rows(node, k)]


@register("DictVectorizer", domain=ML)
def dict_vectorizer(node: Node) -> Outputs:
    vocab = node.attr_strs("string_vocabulary") or node.attr_ints("int64_vocabulary") or []
    m = node.input(0)
    return [Tensor(m.map_value_dtype if isinstance(m, Opaque) else 0, (1, len(vocab)))]


@register("CastMap", domain=ML)
def cast_map(node: Node) -> Outputs:
    dtype = {"TO_FLOAT": F32, "TO_STRING": STRING, "TO_INT64": I64}[node.attr_str("cast_to", "TO_FLOAT")]
    if node.attr_str("map_form", "DENSE") == "SPARSE":
        return [Tensor(dtype, (1, node.attr_int("max_map", 1)))]
    return [Tensor(dtype, (1, node.fresh("number of entries of the map", 0, 1)))]


@register("ZipMap", domain=ML)
def zip_map(_node: Node) -> Outputs:
    return [Opaque()]  # a sequence of maps: no tensor shape to infer
