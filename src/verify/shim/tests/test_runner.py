"""The shim end to end (test.sh + run_verifier.py), per nemo_gym.data.tasks.harbor.python_verifier and Task Folder Verifiers
"Python verifiers"."""

import json
import shutil
import unittest

from shimtest import ShimCase

RESPONSE = {"output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "42"}]}]}


class ArgumentBinding(ShimCase):
    """"The runner passes only the ones it declares (every available one to **kwargs)"."""

    def test_no_arguments(self):
        self.assertReward(self.run_shim("def verify():\n    return 1\n"), 1.0)

    def test_some_arguments_spec_example(self):
        (self.workspace / "answer.txt").write_text("Paris\n")
        run = self.run_shim(
            """
            from pathlib import Path

            from nemo_gym.verifiers.files import read_text


            def verify(workspace: Path, task_data: dict) -> float:
                answer = read_text(workspace, "answer.txt")
                return float(answer is not None and answer.strip() == task_data["answer"])
            """,
            task_data={"answer": "Paris"},
        )
        self.assertReward(run, 1.0)

    def test_all_four_arguments(self):
        run = self.run_shim(
            """
            import os
            from pathlib import Path
            from nemo_gym.verifiers import final_text

            def verify(workspace, task_data, response, state):
                assert isinstance(workspace, Path), type(workspace)
                assert workspace.is_absolute()
                assert os.path.samefile(str(workspace), os.getcwd())
                assert state == {"workspace": workspace}, state
                assert task_data == {"n": 7}, task_data
                return float(final_text(response)) / 100
            """,
            task_data={"n": 7},
            response=RESPONSE,
        )
        self.assertReward(run, 0.42)

    def test_var_keyword_gets_every_available_argument(self):
        run = self.run_shim(
            """
            def verify(**kwargs):
                assert sorted(kwargs) == ["response", "state", "task_data", "workspace"], sorted(kwargs)
                return 1
            """,
            task_data={},
            response=RESPONSE,
        )
        self.assertReward(run, 1.0)

    def test_var_keyword_without_a_response_gets_the_other_three(self):
        run = self.run_shim(
            """
            def verify(task_data, **rest):
                assert sorted(rest) == ["state", "workspace"], sorted(rest)
                return 0.5
            """,
            task_data={},
        )
        self.assertReward(run, 0.5)

    def test_keyword_only_and_positional_only(self):
        run = self.run_shim(
            """
            def verify(workspace, /, *, task_data):
                assert task_data["k"] == 1
                return 1
            """,
            task_data={"k": 1},
        )
        self.assertReward(run, 1.0)

    def test_response_default_kept_when_no_response(self):
        run = self.run_shim(
            """
            def verify(response=None):
                assert response is None
                return 0.25
            """
        )
        self.assertReward(run, 0.25)

    def test_required_response_without_one_writes_no_reward(self):
        run = self.run_shim("def verify(response):\n    return 1\n")
        self.assertNoReward(run, "requires `response`")

    def test_unknown_required_argument_writes_no_reward(self):
        run = self.run_shim("def verify(workspace, judge):\n    return 1\n")
        self.assertNoReward(run, "`judge`")

    def test_unknown_argument_with_default_keeps_default(self):
        run = self.run_shim("def verify(threshold=0.5):\n    return threshold\n")
        self.assertReward(run, 0.5)

    def test_missing_task_data_file_is_an_empty_dict(self):
        run = self.run_shim("def verify(task_data):\n    assert task_data == {}\n    return 1\n")
        self.assertReward(run, 1.0)

    def test_workspace_can_be_moved_by_environment(self):
        other = self.workspace.parent / "elsewhere"
        other.mkdir()
        run = self.run_shim(
            "def verify(workspace):\n    return float(workspace.name == 'elsewhere')\n",
            env={"BERTH_WORKSPACE": str(other)},
        )
        self.assertReward(run, 1.0)

    def test_callable_object_and_partial(self):
        run = self.run_shim(
            """
            import functools

            def _grade(bonus, task_data):
                return bonus + task_data["base"]

            verify = functools.partial(_grade, 0.25)
            """,
            task_data={"base": 0.5},
        )
        self.assertReward(run, 0.75)


class AsyncVerify(ShimCase):
    def test_async_verify_is_awaited(self):
        run = self.run_shim(
            """
            import asyncio

            async def verify(task_data):
                await asyncio.sleep(0)
                return task_data["r"]
            """,
            task_data={"r": 0.9},
        )
        self.assertReward(run, 0.9)

    def test_async_verify_that_raises_writes_no_reward(self):
        run = self.run_shim("async def verify():\n    raise RuntimeError('judge down')\n")
        self.assertNoReward(run, "judge down", "RuntimeError")


class ReturnValues(ShimCase):
    """"verify returns a finite number, or a dict of finite numbers ... anything else writes no reward"."""

    def test_int_and_float(self):
        self.assertReward(self.run_shim("def verify():\n    return 0\n"), 0.0)
        self.assertReward(self.run_shim("def verify():\n    return -2.5\n"), -2.5)

    def test_bool_counts_as_a_number(self):
        self.assertReward(self.run_shim("def verify():\n    return True\n"), 1.0)

    def test_other_real_numbers(self):
        self.assertReward(self.run_shim("from fractions import Fraction\n\ndef verify():\n    return Fraction(1, 4)\n"), 0.25)
        self.assertReward(self.run_shim("from decimal import Decimal\n\ndef verify():\n    return Decimal('0.5')\n"), 0.5)

    def test_dict_with_reward_and_metrics(self):
        run = self.run_shim("def verify():\n    return {'reward': 1, 'accuracy': 0.5, 'passed': True}\n")
        self.assertEqual(run.returncode, 0, run.output)
        self.assertIsNone(run.reward_txt)
        self.assertEqual(run.reward_json, {"reward": 1.0, "accuracy": 0.5, "passed": 1.0})

    def test_dict_with_exactly_one_key_is_the_score(self):
        run = self.run_shim("def verify():\n    return {'score': 0.3}\n")
        self.assertEqual(run.returncode, 0, run.output)
        self.assertEqual(run.reward_json, {"score": 0.3})

    def test_bad_returns_write_no_reward(self):
        cases = [
            ("float('nan')", "not a finite number"),
            ("float('inf')", "not a finite number"),
            ("-float('inf')", "not a finite number"),
            ("10 ** 400", "not a finite number"),
            ("10 ** 5000", "not a finite number"),
            ("complex(1, 0)", "not a number"),
            ("b'1'", "not a number"),
            ("Decimal('NaN')", "not a finite number"),
            ("'1.0'", "not a number"),
            ("None", "not a number"),
            ("[1.0]", "not a number"),
            ("{'a': 1, 'b': 2}", "without a `reward` key and with 2 keys"),
            ("{'reward': 'high'}", "not a number"),
            ("{'reward': 1, 'acc': None}", "'acc'"),
            ("{'reward': float('nan')}", "not a finite number"),
            ("{}", "empty dict"),
            ("{1: 1.0}", "keys must be strings"),
        ]
        for expression, message in cases:
            with self.subTest(returned=expression):
                run = self.run_shim("from decimal import Decimal\n\ndef verify():\n    return %s\n" % expression)
                self.assertNoReward(run, message)


class Failures(ShimCase):
    def test_verify_that_raises_writes_no_reward_and_shows_the_error(self):
        run = self.run_shim("def verify():\n    raise ValueError('cannot grade this')\n")
        self.assertNoReward(run, "ValueError", "cannot grade this", "Traceback")

    def test_module_that_fails_to_import(self):
        run = self.run_shim("import not_a_module_anywhere\n\ndef verify():\n    return 1\n")
        self.assertNoReward(run, "not_a_module_anywhere")

    def test_module_with_a_syntax_error(self):
        self.assertNoReward(self.run_shim("def verify(:\n"), "SyntaxError")

    def test_module_without_verify(self):
        self.assertNoReward(self.run_shim("def grade():\n    return 1\n"), "defines no `verify`")

    def test_verify_not_callable(self):
        self.assertNoReward(self.run_shim("verify = 1.0\n"), "not a function")

    def test_no_module_at_all(self):
        self.assertNoReward(self.run_shim(None), "no grading module")

    def test_sys_exit_in_verify_writes_no_reward(self):
        self.assertNoReward(self.run_shim("import sys\n\ndef verify():\n    sys.exit(0)\n"), "SystemExit")

    def test_task_data_that_is_not_an_object(self):
        (self.shim_dir / "task_data.json").write_text("[1, 2]")
        self.assertNoReward(self.run_shim("def verify():\n    return 1\n"), "task_data.json")


class StaleRewards(ShimCase):
    """nemo_gym.data.tasks.harbor.python_verifier: "The shim clears any reward.json or reward.txt already in /logs/verifier before the
    runner starts, and the runner does the same before verify runs"."""

    def test_planted_reward_files_are_cleared(self):
        (self.reward_dir / "reward.json").write_text(json.dumps({"reward": 1}))
        (self.reward_dir / "reward.txt").write_text("1")
        run = self.run_shim("def verify():\n    raise RuntimeError('no')\n")
        self.assertNoReward(run)

    def test_planted_reward_json_does_not_shadow_the_runner_reward_txt(self):
        (self.reward_dir / "reward.json").write_text(json.dumps({"reward": 1}))
        self.assertReward(self.run_shim("def verify():\n    return 0\n"), 0.0)

    def test_reward_written_by_a_failing_module_is_removed(self):
        run = self.run_shim(
            """
            import os

            def verify():
                with open(os.path.join(os.environ["BERTH_REWARD_DIR"], "reward.txt"), "w") as f:
                    f.write("1")
                raise RuntimeError("failed after writing")
            """
        )
        self.assertNoReward(run, "failed after writing")

    def test_cleared_even_when_python_is_refused(self):
        (self.reward_dir / "reward.txt").write_text("1")
        fake = self.bin_dir / "python3"
        fake.unlink()
        fake.write_text("#!/bin/sh\necho 3.6.15\n")
        fake.chmod(0o755)
        run = self.run_shim("def verify():\n    return 1\n")
        self.assertEqual(run.returncode, 127)
        self.assertIn("Python 3.6.15", run.stderr)
        self.assertTrue(run.no_reward)


class Timeout(ShimCase):
    @unittest.skipUnless(shutil.which("timeout"), "needs GNU timeout")
    def test_output_before_a_timeout_reaches_the_log_and_no_reward_is_left(self):
        run = self.run_shim(
            """
            import time

            def verify():
                print("graded half of the cases")
                time.sleep(30)
                return 1
            """,
            prefix=["timeout", "-k", "1", "1"],
        )
        self.assertEqual(run.returncode, 124, run.output)
        self.assertIn("graded half of the cases", run.stdout)
        self.assertTrue(run.no_reward)


class ModuleLocation(ShimCase):
    def test_dataset_level_verifier_in_the_shim_folder(self):
        run = self.run_shim("def verify():\n    return 0.125\n", dataset_level=True)
        self.assertReward(run, 0.125)

    def test_dataset_level_verifier_wins_over_tests_verifier(self):
        self.write_verifier("def verify():\n    return 0\n")
        self.assertReward(self.run_shim("def verify():\n    return 1\n", dataset_level=True), 1.0)

    def test_verifier_path_from_environment(self):
        other = self.tests_dir / "grading" / "grade.py"
        other.parent.mkdir()
        other.write_text("def verify():\n    return 0.5\n")
        self.assertReward(self.run_shim(env={"BERTH_VERIFIER": str(other)}), 0.5)

    def test_sibling_helper_in_tests_is_importable(self):
        (self.tests_dir / "helper.py").write_text("VALUE = 0.75\n")
        self.assertReward(self.run_shim("from helper import VALUE\n\ndef verify():\n    return VALUE\n"), 0.75)

    def test_vendored_nemo_gym_wins_over_a_copy_in_tests(self):
        fake = self.tests_dir / "nemo_gym" / "verifiers"
        fake.mkdir(parents=True)
        (self.tests_dir / "nemo_gym" / "__init__.py").write_text("")
        (fake / "__init__.py").write_text("def exact_match(a, b):\n    return 0.5\n")
        run = self.run_shim("from nemo_gym.verifiers import exact_match\n\ndef verify():\n    return exact_match('a', ' a ')\n")
        self.assertReward(run, 1.0)

    def test_no_bytecode_left_in_tests(self):
        (self.tests_dir / "helper.py").write_text("VALUE = 1\n")
        self.run_shim("from helper import VALUE\nfrom nemo_gym.verifiers import files\n\ndef verify():\n    return VALUE\n")
        self.assertEqual(list(self.tests_dir.rglob("__pycache__")), [])


if __name__ == "__main__":
    unittest.main()
