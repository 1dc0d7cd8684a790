"""Validation of experiment configurations against experiments/schema.json.

One schema for every configuration file of scripts/run-workload (published so
that editors check configurations too).  This module implements the part of
JSON Schema (draft 2020-12) the schema uses, with the standard library only:
type, enum, properties, additionalProperties, required, items, minItems,
maxItems, minimum, maximum, exclusiveMinimum, pattern, anyOf and $ref to a
JSON pointer in the same file.  An error names the path of the offending
key or value (e.g. knn.K, structures[1].frameworks[0]), so that a
misspelled key anywhere exits 2 instead of running a default.
"""

import json
import os
import re

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "..", "..", "experiments", "schema.json")

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


class SchemaError(Exception):
    """A configuration that does not follow the schema: path and reason."""


_schema = None


def schema():
    global _schema
    if _schema is None:
        with open(SCHEMA_PATH, encoding="utf-8") as f:
            _schema = json.load(f)
    return _schema


def _resolve(ref, root):
    if not ref.startswith("#/"):
        raise ValueError(f"schema: unsupported $ref {ref!r}")
    node = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


def _errors(value, sch, path, root):
    """The first problem of value against sch, as (path, message), or None."""
    if "$ref" in sch:
        return _errors(value, _resolve(sch["$ref"], root), path, root)
    if "anyOf" in sch:
        found = [_errors(value, s, path, root) for s in sch["anyOf"]]
        if all(found):
            # the alternative of the value's type says most (an object's unknown key)
            for s, e in zip(sch["anyOf"], found):
                t = _resolve(s["$ref"], root).get("type") if "$ref" in s else s.get("type")
                if t and _type_ok(value, t):
                    return e
            return found[0]
    where = path or "the configuration"
    if "type" in sch and not _type_ok(value, sch["type"]):
        want = sch["type"] if isinstance(sch["type"], str) else " or ".join(sch["type"])
        return path, f"{where} must be {want}, not {json.dumps(value)}"
    if "enum" in sch and value not in sch["enum"]:
        return path, (f"{where} is {json.dumps(value)}; accepted: "
                      + ", ".join(json.dumps(v) for v in sch["enum"]))
    if TYPES["number"](value):
        if "minimum" in sch and value < sch["minimum"]:
            return path, f"{where} must be >= {sch['minimum']}"
        if "exclusiveMinimum" in sch and value <= sch["exclusiveMinimum"]:
            return path, f"{where} must be > {sch['exclusiveMinimum']}"
        if "maximum" in sch and value > sch["maximum"]:
            return path, f"{where} must be <= {sch['maximum']}"
    if isinstance(value, str) and "pattern" in sch and not re.search(sch["pattern"], value):
        return path, f"{where} {value!r} does not match {sch['pattern']}"
    if isinstance(value, dict):
        props = sch.get("properties", {})
        for k in sch.get("required", []):
            if k not in value:
                return path, f"{where} needs the key {k!r}"
        extra = sch.get("additionalProperties", True)
        for k, v in value.items():
            if k in props:
                e = _errors(v, props[k], _join(path, k), root)
            elif extra is False:
                return _join(path, k), (f"unknown key {_join(path, k)}; accepted"
                                        f"{' in ' + path if path else ''}: "
                                        + ", ".join(sorted(props)))
            elif isinstance(extra, dict):
                e = _errors(v, extra, _join(path, k), root)
            else:
                e = None
            if e:
                return e
    if isinstance(value, list):
        if len(value) < sch.get("minItems", 0):
            return path, f"{where} needs at least {sch['minItems']} entries"
        if "maxItems" in sch and len(value) > sch["maxItems"]:
            return path, f"{where} takes at most {sch['maxItems']} entries"
        if "items" in sch:
            for i, v in enumerate(value):
                e = _errors(v, sch["items"], f"{path}[{i}]", root)
                if e:
                    return e
    return None


def _type_ok(value, t):
    return any(TYPES[x](value) for x in ([t] if isinstance(t, str) else t))


def validate(cfg, root=None):
    """Raise SchemaError(message naming the path) unless cfg follows the schema."""
    root = root or schema()
    e = _errors(cfg, root, "", root)
    if e:
        raise SchemaError(e[1])
