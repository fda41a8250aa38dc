#!/usr/bin/env python
"""Make ``timm_maxvit_slim.onnx``: a tiny timm MaxViT (three stages of one MBConv + block +
grid attention, 8 channels, window and grid 2; random weights, seed 0) exported with the
TorchScript exporter (opset 17, batch, height and width dynamic) and then slimmed by
onnxslim, which writes declared texts of its own on value_info, among them
``((((height - 1)//2)) + 1//2)`` on the first stage's shortcut AveragePool (that text
is ``(height - 1)//2``, true only at heights 3 and 4; the pool gives ``height//4``).
onnxruntime runs the model at 64x96 and 96x64 (tests/test_declared_claims.py).

    pip install timm onnxslim    # timm 1.0.31, onnxslim 0.1.98 and torch 2.13.0 were used
    python models/domain/make_maxvit_slim.py

timm imports torchvision, whose build here does not load with torch 2.13; MaxViT uses
nothing of it, so every torchvision module is a stub while the model is made.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import tempfile
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "timm_maxvit_slim.onnx")


class _StubMeta(type):
    def __getattr__(cls, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return attr  # an enum member (InterpolationMode.NEAREST): any hashable will do


class _Stub(metaclass=_StubMeta):
    def __init__(self, *args, **kwargs):
        pass


class _StubTorchvision(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "torchvision" or name.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__path__ = []
        m.__version__ = "0.0"

        def getattr_(attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            return _Stub
        m.__getattr__ = getattr_
        return m

    def exec_module(self, module):
        pass


def make(path: str = OUT) -> None:
    sys.meta_path.insert(0, _StubTorchvision())
    import onnx
    import onnxslim
    import torch
    from timm.models import maxxvit

    torch.manual_seed(0)
    cfg = maxxvit.MaxxVitCfg(
        embed_dim=(8, 8, 8), depths=(1, 1, 1), block_type=("M",) * 3, stem_width=8,
        transformer_cfg=maxxvit.MaxxVitTransformerCfg(dim_head=4, window_size=(2, 2), grid_size=(2, 2)),
        conv_cfg=maxxvit.MaxxVitConvCfg(expand_ratio=1.0, attn_layer="se"))
    model = maxxvit.MaxxVit(cfg, img_size=64, num_classes=4).eval()
    raw = os.path.join(tempfile.mkdtemp(), "maxvit_ts.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.randn(1, 3, 64, 96),), raw, input_names=["x"], output_names=["y"],
                          opset_version=17, dynamic_axes={"x": {0: "batch", 2: "height", 3: "width"}},
                          dynamo=False)
    onnx.save(onnxslim.slim(onnx.load(raw)), path)


if __name__ == "__main__":
    make()
    print(OUT, os.path.getsize(OUT))
