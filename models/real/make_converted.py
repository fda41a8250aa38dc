"""Models converted here by real converters: skl2onnx, onnxmltools, tf2onnx and
onnxruntime's quantizer, each on a small model trained or built in this file
(random data, fixed seeds). Used by make_real.py."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import onnx
from corpus import entry, slim

MAKERS = []
ROWS = [{"N": 1}, {"N": 7}]


def maker(fn):
    MAKERS.append(fn)
    return fn


def _version(mod):
    return __import__(mod).__version__


def _sk_source(script_part, converter="skl2onnx"):
    import sklearn

    return {"kind": "converter", "converter": converter, "version": _version(converter),
            "trained with": f"scikit-learn {sklearn.__version__}", "script": f"models/real/make_converted.py:{script_part}"}


def _data(n=64, k=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int64)
    return x, y


@maker
def sklearn_models():
    from skl2onnx import to_onnx
    from sklearn.cluster import KMeans
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, SVR

    x, y = _data()
    models = {
        "sk_scaler_logreg": make_pipeline(StandardScaler(), LogisticRegression()),
        "sk_random_forest": RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0),
        "sk_gbr": GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0),
        "sk_svc": SVC(probability=True, random_state=0),
        "sk_svr": SVR(),
        "sk_kmeans": KMeans(n_clusters=3, n_init=2, random_state=0),
    }
    for name, est in models.items():
        est.fit(x, y.astype(np.float32) if name in ("sk_gbr", "sk_svr") else y)
        m = to_onnx(est, x[:1], target_opset={"": 17, "ai.onnx.ml": 3})
        (inp,) = m.graph.input
        yield m, entry(name, "sklearn/onnxmltools", _sk_source("sklearn_models"), {inp.name: ["N", 4]}, ROWS)


@maker
def sklearn_column_transformer():
    import pandas as pd
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType, StringTensorType
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(1)
    cats = np.array(["red", "green", "blue"])
    df = pd.DataFrame({"num": rng.standard_normal(60).astype(np.float32),
                       "num2": rng.standard_normal(60).astype(np.float32),
                       "color": rng.choice(cats, 60)})
    y = (df["num"] > 0).astype(np.int64)
    pipe = Pipeline([("prep", ColumnTransformer([("scale", StandardScaler(), ["num", "num2"]),
                                                  ("onehot", OneHotEncoder(handle_unknown="ignore"), ["color"])])),
                     ("clf", LogisticRegression())])
    pipe.fit(df, y)
    types = [("num", FloatTensorType([None, 1])), ("num2", FloatTensorType([None, 1])),
             ("color", StringTensorType([None, 1]))]
    m = convert_sklearn(pipe, initial_types=types, target_opset={"": 17, "ai.onnx.ml": 3})
    yield m, entry("sk_column_transformer", "sklearn/onnxmltools", _sk_source("sklearn_column_transformer"),
                   {"num": ["N", 1], "num2": ["N", 1], "color": ["N", 1]}, ROWS,
                   feeds={"color": {"strings": ["red", "green", "blue"]}})


@maker
def onnxmltools_models():
    import lightgbm
    import xgboost
    from onnxmltools import convert_lightgbm, convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    x, y = _data(200)
    lgb = lightgbm.LGBMClassifier(n_estimators=5, num_leaves=4, verbose=-1).fit(x, y)
    m = convert_lightgbm(lgb, initial_types=[("X", FloatTensorType([None, 4]))], target_opset=15,
                         zipmap=False)
    src = _sk_source("onnxmltools_models", "onnxmltools")
    src["trained with"] = f"lightgbm {lightgbm.__version__}"
    yield m, entry("lgbm_classifier", "sklearn/onnxmltools", src, {"X": ["N", 4]}, ROWS)
    xgb = xgboost.XGBRegressor(n_estimators=5, max_depth=2).fit(x, y.astype(np.float32))
    m = convert_xgboost(xgb, initial_types=[("X", FloatTensorType([None, 4]))], target_opset=15)
    src = dict(src, **{"trained with": f"xgboost {xgboost.__version__}"})
    yield m, entry("xgb_regressor", "sklearn/onnxmltools", src, {"X": ["N", 4]}, ROWS)


@maker
def sklearn_neighbors_and_scan():
    """KNeighborsClassifier (TopK over distances, ArrayFeatureExtractor of labels: onnxruntime's
    tool and onnx-shape-inference write wrong dims there) and GaussianProcessRegressor (its
    kernel as a Scan over the rows)."""
    from skl2onnx import to_onnx
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.neighbors import KNeighborsClassifier

    x, y = _data()
    made = {"sk_knn_classifier": (KNeighborsClassifier(3).fit(x, y), {"zipmap": False}),
            "sk_gaussian_process": (GaussianProcessRegressor().fit(x, y.astype(np.float32)), None)}
    for name, (est, options) in made.items():
        m = to_onnx(est, x[:1], target_opset={"": 17, "ai.onnx.ml": 3}, options=options)
        (inp,) = m.graph.input
        yield m, entry(name, "sklearn/onnxmltools", _sk_source("sklearn_neighbors_and_scan"), {inp.name: ["N", 4]},
                       ROWS)


@maker
def sklearn_text():
    """Text pipelines: TfidfVectorizer (bigrams) + LogisticRegression, CountVectorizer +
    MultinomialNB, on a string column; StringNormalizer's locale set to "C" (the default
    en_US.UTF-8 is not on every machine, and onnxruntime then refuses the model)."""
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import StringTensorType
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    docs = ["the cat sat on the mat", "dogs and cats are pets", "the quick brown fox", "a fox jumps over the dog",
            "cats chase mice", "mice eat cheese", "the dog barks", "pets need food"] * 4
    y = np.array([0, 1] * 16)
    made = {"sk_tfidf_logreg": (make_pipeline(TfidfVectorizer(ngram_range=(1, 2)), LogisticRegression()),
                                {TfidfVectorizer: {"locale": "C"}, LogisticRegression: {"zipmap": False}}),
            "sk_count_naive_bayes": (make_pipeline(CountVectorizer(), MultinomialNB()),
                                     {CountVectorizer: {"locale": "C"}})}
    feeds = {"text": {"strings": TEXTS}}
    for name, (pipe, options) in made.items():
        pipe.fit(docs, y)
        m = convert_sklearn(pipe, initial_types=[("text", StringTensorType([None, 1]))],
                            target_opset={"": 17, "ai.onnx.ml": 3}, options=options)
        yield m, entry(name, "sklearn/onnxmltools", _sk_source("sklearn_text"), {"text": ["N", 1]}, ROWS,
                       feeds=feeds, note="the token count per row is data (Tokenizer): unresolved by every tool")


TEXTS = ["the cat sat on the mat", "dogs and cats", "fox", "a fox jumps over the lazy dog"]


@maker
def catboost_models():
    """CatBoost's own ONNX exporter (not onnxmltools)."""
    import catboost

    x, y = _data(100)
    tmp = tempfile.mkdtemp()
    for name, est, target in (("catboost_classifier", catboost.CatBoostClassifier, y),
                              ("catboost_regressor", catboost.CatBoostRegressor, x[:, 1])):
        path = os.path.join(tmp, name + ".onnx")
        fitted = est(iterations=5, depth=3, verbose=0, random_seed=0, train_dir=tmp).fit(x, target)
        fitted.save_model(path, format="onnx")
        src = {"kind": "converter", "converter": "catboost", "version": catboost.__version__,
               "script": "models/real/make_converted.py:catboost_models"}
        yield onnx.load(path), entry(name, "sklearn/onnxmltools", src, {"features": ["N", 4]}, ROWS)


# ---------------------------------------------------------------- tf2onnx

def _tf_source(part):
    import tensorflow as tf

    return {"kind": "converter", "converter": "tf2onnx", "version": _version("tf2onnx"),
            "built with": f"tensorflow {tf.__version__}", "script": f"models/real/make_converted.py:{part}"}


def _tf_convert(fn, signature):
    import tf2onnx

    m, _ = tf2onnx.convert.from_function(fn, input_signature=signature, opset=17)
    return m


@maker
def tf_models():
    import tensorflow as tf

    tf.random.set_seed(0)
    keras = tf.keras
    cnn = keras.Sequential([
        keras.Input((None, None, 3)),
        keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu"),
        keras.layers.DepthwiseConv2D(3, strides=2, padding="same"),
        keras.layers.MaxPooling2D(2, padding="same"),
        keras.layers.Conv2D(16, 3, padding="valid"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(5),
    ])
    sig = [tf.TensorSpec([None, None, None, 3], tf.float32, name="image")]
    m = _tf_convert(tf.function(lambda x: cnn(x)), sig)
    (inp,) = m.graph.input
    yield m, entry("tf_cnn_same_stride2", "tf2onnx", _tf_source("tf_models"),
                   {inp.name: ["batch", "height", "width", 3]},
                   [{"batch": 1, "height": 32, "width": 24}, {"batch": 2, "height": 45, "width": 61}])
    for kind in ("LSTM", "GRU"):
        rnn = keras.Sequential([
            keras.Input((None,), dtype="int32"),
            keras.layers.Embedding(50, 8),
            getattr(keras.layers, kind)(12, return_sequences=True),
            getattr(keras.layers, kind)(6),
            keras.layers.Dense(3),
        ])
        sig = [tf.TensorSpec([None, None], tf.int32, name="tokens")]
        m = _tf_convert(tf.function(lambda x, rnn=rnn: rnn(x)), sig)
        (inp,) = m.graph.input
        yield m, entry(f"tf_{kind.lower()}_text", "tf2onnx", _tf_source("tf_models"),
                       {inp.name: ["batch", "seq"]}, [{"batch": 1, "seq": 7}, {"batch": 3, "seq": 12}],
                       feeds={inp.name: {"int": [0, 50]}})


@maker
def tf_masked_bilstm():
    """A masked bidirectional LSTM (Embedding(mask_zero) -> Bidirectional(LSTM)) with attention,
    pooling and upsampling after it: tf2onnx lowers the masked LSTM to a while Loop whose
    condition also tests the time step against the sequence length."""
    import tensorflow as tf

    tf.random.set_seed(0)
    layers = tf.keras.layers
    tok = tf.keras.Input((None,), dtype="int32")
    h = layers.Bidirectional(layers.LSTM(6, return_sequences=True))(layers.Embedding(50, 8, mask_zero=True)(tok))
    a = layers.Attention(use_scale=True)([h, h])
    t = layers.TimeDistributed(layers.Dense(5))(layers.RepeatVector(3)(layers.GlobalAveragePooling1D()(a)))
    outputs = [layers.Permute((2, 1))(t), layers.Reshape((-1, 3))(h),
               layers.UpSampling1D(2)(layers.MaxPooling1D(2, padding="same")(h))]
    net = tf.keras.Model(tok, outputs)
    sig = [tf.TensorSpec([None, None], tf.int32, name="tokens")]
    m = _tf_convert(tf.function(lambda x: net(x)), sig)
    yield m, entry("tf_keras_masked_bilstm", "tf2onnx", _tf_source("tf_masked_bilstm"), {"tokens": ["batch", "seq"]},
                   [{"batch": 1, "seq": 6}, {"batch": 3, "seq": 11}], feeds={"tokens": {"int": [1, 50]}})


@maker
def keras_applications():
    """Two keras.applications architectures with random weights and any image size:
    SAME padding at stride 2 on odd sizes, squeeze-excite, hard-swish, swish."""
    import tensorflow as tf
    import tf2onnx

    tf.random.set_seed(0)
    apps = tf.keras.applications
    nets = {"tf_mobilenet_v3_small": lambda: apps.MobileNetV3Small(input_shape=(None, None, 3), weights=None,
                                                                   classes=10),
            "tf_efficientnet_b0": lambda: apps.EfficientNetB0(input_shape=(None, None, 3), weights=None,
                                                              include_top=False, pooling="avg")}
    for name, make in nets.items():
        sig = [tf.TensorSpec([None, None, None, 3], tf.float32, name="image")]
        m, _ = tf2onnx.convert.from_keras(make(), input_signature=sig, opset=17)
        src = dict(_tf_source("keras_applications"), **{"slimmed": True})
        yield slim(m), entry(name, "tf2onnx", src, {"image": ["batch", "height", "width", 3]},
                             [{"batch": 1, "height": 224, "width": 224}, {"batch": 2, "height": 97, "width": 130}],
                             note="keras.applications, weights=None; slimmed")


@maker
def keras_layers():
    """Keras layers whose tf2onnx lowering computes shapes: Conv2DTranspose with SAME padding
    (pads split from a computed shape), UpSampling2D, ZeroPadding2D/Cropping2D; and
    MultiHeadAttention (Einsum lowered to Reshapes of ReduceProd of dims), causal dilated and
    strided Conv1D, GlobalMaxPooling1D."""
    import tensorflow as tf

    tf.random.set_seed(0)
    layers = tf.keras.layers
    x = tf.keras.Input((None, None, 3))
    a = layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    b = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(a)
    c = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(b)
    u = layers.Conv2DTranspose(16, 3, strides=2, padding="same")(c)
    y = layers.Conv2DTranspose(8, 4, strides=2, padding="same")(u)
    y = layers.Cropping2D(((1, 2), (0, 3)))(layers.ZeroPadding2D(((1, 2), (0, 3)))(y))
    y = layers.Conv2D(2, 1, activation="softmax")(y)
    net = tf.keras.Model(x, [y, layers.UpSampling2D(2)(b)])
    sig = [tf.TensorSpec([None, None, None, 3], tf.float32, name="image")]
    m = _tf_convert(tf.function(lambda t: net(t)), sig)
    yield m, entry("tf_keras_conv_transpose", "tf2onnx", _tf_source("keras_layers"),
                   {"image": ["batch", "height", "width", 3]},
                   [{"batch": 1, "height": 32, "width": 24}, {"batch": 2, "height": 45, "width": 61}])
    tokens = tf.keras.Input((None,), dtype="int32")
    e = layers.Embedding(100, 16)(tokens)
    h = layers.LayerNormalization()(layers.MultiHeadAttention(num_heads=2, key_dim=8)(e, e) + e)
    h = layers.Conv1D(16, 3, padding="causal", dilation_rate=2)(h)
    h = layers.Conv1D(16, 4, strides=2, padding="same")(h)
    net = tf.keras.Model(tokens, [layers.Dense(4)(layers.GlobalMaxPooling1D()(h)), h])
    sig = [tf.TensorSpec([None, None], tf.int32, name="tokens")]
    m = _tf_convert(tf.function(lambda t: net(t)), sig)
    yield m, entry("tf_keras_attention", "tf2onnx", _tf_source("keras_layers"), {"tokens": ["batch", "seq"]},
                   [{"batch": 1, "seq": 7}, {"batch": 3, "seq": 12}], feeds={"tokens": {"int": [0, 100]}})


@maker
def tf_shape_ops():
    """A tf.function of the TF ops whose tf2onnx lowering computes shapes: resize to a
    computed size, space_to_depth after a computed pad, SAME max pooling, depth_to_space of a
    Tile, sequence_mask, one_hot of depth seq, top_k with k = seq//2, range over h*w, gather,
    cumsum, strided slices."""
    import tensorflow as tf

    @tf.function
    def shapes(x, tokens):
        b, h, w = tf.shape(x)[0], tf.shape(x)[1], tf.shape(x)[2]
        y = tf.image.resize(x, tf.stack([h * 2, w // 2 + 1]), method="bilinear")
        y = tf.nn.space_to_depth(tf.pad(y, [[0, 0], [0, 0], [0, (2 - (w // 2 + 1) % 2) % 2], [0, 0]]), 2)
        z = tf.nn.depth_to_space(tf.tile(tf.nn.max_pool2d(x, 3, 2, "SAME"), [1, 1, 1, 4]), 2)
        s = tf.shape(tokens)[1]
        mask = tf.sequence_mask(tf.fill([b], s // 2), s)
        top = tf.math.top_k(tf.cast(tokens, tf.float32), k=tf.maximum(s // 2, 1)).values
        g = tf.gather(tf.reshape(x, [b, -1, 3]), tf.range(0, h * w, 2), axis=1)
        ex = tf.expand_dims(tf.cumsum(tf.cast(mask, tf.float32), axis=1), -1) * tf.ones([1, 1, w])
        st = tf.strided_slice(x, [0, 0, 1, 0], [b, h, w, 3], [1, 3, 2, 1])
        return y, z, mask, tf.one_hot(tokens % 7, depth=s), top, g, ex, x[:, 1:-1:2, ::-1, :], st

    sig = [tf.TensorSpec([None, None, None, 3], tf.float32, name="image"),
           tf.TensorSpec([None, None], tf.int32, name="tokens")]
    m = _tf_convert(shapes, sig)
    yield m, entry("tf_shape_ops", "tf2onnx", _tf_source("tf_shape_ops"),
                   {"image": ["batch", "height", "width", 3], "tokens": ["batch", "seq"]},
                   [{"batch": 1, "height": 8, "width": 6, "seq": 5}, {"batch": 2, "height": 13, "width": 9, "seq": 12}],
                   feeds={"tokens": {"int": [0, 50]}})


@maker
def tflite_models():
    """tf2onnx's TFLite front end: a keras.applications MobileNetV2 (alpha 0.35, random
    weights) converted to TFLite with any image size, then to ONNX."""
    import tensorflow as tf
    import tf2onnx

    tf.random.set_seed(0)
    net = tf.keras.applications.MobileNetV2(input_shape=(None, None, 3), weights=None, alpha=0.35,
                                            include_top=False, pooling="avg")
    path = os.path.join(tempfile.mkdtemp(), "mobilenet_v2.tflite")
    with open(path, "wb") as f:
        f.write(tf.lite.TFLiteConverter.from_keras_model(net).convert())
    m, _ = tf2onnx.convert.from_tflite(path, opset=17)
    (inp,) = m.graph.input
    src = dict(_tf_source("tflite_models"), **{"converter": "tf2onnx (from_tflite)", "slimmed": True})
    yield slim(m), entry("tflite_mobilenet_v2", "tf2onnx", src, {inp.name: ["batch", "height", "width", 3]},
                         [{"batch": 1, "height": 224, "width": 224}, {"batch": 2, "height": 97, "width": 130}],
                         note="keras.applications MobileNetV2 through TFLite; slimmed")


# ---------------------------------------------------------------- onnxruntime quantizer

def _quant_source(part, how):
    import onnxruntime

    return {"kind": "converter", "converter": f"onnxruntime.quantization.{how}", "version": onnxruntime.__version__,
            "float model": "torch TorchScript export in the same function",
            "script": f"models/real/make_converted.py:{part}"}


def _torch_export(module, args, names, dynamic_axes, path):
    import torch

    torch.onnx.export(module, args, path, input_names=names[0], output_names=names[1], opset_version=17,
                      dynamic_axes=dynamic_axes, dynamo=False)


@maker
def quantized_models():
    import torch
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

    torch.manual_seed(0)
    tmp = tempfile.mkdtemp()
    cnn = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.ReLU(),
                              torch.nn.Conv2d(8, 8, 3, padding=1, groups=2), torch.nn.ReLU(),
                              torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4)).eval()
    f32 = os.path.join(tmp, "cnn.onnx")
    axes = {"image": {0: "batch", 2: "height", 3: "width"}, "logits": {0: "batch"}}
    _torch_export(cnn, (torch.randn(1, 3, 16, 16),), (["image"], ["logits"]), axes, f32)
    sizes = [{"batch": 1, "height": 16, "width": 20}, {"batch": 2, "height": 33, "width": 17}]
    inputs = {"image": ["batch", 3, "height", "width"]}

    out = os.path.join(tmp, "cnn_dyn.onnx")
    quantize_dynamic(f32, out, op_types_to_quantize=["Conv", "MatMul", "Gemm"], weight_type=QuantType.QUInt8)
    yield onnx.load(out), entry("quant_dynamic_convinteger", "quantized",
                                _quant_source("quantized_models", "quantize_dynamic"), inputs, sizes)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"image": np.random.default_rng(i).standard_normal((1, 3, 16, 16)).astype(np.float32)}
                            for i in range(4)])

        def get_next(self):
            return next(self.it, None)

    for fmt in ("QDQ", "QOperator"):
        out = os.path.join(tmp, f"cnn_{fmt}.onnx")
        quantize_static(f32, out, Reader(), quant_format=getattr(QuantFormat, fmt))
        yield onnx.load(out), entry(f"quant_static_{fmt.lower()}", "quantized",
                                    _quant_source("quantized_models", f"quantize_static({fmt})"), inputs, sizes)

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(40, 16)
            self.lstm = torch.nn.LSTM(16, 24, num_layers=1, batch_first=True, bidirectional=True)
            self.out = torch.nn.Linear(48, 5)

        def forward(self, tokens):
            h, _ = self.lstm(self.emb(tokens))
            return self.out(h)

    f32 = os.path.join(tmp, "lstm.onnx")
    _torch_export(Tagger().eval(), (torch.ones(2, 5, dtype=torch.long),), (["tokens"], ["tags"]),
                  {"tokens": {0: "batch", 1: "seq"}, "tags": {0: "batch", 1: "seq"}}, f32)
    out = os.path.join(tmp, "lstm_dyn.onnx")
    quantize_dynamic(f32, out, op_types_to_quantize=["LSTM", "MatMul", "Gather"], weight_type=QuantType.QInt8)
    yield onnx.load(out), entry("quant_dynamic_lstm", "quantized",
                                _quant_source("quantized_models", "quantize_dynamic"),
                                {"tokens": ["batch", "seq"]}, [{"batch": 1, "seq": 6}, {"batch": 3, "seq": 11}],
                                feeds={"tokens": {"int": [0, 40]}})
