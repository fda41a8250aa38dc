#!/usr/bin/env python
"""Export the small models whose valid input domain the domain tests check
(tests/test_domain_models.py). They live apart from
models/*.onnx because they run only at some sizes (the tests that run every model there
use sizes these would refuse). Needs torch (2.13 was used); the tests need only
the .onnx files. TorchScript exporter, opset 17, weights random (seed 0).

    python models/domain/make_models.py

* ``gpt2_mask_ts``: a one-layer GPT-2 whose causal mask is a registered buffer of
  16 x 16 sliced to ``[:seq, :seq]`` (as HF GPT-2 slices its ``bias``), beside a
  64-row position table: valid for ``seq <= 16`` (the Where broadcast), while the
  position table alone would allow 64.
* ``unet_tiny_ts``: two stride-2 downsamplings, two ConvTranspose upsamplings and
  skip Concats: valid when ``height`` and ``width`` are multiples of 4.
* ``kv_decoder_ts``: one decoder step with a KV cache whose key and value inputs
  name their past length differently (``past_k``, ``past_v``), and positions
  ``arange(past_k, past_k + seq)`` into a 64-row table: valid when
  ``past_v == past_k`` and ``past_k + seq <= 64``.
"""

from __future__ import annotations

import os
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, DIM, HEADS, TABLE, MASK = 128, 32, 2, 64, 16


def _models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Gpt2Mask(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, DIM)
            self.wpe = nn.Embedding(TABLE, DIM)
            self.qkv = nn.Linear(DIM, 3 * DIM)
            self.proj = nn.Linear(DIM, DIM)
            self.head = nn.Linear(DIM, VOCAB, bias=False)
            self.register_buffer("bias", torch.tril(torch.ones(MASK, MASK, dtype=torch.bool)).view(1, 1, MASK, MASK))

        def forward(self, input_ids):
            b, s = input_ids.size(0), input_ids.size(1)
            x = self.wte(input_ids) + self.wpe(torch.arange(s, dtype=torch.long))[None]
            q, k, v = self.qkv(x).split(DIM, dim=2)
            q, k, v = (t.view(b, s, HEADS, DIM // HEADS).transpose(1, 2) for t in (q, k, v))
            w = q @ k.transpose(-1, -2)
            mask = self.bias[:, :, :s, :s]
            w = torch.where(mask, w, torch.tensor(-1e4, dtype=w.dtype))
            y = (w.softmax(-1) @ v).transpose(1, 2).reshape(b, s, DIM)
            return self.head(x + self.proj(y))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.inc = nn.Conv2d(3, 8, 3, padding=1)
            self.down1 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.down2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
            self.up2 = nn.ConvTranspose2d(32, 16, 2, stride=2)
            self.dec2 = nn.Conv2d(32, 16, 3, padding=1)
            self.up1 = nn.ConvTranspose2d(16, 8, 2, stride=2)
            self.dec1 = nn.Conv2d(16, 8, 3, padding=1)
            self.out = nn.Conv2d(8, 2, 1)

        def forward(self, image):
            x0 = F.relu(self.inc(image))
            x1 = F.relu(self.down1(x0))
            x2 = F.relu(self.down2(x1))
            y1 = F.relu(self.dec2(torch.cat([self.up2(x2), x1], dim=1)))
            y0 = F.relu(self.dec1(torch.cat([self.up1(y1), x0], dim=1)))
            return self.out(y0)

    class KvDecoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, DIM)
            self.pos = nn.Embedding(TABLE, DIM)
            self.q = nn.Linear(DIM, DIM)
            self.k = nn.Linear(DIM, DIM)
            self.v = nn.Linear(DIM, DIM)
            self.o = nn.Linear(DIM, VOCAB)

        def forward(self, input_ids, past_key, past_value):
            b, s = input_ids.size(0), input_ids.size(1)
            past = past_key.size(2)
            x = self.tok(input_ids) + self.pos(torch.arange(past, past + s, dtype=torch.long))[None]

            def heads(t):
                return t.view(b, s, HEADS, DIM // HEADS).transpose(1, 2)

            k = torch.cat([past_key, heads(self.k(x))], dim=2)
            v = torch.cat([past_value, heads(self.v(x))], dim=2)
            w = (heads(self.q(x)) @ k.transpose(-1, -2)).softmax(-1)
            y = (w @ v).transpose(1, 2).reshape(b, s, DIM)
            return self.o(y), k, v

    return {
        "gpt2_mask_ts": (Gpt2Mask(), {"input_ids": ((2, 5), "ids", {0: "batch", 1: "seq"})},
                         {"logits": {0: "batch", 1: "seq"}}),
        "unet_tiny_ts": (UNet(), {"image": ((1, 3, 32, 32), "float", {0: "batch", 2: "height", 3: "width"})},
                         {"mask": {0: "batch", 2: "height", 3: "width"}}),
        "kv_decoder_ts": (KvDecoder(), {
            "input_ids": ((2, 3), "ids", {0: "batch", 1: "seq"}),
            "past_key": ((2, HEADS, 4, DIM // HEADS), "float", {0: "batch", 2: "past_k"}),
            "past_value": ((2, HEADS, 4, DIM // HEADS), "float", {0: "batch", 2: "past_v"}),
        }, {"logits": {0: "batch", 1: "seq"}, "present_key": {0: "batch", 2: "total_k"},
            "present_value": {0: "batch", 2: "total_v"}}),
    }


def main() -> None:
    import torch

    torch.manual_seed(0)
    for name, (model, inputs, outputs) in _models().items():
        model.eval()
        args = tuple(torch.randint(0, VOCAB, shape) if kind == "ids" else torch.randn(shape)
                     for shape, kind, _ in inputs.values())
        dynamic = {k: axes for k, (_, _, axes) in inputs.items()}
        dynamic.update(outputs)
        path = os.path.join(HERE, name + ".onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, args, path, dynamo=False, input_names=list(inputs), output_names=list(outputs),
                              dynamic_axes=dynamic, opset_version=17, do_constant_folding=True)
        print(f"{path}: {os.path.getsize(path) // 1024} KB")


if __name__ == "__main__":
    main()
