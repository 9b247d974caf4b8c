#!/usr/bin/env python3
"""Fails where what belongs to a model family, or to the resolver, is written somewhere else.

1. A family's name (its folder under core/models/, or a variant's word: TI2V, A14B, SkyReels, …) in the code
   or the messages of core/, export/, ui/ or app/ outside that family's folder, the registry, and the folders
   that work on one family on purpose (the demo model: core/demo/, core/training/, app/cli/demo/; the golden
   verification and the benchmarks: app/cli/verify/, app/cli/bench/). Comments and #include lines are not
   read (check_layering.py checks the includes).
2. A shot's setting decided outside core/resolve/: "the shot's value, else the sequence's" (`shot.steps.value_or(
   sampler.steps)`, `shot.loras ? *shot.loras : settings.loras`) or the frame rule written with its numbers
   ("(frames - 1) % 4", "4 * k + 1"). The family's numbers come from its row, and the resolver applies them once.

Usage: check_family_knowledge.py ROOT
"""
import re
import sys
from pathlib import Path

SCANNED = ("core", "export", "ui", "app")
SOURCES = (".h", ".cpp")
# Folders under core/models/ that are not a family: the interfaces, the registry, LoRAs (any DiT).
NOT_FAMILIES = {"lora"}
# Words of the variants a family folder holds, beyond the folder's own name.
VARIANT_WORDS = ["ti2v", "i2v", "t2v", "flf2v", "a14b", "skyreels", "causvid", "self[-_ ]?forcing", "umt5"]
FAMILY_PLACES = re.compile(r"^(core/models/model_registry\.cpp|core/demo/|core/training/|app/cli/(demo|verify|bench)/)")

SETTINGS = r"(loras|cache|fewStep|steps|guidance|shift|solver|negativePrompt|guidanceHighNoise|boundary|switchStep)"
SEQUENCE_SIDE = r"[\w.>-]*\b(sampler|settings|sequence)\."
DERIVATIONS = [
    (re.compile(r"\b" + SETTINGS + r"\s*\.value_or\(\s*" + SEQUENCE_SIDE), "a shot's setting falls back to the sequence's"),
    (re.compile(r"\b" + SETTINGS + r"\s*\?\s*\*[\w.>-]+\s*:\s*" + SEQUENCE_SIDE), "a shot's setting falls back to the sequence's"),
    (re.compile(r"\(\s*[\w.>-]*frames\w*\s*-\s*1\s*\)\s*[%/]\s*4\b"), "the frame rule with its numbers"),
    (re.compile(r"\b4\s*\*\s*[\w.>-]+\s*\+\s*1\b"), "the frame rule with its numbers"),
    (re.compile(r"%\s*4\s*[!=]=\s*1\b"), "the frame rule with its numbers"),
]
RESOLVER = re.compile(r"^core/resolve/")


def code_of(text: str):
    """The lines of a C++ file with comments blanked out (string and character literals kept)."""
    out, i, n = [], 0, len(text)
    line = []
    state = None  # None, "block", '"', "'"
    while i < n:
        c = text[i]
        if c == "\n":
            out.append("".join(line))
            line = []
            if state not in ("block",):
                state = None if state in ('"', "'") else state
            i += 1
            continue
        if state == "block":
            if text.startswith("*/", i):
                state = None
                i += 2
            else:
                i += 1
            continue
        if state in ('"', "'"):
            line.append(c)
            if c == "\\" and i + 1 < n:
                line.append(text[i + 1])
                i += 2
                continue
            if c == state:
                state = None
            i += 1
            continue
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            state = "block"
            i += 2
            continue
        if c in ('"', "'") and not (c == "'" and line and line[-1].isalnum()):  # 1'000 is a digit separator
            state = c
        line.append(c)
        i += 1
    out.append("".join(line))
    return out


def families(root: Path):
    models = root / "core" / "models"
    return sorted(p.name for p in models.iterdir() if p.is_dir() and p.name not in NOT_FAMILIES)


def family_words(names):
    words = set(names) | {re.sub(r"\d\d+$", "", n) for n in names}  # wan22 also says "wan"
    alternatives = "|".join(sorted((re.escape(w) for w in words if w), key=len, reverse=True) + VARIANT_WORDS)
    # A family word stands alone or runs into digits, spaces, dots or underscores: "Wan 2.2", "wan22_", "WanModel".
    camel = "|".join(sorted(w.capitalize() for w in words if w))
    return re.compile(r"(?i:(?<![a-z])(" + alternatives + r")(?![a-z]))|(?<![a-zA-Z])(" + camel + r")(?=[A-Z])")


def main(root: Path) -> int:
    names = families(root)
    words = family_words(names)
    problems = []
    for top in SCANNED:
        for source in sorted((root / top).rglob("*")):
            if source.suffix not in SOURCES or not source.is_file():
                continue
            rel = source.relative_to(root).as_posix()
            own_family = rel.startswith("core/models/") and len(source.relative_to(root).parts) > 3 and \
                source.relative_to(root).parts[2] in names
            for number, line in enumerate(code_of(source.read_text(encoding="utf-8", errors="replace")), 1):
                if re.match(r"\s*#\s*include\b", line):
                    continue
                if not own_family and not FAMILY_PLACES.match(rel):
                    match = words.search(line)
                    if match:
                        problems.append(f"{rel}:{number}: names the family word \"{match.group(0)}\" outside its "
                                        f"folder (core/models/<family>/ and its registry row hold what a family knows)")
                if RESOLVER.match(rel):
                    continue
                for pattern, what in DERIVATIONS:
                    if pattern.search(line):
                        problems.append(f"{rel}:{number}: {what}: decided again outside core/resolve/ "
                                        f"(read the resolved shot instead): {line.strip()[:100]}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} place(s) hold what a family row or the resolver decides")
        return 1
    print(f"family knowledge: {len(names)} families ({', '.join(names)}), no name or derivation outside its place")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()))
