"""The child process onnxsym runs onnxruntime in (see onnxsym.model.isolated): it reads
requests from stdin and answers on stdout, one pickled frame each, until stdin closes. A native
crash of onnxruntime ends this process only. Run as a script, not imported: it needs numpy and
onnxruntime, not onnxsym."""

import os
import pickle
import struct
import sys

HEADER = struct.Struct("<Q")


def _read(f):
    head = f.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    (n,) = HEADER.unpack(head)
    return pickle.loads(f.read(n))


def _write(f, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(HEADER.pack(len(data)) + data)
    f.flush()


def _session(ort, model, options):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    level = options.get("optimization", "disable_all")
    opts.graph_optimization_level = {"disable_all": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                                     "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                     "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    if options.get("threads"):
        opts.intra_op_num_threads = opts.inter_op_num_threads = options["threads"]
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def _value(ort, feed):
    """An OrtValue of one feed: a numpy array, or (bytes as an array, shape, element type) for
    the types numpy has none of (bfloat16, float8)."""
    if not isinstance(feed, tuple):
        return ort.OrtValue.ortvalue_from_numpy(feed)
    raw, shape, elem_type = feed
    v = ort.OrtValue.ortvalue_from_shape_and_type(list(shape), elem_type)
    if raw.size:
        v.update_inplace(raw)
    return v


def _run(ort, sess, feeds, out_names):
    run_opts = ort.RunOptions()
    run_opts.log_severity_level = 4
    if any(not isinstance(v, tuple) and v.dtype == object for v in feeds.values()):
        # onnxruntime makes no OrtValue of strings: numpy in and out
        outs = sess.run(out_names, feeds, run_opts)
        return [tuple(o.shape) if hasattr(o, "shape") and not isinstance(o, list) else None for o in outs]
    outs = sess.run_with_ort_values(out_names, {k: _value(ort, v) for k, v in feeds.items()}, run_opts)
    return [tuple(o.shape()) if o.is_tensor() else None for o in outs]


def main() -> None:
    # the answers go to a descriptor of their own: what native code prints on stdout goes to stderr
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    try:
        import onnxruntime as ort
    except ImportError as exc:
        _write(answers, ("missing", str(exc)))
        return
    ort.set_default_logger_severity(4)
    _write(answers, ("ready", ort.__version__))
    sess = None
    while True:
        req = _read(requests)
        if req is None:
            return
        try:
            if req[0] == "load":
                _, model, options = req
                sess = None  # (the last model's memory given back first)
                loaded = _session(ort, model, options)
                names = [o.name for o in loaded.get_outputs()]
                sess = loaded if options.get("keep", True) else None  # (a load asked about only: not kept)
                _write(answers, ("ok", names))
            elif req[0] == "run":
                _, feeds, out_names = req
                _write(answers, ("ok", _run(ort, sess, feeds, out_names)))
            else:
                _write(answers, ("error", f"unknown request {req[0]!r}"))
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises several unrelated types; each is its answer
            _write(answers, ("error", str(exc)))


if __name__ == "__main__":
    del sys.path[0]  # (this folder, first on the path as the script's, holds modules named like packages: coverage)
    main()
