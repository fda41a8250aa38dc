"""The onnxsym.* metadata of an annotated model (onnxsym.output.metadata): written from the Result,
read back, and replaced whole when a model is annotated again."""

import os

import onnx

import onnxsym
from onnxsym.output import metadata

BERT = os.path.join(os.path.dirname(__file__), "..", "models", "bert_tiny_ts.onnx")


def test_metadata_reads_back_what_the_result_holds():
    result = onnxsym.infer(BERT, bind={"batch": 2}, ranges={"seq": (1, 512)})
    meta = metadata.read(onnxsym.write_result(result))
    assert set(meta) <= set(metadata.KEYS) and meta["version"] == onnxsym.__version__
    # the written dims hold at every size the inputs allow (api.written_result): so do the
    # ranges the metadata gives them; what the caller gave is in onnxsym.user
    assert meta["symbols"]["seq"]["range"] == [1, 2**63 - 1]
    assert meta["user"]["bind"] == {"batch": 2} and meta["user"]["ranges"] == {"seq": [1, 512]}
    assert [c["constraint"] for c in meta["constraints"]] == [str(c) for c in result.constraints]
    assert len(meta["unresolved"]) == len(result.unresolved())
    assert metadata.read(onnx.load(BERT, load_external_data=False)) == {}


def test_annotating_again_replaces_every_entry_of_the_earlier_annotation():
    result = onnxsym.infer(BERT).within_domain()  # narrowed to its domain: written as onnxsym.domain
    first = onnxsym.write_result(result)
    first.metadata_props.add(key="producer_note", value="kept")
    assert "domain" in metadata.read(first)
    again = onnxsym.annotate(first, bind={"batch": 1})  # not narrowed this time
    meta = metadata.read(again)
    assert "domain" not in meta and meta["user"]["bind"] == {"batch": 1}
    assert {p.key: p.value for p in again.metadata_props}["producer_note"] == "kept"
    assert [p.key for p in again.metadata_props].count("onnxsym.symbols") == 1
