"""nemo_gym.verifiers.files: reads stay inside the workspace (Task Folder Verifiers "Python verifiers")."""

import os
import tempfile
import unittest
from pathlib import Path

import shimtest  # noqa: F401  (puts the shim folder on sys.path)
from nemo_gym.verifiers.files import file_exists, read_text, text_file_equals


class FilesCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = Path(self._tmp.name)
        self.workspace = self.root / "ws"
        (self.workspace / "sub").mkdir(parents=True)
        (self.workspace / "answer.txt").write_text("Paris\n")
        (self.workspace / "two.txt").write_text("a\n\n")
        (self.workspace / "crlf.txt").write_bytes(b"x\r\n")
        (self.workspace / "sub" / "inner.txt").write_text("inner")
        (self.root / "secret.txt").write_text("outside")
        os.symlink(str(self.root / "secret.txt"), str(self.workspace / "link-out.txt"))
        os.symlink(str(self.workspace / "answer.txt"), str(self.workspace / "link-in.txt"))
        os.symlink(str(self.root), str(self.workspace / "dir-out"))

    def tearDown(self):
        self._tmp.cleanup()


class ReadText(FilesCase):
    def test_reads_and_drops_one_trailing_newline(self):
        self.assertEqual(read_text(self.workspace, "answer.txt"), "Paris")
        self.assertEqual(read_text(self.workspace, "two.txt"), "a\n")
        self.assertEqual(read_text(self.workspace, "crlf.txt"), "x")

    def test_keeps_the_newline_when_asked(self):
        self.assertEqual(read_text(self.workspace, "answer.txt", strip_trailing_newline=False), "Paris\n")
        self.assertEqual(read_text(self.workspace, "crlf.txt", strip_trailing_newline=False), "x\r\n")

    def test_workspace_and_path_as_str_or_path(self):
        self.assertEqual(read_text(str(self.workspace), Path("sub") / "inner.txt"), "inner")
        self.assertEqual(read_text(self.workspace, str(self.workspace / "sub" / "inner.txt")), "inner")

    def test_absent_or_not_a_file_is_none(self):
        self.assertIsNone(read_text(self.workspace, "nope.txt"))
        self.assertIsNone(read_text(self.workspace, "sub"))
        self.assertIsNone(read_text(self.workspace, "."))

    def test_symlink_inside_the_workspace_is_read(self):
        self.assertEqual(read_text(self.workspace, "link-in.txt"), "Paris")

    def test_paths_escaping_the_workspace_are_refused(self):
        for path in ["../secret.txt", "sub/../../secret.txt", str(self.root / "secret.txt"), "link-out.txt",
                     "dir-out/secret.txt", "/etc/passwd"]:
            with self.subTest(path=path):
                self.assertIsNone(read_text(self.workspace, path))
                self.assertFalse(file_exists(self.workspace, path))
                self.assertEqual(text_file_equals(self.workspace, path, "outside"), 0.0)

    def test_a_sibling_folder_sharing_the_prefix_is_outside(self):
        sibling = self.root / "ws-evil"
        sibling.mkdir()
        (sibling / "f.txt").write_text("evil")
        self.assertIsNone(read_text(self.workspace, "../ws-evil/f.txt"))


class FileExists(FilesCase):
    def test_table(self):
        self.assertTrue(file_exists(self.workspace, "answer.txt"))
        self.assertTrue(file_exists(self.workspace, "sub/inner.txt"))
        self.assertFalse(file_exists(self.workspace, "sub"))
        self.assertFalse(file_exists(self.workspace, "missing"))


class TextFileEquals(FilesCase):
    def test_table(self):
        cases = [
            ("answer.txt", "Paris", 1.0),
            ("answer.txt", "Paris\n", 1.0),
            ("answer.txt", "Paris\n\n", 1.0),
            ("answer.txt", "Paris\n\n\n", 0.0),
            ("answer.txt", "paris", 0.0),
            ("two.txt", "a", 0.0),
            ("two.txt", "a\n\n", 1.0),
            ("two.txt", "a\n", 1.0),
            ("sub/inner.txt", "inner\n", 1.0),
            ("missing.txt", "", 0.0),
        ]
        for path, expected, score in cases:
            with self.subTest(path=path, expected=expected):
                self.assertEqual(text_file_equals(self.workspace, path, expected), score)


if __name__ == "__main__":
    unittest.main()
