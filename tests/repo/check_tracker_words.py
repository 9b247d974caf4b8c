#!/usr/bin/env python3
"""Fails on an issue number in the code, the build files, the tests or the scripts: a hash sign and digits in
parentheses, or the word issue followed by a number (with or without a sub-number). What a change was for belongs
in its commit message; the code says what it does.

Usage: check_tracker_words.py ROOT
"""
import re
import sys
from pathlib import Path

FOLDERS = ("core", "ui", "export", "app", "tests", "scripts", "cmake", ".ci")
SUFFIXES = {".cpp", ".h", ".py", ".sh", ".cmake", ".txt"}
TRACKER = re.compile(r"(?i)\bissues? #?\d+|\(#\d+\b|(?<![&\w])#\d{1,4}(?![\d\w])(?! frames)")
SKIP = re.compile(r"^\s*#\s*(include|define|if|pragma|endif|else|elif|undef)\b")


def main(root: Path) -> int:
    problems = []
    files = [root / "CMakeLists.txt"]
    for folder in FOLDERS:
        files += [p for p in (root / folder).rglob("*") if p.is_file() and (p.suffix in SUFFIXES or p.name == "run")]
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("tests/golden/") or path.name == Path(__file__).name:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if SKIP.match(line):
                continue
            for match in TRACKER.finditer(line):
                if re.match(r"#[0-9a-fA-F]{3,8}\b", line[match.start():]) and re.search(r"color|background|border|#[0-9a-fA-F]{6}", line):
                    continue  # a colour
                problems.append(f"{rel}:{number}: \"{match.group(0)}\": {line.strip()[:100]}")
    for problem in problems:
        print(problem)
    print(f"tracker words: {len(problems)} issue number(s) in {len(files)} files")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()))
