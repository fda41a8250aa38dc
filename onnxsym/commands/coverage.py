"""Which operators of onnx's schema set have a registered rule, per domain.

    python -m onnxsym.commands.coverage        # a markdown table per domain
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import registry

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


if __name__ == "__main__":
    import onnx

    print(f"onnx {onnx.__version__}\n")
    print(markdown(coverage() + runtime_coverage()))
