#!/usr/bin/env python3
"""ShotChain's Wan DiT forward against stable-diffusion.cpp's, same weights, same inputs.

Writes the 2-layer DiT's weights once (shotchain bench dit --save-weights), converts them
(shotchain convert: GGUF Q8_0, F16, BF16), then per token count runs every configuration as
its own process under /usr/bin/time -v, the configurations in turn, for several rounds.
Prints a table and writes results.json (medians and ranges over the rounds, peak RSS, relative
L2 error of the output against an f32 forward on the same inputs).

  bench/peer/run.py [--quick] [--tokens 1560,2550,8000] [--rounds 3] [--repeats 3]

The stable-diffusion.cpp builds come from bench/peer/build-peer.sh (run first unless --no-build).
Standard library only.
"""

import argparse
import array
import datetime
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# name, side, build (peer only), weights file key, ShotChain dtype, flash attention
CONFIGS = [
    ("shotchain f32", "shotchain", None, "f32", "float32", False),
    ("shotchain bf16", "shotchain", None, "f32", "bfloat16", False),
    ("shotchain bf16, q8_0 blocks", "shotchain", None, "q8_0", "bfloat16", False),
    ("sd.cpp f32", "peer", "default", "f32", None, False),
    ("sd.cpp f16 +FA", "peer", "default", "f16", None, True),
    ("sd.cpp q8_0", "peer", "default", "q8_0", None, False),
    ("sd.cpp llamafile f32", "peer", "llamafile", "f32", None, False),
    ("sd.cpp llamafile bf16 +FA", "peer", "llamafile", "bf16", None, True),
    ("sd.cpp llamafile q8_0", "peer", "llamafile", "q8_0", None, False),
]

WEIGHT_FILES = {
    "f32": "dit2.safetensors",
    "f16": "dit2_f16.gguf",
    "bf16": "dit2_bf16.gguf",
    "q8_0": "dit2_q8_0.gguf",
}


def slug(name):
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def read_f32(path, name):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        info = header[name]
        begin, end = info["data_offsets"]
        f.seek(8 + n + begin)
        values = array.array("f")
        values.frombytes(f.read(end - begin))
    if sys.byteorder != "little":
        values.byteswap()
    return info["shape"], values


def rel_l2(path, reference):
    shape, a = read_f32(path, "out")
    ref_shape, b = read_f32(reference, "out")
    if shape != ref_shape:
        raise RuntimeError(f"{path}: out {shape} against {ref_shape}")
    num = math.fsum((x - y) * (x - y) for x, y in zip(a, b))
    den = math.fsum(y * y for y in b)
    return math.sqrt(num / den)


def busy_cpu_seconds():
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal: all but idle and iowait
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def run_timed(cmd, log_path):
    """Runs cmd under /usr/bin/time -v; returns (stdout, peak RSS in MiB, wall seconds, others' CPU).

    others' CPU: CPU seconds the rest of the machine used during the run, per wall second (0 on a
    quiet machine; 1 means a core's worth taken from the run on average)."""
    time_path = log_path + ".time"
    busy_before = busy_cpu_seconds()
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        done = subprocess.run(["/usr/bin/time", "-v", "-o", time_path] + cmd,
                              stdout=subprocess.PIPE, stderr=log, text=True)
        log.write(done.stdout)
    with open(time_path) as f:
        timing = f.read()
    busy = busy_cpu_seconds() - busy_before
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}); see {log_path}")
    own = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", timing).group(1)) for k in ("User", "System"))
    rss_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", timing).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    return done.stdout, rss_kib / 1024.0, seconds, max(0.0, busy - own) / max(seconds, 1e-3)


def last_json_line(stdout):
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError("no JSON line in the output")


def check_call(cmd):
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def versions(peer_dir):
    with open(os.path.join(HERE, "build-peer.sh")) as f:
        script = f.read()
    result = {
        "stable-diffusion-cpp-python": re.search(r"SDCPP_PY_VERSION=(\S+)", script).group(1),
        "sdist_sha256": re.search(r"SDCPP_PY_SHA256=(\S+)", script).group(1),
        "stable-diffusion.cpp": re.search(r"SDCPP_COMMIT=(\S+)", script).group(1),
        "ggml_commit": re.search(r"GGML_COMMIT=(\S+)", script).group(1),
    }
    src = os.path.join(peer_dir, "src", "stable_diffusion_cpp_python-" + result["stable-diffusion-cpp-python"])
    commit = os.path.join(src, "BINDINGS_COMMIT")
    if os.path.exists(commit):
        with open(commit) as f:
            result["bindings_commit"] = f.read().strip()
    ggml_cmake = os.path.join(src, "vendor", "stable-diffusion.cpp", "ggml", "CMakeLists.txt")
    if os.path.exists(ggml_cmake):
        with open(ggml_cmake) as f:
            text = f.read()
        result["ggml"] = ".".join(re.search(rf"set\(GGML_VERSION_{p} (\d+)\)", text).group(1)
                                  for p in ("MAJOR", "MINOR", "PATCH"))
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        result["shotchain"] = head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        pass
    return result


def machine():
    info = {"cores": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        info["cpu"] = re.search(r"model name\s*:\s*(.*)", text).group(1)
        flags = set(re.search(r"flags\s*:\s*(.*)", text).group(1).split())
        info["flags"] = sorted(flags & {"avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8",
                                        "amx_tile"})
        with open("/proc/meminfo") as f:
            info["mem_gib"] = round(int(re.search(r"MemTotal:\s*(\d+)", f.read()).group(1)) / 2**20, 1)
    except (OSError, AttributeError):
        pass
    return info


def fmt_row(cells, widths):
    return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"


def table(rows):
    head = ["tokens", "configuration", "s/forward median", "range (rounds)", "peak RSS MiB", "model MiB",
            "rel-L2 vs f32", "others' CPU"]
    body = []
    for r in rows:
        rng = f"{r['min_s']:.2f}–{r['max_s']:.2f}" if len(r["rounds_s"]) > 1 else "–"
        rel = "–" if r["rel_l2"] is None else f"{r['rel_l2']:.1e}"
        if r.get("rel_l2_reference") == "sd.cpp f32":
            rel += "*"
        others = "/".join(f"{v:.1f}" for v in r["others_cpu"])
        body.append([str(r["tokens"]), r["name"], f"{r['median_s']:.2f}", rng, f"{r['peak_rss_mib']:.0f}",
                     f"{r['model_mib']:.0f}", rel, others])
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = [fmt_row(head, widths), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [fmt_row(b, widths) for b in body]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1560 tokens, one round, one timed forward")
    ap.add_argument("--tokens", default="1560,2550,8000", help="token counts (default 1560,2550,8000)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of all configurations (default 3)")
    ap.add_argument("--repeats", type=int, default=None, help="timed forwards per process, median kept (default 3)")
    ap.add_argument("--threads", type=int, default=2, help="sd.cpp threads (default 2)")
    ap.add_argument("--shotchain", default=os.path.join(REPO, "build", "app", "shotchain"))
    ap.add_argument("--peer-dir", default=os.environ.get("SHOTCHAIN_PEER_DIR", os.path.join(REPO, "build", "peer")))
    ap.add_argument("--out", default=None, help="results folder (default PEER_DIR/results/<time>)")
    ap.add_argument("--only", default=None, help="comma-separated substrings: run the configurations they match")
    ap.add_argument("--no-build", action="store_true", help="do not run build-peer.sh first")
    args = ap.parse_args()

    tokens = [1560] if args.quick else [int(t) for t in args.tokens.split(",")]
    rounds = 1 if args.quick else max(1, args.rounds)
    repeats = args.repeats if args.repeats is not None else (1 if args.quick else 3)
    configs = CONFIGS
    if args.only:
        keys = [k.strip() for k in args.only.split(",")]
        configs = [c for c in CONFIGS if c[0] == "shotchain f32" or any(k in c[0] for k in keys)]

    if not os.path.exists("/usr/bin/time"):
        sys.exit("run.py: /usr/bin/time is missing (apt-get install time)")
    if not os.access(args.shotchain, os.X_OK):
        sys.exit(f"run.py: no ShotChain binary at {args.shotchain}")
    peer_dir = os.path.abspath(args.peer_dir)
    if not args.no_build:
        env = dict(os.environ, SHOTCHAIN_PEER_DIR=peer_dir)
        print("$ bench/peer/build-peer.sh", flush=True)
        subprocess.run([os.path.join(HERE, "build-peer.sh")], check=True, env=env)
    drivers = {b: os.path.join(peer_dir, f"build-{b}", "sdcpp_wan_dit") for b in ("default", "llamafile")}
    for d in drivers.values():
        if not os.access(d, os.X_OK):
            sys.exit(f"run.py: no driver at {d} (run bench/peer/build-peer.sh)")

    data = os.path.join(peer_dir, "data")
    os.makedirs(data, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = os.path.abspath(args.out or os.path.join(peer_dir, "results", stamp))
    logs = os.path.join(out, "logs")
    outputs = os.path.join(out, "outputs")
    os.makedirs(logs, exist_ok=True)
    os.makedirs(outputs, exist_ok=True)

    # Seeded random weights: the same file whatever the token count.
    weights = {k: os.path.join(data, v) for k, v in WEIGHT_FILES.items()}
    if not os.path.exists(weights["f32"]):
        check_call([args.shotchain, "bench", "dit", "--save-weights", weights["f32"], "--repeats", "1", "--json"])
    for key, ggml_type in (("q8_0", "Q8_0"), ("f16", "F16"), ("bf16", "BF16")):
        if not os.path.exists(weights[key]):
            check_call([args.shotchain, "convert", weights["f32"], weights[key], "--type", ggml_type])

    def command(cfg, n, output):
        name, side, build, wkey, dtype, flash = cfg
        if side == "shotchain":
            cmd = [args.shotchain, "bench", "dit", "--weights", weights[wkey], "--dtype", dtype, "--tokens", str(n),
                   "--repeats", str(repeats), "--json"]
            return cmd + (["--output", output] if output else [])
        cmd = [drivers[build], "--weights", weights[wkey], "--inputs", reference[n], "--repeats", str(repeats),
               "--threads", str(args.threads), "--json"]
        if flash:
            cmd.append("--flash-attn")
        return cmd + (["--output", output] if output else [])

    reference = {}
    results = {}
    started = time.time()
    for n in tokens:
        reference[n] = os.path.join(outputs, f"shotchain_f32_{n}.safetensors")
        for r in range(rounds):
            for cfg in configs:
                name = cfg[0]
                output = os.path.join(outputs, f"{slug(name)}_{n}.safetensors") if r == 0 else None
                log = os.path.join(logs, f"{slug(name)}_{n}_r{r + 1}.log")
                stdout, rss, wall, others = run_timed(command(cfg, n, output), log)
                line = last_json_line(stdout)
                entry = results.setdefault((n, name), {
                    "tokens": n, "name": name, "side": cfg[1], "build": cfg[2], "weights": WEIGHT_FILES[cfg[3]],
                    "dtype": cfg[4], "flash_attn": cfg[5], "rounds_s": [], "rss_mib": [], "model_rss_mib": [], "wall_s": [],
                    "others_cpu": [], "detail": line})
                entry["rounds_s"].append(line["forward_s"])
                entry["rss_mib"].append(round(rss, 1))
                entry["model_rss_mib"].append(round(line["model_peak_bytes"] / 2**20, 1))
                entry["wall_s"].append(round(wall, 2))
                entry["others_cpu"].append(round(others, 2))
                print(f"[{n} tokens, round {r + 1}/{rounds}] {name}: {line['forward_s']:.3f} s/forward, "
                      f"peak RSS {rss:.0f} MiB (others' CPU {others:.2f})", flush=True)

        # The bench draws new inputs in every process: ShotChain's other precisions are held against
        # sd.cpp f32 on their own inputs, sd.cpp's against ShotChain f32's.
        for cfg in configs:
            name = cfg[0]
            entry = results[(n, name)]
            produced = os.path.join(outputs, f"{slug(name)}_{n}.safetensors")
            if name == "shotchain f32":
                entry["rel_l2"], entry["rel_l2_reference"] = None, None
            elif cfg[1] == "peer":
                entry["rel_l2"], entry["rel_l2_reference"] = rel_l2(produced, reference[n]), "shotchain f32"
            else:
                check = os.path.join(outputs, f"sdcpp_f32_on_{slug(name)}_{n}.safetensors")
                subprocess.run([drivers["default"], "--weights", weights["f32"], "--inputs", produced, "--repeats", "1",
                                "--warmup", "0", "--threads", str(args.threads), "--output", check],
                               check=True, stdout=subprocess.DEVNULL)
                entry["rel_l2"], entry["rel_l2_reference"] = rel_l2(produced, check), "sd.cpp f32"
            print(f"[{n} tokens] rel-L2 {name} vs {entry['rel_l2_reference'] or '-'}: "
                  f"{'-' if entry['rel_l2'] is None else format(entry['rel_l2'], '.3e')}", flush=True)

    rows = []
    for (n, name), e in results.items():
        s = sorted(e["rounds_s"])
        e.update(median_s=s[len(s) // 2], min_s=s[0], max_s=s[-1], peak_rss_mib=max(e["rss_mib"]),
                 model_mib=max(e["model_rss_mib"]))
        rows.append(e)
    report = {
        "date": stamp,
        "minutes": round((time.time() - started) / 60, 1),
        "machine": machine(),
        "versions": versions(peer_dir),
        "rounds": rounds,
        "repeats_per_process": repeats,
        "sdcpp_threads": args.threads,
        "others_cpu_max": max(max(e["others_cpu"]) for e in rows),
        "configurations": rows,
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(report, f, indent=1)
    text = table(rows)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text + "\n")
    print()
    print(text)
    print("\n* against sd.cpp f32 on that run's own inputs (the bench draws new inputs each run)")
    print("others' CPU: per round, CPU the rest of the machine used per wall second of the run (2 cores)")
    print(f"\nresults: {out}/results.json, {out}/table.txt")


if __name__ == "__main__":
    main()
