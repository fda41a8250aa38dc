"""Exports that lost dynamism, each beside its fixed version (issue: the dynamism the exporter
lost). Run from the checkout: ``python models/dynamism/make_dynamism.py`` (torch; tf2onnx with
TensorFlow for the last pair, in a venv of its own: ``--tf``).

- ``shuffle_baked_ts``: a channel shuffle written ``x.view(1, groups, c // groups, h, w)``,
  exported with a dynamic batch: it runs at batch 1 only. ``shuffle_fixed_ts``: ``view(b, ...)``.
- ``shuffle_static_ts``: the fixed code exported with a static batch: the tracer turned
  ``x.shape`` into constants, so the Reshape targets hold the batch of 1 (``--dynamic x:0=batch``
  finds them). ``cnn_static_ts``: a Conv, pool, Flatten, Gemm net exported with a static batch,
  whose graph reads no shape: ``--dynamic x:0=batch`` makes it dynamic.
- ``shuffle_fixed_dynamo``: the fixed code from the newer exporter (torch.export), for ``diff``.
- ``tf_dense_fixed_batch`` / ``tf_dense_dynamic_batch``: tf2onnx of a Keras-style flatten+dense
  traced with a fixed batch of 1 and with ``None``.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def torch_models() -> None:
    import torch
    from torch import nn

    torch.manual_seed(0)

    class Shuffle(nn.Module):
        def __init__(self, baked: bool, groups: int = 2, c: int = 8):
            super().__init__()
            self.baked, self.groups, self.conv = baked, groups, nn.Conv2d(c, c, 1)

        def forward(self, x):
            x = self.conv(x)
            b, c, h, w = x.shape
            n = 1 if self.baked else b
            y = x.view(n, self.groups, c // self.groups, h, w).transpose(1, 2)
            return y.reshape(n, c, h, w).relu()

    x = torch.randn(1, 8, 6, 6)
    dyn = {"x": {0: "batch"}, "y": {0: "batch"}}

    def ts(module, name, dynamic_axes):
        torch.onnx.export(module.eval(), (x,), os.path.join(HERE, f"{name}.onnx"), input_names=["x"],
                          output_names=["y"], dynamic_axes=dynamic_axes, opset_version=17, dynamo=False)

    ts(Shuffle(True), "shuffle_baked_ts", dyn)
    ts(Shuffle(False), "shuffle_fixed_ts", dyn)
    ts(Shuffle(False), "shuffle_static_ts", None)
    cnn = nn.Sequential(nn.Conv2d(8, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    ts(cnn, "cnn_static_ts", None)
    batch = torch.export.Dim("batch", min=1, max=1024)
    prog = torch.onnx.export(Shuffle(False).eval(), (torch.randn(2, 8, 6, 6),), dynamo=True,
                             input_names=["x"], output_names=["y"], dynamic_shapes={"x": {0: batch}})
    prog.save(os.path.join(HERE, "shuffle_fixed_dynamo.onnx"))


def tf_models() -> None:
    import tensorflow as tf
    import tf2onnx

    tf.random.set_seed(0)
    w = tf.Variable(tf.random.normal([6 * 4, 5], seed=1))  # a variable: frozen as an initializer

    def dense(x):
        flat = tf.reshape(x, [-1 if fixed is None else fixed, 6 * 4])
        return tf.nn.relu(tf.matmul(flat, w))

    for fixed, name in [(1, "tf_dense_fixed_batch"), (None, "tf_dense_dynamic_batch")]:
        fn = tf.function(dense)
        spec = [tf.TensorSpec([fixed, 6, 4], tf.float32, name="x")]
        model, _ = tf2onnx.convert.from_function(fn, input_signature=spec, opset=17)
        import onnx

        onnx.save(model, os.path.join(HERE, f"{name}.onnx"))


if __name__ == "__main__":
    if "--tf" in sys.argv:
        tf_models()
    else:
        torch_models()
