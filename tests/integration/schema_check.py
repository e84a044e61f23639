"""schema_check.py SCHEMA [--invalid] FILE... : each JSON file (a .jsonl file: each of its
lines) checked against the JSON Schema SCHEMA (docs/evidence.schema.json) with Debian's
python3-jsonschema; with --invalid, each must fail it instead (a line of it at least). Prints "ok NAME" or
"not ok NAME # WHY" per file (tap_from in lib.sh counts them)."""
import json
import sys

import jsonschema


def instances(path):
    """The documents of path: the file, or each non-blank line of a .jsonl file."""
    with open(path, encoding="utf-8") as f:
        if path.endswith(".jsonl"):
            return [(f"{path}:{n}", json.loads(line)) for n, line in enumerate(f, 1) if line.strip()]
        return [(path, json.load(f))]


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)  # the schema itself is a valid draft 2020-12 schema
    validator = cls(schema)
    args = sys.argv[2:]
    want_valid = not (args and args[0] == "--invalid")
    failed = 0
    for path in args if want_valid else args[1:]:
        docs = instances(path)
        bad = []
        for name, doc in docs:
            err = jsonschema.exceptions.best_match(validator.iter_errors(doc))
            if err is not None:
                where = "/".join(str(p) for p in err.absolute_path)
                bad.append(f"{name}: {where or '(top)'}: {err.message[:200]}")
        kind = "jsonl lines" if path.endswith(".jsonl") else "document"
        if want_valid:
            if bad:
                failed += 1
                print(f"not ok schema: {path} ({len(docs)} {kind}) # {bad[0]}")
            else:
                print(f"ok schema: {path} ({len(docs)} {kind}) is valid")
        elif bad:
            print(f"ok schema: broken {path} fails it # {bad[0]}")
        else:
            failed += 1
            print(f"not ok schema: broken {path} fails it # {len(docs) - len(bad)} valid")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
