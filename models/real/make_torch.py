"""Torch architectures not in models/, each exported with both of torch's exporters
(TorchScript: dynamo=False, opset 17, dynamic_axes; dynamo: dynamo=True, dynamic_shapes).
DeBERTa-v2 and MobileViT are the transformers library's own modules with a tiny random
config built in code; the UNet, the Mamba-like scan and the encoder-decoder with a cache
are small modules written here (random weights, torch.manual_seed(0)). Used by make_real.py."""

from __future__ import annotations

import os
import tempfile
import warnings

import onnx
from corpus import entry

MAKERS = []


def maker(fn):
    MAKERS.append(fn)
    return fn


def _source(part, exporter, extra=None, script="make_torch.py"):
    import torch

    s = {"kind": "converter", "converter": f"torch.onnx.export({exporter})", "version": torch.__version__,
         "script": f"models/real/{script}:{part}"}
    if exporter == "dynamo":
        import onnxscript

        s["onnxscript"] = onnxscript.__version__
    s.update(extra or {})
    return s


def export_one(module, args, inputs, outputs, axes, exporter):
    """Export with one exporter; ``axes``: input name -> {axis: symbol name}. Returns the model
    with every graph input's dim_params renamed to the names in ``axes``."""
    import torch

    path = os.path.join(tempfile.mkdtemp(), "m.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "TorchScript":
            torch.onnx.export(module, args, path, input_names=inputs, output_names=outputs, opset_version=17,
                              dynamic_axes=axes, dynamo=False)
        else:
            syms = {}
            shapes = tuple({a: syms.setdefault(s, torch.export.Dim(s, min=2, max=4096))
                            for a, s in axes.get(n, {}).items()} for n in inputs)
            torch.onnx.export(module, args, path, input_names=inputs, output_names=outputs,
                              dynamic_shapes=shapes, dynamo=True, external_data=False)
    m = onnx.load(path)
    for inp in m.graph.input:
        for a, s in axes.get(inp.name, {}).items():
            d = inp.type.tensor_type.shape.dim[a]
            d.Clear()
            d.dim_param = s
    return m


def export_both(name, part, module, args, inputs, outputs, axes, sizes, feeds=None, extra=None, script="make_torch.py",
                exporters=("TorchScript", "dynamo")):
    """Export ``module`` with each exporter; yields (model, manifest entry). The dynamo exporter's
    per-node stack traces (metadata_props: most of the file, no shape in them) are dropped."""
    module.eval()
    for exporter, tag in (("TorchScript", "ts"), ("dynamo", "dynamo")):
        if exporter not in exporters:
            continue
        m = export_one(module, args, inputs, outputs, axes, exporter)
        for n in m.graph.node:
            del n.metadata_props[:]
        init = {t.name for t in m.graph.initializer}
        shapes = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
                  for i in m.graph.input if i.name not in init}
        group = "torch TorchScript" if tag == "ts" else "torch dynamo"
        yield m, entry(f"{name}_{tag}", group, _source(part, exporter, extra, script), shapes, sizes, feeds=feeds)


# ---------------------------------------------------------------- UNet

@maker
def unet():
    import torch
    from torch import nn

    torch.manual_seed(0)

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())

    class UNet(nn.Module):
        """Two poolings down, two transposed convs up; the skips are concatenated, so
        height and width must be divisible by 4."""

        def __init__(self):
            super().__init__()
            self.d1, self.d2, self.mid = block(3, 8), block(8, 16), block(16, 32)
            self.u2, self.c2 = nn.ConvTranspose2d(32, 16, 2, stride=2), block(32, 16)
            self.u1, self.c1 = nn.ConvTranspose2d(16, 8, 2, stride=2), block(16, 8)
            self.head = nn.Conv2d(8, 2, 1)

        def forward(self, x):
            a = self.d1(x)
            b = self.d2(nn.functional.max_pool2d(a, 2))
            c = self.mid(nn.functional.max_pool2d(b, 2))
            b = self.c2(torch.cat([self.u2(c), b], 1))
            a = self.c1(torch.cat([self.u1(b), a], 1))
            return self.head(a)

    yield from export_both("unet", "unet", UNet(), (torch.randn(2, 3, 32, 48),), ["image"], ["mask"],
                           {"image": {0: "batch", 2: "height", 3: "width"}},
                           [{"batch": 1, "height": 32, "width": 48}, {"batch": 2, "height": 24, "width": 16}])


# ---------------------------------------------------------------- Mamba-like scan

@maker
def mamba_like():
    import torch
    from torch import nn

    torch.manual_seed(0)

    class MambaBlock(nn.Module):
        """A selective state-space block: in-projection, causal depthwise conv (pad then cut to
        the sequence length), input-dependent dt, B, C, and the scan as cumulative sums of
        log-decays (the parallel form of h_t = a_t h_{t-1} + b_t x_t)."""

        def __init__(self, d=16, state=4, expand=2, conv=4):
            super().__init__()
            e = d * expand
            self.inp = nn.Linear(d, 2 * e)
            self.conv = nn.Conv1d(e, e, conv, groups=e, padding=conv - 1)
            self.x_proj = nn.Linear(e, 1 + 2 * state)
            self.dt = nn.Linear(1, e)
            self.a_log = nn.Parameter(torch.randn(e, state))
            self.out = nn.Linear(e, d)
            self.state = state

        def forward(self, x):
            seq = x.shape[1]
            u, z = self.inp(x).chunk(2, dim=-1)
            u = self.conv(u.transpose(1, 2))[..., :seq].transpose(1, 2)
            u = nn.functional.silu(u)
            dt, b, c = self.x_proj(u).split([1, self.state, self.state], dim=-1)
            dt = nn.functional.softplus(self.dt(dt))                       # (B, L, E)
            log_a = -torch.exp(self.a_log)[None, None] * dt[..., None]     # (B, L, E, N)
            cum = torch.cumsum(log_a, dim=1)
            bx = (dt * u)[..., None] * b[:, :, None, :]                    # (B, L, E, N)
            h = torch.exp(cum) * torch.cumsum(bx * torch.exp(-cum), dim=1)
            y = (h * c[:, :, None, :]).sum(-1)
            return self.out(y * nn.functional.silu(z))

    class Mamba(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(64, 16)
            self.layers = nn.ModuleList([MambaBlock(), MambaBlock()])
            self.head = nn.Linear(16, 64)

        def forward(self, tokens):
            x = self.emb(tokens)
            for layer in self.layers:
                x = x + layer(x)
            return self.head(x)

    yield from export_both("mamba_like", "mamba_like", Mamba(), (torch.ones(2, 7, dtype=torch.long),), ["tokens"],
                           ["logits"], {"tokens": {0: "batch", 1: "seq"}},
                           [{"batch": 1, "seq": 5}, {"batch": 3, "seq": 12}], feeds={"tokens": {"int": [0, 64]}})


# ---------------------------------------------------------------- encoder-decoder with a cache

@maker
def encoder_decoder_cache():
    import torch
    from torch import nn

    torch.manual_seed(0)
    d, heads = 32, 4

    def split(t):
        b, n, _ = t.shape
        return t.reshape(b, n, heads, d // heads).transpose(1, 2)

    def attend(q, k, v, causal_from=None):
        s = q @ k.transpose(-1, -2) / (d // heads) ** 0.5
        if causal_from is not None:  # query i sees keys up to past + i
            qn, kn = q.shape[2], k.shape[2]
            mask = torch.arange(kn)[None, :] > (torch.arange(qn)[:, None] + (kn - qn))
            s = s.masked_fill(mask, float("-inf"))
        o = s.softmax(-1) @ v
        b, h, n, e = o.shape
        return o.transpose(1, 2).reshape(b, n, h * e)

    class EncDec(nn.Module):
        """Encoder over src; one decoder layer over tgt with a self-attention cache (past) and
        cross-attention on the encoder output."""

        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, d)
            self.pos = nn.Embedding(128, d)
            self.eq, self.ek, self.ev = (nn.Linear(d, d) for _ in range(3))
            self.eff = nn.Sequential(nn.Linear(d, 64), nn.GELU(), nn.Linear(64, d))
            self.enorm = nn.LayerNorm(d)
            self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
            self.cq, self.ck, self.cv = (nn.Linear(d, d) for _ in range(3))
            self.norm = nn.LayerNorm(d)
            self.head = nn.Linear(d, 50)

        def forward(self, src, tgt, past_k, past_v):
            h = self.emb(src)
            h = h + attend(split(self.eq(h)), split(self.ek(h)), split(self.ev(h)))
            memory = self.enorm(h + self.eff(h))
            past = past_k.shape[2]
            positions = torch.arange(past, past + tgt.shape[1])
            x = self.emb(tgt) + self.pos(positions)[None]
            k = torch.cat([past_k, split(self.k(x))], 2)
            v = torch.cat([past_v, split(self.v(x))], 2)
            x = self.norm(x + self.o(attend(split(self.q(x)), k, v, causal_from=past)))
            x = x + attend(split(self.cq(x)), split(self.ck(memory)), split(self.cv(memory)))
            return self.head(x), k, v

    args = (torch.ones(2, 6, dtype=torch.long), torch.ones(2, 3, dtype=torch.long),
            torch.randn(2, heads, 4, d // heads), torch.randn(2, heads, 4, d // heads))
    axes = {"src": {0: "batch", 1: "src_len"}, "tgt": {0: "batch", 1: "tgt_len"},
            "past_k": {0: "batch", 2: "past"}, "past_v": {0: "batch", 2: "past"}}
    yield from export_both("encdec_cache", "encoder_decoder_cache", EncDec(), args, ["src", "tgt", "past_k", "past_v"],
                           ["logits", "present_k", "present_v"], axes,
                           [{"batch": 1, "src_len": 5, "tgt_len": 2, "past": 3},
                            {"batch": 2, "src_len": 9, "tgt_len": 4, "past": 7}],
                           feeds={"src": {"int": [0, 50]}, "tgt": {"int": [0, 50]}})


# ---------------------------------------------------------------- transformers: DeBERTa-v2, MobileViT

def _hf(extra):
    import transformers

    return {"library": f"transformers {transformers.__version__}", **extra}


@maker
def deberta():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.DebertaV2Config(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                       intermediate_size=64, max_position_embeddings=64, relative_attention=True,
                                       position_buckets=16, max_relative_positions=64, pos_att_type=["p2c", "c2p"],
                                       position_biased_input=False, norm_rel_ebd="layer_norm", share_att_key=True)
    model = transformers.DebertaV2Model(cfg)

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    args = (torch.ones(2, 7, dtype=torch.long), torch.ones(2, 7, dtype=torch.long))
    yield from export_both("deberta_v2", "deberta", Wrap(), args, ["input_ids", "attention_mask"], ["hidden"],
                           {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
                           [{"batch": 1, "seq": 5}, {"batch": 3, "seq": 13}], feeds={"input_ids": {"int": [0, 64]}},
                           extra=_hf({"config": "DebertaV2Config, tiny, in make_torch.py"}))


def _mobilevit():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.MobileViTConfig(image_size=64, patch_size=2, hidden_sizes=[16, 24, 32],
                                       neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64], num_attention_heads=2,
                                       mlp_ratio=2.0, expand_ratio=2.0, num_labels=5)
    model = transformers.MobileViTForImageClassification(cfg)

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, pixel_values):
            return self.m(pixel_values=pixel_values).logits

    return Wrap().eval()


@maker
def mobilevit():
    import torch

    # Both exporters fix the image size (the patch unfolding computes it in Python): batch only.
    yield from export_both("mobilevit", "mobilevit", _mobilevit(), (torch.randn(2, 3, 64, 64),), ["pixel_values"], ["logits"],
                           {"pixel_values": {0: "batch"}}, [{"batch": 1}, {"batch": 3}],
                           extra=_hf({"config": "MobileViTConfig, tiny, in make_torch.py"}))


@maker
def mobilevit_hw():
    """The same model with the image's height and width symbolic too (TorchScript). The trace
    keeps the patch unfolding's sizes, ``ceil(h / 2) * 2`` in float32; it runs where h and w are
    multiples of 32 (no interpolation: the branch the trace took)."""
    import torch

    axes = {"pixel_values": {0: "batch", 2: "height", 3: "width"}}
    m = export_one(_mobilevit(), (torch.randn(2, 3, 64, 96),), ["pixel_values"], ["logits"], axes, "TorchScript")
    yield m, entry("mobilevit_hw_ts", "torch TorchScript",
                   _source("mobilevit_hw", "TorchScript", _hf({"config": "MobileViTConfig, tiny, in make_torch.py"})),
                   {"pixel_values": ["batch", 3, "height", "width"]},
                   [{"batch": 1, "height": 64, "width": 96}, {"batch": 2, "height": 128, "width": 64}])
