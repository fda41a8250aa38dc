#!/usr/bin/env python
"""How many inferred dims carry max(...)/min(...) clamps, on TorchScript exports whose
Slice, Range and Pad bounds are computed in the graph.

    python bench/range_clutter.py export DIR        # needs torch: writes DIR/*_ts.onnx
    python bench/range_clutter.py count MODEL...    # dims with max/min, and examples

Run ``count`` with PYTHONPATH pointing at another checkout to compare versions.
"""

from __future__ import annotations

import os
import sys


def export(folder: str) -> None:
    import torch
    import torch.nn.functional as F

    class Gpt2Attention(torch.nn.Module):
        """GPT-2's attention with a key/value cache and the causal-mask buffer slice."""

        def __init__(self, hidden=32, heads=4, max_pos=64):
            super().__init__()
            self.heads, self.hd = heads, hidden // heads
            self.qkv = torch.nn.Linear(hidden, 3 * hidden)
            self.register_buffer("bias", torch.tril(torch.ones(max_pos, max_pos)).view(1, 1, max_pos, max_pos))

        def forward(self, x, past_k, past_v):
            b, s, h = x.shape
            q, k, v = self.qkv(x).split(h, dim=2)
            q, k, v = (t.view(b, s, self.heads, self.hd).transpose(1, 2) for t in (q, k, v))
            k = torch.cat([past_k, k], dim=-2)
            v = torch.cat([past_v, v], dim=-2)
            total = k.size(-2)
            w = q @ k.transpose(-1, -2)
            mask = self.bias[:, :, total - s:total, :total]
            w = torch.where(mask.bool(), w, torch.tensor(-1e4))
            out = (w.softmax(-1) @ v).transpose(1, 2).reshape(b, s, h)
            pos = torch.arange(total - s, total)
            return out, k, v, pos, out[:, -1:], out[:, 1:], out[:, ::2]

    class WindowPad(torch.nn.Module):
        """Pad the sequence to a multiple of the window, attend per window, crop back."""

        def __init__(self, window=8):
            super().__init__()
            self.window = window

        def forward(self, x):
            b, n, c = x.shape
            pad = (self.window - n % self.window) % self.window
            y = F.pad(x, (0, 0, 0, pad))
            y = y.view(b, -1, self.window, c).softmax(2).view(b, -1, c)
            return y[:, :n], y.narrow(1, 0, n - 1), torch.arange(0, n, 2)

    os.makedirs(folder, exist_ok=True)
    with torch.no_grad():
        x, pk = torch.randn(2, 5, 32), torch.randn(2, 4, 3, 8)
        torch.onnx.export(Gpt2Attention().eval(), (x, pk, pk), os.path.join(folder, "gpt2_attention_ts.onnx"),
                          input_names=["x", "past_k", "past_v"], dynamo=False, opset_version=17,
                          dynamic_axes={"x": {0: "batch", 1: "seq"}, "past_k": {0: "batch", 2: "past"},
                                        "past_v": {0: "batch", 2: "past"}})
        torch.onnx.export(WindowPad().eval(), (torch.randn(2, 13, 16),), os.path.join(folder, "window_pad_ts.onnx"),
                          input_names=["x"], dynamo=False, opset_version=17,
                          dynamic_axes={"x": {0: "batch", 1: "seq"}})


def count(paths) -> None:
    import onnxsym

    for p in paths:
        r = onnxsym.infer(p)
        total = clutter = 0
        examples = {}
        for name in r.produced:
            shape = r.shape(name)
            for d in shape or ():
                total += 1
                text = str(d)
                if "max(" in text or "min(" in text:
                    clutter += 1
                    examples.setdefault(text, name)
        st = r.stats()
        print(f"{os.path.basename(p)}: {clutter} of {total} dims with max/min; "
              f"unresolved {st['unresolved_dims']}")
        for text, name in list(examples.items())[:6]:
            print(f"    {name}: {text}")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("export", "count"):
        sys.exit(__doc__)
    export(sys.argv[2]) if sys.argv[1] == "export" else count(sys.argv[2:])
