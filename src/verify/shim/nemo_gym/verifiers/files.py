"""File helpers for Python verifiers (nemo_gym.verifiers.files). They read only inside the workspace: a path
that escapes it (through "..", an absolute path elsewhere, or a symbolic link) is refused and reads as
absent, never opened. Standard library only, Python 3.8 or newer."""

import os

__all__ = ["read_text", "file_exists", "text_file_equals"]


def _inside(workspace, path):
    """The real path of `path` (relative to `workspace`, or absolute) when it lies inside the workspace, else
    None."""
    root = os.path.realpath(os.fspath(workspace))
    target = os.path.realpath(os.path.join(root, os.fspath(path)))
    if target == root or target.startswith(root.rstrip(os.sep) + os.sep):
        return target
    return None


def _drop_one_newline(text):
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


def file_exists(workspace, path):
    """True when `path` is a regular file inside the workspace."""
    target = _inside(workspace, path)
    return target is not None and os.path.isfile(target)


def read_text(workspace, path, encoding="utf-8", strip_trailing_newline=True):
    """The text of the regular file `path` inside the workspace, or None when it is absent, not a regular
    file, or outside the workspace. One trailing newline is dropped unless strip_trailing_newline=False.
    Line endings are kept as they are in the file. A file that does not decode raises UnicodeDecodeError."""
    target = _inside(workspace, path)
    if target is None or not os.path.isfile(target):
        return None
    with open(target, "r", encoding=encoding, newline="") as handle:
        text = handle.read()
    return _drop_one_newline(text) if strip_trailing_newline else text


def text_file_equals(workspace, path, expected, encoding="utf-8"):
    """1.0 when the file's text equals `expected`, or the two differ only by one trailing newline on either
    side; else 0.0 (also when the file is absent or outside the workspace)."""
    actual = read_text(workspace, path, encoding=encoding, strip_trailing_newline=False)
    if actual is None:
        return 0.0
    same = actual == expected or actual == expected + "\n" or expected == actual + "\n"
    return 1.0 if same else 0.0
