"""The ai.onnx.ml operators against onnxruntime's CPU kernels."""


import numpy as np
import pytest
from helpers import ML, model
from onnx import TensorProto as T
from onnx import helper
from oracle import check, fresh_of, run_ort

import onnxsym
from onnxsym import dims
from onnxsym.inference.values import Opaque

pytest.importorskip("onnxruntime")
rng = np.random.default_rng(5)
N = dims.sym("n")


def ml(op, ins, outs, **kw):
    return helper.make_node(op, ins, outs, domain="ai.onnx.ml", **kw)


def batches(shape_of, dtype=np.float32, sizes=(1, 4)):
    """Cases feeding ``x`` of shape ``shape_of(n)`` for a few n."""
    return [({"n": n}, {"x": rng.random(shape_of(n)).astype(dtype)}) for n in sizes]


def test_same_shape_ops():
    nodes = [ml("Binarizer", ["x"], ["b"], threshold=0.5), ml("Imputer", ["x"], ["i"], imputed_value_floats=[0.0]),
             ml("Normalizer", ["x"], ["no"], norm="L1"), ml("Scaler", ["x"], ["s"], scale=[2.0], offset=[1.0])]
    m = model(nodes, [("x", T.FLOAT, ["n", 3])], ["b", "i", "no", "s"], opsets=[ML], ir=10)
    assert not check(m, batches(lambda n: (n, 3))).unresolved()


@pytest.mark.parametrize("xshape", [["n", 5], [5], ["n", 2, 5]])
def test_array_feature_extractor(xshape):
    m = model([ml("ArrayFeatureExtractor", ["x", "i"], ["y"])], [("x", T.FLOAT, xshape), ("i", T.INT64, [2, 2])], ["y"],
              opsets=[ML], ir=10)
    cases = [({"n": n}, {"x": rng.random([n if d == "n" else d for d in xshape]).astype(np.float32),
                         "i": rng.integers(0, 5, (2, 2))}) for n in (1, 3)]
    assert check(m, cases).shape("y")[-1] == 4


def test_category_mapper_and_label_encoders():
    nodes = [ml("CategoryMapper", ["s"], ["to_int"], cats_strings=["a", "b"], cats_int64s=[1, 2]),
             ml("CategoryMapper", ["to_int"], ["to_str"], cats_strings=["a", "b"], cats_int64s=[1, 2])]
    m = model(nodes, [("s", T.STRING, ["n", 2])], ["to_int", "to_str"], opsets=[ML], ir=10)
    res = check(m, [({"n": n}, {"s": rng.choice(np.array(["a", "b", "c"], dtype=object), (n, 2))}) for n in (1, 3)])
    assert res.values["to_int"].dtype == T.INT64 and res.values["to_str"].dtype == T.STRING

    for ml_opset, kw, dtype in ((1, dict(classes_strings=["a", "b"]), T.INT64),
                                (2, dict(keys_strings=["a", "b"], values_floats=[1.0, 2.0]), T.FLOAT),
                                (4, dict(keys_strings=["a", "b"],
                                         values_tensor=helper.make_tensor("v", T.INT64, [2], [3, 4]),
                                         default_tensor=helper.make_tensor("d", T.INT64, [1], [0])), T.INT64)):
        m = model([ml("LabelEncoder", ["s"], ["y"], **kw)], [("s", T.STRING, ["n", 2])], ["y"],
                  opsets=[("ai.onnx.ml", ml_opset)], ir=10)
        res = check(m, [({"n": n}, {"s": rng.choice(np.array(["a", "b"], dtype=object), (n, 2))}) for n in (1, 3)])
        assert res.values["y"].dtype == dtype


@pytest.mark.parametrize("xshape", [["n", 3], [3]])
def test_regressors(xshape):
    tree = dict(nodes_treeids=[0], nodes_nodeids=[0], nodes_featureids=[0], nodes_values=[0.0], nodes_modes=["LEAF"],
                nodes_truenodeids=[0], nodes_falsenodeids=[0])
    nodes = [ml("LinearRegressor", ["x"], ["lr"], coefficients=[1.0] * 6, targets=2),
             ml("SVMRegressor", ["x"], ["svr"], coefficients=[1.0, 1.0], support_vectors=[0.5] * 6, rho=[0.0],
                n_supports=2, kernel_type="RBF", kernel_params=[0.1, 0.0, 3.0]),
             ml("TreeEnsembleRegressor", ["x"], ["ter"], target_treeids=[0], target_nodeids=[0], target_ids=[0],
                target_weights=[1.0], n_targets=3, **tree),
             ml("OneHotEncoder", ["x"], ["ohe"], cats_int64s=[0, 1, 2, 3])]
    if len(xshape) == 1:
        del nodes[2]  # onnxruntime's type check wants a 2-D input for TreeEnsembleRegressor
    m = model(nodes, [("x", T.FLOAT, xshape)], [n.output[0] for n in nodes], opsets=[ML], ir=10)
    res = check(m, batches(lambda n: [n if d == "n" else d for d in xshape]))
    assert res.shape("lr")[1] == 2 and not res.unresolved()


def test_tree_ensemble_v5():
    nodes = [ml("TreeEnsemble", ["x"], ["y"], n_targets=2, aggregate_function=1, post_transform=0, tree_roots=[0],
                nodes_splits=helper.make_tensor("s", T.FLOAT, [1], [0.5]), nodes_featureids=[0],
                nodes_modes=helper.make_tensor("m", T.UINT8, [1], [0]),
                nodes_truenodeids=[0], nodes_trueleafs=[1], nodes_falsenodeids=[1], nodes_falseleafs=[1],
                leaf_targetids=[0, 1], leaf_weights=helper.make_tensor("w", T.FLOAT, [2], [1.0, 2.0]))]
    m = model(nodes, [("x", T.FLOAT, ["n", 3])], ["y"], opsets=[("ai.onnx.ml", 5)], ir=10)
    assert check(m, batches(lambda n: (n, 3))).shape("y") == (N, 2)


@pytest.mark.parametrize("classes", [1, 2, 3])
@pytest.mark.parametrize("labels", ["ints", "strings"])
def test_linear_and_tree_classifiers(classes, labels):
    names = [f"c{i}" for i in range(max(classes, 2))]
    lab = {"classlabels_ints": list(range(len(names)))} if labels == "ints" else {"classlabels_strings": names}
    # (onnxruntime 1.32 aborts on a tree classifier with a single string label)
    tlab = {"classlabels_int64s": list(range(classes))} if labels == "ints" or classes == 1 else \
        {"classlabels_strings": names[:classes]}
    tree = dict(nodes_treeids=[0], nodes_nodeids=[0], nodes_featureids=[0], nodes_values=[0.0], nodes_modes=["LEAF"],
                nodes_truenodeids=[0], nodes_falsenodeids=[0], class_treeids=[0], class_nodeids=[0], class_ids=[0],
                class_weights=[1.0])
    nodes = [ml("LinearClassifier", ["x"], ["l", "ls"], coefficients=[1.0] * 3 * classes, intercepts=[0.0] * classes,
                **lab),
             ml("TreeEnsembleClassifier", ["x"], ["t", "ts"], **tree, **tlab)]
    m = model(nodes, [("x", T.FLOAT, ["n", 3])], ["l", "ls", "t", "ts"], opsets=[ML], ir=10)
    res = check(m, batches(lambda n: (n, 3)))
    assert res.shape("l") == (N,) and not res.unresolved()


@pytest.mark.parametrize("k,proba", [(2, False), (3, False), (4, False), (4, True), (5, False)])
def test_svm_classifier(k, proba):
    pairs = k * (k - 1) // 2
    kw = dict(classlabels_ints=list(range(k)), vectors_per_class=[1] * k, support_vectors=list(rng.random(3 * k)),
              coefficients=list(rng.random((k - 1) * k)), rho=[0.1] * pairs, kernel_type="RBF",
              kernel_params=[0.1, 0.0, 3.0])
    if proba:
        kw.update(prob_a=[1.0] * pairs, prob_b=[0.0] * pairs)
    nodes = [ml("SVMClassifier", ["x"], ["y", "z"], **kw),
             ml("SVMClassifier", ["x"], ["y1", "z1"], classlabels_ints=list(range(k)),
                coefficients=list(rng.random(3 * k)),
                rho=[0.1] * k, kernel_type="LINEAR", kernel_params=[0.1, 0.0, 3.0])]
    m = model(nodes, [("x", T.FLOAT, ["n", 3])], ["y", "z", "y1", "z1"], opsets=[ML], ir=10)
    assert not check(m, batches(lambda n: (n, 3))).unresolved()


def test_feature_vectorizer():
    m = model([ml("FeatureVectorizer", ["x", "w"], ["y"], inputdimensions=[3, 2])],
              [("x", T.FLOAT, ["n", 3]), ("w", T.FLOAT, ["n", 2])], ["y"], opsets=[ML], ir=10)
    res = check(m, [({"n": n}, {"x": rng.random((n, 3)).astype(np.float32),
                                  "w": rng.random((n, 2)).astype(np.float32)}) for n in (1, 4)])
    assert res.shape("y") == (N, 5)


def _map_model(nodes, key, value, outputs):
    inp = helper.make_value_info("m", helper.make_map_type_proto(key, helper.make_tensor_type_proto(value, None)))
    return model(nodes, [inp], outputs, opsets=[ML], ir=10)


def test_dict_vectorizer_and_cast_map():
    m = _map_model([ml("DictVectorizer", ["m"], ["y"], int64_vocabulary=[1, 2, 3, 7]),
                    ml("CastMap", ["m"], ["dense"]),
                    ml("CastMap", ["m"], ["sparse"], map_form="SPARSE", max_map=9, cast_to="TO_INT64")],
                   T.INT64, T.FLOAT, ["y", "dense", "sparse"])
    res = check(m, [({}, {"m": {1: 1.0, 7: 2.0}}), ({}, {"m": {2: 3.0}})], fresh_ok=["dense"])
    assert res.shape("y") == (1, 4) and res.values["y"].dtype == T.FLOAT
    assert res.shape("sparse") == (1, 9) and fresh_of(res, "dense", 1)


def test_zip_map_is_not_a_tensor():
    m = model([ml("ZipMap", ["x"], ["z"], classlabels_int64s=[0, 1, 2])], [("x", T.FLOAT, ["n", 3])], ["z"],
              opsets=[ML], ir=10)
    out = run_ort(m, {"x": rng.random((2, 3)).astype(np.float32)})["z"]
    assert isinstance(out, list) and len(out) == 2  # a sequence of maps
    res = onnxsym.infer(m)
    assert isinstance(res.values["z"], Opaque) and not res.unresolved()
