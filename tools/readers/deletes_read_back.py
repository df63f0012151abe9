"""Deletes rows through a sheetd server from a copy of a workbook, then reads
the download with openpyxl and with LibreOffice (converted to CSV) and checks
every row against the workbook's rows without the deleted ones. It prints
each delete's answer and time.

    python3 tools/readers/deletes_read_back.py target/release/sheetd \
        target/bench-producers/openpyxl-100000.xlsx Data 50000,10,60000,99990,2,50001

Needs openpyxl and soffice (LibreOffice). Row numbers are 1-based, as the
API's `{"type": "row", "row": N}`; they are deleted in the order given."""
import urllib.error, json, os, shutil, subprocess, sys, tempfile, time, urllib.request
import openpyxl

binary, source, sheet = sys.argv[1], sys.argv[2], sys.argv[3]
deletes = [int(x) for x in sys.argv[4].split(",")]
work = tempfile.mkdtemp()
os.makedirs(f"{work}/data")
shutil.copy(source, f"{work}/data/11111111-2222-3333-4444-555555555555.xlsx")
port = 18000 + os.getpid() % 1000
server = subprocess.Popen([binary, "--data-dir", f"{work}/data", "--listen", f"127.0.0.1:{port}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
base = f"http://127.0.0.1:{port}"
for _ in range(100):
    try:
        urllib.request.urlopen(base + "/v1/spreadsheets"); break
    except Exception:
        time.sleep(0.1)
before = openpyxl.load_workbook(source, read_only=True)[sheet]
rows = [list(r) for r in before.iter_rows(values_only=True)]
for number in deletes:
    req = urllib.request.Request(f"{base}/v1/data/11111111-2222-3333-4444-555555555555/{sheet}", method="DELETE",
        data=json.dumps({"type": "row", "row": number}).encode(),
        headers={"Content-Type": "application/json"})
    t = time.time()
    try:
        answer = urllib.request.urlopen(req).read().decode()
    except urllib.error.HTTPError as e:
        print(e.read().decode()); raise
    print(number, answer, f"{(time.time()-t)*1000:.1f} ms")
    del rows[number - 1]
data = urllib.request.urlopen(f"{base}/v1/spreadsheets/11111111-2222-3333-4444-555555555555").read()
server.terminate()
out = f"{work}/out.xlsx"
open(out, "wb").write(data)
after = [list(r) for r in openpyxl.load_workbook(out, read_only=True)[sheet].iter_rows(values_only=True)]
print("openpyxl rows", len(after), "expected", len(rows), "same:", after == rows)
if after != rows:
    for i, (a, b) in enumerate(zip(after, rows)):
        if a != b:
            print("first difference at", i + 1, a, b); break
subprocess.run(["soffice", "--headless", "--convert-to", "csv", "--outdir", work, out],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
import csv
lo = list(csv.reader(open(f"{work}/out.csv", encoding="utf-8", errors="replace")))
print("LibreOffice rows", len(lo))
firsts = [str(r[0]) if r and r[0] is not None else "" for r in rows]
lofirst = [r[0] if r else "" for r in lo]
print("LibreOffice first column same:", lofirst == firsts[:len(lofirst)] and len(lofirst) == len(firsts))
if lofirst != firsts:
    for i, (a, b) in enumerate(zip(lofirst, firsts)):
        if a != b:
            print("first difference at", i + 1, repr(a), repr(b)); break
