"""Zero, one and minus one (issue 17): every dim compared with onnxruntime at sizes
that make symbols 0 and 1 and computed shape elements 0, 1 and -1."""

import itertools

import edge_models
import pytest

import onnxsym
from onnxsym.commands.verify import verify


def assert_right(m, sizes, allow_zero=False):
    """Every dim of every value right at every combination of ``sizes`` ({symbol: [sizes]});
    returns the result and how many dims were checked."""
    res = onnxsym.infer(m, allow_zero=allow_zero)
    names = sorted(sizes)
    assignments = [dict(zip(names, combo)) for combo in itertools.product(*(sizes[n] for n in names))]
    report = verify(m, assignments=assignments, result=res)
    assert report.ok, "\n".join(map(str, report.mismatches[:5]))
    assert report.checked_dims > 0
    return res, report


def positives(res):
    return [(str(c), c.node, c.reason) for c in res.positive_assumptions()]


# ------------------------------------------------------------------ an empty KV cache

@pytest.mark.parametrize("compare,negate", [("Greater", False), ("Equal", False), ("Greater", True)])
def test_kv_cache_if_is_decided_only_under_a_recorded_assumption(compare, negate):
    m = edge_models.kv_cache_if(compare, negate)
    res, _ = assert_right(m, {"batch": [1, 2], "past_seq": [1, 3], "seq": [1, 2]})
    assert str(res.shape("kv_out")[1]) == "past_seq + seq"
    [(text, node, reason)] = positives(res)
    assert (text, node) == ("past_seq >= 1", "/decoder/If") and reason.startswith("condition past_seq")
    # at past_seq = 0 the other branch runs: allowed to be 0, the dim is unresolved but right
    for allow in (["past_seq"], True):
        res, report = assert_right(m, {"batch": [1, 2], "past_seq": [0, 1, 3], "seq": [1, 2]}, allow_zero=allow)
        assert positives(res) == [] and report.unresolved_dims > 0


def test_kv_cache_where_on_shape_values():
    m = edge_models.kv_cache_where()
    res, _ = assert_right(m, {"batch": [1], "past_seq": [1, 2], "seq": [1, 3]})
    assert str(res.shape("mask")[0]) == "past_seq + seq"
    assert [(t, n) for t, n, _ in positives(res)] == [("past_seq >= 1", "/mask/Where")]
    res, _ = assert_right(m, {"batch": [1], "past_seq": [0, 2], "seq": [0, 1, 3]}, allow_zero=True)
    assert positives(res) == []


def test_allow_zero_names_symbols_and_rejects_unknown_names():
    m = edge_models.kv_cache_if()
    res = onnxsym.infer(m, allow_zero=["past_seq"])
    assert res.symbol_ranges()["past_seq"][0] == 0 and res.symbol_ranges()["seq"][0] == 1
    with pytest.raises(onnxsym.OnnxsymError, match="nope"):
        onnxsym.infer(m, allow_zero=["nope"])
    meta = {p.key: p.value for p in onnxsym.annotate(m, allow_zero=["past_seq"]).metadata_props}
    assert '"allow_zero_symbols": ["past_seq"]' in meta["onnxsym.user"]
    meta = {p.key: p.value for p in onnxsym.annotate(m).metadata_props}
    assert '"origin": "default_range"' in meta["onnxsym.constraints"]


# ------------------------------------------------------------------ loops that run no iteration

@pytest.mark.parametrize("trip,cond0,sizes", [
    ("n - 1", "true", [1, 2, 4]),     # M = 0 at n = 1
    ("n", "false", [1, 3]),           # the initial condition is false: no iteration
    ("n", "n > 1", [1, 2, 5]),        # the initial condition is computed from the shape
])
def test_loop_scan_outputs_at_zero_and_one_iterations(trip, cond0, sizes):
    m = edge_models.loop(trip, cond0)
    res, _ = assert_right(m, {"n": sizes})
    assert res.shape("acc") == (1,)
    # the loop may run no iteration: onnxruntime's own inference decides the scan output's
    # shape then (a rank it loses comes out [0]): unknown
    assert res.shape("ys") is None and "may run no iteration" in res.unknown_rank["ys"].reason


def test_loop_trip_from_a_dim_assumes_it_is_at_least_one():
    m = edge_models.loop("n", "true")
    res, _ = assert_right(m, {"n": [1, 2, 3]})
    assert [str(d) for d in res.shape("ys")] == ["n", "n", "2"]
    assert [(t, n) for t, n, _ in positives(res)] == [("n >= 1", "/loop")]
    res, _ = assert_right(m, {"n": [0, 1, 2]}, allow_zero=True)
    assert positives(res) == []


# ------------------------------------------------------------------ computed Reshape targets

def test_reshape_element_that_may_be_0_or_minus_1_derives_nothing():
    m = edge_models.reshape_k_minus_2()
    res, _ = assert_right(m, {"m": [1, 3], "k": [1, 2, 8]})
    assert res.derived_symbols() == {}
    assert str(res.shape("y_out")[0]) == "k" and str(res.shape("r")[0]) == "m"


def test_reshape_element_that_may_be_0_with_allow_zero():
    m = edge_models.reshape_p_minus_1()
    res, _ = assert_right(m, {"p": [1, 2, 3], "q": [1, 2]})
    assert [str(d) for d in res.shape("r")] == ["p", "(6*q)//p"]
    assert [t for t, _, _ in positives(res)] == ["p >= 1"]
    # at p = 0 the 0 copies x's dim: [q, 6]
    res, _ = assert_right(m, {"p": [0, 1, 2, 3], "q": [1, 2]}, allow_zero=True)
    assert res.derived_symbols() == {}


def test_reshape_element_equal_to_the_input_dim_is_exact_in_both_cases():
    m = edge_models.reshape_p_minus_1(same=True)
    res, report = assert_right(m, {"q": [1, 3]}, allow_zero=True)  # (q = 0: -1 of nothing, refused)
    assert [str(d) for d in res.shape("r")] == ["q", "6"] and report.unresolved_dims == 0


# ------------------------------------------------------------------ where the user reads them

def test_annotate_prints_the_assumption_and_suggests_allow_zero_name_check_lists_it(tmp_path):
    import json

    import onnx
    from click.testing import CliRunner
    from report_schema import check_json

    from onnxsym.cli import main

    p, out = str(tmp_path / "kv.onnx"), str(tmp_path / "kv.sym.onnx")
    onnx.save(edge_models.kv_cache_if(), p)
    r = CliRunner().invoke(main, ["annotate", p, "-o", out])
    assert r.exit_code == 0, r.output
    # the If's decision is a condition of the domain: said once, there, with its node
    assert "domain assumed past_seq >= 1 (assumed: " in r.output and r.output.count("assumed past_seq >= 1") == 1
    assert "If '/decoder/If': condition past_seq > 0" in r.output
    assert "--allow-zero past_seq" in r.output
    r = CliRunner().invoke(main, ["annotate", p, "-o", out, "--force", "--allow-zero", "past_seq"])
    assert r.exit_code == 0 and "assumed" not in r.output and "2 unresolved" in r.output, r.output
    r = CliRunner().invoke(main, ["annotate", p, "-o", out, "--allow-zero", "--force"])
    assert r.exit_code == 0 and json.loads({m.key: m.value for m in onnx.load(out).metadata_props}
                                           ["onnxsym.user"])["allow_zero"] is True
    r = CliRunner().invoke(main, ["check", "--format", "json", p])
    doc = json.loads(r.stdout)
    check_json(doc)
    [a] = doc["models"][0]["assumptions"]
    assert (a["symbol"], a["constraint"], a["node"], a["op_type"]) == ("past_seq", "past_seq >= 1", "/decoder/If", "If")
    assert "assumed past_seq >= 1" in CliRunner().invoke(main, ["check", p]).output
    # check takes --allow-zero as annotate does: no assumption then, and the If's dims are unresolved
    r = CliRunner().invoke(main, ["check", "--format", "json", p, "--allow-zero", "past_seq"])
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["models"][0]["assumptions"] == []
    assert doc["models"][0]["status"] == "unresolved" and doc["models"][0]["unresolved_count"] == 2


# ------------------------------------------------------------------ an If on data (issue 12, item 5)

def test_nested_if_on_data_keeps_the_dims_all_branches_agree_on():
    import numpy as np
    from oracle import check

    m = edge_models.nested_if_on_data()
    cases = []
    for batch, samples in ((1, 3), (2, 5)):
        for sr, sign in ((16000, 1.0), (16000, -1.0), (8000, 1.0)):  # each of the three paths
            feeds = {"x": np.full([batch, samples], sign, np.float32),
                     "state": np.ones([2, batch, 128], np.float32), "sr": np.array(sr, np.int64)}
            cases.append(({"batch": batch, "samples": samples}, feeds))
    res = check(m, cases, fresh_ok=["frames"])
    assert [str(d) for d in res.shape("state_out")] == ["2", "batch", "128"]
    frames = res.shape("frames")
    assert str(frames[0]) == "batch" and str(frames[1]) in res.fresh  # samples or 2*samples: fresh
    assert res.positive_assumptions() == []
