#!/usr/bin/env python
"""Save the optimized and quantized models that the contrib-op tests need but a
clean test environment cannot make: onnxruntime's transformer optimizer imports
torch at opt_level 1 and above, and its 4-bit weight quantizer needs onnx_ir.

    python models/make_optimized.py      # needs torch and onnx_ir beside onnxruntime

Writes models/optimized/{bert,llama}_tiny_dynamo_opt2.onnx and
models/optimized/gpt_tiny_ts_nbits4.onnx. The opt_level-0 cases and the dynamic
quantizer run at test time (tests/test_rules_contrib_models.py).
"""

import logging
import os

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "optimized")
MS = "com.microsoft"


def optimize(name, model_type, hidden=64, heads=4):
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    m = optimizer.optimize_model(os.path.join(HERE, name + ".onnx"), model_type=model_type, num_heads=heads,
                                 hidden_size=hidden, opt_level=2, use_gpu=False, verbose=False,
                                 optimization_options=FusionOptions(model_type))
    model = m.model
    if not any(o.domain == MS for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid(MS, 1))
    return model


def quantize_4bit(name):
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer

    config = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=True, op_types_to_quantize=("MatMul", "Gather"),
                                          quant_axes=(("MatMul", 0), ("Gather", 1)))
    q = MatMulNBitsQuantizer(onnx.load(os.path.join(HERE, name + ".onnx")), algo_config=config)
    q.process()
    return q.model.model


def main():
    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    os.makedirs(OUT, exist_ok=True)
    for name, model in [("bert_tiny_dynamo_opt2", optimize("bert_tiny_dynamo", "bert")),
                        ("llama_tiny_dynamo_opt2", optimize("llama_tiny_dynamo", "gpt2")),
                        ("gpt_tiny_ts_nbits4", quantize_4bit("gpt_tiny_ts"))]:
        path = os.path.join(OUT, name + ".onnx")
        onnx.save(model, path)
        print(f"{path}: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
