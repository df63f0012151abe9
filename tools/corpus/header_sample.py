#!/usr/bin/env python3
"""Draw a deterministic sample of corpus sheets for labelling header rows.

Issue 25 / contract 11.1 ("Header rule for other sheets"). For each source
repository of the corpus, its workbooks are taken in the order of a stable
hash of the corpus file name; of each workbook at most PER_BOOK worksheets are
taken, in the order of a stable hash of file name + sheet name, keeping only
worksheets with at least 2 non-empty rows among their first SCAN_ROWS rows and
leaving out sheets that hold exactly one table (11.1 reads those through the
table, the header rule does not apply to them). A repository gives at most
PER_REPO sheets, so no repository dominates.

Output (not committed; target/ is ignored):
  target/header-sample.txt   for a person to read and label: per sheet its
                             first DUMP_ROWS non-empty rows as `A:value` pairs
                             and the merged ranges touching them
  target/header-sample.tsv   the sample itself: file, source_repo, path, sheet,
                             application

Run from the repository root:
  python3 tools/corpus/header_sample.py [--corpus target/corpus] [--out target]
The corpus defaults to target/corpus, else /work/corpus/target/corpus.
"""
import argparse
import csv
import hashlib
import os
import posixpath
import re
import sys
import zipfile
from collections import defaultdict

PER_REPO = 25
PER_BOOK = 2
SCAN_ROWS = 50
DUMP_ROWS = 12
CELL_CHARS = 28
ROW_CELLS = 14


def stable_hash(*parts):
    return hashlib.sha1("\0".join(parts).encode("utf-8")).hexdigest()


def default_corpus():
    for c in ("target/corpus", "/work/corpus/target/corpus"):
        if os.path.exists(os.path.join(c, "manifest.csv")):
            return c
    return "target/corpus"


def col_letter(n):  # 1-based
    s = ""
    while n:
        n, r = divmod(n - 1, 26)
        s = chr(65 + r) + s
    return s


def is_empty(v):
    return v is None or (isinstance(v, str) and v.strip() == "")


def sheet_parts(path):
    """Sheet name -> (merged ranges, number of tables), read from the package
    (openpyxl's read-only mode gives neither)."""
    out = {}
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        wb = z.read("xl/workbook.xml").decode("utf-8", "replace")
        rels = z.read("xl/_rels/workbook.xml.rels").decode("utf-8", "replace")
        target = {}
        for m in re.finditer(r"<(?:\w+:)?Relationship\b([^>]*)>", rels):
            a = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            if "Id" in a and "Target" in a:
                t = a["Target"]
                t = t.lstrip("/") if t.startswith("/") else posixpath.normpath("xl/" + t)
                target[a["Id"]] = t
        for m in re.finditer(r"<(?:\w+:)?sheet\b([^>]*)/?>", wb):
            attrs = m.group(1)
            name = re.search(r'\bname="([^"]*)"', attrs)
            rid = re.search(r'\br:id="([^"]*)"|\b\w+:id="([^"]*)"', attrs)
            if not name or not rid:
                continue
            name = unescape(name.group(1))
            part = target.get(rid.group(1) or rid.group(2))
            merged, tables = [], 0
            if part and part in names:
                xml = z.read(part).decode("utf-8", "replace")
                merged = re.findall(r'<(?:\w+:)?mergeCell\b[^>]*\bref="([^"]+)"', xml)
                relp = posixpath.join(posixpath.dirname(part), "_rels",
                                      posixpath.basename(part) + ".rels")
                if relp in names:
                    tables = z.read(relp).decode("utf-8", "replace").count("relationships/table\"")
            out[name] = (merged, tables)
    return out


def unescape(s):
    return (s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
             .replace("&apos;", "'").replace("&amp;", "&"))


def read_rows(ws, limit=SCAN_ROWS):
    """The first `limit` sheet rows as {row number: {col number: value}} of
    non-empty cells only."""
    rows = {}
    for row in ws.iter_rows(max_row=limit):
        for c in row:
            v = getattr(c, "value", None)
            if is_empty(v):
                continue
            r, col = getattr(c, "row", None), getattr(c, "column", None)
            if r is None or col is None:
                continue
            rows.setdefault(r, {})[col] = v
    return rows


def ref_rows(ref):
    m = re.match(r"\$?([A-Z]+)\$?(\d+)(?::\$?([A-Z]+)\$?(\d+))?$", ref)
    if not m:
        return None
    r1 = int(m.group(2))
    r2 = int(m.group(4) or r1)
    return r1, r2


def fmt_value(v):
    import datetime
    if isinstance(v, datetime.datetime):
        s = "#" + (v.date().isoformat() if v.time() == datetime.time() else v.isoformat(sep=" "))
    elif isinstance(v, (datetime.date, datetime.time)):
        s = "#" + v.isoformat()
    elif isinstance(v, bool):
        s = "?" + str(v).upper()
    elif isinstance(v, (int, float)):
        s = "=" + (repr(v) if not float(v).is_integer() else str(int(v)))
    else:
        s = '"' + str(v).replace("\n", "\\n") + '"'
    return s if len(s) <= CELL_CHARS else s[:CELL_CHARS - 1] + "…"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=default_corpus())
    ap.add_argument("--out", default="target")
    args = ap.parse_args()
    import openpyxl
    import warnings
    warnings.filterwarnings("ignore")

    with open(os.path.join(args.corpus, "manifest.csv"), newline="") as f:
        manifest = list(csv.DictReader(f))
    by_repo = defaultdict(list)
    for m in manifest:
        by_repo[m["source_repo"]].append(m)

    failed, picked = [], []
    for repo in sorted(by_repo):
        books = sorted(by_repo[repo], key=lambda m: stable_hash(os.path.basename(m["file"])))
        n = 0
        for m in books:
            if n >= PER_REPO:
                break
            fname = os.path.basename(m["file"])
            path = os.path.join(args.corpus, m["file"])
            try:
                parts = sheet_parts(path)
            except Exception:  # noqa: BLE001 - merged ranges are only a help
                parts = {}
            try:
                wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
            except Exception as e:  # noqa: BLE001 - any unreadable workbook is skipped
                failed.append((fname, repr(e)[:120]))
                continue
            try:
                names = [ws.title for ws in wb.worksheets]
                names.sort(key=lambda s: stable_hash(fname, s))
                k = 0
                for sname in names:
                    if k >= PER_BOOK or n >= PER_REPO:
                        break
                    merged, tables = parts.get(sname, ([], 0))
                    if tables == 1:
                        continue
                    try:
                        rows = read_rows(wb[sname])
                    except Exception as e:  # noqa: BLE001
                        failed.append((fname + "!" + sname, repr(e)[:120]))
                        continue
                    if len(rows) < 2:
                        continue
                    picked.append((m, sname, rows, merged))
                    n += 1
                    k += 1
            finally:
                wb.close()
        print(f"{repo}: {n} sheets", file=sys.stderr)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "header-sample.tsv"), "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["file", "source_repo", "path", "sheet", "application"])
        for m, sname, _, _ in picked:
            w.writerow([os.path.basename(m["file"]), m["source_repo"], m["path"], sname,
                        m["application"]])
    with open(os.path.join(args.out, "header-sample.txt"), "w") as f:
        for i, (m, sname, rows, merged) in enumerate(picked, 1):
            f.write(f"=== #{i} {os.path.basename(m['file'])} !{sname}\n")
            f.write(f"    repo {m['source_repo']}  path {m['path']}  app {m['application'] or '?'}\n")
            shown = sorted(rows)[:DUMP_ROWS]
            for r in shown:
                cells = sorted(rows[r].items())
                txt = " ".join(f"{col_letter(c)}:{fmt_value(v)}" for c, v in cells[:ROW_CELLS])
                if len(cells) > ROW_CELLS:
                    txt += f" …+{len(cells) - ROW_CELLS} cells"
                f.write(f"  {r:>4} | {txt}\n")
            more = len(rows) - len(shown)
            if more:
                f.write(f"       ({more} more non-empty rows in the first {SCAN_ROWS})\n")
            last = shown[-1]
            mm = [ref for ref in merged if (rr := ref_rows(ref)) and rr[0] <= last]
            if mm:
                f.write(f"    merged: {' '.join(mm[:20])}{' …' if len(mm) > 20 else ''}\n")
            f.write("\n")
    print(f"{len(picked)} sheets, {len(failed)} unreadable", file=sys.stderr)
    for fn, e in failed:
        print(f"  unreadable: {fn}: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
