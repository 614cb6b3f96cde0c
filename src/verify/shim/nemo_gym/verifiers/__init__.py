"""Helpers for Python verifiers, under the import name the task-folder spec documents (nemo_gym.verifiers).

Berth's own implementation; standard library only, Python 3.8 or newer. File helpers are in
nemo_gym.verifiers.files.
"""

import math
import numbers
import re
from collections.abc import Mapping

__all__ = ["final_text", "exact_match", "numeric_match"]

# A decimal number with optional sign, fraction and exponent; commas are removed before matching.
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _message_text(content):
    if isinstance(content, str):
        return content
    if not isinstance(content, (list, tuple)):
        return ""
    parts = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "output_text" and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "".join(parts)


def final_text(response):
    """The text of the last assistant message of a Responses-API response (its output_text parts joined),
    or "" when there is none (or no response at all)."""
    if not isinstance(response, Mapping):
        return ""
    output = response.get("output")
    if not isinstance(output, (list, tuple)):
        return ""
    for item in reversed(output):
        if not isinstance(item, Mapping) or item.get("role") != "assistant":
            continue
        if item.get("type", "message") != "message":
            continue
        return _message_text(item.get("content"))
    return ""


def exact_match(a, b):
    """1.0 when both values strip to the same string, else 0.0. Non-strings are compared as str(value);
    None never matches."""
    if a is None or b is None:
        return 0.0
    return 1.0 if str(a).strip() == str(b).strip() else 0.0


def _as_number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        try:
            number = float(value)
        except (OverflowError, ValueError):
            return None
    elif isinstance(value, str):
        # Commas (thousands separators) and the text around the number are ignored; with several numbers
        # in the text, the last one is the answer ("... so the answer is 42").
        found = _NUMBER.findall(value.replace(",", ""))
        if not found:
            return None
        number = float(found[-1])
    else:
        return None
    return number if math.isfinite(number) else None


def numeric_match(a, b, rel_tol=1e-6):
    """1.0 when a and b parse as numbers that agree within rel_tol (relative), else 0.0; also 0.0 when either
    does not parse. Strings are parsed with commas and surrounding text ignored."""
    x = _as_number(a)
    y = _as_number(b)
    if x is None or y is None:
        return 0.0
    return 1.0 if math.isclose(x, y, rel_tol=rel_tol) else 0.0
