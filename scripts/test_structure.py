#!/usr/bin/env python3
"""Checks of `scripts/structure.py --check` on small made-up trees (run by `make check`): it fails
on a non-test function over 80 lines and on a non-test file over 450 lines, not on a file that is
one table of data, and not on test code (a `#[cfg(test)]` module, or a field of a struct)."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "structure.py"


def check(files):
    """`structure.py --check` over a tree of `files` ({path: text}): (exit code, output)."""
    with tempfile.TemporaryDirectory() as root:
        for rel in ("core/src", "daemon/src", "daemon/llm/src", "daemon/eval/src", "daemon/cli/src", "ext/src"):
            (Path(root) / rel).mkdir(parents=True)
        for rel, text in files.items():
            (Path(root) / rel).write_text(text)
        p = subprocess.run([sys.executable, str(SCRIPT), root, "--check"], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def function(name, lines):
    """A function of `lines` lines, `fn` to its closing brace."""
    body = "".join(f"    let x{i} = {i};\n" for i in range(lines - 2))
    return f"fn {name}() {{\n{body}}}\n"


class Limits(unittest.TestCase):
    def test_short_code_passes(self):
        code, out = check({"daemon/src/lib.rs": function("short", 80)})
        self.assertEqual(code, 0, out)

    def test_a_function_over_80_lines_fails(self):
        code, out = check({"daemon/eval/src/lib.rs": function("long_one", 81)})
        self.assertEqual(code, 1, out)
        self.assertIn("long_one", out)
        self.assertIn("functions over 80 lines", out)

    def test_a_file_over_450_lines_fails_unless_it_is_a_table(self):
        text = "".join(function(f"f{i}", 10) for i in range(46))  # 460 lines
        code, out = check({"core/src/lib.rs": "//! Some maths.\n" + text})
        self.assertEqual(code, 1, out)
        self.assertIn("core/src/lib.rs", out)
        code, out = check({"core/src/lib.rs": "//! The catalogue: this file is one table of data.\n" + text})
        self.assertEqual(code, 0, out)

    def test_test_code_does_not_count(self):
        tests = "#[cfg(test)]\nmod tests {\n" + function("a_long_test", 200) + "}\n"
        code, out = check({"ext/src/lib.rs": function("short", 60) + tests})
        self.assertEqual(code, 0, out)

    def test_a_test_only_field_hides_nothing_after_it(self):
        # A test-only field in a struct literal: only the field is test code, so `load` ends
        # at its own brace and does not run on into `next` (60 + 60 lines).
        body = "".join(f"    let x{i} = {i};\n" for i in range(56))
        load = ("fn load() {\n    let m = M {\n        a: 1,\n        #[cfg(test)]\n"
                "        hook: Default::default(),\n    };\n" + body + "}\n")
        code, out = check({"daemon/src/lib.rs": load + function("next", 60)})
        self.assertEqual(code, 0, out)


if __name__ == "__main__":
    unittest.main()
