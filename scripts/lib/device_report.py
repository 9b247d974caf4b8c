#!/usr/bin/env python3
"""scripts/device-check's checks and table over `shotchain bench residency --json` output.

  device_report.py check FILE            exit 1 (saying why) unless the run is sound on any device
  device_report.py table FILE [TITLE]    the one table of the device check
"""
import json
import math
import sys

GIB = 2 ** 30


def load(path):
    with open(path) as f:
        return json.load(f)


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
    if len(argv) < 3 or argv[1] not in ("check", "table"):
        print(__doc__, file=sys.stderr)
        return 2
    bench = load(argv[2])
    if argv[1] == "table":
        table(bench, argv[3] if len(argv) > 3 else "")
        return 0
    found = problems(bench)
    for line in found:
        print("check failed:", line, file=sys.stderr)
    if not found:
        print(f"checks passed: {', '.join(r['policy'] for r in bench['runs'])} on {bench['device']}, {bench['shots']} shots")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
