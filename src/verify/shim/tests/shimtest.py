"""Test support: lay the shim out the way it sits under /tests in a sandbox, in a temporary folder, and run
it with bash. The shim's paths are moved with the BERTH_* variables that test.sh documents."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

SHIM_SOURCE = Path(__file__).resolve().parent.parent

# Source file -> place under /tests; the same mapping as src/verify/shim.ts.
LAYOUT = {
    "test.sh": "test.sh",
    "run_verifier.py": ".ng/run_verifier.py",
    "nemo_gym/__init__.py": ".ng/nemo_gym/__init__.py",
    "nemo_gym/verifiers/__init__.py": ".ng/nemo_gym/verifiers/__init__.py",
    "nemo_gym/verifiers/files.py": ".ng/nemo_gym/verifiers/files.py",
}

if str(SHIM_SOURCE) not in sys.path:
    sys.path.insert(0, str(SHIM_SOURCE))


class Run(object):
    def __init__(self, completed, reward_dir):
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.output = completed.stdout + completed.stderr
        txt = reward_dir / "reward.txt"
        js = reward_dir / "reward.json"
        self.reward_txt = txt.read_text() if txt.exists() else None
        self.reward_json = json.loads(js.read_text()) if js.exists() else None

    @property
    def no_reward(self):
        return self.reward_txt is None and self.reward_json is None


class ShimCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        root = Path(self._tmp.name)
        self.tests_dir = root / "tests"
        self.shim_dir = self.tests_dir / ".ng"
        self.reward_dir = root / "logs" / "verifier"
        self.workspace = root / "workspace"
        self.bin_dir = root / "bin"
        for folder in (self.shim_dir, self.reward_dir, self.workspace, self.bin_dir):
            folder.mkdir(parents=True)
        for source, target in LAYOUT.items():
            destination = self.tests_dir / target
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(str(SHIM_SOURCE / source), str(destination))
        # test.sh looks for python3 on PATH: make it the interpreter running these tests.
        os.symlink(sys.executable, str(self.bin_dir / "python3"))

    def tearDown(self):
        self._tmp.cleanup()

    def write_verifier(self, source, dataset_level=False):
        folder = self.shim_dir if dataset_level else self.tests_dir
        (folder / "verifier.py").write_text(textwrap.dedent(source))

    def run_shim(self, source=None, task_data=None, response=None, dataset_level=False, env=None, prefix=()):
        if source is not None:
            self.write_verifier(source, dataset_level)
        if task_data is not None:
            (self.shim_dir / "task_data.json").write_text(json.dumps(task_data))
        if response is not None:
            (self.shim_dir / "response.json").write_text(json.dumps(response))
        environment = dict(os.environ)
        for key in list(environment):
            if key.startswith("BERTH_"):
                del environment[key]
        environment.update({
            "PATH": str(self.bin_dir) + os.pathsep + environment.get("PATH", ""),
            "BERTH_TESTS_DIR": str(self.tests_dir),
            "BERTH_REWARD_DIR": str(self.reward_dir),
        })
        # test.sh itself must keep bytecode out of /tests (python -B); don't let the caller's setting hide that.
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        environment.update(env or {})
        completed = subprocess.run(
            list(prefix) + ["bash", str(self.tests_dir / "test.sh")],
            cwd=str(self.workspace), env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True, timeout=60)
        return Run(completed, self.reward_dir)

    def assertReward(self, run, value):
        self.assertEqual(run.returncode, 0, run.output)
        self.assertIsNone(run.reward_json, run.output)
        self.assertIsNotNone(run.reward_txt, run.output)
        self.assertEqual(float(run.reward_txt), value)

    def assertNoReward(self, run, *fragments):
        self.assertTrue(run.no_reward, "a reward was written: %r %r\n%s" % (run.reward_txt, run.reward_json, run.output))
        self.assertNotEqual(run.returncode, 0, run.output)
        for fragment in fragments:
            self.assertIn(fragment, run.output)
