#!/usr/bin/env python3
"""Compare sheetd's recalculated formula results with LibreOffice's.

For a sample of the corpus workbooks whose formula results sheetd's engine
recomputed on the corpus write (examples/corpus), LibreOffice recalculates
the workbook sheetd wrote (tools/libreoffice/recalculate.sh: a hard
recalculation, saved as .xlsx), and every formula cell's cached value in
sheetd's file is compared with LibreOffice's.

    cargo run --release --example corpus -- --out target/corpus/written-calc \
        --tsv target/corpus/engine-files.tsv --cells target/corpus/engine-cells.tsv \
        target/corpus/files
    python3 tools/corpus/compare_recalc.py                # 40 files, about 2 min
    python3 tools/corpus/compare_recalc.py --sample 80 --examples 20
    python3 tools/corpus/compare_recalc.py --only NAME.xlsx --only OTHER.xlsx

Needs openpyxl (pip install openpyxl), LibreOffice Calc and python3-uno
(apt-get install -y libreoffice-calc-nogui python3-uno).

The sample: the written workbooks with at least one formula result the
engine recomputed (`recomputed` > 0 in engine-files.tsv), taken in turn from
each source repository (the file name up to `__`), in an order fixed by a
hash of the name, so that a run picks the same files again and every
source gets its share.

Each formula cell of sheetd's file (openpyxl, formulas and data_only) is
compared at the same place with the value LibreOffice cached. Dates and
times are compared as serial numbers, numbers to 1e-9 relative, an empty
text and no value are the same. A cell sheetd wrote without a value (a
stale formula, `--cells` state `stale`) is counted apart, not compared.
The engine's state of each cell comes from engine-cells.tsv: recomputed
(the recalculation changed its cached result), filled (filled down into
the inserted row), kept (the file's cached result kept), or none (the
engine's result agreed with the file's).

Output: the figures on stdout; under --work (default
target/corpus/recalc-compare): lo/NAME (LibreOffice's files, reused unless
--refresh), compared.tsv (every cell compared) and disagreements.tsv.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import math
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

try:
    import openpyxl
    from openpyxl.utils.datetime import to_excel
except ImportError:  # pragma: no cover
    sys.exit("compare_recalc.py needs openpyxl: pip install openpyxl")

ROOT = Path(__file__).resolve().parents[2]
RECALCULATE = ROOT / "tools" / "libreoffice" / "recalculate.sh"
REL = 1e-9

csv.field_size_limit(sys.maxsize)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--written", default="target/corpus/written-calc")
    parser.add_argument("--files-tsv", default="target/corpus/engine-files.tsv")
    parser.add_argument("--cells-tsv", default="target/corpus/engine-cells.tsv")
    parser.add_argument("--work", default="target/corpus/recalc-compare")
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--only", action="append", default=[], help="a file name (repeatable)")
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--refresh", action="store_true", help="run LibreOffice again")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per LibreOffice run")
    args = parser.parse_args()

    written = Path(args.written)
    work = Path(args.work)
    (work / "lo").mkdir(parents=True, exist_ok=True)
    files = read_tsv(Path(args.files_tsv))
    states = cell_states(Path(args.cells_tsv))
    picked = args.only or sample(files, args.sample)
    print(f"sample: {len(picked)} workbooks from "
          f"{len({source(n) for n in picked})} sources")

    compared: list[dict] = []
    problems: list[tuple[str, str]] = []
    started = time.monotonic()
    for name in picked:
        mine = written / name
        theirs = work / "lo" / name
        if not mine.exists():
            problems.append((name, "sheetd's written file is missing"))
            continue
        if args.refresh or not theirs.exists():
            run = subprocess.run(
                [str(RECALCULATE), str(mine), str(theirs)],
                env={**os.environ, "RECALC_TIMEOUT": str(args.timeout)},
                capture_output=True, text=True)
            if run.returncode != 0:
                problems.append((name, "LibreOffice: " + (run.stderr.strip().splitlines() or ["failed"])[-1]))
                continue
        try:
            compared.extend(compare(name, mine, theirs, states.get(name, {})))
        except Exception as e:  # a file openpyxl cannot read
            problems.append((name, f"{type(e).__name__}: {e}"))
    elapsed = time.monotonic() - started

    write_tsv(work / "compared.tsv", compared)
    disagree = [c for c in compared if c["verdict"] == "differs"]
    write_tsv(work / "disagreements.tsv", disagree)
    report(compared, problems, args.examples, elapsed, work)
    return 0


def read_tsv(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def write_tsv(path: Path, rows: list[dict]) -> None:
    fields = ["file", "cell", "state", "formula", "sheetd", "libreoffice", "original",
              "verdict", "which", "functions"]
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, fields, delimiter="\t", extrasaction="ignore",
                             quoting=csv.QUOTE_NONE, escapechar="\\")
        out.writeheader()
        for row in rows:
            out.writerow({k: str(row.get(k, "")).replace("\t", " ").replace("\n", " ")
                          for k in fields})


def cell_states(path: Path) -> dict[str, dict[tuple[str, str], tuple[str, object]]]:
    """file name -> (sheet, A1) -> the engine's state of the cell and the
    cached result the original file had there."""
    states: dict[str, dict[tuple[str, str], tuple[str, object]]] = defaultdict(dict)
    if not path.exists():
        return states
    for row in read_tsv(path):
        if row.get("outcome") not in (None, "written"):
            continue
        sheet, _, cell = row["cell"].rpartition("!")
        original = MISSING if row["original"] == "-" else parse_value(unescape(row["original"]))
        states[row["file"]][(unescape(sheet), cell)] = (row["state"], original)
    return states


MISSING = object()


def parse_value(text: str):
    """A value as examples/corpus writes it (`n:1.5`, `s:text`, …) as `normal` gives it."""
    if text == "":
        return None
    kind, _, rest = text.partition(":")
    if kind in ("n", "d"):
        return float(rest)
    if kind == "b":
        return rest == "true"
    if kind == "s":
        return rest or None
    return rest  # an error's text


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n", "r": "\r"}.get(m[1], m[1]), text)


def source(name: str) -> str:
    return name.split("__", 1)[0]


def sample(files: list[dict], n: int) -> list[str]:
    """Round robin over the sources, in a hash order within each."""
    by_source: dict[str, list[str]] = defaultdict(list)
    for row in files:
        if row["outcome"] == "written" and int(row["recomputed"]) > 0:
            name = Path(row["file"]).name
            by_source[source(name)].append(name)
    for names in by_source.values():
        names.sort(key=lambda s: hashlib.sha1(s.encode()).hexdigest())
    picked: list[str] = []
    queues = [by_source[s] for s in sorted(by_source)]
    while len(picked) < n and any(queues):
        for queue in queues:
            if queue and len(picked) < n:
                picked.append(queue.pop(0))
    return picked


def formula_text(value) -> str | None:
    if isinstance(value, str) and value.startswith("="):
        return value[1:]
    text = getattr(value, "text", None)  # ArrayFormula
    if isinstance(text, str):
        return text.lstrip("=")
    if type(value).__name__ == "DataTableFormula":
        return "TABLE(" + ",".join(str(getattr(value, a, "")) for a in ("r1", "r2")) + ")"
    return None


def normal(value, epoch):
    """A cached value as something comparable: a float, a bool, a str, or None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return float(to_excel(value, epoch))
    if isinstance(value, dt.timedelta):
        return value.total_seconds() / 86400
    # openpyxl leaves the `_x000D_` escapes of a formula's text result as
    # they are; sheetd's reader (and Excel) read them as the character.
    return ESCAPE.sub(lambda m: chr(int(m[1], 16)), str(value))


ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")


VOLATILE = {"RAND", "RANDBETWEEN", "RANDARRAY", "NOW", "TODAY"}


def equal(a, b) -> bool:
    return same(a, b) or (a is None and b is None)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and not isinstance(a, bool) and not isinstance(b, bool):
        if math.isnan(a) or math.isnan(b):
            return False
        return a == b or abs(a - b) <= REL * max(abs(a), abs(b))
    return type(a) is type(b) and a == b


FUNCTION = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\(")
STRING = re.compile(r'"(?:[^"]|"")*"')


def functions(formula: str) -> list[str]:
    names = []
    for name in FUNCTION.findall(STRING.sub('""', formula)):
        upper = name.upper()
        for prefix in ("_XLFN._XLWS.", "_XLFN.", "_XLWS."):
            if upper.startswith(prefix):
                upper = upper[len(prefix):]
        if upper not in names:
            names.append(upper)
    return names


def compare(name: str, mine: Path, theirs: Path, states: dict) -> list[dict]:
    formulas = openpyxl.load_workbook(mine)
    values = openpyxl.load_workbook(mine, data_only=True)
    lo = openpyxl.load_workbook(theirs, data_only=True)
    rows = []
    for sheet in formulas.worksheets:
        if sheet.title not in lo.sheetnames:
            continue
        mine_values = values[sheet.title]
        lo_values = lo[sheet.title]
        for row in sheet.iter_rows():
            for cell in row:
                formula = formula_text(cell.value)
                if formula is None:
                    continue
                at = cell.coordinate
                state, original = states.get((sheet.title, at), ("none", MISSING))
                a = normal(mine_values[at].value, values.epoch)
                b = normal(lo_values[at].value, lo.epoch)
                if state == "none":
                    original = a  # the engine agreed with the file
                called = functions(formula)
                if state == "stale":
                    verdict = "stale"
                elif VOLATILE & set(called):
                    verdict = "volatile"
                elif equal(a, b):
                    verdict = "equal"
                else:
                    verdict = "differs"
                if verdict != "differs":
                    which = ""
                elif original is MISSING:
                    which = "no original"
                elif equal(original, b):
                    which = "LibreOffice = file"
                elif equal(original, a):
                    which = "sheetd = file"
                else:
                    which = "all differ"
                rows.append({
                    "file": name, "cell": f"{sheet.title}!{at}", "state": state,
                    "formula": formula, "sheetd": show(a), "libreoffice": show(b),
                    "original": "(none)" if original is MISSING else show(original),
                    "verdict": verdict, "which": which,
                    "functions": "+".join(called) or "(none)",
                })
    return rows


def show(value) -> str:
    if value is None:
        return "(empty)"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return repr(value)
    return repr(value)


def report(compared, problems, examples, elapsed, work) -> None:
    volatile = [c for c in compared if c["verdict"] == "volatile"]
    done = [c for c in compared if c["verdict"] not in ("stale", "volatile")]
    equal = [c for c in done if c["verdict"] == "equal"]
    differs = [c for c in done if c["verdict"] == "differs"]
    files = {c["file"] for c in compared}
    print(f"workbooks compared: {len(files)}; not compared: {len(problems)}")
    for name, why in problems:
        print(f"  {name}: {why}")
    print(f"formula cells: {len(compared)}; not compared: stale in sheetd's file (no value) "
          f"{sum(c['verdict'] == 'stale' for c in compared)}, volatile (RAND, NOW, …) {len(volatile)}")
    print(f"cells compared: {len(done)}; equal: {len(equal)} "
          f"({100 * len(equal) / max(1, len(done)):.2f}%); differ: {len(differs)} "
          f"in {len({c['file'] for c in differs})} workbooks")
    print("\nby the engine's state of the cell (compared / equal / differ):")
    for state in ("recomputed", "filled", "none", "kept"):
        of = [c for c in done if c["state"] == state]
        if of:
            eq = sum(c["verdict"] == "equal" for c in of)
            print(f"  {state:<11} {len(of):>7} {eq:>7} {len(of) - eq:>7}")
    print("\ndiffering cells, by which of the three agree (the file's original cached result,"
          " sheetd's, LibreOffice's):")
    for which in ("LibreOffice = file", "sheetd = file", "all differ", "no original"):
        of = [c for c in differs if c["which"] == which]
        by_state = Counter(c["state"] for c in of)
        print(f"  {which:<20} {len(of):>6}  " + ", ".join(f"{k} {v}" for k, v in sorted(by_state.items())))
    lo_failed = [c for c in differs if is_lo_failure(c["libreoffice"])]
    print(f"\ndiffering cells where LibreOffice gives an error sheetd does not "
          f"(#NAME?, Err:5xx, …): {len(lo_failed)}")
    for title, of in (
        ("differing cells by function (a cell counts under each function it calls)", differs),
        ("of which sheetd departs from the file and LibreOffice agrees with the file",
         [c for c in differs if c["which"] == "LibreOffice = file"]),
    ):
        print(f"\n{title}:")
        by_function = Counter()
        files_by_function = defaultdict(set)
        for c in of:
            for f in c["functions"].split("+"):
                by_function[f] += 1
                files_by_function[f].add(c["file"])
        for f, n in by_function.most_common():
            print(f"  {f:<24} {n:>6} cells in {len(files_by_function[f]):>3} workbooks")
    print("\ndiffering cells by the set of functions they call:")
    for f, n in Counter(c["functions"] for c in differs).most_common(25):
        print(f"  {n:>6}  {f}")
    print(f"\n{examples} examples (where sheetd departs from the file first, then one per set"
          " of functions):")
    for c in pick_examples(differs, examples):
        print(f"  {c['file']}  {c['cell']}  [{c['state']}; {c['which']}]\n"
              f"      ={c['formula'][:160]}\n"
              f"      sheetd {c['sheetd'][:60]}  LibreOffice {c['libreoffice'][:60]}"
              f"  file {c['original'][:60]}")
    print(f"\nLibreOffice and comparison took {elapsed:.0f} s; lists in {work}/compared.tsv "
          f"and {work}/disagreements.tsv")


def is_lo_failure(text: str) -> bool:
    return text.startswith(("'#NAME?", "'Err:", "'#N/IMPL"))


def pick_examples(differs: list[dict], n: int) -> list[dict]:
    """Where sheetd departs from the file first, then different function
    sets and workbooks."""
    order = {"LibreOffice = file": 0, "all differ": 1}
    differs = sorted(differs, key=lambda c: order.get(c["which"], 2))
    chosen, seen_sets, seen_files = [], set(), set()
    for c in differs:
        if c["functions"] not in seen_sets and c["file"] not in seen_files:
            chosen.append(c)
            seen_sets.add(c["functions"])
            seen_files.add(c["file"])
    for c in differs:
        if c["functions"] not in seen_sets:
            chosen.append(c)
            seen_sets.add(c["functions"])
    for c in differs:
        if c not in chosen:
            chosen.append(c)
    return chosen[:n]


if __name__ == "__main__":
    sys.exit(main())
