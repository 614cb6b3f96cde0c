"""Berth's Python verifier runner: import the grading module, call its `verify`, write the reward file.

Started by the shim's test.sh (nemo_gym.data.tasks.harbor.python_verifier; Task Folder Verifiers "Python verifiers"). Standard
library only, Python 3.8 or newer.

Where the inputs come from:
  workspace   --workspace, as an absolute pathlib.Path (test.sh passes the directory it was started from,
              which is the task's working directory).
  task_data   the JSON object in --task-data (task_data.json in the shim folder).
  response    the JSON in --response (response.json in the shim folder), only when that file exists.
  state       {"workspace": <the same Path>} and nothing else.

Choices where the spec is silent (documented here so the behaviour is on record):
  - A missing task_data.json gives task_data == {}; one that is not a JSON object is an error.
  - Without response.json the response is not available: `verify(response=None)` keeps its default,
    `**kwargs` does not get the key, and a `response` without a default is an error (no reward).
  - Positional-only parameters are bound by position, the others by name. A parameter the runner does not
    know is left to its default; without one it is an error.
  - A bool return counts as a number (True = 1.0, False = 0.0), as booleans do in reward.json; so do
    numeric objects that convert with float() (numpy scalars, Decimal), but not strings.
  - A number is written to reward.txt. A dict is written to reward.json as it is (values as floats): with a
    `reward` key the other keys are metrics; a single key without `reward` is kept under its own name and is
    the score (a sum of one).
  - Reward files are cleared before the module is imported and again after any failure, so a failed run
    never leaves a reward behind, even one the module wrote itself.
  - Files are written under a temporary name and renamed, so a timeout never leaves half a reward file.

Exit status: 0 reward written, 1 no reward (the problem is on stderr), 2 bad command line. The score never
depends on it.
"""

import argparse
import asyncio
import importlib.util
import inspect
import json
import math
import numbers
import os
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path

REWARD_FILES = ("reward.json", "reward.txt")
PREFIX = "berth verifier:"


class VerifierFailure(Exception):
    """A problem that means no reward: the message says what to fix."""


def _fail_message(message):
    sys.stderr.write("%s %s\n" % (PREFIX, message))
    sys.stderr.flush()


def clear_rewards(reward_dir):
    for name in REWARD_FILES:
        try:
            os.remove(os.path.join(reward_dir, name))
        except FileNotFoundError:
            pass


def put_first_on_path(folders):
    """Move each folder to the front of sys.path, the first one first, so that the vendored nemo_gym in the
    shim folder wins over any copy in the image or the task's tests/."""
    for folder in reversed([os.path.abspath(f) for f in folders]):
        while folder in sys.path:
            sys.path.remove(folder)
        sys.path.insert(0, folder)


def load_json_file(path, what):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            return json.load(handle)
    except ValueError as err:
        raise VerifierFailure("%s (%s) is not valid JSON: %s" % (what, path, err))


def load_task_data(path):
    if not os.path.exists(path):
        return {}
    data = load_json_file(path, "task_data.json")
    if not isinstance(data, dict):
        raise VerifierFailure("task_data.json (%s) must hold a JSON object, found %s" % (path, type(data).__name__))
    return data


def load_verify(verifier_path):
    if not os.path.isfile(verifier_path):
        raise VerifierFailure("no grading module at %s" % verifier_path)
    spec = importlib.util.spec_from_file_location("verifier", verifier_path)
    if spec is None or spec.loader is None:
        raise VerifierFailure("cannot import %s as a Python module" % verifier_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["verifier"] = module
    spec.loader.exec_module(module)
    verify = getattr(module, "verify", None)
    if verify is None:
        raise VerifierFailure("%s defines no `verify`" % verifier_path)
    if not callable(verify):
        raise VerifierFailure("`verify` in %s is a %s, not a function" % (verifier_path, type(verify).__name__))
    return verify


def bind_arguments(verify, available):
    """The positional and keyword arguments for `verify`: only the ones it declares, every available one to a
    **kwargs."""
    try:
        signature = inspect.signature(verify)
    except (TypeError, ValueError) as err:
        raise VerifierFailure("cannot read the parameters of `verify`: %s" % err)
    args = []
    kwargs = {}
    positional_open = True
    has_var_keyword = False
    for param in signature.parameters.values():
        if param.kind == param.VAR_POSITIONAL:
            continue
        if param.kind == param.VAR_KEYWORD:
            has_var_keyword = True
            continue
        known = param.name in available
        if param.kind == param.POSITIONAL_ONLY:
            if known and positional_open:
                args.append(available[param.name])
                continue
            if param.default is param.empty:
                raise VerifierFailure(_missing_argument(param.name, available))
            # A skipped positional-only parameter keeps its default, so no later one can be passed by position.
            positional_open = False
            continue
        if known:
            kwargs[param.name] = available[param.name]
        elif param.default is param.empty:
            raise VerifierFailure(_missing_argument(param.name, available))
    if has_var_keyword:
        bound = set(kwargs)
        bound.update(p.name for p in signature.parameters.values() if p.kind == p.POSITIONAL_ONLY)
        for name, value in available.items():
            if name not in bound:
                kwargs[name] = value
    return args, kwargs


def _missing_argument(name, available):
    if name == "response":
        return ("`verify` requires `response`, but no response was supplied for this run; "
                "give it a default (response=None) or grade from the workspace")
    return ("`verify` requires an argument `%s` that the runner does not supply; it supplies only %s"
            % (name, ", ".join(sorted(available))))


async def _await(awaitable):
    return await awaitable


def call_verify(verify, args, kwargs):
    result = verify(*args, **kwargs)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    return result


def _finite(value, where):
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    # numbers.Real covers int, float and Fraction; __float__ also lets in numpy scalars (numpy.bool_,
    # numpy.float32...) and Decimal without importing them. Strings and complex numbers stay out.
    numeric = isinstance(value, numbers.Real) or (
        hasattr(value, "__float__") and not isinstance(value, (str, bytes, complex)))
    if not numeric:
        raise VerifierFailure("%s is %s, not a number" % (where, _show(value)))
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError):
        number = float("nan")
    if not math.isfinite(number):
        raise VerifierFailure("%s is %s, not a finite number" % (where, _show(value)))
    return number


def _show(value, limit=120):
    try:
        text = repr(value)
    except Exception:  # a repr that fails, or an int too long to print
        text = "<%s that cannot be shown>" % type(value).__name__
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return "%s (%s)" % (text, type(value).__name__)


def reward_file_for(result):
    """(file name, text) for what `verify` returned, or VerifierFailure when it is not a valid reward."""
    if isinstance(result, Mapping):
        rewards = {}
        for key, value in result.items():
            if not isinstance(key, str):
                raise VerifierFailure("`verify` returned a dict with the key %s; keys must be strings" % _show(key))
            rewards[key] = _finite(value, "`verify` returned a dict whose key %r" % key)
        if not rewards:
            raise VerifierFailure("`verify` returned an empty dict; return a number or a dict with a `reward` key")
        if "reward" not in rewards and len(rewards) != 1:
            raise VerifierFailure(
                "`verify` returned a dict without a `reward` key and with %d keys (%s); "
                "name the score `reward` (several keys are not summed)" % (len(rewards), ", ".join(sorted(rewards))))
        return "reward.json", json.dumps(rewards, sort_keys=True) + "\n"
    return "reward.txt", repr(_finite(result, "`verify` returned a value that")) + "\n"


def write_atomically(reward_dir, name, text):
    os.makedirs(reward_dir, exist_ok=True)
    target = os.path.join(reward_dir, name)
    temporary = os.path.join(reward_dir, ".%s.%d.tmp" % (name, os.getpid()))
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, target)
    return target


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Run a task's Python verifier and write its reward file.")
    parser.add_argument("--verifier", required=True, help="the grading module (verifier.py)")
    parser.add_argument("--workspace", required=True, help="the task's working directory")
    parser.add_argument("--tests-dir", default=None, help="the folder holding the task's tests (put on sys.path)")
    parser.add_argument("--task-data", required=True, help="task_data.json (missing: task_data is {})")
    parser.add_argument("--response", required=True, help="response.json (missing: no response)")
    parser.add_argument("--reward-dir", required=True, help="where reward.txt or reward.json is written")
    return parser.parse_args(argv)


def run(options):
    shim_dir = os.path.dirname(os.path.abspath(__file__))
    verifier_path = os.path.abspath(options.verifier)
    folders = [shim_dir, os.path.dirname(verifier_path)]
    if options.tests_dir:
        folders.append(options.tests_dir)
    put_first_on_path(folders)

    workspace = Path(os.path.abspath(options.workspace))
    available = {
        "workspace": workspace,
        "task_data": load_task_data(options.task_data),
        "state": {"workspace": workspace},
    }
    if os.path.exists(options.response):
        available["response"] = load_json_file(options.response, "response.json")

    verify = load_verify(verifier_path)
    args, kwargs = bind_arguments(verify, available)
    result = call_verify(verify, args, kwargs)
    name, text = reward_file_for(result)
    # The module may have written a reward file of its own; the runner's verdict is the only one.
    clear_rewards(options.reward_dir)
    target = write_atomically(options.reward_dir, name, text)
    sys.stdout.write("%s reward written to %s: %s" % (PREFIX, target, text))
    sys.stdout.flush()


def _clear_after_failure(reward_dir):
    try:
        clear_rewards(reward_dir)
    except OSError as err:
        _fail_message("could not remove a reward file after the failure: %s" % err)


def main(argv=None):
    options = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        clear_rewards(options.reward_dir)
        run(options)
    except VerifierFailure as failure:
        _clear_after_failure(options.reward_dir)
        _fail_message("%s; no reward written" % failure)
        return 1
    except BaseException as err:  # anything the module raises, even SystemExit, means no reward
        _clear_after_failure(options.reward_dir)
        traceback.print_exc()
        _fail_message("the verifier raised %s: %s; no reward written" % (type(err).__name__, err))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
