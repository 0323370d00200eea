#!/usr/bin/env python3
"""Checks that schemas/manifest.schema.json and fcmctl's loader agree.

Every example and valid fixture must pass the schema. Every invalid fixture must be rejected (by PyYAML's
C loader or by the schema), except those marked `# SCHEMA-ACCEPTS: <reason>`: problems JSON Schema cannot
express, such as cross-references; for those the schema must accept, so the marker stays truthful.
Prints one line per file and a closing `N passed, N failed` line; exits 1 on any failure.
"""
import json
import pathlib
import sys

import jsonschema
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent


def schema_verdict(validator, path):
    """None when the schema accepts the file, else the first reason it (or YAML) rejects it."""
    try:
        with open(path, "rb") as handle:
            document = yaml.load(handle, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as error:
        return f"YAML: {str(error).splitlines()[0]}"
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    return None if not errors else f"schema: {errors[0].message[:120]}"


def main():
    schema = json.loads((ROOT / "schemas/manifest.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    fixtures = ROOT / "Tests/FCMManifestTests/Fixtures"
    must_accept = sorted((ROOT / "examples").rglob("*.yaml")) + sorted((fixtures / "valid").glob("*.yaml"))
    passed = failed = 0
    for path in must_accept:
        verdict = schema_verdict(validator, path)
        ok = verdict is None
        print(f"{'ok  ' if ok else 'FAIL'} accept {path.relative_to(ROOT)}{'' if ok else ': ' + verdict}")
        passed, failed = passed + ok, failed + (not ok)
    for path in sorted((fixtures / "invalid").glob("*.yaml")):
        accepts_marker = b"# SCHEMA-ACCEPTS:" in path.read_bytes()
        verdict = schema_verdict(validator, path)
        ok = (verdict is None) == accepts_marker
        expected = "accept (marked)" if accepts_marker else "reject"
        print(f"{'ok  ' if ok else 'FAIL'} {expected} {path.relative_to(ROOT)}: {verdict or 'accepted'}")
        passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
