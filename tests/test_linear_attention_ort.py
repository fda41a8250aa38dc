"""LinearAttention (opset 27) against onnxruntime 1.32, which has no kernel for it and runs the
function body (issue 34): on onnx's backend node cases with every graph-input dim a symbol, each
moved to 1, 2, 3, its own + 1 and twice its own, and on random sizes off the spec's layout, for
each update rule and head split. onnxruntime refuses wherever the domain does not hold, and runs
where it holds with the inferred output shapes. The one departure left: a past_state that
broadcasts against a step's update runs in onnxruntime (with other shapes) but is outside the
domain."""

import random
import warnings

import pytest
from onnx import TensorProto as T
from onnx import helper as h
from op_verdicts import disagreements, moves, symbolic

pytest.importorskip("onnxruntime")


def _cases():
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {c.name: c for c in collect_testcases()
                if c.name.startswith("test_linear_attention") and "expanded" not in c.name}


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_linear_attention_backend_case(name):
    case = CASES[name]
    m, own = symbolic(case.model)
    data = dict(zip((i.name for i in case.model.graph.input), case.data_sets[0][0])) if case.data_sets else None
    n, bad = disagreements(m, list(moves(own)), data)
    assert n and not bad, f"{name}: {len(bad)} of {n} tries disagree:\n" + "\n".join(bad[:10])


def _model(rule, hq, hkv, past):
    names = ["query", "key", "value", "past_state" if past else "",
             "decay" if "gated" in rule else "", "beta" if "delta" in rule else ""]
    while names[-1] == "":
        names.pop()
    ins = [h.make_tensor_value_info(n, T.FLOAT, [f"{n}{a}" for a in range(4 if n == "past_state" else 3)])
           for n in names if n]
    node = h.make_node("LinearAttention", names, ["output", "present_state"], q_num_heads=hq, kv_num_heads=hkv,
                       update_rule=rule)
    outs = [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("output", "present_state")]
    m = h.make_model(h.make_graph([node], "g", ins, outs), opset_imports=[h.make_opsetid("", 27)])
    m.ir_version = 10
    return m


def _sizes(rng, syms, hq, hkv, n):
    """Sizes on the spec's layout, one to three dims then moved off it (to a size that keeps an
    element count, a head size of 1, or neither)."""
    out = []
    for _ in range(n):
        b, t, dk, dv = (rng.choice((1, 2, 3)) for _ in range(4))
        base = {"query0": b, "query1": t, "query2": hq * dk, "key0": b, "key1": t, "key2": hkv * dk,
                "value0": b, "value1": t, "value2": hkv * dv, "past_state0": b, "past_state1": hkv,
                "past_state2": dk, "past_state3": dv, "decay0": b, "decay1": t, "decay2": hkv * rng.choice((dk, 1)),
                "beta0": b, "beta1": t, "beta2": rng.choice((hkv, 1))}
        s = {k: base[k] for k in syms}
        for k in rng.sample(syms, rng.choice((1, 1, 2, 3))):
            s[k] = rng.choice((1, 2, 3, 4, 6, 2 * s[k], s[k] + 1))
        out.append(s)
    return out


def _past_off(s, hq, hkv):
    """past_state is not the state's (B, Hkv, query's width / Hq, value's width / Hkv)."""
    state = (s["query0"], hkv, s["query2"] // hq, s["value2"] // hkv)
    return tuple(s[f"past_state{a}"] for a in range(4)) != state


def _attack(seed, per_model):
    rng = random.Random(seed)
    for rule in ("linear", "gated", "delta", "gated_delta"):
        for hq, hkv in ((2, 2), (4, 2), (2, 1)):
            for past in (False, True):
                m = _model(rule, hq, hkv, past)
                syms = [d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim]
                tries = _sizes(rng, syms, hq, hkv, per_model)
                n, bad = disagreements(m, tries)
                if past:  # (a past_state other than the state broadcasts: outside the domain)
                    off = {str(s) for s in tries if _past_off(s, hq, hkv)}
                    bad = [b for b in bad if not ("runs outside the domain" in b and b.split("}: ")[0] + "}" in off)]
                assert n and not bad, f"{rule} {hq}/{hkv} past={past}: {len(bad)} of {n} disagree:\n" + \
                    "\n".join(bad[:10])


def test_linear_attention_off_layout_sizes():
    """A key, value, decay or beta whose element count fits but not its dims runs in onnxruntime,
    with output dims from query's batch, length and width: the domain and dims follow it."""
    _attack(0, 12)


@pytest.mark.slow
def test_linear_attention_random_sizes_attack():
    """3,600 random sizes over the four update rules, three head splits, with and without past."""
    _attack(1, 150)
