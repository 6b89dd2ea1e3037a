#!/usr/bin/env python3
"""Audits the pinned dependencies against local copies of the public advisory databases.

    python3 scripts/dev/audit_deps.py --rustsec DIR --pypa DIR

--rustsec: the `crates/` folder of the RustSec advisory database (one folder per crate, one
Markdown file per advisory, its TOML front matter in a ```toml block); --pypa: the `vulns/` folder
of the PyPA advisory database (OSV YAML, one folder per package). Checks every package of
Cargo.lock and every pin of clients/python/requirements-test.txt, and prints each advisory that
affects a pinned version. Exits 1 if one does. Both databases are fetched repositories, not part
of this one; nothing is fetched here. Not part of CI: run it when a pin changes, with the dates of
the databases it read in the commit message. Needs PyYAML (the test environment has it:
target/mf/pyenv/bin/python).
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def key(v: str) -> tuple:
    """A version as a comparable tuple: numeric parts, pre-releases before the release."""
    main, _, pre = v.partition("-")
    parts = [int(x) if x.isdigit() else 0 for x in re.split(r"[.+]", main)[:4]]
    parts += [0] * (4 - len(parts))
    return (*parts, 0 if pre else 1, pre)


def matches(version: str, req: str) -> bool:
    """Whether a version meets a RustSec requirement such as ">= 1.5.1, < 1.6.0" or "^0.3"."""
    for c in req.split(","):
        c = c.strip()
        m = re.match(r"(>=|<=|>|<|=|\^|~)?\s*(.+)", c)
        op, want = m.group(1) or "^", m.group(2)
        a, b = key(version), key(want)
        if op == ">=" and not a >= b: return False
        if op == ">" and not a > b: return False
        if op == "<=" and not a <= b: return False
        if op == "<" and not a < b: return False
        if op == "=" and a[:4] != b[:4]: return False
        if op in ("^", "~"):
            # ^1.2.3: >= 1.2.3, < 2; ^0.2.3: < 0.3; ^0.0.3: < 0.0.4; ~1.2.3: < 1.3; ~1: < 2
            nums = [int(x) for x in want.split("-")[0].split(".")]
            if a < b: return False
            if op == "^":
                first = next((i for i, n in enumerate(nums) if n != 0), len(nums) - 1)
                prefix = nums[: first + 1]
            else:
                prefix = nums[:2] if len(nums) > 1 else nums[:1]
            if list(a[: len(prefix)]) != prefix: return False
    return True


def rust(db: Path) -> list[str]:
    lock = tomllib.loads((ROOT / "Cargo.lock").read_text())
    found = []
    for p in lock["package"]:
        if "source" not in p:  # this workspace's own crates
            continue
        for f in sorted((db / p["name"]).glob("*.md")) if (db / p["name"]).is_dir() else []:
            front = re.search(r"```toml\n(.*?)```", f.read_text(), re.S)
            adv = tomllib.loads(front.group(1))
            if adv["advisory"].get("withdrawn"):
                continue
            v = adv.get("versions", {})
            safe = v.get("patched", []) + v.get("unaffected", [])
            if not any(matches(p["version"], r) for r in safe):
                kind = adv["advisory"].get("informational", "vulnerability")
                found.append(f"{p['name']} {p['version']}: {adv['advisory']['id']} ({kind}) {adv['advisory'].get('title', '')}".rstrip())
    return found


def python(db: Path) -> list[str]:
    pins = re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s\\]+)", (ROOT / "clients/python/requirements-test.txt").read_text(), re.M)
    found = []
    for name, version in pins:
        norm = re.sub(r"[-_.]+", "-", name).lower()
        folder = next((d for d in db.iterdir() if re.sub(r"[-_.]+", "-", d.name).lower() == norm), None)
        for f in sorted(folder.glob("*.yaml")) if folder else []:
            adv = yaml.safe_load(f.read_text())
            if adv.get("withdrawn"):
                continue
            for aff in adv.get("affected", []):
                hit = version in [str(x) for x in aff.get("versions", [])]
                for r in aff.get("ranges", []):
                    if r.get("type") not in ("ECOSYSTEM", "SEMVER"):
                        continue
                    lo = None
                    for e in r.get("events", []):
                        if "introduced" in e:
                            lo = str(e["introduced"])
                        elif lo is not None and ("fixed" in e or "last_affected" in e):
                            end = str(e.get("fixed", e.get("last_affected")))
                            inside = key(version) < key(end) if "fixed" in e else key(version) <= key(end)
                            hit = hit or (key(version) >= key(lo) and inside)
                            lo = None
                    if lo is not None:  # introduced and never fixed
                        hit = hit or key(version) >= key(lo)
                if hit:
                    found.append(f"{name} {version}: {adv['id']} {', '.join(adv.get('aliases', []))}".rstrip())
                    break
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rustsec", type=Path, required=True)
    ap.add_argument("--pypa", type=Path, required=True)
    a = ap.parse_args()
    r, p = rust(a.rustsec), python(a.pypa)
    crates = sum(1 for x in tomllib.loads((ROOT / "Cargo.lock").read_text())["package"] if "source" in x)
    print(f"Cargo.lock: {crates} crates from registries, {len(r)} advisories")
    for x in r:
        print("  " + x)
    pins = len(re.findall(r"^[A-Za-z0-9_.\-]+==", (ROOT / "clients/python/requirements-test.txt").read_text(), re.M))
    print(f"requirements-test.txt: {pins} pins, {len(p)} advisories")
    for x in p:
        print("  " + x)
    return 1 if r or p else 0


if __name__ == "__main__":
    sys.exit(main())
