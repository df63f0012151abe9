#!/usr/bin/env python3
"""Gather a development corpus of real .xlsx/.xlsm workbooks.

The workbooks come from the test data of public repositories (files saved by
Excel, LibreOffice and other producers).  They are copied into a directory
that git ignores (default: target/corpus/) and described in
target/corpus/manifest.csv.  The files are never committed; only this script
is.  See tools/corpus/README.md.

Two ways to get the repositories (both may be mixed):

* mirrors: bare git directories already on this machine, e.g. brought by the
  tool library's `fetch` (/work/.mirror/<owner>+<name>/repo).  Pass them as
  arguments (`owner/name=GITDIR` or just GITDIR) or let the script discover
  them under --mirror-root (default /work/.mirror when it exists).
* clones: with --clone, every known source that no mirror provides is
  cloned from GitHub with
      git clone --depth 1 --filter=blob:none --sparse URL DIR
  followed by a non-cone sparse checkout of its test-data workbooks, so only
  those blobs are downloaded.  Clones are kept under --clone-dir and reused.

Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import html
import io
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# Known sources: repository -> path prefixes holding its test workbooks ("" =
# the whole tree).  The prefixes limit what is read from a mirror and what a
# sparse clone downloads.  Notes are for the reader of the manifest.
SOURCES: dict[str, dict] = {
    "jmcnamara/rust_xlsxwriter": {"paths": ["tests/input"],
                                  "note": "Excel-saved reference files of a writer's test suite"},
    "jmcnamara/XlsxWriter": {"paths": ["xlsxwriter/test/comparison"],
                             "note": "Excel-saved reference files (many shared with rust_xlsxwriter)"},
    "apache/poi": {"paths": ["test-data"],
                   "note": "bug-report files, many producers"},
    "ClosedXML/ClosedXML": {"paths": ["ClosedXML.Tests/Resource"],
                            "note": "TryToLoad/LO holds LibreOffice-saved files"},
    "PHPOffice/PhpSpreadsheet": {"paths": ["tests/data", "samples"],
                                 "note": "reader test files from bug reports"},
    "ExcelDataReader/ExcelDataReader": {"paths": ["src/TestData"],
                                        "note": "reader test files"},
    "ironcalc/IronCalc": {"paths": ["xlsx/tests"],
                          "note": "function tests saved by Excel"},
    "tafia/calamine": {"paths": ["tests"], "note": "reader test files"},
    "SheetJS/test_files": {"paths": [""], "note": "reader test files"},
    "exceljs/exceljs": {"paths": ["spec", "test"], "note": "integration test files"},
    "pjfanning/excel-streaming-reader": {"paths": ["src/test/resources"],
                                         "note": "Java streaming reader, bug-report files"},
    "dhatim/fastexcel": {"paths": ["fastexcel-reader/src/test/resources", "e2e/src/test/resources"],
                         "note": "Java reader test files"},
    "alibaba/easyexcel": {"paths": ["easyexcel-test/src/test/resources"], "note": "Java test files"},
    "apache/tika": {"paths": ["tika-parsers", "tika-server"], "note": "parser test documents"},
    "nissl-lab/npoi": {"paths": ["testcases/test-data"], "note": "port of POI; mostly POI's files"},
    "ToucanToco/fastexcel": {"paths": ["tests", "python/tests"], "note": "reader test fixtures"},
    "theorchard/openpyxl": {"paths": ["openpyxl"], "note": "2015 mirror of openpyxl, test data"},
    "JanMarvin/openxlsx2": {"paths": ["inst/extdata"], "note": "R package example files"},
    "tidyverse/readxl": {"paths": ["tests/testthat/sheets", "inst/extdata"],
                         "note": "reader test files, several producers"},
    "ycphs/openxlsx": {"paths": ["inst/extdata", "tests"], "note": "R package test files"},
    "tealeg/xlsx": {"paths": ["testdocs", "tutorial"], "note": "Go reader test files"},
    "qax-os/excelize": {"paths": ["test"], "note": "Go library test files"},
    # Too large for the fetch tool's snapshots (7.1 GB, 1.5 GB): only with --clone.
    "LibreOffice/core": {"paths": ["sc/qa/unit/data/xlsx"],
                         "note": "LibreOffice's import/export tests, bug-report files"},
    "pandas-dev/pandas": {"paths": ["pandas/tests/io/data/excel"], "note": "reader test files"},
    # EPPlus 5+ is PolyForm Noncommercial: skipped unless --allow-noncommercial.
    "EPPlusSoftware/EPPlus": {"paths": ["src/EPPlusTest"], "note": "PolyForm Noncommercial"},
}

WORKBOOK_EXT = re.compile(r"\.xls[xm]$", re.IGNORECASE)
MAIN_TYPES = {
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml": "xlsx",
    "application/vnd.ms-excel.sheet.macroEnabled.main+xml": "xlsm",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml": "xltx",
    "application/vnd.ms-excel.template.macroEnabled.main+xml": "xltm",
}
EXT_PROPS_REL = "/extended-properties"
MANIFEST_FIELDS = [
    "file", "source_repo", "commit", "path", "sha256", "size", "kind",
    "application", "app_version", "claimed_producer", "producer", "excel_signature",
    "license", "license_files", "also_at",
]
SKIP_FIELDS = ["source_repo", "commit", "path", "sha256", "size", "reason"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def git(git_dir: Path, *args: str, data: bytes | None = None, check: bool = True) -> bytes:
    r = subprocess.run(["git", f"--git-dir={git_dir}", *args], input=data,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {git_dir}: "
                           f"{r.stderr.decode(errors='replace').strip()}")
    return r.stdout


# --------------------------------------------------------------------------
# Repositories


@dataclass
class Repo:
    name: str                 # owner/name
    git_dir: Path
    origin: str               # "mirror" or "clone"
    paths: list[str] = field(default_factory=list)
    commit: str = ""
    license: str = "unknown"
    license_files: str = ""


def is_git_dir(p: Path) -> bool:
    return (p / "HEAD").is_file() and (p / "objects").is_dir()


def repo_name_from_path(p: Path) -> str | None:
    """owner+name in a path component (the fetch tool's layout) -> owner/name."""
    for part in reversed(p.resolve().parts):
        if "+" in part:
            owner, _, name = part.partition("+")
            if owner and name:
                return f"{owner}/{name}"
    return None


def repo_name_from_remote(git_dir: Path) -> str | None:
    url = git(git_dir, "config", "--get", "remote.origin.url", check=False).decode().strip()
    m = re.search(r"github\.com[:/]([^/]+)/([^/]+?)(?:\.git)?/?$", url)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def discover_mirrors(root: Path) -> list[tuple[str, Path]]:
    found = []
    if not root.is_dir():
        return found
    for d in sorted(root.iterdir()):
        if not d.is_dir():
            continue
        for cand in (d / "repo", d / "repo" / ".git", d, d / ".git"):
            if is_git_dir(cand):
                name = repo_name_from_path(d) or repo_name_from_remote(cand)
                if name:
                    found.append((name, cand))
                break
    return found


def sparse_patterns(paths: list[str]) -> list[str]:
    pats = ["/LICEN*", "/COPYING*", "/legal/LICEN*", "/DESCRIPTION", "/package.json", "/Cargo.toml"]
    for p in paths:
        base = f"/{p.strip('/')}/**/" if p.strip("/") else ""
        pats += [f"{base}*.[xX][lL][sS][xX]", f"{base}*.[xX][lL][sS][mM]"]
    return pats


def clone(name: str, paths: list[str], clone_dir: Path, refresh: bool, url_template: str) -> Path:
    dest = clone_dir / name.replace("/", "+")
    if refresh and dest.exists():
        shutil.rmtree(dest)
    if not (dest / ".git").is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        log(f"clone {name} -> {dest}")
        subprocess.run(["git", "clone", "--quiet", "--depth", "1", "--filter=blob:none", "--sparse",
                        url_template.format(repo=name, owner=name.split("/")[0],
                                            name=name.split("/")[1]), str(dest)], check=True)
    # (Re)applied on every run, so an edited SOURCES entry takes effect.
    subprocess.run(["git", "-C", str(dest), "sparse-checkout", "set", "--no-cone",
                    *sparse_patterns(paths)], check=True)
    return dest / ".git"


# --------------------------------------------------------------------------
# Licences

LICENSE_NAME = re.compile(r"^(licen[cs]e|copying|unlicense)([-_.](?!note$).*)?$", re.IGNORECASE)
LICENSE_TEXTS = [
    (re.compile(r"polyform\s+noncommercial", re.I), "PolyForm-Noncommercial-1.0.0"),
    (re.compile(r"apache license,?\s+version 2\.0|apache license\s+version 2\.0", re.I), "Apache-2.0"),
    (re.compile(r"mozilla public license,?\s+(version\s+)?2\.0|mozilla public license version 2\.0", re.I), "MPL-2.0"),
    (re.compile(r"gnu lesser general public license", re.I), "LGPL"),
    (re.compile(r"gnu affero general public license", re.I), "AGPL"),
    (re.compile(r"gnu general public license", re.I), "GPL"),
    (re.compile(r"permission is hereby granted, free of charge|\bmit license\b", re.I), "MIT"),
    (re.compile(r"redistribution and use in source and binary forms.*neither the name", re.I | re.S), "BSD-3-Clause"),
    (re.compile(r"redistribution and use in source and binary forms", re.I), "BSD-2-Clause"),
    (re.compile(r"this is free and unencumbered software", re.I), "Unlicense"),
]


def show(repo: Repo, path: str) -> bytes | None:
    r = subprocess.run(["git", f"--git-dir={repo.git_dir}", "show", f"{repo.commit}:{path}"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return r.stdout if r.returncode == 0 else None


def detect_license(repo: Repo) -> tuple[str, str]:
    top = git(repo.git_dir, "ls-tree", "--name-only", repo.commit).decode().splitlines()
    files = [f for f in top if LICENSE_NAME.match(f)]
    if not files and "legal" in top:
        files = [f"legal/{f}" for f in git(repo.git_dir, "ls-tree", "--name-only",
                                              f"{repo.commit}:legal").decode().splitlines()
                 if LICENSE_NAME.match(f)]
    ids: list[str] = []
    for f in files:
        text = (show(repo, f) or b"").decode("utf-8", errors="replace")[:20000]
        for rx, spdx in LICENSE_TEXTS:
            if rx.search(text):
                if spdx not in ids:
                    ids.append(spdx)
                break
    if not ids:  # package metadata: R DESCRIPTION, package.json, Cargo.toml, composer.json
        for meta, rx in (("DESCRIPTION", r"^License:\s*(.+)$"),
                         ("package.json", r'"license"\s*:\s*"([^"]+)"'),
                         ("Cargo.toml", r'^license\s*=\s*"([^"]+)"'),
                         ("composer.json", r'"license"\s*:\s*"([^"]+)"')):
            if meta in top:
                m = re.search(rx, (show(repo, meta) or b"").decode("utf-8", "replace"), re.M)
                if m:
                    ids.append(re.sub(r"\s*\+\s*file LICEN[CS]E$", "", m.group(1).strip()))
                    files.append(meta)
                    break
    return (" OR ".join(ids) if ids else "unknown"), ";".join(files)


# --------------------------------------------------------------------------
# Workbook inspection

ZIP_MAGIC = b"PK\x03\x04"
CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def xml_text(xml: str, tag: str) -> str:
    m = re.search(rf"<(?:\w+:)?{tag}(?:\s[^>]*)?>(.*?)</(?:\w+:)?{tag}\s*>", xml, re.S)
    return html.unescape(m.group(1)).strip() if m else ""


def classify(application: str) -> str:
    a = application.lower()
    if not a:
        return "unknown"
    if "libreoffice" in a:
        return "libreoffice"
    if re.match(r"microsoft (macintosh )?excel", a):
        return "excel"
    return "other"


def inspect(data: bytes) -> tuple[str | None, dict]:
    """(skip reason or None, facts)."""
    if data.startswith(CFB_MAGIC):
        if "EncryptionInfo".encode("utf-16-le") in data:
            return "encrypted", {}
        return "not-zip (OLE2, e.g. a renamed .xls)", {}
    if not data.startswith(ZIP_MAGIC):
        return "not-zip", {}
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        return f"bad-zip: {e}", {}
    if any(i.flag_bits & 0x1 for i in infos):
        return "encrypted (zip)", {}
    names = {i.filename for i in infos}
    if "[Content_Types].xml" not in names:
        return "no [Content_Types].xml", {}
    try:
        bad = zf.testzip()
    except Exception as e:  # noqa: BLE001 - any decompression failure
        return f"corrupt-zip: {e}", {}
    if bad is not None:
        return f"corrupt-zip: CRC of {bad}", {}

    def read(name: str) -> str:
        try:
            return zf.read(name).decode("utf-8", errors="replace")
        except KeyError:
            return ""

    # The workbook part: the officeDocument relationship of the package, its
    # content type from an Override or else the Default of its extension.
    rels = read("_rels/.rels")
    targets = {}
    for m in re.finditer(r"<(?:\w+:)?Relationship\b[^>]*>", rels):
        t = re.search(r'\bType="([^"]+)"', m.group(0))
        g = re.search(r'\bTarget="([^"]+)"', m.group(0))
        if t and g:
            targets[t.group(1).rsplit("/", 1)[-1]] = g.group(1).lstrip("/")
    wb_part = targets.get("officeDocument", "xl/workbook.xml")
    ct = read("[Content_Types].xml")
    overrides, defaults = {}, {}
    for m in re.finditer(r"<(?:\w+:)?(Override|Default)\b[^>]*>", ct):
        key = re.search(r'\b(?:PartName|Extension)="([^"]+)"', m.group(0))
        typ = re.search(r'\bContentType="([^"]+)"', m.group(0))
        if key and typ:
            if m.group(1) == "Override":
                overrides[key.group(1).lstrip("/").lower()] = typ.group(1)
            else:
                defaults[key.group(1).lower()] = typ.group(1)
    wb_type = overrides.get(wb_part.lower()) or defaults.get(wb_part.rsplit(".", 1)[-1].lower(), "")
    kind = MAIN_TYPES.get(wb_type)
    if kind is None or wb_part not in names:
        return f"no SpreadsheetML workbook part ({wb_part}: {wb_type or 'no content type'})", {}

    app = read(targets.get("extended-properties", "docProps/app.xml"))
    application = " ".join(xml_text(app, "Application").split())
    app_version = xml_text(app, "AppVersion")
    claimed = classify(application)
    # Excel writes "\r\n" after the XML declaration of its parts; libraries that
    # put "Microsoft Excel" in app.xml (XlsxWriter, openpyxl, PhpSpreadsheet,
    # ClosedXML, ...) do not, so a claim without the signature is not Excel.
    head = zf.read(wb_part)[:300].removeprefix(b"\xef\xbb\xbf")
    m = re.match(rb"<\?xml[^>]*\?>(\r\n|\n)?", head)
    sig = "no-declaration" if not m else {b"\r\n": "crlf", b"\n": "lf"}.get(m.group(1), "none")
    producer = claimed
    if claimed == "excel" and sig != "crlf":
        producer = "other"
    return None, {"kind": kind, "application": application, "app_version": app_version,
                  "claimed_producer": claimed, "producer": producer, "excel_signature": sig}


# --------------------------------------------------------------------------
# Naming

SAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def stable_name(repo: str, path: str, sha: str, taken: set[str]) -> str:
    ext = PurePosixPath(path).suffix.lower()
    stem = path[: -len(ext)] if ext else path
    name = SAFE.sub("_", repo.replace("/", "+") + "__" + stem.replace("/", "__")).strip("_")
    if len(name) > 180:
        name = name[:150] + "_" + sha[:12]
    if name + ext in taken:
        name += "_" + sha[:12]
    return name + ext


def pick_order(path: str) -> str:
    """A stable spread over a repository: sort by a hash of the path."""
    return hashlib.sha1(path.encode()).hexdigest()


# --------------------------------------------------------------------------


def check_out_dir(out: Path) -> None:
    parent = out
    while not parent.exists():
        parent = parent.parent
    r = subprocess.run(["git", "-C", str(parent), "rev-parse", "--show-toplevel"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return  # not inside a git work tree
    r = subprocess.run(["git", "-C", str(parent), "check-ignore", "-q", str(out.resolve() / "x")])
    if r.returncode != 0:
        sys.exit(f"refusing to write the corpus to {out}: it is not ignored by git "
                 f"(the files must never be committed)")


def gather_repo(repo: Repo, args, seen: dict[str, dict], taken: set[str],
                files_dir: Path, rows: list[dict], skips: list[dict]) -> dict:
    stats = {"listed": 0, "kept": 0, "dup": 0, "skipped": 0, "capped": 0}
    ls_args = ["ls-tree", "-r", "-z", "--full-tree", repo.commit]
    prefixes = [p.strip("/") for p in repo.paths]
    if prefixes and "" not in prefixes:
        ls_args += ["--", *prefixes]
    entries = []
    for rec in git(repo.git_dir, *ls_args).split(b"\0"):
        if not rec:
            continue
        meta, _, path_b = rec.partition(b"\t")
        mode, typ, oid = meta.decode().split()
        path = path_b.decode("utf-8", errors="surrogateescape")
        if typ == "blob" and WORKBOOK_EXT.search(path) and mode != "120000":
            entries.append((path, oid))
    entries.sort(key=lambda e: pick_order(e[0]))
    stats["listed"] = len(entries)
    if not entries:
        return stats

    # One cat-file process per repository; sizes first so big blobs are not read.
    checks = git(repo.git_dir, "cat-file", "--batch-check",
                 data="".join(f"{oid}\n" for _, oid in entries).encode()).decode().splitlines()
    sizes = {}
    for line in checks:
        parts = line.split()
        if len(parts) == 3:
            sizes[parts[0]] = int(parts[2])
    proc = subprocess.Popen(["git", f"--git-dir={repo.git_dir}", "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for path, oid in entries:
            size = sizes.get(oid, -1)

            def skip(reason: str, sha: str = "") -> None:
                stats["skipped"] += 1
                skips.append({"source_repo": repo.name, "commit": repo.commit, "path": path,
                              "sha256": sha, "size": size, "reason": reason})

            if stats["kept"] >= args.max_per_repo:
                stats["capped"] += 1
                continue
            if size < 0:
                skip("blob absent from the mirror (snapshots may omit their largest files)")
                continue
            if size > args.max_bytes:
                skip(f"over {args.max_bytes} bytes")
                continue
            proc.stdin.write(f"{oid}\n".encode())
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            n = int(header[2])
            data = proc.stdout.read(n)
            proc.stdout.read(1)  # trailing newline
            sha = hashlib.sha256(data).hexdigest()
            if sha in seen:
                stats["dup"] += 1
                first = seen[sha]
                first["also_at"] = (first["also_at"] + ";" if first["also_at"] else "") + \
                    f"{repo.name}:{path}"
                continue
            reason, facts = inspect(data)
            if reason:
                seen[sha] = {"also_at": ""}  # identical bytes elsewhere: skipped once
                skip(reason, sha)
                continue
            name = stable_name(repo.name, path, sha, taken)
            taken.add(name)
            dest = files_dir / name
            if not (dest.is_file() and dest.stat().st_size == n and
                    hashlib.sha256(dest.read_bytes()).hexdigest() == sha):
                tmp = dest.with_name(dest.name + ".tmp")
                tmp.write_bytes(data)
                os.replace(tmp, dest)
            row = {"file": f"files/{name}", "source_repo": repo.name, "commit": repo.commit,
                   "path": path, "sha256": sha, "size": n, **facts,
                   "license": repo.license, "license_files": repo.license_files, "also_at": ""}
            seen[sha] = row
            rows.append(row)
            stats["kept"] += 1
    finally:
        proc.stdin.close()
        proc.wait()
    return stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mirrors", nargs="*", metavar="[owner/name=]GITDIR",
                    help="bare git directories to read (name inferred from an owner+name path "
                         "component or the origin URL when not given)")
    ap.add_argument("--out", type=Path, default=Path("target/corpus"),
                    help="corpus directory, must be git-ignored (default: target/corpus)")
    ap.add_argument("--mirror-root", type=Path, action="append",
                    help="discover mirrors under this directory (<owner>+<name>/repo); "
                         "default /work/.mirror when no mirror is given and it exists")
    ap.add_argument("--no-discover", action="store_true", help="do not look under --mirror-root")
    ap.add_argument("--clone", action="store_true",
                    help="clone from GitHub every known source that no mirror provides")
    ap.add_argument("--clone-dir", type=Path, default=Path("target/corpus-src"),
                    help="where clones are kept (default: target/corpus-src)")
    ap.add_argument("--clone-url", default="https://github.com/{repo}.git",
                    help="URL template for clones, {repo} = owner/name, also {owner}, {name} "
                         "(default https://github.com/{repo}.git)")
    ap.add_argument("--refresh", action="store_true", help="re-clone existing clones")
    ap.add_argument("--only", action="append", metavar="OWNER/NAME",
                    help="restrict to these repositories (repeatable)")
    ap.add_argument("--all-paths", action="store_true",
                    help="read every workbook in a known repository, not only its test-data paths")
    ap.add_argument("--max-per-repo", type=int, default=400,
                    help="at most this many kept files per repository (default 400)")
    ap.add_argument("--max-mb", type=float, default=20.0, help="skip larger files (default 20 MB)")
    ap.add_argument("--allow-noncommercial", action="store_true",
                    help="also take repositories under a noncommercial licence")
    ap.add_argument("--nice", type=int, default=10, help="lower own CPU priority by this much")
    args = ap.parse_args()
    args.max_bytes = int(args.max_mb * 1024 * 1024)
    if args.nice:
        os.nice(args.nice)
    started = time.monotonic()

    check_out_dir(args.out)
    files_dir = args.out / "files"
    files_dir.mkdir(parents=True, exist_ok=True)

    # Collect repositories: explicit mirrors, discovered mirrors, clones.
    repos: dict[str, Repo] = {}

    def add(name: str, git_dir: Path, origin: str) -> None:
        if args.only and name not in args.only:
            return
        if name in repos:
            return
        known = SOURCES.get(name)
        paths = [""] if (args.all_paths or not known) else known["paths"]
        repos[name] = Repo(name, git_dir, origin, paths)

    for spec in args.mirrors:
        name, eq, path = spec.partition("=")
        if not eq:
            path, name = spec, ""
        gd = Path(path)
        if not is_git_dir(gd) and is_git_dir(gd / ".git"):
            gd = gd / ".git"
        if not is_git_dir(gd):
            sys.exit(f"not a git directory: {path}")
        name = name or repo_name_from_path(gd) or repo_name_from_remote(gd) or ""
        if not name:
            sys.exit(f"cannot tell the repository of {path}: pass owner/name={path}")
        add(name, gd, "mirror")
    roots = args.mirror_root
    if roots is None and not args.mirrors and Path("/work/.mirror").is_dir():
        roots = [Path("/work/.mirror")]
    if not args.no_discover:
        for root in roots or []:
            for name, gd in discover_mirrors(root):
                add(name, gd, "mirror")
    if args.clone:
        for name, src in SOURCES.items():
            if name in repos or (args.only and name not in args.only):
                continue
            try:
                add(name, clone(name, src["paths"], args.clone_dir, args.refresh, args.clone_url),
                    "clone")
            except subprocess.CalledProcessError as e:
                log(f"clone of {name} failed: {e}")
    if not repos:
        sys.exit("no repositories: pass mirrors, --mirror-root, or --clone")

    seen: dict[str, dict] = {}
    taken: set[str] = set()
    rows: list[dict] = []
    skips: list[dict] = []
    summary = []
    # Known sources first, in table order (so duplicates are credited to the
    # first-listed source), then any other mirror by name.
    order = sorted(repos.values(), key=lambda r: (list(SOURCES).index(r.name)
                                                  if r.name in SOURCES else len(SOURCES), r.name))
    for repo in order:
        t0 = time.monotonic()
        repo.commit = git(repo.git_dir, "rev-parse", "HEAD").decode().strip()
        repo.license, repo.license_files = detect_license(repo)
        if "noncommercial" in repo.license.lower() and not args.allow_noncommercial:
            log(f"{repo.name}: skipped, licence {repo.license} (use --allow-noncommercial)")
            summary.append((repo, None, 0.0))
            continue
        st = gather_repo(repo, args, seen, taken, files_dir, rows, skips)
        dt = time.monotonic() - t0
        summary.append((repo, st, dt))
        log(f"{repo.name} [{repo.origin} {repo.commit[:10]} {repo.license}]: "
            f"{st['listed']} listed, {st['kept']} kept, {st['dup']} duplicates, "
            f"{st['skipped']} skipped, {st['capped']} over the cap ({dt:.1f}s)")

    # Remove files of an earlier run that are no longer in the corpus.
    keep = {PurePosixPath(r["file"]).name for r in rows}
    for f in files_dir.iterdir():
        if f.is_file() and f.name not in keep and (WORKBOOK_EXT.search(f.name) or f.name.endswith(".tmp")):
            f.unlink()

    rows.sort(key=lambda r: r["file"])
    with open(args.out / "manifest.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=MANIFEST_FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    with open(args.out / "skipped.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=SKIP_FIELDS)
        w.writeheader()
        w.writerows(skips)

    # Summary
    by_producer: dict[str, int] = {}
    for r in rows:
        by_producer[r["producer"]] = by_producer.get(r["producer"], 0) + 1
    total = sum(int(r["size"]) for r in rows)
    print(f"{'source':34} {'licence':28} {'kept':>5} {'excel':>5} {'LO':>4} {'other':>5} {'unkn':>4}")
    for repo, st, _ in summary:
        mine = [r for r in rows if r["source_repo"] == repo.name]
        c = {p: sum(1 for r in mine if r["producer"] == p)
             for p in ("excel", "libreoffice", "other", "unknown")}
        print(f"{repo.name:34} {repo.license[:28]:28} {len(mine) if st else 'skip':>5} "
              f"{c['excel']:>5} {c['libreoffice']:>4} {c['other']:>5} {c['unknown']:>4}")
    print(f"files: {len(rows)}  by producer: " +
          ", ".join(f"{k} {v}" for k, v in sorted(by_producer.items())))
    print(f"app.xml says Microsoft Excel but the parts lack Excel's CRLF signature "
          f"(counted as other): "
          f"{sum(1 for r in rows if r['claimed_producer'] == 'excel' and r['producer'] != 'excel')}")
    print(f"total size: {total / 1e6:.1f} MB; skipped {len(skips)} (see skipped.csv); "
          f"time {time.monotonic() - started:.1f}s")
    print(f"manifest: {args.out / 'manifest.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
