#!/usr/bin/env python3
"""Fails on an #include that runs from a lower folder to a higher one, on a file of ui/ or export/
that reaches a torch header through its includes (the studio and the writers see plain data, never a
tensor), on a family's folder under core/models/ named outside core/models/, and on a file that defines
names outside its folder's namespace (shotchain::<folder>; core/sequence/, the document's vocabulary, is
shotchain itself; export/ is shotchain::exporting; app/cli/ shotchain::cli), and on a core library (core/CMakeLists.txt, one per folder) that links a folder above it.

The order (README, "Layers"): util -> io, runtime -> sequence, text -> models -> memory, distributed
-> sampling -> resolve, interop -> continuity -> render, demo -> export, training -> ui -> app.
A file may include its own layer and any lower one. Includes are resolved the way the compiler
finds them: beside the including file, then the include roots of its target (ui/ or app/, then
core/, then the repository root).
"""
import re
import sys
from pathlib import Path

LAYERS = [
    ["util"],
    ["io", "runtime"],
    ["sequence", "text"],
    ["models"],
    ["memory", "distributed"],
    ["sampling"],
    ["resolve", "interop"],
    ["continuity"],
    ["render", "demo"],
    ["export", "training"],
    ["ui"],
    ["app"],
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".h", ".cpp")


def layer_of(path: Path, root: Path):
    """The layer of a file of the project, or None for a file outside the layered folders."""
    parts = path.relative_to(root).parts
    if parts[0] == "core" and len(parts) > 2:
        return parts[1]
    if parts[0] in ("export", "ui", "app"):
        return parts[0]
    return None


def resolve(include: str, source: Path, root: Path):
    top = source.relative_to(root).parts[0]
    roots = [source.parent]
    if top in ("ui", "app"):
        roots.append(root / top)
    roots += [root / "core", root]
    for base in roots:
        candidate = base / include
        if candidate.is_file():
            return candidate.resolve()
    return None


TORCH = re.compile(r'^\s*#\s*include\s+<(ATen|c10|torch)/')
TORCH_FREE = ("ui", "export")
# Who may name a family's classes besides core/models/: the demo model (a tiny Wan trained here: demo/,
# training/) and the verbs that exercise one family on purpose (verify against the golden files, the
# benchmarks of its shapes).
FAMILY_USERS = re.compile(r"^(core/demo/|core/training/|app/cli/(verify|bench|demo)/)")
# models/lora/ is not a family: LoRAs apply to any DiT through the model interface.
FAMILY_INCLUDE = re.compile(r'^models/(?!model_|video_|text_encoder|vae_geometry|detection_|kv_cache|attention|sequence_parallel|continuation_note|lora/)([a-z0-9_]+)/')


def reaches_torch(path: Path, root: Path, seen: dict):
    """The chain of includes from `path` to a torch header, or None."""
    if path in seen:
        return seen[path]
    seen[path] = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if TORCH.match(line):
            seen[path] = [line.strip()]
            return seen[path]
        match = INCLUDE.match(line)
        if match:
            target = resolve(match.group(1), path, root)
            if target is not None:
                chain = reaches_torch(target, root, seen)
                if chain:
                    seen[path] = [str(target.relative_to(root))] + chain
                    return seen[path]
    return None


NAMESPACE_OPEN = re.compile(r"^namespace ([\w:]+) \{")
FORWARD_DECLARATION = re.compile(r"^\s*((class|struct|enum class|enum) \w+( : \w+)?;)?\s*$")


def folder_namespace(path: Path, root: Path):
    """The namespace a file's own names live in, or None for a file the rule does not cover."""
    parts = path.relative_to(root).parts
    if parts[0] == "core" and len(parts) > 2:
        return "shotchain" if parts[1] == "sequence" else "shotchain::" + parts[1]
    if parts[0] == "export":
        return "shotchain::exporting"
    if parts[0] == "ui":
        return "shotchain::ui"
    if parts[:2] == ("app", "cli"):
        return "shotchain::cli"
    return None


def namespace_problems(path: Path, root: Path):
    """Named namespaces opened at the top level of the file that hold more than forward declarations, outside
    the folder's own (one nested in the folder's is the folder's)."""
    expected = folder_namespace(path, root)
    if expected is None:
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    problems = []
    depth = 0
    for number, line in enumerate(lines, 1):
        if re.match(r"^\}\s*// namespace", line):
            depth = max(0, depth - 1)
            continue
        match = NAMESPACE_OPEN.match(line) or re.match(r"^namespace ()\{", line)
        if not match:
            continue
        body = []
        for inner in lines[number:]:
            if inner.startswith("}"):
                break
            body.append(inner)
        if all(FORWARD_DECLARATION.match(inner) for inner in body):
            continue  # closed by a bare brace
        depth += 1
        name = match.group(1)
        if depth > 1 or not name or name == expected or name.startswith(expected + "::"):
            continue
        problems.append(f"{path.relative_to(root)}:{number}: defines names in {name}, not in its folder's {expected}")
    return problems


FOLDER_LIBRARY = re.compile(r"^shotchain_core_folder\((\w+)((?:\s+\w+)*?)(?:\s+SOURCES\b|$)", re.M)


def library_problems(root: Path):
    """Each folder of core/ is one library, linking only its own layer and the ones below."""
    text = (root / "core" / "CMakeLists.txt").read_text(encoding="utf-8")
    problems, libraries = [], set()
    for match in FOLDER_LIBRARY.finditer(text):
        folder, words = match.group(1), match.group(2).split()
        libraries.add(folder)
        uses = words[words.index("USES") + 1:] if "USES" in words else []
        for used in uses:
            if used not in RANK or folder not in RANK:
                problems.append(f"core/CMakeLists.txt: {folder} uses {used}, which has no place in the layer order")
            elif RANK[used] > RANK[folder]:
                problems.append(f"core/CMakeLists.txt: {folder} links {used}, above it in the layer order")
    for folder in sorted(p.name for p in (root / "core").iterdir() if p.is_dir()):
        if folder not in libraries:
            problems.append(f"core/CMakeLists.txt: core/{folder}/ has no library of its own (shotchain_core_folder)")
    return problems


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]).resolve()
    problems = library_problems(root)
    checked = 0
    for folder in ("core", "export", "ui", "app"):
        for source in sorted((root / folder).rglob("*")):
            if source.suffix not in SOURCES or not source.is_file():
                continue
            problems += namespace_problems(source, root)
            here = layer_of(source, root)
            if here is None or here not in RANK:
                if here is not None:
                    problems.append(f"{source.relative_to(root)}: folder '{here}' has no place in the layer order")
                continue
            for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = resolve(match.group(1), source, root)
                if target is None:
                    continue  # a system or third-party header
                there = layer_of(target, root)
                checked += 1
                if there is None or there not in RANK:
                    continue
                rel = str(source.relative_to(root))
                if FAMILY_INCLUDE.match(match.group(1)) and not rel.startswith("core/models/") \
                        and not rel.startswith("tests/") and not FAMILY_USERS.match(rel):
                    problems.append(f"{rel}:{number}: includes {match.group(1)}, a family's own header "
                                    f"(outside core/models/ only the registry and the interfaces are used)")
                if RANK[there] > RANK[here]:
                    problems.append(f"{source.relative_to(root)}:{number}: includes {match.group(1)} "
                                    f"({there}, above {here} in the layer order)")
    seen = {}
    for folder in TORCH_FREE:
        for source in sorted((root / folder).rglob("*")):
            if source.suffix in SOURCES and source.is_file():
                chain = reaches_torch(source.resolve(), root, seen)
                if chain:
                    problems.append(f"{source.relative_to(root)}: reaches a torch header: {' -> '.join(chain)}")
    for problem in problems:
        print(problem)
    print(f"layering: {checked} project includes checked, {len(problems)} against the order")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
