"""encoding-to-symbol: onnxsym's encoding form read back into the propagate-symbol form.

The encoding form (``tensor<?x640x?xf16, [@S0, @S1]>``: one symbol per dynamic
dim) moves every binding into the types; this moves it back out: the encodings
are stripped and a ``symbol.bind_symbolic_shape`` follows each value's definition.
It reads the text onnxsym writes (pretty or generic), one op per line; it is not
a general MLIR parser.
"""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

from ..errors import OnnxsymError
from .printer import bind_line
from .symbols import bind_map


class MlirFormatError(OnnxsymError):
    """The text is not onnxsym's encoding form."""


_ENCODED = re.compile(r"tensor<((?:(?:\?|\d+)x)*)([^<>]*(?:<[^<>]*>)?[^<>]*?), \[(@[^\]]*)\]>")
_SYM_PRETTY = re.compile(r"^\s*(%\S+) = symbol\.symbolic_int (@\"(?:[^\"\\]|\\.)*\"|@\S+)")
_SYM_GENERIC = re.compile(r"^\s*(%\S+) = \"symbol\.symbolic_int\"\(.*sym_name = \"((?:[^\"\\]|\\.)*)\"")
_DEF = re.compile(r"^(\s*)(%[^\s:=]+)(?::(\d+))? = ")


def _split_top(text: str) -> List[str]:
    """Split at commas outside brackets and quotes."""
    parts, depth, cur, quoted = [], 0, "", False
    for ch in text:
        if ch == '"' and not cur.endswith("\\"):
            quoted = not quoted
        if quoted:
            pass
        elif ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()] if cur.strip() else parts


def _result_types(line: str) -> List[str]:
    """The result types of an op line ``... : (A, B) -> R``."""
    sig = line[line.rindex(") -> ") + 5:].strip() if ") -> " in line else line.rsplit(" : ", 1)[1].strip()
    if sig.startswith("(") and sig.endswith(")"):
        return _split_top(sig[1:-1])
    return [sig]


def _unescape(name: str) -> str:
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), name)


def encoding_to_symbol(text: str) -> str:
    """The propagate-symbol form of onnxsym's encoding form (same syntax, pretty or generic)."""
    from .printer import symbol_ref

    generic = text.lstrip().startswith('"builtin.module"')
    lines = text.split("\n")
    syms: Dict[str, str] = {}
    for line in lines:
        m = _SYM_PRETTY.match(line)
        if m:
            syms[m.group(2)] = m.group(1)
        m = _SYM_GENERIC.match(line)
        if m:
            syms[symbol_ref(_unescape(m.group(2)))] = m.group(1)
    if "symbol.bind_symbolic_shape" in text:
        raise MlirFormatError("the text already binds shapes with symbol.bind_symbolic_shape: "
                              "not onnxsym's encoding form")
    if not text.lstrip().startswith(('"builtin.module"', "module {")):
        raise MlirFormatError("not an MLIR module written by onnxsym")

    def binds(refs_types: List[Tuple[str, str]], ind: str) -> List[str]:
        out = []
        for ref, ty in refs_types:
            m = _ENCODED.fullmatch(ty)
            if not m:
                continue
            shape = [d for d in m.group(1).split("x") if d]
            refs = _split_top(m.group(3))
            try:
                it = iter(syms[r] for r in refs)
                entries = [int(d) if d != "?" else next(it) for d in shape]
            except (KeyError, StopIteration):
                raise MlirFormatError(f"the encoding of {ref} ({ty}) names an unknown symbol or too few") from None
            operands, amap = bind_map(entries)
            out.append(bind_line(ref, _ENCODED.sub(_plain, ty), operands, amap, generic, ind))
        return out

    out: List[str] = []
    pending_entry: List[str] = []   # the function's argument bindings: after its symbolic_ints
    regions: List[Tuple[str, str, int]] = []  # open region ops: indent, result name, count
    entry_seen = False
    for line in lines:
        stripped = line.strip()
        if pending_entry and not (_SYM_PRETTY.match(line) or _SYM_GENERIC.match(line)):
            out += pending_entry
            pending_entry = []
        out.append(_ENCODED.sub(_plain, line))
        ind = line[:len(line) - len(line.lstrip())]
        header = None
        if stripped.startswith("func.func "):
            header = stripped[stripped.index("(") + 1:stripped.rindex(") ->") if ") ->" in stripped else stripped.rindex(")")]
        elif stripped.startswith("^bb0("):
            header = stripped[len("^bb0("):stripped.rindex("):")]
        if header is not None:
            args = [tuple(a.split(": ", 1)) for a in _split_top(header)]
            is_entry = not entry_seen
            entry_seen = True
            new = binds([(a, t) for a, t in args], ind + "  ")
            if is_entry:
                pending_entry = new
            else:
                out += new
            continue
        if stripped.startswith("})") and regions and regions[-1][0] == ind:
            _, name, count = regions.pop()
            out += binds(_refs(name, count, _result_types(stripped)), ind)
            continue
        m = _DEF.match(line)
        if m and not _SYM_PRETTY.match(line) and not _SYM_GENERIC.match(line):
            count = int(m.group(3) or 1)
            if stripped.endswith("({"):
                regions.append((ind, m.group(2), count))
            else:
                out += binds(_refs(m.group(2), count, _result_types(stripped)), ind)
    return "\n".join(out)


def _refs(name: str, count: int, types: List[str]) -> List[Tuple[str, str]]:
    if count == 1:
        return [(name, types[0])]
    return [(f"{name}#{k}", t) for k, t in enumerate(types)]


def _plain(m: re.Match) -> str:
    return f"tensor<{m.group(1)}{m.group(2)}>"
