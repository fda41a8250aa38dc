"""Attention at opset 25 against onnxruntime 1.32, which has no kernel for it and runs the
function body (issue 34). The domain states the opset 23-24 conditions, but for attn_mask's last
two dims: the body pads or crops the last to P+S (any size runs) and adds the mask broadcasting
(its dims -2, -3, -4 against L, Hq and B: a mask's dim grows a 1 of Q's, and Y's shape with it).
Where the domain holds onnxruntime runs,
with the inferred shapes; without past and present outputs K's and V's batch, V's heads and
length and K's head size may be 1 too (the body expands them), and 3-D K and V need only element
counts (Y's last dim follows V's). The body also runs some sizes the domain leaves out (a K or V
dim of 1 with past or present outputs; other output shapes there):
too narrow there, never a wrong dim."""

import ast
import random
import warnings

import pytest
from op_verdicts import disagreements, moves, symbolic
from test_domain_ort_verdicts import _attention

pytest.importorskip("onnxruntime")


def _cases():
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c.name: c for c in collect_testcases() if c.name.startswith("test_attention") and
                "expanded" not in c.name and "bf16" not in c.name and c.model.opset_import[0].version >= 25}


CASES = _cases()


def _wrong(bad):
    """The disagreements that are not the domain being narrower than onnxruntime."""
    return [b for b in bad if "runs outside the domain" not in b]


@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_25_backend_case(name):
    case = CASES[name]
    m, own = symbolic(case.model)
    data = dict(zip((i.name for i in case.model.graph.input), case.data_sets[0][0])) if case.data_sets else None
    n, bad = disagreements(m, list(moves(own)), data)
    assert n and not _wrong(bad), f"{name}: {len(_wrong(bad))} of {n} tries disagree:\n" + "\n".join(_wrong(bad)[:10])


def _attack(seed, per_model):
    rng = random.Random(seed)
    same = [("kb", "b"), ("vb", "b"), ("pb", "b"), ("qb", "b"), ("hv", "hk"), ("ph", "hk"), ("qh", "hk"),
            ("ke", "e"), ("pe", "e"), ("vs", "s"), ("qe", "ev"), ("q", "p")]
    past = (["pb", "ph", "p", "pe"], ["qb", "qh", "q", "qe"])
    for rank in (2, 3, 4):
        mask = ["m0", "m1", "m2", "m3"][4 - rank:]
        names = [a for a, _ in same] + ["b", "hk", "e", "s", "ev", "p", "hq", "l"] + mask
        for causal, with_past in ((0, True), (1, True), (0, False), (1, False)):
            m = _attention(["b", "hq", "l", "e"], ["kb", "hk", "s", "ke"], ["vb", "hv", "vs", "ev"], mask=mask,
                           past=past if with_past else None, opset=25, is_causal=causal)
            grid = []
            for _ in range(per_model):
                g = {n: rng.choice((1, 2, 3)) for n in names}
                if rng.random() < 0.8:
                    g.update({a: g[b] for a, b in same if rng.random() < 0.9})
                    if rng.random() < 0.8:
                        g[mask[-1]] = g["p"] + g["s"]
                    if rng.random() < 0.8:
                        g[mask[-2]] = g["l"]
                    if rng.random() < 0.5:
                        g["hq"] = g["hk"] * rng.choice((1, 2))
                grid.append(g)
            n, bad = disagreements(m, grid)
            assert n and not _wrong(bad), "\n".join(_wrong(bad)[:10])
    names3 = ["b", "l", "dq", "kb", "s", "dk", "vb", "vs", "dv", "m1", "m2", "pb", "ph", "p", "pe", "qb", "qh", "q", "qe"]
    for (hq, hkv), with_past in ((h, w) for h in ((2, 1), (2, 2), (4, 2)) for w in (True, False)):
        m = _attention(["b", "l", "dq"], ["kb", "s", "dk"], ["vb", "vs", "dv"], mask=["m1", "m2"],
                       past=past if with_past else None, q_num_heads=hq, kv_num_heads=hkv, opset=25)
        grid = []
        for _ in range(per_model):
            g = {n: rng.choice((1, 2, 3, 4)) for n in names3}
            if rng.random() < 0.8:
                e, ev = rng.choice((1, 2)), rng.choice((1, 2))
                g.update(dq=hq * e, dk=hkv * e, dv=hkv * ev, kb=g["b"], vb=g["b"], pb=g["b"], qb=g["b"], vs=g["s"],
                         ph=hkv, qh=hkv, pe=e, qe=ev, q=g["p"], m1=g["l"], m2=g["p"] + g["s"])
                g[rng.choice(names3)] = rng.choice((1, 2, 3, 4))
            grid.append(g)
        n, bad = disagreements(m, grid)
        assert n and not _wrong(bad), "\n".join(_wrong(bad)[:10])


def test_attention_25_sizes_off_the_layout():
    _attack(0, 25)


@pytest.mark.slow
def test_attention_25_random_sizes_attack():
    """3,600 random sizes, 4-D at each mask rank, causal or not, and 3-D at three head splits."""
    _attack(2, 400)


@pytest.mark.parametrize("mask", [None, ["ml", "mt"]])
def test_attention_25_nonpad_kv_seqlen_broadcasts_over_the_batch(mask):
    """The body broadcasts nonpad_kv_seqlen: (1,) runs at every batch; (n,) against a batch of 1
    runs too, but with a batch of n (outside the domain)."""
    from test_domain_ort_verdicts import _grid

    m = _attention(["b", 2, "l", 4], ["kb", 2, "s", 4], ["vb", 2, "s", 4], mask=mask, opset=25, nonpad=["n"])
    grid = _grid(b=(1, 2, 3), kb=(1, 3), vb=(1, 2), l=(1, 2), s=(1, 3), n=(1, 2, 3), ml=(1, 2), mt=(1, 4))
    n, bad = disagreements(m, grid)
    assert n and not _wrong(bad), "\n".join(_wrong(bad)[:10])
    outside = [ast.literal_eval(b.split("}: ")[0] + "}") for b in bad]  # (each runs with a larger batch or L)
    assert all(s["n"] > s["b"] == 1 or s["l"] == 1 < s.get("ml", 1) for s in outside)


@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("mask", [["ml", "mt"], ["mb", "mh", "ml", "mt"]])
def test_attention_25_mask_grows_an_l_of_1(rank, mask):
    """The body adds attn_mask to Q K^T broadcasting, so a mask's dim -2 larger than an L of 1 runs
    and sets Y's length (onnxruntime: Y (2, 4, 4, 6) from Q (2, 4, 1, 8) and a mask (4, 6));
    against an L other than 1 it is refused."""
    from test_domain_ort_verdicts import _grid

    if rank == 4:
        m = _attention(["b", 2, "l", 4], ["b", 2, "s", 4], ["b", 2, "s", 3], mask=mask, opset=25)
    else:
        m = _attention(["b", "l", 8], ["b", "s", 8], ["b", "s", 6], mask=mask, opset=25,
                       q_num_heads=2, kv_num_heads=2)
    grid = _grid(b=(1, 2), l=(1, 2, 3), s=(1, 3), ml=(1, 2, 4), mt=(1, 3), mh=(1, 2), mb=(1, 2))
    n, bad = disagreements(m, grid)
    assert n and not bad, "\n".join(bad[:10])


def test_attention_25_empty_sizes_never_too_wide_nor_wrong():
    """With sizes of 0 allowed: the body refuses most empty Q, K or V and runs others with shapes
    of its own (an empty V's last dim comes out as K's length, (0, 1, 0, 1) for (0, 1, 0, 0)), so the
    domain keeps every dim >= 1: too narrow at those, never a size that fails inside it nor a wrong
    dim (onnxruntime in a child: it may crash natively on an empty MatMul)."""
    import itertools

    from op_verdicts import isolated_disagreements

    m = _attention(["b", "hq", "l", "e"], ["b", "hkv", "s", "e"], ["b", "hkv", "s", "ev"], opset=25)
    grid = [dict(zip("b hq hkv l s e ev".split(), g)) for g in itertools.product(
        (0, 1, 2), (1, 2), (1,), (0, 1, 2), (0, 1, 2), (0, 1, 2), (0, 2))]
    n, bad, _crashes = isolated_disagreements(m, grid, allow_zero=True)
    inside = [b for b in bad if "runs outside the domain" not in b]
    assert n and not inside, "\n".join(inside[:10])
    assert any("runs outside the domain" in b for b in bad)  # (the too-narrow part the docstring says)
