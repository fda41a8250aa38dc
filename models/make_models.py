#!/usr/bin/env python
"""(Re)generate the small real ONNX test models in this folder.

Usage:
    python models/make_models.py            # export + check
    python models/make_models.py --check    # only check existing files
    python models/make_models.py --only bert_tiny,edge

Needs torch (and onnxscript for the dynamo exporter), onnx and onnxruntime.
The test-suite itself only needs the produced .onnx files, not torch.

Every torch model is exported twice:
  <model>_ts.onnx      TorchScript exporter (dynamo=False, opset 17, dynamic_axes)
  <model>_dynamo.onnx  dynamo exporter (dynamo=True, default opset, dynamic_shapes
                       with torch.export.Dim)
The dim_params of the graph inputs are always the symbol names listed in
README.md (batch, seq, past, height, width).  For dynamo exports the
exporter's own symbol names (s0, s1, ...) are renamed to those names everywhere
in the model (inputs, outputs, value_info; also inside expressions such as
"s1 + s2", which become "past + seq").

Known export failures / skips: none; every model exports with both exporters.
Workarounds that were needed (torch 2.13):
  * cnn_tiny, dynamo: a MaxPool2d(3, stride=2, ceil_mode=True) directly on the
    (dilated, depthwise) conv output made torch.export fail with
    "AssertionError: Expected op to be '==', got < for
    (-2) + 2*(((1/4)*width) // 2) < (1/4)*width" while solving the ceil-mode
    guard.  The ceil-mode pool now follows the x2 nearest upsample (even input
    size), which exports fine.  Image dims also need Dim(min=16).
  * cnn_tiny: a BatchNorm2d right after a Conv2d is folded into the conv by
    both exporters, so bn2 is placed after a ReLU to keep a
    BatchNormalization node in the graph.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))

TS_OPSET = 17
EDGE_OPSET = 17

# --------------------------------------------------------------------------
# Model configs (tiny on purpose)
# --------------------------------------------------------------------------
VOCAB = 128
HIDDEN = 64
HEADS = 4
LAYERS = 2
FFN = 128
MAX_POS = 64

LLAMA_HEADS = 4
LLAMA_KV_HEADS = 2
LLAMA_HEAD_DIM = HIDDEN // LLAMA_HEADS

# Per-file description of the graph inputs, used by the checker: name ->
# (kind, [dims]) where a dim is an int or a symbol name.
SPECS: dict[str, dict[str, tuple[str, list]]] = {
    "bert_tiny": {
        "input_ids": ("ids", ["batch", "seq"]),
        "attention_mask": ("mask", ["batch", "seq"]),
    },
    "gpt_tiny": {
        "input_ids": ("ids", ["batch", "seq"]),
    },
    "llama_tiny": {
        "input_ids": ("ids", ["batch", "seq"]),
        **{
            f"past_{kv}_{i}": ("float", ["batch", LLAMA_KV_HEADS, "past", LLAMA_HEAD_DIM])
            for i in range(LAYERS)
            for kv in ("key", "value")
        },
    },
    "cnn_tiny": {
        "image": ("float", ["batch", 3, "height", "width"]),
    },
    "swin_tiny": {
        "image": ("float", ["batch", 3, "height", "width"]),
    },
    "vit_tiny": {
        "image": ("float", ["batch", 3, "height", "width"]),
    },
    "whisper_tiny": {
        "mel": ("float", ["batch", 8, "frames"]),
        "input_ids": ("ids", ["batch", "seq"]),
        "past_key": ("float", ["batch", 4, "past", 12]),
        "past_value": ("float", ["batch", 4, "past", 12]),
    },
    "t5_tiny": {
        "input_ids": ("ids", ["batch", "seq"]),
        "attention_mask": ("mask", ["batch", "seq"]),
    },
}

# Two concrete bindings of every symbol, used to prove the models are dynamic.
SIZES = [
    {"batch": 2, "seq": 5, "past": 3, "height": 32, "width": 32, "frames": 20},
    {"batch": 3, "seq": 11, "past": 6, "height": 48, "width": 64, "frames": 37},
]


# --------------------------------------------------------------------------
# Torch models
# --------------------------------------------------------------------------
def torch_models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class MHA(nn.Module):
        """Explicit multi-head self-attention (view/transpose/matmul/softmax)."""

        def __init__(self, hidden, heads):
            super().__init__()
            self.heads = heads
            self.head_dim = hidden // heads
            self.q = nn.Linear(hidden, hidden)
            self.k = nn.Linear(hidden, hidden)
            self.v = nn.Linear(hidden, hidden)
            self.o = nn.Linear(hidden, hidden)

        def split(self, t):
            b, s = t.size(0), t.size(1)
            return t.view(b, s, self.heads, self.head_dim).transpose(1, 2)

        def forward(self, x, add_mask):
            b, s, h = x.size()
            q = self.split(self.q(x))
            k = self.split(self.k(x))
            v = self.split(self.v(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / (self.head_dim**0.5)
            scores = scores + add_mask
            probs = torch.softmax(scores, dim=-1)
            ctx = torch.matmul(probs, v)  # [b, heads, s, hd]
            ctx = ctx.transpose(1, 2).contiguous().view(b, s, h)
            return self.o(ctx)

    class EncoderLayer(nn.Module):
        def __init__(self, hidden, heads, ffn):
            super().__init__()
            self.attn = MHA(hidden, heads)
            self.ln1 = nn.LayerNorm(hidden)
            self.fc1 = nn.Linear(hidden, ffn)
            self.fc2 = nn.Linear(ffn, hidden)
            self.ln2 = nn.LayerNorm(hidden)

        def forward(self, x, add_mask):
            x = self.ln1(x + self.attn(x, add_mask))
            x = self.ln2(x + self.fc2(F.gelu(self.fc1(x))))
            return x

    class BertTiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, HIDDEN)
            self.pos = nn.Embedding(MAX_POS, HIDDEN)
            self.typ = nn.Embedding(2, HIDDEN)
            self.ln = nn.LayerNorm(HIDDEN)
            self.layers = nn.ModuleList([EncoderLayer(HIDDEN, HEADS, FFN) for _ in range(LAYERS)])
            self.pool = nn.Linear(HIDDEN, HIDDEN)

        def forward(self, input_ids, attention_mask):
            seq = input_ids.size(1)
            pos_ids = torch.arange(seq, dtype=torch.long, device=input_ids.device).unsqueeze(0)
            type_ids = torch.zeros_like(input_ids)
            x = self.tok(input_ids) + self.pos(pos_ids) + self.typ(type_ids)
            x = self.ln(x)
            # [batch, seq] -> additive [batch, 1, 1, seq]
            add_mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
            for layer in self.layers:
                x = layer(x, add_mask)
            pooled = torch.tanh(self.pool(x[:, 0]))
            return x, pooled

    class GptBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(HIDDEN)
            self.attn = MHA(HIDDEN, HEADS)
            self.ln2 = nn.LayerNorm(HIDDEN)
            self.fc1 = nn.Linear(HIDDEN, 4 * HIDDEN)
            self.fc2 = nn.Linear(4 * HIDDEN, HIDDEN)

        def forward(self, x, add_mask):
            x = x + self.attn(self.ln1(x), add_mask)
            x = x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
            return x

    class GptTiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, HIDDEN)
            self.wpe = nn.Embedding(MAX_POS, HIDDEN)
            self.blocks = nn.ModuleList([GptBlock() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(HIDDEN)
            self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

        def forward(self, input_ids):
            seq = input_ids.size(1)
            pos = torch.arange(seq, dtype=torch.long, device=input_ids.device)
            x = self.wte(input_ids) + self.wpe(pos)[None]
            causal = torch.triu(torch.ones(seq, seq, device=x.device), diagonal=1).bool()
            add_mask = torch.zeros(seq, seq, dtype=x.dtype, device=x.device).masked_fill(
                causal, float("-inf")
            )
            for blk in self.blocks:
                x = blk(x, add_mask)
            return self.lm_head(self.ln_f(x))

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    def rotate_half(x):
        half = x.size(-1) // 2
        x1 = x[..., :half]
        x2 = x[..., half:]
        return torch.cat((-x2, x1), dim=-1)

    class LlamaAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.h = LLAMA_HEADS
            self.kvh = LLAMA_KV_HEADS
            self.hd = LLAMA_HEAD_DIM
            self.q = nn.Linear(HIDDEN, self.h * self.hd, bias=False)
            self.k = nn.Linear(HIDDEN, self.kvh * self.hd, bias=False)
            self.v = nn.Linear(HIDDEN, self.kvh * self.hd, bias=False)
            self.o = nn.Linear(self.h * self.hd, HIDDEN, bias=False)

        def forward(self, x, cos, sin, add_mask, past_k, past_v):
            b, s = x.size(0), x.size(1)
            q = self.q(x).view(b, s, self.h, self.hd).transpose(1, 2)
            k = self.k(x).view(b, s, self.kvh, self.hd).transpose(1, 2)
            v = self.v(x).view(b, s, self.kvh, self.hd).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k = torch.cat([past_k, k], dim=2)  # [b, kvh, past+seq, hd]
            v = torch.cat([past_v, v], dim=2)
            present_k, present_v = k, v
            total = k.size(2)
            n_rep = self.h // self.kvh
            # GQA: expand + reshape (the repeat_kv pattern of HF llama)
            k = k[:, :, None, :, :].expand(b, self.kvh, n_rep, total, self.hd)
            k = k.reshape(b, self.kvh * n_rep, total, self.hd)
            v = v[:, :, None, :, :].expand(b, self.kvh, n_rep, total, self.hd)
            v = v.reshape(b, self.kvh * n_rep, total, self.hd)
            scores = torch.matmul(q, k.transpose(2, 3)) / (self.hd**0.5) + add_mask
            probs = torch.softmax(scores, dim=-1)
            out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, self.h * self.hd)
            return self.o(out), present_k, present_v

    class LlamaBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1 = RMSNorm(HIDDEN)
            self.attn = LlamaAttention()
            self.n2 = RMSNorm(HIDDEN)
            self.gate = nn.Linear(HIDDEN, FFN, bias=False)
            self.up = nn.Linear(HIDDEN, FFN, bias=False)
            self.down = nn.Linear(FFN, HIDDEN, bias=False)

        def forward(self, x, cos, sin, add_mask, pk, pv):
            a, k, v = self.attn(self.n1(x), cos, sin, add_mask, pk, pv)
            x = x + a
            h = self.n2(x)
            x = x + self.down(F.silu(self.gate(h)) * self.up(h))
            return x, k, v

    class LlamaTiny(nn.Module):
        def __init__(self, layers=LAYERS):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, HIDDEN)
            self.blocks = nn.ModuleList([LlamaBlock() for _ in range(layers)])
            self.norm = RMSNorm(HIDDEN)
            self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
            inv_freq = 1.0 / (
                10000.0 ** (torch.arange(0, LLAMA_HEAD_DIM, 2, dtype=torch.float32) / LLAMA_HEAD_DIM)
            )
            self.register_buffer("inv_freq", inv_freq, persistent=False)

        def forward(self, input_ids, *past_kv):  # past_key_0, past_value_0, past_key_1, ...
            seq = input_ids.size(1)
            past = past_kv[0].size(2)
            x = self.embed(input_ids)
            # rotary embeddings from positions past .. past+seq-1
            pos = torch.arange(seq, device=x.device).to(torch.float32) + past
            freqs = pos[:, None] * self.inv_freq[None, :]  # [seq, hd/2]
            emb = torch.cat([freqs, freqs], dim=-1)  # [seq, hd]
            cos = emb.cos()[None, None]
            sin = emb.sin()[None, None]
            # causal mask [seq, past+seq]: query i may see key j iff j <= past + i
            qi = torch.arange(seq, device=x.device)[:, None] + past
            kj = torch.arange(past + seq, device=x.device)[None, :]
            add_mask = torch.zeros(seq, past + seq, dtype=x.dtype, device=x.device).masked_fill(
                kj > qi, float("-inf")
            )
            pasts = list(zip(past_kv[0::2], past_kv[1::2]))
            presents = []
            for blk, (pk, pv) in zip(self.blocks, pasts):
                x, k, v = blk(x, cos, sin, add_mask, pk, pv)
                presents += [k, v]
            logits = self.lm_head(self.norm(x))
            return (logits, *presents)

    class CnnTiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
            self.bn1 = nn.BatchNorm2d(16)
            self.pool1 = nn.MaxPool2d(3, stride=2, padding=1)
            self.dw = nn.Conv2d(16, 16, 3, padding=2, dilation=2, groups=16)
            self.bn2 = nn.BatchNorm2d(16)
            self.pw = nn.Conv2d(16, 32, 1)
            self.pool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
            self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
            self.gap = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(32, 10)

        def forward(self, image):
            # bn1 directly after a conv is folded into it by both exporters;
            # bn2 sits after a ReLU so a BatchNormalization node survives
            x = self.pool1(F.relu(self.bn1(self.conv1(image))))
            x = self.bn2(F.relu(self.dw(x)))
            x = F.relu(self.pw(x))
            x = F.interpolate(x, scale_factor=2.0, mode="nearest")
            # ceil_mode pool after the upsample: ceil((2h - 3) / 2) + 1 differs
            # from floor mode.  (Placed before the upsample, torch.export fails
            # on the ceil-mode guard: "Expected op to be '==', got <".)
            x = self.pool2(x)
            x = F.relu(self.conv3(x))
            x = torch.flatten(self.gap(x), 1)
            return self.fc(x)

    def init_bn(m):
        # non-trivial running statistics so BatchNorm is not an identity
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                with torch.no_grad():
                    mod.running_mean.uniform_(-0.1, 0.1)
                    mod.running_var.uniform_(0.5, 1.5)
        return m

    return {
        "bert_tiny": BertTiny,
        "gpt_tiny": GptTiny,
        "llama_tiny": LlamaTiny,
        "cnn_tiny": lambda: init_bn(CnnTiny()),
    }


# Geometry of the models added for windowed / interpolated / cached / bucketed
# attention patterns (swin_tiny, vit_tiny, whisper_tiny, t5_tiny).
SWIN_DIM = 32
SWIN_WINDOW = 3
VIT_DIM = 32
VIT_PATCH = 2  # small enough for the 2..9 sizes onnxsym.commands.verify tries
VIT_GRID = 4  # position table size (interpolated to every other grid)
WHISPER_DIM = 48
WHISPER_HEADS = 4
WHISPER_MELS = 8
T5_BUCKETS = 16
T5_MAX_DISTANCE = 32


def _attention_models():
    """Models whose shape logic lives in the graph: windows padded to a
    multiple, interpolated position tables, a KV cache beside cross-attention,
    and log-bucketed relative positions."""
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Attention(nn.Module):
        """Multi-head attention; keys/values from ``memory`` (self-attention
        when it is ``x``), optionally after a cached ``past`` (k, v)."""

        def __init__(self, dim, heads, scale=True):
            super().__init__()
            self.heads, self.hd = heads, dim // heads
            self.scale = self.hd**-0.5 if scale else 1.0
            self.q = nn.Linear(dim, dim)
            self.k = nn.Linear(dim, dim)
            self.v = nn.Linear(dim, dim)
            self.o = nn.Linear(dim, dim)

        def split(self, t):
            return t.view(t.size(0), t.size(1), self.heads, self.hd).transpose(1, 2)

        def forward(self, x, memory, bias=None, past=None):
            q = self.split(self.q(x))
            k = self.split(self.k(memory))
            v = self.split(self.v(memory))
            if past is not None:
                k = torch.cat([past[0], k], dim=2)
                v = torch.cat([past[1], v], dim=2)
            scores = torch.matmul(q, k.transpose(-1, -2)) * self.scale
            if bias is not None:
                scores = scores + bias
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
            ctx = ctx.transpose(1, 2).reshape(x.size(0), x.size(1), -1)
            return self.o(ctx), (k, v)

    class Block(nn.Module):
        """Pre-LN transformer block (self-attention, optional cross-attention, MLP)."""

        def __init__(self, dim, heads, cross=False, scale=True):
            super().__init__()
            self.ln1 = nn.LayerNorm(dim)
            self.attn = Attention(dim, heads, scale)
            self.cross = Attention(dim, heads) if cross else None
            self.ln_c = nn.LayerNorm(dim) if cross else None
            self.ln2 = nn.LayerNorm(dim)
            self.fc1 = nn.Linear(dim, 2 * dim)
            self.fc2 = nn.Linear(2 * dim, dim)

        def forward(self, x, bias=None, past=None, memory=None):
            h = self.ln1(x)
            a, present = self.attn(h, h, bias, past)
            x = x + a
            if self.cross is not None:
                x = x + self.cross(self.ln_c(x), memory)[0]
            x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
            return x, present

    def window_partition(x, w):
        """[b, H, W, c] (H, W multiples of w) -> [b * H/w * W/w, w*w, c]."""
        b, hh, ww, c = x.shape
        x = x.view(b, hh // w, w, ww // w, w, c).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(-1, w * w, c)

    def window_reverse(x, w, b, hh, ww):
        c = x.size(-1)
        x = x.view(b, hh // w, ww // w, w, w, c).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(b, hh, ww, c)

    class SwinBlock(nn.Module):
        def __init__(self, dim, heads, shift):
            super().__init__()
            self.shift = shift
            self.block = Block(dim, heads)
            # relative position bias of the window (static: w*w x w*w)
            self.rel_bias = nn.Parameter(0.02 * torch.randn(heads, SWIN_WINDOW**2, SWIN_WINDOW**2))

        def forward(self, x):  # [b, H, W, c]
            w = SWIN_WINDOW
            b, hh, ww, c = x.shape
            # pad H and W up to a multiple of the window, computed in the graph
            x = F.pad(x, (0, 0, 0, (w - ww % w) % w, 0, (w - hh % w) % w))
            hp, wp = x.size(1), x.size(2)
            if self.shift:
                x = torch.roll(x, shifts=(-(w // 2), -(w // 2)), dims=(1, 2))
            win = self.block(window_partition(x, w), self.rel_bias[None])[0]
            x = window_reverse(win, w, b, hp, wp)
            if self.shift:
                x = torch.roll(x, shifts=(w // 2, w // 2), dims=(1, 2))
            return x[:, :hh, :ww, :].contiguous()

    class PatchMerging(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm = nn.LayerNorm(4 * dim)
            self.reduce = nn.Linear(4 * dim, 2 * dim, bias=False)

        def forward(self, x):  # [b, H, W, c] -> [b, ceil(H/2), ceil(W/2), 2c]
            hh, ww = x.size(1), x.size(2)
            x = F.pad(x, (0, 0, 0, ww % 2, 0, hh % 2))
            x = torch.cat(
                [x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], dim=-1
            )
            return self.reduce(self.norm(x))

    class SwinTiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Conv2d(3, SWIN_DIM, 4, stride=4)
            self.ln = nn.LayerNorm(SWIN_DIM)
            self.stage1 = nn.Sequential(SwinBlock(SWIN_DIM, 2, False), SwinBlock(SWIN_DIM, 2, True))
            self.merge = PatchMerging(SWIN_DIM)
            self.stage2 = SwinBlock(2 * SWIN_DIM, 4, False)
            self.ln_f = nn.LayerNorm(2 * SWIN_DIM)
            self.head = nn.Linear(2 * SWIN_DIM, 10)

        def forward(self, image):
            # pad the image to a multiple of the patch size (as HF Swin does)
            hh, ww = image.size(2), image.size(3)
            image = F.pad(image, (0, (4 - ww % 4) % 4, 0, (4 - hh % 4) % 4))
            x = self.ln(self.embed(image).permute(0, 2, 3, 1))  # [b, ceil(H/4), ceil(W/4), c]
            x = self.stage2(self.merge(self.stage1(x)))
            tokens = self.ln_f(x.flatten(1, 2))  # [b, H'*W', 2c]
            return self.head(tokens.mean(1)), tokens

    class VitTiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Conv2d(3, VIT_DIM, VIT_PATCH, stride=VIT_PATCH)
            self.cls = nn.Parameter(0.02 * torch.randn(1, 1, VIT_DIM))
            self.pos = nn.Parameter(0.02 * torch.randn(1, 1 + VIT_GRID * VIT_GRID, VIT_DIM))
            self.blocks = nn.ModuleList([Block(VIT_DIM, 2) for _ in range(2)])
            self.ln = nn.LayerNorm(VIT_DIM)
            self.head = nn.Linear(VIT_DIM, 10)

        def forward(self, image):
            x = self.embed(image)  # [b, c, h, w]
            h, w = x.shape[2], x.shape[3]
            x = x.flatten(2).transpose(1, 2)
            # the position table is resized to the patch grid of this image
            grid = self.pos[:, 1:].reshape(1, VIT_GRID, VIT_GRID, VIT_DIM).permute(0, 3, 1, 2)
            grid = F.interpolate(grid, size=(h, w), mode="bicubic", align_corners=False)
            pos = torch.cat([self.pos[:, :1], grid.flatten(2).transpose(1, 2)], dim=1)
            x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1) + pos
            for blk in self.blocks:
                x = blk(x)[0]
            x = self.ln(x)
            return self.head(x[:, 0]), x

    class WhisperTiny(nn.Module):
        def __init__(self):
            super().__init__()
            d = WHISPER_DIM
            self.conv1 = nn.Conv1d(WHISPER_MELS, d, 3, padding=1)
            self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
            self.enc_pos = nn.Parameter(0.02 * torch.randn(MAX_POS, d))
            self.enc = Block(d, WHISPER_HEADS)
            self.enc_ln = nn.LayerNorm(d)
            self.tok = nn.Embedding(VOCAB, d)
            self.dec_pos = nn.Embedding(MAX_POS, d)
            self.dec = Block(d, WHISPER_HEADS, cross=True)
            self.dec_ln = nn.LayerNorm(d)

        def forward(self, mel, input_ids, past_key, past_value):
            x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).transpose(1, 2)  # [b, T, d]
            x = x + self.enc_pos[: x.size(1)]
            enc = self.enc_ln(self.enc(x)[0])
            seq, past = input_ids.size(1), past_key.size(2)
            pos = torch.arange(past, past + seq, device=mel.device)
            y = self.tok(input_ids) + self.dec_pos(pos)[None]
            qi = torch.arange(seq, device=mel.device)[:, None] + past
            kj = torch.arange(past + seq, device=mel.device)[None, :]
            causal = torch.zeros(seq, past + seq, dtype=y.dtype, device=mel.device)
            causal = causal.masked_fill(kj > qi, float("-inf"))
            y, (k, v) = self.dec(y, causal, (past_key, past_value), enc)
            logits = self.dec_ln(y) @ self.tok.weight.t()
            return logits, k, v, enc

    def t5_buckets(rel):
        """Bidirectional log-bucketed relative positions (T5)."""
        half = T5_BUCKETS // 2
        exact = half // 2
        ret = (rel > 0).to(torch.long) * half
        n = torch.abs(rel)
        large = exact + (
            torch.log(n.float() / exact) / math.log(T5_MAX_DISTANCE / exact) * (half - exact)
        ).to(torch.long)
        large = torch.min(large, torch.full_like(large, half - 1))
        return ret + torch.where(n < exact, n, large)

    class T5Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, HIDDEN)
            self.rel = nn.Embedding(T5_BUCKETS, HEADS)
            self.blocks = nn.ModuleList([Block(HIDDEN, HEADS, scale=False) for _ in range(LAYERS)])
            self.ln = nn.LayerNorm(HIDDEN)

        def forward(self, input_ids, attention_mask):
            seq = input_ids.size(1)
            pos = torch.arange(seq, dtype=torch.long, device=input_ids.device)
            bucket = t5_buckets(pos[None, :] - pos[:, None])  # [seq, seq]
            bias = self.rel(bucket).permute(2, 0, 1)[None]  # [1, heads, seq, seq]
            bias = bias + (1.0 - attention_mask[:, None, None, :].float()) * -1e9
            x = self.tok(input_ids)
            for blk in self.blocks:
                x = blk(x, bias)[0]
            return self.ln(x), bias

    return {
        "swin_tiny": SwinTiny,
        "vit_tiny": VitTiny,
        "whisper_tiny": WhisperTiny,
        "t5_tiny": T5Tiny,
    }


# Output names and the symbolic dims of every output (used for the export
# dynamic_axes, and to name the dynamo outputs).
OUTPUTS = {
    "bert_tiny": {
        "last_hidden_state": ["batch", "seq", HIDDEN],
        "pooled": ["batch", HIDDEN],
    },
    "gpt_tiny": {"logits": ["batch", "seq", VOCAB]},
    "llama_tiny": {
        "logits": ["batch", "seq", VOCAB],
        **{
            f"present_{kv}_{i}": ["batch", LLAMA_KV_HEADS, "past + seq", LLAMA_HEAD_DIM]
            for i in range(LAYERS)
            for kv in ("key", "value")
        },
    },
    "cnn_tiny": {"logits": ["batch", 10]},
    "swin_tiny": {
        "logits": ["batch", 10],
        "tokens": ["batch", "(((height + 3)//4 + 1)//2)*(((width + 3)//4 + 1)//2)", 2 * SWIN_DIM],
    },
    "vit_tiny": {
        "logits": ["batch", 10],
        "tokens": ["batch", "1 + (height//2)*(width//2)", VIT_DIM],
    },
    "whisper_tiny": {
        "logits": ["batch", "seq", VOCAB],
        "present_key": ["batch", WHISPER_HEADS, "past + seq", WHISPER_DIM // WHISPER_HEADS],
        "present_value": ["batch", WHISPER_HEADS, "past + seq", WHISPER_DIM // WHISPER_HEADS],
        "encoder_out": ["batch", "(frames - 1)//2 + 1", WHISPER_DIM],
    },
    "t5_tiny": {
        "last_hidden_state": ["batch", "seq", HIDDEN],
        "position_bias": ["batch", HEADS, "seq", "seq"],
    },
}


def make_inputs(name: str, env: dict[str, int], as_torch=False):
    rng = np.random.default_rng(0)
    feeds = {}
    for inp, (kind, dims) in SPECS[name].items():
        shape = [env[d] if isinstance(d, str) else d for d in dims]
        if kind == "ids":
            arr = rng.integers(0, VOCAB, size=shape, dtype=np.int64)
        elif kind == "mask":
            arr = np.ones(shape, dtype=np.int64)
        else:
            arr = rng.standard_normal(shape).astype(np.float32)
        feeds[inp] = arr
    if as_torch:
        import torch

        return {k: torch.from_numpy(v) for k, v in feeds.items()}
    return feeds


# --------------------------------------------------------------------------
# Export helpers
# --------------------------------------------------------------------------
EXAMPLE = {"batch": 2, "seq": 7, "past": 4, "height": 64, "width": 64, "frames": 30}


def export_ts(name, model, path):
    import torch

    feeds = make_inputs(name, EXAMPLE, as_torch=True)
    dyn = {}
    labels = {}  # TorchScript label of an output dim -> the expression it stands for
    for inp, (_, dims) in SPECS[name].items():
        dyn[inp] = {i: d for i, d in enumerate(dims) if isinstance(d, str)}
    for out, dims in OUTPUTS[name].items():
        # TorchScript only accepts plain names; expressions get their own name
        dyn[out] = {
            i: (d if re.fullmatch(r"\w+", d) else re.sub(r"\W+", "_", d).strip("_"))
            for i, d in enumerate(dims)
            if isinstance(d, str)
        }
        labels.update({lab: dims[i] for i, lab in dyn[out].items() if lab != dims[i]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            tuple(feeds.values()),
            path,
            dynamo=False,
            input_names=list(feeds),
            output_names=list(OUTPUTS[name]),
            dynamic_axes=dyn,
            opset_version=TS_OPSET,
            do_constant_folding=True,
        )
    m = onnx.load(path)
    # labels such as "past_seq" mean nothing to a reader; write the expression
    rename_dim_params(m, labels)
    onnx.save(m, path)


# Smallest size torch.export is told each symbol can take (images must be big
# enough for the pooling windows, else torch.export refuses the range).
DIM_MIN = {"height": 16, "width": 16}
# Largest size, where a position table bounds it (whisper's encoder positions).
DIM_MAX = {"frames": 2 * MAX_POS - 1}


def export_dynamo(name, model, path):
    import torch
    from torch.export import Dim

    feeds = make_inputs(name, EXAMPLE, as_torch=True)
    dims = {}

    def dim(sym):
        if sym not in dims:
            # min=1 so that a concrete size of 1 stays allowed at runtime
            dims[sym] = Dim(sym, min=DIM_MIN.get(sym, 1), max=DIM_MAX.get(sym, 4096))
        return dims[sym]

    dynamic_shapes = {}
    for inp, (_, ds) in SPECS[name].items():
        dynamic_shapes[inp] = {i: dim(d) for i, d in enumerate(ds) if isinstance(d, str)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = torch.onnx.export(
            model,
            (),
            kwargs=feeds,
            dynamo=True,
            input_names=list(feeds),
            output_names=list(OUTPUTS[name]),
            dynamic_shapes=dynamic_shapes,
            external_data=False,
            verbose=False,
        )
    prog.save(path, external_data=False)
    m = onnx.load(path)
    # Map whatever the exporter called the input symbols back to our names.
    mapping = {}
    for inp in m.graph.input:
        if inp.name not in SPECS[name]:
            continue
        want = SPECS[name][inp.name][1]
        got = inp.type.tensor_type.shape.dim
        for w, g in zip(want, got):
            if isinstance(w, str) and g.HasField("dim_param") and g.dim_param != w:
                prev = mapping.setdefault(g.dim_param, w)
                assert prev == w, (name, g.dim_param, prev, w)
    if mapping:
        rename_dim_params(m, mapping)
    onnx.save(m, path)


_TOKEN = re.compile(r"[A-Za-z_]\w*")


def _rename_expr(text, mapping):
    return _TOKEN.sub(lambda mo: mapping.get(mo.group(0), mo.group(0)), text)


def rename_dim_params(m: onnx.ModelProto, mapping: dict[str, str]):
    """Rename symbols in every dim_param (whole tokens, so 's1 + s2' works)."""

    def fix_type(tp):
        if tp.HasField("tensor_type") and tp.tensor_type.HasField("shape"):
            for d in tp.tensor_type.shape.dim:
                if d.HasField("dim_param"):
                    if d.dim_param in mapping:
                        d.dim_param = mapping[d.dim_param]
                    else:
                        d.dim_param = _rename_expr(d.dim_param, mapping)
        elif tp.HasField("sequence_type"):
            fix_type(tp.sequence_type.elem_type)
        elif tp.HasField("optional_type"):
            fix_type(tp.optional_type.elem_type)

    def fix_graph(g):
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            fix_type(vi.type)
        for node in g.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    fix_graph(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sg in a.graphs:
                        fix_graph(sg)

    fix_graph(m.graph)
    for f in m.functions:
        for vi in getattr(f, "value_info", []):
            fix_type(vi.type)


def name_nodes(m: onnx.ModelProto):
    """Make sure every node has a unique non-empty name."""
    seen = set()
    for i, node in enumerate(m.graph.node):
        base = node.name or f"{node.op_type}_{i}"
        nm = base
        k = 0
        while nm in seen:
            k += 1
            nm = f"{base}_{k}"
        node.name = nm
        seen.add(nm)


# --------------------------------------------------------------------------
# Hand-built edge-case graphs
# --------------------------------------------------------------------------
def _i64(name, vals):
    return helper.make_tensor(name, TensorProto.INT64, [len(vals)], vals)


def _i64_scalar(name, v):
    return helper.make_tensor(name, TensorProto.INT64, [], [v])


def _out(name, elem, expected):
    """A graph output of known rank whose dims are all left unknown (no
    dim_value, no dim_param): the annotator has to work them out.  The
    expected answer is kept in doc_string as "expected: [...]"."""
    vi = helper.make_tensor_value_info(name, elem, [None] * len(expected))
    vi.doc_string = "expected: [" + ", ".join(str(d) for d in expected) + "]"
    return vi


def make_edge_shape_arith(path):
    N = helper.make_node
    nodes = [
        N("Shape", ["X"], ["x_shape"], name="shape_x"),
        N("Gather", ["x_shape", "c_idx0"], ["b"], axis=0, name="gather_batch"),
        N("Gather", ["x_shape", "c_idx1"], ["s"], axis=0, name="gather_seq"),
        # Reshape to [batch*seq, 8]
        N("Mul", ["b", "s"], ["bs"], name="mul_batch_seq"),
        N("Unsqueeze", ["bs", "c_axes0"], ["bs_1d"], name="unsq_bs"),
        N("Concat", ["bs_1d", "c_8"], ["shape_bs_8"], axis=0, name="concat_bs_8"),
        N("Reshape", ["X", "shape_bs_8"], ["flat_rows"], name="reshape_rows"),
        # Reshape to [batch, -1] -> [batch, seq*8]
        N("Unsqueeze", ["b", "c_axes0"], ["b_1d"], name="unsq_b"),
        N("Unsqueeze", ["s", "c_axes0"], ["s_1d"], name="unsq_s"),
        N("Concat", ["b_1d", "c_m1"], ["shape_b_m1"], axis=0, name="concat_b_m1"),
        N("Reshape", ["X", "shape_b_m1"], ["flat_cols"], name="reshape_cols"),
        # Slice X[:, 0:seq-1, :] with shape-derived end
        N("Sub", ["s_1d", "c_1"], ["s_minus_1"], name="sub_seq_1"),
        N("Slice", ["X", "c_0", "s_minus_1", "c_1"], ["sliced"], name="slice_seq"),
        # Range(0, seq, 1)
        N("Range", ["c_s0", "s", "c_s1"], ["positions"], name="range_seq"),
        # ConstantOfShape([batch, seq])
        N("Concat", ["b_1d", "s_1d"], ["shape_b_s"], axis=0, name="concat_b_s"),
        N(
            "ConstantOfShape",
            ["shape_b_s"],
            ["ones_bs"],
            value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]),
            name="cos_b_s",
        ),
        # Expand positions [seq] to [batch, seq]
        N("Expand", ["positions", "shape_b_s"], ["pos_expanded"], name="expand_pos"),
        # TorchScript expand(-1) pattern: Equal(shape, -1) -> Where(.., 1, shape) -> Expand
        N("Slice", ["X", "c_0", "c_1", "c_0"], ["first_row"], name="slice_first"),  # [1,seq,8]
        N("Concat", ["b_1d", "c_m1", "c_8"], ["tgt"], axis=0, name="concat_tgt"),
        N("Equal", ["tgt", "c_m1x3"], ["tgt_is_m1"], name="equal_m1"),
        N("Where", ["tgt_is_m1", "c_1x3", "tgt"], ["tgt_fixed"], name="where_m1"),
        N("Expand", ["first_row", "tgt_fixed"], ["first_expanded"], name="expand_first"),
    ]
    inits = [
        _i64_scalar("c_idx0", 0),
        _i64_scalar("c_idx1", 1),
        _i64("c_axes0", [0]),
        _i64("c_8", [8]),
        _i64("c_m1", [-1]),
        _i64("c_0", [0]),
        _i64("c_1", [1]),
        _i64_scalar("c_s0", 0),
        _i64_scalar("c_s1", 1),
        _i64("c_m1x3", [-1, -1, -1]),
        _i64("c_1x3", [1, 1, 1]),
    ]
    X = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", "seq", 8])
    outs = [
        _out("flat_rows", TensorProto.FLOAT, ["batch*seq", 8]),
        _out("flat_cols", TensorProto.FLOAT, ["batch", "seq*8"]),
        _out("sliced", TensorProto.FLOAT, ["batch", "seq - 1", 8]),
        _out("positions", TensorProto.INT64, ["seq"]),
        _out("ones_bs", TensorProto.FLOAT, ["batch", "seq"]),
        _out("pos_expanded", TensorProto.INT64, ["batch", "seq"]),
        _out("first_expanded", TensorProto.FLOAT, ["batch", "seq", 8]),
    ]
    g = helper.make_graph(nodes, "edge_shape_arith", [X], outs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", EDGE_OPSET)],
                          producer_name="onnxsym-make_models")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


def make_edge_concat_pad(path):
    N = helper.make_node
    nodes = [
        N("Concat", ["X", "X"], ["cat"], axis=1, name="concat_xx"),  # [b, 2*seq, 4]
        N("Shape", ["X"], ["x_shape"], name="shape_x"),
        N("Gather", ["x_shape", "c_idx1"], ["s"], axis=0, name="gather_seq"),
        N("Mod", ["s", "c_8"], ["s_mod8"], name="mod_seq_8"),
        N("Sub", ["c_8", "s_mod8"], ["p_raw"], name="sub_8"),
        N("Mod", ["p_raw", "c_8"], ["p"], name="mod_pad_8"),
        N("Unsqueeze", ["p", "c_axes0"], ["p_1d"], name="unsq_pad"),
        # pads = [0, 0, 0, 0, p, 0]
        N("Concat", ["c_zeros4", "p_1d", "c_zero1"], ["pads"], axis=0, name="concat_pads"),
        N("Pad", ["X", "pads", "c_fzero"], ["padded"], mode="constant", name="pad_seq"),
        N("Split", ["padded", "c_split"], ["half_a", "half_b"], axis=-1, name="split_last"),
        N("Transpose", ["half_a"], ["half_a_t"], perm=[0, 2, 1], name="transpose_a"),
        N("Flatten", ["half_a_t"], ["flat_a"], axis=1, name="flatten_a"),
        N("Flatten", ["cat"], ["flat_cat"], axis=2, name="flatten_cat"),
    ]
    inits = [
        _i64_scalar("c_idx1", 1),
        _i64_scalar("c_8", 8),
        _i64("c_axes0", [0]),
        _i64("c_zeros4", [0, 0, 0, 0]),
        _i64("c_zero1", [0]),
        helper.make_tensor("c_fzero", TensorProto.FLOAT, [], [0.0]),
        _i64("c_split", [2, 2]),
    ]
    X = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", "seq", 4])
    padded = "seq + (8 - seq % 8) % 8"
    outs = [
        _out("cat", TensorProto.FLOAT, ["batch", "2*seq", 4]),
        _out("padded", TensorProto.FLOAT, ["batch", padded, 4]),
        _out("half_b", TensorProto.FLOAT, ["batch", padded, 2]),
        _out("half_a_t", TensorProto.FLOAT, ["batch", 2, padded]),
        _out("flat_a", TensorProto.FLOAT, ["batch", f"2*({padded})"]),
        _out("flat_cat", TensorProto.FLOAT, ["batch*2*seq", 4]),
    ]
    g = helper.make_graph(nodes, "edge_concat_pad", [X], outs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", EDGE_OPSET)],
                          producer_name="onnxsym-make_models")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


EDGE = {
    "edge_shape_arith": (make_edge_shape_arith, {"X": ("float", ["batch", "seq", 8])}),
    "edge_concat_pad": (make_edge_concat_pad, {"X": ("float", ["batch", "seq", 4])}),
}
for _k, (_f, _spec) in EDGE.items():
    SPECS[_k] = _spec


# --------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------
def dims_of(vi):
    out = []
    if not vi.type.tensor_type.HasField("shape"):
        return None
    for d in vi.type.tensor_type.shape.dim:
        if d.HasField("dim_param"):
            out.append(d.dim_param)
        elif d.HasField("dim_value"):
            out.append(d.dim_value)
        else:
            out.append("?")
    return out


def expected_shape(vi, env):
    """Concrete shape an output must have at ``env``: from its dims (dim_value,
    or a dim_param expression evaluated with Python semantics), or from the
    "expected: [...]" doc_string of the hand-built graphs.  None if unknown."""
    if vi.doc_string.startswith("expected: "):
        items = vi.doc_string[len("expected: "):].strip()[1:-1].split(", ")
    else:
        d = dims_of(vi)
        if d is None or "?" in d:
            return None
        items = [str(x) for x in d]
    try:
        return [int(eval(t, {"__builtins__": {}}, dict(env))) for t in items]
    except Exception:
        return None


def check_file(path, spec):
    import onnxruntime as ort

    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    assert not any(
        t.data_location == TensorProto.EXTERNAL for t in m.graph.initializer
    ), "external data"
    # inputs must carry the expected dim_params
    for inp in m.graph.input:
        if inp.name in spec:
            want = [d for d in spec[inp.name][1]]
            got = dims_of(inp)
            assert got == want, f"{path}: input {inp.name} dims {got} != {want}"
    names = [n.name for n in m.graph.node]
    assert all(names) and len(set(names)) == len(names), f"{path}: node names not unique"
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    ok = []
    for env in SIZES:
        rng = np.random.default_rng(1)
        feeds = {}
        for inp, (kind, dims) in spec.items():
            shape = [env[d] if isinstance(d, str) else d for d in dims]
            if kind == "ids":
                feeds[inp] = rng.integers(0, VOCAB, size=shape, dtype=np.int64)
            elif kind == "mask":
                feeds[inp] = np.ones(shape, dtype=np.int64)
            else:
                feeds[inp] = rng.standard_normal(shape).astype(np.float32)
        try:
            res = sess.run(None, feeds)
            good = all(np.all(np.isfinite(r)) or r.dtype.kind != "f" for r in res)
            for out, r in zip(m.graph.output, res):
                want = expected_shape(out, env)
                if want is not None and list(r.shape) != want:
                    print(f"  {os.path.basename(path)}: {out.name} has shape "
                          f"{list(r.shape)}, expected {want} at {env}", file=sys.stderr)
                    good = False
            ok.append(good)
        except Exception as e:  # pragma: no cover - reported in the table
            print(f"  {os.path.basename(path)} failed at {env}: {e}", file=sys.stderr)
            ok.append(False)
    return m, ok


def compare_with_torch(name, model, path):
    """Check the ONNX file computes what torch does, at a non-example size."""
    import onnxruntime as ort
    import torch

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    env = SIZES[1]
    feeds = make_inputs(name, env)
    with torch.no_grad():
        ref = model(**{k: torch.from_numpy(v) for k, v in feeds.items()})
    if isinstance(ref, torch.Tensor):
        ref = (ref,)
    got = sess.run(None, feeds)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(r.numpy(), g, rtol=1e-3, atol=1e-4)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only check existing files")
    ap.add_argument("--only", default="", help="comma-separated model names to (re)build")
    args = ap.parse_args(argv)
    only = set(filter(None, args.only.split(",")))

    produced: list[tuple[str, dict]] = []  # (filename, spec)
    failures: list[str] = []

    if not args.check:
        import torch

        torch.manual_seed(0)
        factories = {**torch_models(), **_attention_models()}
        for name, factory in factories.items():
            if only and name not in only:
                continue
            torch.manual_seed(0)
            model = factory().eval()
            for kind, fn in (("ts", export_ts), ("dynamo", export_dynamo)):
                path = os.path.join(HERE, f"{name}_{kind}.onnx")
                print(f"exporting {os.path.basename(path)} ...", flush=True)
                try:
                    fn(name, model, path)
                    m = onnx.load(path)
                    name_nodes(m)
                    onnx.save(m, path)
                    compare_with_torch(name, model, path)
                except Exception as e:
                    if os.path.exists(path):
                        os.remove(path)  # never leave a stale or broken file
                    failures.append(f"{name}_{kind}: {type(e).__name__}: {e}")
                    print(f"  FAILED: {e}", file=sys.stderr)
        for name, (fn, _) in EDGE.items():
            if only and name not in only and "edge" not in only:
                continue
            path = os.path.join(HERE, f"{name}.onnx")
            print(f"building {os.path.basename(path)} ...", flush=True)
            fn(path)

    # check every .onnx file we know about that exists
    for name, spec in SPECS.items():
        for fname in (f"{name}_ts.onnx", f"{name}_dynamo.onnx", f"{name}.onnx"):
            if os.path.exists(os.path.join(HERE, fname)):
                produced.append((fname, spec))

    rows = []
    total = 0
    for fname, spec in produced:
        path = os.path.join(HERE, fname)
        size = os.path.getsize(path)
        total += size
        try:
            m, ok = check_file(path, spec)
        except Exception as e:
            failures.append(f"{fname}: check failed: {e}")
            rows.append((fname, size / 1024, "-", "-", "FAIL", "", ""))
            continue
        ops = {n.op_type for n in m.graph.node}
        ins = "; ".join(f"{i.name}{dims_of(i)}" for i in m.graph.input)
        outs = "; ".join(f"{o.name}{dims_of(o)}" for o in m.graph.output)
        rows.append(
            (fname, size / 1024, len(m.graph.node), len(ops),
             "OK" if all(ok) else f"FAIL {ok}", ins, outs)
        )
        if not all(ok):
            failures.append(f"{fname}: onnxruntime run failed at {ok}")

    print()
    print(f"{'file':28} {'KB':>8} {'nodes':>6} {'ops':>4}  ran@2sizes")
    for r in rows:
        print(f"{r[0]:28} {r[1]:8.1f} {r[2]!s:>6} {r[3]!s:>4}  {r[4]}")
    print(f"{'total':28} {total / 1024:8.1f}")
    print()
    for r in rows:
        print(f"{r[0]}\n  in : {r[5]}\n  out: {r[6]}")
    if failures:
        print("\nFAILURES:")
        for f in failures:
            print("  " + f)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
