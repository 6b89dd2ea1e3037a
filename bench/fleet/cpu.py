#!/usr/bin/env python3
"""Where the CPU goes while a command runs (bench/fleet.sh): runs the command, and writes one JSON
object with the CPU seconds each fleet node's processes used meanwhile, the command's own (pgbench),
and the machine's total from /proc/stat (the rest is other work on the machine).

    cpu.py FLEET_DIR NODE[,NODE…] OUT.json -- command args…

A node's CPU is its postmaster's own and reaped children's time (utime, stime, cutime, cstime of
/proc/PID/stat: a backend that exits is reaped by the postmaster, so its time lands in cutime)
plus the time of its live children; the difference of two snapshots is what the node used in
between, backends that came and went included."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    return s[s.rindex(")") + 2:].split()  # fields from 3 (state) on


def children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = stat(int(d))
            if st:
                kids.setdefault(int(st[1]), []).append(int(d))
    return kids


def node_ticks(pm: int, kids: dict[int, list[int]]) -> int:
    st = stat(pm)
    if not st:
        return 0
    # fields 14-17 (utime stime cutime cstime) are st[11:15]
    total = sum(int(x) for x in st[11:15])
    for c in kids.get(pm, []):
        cs = stat(c)
        if cs:
            total += int(cs[11]) + int(cs[12])
    return total


def machine() -> tuple[int, int]:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v[:8]) - idle, sum(v[:8])


def snapshot(pms: dict[str, int]) -> dict[str, int]:
    kids = children()
    out = {n: node_ticks(pid, kids) for n, pid in pms.items()}
    out["_busy"], out["_all"] = machine()
    return out


def main() -> None:
    fleet_dir, nodes, out = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    pms = {}
    for n in nodes:
        with open(os.path.join(fleet_dir, n, "data", "postmaster.pid")) as f:
            pms[n] = int(f.readline())
    a = snapshot(pms)
    t0 = time.time()
    rc = subprocess.call(cmd)
    wall = time.time() - t0
    time.sleep(0.5)  # the backends exit and are reaped
    b = snapshot(pms)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = {n: (b[n] - a[n]) / TICK for n in nodes}
    res["client"] = ru.ru_utime + ru.ru_stime
    busy = (b["_busy"] - a["_busy"]) / TICK
    res["machine_busy"] = busy
    res["machine_capacity"] = (b["_all"] - a["_all"]) / TICK
    res["other"] = max(0.0, busy - sum(res[n] for n in nodes) - res["client"])
    res["wall"] = wall
    res["cores"] = os.cpu_count()
    with open(out, "w") as f:
        json.dump(res, f)
    sys.exit(rc)


if __name__ == "__main__":
    main()
