"""encoding-to-symbol: a text whose tensor types name their symbols (``tensor<?x640xf16, [@S0, 640]>``)
read back into bindings, as ``bishengir-opt --encoding-to-symbol`` does.

Like the tool, it needs the ``symbol.symbolic_int`` ops that define the names: the
encodings are stripped and a ``symbol.bind_symbolic_shape`` is inserted after each
value's definition (a function argument's: after the function's first op), or after the
last symbolic_int it names when that comes later. ``--style encoding`` (what
symbol-to-encoding makes) has no symbolic_int left, so it cannot be read back; this
reads a text that kept them. It reads the text onnxsym writes (pretty or generic), one op
per line; it is not a general MLIR parser.
"""

from __future__ import annotations

import re

from ..errors import OnnxsymError
from .affine import affine_map
from .printer import bind_line


class MlirFormatError(OnnxsymError):
    """The text is not onnxsym's encoding form."""


_ENCODED = re.compile(r"tensor<((?:(?:\?|\d+)x)*)([^<>]*(?:<[^<>]*>)?[^<>]*?), \[([^\]]*)\]>")
_SYM_PRETTY = re.compile(r"^\s*(%\S+) = symbol\.symbolic_int (@\"(?:[^\"\\]|\\.)*\"|@\S+)")
_SYM_GENERIC = re.compile(r"^\s*(%\S+) = \"symbol\.symbolic_int\"\(.*symbol_name = (@\"(?:[^\"\\]|\\.)*\"|@[^\s}>,]+)")
_DEF = re.compile(r"^(\s*)(%[^\s:=]+)(?::(\d+))? = ")


def _split_top(text: str) -> list[str]:
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


def _result_types(line: str) -> list[str]:
    """The result types of an op line ``... : (A, B) -> R``."""
    sig = line[line.rindex(") -> ") + 5:].strip() if ") -> " in line else line.rsplit(" : ", 1)[1].strip()
    if sig.startswith("(") and sig.endswith(")"):
        return _split_top(sig[1:-1])
    return [sig]


def encoding_to_symbol(text: str) -> str:
    """The bindings of a text whose types carry symbol encodings (same syntax, pretty or generic)."""
    generic = text.lstrip().startswith('"builtin.module"')
    lines = text.split("\n")
    syms: dict[str, str] = {}
    where: dict[str, int] = {}  # symbol ssa -> its line
    for k, line in enumerate(lines):
        m = _SYM_PRETTY.match(line)
        if m:
            syms[m.group(2)] = m.group(1)
            where[m.group(1)] = k
        m = _SYM_GENERIC.match(line)
        if m:
            syms[m.group(2)] = m.group(1)
            where[m.group(1)] = k
    if "symbol.bind_symbolic_shape" in text:
        raise MlirFormatError("the text already binds shapes with symbol.bind_symbolic_shape: "
                              "not an encoding form")
    if not text.lstrip().startswith(('"builtin.module"', "module {")):
        raise MlirFormatError("not an MLIR module written by onnxsym")

    after: dict[int, list[str]] = {}  # line -> the bindings inserted after it, in text order

    def insert(pos: int, ref: str, ty: str, ind: str) -> None:
        m = _ENCODED.fullmatch(ty)
        if not m:
            return
        shape = [d for d in m.group(1).split("x") if d]
        refs = _split_top(m.group(3))
        if len(refs) != len(shape):
            raise MlirFormatError(f"the encoding of {ref} ({ty}) does not name every dim")
        operands: list[str] = []
        results: list[str] = []  # as the tool: one operand per named dim, repeats included
        for r in refs:
            if r.startswith("@"):
                if r not in syms:
                    raise MlirFormatError(f"the encoding of {ref} ({ty}) names {r}, which no symbol.symbolic_int "
                                          "defines (symbol-to-encoding drops them; read a text that kept them)")
                results.append(f"s{len(operands)}")
                operands.append(syms[r])
                pos = max(pos, where[syms[r]])
            else:
                results.append(r)
        amap = affine_map(len(operands), results)
        # each new binding goes right after its anchor, before those inserted there earlier
        after.setdefault(pos, []).insert(0, bind_line(ref, _ENCODED.sub(_plain, ty), operands, amap, generic, ind))

    regions: list[tuple[str, str, int, int]] = []  # open region ops: indent, result name, count, line
    entry_args: list[tuple[str, str]] = []
    entry_ind, first_op = "", None
    for k, line in enumerate(lines):
        stripped = line.strip()
        ind = line[:len(line) - len(line.lstrip())]
        if entry_args and first_op is None and stripped:
            first_op, entry_ind = k, ind
        header = None
        if stripped.startswith("func.func "):
            header = stripped[stripped.index("(") + 1:stripped.rindex(") ->") if ") ->" in stripped else stripped.rindex(")")]
        elif stripped.startswith("^bb0("):
            header = stripped[len("^bb0("):stripped.rindex("):")]
        if header is not None:
            args = [(name, ty) for name, _, ty in (a.partition(": ") for a in _split_top(header))]
            if first_op is None and not entry_args:
                entry_args = args or [("", "")]
            else:  # a region's arguments: bound at the start of its block
                for a, t in reversed(args):
                    insert(k, a, t, ind + "  ")
            continue
        if stripped.startswith("})") and regions and regions[-1][0] == ind:
            _, name, count, _ = regions.pop()
            for ref, ty in _refs(name, count, _result_types(stripped)):
                insert(k, ref, ty, ind)
            continue
        m = _DEF.match(line)
        if m and not _SYM_PRETTY.match(line) and not _SYM_GENERIC.match(line):
            count = int(m.group(3) or 1)
            if stripped.endswith("({"):
                regions.append((ind, m.group(2), count, k))
            else:
                for ref, ty in _refs(m.group(2), count, _result_types(stripped)):
                    insert(k, ref, ty, ind)
    if first_op is not None:
        for a, t in entry_args:
            if a:
                insert(first_op, a, t, entry_ind)
    out: list[str] = []
    for k, line in enumerate(lines):
        out.append(_ENCODED.sub(_plain, line))
        out += after.get(k, [])
    return "\n".join(out)


def _refs(name: str, count: int, types: list[str]) -> list[tuple[str, str]]:
    if count == 1:
        return [(name, types[0])]
    return [(f"{name}#{k}", t) for k, t in enumerate(types)]


def _plain(m: re.Match[str]) -> str:
    return f"tensor<{m.group(1)}{m.group(2)}>"
