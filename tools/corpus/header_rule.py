#!/usr/bin/env python3
"""Prototype of contract 11.1's header rule, measured against hand labels.

Reads tools/corpus/header_labels.tsv (see README, "Header labels"), loads the
first SCAN_ROWS rows of each labelled sheet from the corpus (values only,
openpyxl read-only, cached values of formulas), and compares three rules with
the labels, on the dev and the test part separately:

  today    the first non-empty row (the header rule before issue 25)
  minimum  11.1's minimum: rows holding one cell are skipped while a later row
           holds two or more; a sheet whose rows each hold one cell uses its
           first non-empty row
  proposed the rule below (`proposed`), described in prose in the README

A label `none` (the sheet has no header row: data from its first row, or not
a table) agrees with a rule when the rule picks the row 11.1's minimum picks,
i.e. the rule does not invent a header below where the contract's fallback
puts it. The "header sheets only" figures leave the `none` labels out.

Run from the repository root:
  python3 tools/corpus/header_rule.py [--corpus DIR] [--show dev|test|all]
--show lists the disagreements of that part (default: test).
"""
import argparse
import csv
import math
import os
import sys
import warnings
from collections import defaultdict

SCAN_ROWS = 50
ERRORS = {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A",
          "#GETTING_DATA", "#SPILL!", "#CALC!", "#FIELD!", "#BLOCKED!",
          "#UNKNOWN!", "#CONNECT!", "#BUSY!"}


def default_corpus():
    for c in ("target/corpus", "/work/corpus/target/corpus"):
        if os.path.exists(os.path.join(c, "manifest.csv")):
            return c
    return "target/corpus"


def kind(v):
    """The cell kinds the Rust grid has: empty, text, number, date, bool, error."""
    import datetime
    if v is None:
        return None
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return None
        return "error" if s in ERRORS else "text"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
        return "date"
    return "text"


def load_grid(path, sheet):
    """[(row number, [kind of each non-empty cell, left to right])] for the
    non-empty rows among the first SCAN_ROWS rows."""
    import openpyxl
    wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        ws = wb[sheet]
        rows = defaultdict(dict)
        for row in ws.iter_rows(max_row=SCAN_ROWS):
            for c in row:
                k = kind(getattr(c, "value", None))
                r, col = getattr(c, "row", None), getattr(c, "column", None)
                if k and r is not None and col is not None:
                    rows[r][col] = k
        return [(r, [rows[r][c] for c in sorted(rows[r])]) for r in sorted(rows)]
    finally:
        wb.close()


# ---- the rules: each takes the grid above and returns a row number or None

def today(grid):
    return grid[0][0] if grid else None


def minimum(grid):
    """11.1's minimum: skip rows holding one cell while a later row holds two
    or more (titles, notes); rows each holding one cell: the first row."""
    for r, cells in grid:
        if len(cells) >= 2:
            return r
    return grid[0][0] if grid else None


def proposed(grid):
    if not grid:
        return None
    width = {r: len(c) for r, c in grid}
    alltext = {r: all(k == "text" for k in c) for r, c in grid}
    w = max(width.values())
    need = max(2, math.ceil(2 * w / 3))
    # 1. the header: the first all-text row holding at least 2/3 as many cells
    #    as the fullest row (and at least 2)
    h = next((i for i, (r, _) in enumerate(grid) if alltext[r] and width[r] >= need), None)
    if h is None:
        return minimum(grid)
    row = grid[h][0]
    # 2. a row above it holding a number/date/bool/error and at least as many
    #    cells: the sheet starts with data, the contract's fallback applies
    for r, _ in grid[:h]:
        if not alltext[r] and width[r] >= width[row]:
            return minimum(grid)
    return row


RULES = [("today", today), ("minimum", minimum), ("proposed", proposed)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=default_corpus())
    ap.add_argument("--labels", default=os.path.join(os.path.dirname(__file__), "header_labels.tsv"))
    ap.add_argument("--show", default="test", choices=["dev", "test", "all", "none"])
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    with open(args.labels, newline="") as f:
        labels = list(csv.DictReader(f, delimiter="\t"))

    # counts[set][rule] = [agree, total, agree_header_only, total_header_only]
    counts = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0]))
    misses = []
    unreadable = 0
    for lab in labels:
        path = os.path.join(args.corpus, "files", lab["file"])
        try:
            grid = load_grid(path, lab["sheet"])
        except Exception as e:  # noqa: BLE001 - counted and reported
            unreadable += 1
            print(f"unreadable: {lab['file']} !{lab['sheet']}: {e!r}"[:200], file=sys.stderr)
            continue
        fallback = minimum(grid)
        want = fallback if lab["row"] == "none" else int(lab["row"])
        for name, rule in RULES:
            got = rule(grid)
            c = counts[lab["set"]][name]
            c[1] += 1
            c[0] += got == want
            if lab["row"] != "none":
                c[3] += 1
                c[2] += got == want
            if name == "proposed" and got != want:
                misses.append((lab, got, want))

    def pct(a, b):
        return f"{a}/{b} = {100 * a / b:.1f}%" if b else "-"

    print(f"{'set':5} {'rule':9} {'all labelled sheets':>22}   {'header sheets only':>22}")
    for s in ("dev", "test"):
        for name, _ in RULES:
            a, t, ah, th = counts[s][name]
            print(f"{s:5} {name:9} {pct(a, t):>22}   {pct(ah, th):>22}")
    if unreadable:
        print(f"{unreadable} labelled sheets unreadable")
    if args.show != "none":
        print(f"\ndisagreements of the proposed rule ({args.show}):")
        for lab, got, want in misses:
            if args.show in ("all", lab["set"]):
                print(f"  [{lab['set']}] {lab['file']} !{lab['sheet']}: label {lab['row']}"
                      f"{' (=' + str(want) + ')' if lab['row'] == 'none' else ''}, rule {got}"
                      f" -- {lab['why']}")


if __name__ == "__main__":
    main()
