#!/usr/bin/env python3
"""Makes the load benchmark's workbook as other programs save it.

    python3 benches/producers/make.py --producer openpyxl --rows 10000 --out target/bench-producers

writes OUT/openpyxl-10000.xlsx: the same content as `write_workbook` in
benches/common/mod.rs (a sheet `Data`, a header and ROWS rows x 10 columns of
text, numbers, dates with the format yyyy/mm/dd, and booleans), saved by
openpyxl. `--producer libreoffice` writes OUT/libreoffice-ROWS.xlsx: that
openpyxl file opened and saved again by LibreOffice Calc (soffice --headless
--convert-to xlsx). A file that already exists is kept. Exits with status 2
and a message on stderr when openpyxl or soffice is missing.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

COLUMNS = ["id", "name", "city", "amount", "joined", "active", "qty", "note", "code", "score"]
CITIES = ["Berlin", "Paris", "Lima", "Oslo"]


def fail(message):
    print(f"make.py: {message}", file=sys.stderr)
    sys.exit(2)


def write_openpyxl(rows, path):
    try:
        import openpyxl
        from openpyxl.cell import WriteOnlyCell
    except ImportError:
        fail("openpyxl is missing for " + sys.executable + " (pip install openpyxl)")
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Data")
    sheet.append(COLUMNS)
    for i in range(rows):
        joined = WriteOnlyCell(sheet, value=45000 + i % 1000)
        joined.number_format = "yyyy/mm/dd"
        sheet.append(
            [
                i,
                f"name {i}",
                CITIES[i % 4],
                i * 1.25,
                joined,
                i % 2 == 0,
                i % 97,
                "some free text in a note",
                f"C-{i:06d}",
                (i % 1000) / 10.0,
            ]
        )
    partial = path + ".partial"
    book.save(partial)
    os.replace(partial, path)


def write_libreoffice(rows, out, path):
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        fail("soffice is missing (apt-get install -y libreoffice-calc-nogui)")
    source = os.path.join(out, f"openpyxl-{rows}.xlsx")
    if not os.path.exists(source):
        write_openpyxl(rows, source)
    with tempfile.TemporaryDirectory() as scratch:
        # A profile of its own, so a running LibreOffice does not take the job.
        profile = "file://" + os.path.join(scratch, "profile")
        # The same name as the source, so convert into a directory of its own.
        converted = os.path.join(scratch, "out")
        result = subprocess.run(
            [
                soffice,
                f"-env:UserInstallation={profile}",
                "--headless",
                "--convert-to",
                "xlsx:Calc MS Excel 2007 XML",
                "--outdir",
                converted,
                source,
            ],
            capture_output=True,
            text=True,
        )
        made = os.path.join(converted, os.path.basename(source))
        if result.returncode != 0 or not os.path.exists(made):
            fail(f"soffice did not convert {source}: {result.stdout}{result.stderr}")
        shutil.move(made, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--producer", required=True, choices=["openpyxl", "libreoffice"])
    parser.add_argument("--rows", required=True, type=int)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.producer}-{args.rows}.xlsx")
    if not os.path.exists(path):
        if args.producer == "openpyxl":
            write_openpyxl(args.rows, path)
        else:
            write_libreoffice(args.rows, args.out, path)
    print(path)


if __name__ == "__main__":
    main()
