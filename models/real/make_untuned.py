"""The families of issue 35, which no rule here was tuned to: torchvision detectors, an audio
front-end, torch.fft, a diffusion UNet, graph nets, JAX. Each is built here from a small
config with random weights (torch.manual_seed(0)), exported by both of torch's exporters
where both work (make_torch.export_both), large weights slimmed (corpus.slim). Used by
make_real.py (`python models/real/make_real.py --only untuned`).

Made with (a build environment of its own; none of these is a test dependency):

    pip install torch==2.14.1 torchvision==0.29.1 onnxscript==0.7.2 onnx==1.23.2 onnxruntime==1.32.0
    pip install diffusers==0.42.1 torch_geometric==2.8.1

What does not install or export, and is skipped (see each maker's docstring): torchaudio
(its wheels pin an older torch than 2.14.1: the log-mel front-end is written with torch.stft),
jax2onnx runs in an environment of its own: `pip install jax2onnx==0.17.1` (jax 0.10.2).
"""

from __future__ import annotations

from make_torch import export_both

MAKERS = []
SCRIPT = "make_untuned.py"


def maker(fn):
    MAKERS.append(fn)
    return fn


def _both(name, module, args, inputs, outputs, axes, sizes, group, feeds=None, extra=None,
          exporters=("TorchScript", "dynamo"), note=""):
    """export_both, each entry in the family's group, large weights slimmed; an exporter that
    fails is skipped, saying why (the note of the entries that did export records it)."""
    from corpus import slim

    made = []
    for exporter in exporters:
        try:
            made += list(export_both(name, name, module, args, inputs, outputs, axes, sizes, feeds=feeds,
                                     extra=extra, script=SCRIPT, exporters=(exporter,)))
        except Exception as exc:  # an exporter that cannot export this model: recorded, not fatal
            first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
            print(f"{name}: {exporter} does not export it: {type(exc).__name__}: {first}")
            note += f" {exporter} does not export it ({type(exc).__name__})."
    for model, e in made:
        before = model.ByteSize()
        model = slim(model)
        if model.ByteSize() < before:
            e["source"]["slimmed"] = True
        e["group"] = group
        e["note"] = note.strip()
        yield model, e


# ---------------------------------------------------------------- torchvision detection

class _Detector:
    """A torchvision detector fed one image tensor [3, height, width] (its transform resizes
    it by a float scale, batches it, and the heads end in NMS)."""

    @staticmethod
    def wrap(model):
        import torch

        class Detect(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = model

            def forward(self, image):
                out = self.m([image])[0]
                return out["boxes"], out["scores"], out["labels"]

        return Detect()


def _tv_source(fn, **cfg):
    import torchvision

    return {"library": f"torchvision {torchvision.__version__}",
            "config": f"torchvision.models.detection.{fn}(weights=None, weights_backbone=None, {cfg})"}


DETECT_AXES = {"image": {1: "height", 2: "width"}}
DETECT_SIZES = [{"height": 64, "width": 80}, {"height": 96, "width": 72}]


def _guard_free_batched_nms():
    """torchvision's batched_nms (the coordinate trick) without its two Python branches on the
    box count (``numel() == 0``, ``numel() > 4000``), on which torch.export stops ("could not
    guard on data-dependent expression"): an empty input is taken as non-empty at export, as
    TorchScript's trace takes it."""
    import torch
    import torchvision
    from torch.fx.experimental.symbolic_shapes import guard_or_false

    def batched_nms(boxes, scores, idxs, iou_threshold):
        n = boxes.numel()  # a tensor in TorchScript's trace, a SymInt in torch.export
        if bool(n == 0) if torch.jit.is_tracing() else guard_or_false(n == 0):
            return torch.empty((0,), dtype=torch.int64, device=boxes.device)
        offsets = idxs.to(boxes) * (boxes.max() + torch.tensor(1).to(boxes))
        return torchvision.ops.nms(boxes + offsets[:, None], scores, iou_threshold)

    torchvision.ops.boxes.batched_nms = batched_nms


# The random-weight detectors keep the most boxes they return (10) on every finite image tried
# (zeros, constants from -1e6 to 1e6, noise at five scales and four seeds, checkerboards,
# gradients, 13 sizes): their scores hardly depend on the pixels. An all-NaN image fails every
# score threshold, so no box survives: the comparison runs it too (the manifest's more_feeds),
# so that a count written as the slice's end (10) is seen wrong.
DETECT_MORE_FEEDS = [{"image": {"value": "nan"}}]
# TorchScript's Faster R-CNN traced the non-empty branch: onnxruntime stops on an image on which
# no proposal survives, so that one keeps the random images only (its note says so)
NO_EMPTY_RUN = (" onnxruntime cannot run it on an image on which no proposal survives (the all-NaN image of the"
                " other detectors' more_feeds: Reshape {0, 12} to {0, -1}, the trace took the non-empty branch),"
                " and every finite image keeps 10: its box count is checked on two random images only.")


def _detector(name, fn, **cfg):
    import torch
    import torchvision

    _guard_free_batched_nms()
    torch.manual_seed(0)
    m = getattr(torchvision.models.detection, fn)(weights=None, weights_backbone=None, **cfg)
    for model, e in _both(name, _Detector.wrap(m), (torch.rand(3, 64, 80),), ["image"], ["boxes", "scores", "labels"],
                          DETECT_AXES, DETECT_SIZES, "torchvision detection", extra=_tv_source(fn, **cfg),
                          note="one image [3, height, width]; the box count is data (NMS)."):
        if e["name"] == "tv_fasterrcnn_ts":
            e["note"] += NO_EMPTY_RUN
        else:
            e["more_feeds"] = DETECT_MORE_FEEDS
        yield model, e


@maker
def tv_fasterrcnn():
    """Faster R-CNN, MobileNetV3-Large 320 FPN backbone: the transform's resize to min_size 64
    (a float scale min(64 / min(h, w), 128 / max(h, w))), anchors over each FPN level, RPN NMS,
    RoIAlign (MultiScaleRoIAlign), box head, per-class NMS."""
    yield from _detector("tv_fasterrcnn", "fasterrcnn_mobilenet_v3_large_320_fpn", num_classes=3, min_size=64,
                         max_size=128, rpn_pre_nms_top_n_test=50, rpn_post_nms_top_n_test=20,
                         box_detections_per_img=10)


@maker
def tv_ssdlite():
    """SSDlite320 over MobileNetV3-Large: its transform resizes to a fixed 320 x 320 (the builder
    fixes the size), so every head is static after the resize; then per-class NMS and a TopK."""
    yield from _detector("tv_ssdlite", "ssdlite320_mobilenet_v3_large", num_classes=3,
                         detections_per_img=10, topk_candidates=20)


@maker
def tv_retinanet():
    """RetinaNet, ResNet-50 FPN (slimmed): the float-scale resize, anchors per level, TopK per
    level, batched NMS."""
    for model, e in _detector("tv_retinanet", "retinanet_resnet50_fpn", num_classes=3, min_size=64, max_size=128,
                              topk_candidates=20, detections_per_img=10):
        if e["name"].endswith("_dynamo"):
            # its value_info claims 1 for a dim that is (padded height - 1) // 64 + 1: 2 once the
            # resized height passes 64, i.e. when height > width; onnxruntime then stops on the claim
            e["sizes"] = [{"height": 64, "width": 80}, {"height": 72, "width": 96}]
            e["note"] += (" onnxruntime runs the file at height <= width only: the exporter's value_info claims"
                          " [1] for the anchor shifts over the rows of the stride-64 level ((padded height - 1)"
                          " // 64 + 1), 2 when height > width.")
        yield model, e


# ---------------------------------------------------------------- audio front-end

@maker
def audio_logmel():
    """A log-mel front-end as torchaudio's MelSpectrogram computes it, written with torch.stft
    (torchaudio does not install beside torch 2.14.1): reflect padding (center=True), a Hann
    window, |STFT|^2, a mel filterbank matmul, log; [batch, samples] -> [batch, mels, frames]."""
    import torch

    torch.manual_seed(0)
    n_fft, hop, mels = 64, 16, 8

    class LogMel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("window", torch.hann_window(n_fft))
            self.register_buffer("fb", torch.rand(n_fft // 2 + 1, mels))

        def forward(self, wav):
            # real and imaginary parts on a last axis of 2: TorchScript's STFT takes no complex type
            spec = torch.stft(wav, n_fft, hop, window=self.window, center=True, return_complex=False)
            power = spec.pow(2).sum(-1)  # [batch, freq, frames]
            mel = torch.matmul(power.transpose(1, 2), self.fb).transpose(1, 2)
            return torch.log(mel + 1e-6)

    yield from _both("audio_logmel", LogMel(), (torch.randn(2, 400),), ["waveform"], ["logmel"],
                     {"waveform": {0: "batch", 1: "samples"}},
                     [{"batch": 1, "samples": 400}, {"batch": 2, "samples": 1037}], "audio front-end",
                     extra={"config": f"torch.stft n_fft={n_fft} hop={hop} hann, {mels} mels"},
                     note="frames = samples // 16 + 1 (center=True pads n_fft // 2 each side, reflect).")


# ---------------------------------------------------------------- torch.fft

@maker
def fft_spectral():
    """A Fourier-neural-operator style spectral filter: fft over the last axis, the lowest 8
    modes kept (a mask over ``arange(length) < 8``) and scaled per channel, ifft back, the real
    part, plus a 1x1 conv; rfft's power spectrum and rfft2's magnitude. [batch, 4, length] ->
    [batch, 4, length], two [batch, 4, length // 2 + 1]. Dynamo only: TorchScript has no
    aten::fft_*; dynamo's irfft(n=length) of sliced modes needs a complex pad it cannot export,
    and its irfft of the full spectrum fails in onnxruntime (a DFT output of the wrong length)."""
    import torch

    torch.manual_seed(0)

    class Spectral(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.rand(4, 1))
            self.mix = torch.nn.Conv1d(4, 4, 1)

        def forward(self, x):
            f = torch.fft.fft(x, dim=-1)
            keep = (torch.arange(f.shape[-1]) < 8).to(x.dtype) * self.scale
            y = torch.fft.ifft(f * keep, dim=-1).real
            power = torch.view_as_real(torch.fft.rfft(x, dim=-1)).pow(2).sum(-1)
            return y + self.mix(x), power, torch.fft.rfft2(x).abs()

    yield from _both("fft_spectral", Spectral(), (torch.randn(2, 4, 32),), ["signal"],
                     ["filtered", "power", "magnitude"], {"signal": {0: "batch", 2: "length"}},
                     [{"batch": 1, "length": 32}, {"batch": 3, "length": 45}], "torch.fft",
                     extra={"config": "fft, mask, ifft().real; rfft power; rfft2().abs()"}, exporters=("dynamo",),
                     note="dynamo only (TorchScript exports no aten::fft_*).")


# ---------------------------------------------------------------- diffusion UNet

@maker
def diffusers_unet():
    """diffusers' UNet2DModel from a tiny config (two levels, attention at the lower one,
    GroupNorm, sinusoidal timestep embedding, nearest Upsample2D by 2); [batch, 3, h, w] and a
    timestep per image -> a noise estimate of the image's shape."""
    import diffusers
    import torch

    torch.manual_seed(0)
    cfg = dict(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1, block_out_channels=(8, 16),
               down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D"),
               norm_num_groups=4, attention_head_dim=8)
    unet = diffusers.UNet2DModel(**cfg)

    class Denoise(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.unet = unet

        def forward(self, sample, timestep):
            return self.unet(sample, timestep).sample

    yield from _both("diffusers_unet", Denoise(), (torch.randn(2, 3, 16, 16), torch.tensor([10.0, 500.0])),
                     ["sample", "timestep"], ["noise"],
                     {"sample": {0: "batch", 2: "height", 3: "width"}, "timestep": {0: "batch"}},
                     [{"batch": 1, "height": 16, "width": 16}, {"batch": 2, "height": 32, "width": 24}],
                     "diffusion UNet", extra={"library": f"diffusers {diffusers.__version__}",
                                              "config": f"UNet2DModel({cfg}), random weights"},
                     note="one downsample by 2: height and width even.")


@maker
def tiny_unet_timestep():
    """A hand-written diffusion UNet: a sinusoidal timestep embedding added per channel, two
    stride-2 downsamples, F.interpolate(scale_factor=2) and Upsample(size=) of the skip's size
    back up, skips concatenated. [batch, 3, h, w], [batch] -> [batch, 3, h, w]."""
    import math

    import torch
    from torch import nn
    from torch.nn import functional as F

    torch.manual_seed(0)

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.t1, self.t2 = nn.Linear(16, 8), nn.Linear(16, 16)
            self.c0 = nn.Conv2d(3, 8, 3, padding=1)
            self.d1 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.d2 = nn.Conv2d(16, 16, 3, stride=2, padding=1)
            self.u2 = nn.Conv2d(32, 8, 3, padding=1)
            self.u1 = nn.Conv2d(16, 3, 3, padding=1)
            self.norm = nn.GroupNorm(4, 16)

        def embed(self, t):
            freqs = torch.exp(-math.log(10000.0) * torch.arange(8, dtype=torch.float32) / 8)
            a = t[:, None] * freqs[None]
            return torch.cat([a.sin(), a.cos()], -1)

        def forward(self, x, t):
            e = self.embed(t)
            a = F.silu(self.c0(x) + self.t1(e)[:, :, None, None])
            b = F.silu(self.norm(self.d1(a)) + self.t2(e)[:, :, None, None])
            c = F.silu(self.d2(b))
            up = F.interpolate(c, size=b.shape[-2:], mode="nearest")  # odd sizes: back to the skip's size
            b = F.silu(self.u2(torch.cat([up, b], 1)))
            up = F.interpolate(b, scale_factor=2.0, mode="bilinear", align_corners=False)
            return self.u1(torch.cat([up, a], 1))

    yield from _both("tiny_unet_timestep", Tiny(), (torch.randn(2, 3, 16, 16), torch.tensor([10.0, 500.0])),
                     ["sample", "timestep"], ["noise"],
                     {"sample": {0: "batch", 2: "height", 3: "width"}, "timestep": {0: "batch"}},
                     [{"batch": 1, "height": 16, "width": 16}, {"batch": 2, "height": 32, "width": 24}],
                     "diffusion UNet", extra={"config": "written here: timestep embedding, Resize to the skip's size "
                                                        "and by scale 2"},
                     note="the last upsample doubles the half size: height and width even.")


# ---------------------------------------------------------------- graph nets

GRAPH_AXES = {"x": {0: "nodes"}, "edge_index": {1: "edges"}}
GRAPH_SIZES = [{"nodes": 6, "edges": 10}, {"nodes": 9, "edges": 23}]
GRAPH_FEEDS = {"edge_index": {"int": [0, 6]}}  # node ids below the smaller size's node count


@maker
def gcn_plain():
    """A two-layer GCN in plain torch: degrees by index_add, symmetric normalisation, messages
    gathered by edge_index and summed by index_add / scatter_add, a mean pool over nodes.
    x [nodes, 8], edge_index [2, edges] -> per-node logits [nodes, 3] and a graph embedding [1, 3]."""
    import torch
    from torch import nn

    torch.manual_seed(0)

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2 = nn.Linear(8, 16), nn.Linear(16, 3)

        def conv(self, h, src, dst, norm):
            msg = h[src] * (norm[src] * norm[dst]).unsqueeze(-1)
            out = torch.zeros_like(h).index_add(0, dst, msg)
            return out + h * (norm * norm).unsqueeze(-1)

        def forward(self, x, edge_index):
            src, dst = edge_index[0], edge_index[1]
            deg = torch.ones(x.shape[0]).index_add(0, dst, torch.ones(src.shape[0]))
            norm = deg.rsqrt()
            h = torch.relu(self.conv(self.l1(x), src, dst, norm))
            h2 = self.l2(h)
            idx = dst.unsqueeze(-1).expand(-1, h2.shape[1])
            h2 = h2 + torch.zeros_like(h2).scatter_add(0, idx, h2[src])
            return h2, h2.mean(0, keepdim=True)

    yield from _both("gcn_plain", GCN(), (torch.randn(6, 8), torch.randint(0, 6, (2, 10))), ["x", "edge_index"],
                     ["node_logits", "graph_embedding"], GRAPH_AXES, GRAPH_SIZES, "graph nets", feeds=GRAPH_FEEDS,
                     extra={"config": "written here: index_add, scatter_add, gathers by edge_index"})


@maker
def pyg_gnn():
    """PyTorch Geometric's GCNConv (self-loops added, gcn_norm, scatter-sum aggregation) then
    SAGEConv (mean aggregation) and global_mean_pool."""
    import torch
    import torch_geometric
    from torch_geometric.nn import GCNConv, SAGEConv, global_mean_pool

    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = GCNConv(8, 16), SAGEConv(16, 3)

        def forward(self, x, edge_index):
            h = torch.relu(self.c1(x, edge_index))
            h = self.c2(h, edge_index)
            return h, global_mean_pool(h, None)

    yield from _both("pyg_gnn", Net(), (torch.randn(6, 8), torch.randint(0, 6, (2, 10))), ["x", "edge_index"],
                     ["node_logits", "graph_embedding"], GRAPH_AXES, GRAPH_SIZES, "graph nets", feeds=GRAPH_FEEDS,
                     extra={"library": f"torch_geometric {torch_geometric.__version__}",
                            "config": "GCNConv(8, 16), SAGEConv(16, 3), global_mean_pool"})


# ---------------------------------------------------------------- JAX

@maker
def jax_convnet():
    """A JAX function exported by jax2onnx with batch, height and width symbolic: two NHWC convs
    of stride 2 padded by 1 ((h - 1) // 2 + 1 twice; jax2onnx 0.17.1 cannot export SAME padding
    at stride 2 over a symbolic size: its pads must be constants), GELU, the grid
    flattened to tokens (h' * w'), one softmax attention over them, a mean and a cumulative sum.
    Pure jax (no flax); weights from numpy's default_rng(0)."""
    from importlib.metadata import version

    import jax
    import jax.numpy as jnp
    import jax2onnx
    import numpy as np

    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((3, 3, 3, 8)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((3, 3, 8, 16)) * 0.1).astype(np.float32)
    wq = (rng.standard_normal((16, 16)) * 0.1).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")

    def convnet(x):
        y = jax.nn.gelu(jax.lax.conv_general_dilated(x, w1, (2, 2), ((1, 1), (1, 1)), dimension_numbers=dn))
        y = jax.nn.gelu(jax.lax.conv_general_dilated(y, w2, (2, 2), ((1, 1), (1, 1)), dimension_numbers=dn))
        b, h, w, c = y.shape
        t = y.reshape(b, h * w, c)
        att = jax.nn.softmax(jnp.einsum("btc,cd,bsd->bts", t, wq, t) / 4.0, axis=-1)
        t = jnp.einsum("bts,bsc->btc", att, t)
        return t.mean(1), jnp.cumsum(t, axis=1)

    model = jax2onnx.to_onnx(convnet, [("batch", "height", "width", 3)], model_name="jax_convnet",
                             input_names=["image"], output_names=["pooled", "tokens"])
    inputs = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    source = {"kind": "converter", "converter": "jax2onnx.to_onnx", "version": version("jax2onnx"),
              "jax": jax.__version__, "script": f"models/real/{SCRIPT}:jax_convnet",
              "config": "written here: 2 convs of stride 2 padded by 1, attention over the grid's tokens"}
    from corpus import entry

    yield model, entry("jax_convnet", "jax2onnx", source, inputs,
                       [{"batch": 1, "height": 16, "width": 16}, {"batch": 2, "height": 23, "width": 13}],
                       note="NHWC; stride 2, pad 1, kernel 3: (h - 1) // 2 + 1 twice.")
