"""The domain of real exports, checked against onnxruntime at its boundaries: sizes just
inside run with the inferred shapes; sizes just outside fail at the condition's node
(and fail, or give other shapes, with onnxruntime's optimizer on too)."""

import os

import pytest
from domain_boundary import check_all, expected, run

import onnxsym
from onnxsym.facts.fact import Rel

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")
OURS = {"gpt2_mask_ts", "unet_tiny_ts", "kv_decoder_ts"}  # in models/domain/


def _path(name):
    return os.path.join(MODELS, "domain" if name in OURS else "", name + ".onnx")

CASES = [
    # BERT: the 64-row position table
    ("bert_tiny_ts", {"batch": 2, "seq": 5}, ["seq <= 64"], ["/pos/Gather"]),
    ("bert_tiny_dynamo", {"batch": 2, "seq": 5}, ["seq <= 64"], ["node_embedding_1"]),
    ("gpt_tiny_dynamo", {"batch": 2, "seq": 5}, ["seq <= 64"], ["node_embedding_1"]),
    # GPT-2 whose causal-mask buffer is 16 long: the Where broadcast, not the 64-row table, limits it
    ("gpt2_mask_ts", {"batch": 2, "seq": 5}, ["seq <= 16"], ["/Where"]),
    # UNet: the skip Concats need multiples of 4
    ("unet_tiny_ts", {"batch": 1, "height": 8, "width": 12}, ["height % 4 == 0", "width % 4 == 0"],
     ["/Concat", "/Concat"]),
    # KV cache whose key and value name their past apart; positions into a 64-row table
    ("kv_decoder_ts", {"batch": 2, "seq": 3, "past_k": 4}, ["past_v == past_k", "past_k + seq <= 64"],
     ["/MatMul_1", "/pos/Gather"]),
    # ViT: the 2x2 patch Conv needs 2 rows and columns (a lower bound inference learns from the Conv)
    ("vit_tiny_ts", {"batch": 1, "height": 4, "width": 6}, ["height >= 2", "width >= 2"],
     ["/embed/Conv", "/embed/Conv"]),
    # whisper: the encoder's 64-row position table sliced to the frames (a clamp), the decoder's positions
    ("whisper_tiny_ts", {"batch": 2, "seq": 3, "past": 4, "frames": 20}, ["frames <= 128", "past + seq <= 64"],
     ["/Add_2", "/dec_pos/Gather"]),
    ("whisper_tiny_dynamo", {"batch": 2, "seq": 3, "past": 4, "frames": 20}, ["frames <= 128", "past + seq <= 64"],
     ["node_add_25", "node_embedding_1"]),
]


@pytest.mark.parametrize("name, base, texts, nodes", CASES, ids=[c[0] for c in CASES])
def test_boundaries_match_onnxruntime(name, base, texts, nodes):
    _, _, outcomes = check_all(_path(name), base, expect=texts)
    assert [o[2] for o in outcomes] == [f"fails at {n}" for n in nodes]


def test_unet_every_residue_fails_at_a_concat():
    path = _path("unet_tiny_ts")
    result = onnxsym.infer(path).within_domain()
    seen = {}
    for h in (9, 10, 11, 12):
        err, shapes = run(path, result, {"batch": 1, "height": h, "width": 8})
        seen[h] = "ok" if err is None and shapes == expected(result, {"batch": 1, "height": h, "width": 8}) \
            else err.split("Name:'")[1].split("'")[0]
    # h % 4 == 1 or 2: the inner Concat sees 2*ceil(ceil(h/2)/2) != ceil(h/2); 3: the outer one
    assert seen == {9: "/Concat", 10: "/Concat", 11: "/Concat_1", 12: "ok"}


@pytest.mark.parametrize("name", ["swin_tiny_ts", "swin_tiny_dynamo"])
def test_swin_window_pad_leaves_every_size_valid(name):
    """Swin pads each stage to a multiple of its window: the window Reshape's element
    count holds for every size (proven factor by factor), and onnxruntime agrees."""
    path = os.path.join(MODELS, name + ".onnx")
    result = onnxsym.infer(path)
    domain = result.domain()
    # only the default lower bounds that inference relied on (a window count read as a size)
    assert all(c.assumed and c.text.endswith(">= 1") for c in domain.conditions), domain.conditions
    assert not any(c.op_type == "Reshape" and c.rel is Rel.EQ for c in result.constraints)
    # (the algebra proves it: nothing recorded)
    for h, w in ((1, 2), (5, 13), (23, 7), (16, 17)):
        b = {"batch": 1, "height": h, "width": w}
        err, shapes = run(path, result, b)
        assert err is None and shapes == expected(result, b), (h, w, err)


@pytest.mark.parametrize("name", sorted(f[:-5] for f in os.listdir(MODELS) if f.endswith(".onnx")) + sorted(OURS))
def test_domain_is_stable(name):
    path = _path(name)
    texts = [onnxsym.infer(path).domain().lines() for _ in range(2)]
    assert texts[0] == texts[1]


@pytest.mark.parametrize("name", ["unet_ts", "unet_dynamo"])
def test_corpus_unet_domain_is_exactly_where_onnxruntime_runs(name):
    """The corpus UNet (models/real/): its clamped pool sizes (max(0, height - 2)) settle from
    4 on; below, every size fails. At every size 1..13 the domain says what onnxruntime does."""
    path = os.path.join(MODELS, "real", name + ".onnx")
    result, domain, outcomes = check_all(path, {"batch": 1, "height": 8, "width": 8},
                                         expect=["height >= 4", "width >= 4", "height % 4 == 0", "width % 4 == 0"])
    for h in range(1, 14):
        b = {"batch": 1, "height": h, "width": 8}
        err, shapes = run(path, result, b)
        assert (err is None and shapes == expected(result, b)) == (domain.violated(b) is None), (h, err)


def _boundary(path, text, base):
    """check_condition for the condition whose text is ``text`` (found in the model's domain)."""
    from domain_boundary import check_condition

    result = onnxsym.infer(path)
    domain = result.domain()
    (cond,) = [c for c in domain.conditions if c.text == text]
    return check_condition(path, result, domain, cond, base)


@pytest.mark.parametrize("name, text, node", [
    # the mask flattened to [batch*total] and gathered at Range(batch)*total + positions: a Mul by a size
    ("hf_mistral_ts", "past + seq - total <= 0", "/m/model/Gather_3"),
    # the mask gathered by GatherND at [Range(batch), positions] tuples: each column its own axis
    ("hf_mixtral_dynamo", "past + seq - total <= 0", "node_GatherND_37"),
])
def test_a_mask_gathered_at_positions_needs_total_at_least_past_plus_seq(name, text, node):
    """The attention mask ``[batch, total]`` is read at the positions ``past .. past + seq - 1``:
    onnxruntime fails past the mask's end (``verify`` found sizes inside the domain that failed:
    a domain too wide), and runs with a longer mask (``total = past + seq + 1``)."""
    path = os.path.join(MODELS, "real", name + ".onnx")
    inside, outside, what = _boundary(path, text, {"batch": 2, "seq": 3, "past": 4, "total": 7})
    assert what == f"fails at {node}", what
    result = onnxsym.infer(path)
    longer = {"batch": 2, "seq": 3, "past": 4, "total": 8}
    err, shapes = run(path, result, longer)
    assert err is None and shapes == expected(result, longer), err


def test_group_query_attention_needs_the_query_head_size_and_total_at_least_the_new_tokens():
    """onnxruntime's GroupQueryAttention checks the caches' head size against the query's and
    that total_sequence_length is at least the query's length (a genai builder's LLaMA
    declares the head size ``kv_cache_dim``)."""
    path = os.path.join(MODELS, "real", "genai_llama_fp32.onnx")
    base = {"batch_size": 2, "sequence_length": 3, "past_sequence_length": 4, "total_sequence_length": 3}
    node = "/model/layers.0/attn/GroupQueryAttention"
    _, outside, what = _boundary(path, "kv_cache_dim == 16", base)
    assert what == f"fails at {node}", what
    _, outside, what = _boundary(path, "sequence_length - total_sequence_length <= 0", base)
    assert what == f"fails at {node}" and outside["total_sequence_length"] < outside["sequence_length"], what
