# ruff: noqa: F821  (onnxscript: FLOAT["B", "T"] names dims, no forward references)
"""Sizes computed in float, as audio front-ends, detectors and upsamplers write them: a
frame count ``floor((T - n_fft) / hop) + 1`` from torch's ``math.floor`` on a size (the dynamo
exporter keeps it as Cast -> Div -> Floor -> Cast; TorchScript bakes the traced count, so it
is exported by dynamo only), the same in onnxscript with a Resize to half the frame rate
(``floor(frames * 0.5)``) and a float64 variant, a librosa-style padded count, a detector's
anchor grid computed from the image and feature sizes in float, and an upsampler by float
scales. Random weights (torch.manual_seed(0), numpy seed 0). Used by make_real.py
(`python models/real/make_real.py --only float_`).

Made with torch 2.13.0 (CPU), onnxscript 0.7.2, onnx 1.23.2, onnxruntime 1.32.0.
"""

# (no `from __future__ import annotations`: onnxscript reads the types of the annotations)

import os
import tempfile
import warnings

from corpus import entry

MAKERS = []
SCRIPT = "make_float_sizes.py"
GROUP = "float-computed sizes"
N_FFT, HOP = 64, 16
# T from empty to a second of 16 kHz audio, with the sizes next to a frame edge
AUDIO_SIZES = [{"B": b, "T": t} for b, t in ((1, 0), (2, 1), (1, 63), (2, 64), (1, 65), (2, 79), (1, 80),
                                              (3, 399), (1, 400), (2, 401), (1, 16000))]


def maker(fn):
    MAKERS.append(fn)
    return fn


def _onnxscript():
    import onnxscript
    from onnxscript import opset18

    globals().update(FLOAT=onnxscript.FLOAT, INT64=onnxscript.INT64, op=opset18)
    return onnxscript


def _inputs(model):
    init = {t.name for t in model.graph.initializer}
    return {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in model.graph.input if i.name not in init}


def _script_entry(name, model, sizes, note, ranks):
    """The manifest row of an onnxscript model, whose outputs (float tensors, unannotated) get
    their element type and ``ranks`` dims of no value or name (what is measured is left open)."""
    import onnxscript
    from onnx import TensorProto

    for o, r in zip(model.graph.output, ranks, strict=True):
        o.type.tensor_type.elem_type = TensorProto.FLOAT
        for _ in range(r):
            o.type.tensor_type.shape.dim.add()

    src = {"kind": "converter", "converter": "onnxscript @script, to_model_proto()", "version": onnxscript.__version__,
           "script": f"models/real/{SCRIPT}:{name}"}
    return model, entry(name, GROUP, src, _inputs(model), sizes, note=note)


def _dynamo(name, module, args, inputs, dims_of, sizes, note):
    """The dynamo export, its input dims renamed to ``dims_of`` (input -> {axis: (name, min)})."""
    import onnx
    import onnxscript
    import torch

    module.eval()
    path = os.path.join(tempfile.mkdtemp(), "m.onnx")
    syms = {}
    shapes = tuple({a: syms.setdefault(s, torch.export.Dim(s, min=lo, max=2**20))
                    for a, (s, lo) in dims_of.get(n, {}).items()} for n in inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, path, input_names=inputs, dynamic_shapes=shapes, dynamo=True,
                          external_data=False)
    m = onnx.load(path)
    for n in m.graph.node:
        del n.metadata_props[:]
    for inp in m.graph.input:
        for a, (s, _) in dims_of.get(inp.name, {}).items():
            d = inp.type.tensor_type.shape.dim[a]
            d.Clear()
            d.dim_param = s
    src = {"kind": "converter", "converter": "torch.onnx.export(dynamo)", "version": torch.__version__,
           "onnxscript": onnxscript.__version__, "script": f"models/real/{SCRIPT}:{name}"}
    return m, entry(name, GROUP, src, _inputs(m), sizes, note=note)


def _torchscript(name, module, args, inputs, axes, sizes, note):
    import onnx
    import torch

    module.eval()
    path = os.path.join(tempfile.mkdtemp(), "m.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, path, input_names=inputs, opset_version=17, dynamic_axes=axes, dynamo=False)
    m = onnx.load(path)
    src = {"kind": "converter", "converter": "torch.onnx.export(TorchScript)", "version": torch.__version__,
           "script": f"models/real/{SCRIPT}:{name}"}
    return m, entry(name, GROUP, src, _inputs(m), sizes, note=note)


@maker
def float_frames_torch():
    """A Kaldi/Whisper-style front-end without centering: ``math.floor((T - 64) / 16) + 1``
    frames gathered by index (``arange(frames) * hop + arange(n_fft)``), a Hann window, a real
    DFT as a matmul, log power; and the librosa-style centered count
    ``math.floor((T + 2*32 - 64) / 16) + 1`` over a zero-padded signal. [B, T] -> [B, frames, 33]
    twice. Dynamo only: TorchScript traces ``math.floor`` of a size to a constant."""
    import math

    import torch

    torch.manual_seed(0)

    class Frames(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("window", torch.hann_window(N_FFT))
            self.register_buffer("dft", torch.randn(N_FFT, N_FFT // 2 + 1))

        def spectrum(self, x, frames):
            idx = (torch.arange(frames) * HOP).unsqueeze(1) + torch.arange(N_FFT)
            fr = x[:, idx] * self.window  # [B, frames, n_fft]
            return torch.log(torch.matmul(fr, self.dft).pow(2) + 1e-6)

        def forward(self, x):
            t = x.shape[-1]
            plain = self.spectrum(x, math.floor((t - N_FFT) / HOP) + 1)
            pad = N_FFT // 2
            padded = torch.nn.functional.pad(x, (pad, pad))
            centered = self.spectrum(padded, math.floor((t + 2 * pad - N_FFT) / HOP) + 1)
            return plain, centered

    # (torch.export needs T >= n_fft, frames >= 1 for arange; the export runs below it too: no frame)
    yield _dynamo("float_frames_dynamo", Frames(), (torch.randn(2, 400),), ["x"], {"x": {0: ("B", 1), 1: ("T", 64)}},
                  AUDIO_SIZES, note="frames = (T - 64)//16 + 1 and T//16 + 1, computed in float32 (Cast, Div, Floor, Cast).")


@maker
def float_frames_tensor_torch():
    """The frame count as tensor arithmetic, which both exporters keep:
    ``(torch.floor((torch.tensor(T) - 64) / 16.0) + 1).long()`` (TorchScript too: Cast, Sub,
    Div, Floor, Add in float32), frames gathered by index and summed; beside it torch.stft with
    center=False, whose count ``(T - 64)//16 + 1`` the STFT op computes. [B, T] ->
    [B, frames], [B, 33, frames]."""
    import torch

    torch.manual_seed(0)

    class Frames(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("window", torch.hann_window(N_FFT))

        def forward(self, x):
            frames = (torch.floor((torch.tensor(x.shape[-1]) - N_FFT) / float(HOP)) + 1).long()
            idx = (torch.arange(frames) * HOP).unsqueeze(1) + torch.arange(N_FFT)
            energy = (x[:, idx] * self.window).pow(2).sum(-1)
            spec = torch.stft(x, N_FFT, HOP, window=self.window, center=False, return_complex=False)
            return energy, spec.pow(2).sum(-1)

    # (the STFT needs a signal of at least n_fft samples)
    sizes = [s for s in AUDIO_SIZES if s["T"] >= N_FFT]
    note = "frames = (T - 64)//16 + 1, by float tensor ops and by the STFT op (center=False)."
    yield _torchscript("float_frames_tensor_ts", Frames(), (torch.randn(2, 400),), ["x"], {"x": {0: "B", 1: "T"}},
                       sizes, note)
    yield _dynamo("float_frames_tensor_dynamo", Frames(), (torch.randn(2, 400),), ["x"],
                  {"x": {0: ("B", 1), 1: ("T", 64)}}, sizes, note)


@maker
def float_sym_arith_torch():
    """Python float arithmetic on a size, which torch.export keeps symbolic and the dynamo
    exporter writes as float32 ops: ``math.ceil(T / 3)``, ``math.floor(T / 16 + 1)`` (a centered
    frame count written with a float), ``math.floor(T * 1.5 - 7)``; each sizes a zeros tensor
    (``int(T * 0.75)`` is specialized to the traced size by torch.export: left out). Dynamo only:
    TorchScript traces them to constants."""
    import math

    import torch

    class Sizes(torch.nn.Module):
        def forward(self, x):
            t = x.shape[-1]
            return (torch.zeros(math.ceil(t / 3)), torch.zeros(math.floor(t / HOP + 1)),
                    torch.zeros(math.floor(t * 1.5 - 7)))

    sizes = [{"B": b, "T": t} for b, t in ((1, 5), (2, 8), (1, 15), (2, 16), (1, 17), (1, 400), (3, 16001))]
    yield _dynamo("float_sym_arith_dynamo", Sizes(), (torch.randn(2, 400),), ["x"], {"x": {0: ("B", 1), 1: ("T", 5)}},
                  sizes, note="sizes (T + 2)//3, T//16 + 1 and T + T//2 - 7 from float32 arithmetic.")


@maker
def float_upsample_torch():
    """A diffusion-style upsampler: F.interpolate(scale_factor=2.0, nearest), then 1.5 with
    recompute_scale_factor (bilinear), then 0.5 with recompute_scale_factor (floor of half an odd
    size). [B, 3, H, W] -> [B, 4, 2H, 2W], [B, 4, 3H, 3W], [B, 4, floor(1.5H), floor(1.5W)]."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)

    class Up(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(4, 4, 3, padding=1)

        def forward(self, x):
            y = F.interpolate(self.c1(x), scale_factor=2.0, mode="nearest")
            z = F.interpolate(self.c2(y), scale_factor=1.5, mode="bilinear", recompute_scale_factor=True,
                              align_corners=False)
            w = F.interpolate(z, scale_factor=0.5, mode="nearest", recompute_scale_factor=True)
            return y, z, w

    sizes = [{"B": 1, "H": 1, "W": 1}, {"B": 2, "H": 5, "W": 7}, {"B": 1, "H": 8, "W": 3}, {"B": 1, "H": 33, "W": 2}]
    note = "sizes 2H, 3H (1.5 of 2H) and floor(3H / 2), as onnxruntime computes them from float scales."
    yield _torchscript("float_upsample_ts", Up(), (torch.randn(1, 3, 8, 8),), ["x"],
                       {"x": {0: "B", 2: "H", 3: "W"}}, sizes, note)
    yield _dynamo("float_upsample_dynamo", Up(), (torch.randn(1, 3, 8, 8),), ["x"],
                  {"x": {0: ("B", 1), 2: ("H", 2), 3: ("W", 2)}}, sizes, note)


@maker
def float_frames_onnxscript():
    """The front-end of an onnxscript audio model: frames ``floor((T - 64) / 16) + 1`` in
    float32 (negative below 64: Range gives no frame), framed by Gather, a window, a DFT
    matmul, then the spectrogram resized by Resize sizes rounded half to even,
    ``round((frames + 1) * 0.5)`` (ties) and ``round((frames + 1) / 3)``, ``floor(frames * 0.5)``
    as an Expand's size; and the same count in float64 (its bound is 2**53)."""
    import numpy as np
    import onnx

    script, op, FLOAT = _onnxscript().script, globals()["op"], globals()["FLOAT"]
    rng = np.random.default_rng(0)
    dft = onnx.numpy_helper.from_array(rng.standard_normal((N_FFT, N_FFT // 2 + 1)).astype(np.float32))
    window = onnx.numpy_helper.from_array(np.hanning(N_FFT).astype(np.float32))

    @script()
    def frontend(x: FLOAT["B", "T"]):
        t = op.Cast(op.Shape(x, start=1, end=2), to=1)
        nf = op.Cast(op.Floor((t - op.Constant(value_float=64.0)) / op.Constant(value_float=16.0)), to=7) \
            + op.Constant(value_ints=[1])
        nf0 = op.Squeeze(nf)
        starts = op.Range(op.Constant(value_int=0), nf0, op.Constant(value_int=1)) * op.Constant(value_int=16)
        idx = op.Unsqueeze(starts, op.Constant(value_ints=[1])) + op.Range(op.Constant(value_int=0),
                                                                           op.Constant(value_int=64),
                                                                           op.Constant(value_int=1))
        fr = op.Gather(x, idx, axis=1) * op.Constant(value=window)  # [B, frames, 64]
        spec = op.Log(op.Pow(op.MatMul(fr, op.Constant(value=dft)), op.Constant(value_float=2.0))
                      + op.Constant(value_float=1e-6))  # [B, frames, 33]
        b = op.Shape(x, start=0, end=1)
        nff = op.Cast(op.Relu(nf), to=1)
        # (a Resize to 0 frames of a spectrum that has some fails: both counts are >= 1 from 1 frame on)
        one = op.Constant(value_float=1.0)
        half = op.Cast(op.Round((nff + one) * op.Constant(value_float=0.5)), to=7)  # ties to even
        third = op.Cast(op.Round((nff + one) / op.Constant(value_float=3.0)), to=7)
        c = op.Constant(value_ints=[33])
        halved = op.Resize(spec, None, None, op.Concat(b, half, c, axis=0), mode="nearest")
        thirds = op.Resize(spec, None, None, op.Concat(b, third, c, axis=0), mode="nearest")
        floor_half = op.Cast(op.Floor(nff * op.Constant(value_float=0.5)), to=7)
        halves = op.Expand(op.Constant(value_float=1.0), op.Concat(b, floor_half, axis=0))
        td = op.Cast(op.Shape(x, start=1, end=2), to=11)
        nd = op.Cast(op.Floor((td - op.Constant(value=np.array(64.0))) / op.Constant(value=np.array(16.0))), to=7) \
            + op.Constant(value_ints=[1])
        wide = op.Expand(op.Constant(value_float=1.0), op.Concat(b, op.Relu(nd), axis=0))
        return spec, halved, thirds, wide, halves

    m = frontend.to_model_proto()
    sizes = list(AUDIO_SIZES)
    yield _script_entry("float_frames_onnxscript", m, sizes,
                        note="frames = (T - 64)//16 + 1 in float32 and float64; Resize to round((frames + 1)/2) "
                             "and round((frames + 1)/3) frames, half to even; floor(frames/2).", ranks=(3, 3, 3, 2, 2))


@maker
def float_anchor_grid_onnxscript():
    """A detector's post-process in onnxscript: the stride ``image_h / feature_h`` computed in
    float, an anchor grid ``Range(0.0, float(H)) * stride`` (and W), boxes for each cell, and a
    top-k of ``min(100, floor(H*W * 0.25))`` scores. Inputs: the image [B, 3, IH, IW] and the
    feature map [B, 5, H, W]."""
    script, op, FLOAT = _onnxscript().script, globals()["op"], globals()["FLOAT"]

    @script()
    def anchors(image: FLOAT["B", 3, "IH", "IW"], feat: FLOAT["B", 5, "H", "W"]):
        ih = op.Cast(op.Shape(image, start=2, end=3), to=1)
        h = op.Cast(op.Shape(feat, start=2, end=3), to=1)
        w = op.Cast(op.Shape(feat, start=3, end=4), to=1)
        stride = op.Squeeze(ih / h)
        ys = op.Range(op.Constant(value_float=0.0), op.Squeeze(h), op.Constant(value_float=1.0)) * stride
        xs = op.Range(op.Constant(value_float=0.0), op.Squeeze(w), op.Constant(value_float=1.0)) * stride
        grid_y = op.Expand(op.Unsqueeze(ys, op.Constant(value_ints=[1])), op.Concat(op.Shape(ys), op.Shape(xs), axis=0))
        grid_x = op.Expand(op.Unsqueeze(xs, op.Constant(value_ints=[0])), op.Concat(op.Shape(ys), op.Shape(xs), axis=0))
        centers = op.Reshape(op.Concat(op.Unsqueeze(grid_x, op.Constant(value_ints=[2])),
                                       op.Unsqueeze(grid_y, op.Constant(value_ints=[2])), axis=2),
                             op.Constant(value_ints=[-1, 2]))  # [H*W, 2]
        scores = op.Flatten(op.ReduceMax(feat, op.Constant(value_ints=[1]), keepdims=0), axis=1)  # [B, H*W]
        cells = op.Cast(op.Shape(scores, start=1, end=2), to=1)
        k = op.Min(op.Cast(op.Floor(cells * op.Constant(value_float=0.25)), to=7), op.Constant(value_ints=[100]))
        top, idx = op.TopK(scores, k, axis=1)
        boxes = op.Gather(centers, idx, axis=0)  # [B, k, 2]
        return centers, top, boxes

    sizes = [{"B": 1, "IH": 32, "IW": 32, "H": 4, "W": 4}, {"B": 2, "IH": 40, "IW": 24, "H": 5, "W": 3},
             {"B": 1, "IH": 64, "IW": 96, "H": 8, "W": 12}, {"B": 1, "IH": 7, "IW": 7, "H": 1, "W": 1},
             {"B": 1, "IH": 640, "IW": 640, "H": 40, "W": 40}]
    yield _script_entry("float_anchor_grid_onnxscript", anchors.to_model_proto(), sizes,
                        note="H*W anchors from float Ranges; k = min(100, floor(H*W * 0.25)).", ranks=(2, 2, 3))
