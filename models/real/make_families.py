"""Exporter families of issue 22, each from a tiny random config (no model hub): timm
(TorchScript: MaxViT's window partition reshapes by ``H // window``, and its onnxslim output;
EfficientNet with TensorFlow's "same" padding computed in float32 through ``Clip(min=0)``),
hummingbird-ml (a GEMM-strategy tree ensemble: a Squeeze of ``[30, 1, n]`` with no axes).
Used by make_real.py.

torchvision's PyPI wheel is a CUDA build whose compiled ops do not load with the CPU torch;
timm needs only its Python parts, so the two ops its fake registrations name are declared first.
"""

from __future__ import annotations

from make_real import entry
from make_torch import _both

MAKERS = []
SCRIPT = "make_families.py"


def maker(fn):
    MAKERS.append(fn)
    return fn


def _timm():
    import torch

    if not hasattr(torch.ops, "torchvision") or not hasattr(torch.ops.torchvision, "nms"):
        global _TV_LIB
        _TV_LIB = torch.library.Library("torchvision", "DEF")  # kept alive: the ops live as long as it
        for op in ("nms", "qnms"):
            _TV_LIB.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    import timm

    return timm


def _timm_source(name, **config):
    timm = _timm()
    return {"library": f"timm {timm.__version__}", "config": f"timm.create_model({name!r}, {config}), random weights"}


IMAGE_AXES = {"pixel_values": {0: "batch", 2: "height", 3: "width"}}


@maker
def timm_maxvit():
    """MaxViT (timm's test_maxvit, one block a stage, windows of 4 at 128 pixels): the block and
    grid partitions reshape to ``H // 4`` windows; it runs at multiples of 128. TorchScript only; its onnxslim output too."""
    import torch

    timm = _timm()
    torch.manual_seed(0)
    cfg = dict(img_size=128, num_classes=3, embed_dim=(32, 32, 32, 32), depths=(1, 1, 1, 1))
    m = timm.create_model("test_maxvit", pretrained=False, **cfg)
    sizes = [{"batch": 1, "height": 128, "width": 128}, {"batch": 2, "height": 256, "width": 128}]
    for model, e in _both("timm_maxvit", "timm_maxvit", m, (torch.randn(2, 3, 128, 128),), ["pixel_values"],
                          ["logits"], IMAGE_AXES, sizes, extra=_timm_source("test_maxvit", **cfg), script=SCRIPT,
                          exporters=("TorchScript",)):
        yield model, e
        import onnxslim

        slim = onnxslim.slim(model)
        e2 = dict(e, name=e["name"] + "_slim", file=e["file"].replace(".onnx", "_slim.onnx"))
        e2["source"] = dict(e["source"], onnxslim=onnxslim.__version__)
        yield slim, e2


@maker
def timm_efficientnet_same():
    """EfficientNet with TensorFlow's "same" padding (timm's Conv2dSame): the pads are
    ``max((ceil(x / s) - 1) * s + (k - 1) * d + 1 - x, 0)`` computed in float32."""
    import torch

    timm = _timm()
    torch.manual_seed(0)
    cfg = dict(pad_type="same", num_classes=3)
    m = timm.create_model("test_efficientnet", pretrained=False, **cfg)
    sizes = [{"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 45, "width": 37}]
    yield from _both("timm_efficientnet_same", "timm_efficientnet_same", m, (torch.randn(2, 3, 32, 32),),
                     ["pixel_values"], ["logits"], IMAGE_AXES, sizes,
                     extra=_timm_source("test_efficientnet", **cfg), script=SCRIPT, exporters=("TorchScript",))
