#!/usr/bin/env python3
"""Builds the project's default model zoo from Gavel's measured throughputs.

Reads data/gavel/simulation_throughputs.json (Gavel, MIT licence) and writes
  data/model_zoo_v100.json              the zoo ModelZoo::load / ModelZoo::from_json read
  include/gpuplace/data/gavel_zoo.hpp the same numbers as constexpr tables (ModelZoo::gavel_v100())

The zoo's reference type is --gpu (v100); every other type of --types (p100, k80) is stored under
"types" (a list) with its own throughputs and co-location pairs, cleaned by the same rules (heterogeneous
clusters, docs/heterogeneous.md).

Usage: python3 scripts/make_zoo.py [--input FILE] [--gpu v100] [--types p100,k80] [--json OUT] [--header OUT]

Cleaning rules (documented in docs/workloads.md):
  * consolidated throughput missing or <= 0 at a GPU count: that count is dropped;
  * spread (unconsolidated) throughput missing or <= 0: spread = consolidated (no sensitivity known);
  * spread >= consolidated (measurement noise): spread = consolidated, i.e. the job is treated as
    insensitive to placement at that GPU count (the raw value is kept under "notes");
  * a model without multi-GPU measurements keeps its 1-GPU point only (single-GPU-only model).
Memory per job is an estimate (see MEMORY below), not a measurement.
"""
import argparse
import ast
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_INPUT = os.path.join(ROOT, "data", "gavel", "simulation_throughputs.json")
GAVEL_COMMIT = "c4fa40097339e9608ab71fd64c8bdea96a5e4a4c"

# Memory estimate per GPU (GB): CUDA context and framework overhead + weights, gradients and
# optimizer state + activations per sample x batch size. Rough figures for the datasets Gavel
# trains on (CIFAR-10 for ResNet-18, ImageNet for ResNet-50, Multi30k for the Transformer,
# WikiText-2 for the LM, ML-20M for Recommendation, Pong for A3C, monet2photo for CycleGAN).
CONTEXT_GB = 0.5
MEMORY = {  # family: (weights + optimizer GB, activations GB per sample)
    "ResNet-18": (0.2, 0.010),
    "ResNet-50": (0.4, 0.090),
    "Transformer": (0.8, 0.030),
    "LM": (0.6, 0.050),
    "Recommendation": (0.5, 0.001),
    "A3C": (0.1, 0.0),
    "CycleGAN": (0.5, 0.0),
}
FIXED_BATCH = {"A3C": (1.0, 1), "CycleGAN": (3.5, 1)}  # activations at the fixed batch, GB

# Measurement cluster of the zoo (what RingAllReduce calibrates against): V100 servers with NVLink
# inside a server and 25 Gb/s Ethernet between servers.
REFERENCE = {"node_bandwidth": 100.0, "network_bandwidth": 3.125, "node_latency": 2e-6, "network_latency": 20e-6}


def memory_gb(name):
    family = name.split(" (")[0]
    base, per_sample = MEMORY[family]
    if family in FIXED_BATCH:
        act, _ = FIXED_BATCH[family]
        return round(CONTEXT_GB + base + act, 2)
    m = re.search(r"batch size (\d+)", name)
    batch = int(m.group(1)) if m else 1
    return round(min(CONTEXT_GB + base + per_sample * batch, 32.0), 2)


def parse_key(k):
    name, gpus = ast.literal_eval(k)
    return name, int(gpus)


def build(raw, gpu):
    cons = raw[gpu]
    spread = raw.get(gpu + "_unconsolidated", {})
    models = {}
    order = []
    colocation = {}
    for key, entry in cons.items():
        name, k = parse_key(key)
        if name not in models:
            models[name] = {}
            order.append(name)
        c = entry.get("null")
        s = spread.get(key, {}).get("null") if key in spread else None
        models[name][k] = (c, s)
        if k == 1:
            row = {}
            for other_key, v in entry.items():
                if other_key == "null":
                    continue
                other, ok = parse_key(other_key)
                if ok != 1 or not isinstance(v, list) or len(v) != 2:
                    continue
                row[other] = [float(v[0]), float(v[1])]
            colocation[name] = dict(sorted(row.items()))
    out = []
    stats = {"noisy": [], "dropped": [], "no_spread": [], "single_gpu_only": []}
    for name in order:
        points = {}
        notes = []
        for k in sorted(models[name]):
            c, s = models[name][k]
            if c is None or not (c > 0):
                stats["dropped"].append((name, k))
                notes.append(f"{k} GPUs: consolidated throughput {c!r} dropped")
                continue
            if k == 1:
                s = c
            elif s is None or not (s > 0):
                stats["no_spread"].append((name, k))
                notes.append(f"{k} GPUs: spread throughput {s!r} missing, set to consolidated")
                s = c
            elif s >= c:
                stats["noisy"].append((name, k, c, s))
                notes.append(f"{k} GPUs: measured spread {s:.6g} >= consolidated {c:.6g}, set to consolidated")
                s = c
            points[k] = [c, s]
        if max(points) == 1:
            stats["single_gpu_only"].append(name)
        m = {"name": name, "memory_gb": memory_gb(name),
             "throughput": {str(k): v for k, v in points.items()}}
        if notes:
            m["notes"] = notes
        out.append(m)
    doc = {
        "gpu_type": gpu,
        "source": f"stanford-futuredata/gavel@{GAVEL_COMMIT} simulation_throughputs.json (MIT licence, see data/LICENSE-gavel)",
        "license": "MIT (Copyright (c) 2020 Stanford Future Data Systems)",
        "notes": "Throughput in steps/s of the whole job; [consolidated, spread] per GPU count. memory_gb is an "
                 "estimate. Generated by scripts/make_zoo.py; see docs/workloads.md.",
        "reference": REFERENCE,
        "models": out,
        "colocation": {n: colocation.get(n, {}) for n in order},
    }
    return doc, stats


def compact_json(doc):
    """Indented JSON with number arrays kept on one line."""
    text = json.dumps(doc, indent=1)
    text = re.sub(r"\[\s*([-0-9.eE+,\s]*?)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    return text + "\n"


def cxx_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def header(doc):
    names = [m["name"] for m in doc["models"]]
    types = [(doc["gpu_type"], doc)] + [(d["gpu_type"], d) for d in doc.get("types", [])]
    lines = []
    w = lines.append
    w("#pragma once")
    w("/// \\file data/gavel_zoo.hpp")
    w("/// GENERATED by scripts/make_zoo.py from Gavel's measured throughputs (stanford-futuredata/gavel,")
    w("/// MIT licence, Copyright (c) 2020 Stanford Future Data Systems; see data/LICENSE-gavel).")
    w("/// The same numbers as data/model_zoo_v100.json. Do not edit by hand.")
    w("")
    w("#include <cstddef>")
    w("#include <cstdint>")
    w("#include <string_view>")
    w("")
    w("namespace gpuplace::data::gavel {")
    w("")
    w("/// One measured GPU count: whole-job steps/s with the GPUs in one server and spread across servers.")
    w("struct point {")
    w("    std::uint32_t gpus;")
    w("    double consolidated, spread;")
    w("};")
    w("")
    w("/// One model: its name, estimated memory per GPU and its points (points[first .. first + count)).")
    w("struct model {")
    w("    std::string_view name;")
    w("    double memory_gb;")
    w("    std::size_t first, count;")
    w("};")
    w("")
    r = doc["reference"]
    w(f"inline constexpr std::string_view gpu_type = {cxx_str(doc['gpu_type'])};")
    w(f"inline constexpr double node_bandwidth = {r['node_bandwidth']!r};")
    w(f"inline constexpr double network_bandwidth = {r['network_bandwidth']!r};")
    w(f"inline constexpr double node_latency = {r['node_latency']!r};")
    w(f"inline constexpr double network_latency = {r['network_latency']!r};")
    w("")
    n = len(names)
    w(f"inline constexpr std::size_t num_models = {n};")
    w(f"inline constexpr std::size_t num_types = {len(types)};")
    w("/// The GPU types: the reference type (gpu_type) first.")
    w("inline constexpr std::string_view gpu_types[num_types] = {" + ", ".join(cxx_str(t) for t, _ in types) + "};")
    w("")
    w("/// Every type's points, type by type, model by model.")
    w("inline constexpr point points[] = {")
    rows = []
    idx = 0
    for t, d in types:
        trow = []
        by_name = {m["name"]: m for m in d["models"]}
        for name in names:
            m = by_name[name]
            first = idx
            for k, (c, s) in m["throughput"].items():
                w(f"    {{{k}, {c!r}, {s!r}}},")
                idx += 1
            trow.append((name, doc["models"][names.index(name)]["memory_gb"], first, idx - first))
        rows.append(trow)
    w("};")
    w("")
    w("/// models[type][model]: the model's points of that type.")
    w("inline constexpr model models[num_types][num_models] = {")
    for trow in rows:
        w("    {")
        for nm, mem, first, count in trow:
            w(f"        {{{cxx_str(nm)}, {mem!r}, {first}, {count}}},")
        w("    },")
    w("};")
    w("")
    w("/// colocation[type][a][b] = {steps/s of a, steps/s of b} when 1-GPU jobs a and b share one GPU")
    w("/// of that type; {0, 0}: they cannot share; {-1, -1}: not measured.")
    w(f"inline constexpr double colocation[num_types][{n}][{n}][2] = {{")
    for t, d in types:
        w("    {")
        for a in names:
            row = d["colocation"].get(a, {})
            cells = []
            for b in names:
                v = row.get(b)
                cells.append("{-1, -1}" if v is None else f"{{{v[0]!r}, {v[1]!r}}}")
            w("        {" + ", ".join(cells) + "},")
        w("    },")
    w("};")
    w("")
    w("}  // namespace gpuplace::data::gavel")
    return "\n".join(lines) + "\n"


def calibration_error(doc):
    """The largest relative error of the zoo against its own cleaned points, where the ring
    all-reduce calibration (compute + volume / bandwidth + hops x latency, per type) cannot fit both
    the consolidated and the spread throughput on the measurement cluster: its compute time is
    kept >= 5% of the consolidated step time. Reported, and checked by tests/model_zoo_test.cpp."""
    r = doc["reference"]
    worst = (0.0, None)
    types = [(doc["gpu_type"], doc)] + [(d["gpu_type"], d) for d in doc.get("types", [])]
    for t, d in types:
        for m in d["models"]:
            for k, (c, s) in m["throughput"].items():
                k = int(k)
                if k == 1:
                    continue
                hops = 2.0 * (k - 1)
                tc, ts = 1.0 / c, 1.0 / s
                denom = 1.0 / r["network_bandwidth"] - 1.0 / r["node_bandwidth"]
                v = max(0.0, (ts - tc - hops * (r["network_latency"] - r["node_latency"])) / denom)
                comp = tc - v / r["node_bandwidth"] - hops * r["node_latency"]
                comp = max(comp, 0.05 * tc)
                for meas, bw, lat in ((c, r["node_bandwidth"], r["node_latency"]), (s, r["network_bandwidth"], r["network_latency"])):
                    pred = 1.0 / (comp + v / bw + hops * lat)
                    e = abs(pred - meas) / meas
                    if e > worst[0]:
                        worst = (e, (t, m["name"], k))
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=DEFAULT_INPUT)
    ap.add_argument("--gpu", default="v100")
    ap.add_argument("--types", default="p100,k80", help="other GPU types, comma-separated (empty: none)")
    ap.add_argument("--json", default=os.path.join(ROOT, "data", "model_zoo_v100.json"))
    ap.add_argument("--header", default=os.path.join(ROOT, "include", "gpuplace", "data", "gavel_zoo.hpp"))
    a = ap.parse_args()
    if not os.path.exists(a.input):
        sys.exit(f"make_zoo.py: {a.input} not found (the Gavel data is data/gavel/simulation_throughputs.json)")
    with open(a.input) as f:
        raw = json.load(f)
    doc, stats = build(raw, a.gpu)
    doc["types"] = []
    for t in [x for x in a.types.split(",") if x]:
        td, ts = build(raw, t)
        doc["types"].append({"gpu_type": t,
                             "models": [{"name": m["name"], "throughput": m["throughput"], **({"notes": m["notes"]} if "notes" in m else {})}
                                        for m in td["models"]],
                             "colocation": td["colocation"]})
        print(f"{t}: noisy {len(ts['noisy'])}, dropped {ts['dropped']}, missing spread {ts['no_spread']}")
    if not doc["types"]:
        del doc["types"]
    with open(a.json, "w") as f:
        f.write(compact_json(doc))
    with open(a.header, "w") as f:
        f.write(header(doc))
    print(f"{len(doc['models'])} models -> {os.path.relpath(a.json, ROOT)}, {os.path.relpath(a.header, ROOT)}")
    print(f"noisy (spread >= consolidated, set equal): {len(stats['noisy'])}")
    for name, k, c, s in stats["noisy"]:
        print(f"  {name} @ {k} GPUs: consolidated {c:.3f}, spread {s:.3f}")
    print(f"dropped points: {stats['dropped']}; missing spread: {stats['no_spread']}")
    print(f"single-GPU-only models: {', '.join(stats['single_gpu_only'])}")
    err, where = calibration_error(doc)
    print(f"calibration error (ring all-reduce on the measurement cluster): max {100 * err:.3g}% ({where})")


if __name__ == "__main__":
    main()
