"""Validate task fields with a dataset's task_data.py, inside a sandbox (never on the host).

Reads /in/task_data.py (exporting `TaskData`: a Pydantic model, or any type pydantic.TypeAdapter accepts, as
NeMo Gym's task_data modules do) and /in/rows.json ([{"task_id": ..., "task_data": {...}}]). Prints one JSON
object: {"invalid": [{"task_id": ..., "errors": [{"loc": "a.b", "msg": ..., "type": ...}]}]}, or
{"error": kind, "message": ...} with exit 3 when the model cannot be used at all.
"""
import importlib.util
import json
import sys


def fail(kind, message):
    sys.stdout.write(json.dumps({"error": kind, "message": message}) + "\n")
    sys.exit(3)


def main():
    try:
        import pydantic
        from pydantic import TypeAdapter, ValidationError
    except ImportError as e:
        fail("no_pydantic", "pydantic 2 is not importable in the image (%s)" % e)
    spec = importlib.util.spec_from_file_location("task_data", "/in/task_data.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["task_data"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - any failure of the dataset's module is reported as such
        fail("import", "importing task_data.py failed: %s: %s" % (type(e).__name__, e))
    model = getattr(module, "TaskData", None)
    if model is None:
        fail("no_export", "task_data.py does not export TaskData")
    try:
        adapter = TypeAdapter(model)
    except Exception as e:  # noqa: BLE001
        fail("bad_export", "TaskData is not a type pydantic %s can validate: %s" % (pydantic.VERSION, e))
    with open("/in/rows.json", encoding="utf-8") as f:
        rows = json.load(f)
    invalid = []
    for row in rows:
        try:
            adapter.validate_python(row["task_data"])
        except ValidationError as e:
            errors = [
                {"loc": ".".join(str(part) for part in err["loc"]), "msg": err["msg"], "type": err["type"]}
                for err in e.errors()
            ]
            invalid.append({"task_id": row["task_id"], "errors": errors})
    sys.stdout.write(json.dumps({"invalid": invalid}) + "\n")


main()
