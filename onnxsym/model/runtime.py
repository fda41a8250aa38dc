"""onnxruntime asked whether it loads a model: the judge where onnx's inference and the kernels
differ. (onnxruntime is an extra: the callers say what they do without it.) The load runs in
this process: a child process would cost every annotate of a model with subgraphs its start-up
(onnxruntime imported again, about 0.2 s), and loading has not crashed natively; running a
model at sizes does (verify and boundary run it in a child, onnxsym.model.isolated)."""

from __future__ import annotations

import os
from typing import Any

# The basic level's graph transformers (onnxruntime 1.32) but ConstantFolding: fusions,
# eliminations, layout and quantization rewrites, which make the graph faster to run and compute
# no shape. Each rewrite resolves the graph again (inference of every node, subgraphs included),
# which is most of a session's cost on a small graph with a Loop or Scan (tf_gru_text: 6.2 ms a
# session, 3.7 without them). Constant folding stays: it computes shapes inference alone leaves
# open (a Shape of a written static dim folded into a TopK's k, fuzzer seed 6515), and infers
# again. Without them the session refused a little more, never less, where it was compared: on
# the light copies the load check gave onnxruntime for fuzzer seeds 0-2999, 4100-4599 and
# 6500-6529, the models under models/ and the load-check and control-flow tests
# (bench/ort_load_verdicts.py), no copy every basic transformer refuses loaded without them, and
# 2 of 2,204 loaded with them only (an If branch reads a value whose only other
# readers, two Shapes, fold away: common subexpression elimination merges them first, else the
# folding drops the value's producer). So a refusal is asked again with every basic transformer,
# and that session's verdict is the one given. A name this onnxruntime does not know is ignored.
NOT_SHAPES = ("Level1_RuleBasedTransformer", "CommonSubexpressionElimination", "ConstantSharing",
              "MatMulAddFusion", "ReshapeFusion", "GeluFusionL1", "LayerNormFusionL1",
              "SliceConcatToSpaceToDepthFusion", "TransposeOptimizer", "RemoveDuplicateCastTransformer",
              "CastFloat16Transformer", "FreeDimensionOverrideTransformer", "QDQPropagationTransformer",
              "EnsureUniqueDQForNodeUnit", "DoubleQDQPairsRemover", "WeightBiasQuantization", "WhereDummyDq")


def load_error(data: bytes, optimize: bool, all_basic: bool = False) -> str | None:
    """onnxruntime's message on loading the serialized model ``data``, or None when it loads.
    ``optimize``: with the basic graph optimizations a user's session runs (constant folding
    computes shapes its inference alone leaves open, and infers again), asked first with constant
    folding alone (NOT_SHAPES), a refusal then with all of them (``all_basic``: at once); else the
    graph as written. Raises ImportError without onnxruntime."""
    if not optimize or all_basic:
        return session_error(data, optimize, ())
    error = session_error(data, True, NOT_SHAPES)
    return None if error is None else session_error(data, True, ())


def session_error(data: bytes, optimize: bool, disabled: tuple[str, ...]) -> str | None:
    """onnxruntime's message on loading ``data`` (None: it loads), the ``disabled`` transformers off."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_BASIC if optimize
                                     else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    opts.log_severity_level = 4
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    try:
        _session(ort, data, opts, disabled)
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises several unrelated types; each is a refusal
        return str(exc)
    return None


def _session(ort: Any, data: bytes, opts: Any, disabled: tuple[str, ...]) -> None:
    """Load ``data`` in an onnxruntime session on the CPU (raising its refusal): its C++ session
    made and initialized directly, as ``InferenceSession`` does after checking the providers asked
    for (CPU, always there) and before reading the inputs' and outputs' metadata (nothing a
    verdict needs): a sixth of the session on a small graph. Where this onnxruntime's binding
    takes other arguments (a TypeError: no verdict), through ``InferenceSession``."""
    global _DIRECT
    binding = getattr(getattr(ort, "capi", None), "_pybind_state", None)
    if _DIRECT and binding is not None:
        from_model = os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL") == "1"  # (as InferenceSession reads it)
        try:
            session = binding.InferenceSession(opts, data, False, from_model)
            init = session.initialize_session
        except (TypeError, AttributeError):  # (another binding: no verdict)
            _DIRECT = False
        else:
            try:
                init(["CPUExecutionProvider"], [{}], set(disabled))
                return
            except TypeError:  # (another signature: no verdict)
                _DIRECT = False
    ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled))


# Whether sessions are made through onnxruntime's binding directly (see _session).
_DIRECT = True
