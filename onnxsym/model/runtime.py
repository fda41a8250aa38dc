"""onnxruntime asked whether it loads a model: the judge where onnx's inference and the kernels
differ. (onnxruntime is an extra: the callers say what they do without it.) The load runs in
this process: a child process would cost every annotate of a model with subgraphs its start-up
(onnxruntime imported again, about 0.2 s), and loading has not crashed natively; running a
model at sizes does (verify and boundary run it in a child, onnxsym.model.isolated)."""

from __future__ import annotations


def load_error(data: bytes, optimize: bool) -> str | None:
    """onnxruntime's message on loading the serialized model ``data``, or None when it loads.
    ``optimize``: with the basic graph optimizations a user's session runs (constant folding
    computes shapes its inference alone leaves open, and infers again); else the graph as written.
    Raises ImportError without onnxruntime."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_BASIC if optimize
                                     else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    opts.log_severity_level = 4
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    try:
        ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises several unrelated types; each is a refusal
        return str(exc)
    return None
