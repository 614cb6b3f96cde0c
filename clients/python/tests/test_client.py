"""The Python client against a real ``berth serve`` (run by test/serve/python-client.test.ts, which starts the
service, its workers and a dataset with tasks ``ok`` (the oracle scores 1) and ``lost`` (its seed always fails:
masked), and passes the service's URL in BERTH_SERVE_URL)."""

import os
import uuid

import pytest

from berth_rollouts import BerthRollouts, RolloutError

POLICY = {"endpoint": "http://127.0.0.1:9/v1", "model": "fake"}


@pytest.fixture(scope="module")
def client() -> BerthRollouts:
    url = os.environ.get("BERTH_SERVE_URL")
    assert url, "BERTH_SERVE_URL names the berth serve under test (test/serve/python-client.test.ts sets it)"
    return BerthRollouts(url)


def test_same_key_same_run_and_groups_exactly_once(client: BerthRollouts) -> None:
    key = "py-" + uuid.uuid4().hex[:8]
    run = client.start_run(key, n=2, tasks=["ok"], policy=POLICY, group_policy={"kind": "mask"}, keep_open=True)
    assert run.created
    assert not client.start_run(key, n=2, tasks=["ok"], policy=POLICY).created
    run.add_work(tasks=["ok"], n=2)
    seen = []
    for group in run.groups():
        assert len(group.rows) == 2
        assert group.valid == [True, True]
        assert group.rewards == [1.0, 1.0]
        seen.append(group.seq)
        run.ack(group.seq)
        # A trainer that reconnects (a new iterator, no cursor) resumes after its last acknowledged group.
        if len(seen) == 1:
            break
    for group in client.run(key).groups():
        seen.append(group.seq)
        run.ack(group.seq)
        if len(seen) == 2:
            break
    assert seen == [1, 2]
    run.close()
    assert list(client.run(key).groups(after=0)) == []
    assert client.run(key).status()["state"] == "done"


def test_masked_group_is_never_a_reward_of_zero(client: BerthRollouts) -> None:
    run = client.start_run("py-" + uuid.uuid4().hex[:8], n=2, tasks=["lost"], policy=POLICY, group_policy={"kind": "partial"})
    (group,) = list(run.groups())
    assert group.valid == [False, False]
    assert group.rewards == [None, None]
    assert {r.failure_kind for r in group.rows} == {"harbor:seed_failed"}
    run.ack(group.seq)


def test_policy_version_and_drain(client: BerthRollouts) -> None:
    run = client.start_run("py-" + uuid.uuid4().hex[:8], n=1, tasks=["ok"], policy=POLICY, keep_open=True)
    assert run.set_policy(version=5)["version"] == 5
    assert run.drain()["draining"] is True
    assert run.resume()["draining"] is False
    with pytest.raises(RolloutError) as err:
        run.set_policy(version=4)
    assert err.value.status == 422 and "only go up" in err.value.message
    assert run.cancel()["state"] == "cancelled"
