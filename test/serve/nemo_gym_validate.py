"""Checks berth serve's answers with NeMo Gym 0.7.0's own pydantic models (run by test/serve/nemo-gym-anchor.test.ts
in the venv `npm run setup -- nemo-gym` makes).

    python nemo_gym_validate.py OUT_DIR RECORDS_FILE...

OUT_DIR is where NeMo Gym's rollout collection wrote (rollouts.jsonl, rollouts_materialized_inputs.jsonl,
rollouts_aggregate_metrics.json); RECORDS_FILE the token-records.jsonl of each episode. Prints one JSON summary;
exits 1 when a model refuses something (the errors are in the summary).
"""

import ast
import importlib.util
import json
import sys
from pathlib import Path

from pydantic import ConfigDict, Field, ValidationError

from nemo_gym.base_resources_server import BaseRunRequest, BaseVerifyResponse
from nemo_gym.config_types import AggregateMetrics
from nemo_gym.global_config import ROLLOUT_INDEX_KEY_NAME, TASK_INDEX_KEY_NAME
from nemo_gym.openai_utils import NeMoGymResponseFunctionCallOutput, NeMoGymResponseFunctionToolCall, NeMoGymResponseOutputMessageForTraining
from nemo_gym.token_id_capture.records import TokenEntry, compute_digest


def harbor_models():
    """HarborRunRequest and HarborVerifyResponse as responses_api_agents/harbor_agent_general/app.py defines them.

    app.py imports Harbor and Ray at module level (NeMo Gym runs that agent in a venv of its own with Harbor), so its
    two classes are taken from its source as written and defined on NeMo Gym's own bases here.
    """
    app = Path(importlib.util.find_spec("responses_api_agents.harbor_agent_general").submodule_search_locations[0]) / "app.py"
    tree = ast.parse(app.read_text())
    wanted = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in ("HarborRunRequest", "HarborVerifyResponse")]
    assert len(wanted) == 2, f"{app} no longer defines HarborRunRequest and HarborVerifyResponse"
    ns = {
        "BaseRunRequest": BaseRunRequest, "BaseVerifyResponse": BaseVerifyResponse, "ConfigDict": ConfigDict, "Field": Field,
        "TASK_INDEX_KEY_NAME": TASK_INDEX_KEY_NAME, "ROLLOUT_INDEX_KEY_NAME": ROLLOUT_INDEX_KEY_NAME,
    }
    exec(compile(ast.Module(body=wanted, type_ignores=[]), str(app), "exec"), ns)
    return ns["HarborRunRequest"], ns["HarborVerifyResponse"]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> int:
    out_dir = Path(sys.argv[1])
    record_files = [Path(p) for p in sys.argv[2:]]
    run_request, verify_response = harbor_models()
    errors: list[str] = []
    summary: dict = {"requests": 0, "responses": 0, "training_messages": 0, "function_calls": 0, "function_call_outputs": 0,
                     "records": 0, "digests_match": 0, "parsed_output_types": {}, "aggregate_metrics": 0}

    def check(what: str, fn):
        try:
            fn()
            return True
        except (ValidationError, AssertionError) as err:
            errors.append(f"{what}: {err}")
            return False

    for row in read_jsonl(out_dir / "rollouts_materialized_inputs.jsonl"):
        if check(f"request {row.get('task_name')}", lambda: run_request.model_validate(row)):
            summary["requests"] += 1

    for row in read_jsonl(out_dir / "rollouts.jsonl"):
        name = f"{row.get('task_name')}#{row.get(ROLLOUT_INDEX_KEY_NAME)}"
        parsed = []
        if check(f"verify response {name}", lambda: parsed.append(verify_response.model_validate(row))):
            summary["responses"] += 1
            for item in parsed[0].response.output:
                kind = type(item).__name__
                summary["parsed_output_types"][kind] = summary["parsed_output_types"].get(kind, 0) + 1
        for i, item in enumerate(row["response"]["output"]):
            where = f"{name} output[{i}]"
            if "generation_token_ids" in item:
                if check(where, lambda: NeMoGymResponseOutputMessageForTraining.model_validate(item)):
                    summary["training_messages"] += 1
            elif item.get("type") == "function_call":
                if check(where, lambda: NeMoGymResponseFunctionToolCall.model_validate(item)):
                    summary["function_calls"] += 1
            elif item.get("type") == "function_call_output":
                if check(where, lambda: NeMoGymResponseFunctionCallOutput.model_validate(item)):
                    summary["function_call_outputs"] += 1

    for path in record_files:
        for line in read_jsonl(path):
            entry = []
            if check(f"token record {path}", lambda: entry.append(TokenEntry.model_validate(line))):
                summary["records"] += 1
                e = entry[0]
                if check(f"digest of {e.model_call_id}", lambda: _same(e.digest, compute_digest(e.prompt_token_ids + e.generation_token_ids))):
                    summary["digests_match"] += 1

    for block in json.loads((out_dir / "rollouts_aggregate_metrics.json").read_text()):
        if check("aggregate metrics", lambda: AggregateMetrics.model_validate(block)):
            summary["aggregate_metrics"] += 1

    summary["errors"] = errors
    print(json.dumps(summary))
    return 1 if errors else 0


def _same(a, b):
    assert a == b, f"{a} != {b}"


if __name__ == "__main__":
    sys.exit(main())
