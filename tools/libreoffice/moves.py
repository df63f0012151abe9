"""LibreOffice's side of the "rows move" oracle (contract 11.2).  Run by
moves.sh, which picks a Python that can `import uno`; see
fixtures/moves/README.md for the whole pipeline.

    PYTHON-WITH-UNO moves.py --profile DIR resave OUT-DIR SOURCE...
    PYTHON-WITH-UNO moves.py --profile DIR pivot IN OUT
    PYTHON-WITH-UNO moves.py --profile DIR ops OUT-DIR SOURCE...

resave  loads each SOURCE (stem S) and stores it unchanged as
        OUT-DIR/<S>_lo.xlsx (the second producer).
pivot   loads IN (sheets Data and Report), adds a DataPilot (pivot table)
        "Pivot" at Report!A3 whose source is Data!A1:D21 (rows: Name,
        data: sum of Qty) and stores it as OUT.
ops     for each SOURCE (stem S), from a fresh load each time:
        S__resave         nothing (the identity check: what a plain load and
                          save changes);
        S__delete_row10   removes sheet row 10 of Data
                          (XTableRows.removeByIndex(9, 1));
        S__insert_before10  inserts one sheet row before row 10
                          (XTableRows.insertByIndex(9, 1)) and sets A10 = "new",
                          B10 = 1, C10 = 2, D10 = =B10*C10 (sheetd fills the
                          formula column down);
        S__insert_before22  the same before row 22, the row after the last
                          data row (the new row takes the formats of row 21);
        for a workbook with a pivot table on Report also
        S__delete_report_row6  removes sheet row 6 of Report (inside the
                          pivot table's body).
        Each result is stored as OUT-DIR/<S>__<op>.xlsx.  When LibreOffice
        refuses the operation (through the API it does not raise: the rows
        simply stay where they are, so the script compares the cells of
        the sheet before and after), it writes OUT-DIR/<S>__<op>.refused
        instead, holding one line that says what was refused.

One soffice serves the whole run (own profile DIR and pipe: the Office
class of recalculate.py next to this file).  Exit status 0, or 1 with a
message on stderr.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import uno
from com.sun.star.table import CellAddress, CellRangeAddress

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
from recalculate import FILTER, Failure, Office, props  # noqa: E402


def load(office: Office, path: Path):
    doc = office.desktop.loadComponentFromURL(
        path.as_uri(), "_blank", 0,
        props(Hidden=True, FilterName=FILTER, MacroExecutionMode=0, UpdateDocMode=0))
    if doc is None or not doc.supportsService("com.sun.star.sheet.SpreadsheetDocument"):
        raise Failure(f"LibreOffice could not load {path} as a spreadsheet")
    return doc


def store(doc, target: Path) -> None:
    target.unlink(missing_ok=True)
    doc.storeToURL(target.as_uri(), props(FilterName=FILTER, Overwrite=True))
    if not target.is_file() or target.stat().st_size == 0:
        raise Failure(f"LibreOffice wrote nothing to {target}")


def close(doc) -> None:
    try:
        doc.close(True)
    except Exception:
        pass


def grid(sheet, rows: int = 40, columns: int = 12) -> list:
    """The formulas (or values) of the sheet's top-left block: what a
    refused operation leaves unchanged."""
    block = sheet.getCellRangeByPosition(0, 0, columns - 1, rows - 1)
    return [list(row) for row in block.getFormulaArray()]


class Work:
    """A scratch directory: LibreOffice loads a copy of each source there,
    so its lock file never lands next to the source."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="sheetd-moves."))

    def copy(self, source: Path) -> Path:
        path = self.dir / source.name
        shutil.copyfile(source, path)
        return path

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def resave(office: Office, work: Work, source: Path, target: Path) -> None:
    doc = load(office, work.copy(source))
    try:
        store(doc, target)
    finally:
        close(doc)


def pivot(office: Office, work: Work, source: Path, target: Path) -> None:
    doc = load(office, work.copy(source))
    try:
        sheets = doc.Sheets
        data = sheets.getByName("Data")
        report = sheets.getByName("Report")
        tables = report.DataPilotTables
        descriptor = tables.createDataPilotDescriptor()
        source_range = CellRangeAddress()
        source_range.Sheet = data.RangeAddress.Sheet
        source_range.StartColumn, source_range.StartRow = 0, 0
        source_range.EndColumn, source_range.EndRow = 3, 20
        descriptor.SourceRange = source_range
        fields = descriptor.DataPilotFields
        name = fields.getByIndex(0)
        name.Orientation = uno.Enum("com.sun.star.sheet.DataPilotFieldOrientation", "ROW")
        qty = fields.getByIndex(1)
        qty.Orientation = uno.Enum("com.sun.star.sheet.DataPilotFieldOrientation", "DATA")
        qty.Function = uno.Enum("com.sun.star.sheet.GeneralFunction", "SUM")
        at = CellAddress()
        at.Sheet, at.Column, at.Row = report.RangeAddress.Sheet, 0, 2
        tables.insertNewByName("Pivot", at, descriptor)
        store(doc, target)
    finally:
        close(doc)


def delete_row(sheet_name: str, row: int):
    def run(doc) -> str | None:
        sheet = doc.Sheets.getByName(sheet_name)
        before = grid(sheet)
        try:
            sheet.Rows.removeByIndex(row - 1, 1)
        except Exception as e:  # an API refusal that does raise
            return f"{sheet_name} row {row}: {type(e).__name__}: {e}"
        if grid(sheet) == before:
            return f"{sheet_name} row {row}: LibreOffice left the sheet unchanged"
        return None
    return run


def insert_before(row: int):
    def run(doc) -> str | None:
        sheet = doc.Sheets.getByName("Data")
        before = grid(sheet)
        try:
            sheet.Rows.insertByIndex(row - 1, 1)
        except Exception as e:
            return f"Data before row {row}: {type(e).__name__}: {e}"
        # Below everything the sheet holds, a new row changes no cell.
        moved = any(cell != "" for line in before[row - 1:] for cell in line)
        if moved and grid(sheet) == before:
            return f"Data before row {row}: LibreOffice left the sheet unchanged"
        sheet.getCellRangeByName(f"A{row}").setString("new")
        sheet.getCellRangeByName(f"B{row}").setValue(1)
        sheet.getCellRangeByName(f"C{row}").setValue(2)
        sheet.getCellRangeByName(f"D{row}").setFormula(f"=B{row}*C{row}")
        return None
    return run


def unchanged(_doc) -> str | None:
    return None


def operations(doc) -> list:
    ops = [("resave", unchanged), ("delete_row10", delete_row("Data", 10)),
           ("insert_before10", insert_before(10)), ("insert_before22", insert_before(22))]
    if doc.Sheets.hasByName("Report") and doc.Sheets.getByName("Report").DataPilotTables.Count:
        ops.append(("delete_report_row6", delete_row("Report", 6)))
    return ops


def run_ops(office: Office, work: Work, sources: list[Path], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for source in sources:
        probe = load(office, work.copy(source))
        try:
            names = [name for name, _ in operations(probe)]
        finally:
            close(probe)
        for name in names:
            doc = load(office, work.copy(source))
            try:
                op = dict(operations(doc))[name]
                refused = op(doc)
                stem = out / f"{source.stem}__{name}"
                for old in (stem.with_suffix(".xlsx"), stem.with_suffix(".refused")):
                    old.unlink(missing_ok=True)
                if refused is None:
                    store(doc, stem.with_suffix(".xlsx"))
                    print(f"{stem.name}.xlsx")
                else:
                    stem.with_suffix(".refused").write_text(refused + "\n", encoding="utf-8")
                    print(f"{stem.name}.refused: {refused}")
            finally:
                close(doc)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soffice", default="soffice")
    parser.add_argument("--profile", required=True, type=Path)
    parser.add_argument("command", choices=["resave", "pivot", "ops"])
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.paths]
    if args.command == "pivot" and len(paths) != 2:
        parser.error("pivot takes IN OUT")
    if len(paths) < 2:
        parser.error(f"{args.command} takes OUT-DIR SOURCE...")

    office = Office(args.soffice, args.profile.resolve(), args.profile.resolve() / "soffice.log")
    work = Work()
    try:
        office.connect(time.monotonic() + 60)
        if args.command == "resave":
            for source in paths[1:]:
                resave(office, work, source, paths[0] / f"{source.stem}_lo.xlsx")
                print(f"{source.stem}_lo.xlsx")
        elif args.command == "pivot":
            pivot(office, work, paths[0], paths[1])
        else:
            run_ops(office, work, paths[1:], paths[0])
    except Exception as e:
        print(f"moves: {type(e).__name__}: {e}{office.log_tail()}", file=sys.stderr)
        return 1
    finally:
        office.shutdown()
        work.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
