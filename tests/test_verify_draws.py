"""verify's sizes and runs: drawn inside the domain (its boundaries, 0 and 1 where allowed,
a symbol an equality pins solved from it), any element type fed and compared, onnxruntime's
own log kept off stderr, and a --bind that cannot be run named with what it breaks."""

import os
import subprocess
import sys

import numpy as np
import pytest
from cli_models import nonzero_model, reshape_by_input_model, save
from click.testing import CliRunner
from helpers import I64, F, init, model
from onnx import TensorProto as T
from onnx import helper

import onnxsym
from onnxsym.cli import main
from onnxsym.commands.verify import constrained_assignments, verify
from onnxsym.errors import UserInputError, VerificationError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SILERO = os.path.join(ROOT, "models", "real", "silero_vad.onnx")


def _hf_mask(mask_first=False):
    """An attention block whose mask is declared [batch, total_seq] against scores over
    past + seq keys: onnxruntime runs it only where total_seq is past + seq (or 1)."""
    nodes = [helper.make_node("Concat", ["past", "new"], ["k"], axis=1, name="cat"),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1], name="tr"),
             helper.make_node("MatMul", ["new", "kt"], ["scores"], name="mm"),
             helper.make_node("Cast", ["mask"], ["mf"], to=T.FLOAT, name="cast"),
             helper.make_node("Unsqueeze", ["mf", "ax"], ["mu"], name="unsq"),
             helper.make_node("Add", ["scores", "mu"], ["y"], name="add")]
    ins = [("new", F, ["batch", "seq", 4]), ("past", F, ["batch", "past", 4]), ("mask", I64, ["batch", "total_seq"])]
    return model(nodes, ins[2:] + ins[:2] if mask_first else ins, [("y", F, None)],
                 [init("ax", np.array([1], np.int64))])


@pytest.mark.parametrize("mask_first", [False, True])
def test_a_mask_length_is_solved_from_the_equality_it_must_meet(mask_first):
    m = _hf_mask(mask_first)
    draws = constrained_assignments(onnxsym.infer(m), count=5)
    assert all(b["total_seq"] in (b["past"] + b["seq"], 1) for b in draws), draws
    assert sum(b["total_seq"] == b["past"] + b["seq"] > 1 for b in draws) >= 3, draws
    report = verify(m, assignments=draws)  # onnxruntime runs at every one of them
    assert report.ok and report.checked_dims > 0


def test_the_first_draw_is_at_the_low_end_0_with_allow_zero():
    m = _hf_mask()
    low = constrained_assignments(onnxsym.infer(m))[0]
    assert set(low.values()) == {1}
    low = constrained_assignments(onnxsym.infer(m, allow_zero=True), count=3)
    assert low[0] == {"batch": 0, "seq": 0, "past": 0, "total_seq": 0}
    assert any(b["seq"] == 1 for b in low[1:]), low  # and 1 where the low end is 0
    assert verify(m, assignments=low, result=onnxsym.infer(m, allow_zero=True)).ok


def test_the_cli_draws_both_ends_of_a_range():
    r = CliRunner().invoke(main, ["verify", os.path.join(ROOT, "models", "bert_tiny_ts.onnx"), "--range", "seq=3:12"])
    assert r.exit_code == 0, r.output
    line = r.stdout.splitlines()[-1]
    assert "seq=3" in line and "seq=12" in line, r.stdout


def test_silero_is_drawn_inside_its_domain():
    # its two branches need 192 <= samples <= 703 and 96 <= samples <= 351
    result = onnxsym.infer(SILERO)
    draws = constrained_assignments(result, count=3)
    assert all(192 <= b["samples"] <= 351 for b in draws), draws
    assert {192, 351} <= {b["samples"] for b in draws}, draws
    report = verify(SILERO, assignments=draws, result=result)
    assert report.ok and report.checked_dims > 0


def _bf16_model():
    return model([helper.make_node("Cast", ["x"], ["b"], to=T.BFLOAT16, name="c"),
                  helper.make_node("Transpose", ["b"], ["t"], name="tr"),
                  helper.make_node("Concat", ["t", "t"], ["cc"], axis=0, name="cat"),
                  helper.make_node("Cast", ["cc"], ["y"], to=T.FLOAT, name="c2")],
                 [("x", F, ["n", 3])], [("y", F, None)])


def test_bfloat16_values_and_inputs_are_fed_and_compared():
    report = verify(_bf16_model())
    assert report.ok and report.checked_values == 2 * 4 and report.checked_dims == 2 * 8  # 4 values, 2 runs
    m = model([helper.make_node("Transpose", ["x"], ["t"], name="tr"),
               helper.make_node("Concat", ["t", "t"], ["y"], axis=1, name="cat")],
              [("x", T.BFLOAT16, ["n", 2])], [("y", T.BFLOAT16, None)])
    report = verify(m)
    assert report.ok and report.checked_dims == 2 * 4
    # a wrong dim over a bfloat16 value is still caught (the comparison is not skipped)
    result = onnxsym.infer(m)
    result.values["y"] = result.values["y"].__class__(T.BFLOAT16, (2, result.values["y"].shape[1] + 1))
    assert [w.value for w in verify(m, result=result).mismatches] == ["y", "y"]


def test_float8_inputs_are_fed_and_int4_ones_refused_clearly():
    def transpose(dtype):
        return model([helper.make_node("Transpose", ["x"], ["y"], name="tr")], [("x", dtype, ["n", 3])],
                     [("y", dtype, None)], opset=21, ir=10)
    report = verify(transpose(T.FLOAT8E4M3FN))
    assert report.ok and report.checked_dims == 2 * 2
    with pytest.raises(VerificationError, match="graph input 'x': verify cannot feed its int4 elements"):
        verify(transpose(T.INT4))


def test_onnxruntime_log_stays_off_stderr(tmp_path):
    p = save(tmp_path, reshape_by_input_model(), "m.onnx")  # Reshape by an input: fails at the fed ones
    r = subprocess.run([sys.executable, os.path.join(ROOT, "cli.py"), "verify", p], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 2
    assert r.stderr.startswith(f"onnxsym: error: {p}: onnxruntime failed at") and len(r.stderr.splitlines()) == 1, r.stderr
    assert "inside the domain" in r.stderr


def test_a_model_onnxruntime_cannot_load_is_one_line_naming_it(tmp_path):
    """An op onnxruntime has no kernel for: its refusal, with the model's path, not the temporary
    copy verify handed onnxruntime (gone by the time the line is read)."""
    m = model([helper.make_node("Patchify", ["x"], ["y"], domain="my.ops")], [("x", T.FLOAT, ["n", 3])],
              [("y", T.FLOAT, None)], opsets=[("my.ops", 1)])
    p = save(tmp_path, m, "m.onnx")
    r = CliRunner().invoke(main, ["verify", p])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"onnxsym: error: {p}: onnxruntime cannot load the model: ")
    assert len(r.stderr.splitlines()) == 1 and "Patchify" in r.stderr and "Load model from" not in r.stderr, r.stderr


def test_verify_names_what_a_bind_breaks():
    gpt2 = os.path.join(ROOT, "models", "real", "hf_gpt2_ts.onnx")
    r = CliRunner().invoke(main, ["verify", gpt2, "--bind", "past=120", "--bind", "seq=9"])
    assert r.exit_code == 2
    assert "no sizes with past=120, seq=9 satisfy what the model needs" in r.stderr
    assert "past + seq <= 128: Gather '/m/transformer/wpe/Gather'" in r.stderr, r.stderr
    with pytest.raises(VerificationError, match="past \\+ seq <= 128"):
        constrained_assignments(onnxsym.infer(gpt2), fixed={"past": 120, "seq": 9})


def test_verify_refuses_to_fix_a_data_dependent_count(tmp_path):
    result = onnxsym.infer(nonzero_model())
    (name,) = result.fresh
    with pytest.raises(UserInputError, match=f"'{name}' is made by NonZero 'nz'.*the run's data decides it"):
        constrained_assignments(result, fixed={name: 3})
    with pytest.raises(UserInputError, match="expected an int"):
        constrained_assignments(result, fixed={"n": 2.5})
