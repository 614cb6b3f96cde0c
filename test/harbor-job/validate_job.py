"""Reads a job directory with Harbor's own models (harbor 0.25: JobConfig, JobResult, TrialConfig, TrialResult and
the ATIF Trajectory) and prints what they read as JSON, or exits 1 naming each file a model refused."""

import json
import sys
from pathlib import Path

from harbor.models.job.config import JobConfig
from harbor.models.job.result import JobResult
from harbor.models.trajectories.trajectory import Trajectory
from harbor.models.trial.config import TrialConfig
from harbor.models.trial.result import TrialResult


def main(job_dir: Path) -> int:
    errors: list[str] = []
    out: dict = {"trials": []}

    def read(model, path: Path):
        try:
            return model.model_validate_json(path.read_text())
        except Exception as e:  # noqa: BLE001 - every refusal is reported
            errors.append(f"{path}: {model.__name__}: {e}")
            return None

    config = read(JobConfig, job_dir / "config.json")
    result = read(JobResult, job_dir / "result.json")
    if config:
        out["job_name"] = config.job_name
        out["n_attempts"] = config.n_attempts
    if result:
        out["n_total_trials"] = result.n_total_trials
        out["stats"] = json.loads(result.stats.model_dump_json())
    for trial_dir in sorted(d for d in job_dir.iterdir() if d.is_dir() and (d / "result.json").exists()):
        trial_config = read(TrialConfig, trial_dir / "config.json")
        trial = read(TrialResult, trial_dir / "result.json")
        trajectories = sorted(trial_dir.glob("agent/trajectory.json")) + sorted(trial_dir.glob("steps/*/agent/trajectory.json"))
        for t in trajectories:
            read(Trajectory, t)
        if trial and trial_config:
            out["trials"].append({
                "name": trial.trial_name,
                "task_name": trial.task_name,
                "rewards": trial.verifier_result.rewards if trial.verifier_result else None,
                "exception_type": trial.exception_info.exception_type if trial.exception_info else None,
                "steps": [s.step_name for s in trial.step_results] if trial.step_results else None,
                "trajectories": [str(t.relative_to(trial_dir)) for t in trajectories],
                "config_trial_name": trial_config.trial_name,
                "tokens": list(trial.compute_token_cost_totals()),
            })
    out["errors"] = errors
    print(json.dumps(out))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
