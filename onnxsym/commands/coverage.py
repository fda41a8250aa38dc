"""Which operators of onnx's schema set have a registered rule, per domain; and the page of
every registered op's conditions and cost formula (``docs/conditions.md``), from the registry.

    python -m onnxsym.commands.coverage                 # a markdown table per domain
    python -m onnxsym.commands.coverage --conditions    # docs/conditions.md, to standard output
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import registry
from . import departures

# The standard domains whose every operator onnxsym means to cover.
DOMAINS = ("ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview")


@dataclass
class DomainCoverage:
    domain: str
    ops: list[str]  # every operator onnx's schema set knows in this domain
    covered: list[str]  # those with a registered rule

    @property
    def missing(self) -> list[str]:
        have = set(self.covered)
        return [op for op in self.ops if op not in have]


def schema_ops() -> dict[str, list[str]]:
    """Operator names per domain in the installed onnx's schema set (every version)."""
    import onnx

    out: dict[str, set] = {d: set() for d in DOMAINS}
    for s in onnx.defs.get_all_schemas_with_history():
        domain = s.domain or "ai.onnx"
        if domain in out:
            out[domain].add(s.name)
    return {d: sorted(ops) for d, ops in out.items()}


def coverage() -> list[DomainCoverage]:
    from .. import rules  # noqa: F401  (registers the built-in rules)

    registered = registry.registered_ops()
    table = []
    for domain, ops in schema_ops().items():
        key = registry.canonical_domain(domain)
        table.append(DomainCoverage(domain, ops, [op for op in ops if (key, op) in registered]))
    return table


# The contrib domains whose schemas the installed onnxruntime registers.
RUNTIME_DOMAINS = ("com.microsoft", "com.microsoft.nchwc")


def runtime_ops() -> dict[str, list[str]]:
    """Operator names per contrib domain that the installed onnxruntime registers
    (empty when onnxruntime, or its schema listing, is not there)."""
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as ort_c
        schemas = ort_c.get_all_operator_schema()
    except (ImportError, AttributeError):
        return {}
    out: dict[str, set] = {d: set() for d in RUNTIME_DOMAINS}
    for s in schemas:
        if s.domain in out:
            out[s.domain].add(s.name)
    return {d: sorted(ops) for d, ops in out.items()}


def runtime_coverage() -> list[DomainCoverage]:
    """Like :func:`coverage` for the contrib ops onnxruntime registers; the domain reads
    e.g. "com.microsoft (onnxruntime 1.32.0)"."""
    from .. import rules  # noqa: F401

    try:
        import onnxruntime
        version = onnxruntime.__version__
    except ImportError:
        return []
    registered = registry.registered_ops()
    return [DomainCoverage(f"{d} (onnxruntime {version})", ops, [op for op in ops if (d, op) in registered])
            for d, ops in runtime_ops().items()]


def markdown(table: list[DomainCoverage]) -> str:
    lines = ["| domain | ops in the schema set | ops with rules | missing |",
             "|---|---:|---:|---|"]
    for c in table:
        lines.append(f"| {c.domain} | {len(c.ops)} | {len(c.covered)} | {', '.join(c.missing) or '-'} |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def conditions_page() -> str:
    """The markdown page of every registered op: what it needs to run (each condition with how
    the domain learns it) and its cost formula, one table per domain."""
    from .. import rules  # noqa: F401

    lines = ["# What each op needs to run, and what it costs",
             "",
             "Generated from the op registry (`onnxsym/registry.py`; each op registers its shape rule, its",
             "conditions and its cost formula together, in its module of `rules/`) by",
             "`python -m onnxsym.commands.coverage --conditions > docs/conditions.md`; a test keeps it up to date.",
             "",
             "onnxruntime runs a node only where its conditions hold; they make the model's valid input",
             "domain (`onnxsym domain MODEL`). How the domain learns each one:",
             "",
             "- *recorded by the rule*: the shape rule records it as it infers (inference solves or narrows by it);",
             "- *checked on the inferred inputs*: the domain checks it on the node's inferred input shapes",
             "  and values after inference (the shapes follow either way);",
             "- *not learned yet*: the spec states it; onnxsym does not learn it yet, so the domain may be wider",
             "  than the truth there.",
             "",
             "A condition inside a subgraph holds under its branch's condition. `none`: the op runs at every",
             "size its inputs have (attribute checks onnxsym refuses at load are not listed). `not stated`: the",
             "op's registration does not state its conditions yet. FLOPs count a multiply-add as 2; an op",
             "with no formula is not counted.",
             ""]
    lines += departures.section()
    by_domain: dict[str, list[registry.OpEntry]] = {}
    for e in registry.entries():
        by_domain.setdefault(e.domain or "ai.onnx", []).append(e)
    order = sorted(by_domain, key=lambda d: (d != "ai.onnx", d))
    for domain in order:
        entries = by_domain[domain]
        stated = sum(e.conditions is not None for e in entries)
        lines += [f"## {domain}", "", f"{len(entries)} ops, {stated} with their conditions stated.", "",
                  "| op | conditions | how the domain learns it | FLOPs |", "|---|---|---|---|"]
        for e in entries:
            cost = "-" if e.cost is None else f"{e.cost.family}: `{_cell(e.cost.text)}`"
            if e.conditions is None:
                conds = [("not stated", "")]
            elif not e.conditions:
                conds = [("none", "")]
            else:
                conds = [(f"`{_cell(c.text)}`", c.how) for c in e.conditions]
            for k, (text, how) in enumerate(conds):
                lines.append(f"| {e.op_type if k == 0 else ''} | {text} | {how} | {cost if k == 0 else ''} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    import onnx

    if "--conditions" in sys.argv[1:]:
        print(conditions_page(), end="")
    else:
        print(f"onnx {onnx.__version__}\n")
        print(markdown(coverage() + runtime_coverage()))
