"""Python client of Berth's rollout API (``berth serve``; docs/training.md).

A run is started under an idempotency key (the same key always answers the same run), its complete groups are
streamed as NDJSON from a cursor, and the trainer acknowledges each group once it has used it: a reconnecting
trainer resumes after its last acknowledged group and never receives one twice. Standard library only.
"""

from .client import BerthRollouts, Group, RolloutError, Run, SampleRow

__all__ = ["BerthRollouts", "Group", "RolloutError", "Run", "SampleRow"]
