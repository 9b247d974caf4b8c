#!/usr/bin/env python3
"""Fails when the code or a README cites a page (or a section of one) that the repository lacks.

A citation is a Markdown file name in a source file, a CMake file, a script or a Markdown page:
`docs/memory.md`, a bare `wan21.md` (a page of docs/), `resources/README.md`, or "golden README"
(tests/golden/README.md). A section sign after it (`wan21.md §3.4`, `golden README §6`) must name a
heading of that page ("### 3.4 Keys", "## 6. Tolerances").
"""
import re
import sys
from pathlib import Path

CITATION = re.compile(r"(?P<page>(?:[\w.-]+/)*[\w.-]+\.md|[Gg]olden README)(?:\s*§\s*(?P<section>\d+(?:\.\d+)*))?")
HEADING = re.compile(r"^#+\s+(\d+(?:\.\d+)*)\.?\s")
SCANNED = {".h", ".cpp", ".txt", ".md", ".sh", ".py", ".cmake"}



def scanned_files(root: Path):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or rel.parts[0] in (".git",) or rel.parts[0].startswith("build"):
            continue
        if path.suffix in SCANNED or path.parent.name == "scripts" or path.name == "CMakeLists.txt":
            yield path


def target_of(page: str, source: Path, root: Path):
    if page.lower() == "golden readme":
        page = "tests/golden/README.md"
    candidates = [root / page, source.parent / page]
    if "/" not in page:
        candidates.append(root / "docs" / page)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def sections_of(page: Path):
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        match = HEADING.match(line)
        if match:
            found.add(match.group(1))
    return found


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]).resolve()
    problems, checked = [], 0
    for source in scanned_files(root):
        try:
            text = source.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for match in CITATION.finditer(line):
                page = match.group("page")
                if page.startswith(("http", "www.")) or "://" in line[max(0, match.start() - 12):match.start()]:
                    continue
                checked += 1
                target = target_of(page, source, root)
                where = f"{source.relative_to(root)}:{number}"
                if target is None:
                    problems.append(f"{where}: cites {page}, which is not in the repository")
                    continue
                section = match.group("section")
                if section and section not in sections_of(target):
                    problems.append(f"{where}: cites {page} §{section}; {target.relative_to(root)} has no such heading")
    for problem in problems:
        print(problem)
    print(f"doc citations: {checked} checked, {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
