#!/usr/bin/env python3
"""Check that recalculate.sh really recomputes formulas.

    python3 tools/libreoffice/selftest.py

Needs python3 with openpyxl (to read cached values) and what recalculate.sh
needs.  Uses the committed fixtures fixtures/formulas/{libreoffice,openpyxl}/
orders.xlsx; writes only to a temporary directory.

1. stale-input: a copy of the LibreOffice fixture (cached values everywhere,
   no fullCalcOnLoad) whose Orders!C2 (qty) is changed from 10 to 30 by
   editing the sheet XML inside the zip; every cached formula value stays
   the old one (Orders!D2 = 15, Summary!B2 = 122, ...).  After
   recalculate.sh the cached values must be the new ones (45, 152, ...).
2. stale-cache: a copy of the openpyxl fixture (fullCalcOnLoad="1") with a
   wrong cached value 999 put into Orders!D2 (formula B2*C2).  After
   recalculate.sh it must be 15 again, and Summary!B2 must be 122.
   Both run at the same time, as two recalculate.sh processes.
3. control: case 1 through a plain `soffice --convert-to xlsx` with a fresh
   profile (LibreOffice's defaults).  It is expected to keep the stale
   values, which shows that case 1 can tell a recalculation from a plain
   load and save; if it does not, a warning is printed.
4. bad-input: a file that is not a workbook must make recalculate.sh exit 1
   with a message and leave no output file.

Exit status 0 when cases 1, 2 and 4 pass, 1 otherwise.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from openpyxl import load_workbook

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "libreoffice" / "recalculate.sh"
LO_ORDERS = ROOT / "fixtures" / "formulas" / "libreoffice" / "orders.xlsx"
OPENPYXL_ORDERS = ROOT / "fixtures" / "formulas" / "openpyxl" / "orders.xlsx"

# Cached values after Orders!C2 becomes 30: D2 = 1.5 * 30; the totals grow
# by 30; one more order is over 20; the tax is 20 % of 152.
AFTER_EDIT = {("Orders", "D2"): 45, ("Summary", "B2"): 152, ("Summary", "B6"): 3,
              ("Summary", "B10"): 30.4, ("Summary", "B5"): 40}
BEFORE_EDIT = {("Orders", "D2"): 15, ("Summary", "B2"): 122, ("Summary", "B6"): 2,
               ("Summary", "B10"): 24.4, ("Summary", "B5"): 40}
ORIGINAL = {("Orders", "D2"): 15, ("Summary", "B2"): 122}


def edit_part(src: Path, dst: Path, part: str, pattern: str, replacement: str) -> None:
    """Copy a zip, replacing exactly one match of `pattern` in `part`.
    Every entry gets a fresh ZipInfo (reusing the source's would carry its
    CRC and sizes over)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == part:
                text, n = re.subn(pattern, replacement, data.decode("utf-8"))
                if n != 1:
                    raise SystemExit(f"selftest: {pattern!r} matched {n} times in {src}:{part}")
                data = text.encode("utf-8")
            zout.writestr(info.filename, data)


def sheet_part(path: Path, sheet: str) -> str:
    """The zip entry of a sheet, found through workbook.xml and its rels."""
    with zipfile.ZipFile(path) as z:
        workbook = z.read("xl/workbook.xml").decode()
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
    rid = re.search(rf'<sheet\b[^>]*\bname="{sheet}"[^>]*\br:id="([^"]+)"', workbook).group(1)
    target = re.search(rf'<Relationship\b[^>]*\bId="{rid}"[^>]*\bTarget="([^"]+)"', rels)
    if target is None:  # attribute order differs between producers
        target = re.search(rf'<Relationship\b[^>]*\bTarget="([^"]+)"[^>]*\bId="{rid}"', rels)
    name = target.group(1)
    return name.lstrip("/") if name.startswith("/") else f"xl/{name}"


def cached(path: Path, cells) -> dict:
    wb = load_workbook(path, data_only=True)
    return {key: wb[key[0]][key[1]].value for key in cells}


def compare(label: str, path: Path, want: dict) -> bool:
    got = cached(path, want)
    bad = {k: (got[k], v) for k, v in want.items()
           if not (isinstance(got[k], (int, float)) and abs(got[k] - v) < 1e-9)}
    for (sheet, ref), (g, w) in bad.items():
        print(f"  {label}: {sheet}!{ref} = {g!r}, expected {w!r}")
    return not bad


def main() -> int:
    ok = True
    with tempfile.TemporaryDirectory(prefix="sheetd-selftest.") as tmp:
        tmp = Path(tmp)

        # Case 1: an input value changed, cached results left as they were.
        stale_input = tmp / "stale_input.xlsx"
        edit_part(LO_ORDERS, stale_input, sheet_part(LO_ORDERS, "Orders"),
                  r'(<c r="C2"[^>]*><v>)10(</v>)', r"\g<1>30\g<2>")
        assert compare("stale-input before", stale_input, BEFORE_EDIT)

        # Case 2: a wrong cached value on a formula.
        stale_cache = tmp / "stale_cache.xlsx"
        edit_part(OPENPYXL_ORDERS, stale_cache, sheet_part(OPENPYXL_ORDERS, "Orders"),
                  r"(<c r=\"D2\"[^>]*><f>B2\*C2</f>)<v\s*/>", r"\g<1><v>999</v>")
        assert cached(stale_cache, [("Orders", "D2")]) == {("Orders", "D2"): 999}

        # Both at once: separate profiles and pipes must not clash.
        start = time.monotonic()
        runs = {name: subprocess.Popen(["bash", str(SCRIPT), str(src), str(tmp / f"{name}.out.xlsx")])
                for name, src in (("stale_input", stale_input), ("stale_cache", stale_cache))}
        status = {name: proc.wait() for name, proc in runs.items()}
        elapsed = time.monotonic() - start
        for name, rc in status.items():
            if rc != 0:
                print(f"FAIL {name}: recalculate.sh exited {rc}")
                ok = False
        if status["stale_input"] == 0:
            good = compare("stale-input", tmp / "stale_input.out.xlsx", AFTER_EDIT)
            print(f"{'ok  ' if good else 'FAIL'} stale-input: cached values follow the edited input")
            ok &= good
        if status["stale_cache"] == 0:
            good = compare("stale-cache", tmp / "stale_cache.out.xlsx", ORIGINAL)
            print(f"{'ok  ' if good else 'FAIL'} stale-cache: the wrong cached value is replaced")
            ok &= good
        print(f"     (two runs side by side took {elapsed:.1f} s)")

        # Case 3: the control, LibreOffice's plain conversion.
        soffice = shutil.which("soffice")
        if soffice is None:
            print("skip control: no soffice on PATH")
        else:
            profile = Path(tempfile.mkdtemp(prefix="profile.", dir=tmp))
            subprocess.run([soffice, f"-env:UserInstallation={profile.as_uri()}", "--headless",
                            "--convert-to", "xlsx:Calc MS Excel 2007 XML",
                            "--outdir", str(tmp / "control"), str(stale_input)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
            converted = tmp / "control" / stale_input.name
            if not converted.is_file():
                print("warning: control: soffice --convert-to wrote nothing")
            elif cached(converted, BEFORE_EDIT) == BEFORE_EDIT:
                print("ok   control: plain soffice --convert-to keeps the stale values "
                      "(so stale-input does tell a recalculation apart)")
            else:
                print("warning: control: plain soffice --convert-to recalculated too; "
                      "stale-input cannot tell recalculate.sh apart from a plain conversion")

        # Case 4: not a workbook.
        junk = tmp / "junk.xlsx"
        junk.write_text("this is not a zip\n")
        out = tmp / "junk.out.xlsx"
        proc = subprocess.run(["bash", str(SCRIPT), str(junk), str(out)],
                              capture_output=True, text=True)
        good = proc.returncode == 1 and not out.exists() and "could not load" in proc.stderr
        print(f"{'ok  ' if good else 'FAIL'} bad-input: exit {proc.returncode}, "
              f"message: {proc.stderr.strip().splitlines()[:1]}")
        ok &= good

    print("selftest passed" if ok else "selftest FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
