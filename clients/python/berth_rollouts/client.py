"""HTTP calls to ``berth serve``: one method per operation of the rollout API."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional


class RolloutError(Exception):
    """``berth serve`` refused a call: ``status`` is the HTTP status, the message says what to fix."""

    def __init__(self, status: int, message: str):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


@dataclass
class SampleRow:
    """One sample of a group: a scored row, or a placeholder for a masked sample (``valid`` false)."""

    task_id: str
    group: int
    sample: int
    attempt: int
    valid: bool
    reward: Optional[float]
    mask_sample: bool
    failure_kind: Optional[str]
    failure_reason: Optional[str]
    workflow_id: Optional[str]
    logs_dir: Optional[str]
    #: The token records file as a path on the worker host that ran the sample; from any other machine, ask for the
    #: tokens inline (``run.groups(tokens=True)``): ``token_records``, ``token_rollout``.
    tokens: Optional[str]
    policy_version: Optional[int]
    #: Inline tokens (``groups(tokens=True)``): every policy call's record in order (``prompt_token_ids``,
    #: ``generation_token_ids``, ``generation_log_probs``, ``policy_version``, ...), or None when the sample has none.
    token_records: Optional[List[Dict[str, Any]]] = None
    #: Inline tokens: the calls linked into token sequences with their loss masks (token-rollout.json), or None.
    token_rollout: Optional[Dict[str, Any]] = None
    #: Inline tokens: why they could not be read (neither on the serving machine nor in the results store).
    tokens_error: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "SampleRow":
        known = {k: d.get(k) for k in cls.__dataclass_fields__ if k != "extra"}
        return cls(**known, extra={k: v for k, v in d.items() if k not in cls.__dataclass_fields__})


@dataclass
class Group:
    """The n samples of one task, delivered once complete under sequence number ``seq``."""

    seq: int
    group: int
    task_id: str
    masked: bool
    rows: List[SampleRow]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Group":
        return cls(seq=d["seq"], group=d["group"], task_id=d["task_id"], masked=d["masked"], rows=[SampleRow.from_json(r) for r in d["rows"]])

    @property
    def rewards(self) -> List[Optional[float]]:
        return [r.reward for r in self.rows]

    @property
    def valid(self) -> List[bool]:
        return [r.valid for r in self.rows]


class BerthRollouts:
    """A connection to one ``berth serve`` (any replica: runs live in Temporal, not in the server)."""

    def __init__(self, url: str, timeout: float = 600.0):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            text = err.read().decode(errors="replace")
            try:
                message = json.loads(text).get("error") or text
            except ValueError:
                message = text
            raise RolloutError(err.code, message) from None

    def start_run(
        self,
        key: str,
        n: int,
        policy: Dict[str, Any],
        tasks: Optional[List[str]] = None,
        agent: Optional[str] = None,
        sampling: Optional[Dict[str, Any]] = None,
        group_policy: Optional[Dict[str, Any]] = None,
        max_staleness: Optional[int] = None,
        concurrency: Optional[int] = None,
        keep_open: bool = False,
        agent_args: Optional[Dict[str, str]] = None,
    ) -> "Run":
        """Starts the run named ``key``, or returns the run that key already names (``run.created`` is False)."""
        body: Dict[str, Any] = {"key": key, "n": n, "policy": policy, "keep_open": keep_open}
        for name, value in (("tasks", tasks), ("agent", agent), ("sampling", sampling), ("group_policy", group_policy),
                            ("max_staleness", max_staleness), ("concurrency", concurrency), ("agent_args", agent_args)):
            if value is not None:
                body[name] = value
        answer = self._call("POST", "/runs", body)
        return Run(self, answer["run_id"], created=answer["created"])

    def run(self, key: str) -> "Run":
        """A run started earlier (by this trainer before a restart, or another process)."""
        return Run(self, key, created=False)


class Run:
    """One rollout run, by its key."""

    def __init__(self, client: BerthRollouts, key: str, created: bool):
        self.client = client
        self.key = key
        self.created = created
        self._path = "/runs/" + urllib.parse.quote(key, safe="")

    def status(self) -> Dict[str, Any]:
        return self.client._call("GET", self._path)

    def groups(self, after: Optional[int] = None, tokens: bool = False) -> Iterator[Group]:
        """Complete groups as they finish, after ``after`` (default: after the last acknowledged group).

        With ``tokens``, each row carries its token records and linked sequences inline (``token_records``,
        ``token_rollout``; ``tokens_error`` when they could not be read), which ``berth serve`` reads from the worker
        host's disk or, when that host is not this one or is gone, from the results store. The iterator ends when the
        run has nothing more to deliver (done or cancelled).
        """
        params = {k: v for k, v in (("after", None if after is None else int(after)), ("tokens", 1 if tokens else None)) if v is not None}
        query = "?" + urllib.parse.urlencode(params) if params else ""
        req = urllib.request.Request(self.client.url + self._path + "/groups" + query, method="GET")
        try:
            resp = urllib.request.urlopen(req, timeout=self.client.timeout)
        except urllib.error.HTTPError as err:
            raise RolloutError(err.code, err.read().decode(errors="replace")) from None
        with resp:
            for line in resp:
                if line.strip():
                    yield Group.from_json(json.loads(line))

    def ack(self, seq: int) -> int:
        """Acknowledges every group up to ``seq``: none of them is ever delivered again. Returns the cursor."""
        return self.client._call("POST", self._path + "/ack", {"seq": seq})["acked"]

    def add_work(self, tasks: Optional[List[str]] = None, n: Optional[int] = None) -> List[int]:
        body: Dict[str, Any] = {}
        if tasks is not None:
            body["tasks"] = tasks
        if n is not None:
            body["n"] = n
        return self.client._call("POST", self._path + "/work", body)["groups"]

    def set_policy(self, version: Optional[int] = None, endpoint: Optional[str] = None, model: Optional[str] = None,
                   sampling: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """The current policy version (only goes up) and, when the weights moved, the endpoint or model."""
        body = {k: v for k, v in (("version", version), ("endpoint", endpoint), ("model", model), ("sampling", sampling)) if v is not None}
        return self.client._call("POST", self._path + "/policy", body)

    def drain(self) -> Dict[str, Any]:
        """Holds new model calls at the gateways (agents wait, they do not fail) until ``resume``."""
        return self.client._call("POST", self._path + "/drain", {})

    def resume(self) -> Dict[str, Any]:
        return self.client._call("POST", self._path + "/resume", {})

    def cancel(self) -> Dict[str, Any]:
        return self.client._call("POST", self._path + "/cancel", {})

    def close(self) -> Dict[str, Any]:
        """A ``keep_open`` run ends once every group is acknowledged."""
        return self.client._call("POST", self._path + "/close", {})
