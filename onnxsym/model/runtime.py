"""onnxruntime asked whether it loads a model: the judge where onnx's inference and the kernels
differ. (onnxruntime is an extra: the callers say what they do without it.) The load runs in
this process: a child process would cost every annotate of a model with subgraphs its start-up
(onnxruntime imported again, about 0.2 s), and loading has not crashed natively; running a
model at sizes does (verify and boundary run it in a child, onnxsym.model.isolated)."""

from __future__ import annotations

# The basic level's graph transformers (onnxruntime 1.32) but ConstantFolding: fusions,
# eliminations, layout and quantization rewrites, which make the graph faster to run and compute
# no shape. Each rewrite resolves the graph again (inference of every node, subgraphs included),
# which is most of a session's cost on a small graph with a Loop or Scan (tf_gru_text: 6.2 ms a
# session, 3.7 without them). Constant folding stays: it computes shapes inference alone leaves
# open (a Shape of a written static dim folded into a TopK's k, fuzzer seed 6515), and infers
# again. On every light copy the load check gave onnxruntime over the fuzzer's seeds, the models
# under models/ and the load-check tests, the verdict with them and without them was the same
# message (bench/ort_load_verdicts.py). A name this onnxruntime does not know is ignored.
NOT_SHAPES = ("Level1_RuleBasedTransformer", "CommonSubexpressionElimination", "ConstantSharing",
              "MatMulAddFusion", "ReshapeFusion", "GeluFusionL1", "LayerNormFusionL1",
              "SliceConcatToSpaceToDepthFusion", "TransposeOptimizer", "RemoveDuplicateCastTransformer",
              "CastFloat16Transformer", "FreeDimensionOverrideTransformer", "QDQPropagationTransformer",
              "EnsureUniqueDQForNodeUnit", "DoubleQDQPairsRemover", "WeightBiasQuantization", "WhereDummyDq")


def load_error(data: bytes, optimize: bool, all_basic: bool = False) -> str | None:
    """onnxruntime's message on loading the serialized model ``data``, or None when it loads.
    ``optimize``: with the constant folding a user's session runs (it computes shapes its
    inference alone leaves open, and infers again; ``all_basic``: with every other basic
    transformer too, as bench/ort_load_verdicts.py compares); else the graph as written.
    Raises ImportError without onnxruntime."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_BASIC if optimize
                                     else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    opts.log_severity_level = 4
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    disabled = list(NOT_SHAPES) if optimize and not all_basic else None
    try:
        ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"], disabled_optimizers=disabled)
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises several unrelated types; each is a refusal
        return str(exc)
    return None
