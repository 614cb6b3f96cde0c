"""nemo_gym.verifiers: final_text, exact_match, numeric_match (docs/design.md section 7 "Formats")."""

import unittest

import shimtest  # noqa: F401  (puts the shim folder on sys.path)
from nemo_gym.verifiers import exact_match, final_text, numeric_match


def message(role, *texts, **extra):
    item = {"type": "message", "role": role, "content": [{"type": "output_text", "text": t} for t in texts]}
    item.update(extra)
    return item


class FinalText(unittest.TestCase):
    def test_table(self):
        cases = [
            ("none", None, ""),
            ("not a dict", "hello", ""),
            ("no output", {}, ""),
            ("output not a list", {"output": "x"}, ""),
            ("empty output", {"output": []}, ""),
            ("only a user message", {"output": [message("user", "q")]}, ""),
            ("single assistant message", {"output": [message("assistant", "42")]}, "42"),
            ("last assistant message", {"output": [message("assistant", "a"), message("assistant", "b")]}, "b"),
            ("skips a trailing tool call", {"output": [message("assistant", "a"), {"type": "function_call"}]}, "a"),
            ("joins parts", {"output": [message("assistant", "x", "y")]}, "xy"),
            ("skips non-text parts", {"output": [{"type": "message", "role": "assistant",
                                                  "content": [{"type": "refusal"}, {"type": "output_text", "text": "ok"}]}]}, "ok"),
            ("string content", {"output": [{"type": "message", "role": "assistant", "content": "plain"}]}, "plain"),
            ("last assistant message empty", {"output": [message("assistant", "a"), message("assistant")]}, ""),
            ("reasoning item is not a message", {"output": [message("assistant", "a"),
                                                            {"type": "reasoning", "role": "assistant", "content": []}]}, "a"),
        ]
        for name, response, expected in cases:
            with self.subTest(name):
                self.assertEqual(final_text(response), expected)


class ExactMatch(unittest.TestCase):
    def test_table(self):
        cases = [
            ("Paris", "Paris", 1.0),
            ("  Paris\n", "Paris", 1.0),
            ("Paris", "paris", 0.0),
            ("Par is", "Paris", 0.0),
            ("", "  ", 1.0),
            (42, "42", 1.0),
            (None, "None", 0.0),
            (None, None, 0.0),
        ]
        for a, b, expected in cases:
            with self.subTest(a=a, b=b):
                result = exact_match(a, b)
                self.assertIsInstance(result, float)
                self.assertEqual(result, expected)


class NumericMatch(unittest.TestCase):
    def test_table(self):
        cases = [
            ("42", "42", 1.0),
            ("42", "42.0", 1.0),
            ("1,234.5", "1234.5", 1.0),
            ("The answer is 1,000,000.", "1e6", 1.0),
            ("x = -3.5 meters", "-3.5", 1.0),
            ("first 3 then 7", "7", 1.0),
            ("3", "3.0000001", 1.0),
            ("3", "3.0001", 0.0),
            (0.1 + 0.2, "0.3", 1.0),
            (5, "5", 1.0),
            ("0", "0", 1.0),
            ("0", "1e-12", 0.0),
            ("no number here", "0", 0.0),
            ("", "", 0.0),
            (None, "1", 0.0),
            (True, "1", 0.0),
            (float("nan"), float("nan"), 0.0),
            ("1e999", "1e999", 0.0),
            ([1], "1", 0.0),
        ]
        for a, b, expected in cases:
            with self.subTest(a=a, b=b):
                result = numeric_match(a, b)
                self.assertIsInstance(result, float)
                self.assertEqual(result, expected)

    def test_rel_tol(self):
        self.assertEqual(numeric_match("100", "101", rel_tol=0.05), 1.0)
        self.assertEqual(numeric_match("100", "110", rel_tol=0.05), 0.0)
        self.assertEqual(numeric_match("100", "100.00001"), 1.0)
        self.assertEqual(numeric_match("100", "100.001"), 0.0)


if __name__ == "__main__":
    unittest.main()
