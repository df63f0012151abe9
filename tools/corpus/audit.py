#!/usr/bin/env python3
"""Findings a written workbook has that its original did not (issue 26).

Runs openxml-audit (PyPI: the Open XML SDK's schema and semantic checks and
Excel's repair rules, ported to Python) on each original and on the file
sheetd wrote from it, and lists the findings of the written file its
original lacks. A finding is compared by where it is (the part, its
numbers masked, since the writer renumbers sheet parts; the element path,
its positions masked, since a write moves rows) and what it says; the
comparison counts, so a finding the original has twice may appear twice.

Findings about inline strings (`t="inlineStr"` cells, `<is>`) are left
out: the writer's cells are valid, and Excel only moves them to a shared
strings table at its next save.

    # the written files come from the corpus tool:
    cargo run --release --example corpus -- --out target/corpus/written target/corpus/files
    python3 tools/corpus/audit.py target/corpus/files target/corpus/written
    python3 tools/corpus/audit.py --jobs 2 --json new.json ORIGINALS WRITTEN

Exit status 1 when some written file has a new finding, 2 on a usage
error. Needs `pip install openxml-audit` (0.8 was used).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import re
import signal
import sys
from pathlib import Path

WORKBOOK_SUFFIXES = {".xlsx", ".xlsm", ".xltx", ".xltm"}
# A finding that names one of these is about an inline string.
INLINE_STRING = re.compile(r"inlineStr|\bis\b|/is\[|:is\b|<is>")


def validator():
    """One validator per process: building it loads the schemas."""
    global _VALIDATOR
    if _VALIDATOR is None:
        from openxml_audit import OpenXmlValidator

        _VALIDATOR = OpenXmlValidator(max_errors=0, strict=True)
    return _VALIDATOR


_VALIDATOR = None


# Seconds one file's validation may take; a few files take the validator
# far longer (it ran for over half an hour on one drawing).
TIMEOUT = 60


class TimedOut(Exception):
    pass


def on_alarm(_signum, _frame):
    raise TimedOut()


def findings(path: Path) -> list[dict]:
    """Every error-severity finding of one file (warnings are not what
    makes Excel repair a file)."""
    from openxml_audit.errors import ValidationSeverity

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TIMEOUT)
    try:
        result = validator().validate(str(path))
    except TimedOut:
        return [{"part": "", "path": "", "node": "", "id": "timeout", "text": "timed out"}]
    except Exception as error:  # noqa: BLE001 - a crash is a finding too
        return [{"part": "", "path": "", "node": "", "id": "crash", "text": repr(error)}]
    finally:
        signal.alarm(0)
    return [
        {
            "part": e.part_uri or "",
            "path": e.path or "",
            "node": e.node or "",
            "id": e.id or e.error_type.value,
            "text": e.description,
        }
        for e in result.errors
        if e.severity == ValidationSeverity.ERROR
    ]


def key(finding: dict) -> tuple[str, str, str, str]:
    """What a finding is, apart from where the write moved it."""
    part = re.sub(r"\d+", "#", finding["part"])
    path = re.sub(r"\[\d+\]", "[#]", finding["path"])
    # Values quoted in the text may be cell references or row numbers.
    text = re.sub(r"\b[A-Z]{1,3}\d+\b", "A#", finding["text"])
    return (part, path, finding["id"], text)


def timed_out(result: dict) -> bool:
    """Whether the validator ran out of time on the original or the copy
    (the comparison then says nothing)."""
    return any(f["id"] == "timeout" for f in result["new"]) or result.get("timeout", False)


def is_inline_string(finding: dict) -> bool:
    return bool(
        INLINE_STRING.search(finding["node"])
        or INLINE_STRING.search(finding["path"])
        or "inlineStr" in finding["text"]
    )


def new_findings(original: Path, written: Path) -> tuple[int, int, list[dict], bool]:
    """(findings of the original, of the written file, the written file's
    findings its original lacks, whether either validation timed out)."""
    before = findings(original)
    after = findings(written)
    slow = any(f["id"] == "timeout" for f in before + after)
    left = collections.Counter(key(f) for f in before)
    new = []
    for finding in after:
        k = key(finding)
        if left[k] > 0:
            left[k] -= 1
        elif not is_inline_string(finding):
            new.append(finding)
    return len(before), len(after), new, slow


def pairs(originals: Path, written: Path) -> list[tuple[Path, Path]]:
    """Each written workbook with its original, matched by file name."""
    found = []
    for path in sorted(written.iterdir()):
        if path.suffix.lower() in WORKBOOK_SUFFIXES and (originals / path.name).is_file():
            found.append((originals / path.name, path))
    return found


def set_timeout(seconds: int) -> None:
    global TIMEOUT
    TIMEOUT = seconds


def audit_pair(pair: tuple[Path, Path], progress: bool = False) -> dict:
    original, written = pair
    if progress:
        print(f"auditing {written.name}", file=sys.stderr, flush=True)
    before, after, new, slow = new_findings(original, written)
    return {"file": written.name, "original": before, "written": after, "new": new, "timeout": slow}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("originals", type=Path, help="directory of the original workbooks")
    parser.add_argument("written", type=Path, help="directory of the files sheetd wrote")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--json", type=Path, help="write every file's result here")
    parser.add_argument("--show", type=int, default=3, help="findings shown per file")
    parser.add_argument(
        "--timeout", type=int, default=TIMEOUT, help=f"seconds a file may take (default {TIMEOUT})"
    )
    parser.add_argument("--progress", action="store_true", help="name each file as it starts")
    args = parser.parse_args()
    set_timeout(args.timeout)
    if not args.originals.is_dir() or not args.written.is_dir():
        parser.error("both arguments must be directories")
    todo = pairs(args.originals, args.written)
    if args.jobs > 1:
        with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(audit_pair, todo, chunksize=4))
    else:
        results = [audit_pair(pair, args.progress) for pair in todo]
    worse = [r for r in results if r["new"] and not timed_out(r)]
    slow = [r["file"] for r in results if timed_out(r)]
    by_kind = collections.Counter()
    for result in worse:
        for finding in result["new"]:
            by_kind[(finding["part"].rsplit("/", 1)[-1], finding["id"])] += 1
    for result in worse:
        print(f"{result['file']}: {len(result['new'])} new finding(s)")
        for finding in result["new"][: args.show]:
            print(f"    {finding['part']} {finding['path']}: {finding['text'][:300]}")
    print()
    for (part, kind), count in by_kind.most_common():
        print(f"{count:6}  {part}  {kind}")
    clean = sum(1 for r in results if not r["original"])
    if slow:
        print(f"not audited, the validator ran past {TIMEOUT} s: {', '.join(slow)}")
    print(
        f"{len(results) - len(slow)} written workbooks audited ({clean} originals without "
        f"findings): {len(worse)} gain a finding their original did not have"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
