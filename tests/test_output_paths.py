"""No output of a command may be its input or another of its outputs, whatever
path names them (a symbolic link, a hard link) and whatever --force says."""

import os

import numpy as np
import onnx
import onnxruntime as ort
from click.testing import CliRunner
from helpers import F, model
from onnx import helper, numpy_helper

from onnxsym.cli import main


def _write_model(folder, name="m.onnx", external=False):
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "w")
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [("x", F, ["batch", 3])],
              [("y", F, None)], inits=[w])
    path = os.path.join(folder, name)
    if external:
        onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin",
                  size_threshold=0)
    else:
        onnx.save(m, path)
    return path


def _runs(path):
    """The model still loads and runs in onnxruntime, at two batch sizes, with the inferred shape."""
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for batch in (2, 5):
        (y,) = sess.run(None, {"x": np.ones((batch, 3), np.float32)})
        assert y.shape == (batch, 4)


def _refused(args, *untouched):
    before = [open(p, "rb").read() for p in untouched]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output, r.output
    assert [open(p, "rb").read() for p in untouched] == before
    return r.stderr


def test_the_mlir_output_is_never_the_input_model_even_with_force(tmp_path):
    m = _write_model(str(tmp_path))
    out = str(tmp_path / "out.onnx")
    err = _refused(["annotate", m, "-o", out, "--mlir", m, "--force"], m)
    assert "the MLIR output" in err and "is the input model" in err and "--force does not change that" in err
    assert not os.path.exists(out)  # refused before anything is written
    _refused(["annotate", m, "--in-place", "--mlir", m, "--force"], m)
    _runs(m)


def test_the_mlir_output_is_never_the_annotated_output(tmp_path):
    m = _write_model(str(tmp_path))
    out = str(tmp_path / "out.onnx")
    err = _refused(["annotate", m, "-o", out, "--mlir", out, "--force"])
    assert "is also the output" in err and not os.path.exists(out)
    r = CliRunner().invoke(main, ["annotate", m, "-o", out, "--mlir", str(tmp_path / "out.mlir"), "-q"])
    assert r.exit_code == 0, r.output
    _runs(out)
    assert open(str(tmp_path / "out.mlir")).read().startswith("module")


def test_links_to_the_input_are_the_input(tmp_path):
    m = _write_model(str(tmp_path))
    soft, hard = str(tmp_path / "soft.onnx"), str(tmp_path / "hard.onnx")
    os.symlink(m, soft)
    os.link(m, hard)
    for alias in (soft, hard):
        err = _refused(["annotate", m, "-o", alias, "--force"], m)
        assert "in-place" in err
        _refused(["annotate", alias, "-o", m, "--force"], m)
        _refused(["annotate", m, "-o", str(tmp_path / "o.onnx"), "--mlir", alias, "--force"], m)
        _refused(["mlir", m, "-o", alias, "--force"], m)
        _refused(["mlir", alias, "-o", os.path.join(str(tmp_path), ".", "m.onnx"), "--force"], m)
    _refused(["mlir", m, "-o", m, "--force"], m)
    _runs(m)


def test_no_output_is_a_weight_file_of_the_model(tmp_path):
    m = _write_model(str(tmp_path), external=True)
    weights = str(tmp_path / "w.bin")
    err = _refused(["annotate", m, "-o", weights, "--force"], m, weights)
    assert "a weight file of the input model" in err
    _refused(["annotate", m, "--in-place", "--mlir", weights, "--force"], m, weights)
    _refused(["annotate", m, "-o", str(tmp_path / "o.onnx"), "--mlir", weights, "--force"], m, weights)
    _runs(m)


def test_a_weight_file_only_a_constant_node_names_is_no_output_either(tmp_path):
    """The weights in a Constant node's attribute, stored externally (``convert_attribute``):
    the scan that finds weight files reads node attributes too, not only initializers (and
    the Constant rule reads them from the model's folder: it failed on them before)."""
    c = helper.make_node("Constant", [], ["w"], name="c",
                         value=numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "wt"))
    m = model([c, helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [("x", F, ["batch", 3])], [("y", F, None)])
    path = str(tmp_path / "m.onnx")
    onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin",
              size_threshold=0, convert_attribute=True)
    weights = str(tmp_path / "w.bin")
    assert not onnx.load(path, load_external_data=False).graph.initializer
    import onnxsym  # the Constant's value is read from its weight file, as an initializer's is
    assert [str(d) for d in onnxsym.infer(path).shape("y")] == ["batch", "4"]
    assert "a weight file of the input model" in _refused(["annotate", path, "-o", weights, "--force"], path, weights)
    _runs(path)


def test_a_file_that_appears_while_annotating_is_not_replaced_without_force(tmp_path, monkeypatch):
    """-o OUT is checked before inference and again as it is put in place: a file another run
    wrote meanwhile stays as it is (exit 2, naming it), and no temporary file is left behind."""
    import onnxsym.api as api

    src = _write_model(str(tmp_path))
    out, mlir = str(tmp_path / "out.onnx"), str(tmp_path / "out.mlir")
    write_result = api.write_result

    def racing(*args, **kwargs):  # another run writes OUT while this one infers
        with open(out, "wb") as f:
            f.write(b"the other run's model")
        return write_result(*args, **kwargs)

    monkeypatch.setattr(api, "write_result", racing)
    r = CliRunner().invoke(main, ["annotate", src, "-o", out, "--mlir", mlir])
    assert r.exit_code == 2 and f"{out} exists (it appeared while onnxsym ran); use --force" in r.output, r.output
    assert "Traceback" not in r.output
    assert open(out, "rb").read() == b"the other run's model"
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "out.onnx"]  # the MLIR output neither: all or none
    r = CliRunner().invoke(main, ["annotate", src, "-o", out, "--force"])
    assert r.exit_code == 0, r.output
    _runs(out)


def test_without_replace_an_existing_file_is_an_error_and_nothing_is_written(tmp_path):
    from onnxsym.errors import OutputError
    from onnxsym.output.atomic import write_outputs

    first, second = str(tmp_path / "a"), str(tmp_path / "b")
    open(second, "w").write("kept")
    try:
        write_outputs([(first, b"1"), (second, b"2")], replace=False)
        raise AssertionError("replaced")
    except OutputError as exc:
        assert "exists" in str(exc)
    assert sorted(os.listdir(tmp_path)) == ["b"] and open(second).read() == "kept"
    write_outputs([(first, b"1")], replace=False)
    assert open(first).read() == "1"
    write_outputs([(second, b"2")], replace=[second])
    assert open(second).read() == "2"
