"""Which operators of onnx's schema set have a registered rule, per domain.

    python -m onnxsym.coverage        # a markdown table per domain
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List

from . import registry

# The standard domains whose every operator onnxsym means to cover.
DOMAINS = ("ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview")


@dataclass
class DomainCoverage:
    domain: str
    ops: List[str]  # every operator onnx's schema set knows in this domain
    covered: List[str]  # those with a registered rule

    @property
    def missing(self) -> List[str]:
        have = set(self.covered)
        return [op for op in self.ops if op not in have]


def schema_ops() -> Dict[str, List[str]]:
    """Operator names per domain in the installed onnx's schema set (every version)."""
    import onnx

    out: Dict[str, set] = {d: set() for d in DOMAINS}
    for s in onnx.defs.get_all_schemas_with_history():
        domain = s.domain or "ai.onnx"
        if domain in out:
            out[domain].add(s.name)
    return {d: sorted(ops) for d, ops in out.items()}


def coverage() -> List[DomainCoverage]:
    from . import rules  # noqa: F401  (registers the built-in rules)

    registered = registry.registered_ops()
    table = []
    for domain, ops in schema_ops().items():
        key = registry.canonical_domain(domain)
        table.append(DomainCoverage(domain, ops, [op for op in ops if (key, op) in registered]))
    return table


def markdown(table: List[DomainCoverage]) -> str:
    lines = ["| domain | ops in onnx's schema set | ops with rules | missing |",
             "|---|---:|---:|---|"]
    for c in table:
        lines.append(f"| {c.domain} | {len(c.ops)} | {len(c.covered)} | {', '.join(c.missing) or '-'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import onnx

    print(f"onnx {onnx.__version__}\n")
    print(markdown(coverage()))
