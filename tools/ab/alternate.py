#!/usr/bin/env python3
"""Compares two sheetd binaries on the same workbook, one request at a time,
alternating between them so that the host's drift (page cache, neighbours)
falls on both alike.

Each binary serves its own copy of the workbook; after two warm-up writes
of each kind (the first write after a cold load saves the workbook whole),
every round sends five requests of each kind to A, then five to B. Prints,
per kind and binary, the p50 and p90 latency and the server CPU per request
(user + system time from /proc/PID/stat, counted around each group of five).

    cargo build --release && cp target/release/sheetd /tmp/sheetd-new
    git stash && cargo build --release && cp target/release/sheetd /tmp/sheetd-old && git stash pop
    python3 tools/ab/alternate.py --a /tmp/sheetd-old --b /tmp/sheetd-new \
        --file target/bench-producers/openpyxl-1000000.xlsx --ops insert,update,delete --rounds 12

The workbook is the benchmark's (`benches/producers/make.py`): sheet
`Data`, columns id, name, city, amount. Updates and deletes go to rows
spread over the middle of the sheet.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
import urllib.request

ID = "11111111-1111-4111-8111-111111111111"
PER_GROUP = 5


def call(port, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        method=method,
        data=data,
        headers={"Content-Type": "application/json"},
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as answer:
        answer.read()
    return (time.perf_counter() - started) * 1000


def operation(port, kind, i, rows):
    sheet = f"/v1/data/{ID}/Data"
    if kind == "insert":
        return call(port, "POST", sheet, {"data": [{"id": i, "name": "x", "city": "y", "amount": 1.5}]})
    middle = rows // 2
    if kind == "update":
        row = 2 + (middle // 2 + i * 997) % middle
        return call(port, "PATCH", sheet, {"type": "row", "row": row, "data": {"amount": i}})
    if kind == "delete":
        row = 2 + (middle + i * 997) % middle
        return call(port, "DELETE", sheet, {"type": "row", "row": row})
    raise SystemExit(f"unknown operation {kind!r}")


def cpu_ms(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) * 1000 / ticks


def start(binary, workbook, port, scratch):
    data = os.path.join(scratch, f"data-{port}")
    os.makedirs(data)
    shutil.copy(workbook, os.path.join(data, f"{ID}.xlsx"))
    log = open(os.path.join(scratch, f"server-{port}.log"), "w")
    server = subprocess.Popen(
        [binary, "--listen", f"127.0.0.1:{port}", "--data-dir", data],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit(f"{binary} did not start; see {log.name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, help="the first binary (the one before)")
    parser.add_argument("--b", required=True, help="the second binary (the one after)")
    parser.add_argument("--file", required=True, help="the workbook both serve a copy of")
    parser.add_argument("--ops", default="insert,update", help="insert, update, delete; comma-separated")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--port", type=int, default=18480, help="A's port; B's is the next")
    args = parser.parse_args()
    kinds = args.ops.split(",")
    scratch = tempfile.mkdtemp(prefix="sheetd-ab-")
    servers = {}
    try:
        for name, binary, port in (("A", args.a, args.port), ("B", args.b, args.port + 1)):
            servers[name] = (start(binary, args.file, port, scratch), port)
        first = next(iter(servers.values()))[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{first}/v1/data/{ID}") as answer:
            rows = json.load(answer)["sheets"][0]["rows"]
        for _, port in servers.values():
            for kind in kinds:
                operation(port, kind, 0, rows)
                operation(port, kind, 1, rows)
        latency = {(name, kind): [] for name in servers for kind in kinds}
        cpu = {(name, kind): 0.0 for name in servers for kind in kinds}
        for round_ in range(args.rounds):
            for kind in kinds:
                for name, (server, port) in servers.items():
                    before = cpu_ms(server.pid)
                    for i in range(PER_GROUP):
                        latency[(name, kind)].append(operation(port, kind, 2 + round_ * PER_GROUP + i, rows))
                    cpu[(name, kind)] += cpu_ms(server.pid) - before
        print(f"{rows} rows; {args.rounds * PER_GROUP} requests of each kind to each binary")
        print("| operation | binary | p50 ms | p90 ms | CPU ms a request |")
        print("|---|---|---:|---:|---:|")
        for kind in kinds:
            for name in servers:
                times = sorted(latency[(name, kind)])
                p90 = times[int(len(times) * 0.9) - 1]
                print(
                    f"| {kind} | {name} | {statistics.median(times):.1f} | {p90:.1f} | "
                    f"{cpu[(name, kind)] / len(times):.1f} |"
                )
    finally:
        for server, _ in servers.values():
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
