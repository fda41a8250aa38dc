"""The schema of ``onnxsym check --format json`` (docs/check-report.schema.json) and a small
validator for the subset of JSON Schema it uses, shared by the tests that read the report."""

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(ROOT, "docs", "check-report.schema.json")


def validate(doc, schema, root=None, where="$"):
    """The errors of ``doc`` against ``schema``: the subset of JSON Schema the report's
    schema uses (type, enum, required, properties, additionalProperties, items,
    minimum, oneOf, $ref to #/$defs)."""
    root = root if root is not None else schema
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        return validate(doc, root["$defs"][name], root, where)
    errors = []
    types = schema.get("type")
    if types is not None:
        kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
        ok = False
        for t in ([types] if isinstance(types, str) else types):
            if t == "integer":
                ok |= isinstance(doc, int) and not isinstance(doc, bool)
            else:
                ok |= isinstance(doc, kinds[t])
        if not ok:
            return [f"{where}: {doc!r} is not of type {types}"]
    if "enum" in schema and not any(doc == e and type(doc) is type(e) for e in schema["enum"]):
        errors.append(f"{where}: {doc!r} not in {schema['enum']}")
    if "minimum" in schema and isinstance(doc, int) and not isinstance(doc, bool) and doc < schema["minimum"]:
        errors.append(f"{where}: {doc} < {schema['minimum']}")
    if "oneOf" in schema:
        passing = [s for s in schema["oneOf"] if not validate(doc, s, root, where)]
        if len(passing) != 1:
            errors.append(f"{where}: matches {len(passing)} of oneOf")
    if isinstance(doc, dict):
        props = schema.get("properties", {})
        errors += [f"{where}: missing {k}" for k in schema.get("required", []) if k not in doc]
        extra = schema.get("additionalProperties")
        if extra is False:
            errors += [f"{where}: unexpected {k}" for k in doc if k not in props]
        elif isinstance(extra, dict):
            for k in doc:
                if k not in props:
                    errors += validate(doc[k], extra, root, f"{where}.{k}")
        for k, sub in props.items():
            if k in doc:
                errors += validate(doc[k], sub, root, f"{where}.{k}")
    if isinstance(doc, list) and "items" in schema:
        for i, item in enumerate(doc):
            errors += validate(item, schema["items"], root, f"{where}[{i}]")
    return errors


def schema():
    with open(SCHEMA) as f:
        return json.load(f)


def check_json(doc):
    """Assert that ``doc`` is valid against the check report's schema."""
    errors = validate(doc, schema())
    assert not errors, errors[:5]
    try:  # the validator above against the reference implementation, where installed
        import jsonschema
    except ImportError:
        return
    jsonschema.Draft202012Validator(schema()).validate(doc)
