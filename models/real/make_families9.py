"""Families of the families9 round (transformers 5.25, torch 2.13) that exposed a fix, each built
from a tiny config with random weights (torch.manual_seed(0)), exported with the exporters that
export it (make_torch.export_both). Used by make_real.py (`python models/real/make_real.py --only
layoutlmv3`).

Of the round's 36 exports (OPT, Bloom, GPT-J, CodeGen, Phi3, Gemma3, Qwen3-MoE, RoFormer, ESM,
HuBERT, WavLM, DINOv2, YOLOS, Swin2, ConvNeXtV2, Depth-Anything, UperNet, PatchTST, LeViT,
Pix2Struct, EnCodec, LayoutLMv3; both exporters where each works) only LayoutLMv3 is kept: its
token types (ConstantOfShape zeros) and relative positions (a Clip of a Range's differences) were
index needs the domain said it could not follow (onnxsym/domain/elements.py). Its dynamo export
fails (a decomposition error), so it is TorchScript's only.
"""

from __future__ import annotations

from make_torch import export_both

MAKERS = []
SCRIPT = "make_families9.py"


def maker(fn):
    MAKERS.append(fn)
    return fn


@maker
def hf_layoutlmv3():
    """LayoutLMv3 without its visual embedding: input_ids, bbox [batch, seq, 4] (boxes in [0, 100)),
    attention_mask; 1-D and 2-D relative-position buckets (Clip of position differences), box
    sizes clipped to [0, 1023] and gathered from 128 rows (the data keep them in range)."""
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.LayoutLMv3Config(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                        intermediate_size=64, max_position_embeddings=64, max_2d_position_embeddings=128,
                                        coordinate_size=4, shape_size=8, visual_embed=False, input_size=32,
                                        rel_pos_bins=16, max_rel_pos=32, rel_2d_pos_bins=16, max_rel_2d_pos=64)
    model = transformers.LayoutLMv3Model(cfg)

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, input_ids, bbox, attention_mask):
            return self.m(input_ids=input_ids, bbox=bbox, attention_mask=attention_mask).last_hidden_state

    args = (torch.randint(3, 64, (2, 7)), torch.randint(0, 100, (2, 7, 4)), torch.ones(2, 7, dtype=torch.long))
    for m, e in export_both("hf_layoutlmv3", "hf_layoutlmv3", Wrap(), args, ["input_ids", "bbox", "attention_mask"],
                            ["hidden"], {"input_ids": {0: "batch", 1: "seq"}, "bbox": {0: "batch", 1: "seq"},
                                         "attention_mask": {0: "batch", 1: "seq"}},
                            [{"batch": 1, "seq": 7}, {"batch": 2, "seq": 12}, {"batch": 3, "seq": 1}],
                            feeds={"input_ids": {"int": [3, 64]}, "bbox": {"int": [0, 100]}},
                            extra={"library": f"transformers {transformers.__version__}",
                                   "config": "LayoutLMv3Config, tiny, in make_families9.py"},
                            script=SCRIPT, exporters=("TorchScript",)):
        e["note"] = ("the dynamo exporter fails on it (a decomposition error). Runs for seq <= 64 with no padding"
                     " token in input_ids (positions are a cumsum of input_ids != 1: data-dependent).")
        yield m, e
