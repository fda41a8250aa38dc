"""String ops against onnxruntime."""


import numpy as np
import pytest
from helpers import model
from onnx import TensorProto as T
from onnx import helper
from oracle import check, fresh_of

from onnxsym import dims

pytest.importorskip("onnxruntime")
node = helper.make_node
WORDS = np.array(["a b", "", "c  d e", "f", "g h i j", "k"], dtype=object)


def _strings(shape, seed=0):
    return np.random.default_rng(seed).choice(WORDS, shape)


def test_concat_regex_split():
    nodes = [node("StringConcat", ["x", "y"], ["c"]), node("RegexFullMatch", ["x"], ["r"], pattern="[a-c].*"),
             node("StringSplit", ["x"], ["s", "k"]), node("StringSplit", ["x"], ["s1", "k1"], maxsplit=1),
             node("StringSplit", ["x"], ["s2", "k2"], delimiter=" ")]
    outs = [o for n in nodes for o in n.output]
    m = model(nodes, [("x", T.STRING, ["n", 1]), ("y", T.STRING, ["m"])], outs, opset=20, ir=10)
    cases = [({"n": n, "m": k}, {"x": _strings((n, 1), n), "y": _strings(k, k)}) for n, k in ((1, 1), (4, 3), (6, 2))]
    res = check(m, cases, fresh_ok=["s", "s1", "s2"])
    assert res.shape("c") == (dims.sym("n"), dims.sym("m"))
    assert fresh_of(res, "s1", 2)[0].hi == 2 and res.shape("k") == (dims.sym("n"), 1)


@pytest.mark.parametrize("shape", [["n"], [1, "n"]])
def test_string_normalizer(shape):
    nodes = [node("StringNormalizer", ["x"], ["y"], stopwords=["f", "k"], locale="C"),
             node("StringNormalizer", ["x"], ["z"], case_change_action="UPPER", locale="C")]
    m = model(nodes, [("x", T.STRING, shape)], ["y", "z"], opset=10, ir=10)
    cases = []
    for n, words in ((3, ["a", "f", "b"]), (2, ["f", "k"]), (1, ["q"])):
        x = np.array(words, dtype=object).reshape([1, n] if len(shape) == 2 else [n])
        cases.append(({"n": n}, {"x": x}))
    res = check(m, cases, fresh_ok=["y"])
    assert res.shape("z") == tuple(dims.sym(d) if isinstance(d, str) else d for d in shape)
    assert fresh_of(res, "y", len(shape) - 1)[0].lo == 1


@pytest.mark.parametrize("shape", [["n"], ["b", "n"]])
def test_tfidf_vectorizer(shape):
    kw = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 3],
              ngram_indexes=[0, 1, 2, 4], pool_int64s=[1, 2, 3, 1, 2])
    m = model([node("TfIdfVectorizer", ["x"], ["y"], **kw)], [("x", T.INT64, shape)], ["y"], opset=9, ir=10)
    rng = np.random.default_rng(3)
    cases = [({"n": n, "b": b}, {"x": rng.integers(0, 4, [b, n][-len(shape):])}) for n, b in ((3, 1), (6, 2))]
    res = check(m, cases)
    assert res.shape("y")[-1] == 5 and not res.unresolved()
