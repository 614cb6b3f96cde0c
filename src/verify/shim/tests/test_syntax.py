"""The shim must run on Python 3.8: its files parse with 3.8's grammar."""

import ast
import unittest

from shimtest import LAYOUT, SHIM_SOURCE


class Python38Syntax(unittest.TestCase):
    def test_shim_python_files_parse_as_python_3_8(self):
        sources = [name for name in LAYOUT if name.endswith(".py")]
        self.assertTrue(sources)
        for name in sources:
            with self.subTest(file=name):
                ast.parse((SHIM_SOURCE / name).read_text(), filename=name, feature_version=(3, 8))


if __name__ == "__main__":
    unittest.main()
