"""A UserInputError names the library's argument; the command line names its option."""

import os

import pytest
from click.testing import CliRunner

import onnxsym
from onnxsym.cli import main
from onnxsym.cost.solve import parse_budget
from onnxsym.errors import UserInputError
from onnxsym.report import CheckOptions, check_model

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
