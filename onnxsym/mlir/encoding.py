"""encoding-to-symbol: onnxsym's encoding form read back into the propagate-symbol form."""

from __future__ import annotations


def encoding_to_symbol(text: str) -> str:
    raise NotImplementedError
