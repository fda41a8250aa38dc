"""A UserInputError names the library's argument; the command line names its option."""

import os
import re

import pytest
from click.testing import CliRunner

import onnxsym
from onnxsym.cli import main
from onnxsym.commands.check import CheckOptions, check_model
from onnxsym.cost.solve import parse_budget
from onnxsym.errors import UserInputError

BERT = os.path.join(os.path.dirname(__file__), "..", "models", "bert_tiny_ts.onnx")


def _error(fn):
    with pytest.raises(UserInputError) as info:
        fn()
    return str(info.value), info.value.cli


@pytest.mark.parametrize("call, library, option", [
    (lambda: onnxsym.infer(BERT, bind={"btch": 1}), "bind['btch']: the model has no input symbol 'btch'",
     "--bind btch: the model has no input symbol 'btch'"),
    (lambda: onnxsym.infer(BERT, ranges={"seq": (5, 2)}), "ranges['seq'] = (5, 2)", "--range seq=5:2"),
    (lambda: onnxsym.infer(BERT, assume=["seq = batch"]), "assume 'seq = batch': expected",
     "--assume 'seq = batch': expected"),
    (lambda: parse_budget("lots"), "budget 'lots': expected a size", "--budget 'lots': expected a size"),
    (lambda: onnxsym.infer(BERT).cost().solve("heads", 10**9), "symbol 'heads': not an unbound symbol",
     "--solve heads: not an unbound symbol"),
    (lambda: onnxsym.infer(BERT).cost().solve("batch", 10**9), "give bind={'seq': INT} (allow_zero for 0)",
     "give --bind seq=INT (--allow-zero for 0)"),
    (lambda: check_model(BERT, CheckOptions(require=(("btch", 1, 3),)), reraise=True),
     "require['btch']: the model has no input symbol 'btch'", "--require btch: the model has no input symbol"),
])
def test_the_library_names_its_argument_and_the_command_line_its_option(call, library, option):
    message, cli = _error(call)
    assert library in message and "--" not in message
    assert option in cli


def test_check_reports_a_bad_bind_by_its_option():
    r = CliRunner().invoke(main, ["check", BERT, "--bind", "btch=1"])
    assert r.exit_code == 2 and "error: --bind btch: the model has no input symbol 'btch'" in r.output, r.output


GPT2 = os.path.join(os.path.dirname(__file__), "..", "models", "real", "hf_gpt2_ts.onnx")


def _cli(*args):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("command", ["annotate", "verify", "check", "show", "explain", "domain", "cost"])
def test_a_name_bound_or_ranged_twice_with_other_values_is_an_error(command, tmp_path):
    extra = ["input_ids"] if command == "explain" else ["-o", str(tmp_path / "o.onnx")] if command == "annotate" else []
    r = _cli(command, BERT, *extra, "--bind", "seq=3", "--bind", "seq=4")
    assert r.exit_code == 2 and "seq is given twice, with different values ('seq=4' after 'seq=3')" in r.stderr, r.output
    if command != "check":  # (check takes no --range)
        r = _cli(command, BERT, *extra, "--range", "seq=1:8", "--range", "seq=1:9")
        assert r.exit_code == 2 and "seq is given twice" in r.stderr, r.output
    # the same value twice is no conflict
    r = _cli(command, BERT, *extra, "--bind", "seq=3", "--bind", "seq=3")
    assert "given twice" not in r.output


@pytest.mark.parametrize("command", ["show", "explain"])
def test_show_and_explain_take_the_knowledge_options(command):
    extra = ["input_ids"] if command == "explain" else ["-v"]  # (show's symbols section is -v's)
    r = _cli(command, BERT, *extra, "--range", "seq=2:8", "--assume", "seq == batch")
    assert r.exit_code == 0, r.output
    # the assumption took effect: input_ids is [batch, seq] with seq rewritten as batch
    assert "input_ids[1] = batch" in r.output if command == "explain" else "int64[batch, batch]" in r.output
    if command == "show":  # the range too: batch, equal to seq, takes seq's range
        assert re.search(r"batch +\[2, 8\]", r.output), r.output
        r = _cli(command, BERT, "-v", "--allow-zero", "batch")  # (seq >= 1: the pooler's Gather reads row 0)
        assert re.search(r"batch +\[0, ", r.output), r.output
    r = _cli(command, BERT, *extra, "--range", "nosuch=1:8")
    assert r.exit_code == 2 and "--range nosuch: the model has no input symbol 'nosuch'" in r.stderr, r.output


def test_verify_refuses_a_bind_of_an_unknown_or_outside_symbol():
    r = _cli("verify", BERT, "--bind", "sq=3")
    assert r.exit_code == 2 and "--bind sq: the model has no input symbol 'sq'; did you mean 'seq'?" in r.stderr, r.output
    r = _cli("verify", GPT2, "--bind", "past=0")
    assert r.exit_code == 2 and "--bind past=0: outside past's range [1," in r.stderr and "--allow-zero past" in r.stderr


def test_assume_errors_name_the_whole_assumption():
    r = _cli("domain", BERT, "--assume", "seq // 0 == 1")
    assert r.exit_code == 2 and "--assume 'seq // 0 == 1': division by zero in 'seq // 0'" in r.stderr, r.output
    r = _cli("domain", BERT, "--assume", "seq == 0")
    assert r.exit_code == 2, r.output
    assert "--assume 'seq == 0': it cannot hold" in r.stderr and "seq in [1, 9223372036854775807]" in r.stderr
    assert "--allow-zero seq lets it be 0" in r.stderr
    # and with --allow-zero the same assumption holds (seq = 0 everywhere)
    r = _cli("domain", BERT, "--allow-zero", "seq", "--assume", "seq == 0")
    assert "cannot hold" not in r.output
    m = onnxsym.infer(BERT, allow_zero=["seq"], assume=["seq == 0"])
    assert all("seq" not in str(d) for d in m.shape(m.produced[-1]))
    message, cli = _error(lambda: onnxsym.infer(BERT, assume=["seq == 0"]))
    assert "allow_zero=['seq']" in message and "--allow-zero seq" in cli


def test_check_prints_a_file_error_on_stderr_and_the_report_on_stdout(tmp_path):
    r = _cli("check", str(tmp_path / "missing.onnx"), BERT)
    assert r.exit_code == 2
    assert "missing.onnx: error: no such file" in r.stderr and "missing.onnx" not in r.stdout
    assert "bert_tiny_ts.onnx: ok" in r.stdout


@pytest.mark.parametrize("kwargs, library, option", [
    (dict(bind={"batch": 2.5}), "bind['batch']: expected an int, got float 2.5", "--bind batch: expected an int"),
    (dict(bind={"batch": "2"}), "bind['batch']: expected an int, got str '2'", "--bind batch: expected an int"),
    (dict(bind={"batch": True}), "bind['batch']: expected an int, got bool True", "--bind batch: expected an int"),
    (dict(bind={3: 2}), "bind: a symbol name must be a str, got int 3", "bind: a symbol name"),
    (dict(ranges={"seq": (1, 2, 3)}), "ranges['seq']: expected (lo, hi), got (1, 2, 3)", "--range seq: expected (lo, hi)"),
    (dict(ranges={"seq": (1.5, 8)}), "ranges['seq'] = (1.5, 8): expected an int, got float 1.5", "--range seq"),
    (dict(ranges={"seq": 8}), "ranges['seq']: expected (lo, hi), got 8", "--range seq"),
    (dict(allow_zero=3), "allow_zero: expected True, a symbol name or names, got int 3", "allow_zero"),
])
def test_argument_types_are_user_errors_naming_the_argument(kwargs, library, option):
    message, cli = _error(lambda: onnxsym.infer(BERT, **kwargs))
    assert message.startswith(library), message
    assert cli.startswith(option), cli


def test_numpy_integers_are_ints_and_a_text_assume_is_one_assumption():
    import numpy as np
    r = onnxsym.infer(BERT, bind={"batch": np.int64(3)}, ranges={"seq": (np.int32(1), 8)}, assume="seq == 1")
    assert [str(d) for d in r.shape("input_ids")] == ["3", "1"]
    assert type(r.shape("input_ids")[0]) is int


def test_model_bytes_are_the_serialized_model():
    with open(BERT, "rb") as f:
        data = f.read()
    by_bytes, by_path = onnxsym.infer(data), onnxsym.infer(BERT)
    assert {n: [str(d) for d in by_bytes.shape(n)] for n in by_bytes.produced} == \
        {n: [str(d) for d in by_path.shape(n)] for n in by_path.produced}
    assert onnxsym.annotate(data).graph.value_info
    with pytest.raises(onnxsym.OnnxsymError, match="^the model bytes: not an ONNX model"):
        onnxsym.infer(b"not a model")
    for bad in (None, 3):
        message, _ = _error(lambda: onnxsym.infer(bad))
        assert message.startswith("model: expected a path, a ModelProto, the model's bytes, an onnx_ir.Model "
                                  "or a torch ONNXProgram, got "), message


def test_cost_solve_advice_for_a_data_dependent_count_is_taken(tmp_path):
    from cli_models import nonzero_model, save
    p = save(tmp_path, nonzero_model(), "nz.onnx")
    r = _cli("cost", p, "--solve", "n", "--budget", "1MB")
    assert r.exit_code == 2
    advice = re.search(r"give (--bind \S+=INT)", r.stderr)
    assert advice, r.stderr
    opt, name = advice.group(1).split(" ")[0], advice.group(1).split(" ")[1].split("=")[0]
    r = _cli("cost", p, "--solve", "n", "--budget", "1MB", opt, f"{name}=3")
    assert r.exit_code == 0, r.output
    # n's 4 float bytes and the count's 3 int64 indices (2 rows) live together: 8n + 24 <= 10**6 at n = 124997
    assert "largest n = 124997" in r.stdout, r.stdout
    # without --solve, or on another command, the count is refused with why
    r = _cli("cost", p, "--bind", f"{name}=3")
    assert r.exit_code == 2 and "a count the data decides (NonZero 'nz'): only --solve takes it" in r.stderr
    r = _cli("cost", p, "--solve", "n", "--budget", "1MB", "--bind", f"{name}=3", "--bind", "zz=1")
    assert r.exit_code == 2 and "--bind zz: the model has no input symbol 'zz'" in r.stderr


@pytest.mark.parametrize("assumption, why, hint", [
    ("2*seq == 3", "no integer size in the range solves it", False),
    ("seq*seq == 2", "no integer size in the range solves it", False),
    ("seq == -1", "these can never be equal", False),
    ("seq == seq + 1", "these can never be equal", False),
    ("seq + batch == 0", "these can never be equal", True),
])
def test_an_assumption_no_size_meets_is_an_error(assumption, why, hint):
    r = _cli("domain", BERT, "--assume", assumption)
    assert r.exit_code == 2 and f"--assume '{assumption}': it cannot hold ({why})" in r.stderr, r.stderr
    assert ("--allow-zero" in r.stderr) == hint, r.stderr  # suggested only where 0 would make it hold
    # one that integers meet is taken
    assert _cli("domain", BERT, "--assume", "2*seq == 4").exit_code == 0


def test_a_range_past_int64_is_an_error():
    r = _cli("domain", BERT, "--range", "seq=1:99999999999999999999")
    assert r.exit_code == 2 and "expected 0 <= LO <= HI <= 2**63 - 1" in r.stderr, r.output


def test_user_input_error_is_exported_at_the_top_level():
    assert onnxsym.UserInputError is UserInputError and "UserInputError" in onnxsym.__all__
    assert issubclass(onnxsym.UserInputError, onnxsym.OnnxsymError)
    from onnxsym.errors import PinnedError
    assert onnxsym.PinnedError is PinnedError


@pytest.mark.parametrize("kwargs, said", [
    (dict(dynamic=["input_ids:0=batch"]), "dynamic: expected a mapping {input name: {axis: symbol name}}"),
    (dict(dynamic="input_ids:0=batch"), "got a str (the command line's INPUT:AXIS=NAME texts are for --dynamic)"),
    (dict(dynamic={"input_ids": [0]}), "dynamic['input_ids']: expected a mapping"),
    (dict(dynamic={"input_ids": ["batch"]}), "got ['batch']"),
    (dict(assume=[("batch", "==", "3")]), "expected 'EXPR == EXPR' or a pair (lhs, rhs)"),
])
def test_library_misuse_is_a_typed_error_saying_what_is_expected(kwargs, said):
    message, _ = _error(lambda: onnxsym.infer(BERT, **kwargs))
    assert said in message, message
    message, _ = _error(lambda: onnxsym.annotate(BERT, **kwargs))
    assert said in message, message
