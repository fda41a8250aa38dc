"""The torch export judged by IREE: torch-mlir's ONNX importer (as iree-import-onnx runs it) for the
reference text, iree-compile for the CPU, iree-base-runtime to run it, onnxruntime for the truth."""

import numpy as np
import onnx
import onnxruntime as ort
from iree import runtime as ireert
from iree.compiler import ir
from iree.compiler import tools as ireec
from iree.compiler.extras import onnx_importer

import onnxsym

CPU = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
       "--iree-llvmcpu-target-cpu=generic"]


def importer_text(model: onnx.ModelProto) -> str:
    """What ``iree-import-onnx MODEL`` writes (it runs onnx's shape inference first, as here)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    ctx = ir.Context()
    info = onnx_importer.ModelInfo(inferred)
    module = info.create_module(context=ctx).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    return str(module)


def torch_mlir_importer_text(model: onnx.ModelProto) -> str:
    """What ``python -m torch_mlir.tools.import_onnx MODEL`` writes (the torch-mlir wheel, no torch needed)."""
    from torch_mlir import ir as tir
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.extras import onnx_importer as tm_importer

    inferred = onnx.shape_inference.infer_shapes(model)
    ctx = tir.Context()
    torch_dialect.register_dialect(ctx)
    info = tm_importer.ModelInfo(inferred)
    module = info.create_module(context=ctx).operation
    tm_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    return str(module)


def compile_cpu(text: str) -> bytes:
    return ireec.compile_str(text, input_type="auto", extra_args=CPU)


def compile_error(text: str) -> str:
    """iree-compile's diagnostics for ``text``, which must fail to compile."""
    try:
        compile_cpu(text)
    except ireec.CompilerToolError as exc:
        return str(exc)
    raise AssertionError("iree-compile compiled it")


def run_iree(vmfb: bytes, func: str, inputs):
    config = ireert.Config("local-sync")
    ctx = ireert.SystemContext(config=config)
    ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb))
    out = ctx.modules.module[func](*inputs)
    outs = out if isinstance(out, (list, tuple)) else [out]
    return [np.asarray(o.to_host() if hasattr(o, "to_host") else o) for o in outs]


def run_ort(model: onnx.ModelProto, inputs):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)


def expected_shape(result, name, bindings):
    return tuple(onnxsym.evaluate(d, bindings) if not isinstance(d, int) else d for d in result.shape(name))
