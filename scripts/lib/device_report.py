#!/usr/bin/env python3
"""scripts/device-check's JSON file, its checks and its table.

  device_report.py start FILE DEVICE MODE LIMIT     a new device-check file (MODE: device or dry-run)
  device_report.py record FILE PHASE EXPECTED LIMIT STATUS SECONDS RESULT DESCRIPTION [COMMANDS]
                                                    adds a phase (STATUS: an exit status or "skipped"; RESULT: a
                                                    file holding the phase's JSON output, or "")
  device_report.py check FILE            exit 1 (saying why) unless the run is sound on any device: a
                                         device-check file, or one `shotchain bench residency --json`
  device_report.py table FILE [TITLE]    the table of either
"""
import json
import math
import os
import sys
import tempfile

GIB = 2 ** 30


def load(path):
    with open(path) as f:
        return json.load(f)


def save(path, value):
    """Written whole or not at all: a temporary file beside it, renamed over it."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".device-check-")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(value, f, indent=2)
            f.write("\n")
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def parsed_output(path):
    """The JSON a phase printed: the whole file, else its first line that is a JSON object (a rank's lines
    around it), else None."""
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def start(path, device, mode, limit):
    save(path, {"device": device, "mode": mode, "limit_seconds": int(limit), "phases": []})


def record(path, name, expected, limit, status, seconds, result, description, commands=""):
    check = load(path)
    check["phases"] = [p for p in check["phases"] if p["phase"] != name]
    check["phases"].append({
        "phase": name,
        "description": description,
        "commands": [c.strip() for c in commands.splitlines() if c.strip()],
        "expected_seconds": int(expected),
        "limit_seconds": int(limit),
        "seconds": int(seconds),
        "exit_status": None if status == "skipped" else int(status),
        "skipped": status == "skipped",
        "result": parsed_output(result),
    })
    save(path, check)


def problems(bench):
    """What is wrong with a residency run, on whatever device it ran: every policy completed, the
    latent handoff is exact, the probe read the allocator, fragmentation is a fraction, reload
    reloaded the DiT and offload moved bytes."""
    found = []
    runs = {r["policy"]: r for r in bench["runs"]}
    if not runs:
        found.append("no policy ran")
    for name, r in runs.items():
        where = f"{bench['device']} {name}"
        if not r["completed"]:
            found.append(f"{where}: did not complete: {r['error']}")
            continue
        if bench["shots"] > 1 and r["median_handoff_mse"] != 0:
            found.append(f"{where}: latent handoff MSE {r['median_handoff_mse']} (must be exactly 0)")
        if not r["peak_allocated"] > 0 or not r["plan_peak"] > 0:
            found.append(f"{where}: peak {r['peak_allocated']} B measured, {r['plan_peak']} B planned (both must be > 0)")
        if not 0 <= r["free_fragmentation_after"] <= 1:
            found.append(f"{where}: fragmentation {r['free_fragmentation_after']} is not within [0, 1]")
    reload, offload = runs.get("reload"), runs.get("offload")
    if reload and reload["completed"] and not (reload["dit_loads"] >= bench["shots"] - 1 and reload["dit_load_seconds"] > 0):
        found.append(f"reload: {reload['dit_loads']} DiT loads in {reload['dit_load_seconds']} s for {bench['shots']} shots")
    if offload and offload["completed"] and bench["shots"] > 1 and not offload["bytes_moved"] > 0:
        found.append("offload: no bytes moved between host and device")
    return found


def positive(result, *keys):
    return [f"{key} is {result.get(key)!r}, not a positive number" for key in keys
            if not isinstance(result.get(key), (int, float)) or not result[key] > 0]


def residency_problems(result):
    found = problems(result)
    for name in ("reload_over_pinned_overhead", "pinned_overhead_share"):
        if name not in result:
            found.append(f"no {name}")
    for run in result.get("experts", []):
        if run["error"]:
            found.append(f"experts {run['residency']}: {run['error']}")
    return found


def preview_problems(result):
    found = problems(result)
    for run in result["runs"]:
        if run["completed"] and not (run["preview_decoder"] and run["preview_decodes"] > 0
                                     and run["preview_seconds_each"] > 0):
            found.append(f"{run['policy']}: {run['preview_decodes']} previews by {run['preview_decoder'] or 'no decoder'}")
    return found


# What each phase's parsed output must hold (phases not named print no JSON).
PHASE_CHECKS = {
    "cuda": problems,
    "dit-bf16": lambda r: positive(r, "forward_s", "achieved_flops_per_s"),
    "dit-q8_0": lambda r: positive(r, "forward_s", "achieved_flops_per_s"),
    "dit-q4_k": lambda r: positive(r, "forward_s", "achieved_flops_per_s"),
    "residency": residency_problems,
    "vae": lambda r: [f"vae {run['mode']}: decode_s {run['decode_s']}" for run in r["runs"] if not run["decode_s"] > 0]
    or ([] if r["runs"] else ["no decode ran"]),
    "preview": preview_problems,
    "ranks": lambda r: positive(r, "forward_s") + ([] if r.get("ranks") == 2 else [f"ranks {r.get('ranks')}, not 2"]),
}


def check_problems(check):
    """What is wrong with a device-check file: a phase that failed or ran past its limit, output that is missing
    or does not hold its figures; skipped phases only where the mode skips them."""
    found = []
    names = [p["phase"] for p in check["phases"]]
    for required in PHASE_CHECKS:
        if required not in names:
            found.append(f"phase {required} is missing")
    for phase in check["phases"]:
        name = phase["phase"]
        if phase["skipped"]:
            continue
        if phase["exit_status"] != 0:
            found.append(f"{name}: exit status {phase['exit_status']} (commands: {'; '.join(phase['commands'])})")
            continue
        if phase["limit_seconds"] and phase["seconds"] > phase["limit_seconds"]:
            found.append(f"{name}: {phase['seconds']} s, over its {phase['limit_seconds']} s limit")
        if name in PHASE_CHECKS:
            result = phase["result"]
            if not isinstance(result, dict):
                found.append(f"{name}: printed no JSON")
                continue
            try:
                found += [f"{name}: {problem}" for problem in PHASE_CHECKS[name](result)]
            except (KeyError, TypeError) as error:
                found.append(f"{name}: its JSON lacks {error}")
    return found


def headline(phase):
    """One phase's figure for the table."""
    r = phase["result"]
    name = phase["phase"]
    if not isinstance(r, dict):
        return ""
    if name.startswith("dit-"):
        mib = 2 ** 20
        return (f"forward {fmt(r['forward_s'])} s ({r['dtype']}, {r['device']}), "
                f"{fmt(r['achieved_flops_per_s'] / 1e12)} TFLOP/s, dequant {fmt(r['dequant_s'])} s, "
                f"model {r['model_peak_bytes'] / mib:.0f} MiB, plan {r['plan_bytes'] / mib:.0f} MiB")
    if name in ("cuda", "residency"):
        share = r.get("pinned_overhead_share")
        text = (f"reload/pinned inter-shot {fmt(r.get('reload_over_pinned_overhead'), 'x')}, pinned share "
                f"{fmt(None if share is None else 100 * share, '%')}")
        if r.get("size"):
            text += f"; {r['size']} weights {'written' if r['weights_written'] else 'reused'}"
        if r.get("experts"):
            text += "; experts moving per shot " + ", ".join(
                f"{e['residency']} {fmt(e['median_move_seconds_per_shot'])} s" for e in r["experts"])
        return text
    if name == "vae":
        return ", ".join(f"{run['mode']} {fmt(run['decode_s'])} s, peak {gib(run['peak_bytes'])} GiB"
                         for run in r["runs"]) + f" ({r['threads']} threads)"
    if name == "preview":
        return ", ".join(f"{run['policy']}: {run['preview_decodes']} previews, {fmt(run['preview_seconds_each'])} s each"
                         for run in r["runs"] if run["completed"])
    if name == "ranks":
        return (f"{r['ranks']} ranks: forward {fmt(r['forward_s'])} s, collectives {fmt(r['collective_s'])} s, "
                f"rel L2 {fmt(r['rel_l2_vs_one_process'])}")
    return ""


def check_table(check, title):
    print(title or f"device check ({check['mode']}) on {check['device']}")
    rows = [["phase", "status", "s", "expected", "limit", "result"]]
    for p in check["phases"]:
        status = "skipped" if p["skipped"] else ("ok" if p["exit_status"] == 0 else f"exit {p['exit_status']}")
        figure = p["description"] if p["skipped"] else headline(p)
        rows.append([p["phase"], status, "-" if p["skipped"] else str(p["seconds"]), str(p["expected_seconds"]),
                     str(p["limit_seconds"]), figure])
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[5])
    for p in check["phases"]:
        if p["phase"] == "residency" and isinstance(p["result"], dict):
            print()
            table(p["result"], f"residency: {p['result']['sequence']}, {p['result']['shots']} shots on "
                               f"{p['result']['device']}")
            seed = p["result"].get("seed_comparison")
            if seed:
                print(f"{seed['what']}: {seed['reload_seconds']} s -> {seed['pinned_seconds']} s, "
                      f"{seed['reload_over_pinned_overhead']}x")


def fmt(value, unit="", digits=3):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}g}{unit}"


def gib(value):
    return "-" if value is None else f"{value / GIB:.2f}"


def table(bench, title):
    runs = [r for r in bench["runs"] if r["completed"]]
    by = {r["policy"]: r for r in runs}
    print(title or f"{bench['sequence']}: {bench['shots']} shots on {bench['device']}")
    header = ["policy", "inter-shot s", "DiT reload s", "handoff MSE", "round-trip MSE", "reserved GiB",
              "frag", "moved GiB", "plan peak GiB", "peak GiB", "peak/plan"]
    rows = []
    for r in runs:
        reload_s = r["dit_load_seconds"] / r["dit_loads"] if r["policy"] == "reload" and r["dit_loads"] else None
        ratio = r["peak_allocated"] / r["plan_peak"] if r["plan_peak"] else None
        rows.append([r["policy"], fmt(r["median_inter_shot_overhead_seconds"]), fmt(reload_s),
                     fmt(r["median_handoff_mse"]), fmt(r["median_roundtrip_mse"]), gib(r["reserved_after"]),
                     fmt(r["free_fragmentation_after"]), gib(r["bytes_moved"]), gib(r["plan_peak"]),
                     gib(r["peak_allocated"]), fmt(ratio)])
    for r in bench["runs"]:
        if not r["completed"]:
            rows.append([r["policy"], "failed: " + r["error"]] + [""] * (len(header) - 2))
    widths = [max(len(str(row[i])) for row in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        print("  ".join(str(cell).rjust(w) if i else str(cell).ljust(w) for i, (cell, w) in enumerate(zip(row, widths))))
    pinned = by.get("pinned")
    base = pinned["median_inter_shot_overhead_seconds"] if pinned else None
    for other in ("offload", "reload"):
        if base and other in by:
            print(f"inter-shot overhead {other} / pinned: {by[other]['median_inter_shot_overhead_seconds'] / base:.1f}x")
    print("reserved, frag (1 - largest free block / free) and moved: after the last shot; "
          "plan peak: the memory plan of the policy, peak: measured peak allocated")


def main(argv):
    if len(argv) >= 6 and argv[1] == "start":
        start(*argv[2:6])
        return 0
    if len(argv) >= 10 and argv[1] == "record":
        record(*argv[2:11])
        return 0
    if len(argv) < 3 or argv[1] not in ("check", "table"):
        print(__doc__, file=sys.stderr)
        return 2
    bench = load(argv[2])
    device_check = "phases" in bench
    if argv[1] == "table":
        (check_table if device_check else table)(bench, argv[3] if len(argv) > 3 else "")
        return 0
    found = check_problems(bench) if device_check else problems(bench)
    for line in found:
        print("check failed:", line, file=sys.stderr)
    if found:
        return 1
    if device_check:
        ran = [p["phase"] for p in bench["phases"] if not p["skipped"]]
        print(f"checks passed: {', '.join(ran)} ({bench['mode']} on {bench['device']})")
    else:
        print(f"checks passed: {', '.join(r['policy'] for r in bench['runs'])} on {bench['device']}, {bench['shots']} shots")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
