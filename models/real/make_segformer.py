#!/usr/bin/env python
"""Export a tiny random SegFormer (transformers' SegformerForSemanticSegmentation) with the
dynamo exporter, height and width dynamic: ``segformer_tiny_dynamo.onnx``.

Its efficient attention reduces the key/value sequence with a Conv whose kernel is the
reduction ratio, and the exporter computes the reduced length with a scalar integer Div of
shape values (``node_floordiv_*``), which onnxsym must compute exactly (issue 12, item 4).

    python models/real/make_segformer.py          # export (needs torch, onnxscript, transformers)

The weights are random (torch.manual_seed(0)); no model hub is used.
"""

from __future__ import annotations

import os
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "segformer_tiny_dynamo.onnx")


def build():
    import torch
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    torch.manual_seed(0)
    # mit-b0's layout (4 stages, patch strides 4, 2, 2, 2, reduction ratios 8, 4, 2, 1), narrow
    config = SegformerConfig(num_encoder_blocks=4, depths=[1, 1, 1, 1], hidden_sizes=[8, 16, 24, 32],
                             num_attention_heads=[1, 2, 2, 2], decoder_hidden_size=16, num_labels=3)
    return SegformerForSemanticSegmentation(config).eval()


def export(path: str = OUT) -> None:
    import onnx
    import torch

    model = build()

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, pixel_values):
            return self.m(pixel_values=pixel_values).logits

    x = torch.randn(2, 3, 64, 96)
    # batch dynamic too: then the exporter computes the reduced key/value length in the graph
    dyn = {0: torch.export.Dim("batch"), 2: torch.export.Dim("height"), 3: torch.export.Dim("width")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = torch.onnx.export(Wrap(model), (x,), dynamo=True, input_names=["pixel_values"],
                                 output_names=["logits"], dynamic_shapes={"pixel_values": dyn})
    prog.save(path)
    m = onnx.load(path)
    for n in m.graph.node:  # the exporter's per-node stack traces: most of the file, no shape in them
        del n.metadata_props[:]
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    export()
