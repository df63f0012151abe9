#!/usr/bin/env python3
"""Bounded attack harness for sheetd (issue 15).

Each subcommand starts its own release server on a free loopback port with a
fresh data directory, runs one attack, measures, kills the server, prints one
result line and exits 1 when a target is missed (2 when the harness itself
failed: the server did not start, the scenario's deadline passed...).
`all` runs every scenario in turn and prints a markdown table.

Python 3.11, standard library only. See tools/attack/README.md.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import hashlib
import http.client
import io
import json
import os
import random
import re
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

REPO = Path(__file__).resolve().parents[2]
DEFAULT_BINARY = REPO / "target" / "release" / "sheetd"
MiB = 1024 * 1024
GiB = 1024 * MiB
SHEET = "Data"


class HarnessError(Exception):
    """The harness could not measure (server did not start, setup failed)."""


class ScenarioTimeout(Exception):
    """The whole-scenario deadline passed."""


def log(msg: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def mib(n: float | None) -> str:
    return "n/a" if n is None else f"{n / MiB:.0f} MiB"


def secs(t: float | None) -> str:
    return "n/a" if t is None else f"{t:.2f} s"


# --------------------------------------------------------------------------
# Whole-scenario deadline


@contextlib.contextmanager
def deadline(seconds: float, name: str):
    """Raises ScenarioTimeout in the main thread after `seconds` (once)."""

    def on_alarm(signum, frame):
        raise ScenarioTimeout(f"whole-scenario deadline of {seconds:.0f} s passed")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------------
# Server process, memory readings

LIVE_SERVERS: list["Server"] = []


def read_proc_status(pid: int) -> dict[str, int] | None:
    """VmRSS and VmHWM of `pid`, in bytes; None once the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    out = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(rest.split()[0]) * 1024
    if "VmRSS" not in out:  # a zombie has no memory lines
        return None
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One sheetd process with its own temp directory (data dir, TMPDIR, log).

    Use as a context manager: leaving it kills the process (SIGKILL if it is
    still running) and removes the temp directory, whatever happened."""

    def __init__(self, opts, name: str):
        self.opts = opts
        self.name = name
        self.root = Path(tempfile.mkdtemp(prefix=f"sheetd-attack-{name}-"))
        self.data = self.root / "data"
        self.tmp = self.root / "tmp"
        self.data.mkdir()
        self.tmp.mkdir()
        self.log_path = self.root / "server.log"
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.peak_rss = 0
        self.last_hwm = 0
        self.aborted = False
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        LIVE_SERVERS.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def start(self, ready_timeout: float = 30.0, extra_args: list[str] = ()) -> "Server":
        binary = Path(self.opts.binary)
        if not binary.is_file():
            raise HarnessError(f"no server binary at {binary}: run cargo build --release")
        self.port = free_port()
        cmd = [str(binary), "--data-dir", str(self.data),
               "--listen", f"127.0.0.1:{self.port}", *extra_args, *self.opts.server_arg]
        env = dict(os.environ, TMPDIR=str(self.tmp))
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        self._monitor = threading.Thread(target=self._watch_memory, daemon=True)
        self._monitor.start()
        end = time.monotonic() + ready_timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise HarnessError(f"server exited at start ({self.proc.returncode}): "
                                   f"{self.log_tail()}")
            try:
                status, _ = request(self, "GET", "/healthz", timeout=2)
                if status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise HarnessError(f"server not answering /healthz after {ready_timeout:.0f} s")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _watch_memory(self):
        limit = self.opts.rss_abort_mib * MiB
        while not self._stop.wait(0.05):
            m = read_proc_status(self.proc.pid)
            if m is None:
                return
            self.peak_rss = max(self.peak_rss, m["VmRSS"])
            self.last_hwm = max(self.last_hwm, m.get("VmHWM", 0))
            if m["VmRSS"] > limit:
                self.aborted = True
                log(f"server RSS {mib(m['VmRSS'])} is over --rss-abort-mib: killing it")
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.proc.pid, signal.SIGKILL)
                return

    def mem(self) -> dict[str, int]:
        """Current VmRSS and VmHWM (bytes); the last seen values once it exited."""
        m = read_proc_status(self.proc.pid) if self.proc else None
        if m is None:
            return {"VmRSS": 0, "VmHWM": self.last_hwm}
        self.peak_rss = max(self.peak_rss, m["VmRSS"])
        self.last_hwm = max(self.last_hwm, m["VmHWM"])
        return m

    def hwm(self) -> int:
        return self.mem()["VmHWM"] or self.last_hwm

    def log_tail(self, n: int = 5) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return " | ".join(lines[-n:])

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)

    def close(self):
        self._stop.set()
        self.kill()
        if self.proc is not None:
            with contextlib.suppress(Exception):
                self._log.close()
        if self.opts.keep_tmp:
            log(f"kept {self.root}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)
        if self in LIVE_SERVERS:
            LIVE_SERVERS.remove(self)


def kill_all_servers():
    for srv in list(LIVE_SERVERS):
        with contextlib.suppress(Exception):
            srv.close()


atexit.register(kill_all_servers)


# --------------------------------------------------------------------------
# HTTP helpers (one connection per request unless stated)


def request(srv: Server, method: str, path: str, body=None, timeout: float = 30.0,
            content_type: str | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    try:
        headers = {"Connection": "close"}
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def timed(srv: Server, method: str, path: str, body=None, timeout: float = 30.0,
          content_type: str | None = None) -> tuple[int | None, bytes, float]:
    """(status or None on a socket error/timeout, body, seconds taken)."""
    t0 = time.monotonic()
    try:
        status, data = request(srv, method, path, body, timeout, content_type)
    except (OSError, http.client.HTTPException) as e:
        return None, repr(e).encode(), time.monotonic() - t0
    return status, data, time.monotonic() - t0


def upload(srv: Server, xlsx: bytes, timeout: float = 60.0) -> str:
    status, data = request(srv, "POST", "/v1/spreadsheets", xlsx, timeout,
                           content_type="application/octet-stream")
    if status != 201:
        raise HarnessError(f"upload answered {status}: {data[:200]!r}")
    return json.loads(data)["spreadsheet_id"]


def insert(srv: Server, sid: str, rows: list[dict], timeout: float = 120.0) -> None:
    status, data = request(srv, "POST", f"/v1/data/{sid}/{SHEET}", {"data": rows}, timeout)
    if status != 201:
        raise HarnessError(f"insert answered {status}: {data[:200]!r}")


def row_total(srv: Server, sid: str, filt: str | None = None) -> int:
    q = f"/v1/data/{sid}/{SHEET}?limit=0"
    if filt:
        q += "&filter=" + filt
    status, data = request(srv, "GET", q, timeout=60)
    if status != 200:
        raise HarnessError(f"row count answered {status}: {data[:200]!r}")
    return json.loads(data)["total"]


def half_header_socket(port: int, timeout: float = 5.0) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    return s


def read_http_response(s: socket.socket, timeout: float = 10.0) -> int:
    """Reads one Content-Length response from `s`; returns its status."""
    s.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise HarnessError("connection closed before a response head")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status


def raise_nofile(need: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


# --------------------------------------------------------------------------
# Workbooks written by hand with zipfile

NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
NS_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS_PR = "http://schemas.openxmlformats.org/package/2006/relationships"
CT_MAIN = "application/vnd.openxmlformats-officedocument.spreadsheetml"
XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
STYLES = (
    f'{XML_DECL}<styleSheet xmlns="{NS}">'
    '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill>'
    '<fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
    '</styleSheet>'
)


class SharedRef(int):
    """A cell that refers to shared string number `int`."""


def col_name(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def cell_xml(ref: str, v) -> str:
    if v is None:
        return ""
    if isinstance(v, SharedRef):
        return f'<c r="{ref}" t="s"><v>{int(v)}</v></c>'
    if isinstance(v, bool):
        return f'<c r="{ref}" t="b"><v>{int(v)}</v></c>'
    if isinstance(v, (int, float)):
        return f'<c r="{ref}"><v>{v}</v></c>'
    return f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{xml_escape(v)}</t></is></c>'


def write_xlsx(out, rows, ncols: int, nrows: int, shared_strings=None,
               compresslevel: int = 6) -> None:
    """Writes a one-sheet workbook (sheet `Data`) to `out` (path or file).

    `rows` yields lists of cell values (str, int, float, bool, SharedRef,
    None), row 1 first. `shared_strings`, when given, is a function that
    writes the whole xl/sharedStrings.xml part to the binary stream it gets."""
    cols = [col_name(i) for i in range(max(ncols, 1))]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=compresslevel) as z:
        overrides = [
            ("/xl/workbook.xml", f"{CT_MAIN}.sheet.main+xml"),
            ("/xl/worksheets/sheet1.xml", f"{CT_MAIN}.worksheet+xml"),
            ("/xl/styles.xml", f"{CT_MAIN}.styles+xml"),
        ]
        rels = [("rId1", "worksheet", "worksheets/sheet1.xml"), ("rId2", "styles", "styles.xml")]
        if shared_strings:
            overrides.append(("/xl/sharedStrings.xml", f"{CT_MAIN}.sharedStrings+xml"))
            rels.append(("rId3", "sharedStrings", "sharedStrings.xml"))
        z.writestr("[Content_Types].xml", (
            f'{XML_DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            + "".join(f'<Override PartName="{p}" ContentType="{c}"/>' for p, c in overrides)
            + "</Types>"))
        z.writestr("_rels/.rels", (
            f'{XML_DECL}<Relationships xmlns="{NS_PR}"><Relationship Id="rId1" '
            'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="xl/workbook.xml"/></Relationships>'))
        z.writestr("xl/workbook.xml", (
            f'{XML_DECL}<workbook xmlns="{NS}" xmlns:r="{NS_R}"><sheets>'
            f'<sheet name="{SHEET}" sheetId="1" r:id="rId1"/></sheets></workbook>'))
        z.writestr("xl/_rels/workbook.xml.rels", (
            f'{XML_DECL}<Relationships xmlns="{NS_PR}">'
            + "".join(f'<Relationship Id="{i}" Type="{NS_R}/{t}" Target="{p}"/>' for i, t, p in rels)
            + "</Relationships>"))
        z.writestr("xl/styles.xml", STYLES)
        with z.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as f:
            f.write((f'{XML_DECL}<worksheet xmlns="{NS}" xmlns:r="{NS_R}">'
                     f'<dimension ref="A1:{cols[-1]}{max(nrows, 1)}"/><sheetData>').encode())
            buf = []
            for r, values in enumerate(rows, start=1):
                cells = "".join(cell_xml(f"{cols[c]}{r}", v) for c, v in enumerate(values))
                buf.append(f'<row r="{r}">{cells}</row>')
                if len(buf) >= 2000:
                    f.write("".join(buf).encode())
                    buf.clear()
            f.write("".join(buf).encode())
            f.write(b"</sheetData></worksheet>")
        if shared_strings:
            with z.open("xl/sharedStrings.xml", "w", force_zip64=True) as f:
                shared_strings(f)


CITIES = ["Amsterdam", "Berlin", "Cambridge", "Dublin", "Edinburgh", "Florence", "Geneva"]
STATUSES = ["open", "pending", "done", "blocked"]
WIDE_HEADER = ["id", "name", "city", "email", "amount", "qty", "status", "note", "score", "flag"]


def wide_rows(n: int, marker: str | None = None):
    """Header plus `n` rows of 10 columns (text, numbers, booleans); row 2's
    name is `marker` when given."""
    yield WIDE_HEADER
    for i in range(1, n + 1):
        name = marker if (marker and i == 1) else f"name-{i:06d}"
        yield [i, name, CITIES[i % 7], f"user{i:06d}@example.com", round(i * 1.37, 2),
               i % 50, STATUSES[i % 4], f"note for row {i} with some words", i % 1000 / 10,
               i % 3 == 0]


def wide_xlsx(n: int, marker: str | None = None) -> bytes:
    out = io.BytesIO()
    write_xlsx(out, wide_rows(n, marker), len(WIDE_HEADER), n + 1)
    return out.getvalue()


def small_xlsx(header: list[str], rows: list[list] = ()) -> bytes:
    out = io.BytesIO()
    write_xlsx(out, [header, *rows], len(header), 1 + len(rows))
    return out.getvalue()


def write_file_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def parts_text(xlsx: bytes) -> bytes:
    """Every XML part of a workbook, concatenated (to look for cell text)."""
    with zipfile.ZipFile(io.BytesIO(xlsx)) as z:
        return b"\n".join(z.read(n) for n in z.namelist() if n.endswith(".xml"))


def count_entries(root: Path) -> int:
    """Files and directories under `root`, recursively (hidden ones too)."""
    n = 0
    for _, dirs, files in os.walk(root):
        n += len(dirs) + len(files)
    return n


# --------------------------------------------------------------------------
# Results


@dataclass
class Result:
    name: str
    passed: bool
    figures: str
    target: str
    error: str | None = None
    extra: dict = field(default_factory=dict)

    def verdict(self) -> str:
        return "ERROR" if self.error else ("PASS" if self.passed else "FAIL")

    def line(self) -> str:
        if self.error:
            return f"{self.name}: ERROR {self.error} {self.figures}".rstrip()
        return f"{self.name}: {self.verdict()} {self.figures} (target: {self.target})"


# --------------------------------------------------------------------------
# 1. stalled: many half-sent request heads


def sc_stalled(o) -> Result:
    target = f"/healthz 200 within 2 s, VmHWM < 300 MiB with {o.connections} stalled connections"
    raise_nofile(o.connections + 256)
    socks: list[socket.socket] = []
    with Server(o, "stalled") as srv:
        srv.start()
        try:
            failed_connects = 0
            first_error = ""
            sent_at: dict[int, float] = {}
            t0 = time.monotonic()
            for _ in range(o.connections):
                try:
                    s = half_header_socket(srv.port, timeout=5)
                except OSError as e:
                    failed_connects += 1
                    first_error = first_error or repr(e)
                    if failed_connects >= 50:
                        break
                    continue
                socks.append(s)
                sent_at[s.fileno()] = time.monotonic()
            opened = len(socks)
            log(f"{opened} stalled connections open in {time.monotonic() - t0:.1f} s"
                + (f", {failed_connects} connects failed ({first_error})" if failed_connects else ""))
            time.sleep(1.0)
            probes = []
            for _ in range(3):
                status, _, took = timed(srv, "GET", "/healthz", timeout=o.probe_timeout)
                probes.append((status, took))
                time.sleep(0.2)
            m = srv.mem()
            log(f"healthz probes {probes}, VmRSS {mib(m['VmRSS'])}, VmHWM {mib(m['VmHWM'])}")

            # Watch which stalled connections the server ends (EOF, reset or an
            # answer such as 408 followed by EOF) until stall_wait after opening.
            sel = selectors.DefaultSelector()
            for s in socks:
                s.setblocking(False)
                sel.register(s, selectors.EVENT_READ)
            closed_after: list[float] = []
            answered = 0
            watch_end = t0 + o.stall_wait
            while time.monotonic() < watch_end and len(closed_after) < opened:
                for key, _ in sel.select(timeout=min(1.0, max(0.0, watch_end - time.monotonic()))):
                    s = key.fileobj
                    try:
                        chunk = s.recv(65536)
                    except BlockingIOError:
                        continue
                    except OSError:
                        chunk = b""
                    if chunk:
                        answered += 1
                        continue
                    closed_after.append(time.monotonic() - sent_at[s.fileno()])
                    sel.unregister(s)
            sel.close()
            closed = len(closed_after)
            median_close = sorted(closed_after)[closed // 2] if closed else None
            still = srv.alive()
        finally:
            for s in socks:
                with contextlib.suppress(OSError):
                    s.close()
    ok_probes = all(st == 200 and took < 2.0 for st, took in probes)
    worst = max(took for _, took in probes)
    passed = ok_probes and m["VmHWM"] < 300 * MiB and still
    if o.require_close:
        target += f"; every stalled connection closed within {o.stall_wait:.0f} s"
        passed = passed and closed == opened
    figures = (f"opened={opened}/{o.connections} healthz={[st for st, _ in probes]} "
               f"worst={secs(worst)} VmRSS={mib(m['VmRSS'])} VmHWM={mib(m['VmHWM'])} "
               f"closed_by_server_within_{o.stall_wait:.0f}s={closed}/{opened}"
               + (f" (median {median_close:.1f} s, {answered} with an answer)" if closed else ""))
    return Result("stalled", passed, figures, target)


# --------------------------------------------------------------------------
# 2. hoard: clients that ask for 100k rows and never read


def sc_hoard(o) -> Result:
    target = f"VmHWM < 800 MiB with {o.hoarders} non-reading clients; server answers afterwards"
    sid = str(uuid.uuid4())
    socks: list[socket.socket] = []
    with Server(o, "hoard") as srv:
        t0 = time.monotonic()
        (srv.data / f"{sid}.xlsx").write_bytes(wide_xlsx(o.hoard_rows))
        log(f"{o.hoard_rows} x 10 workbook written in {time.monotonic() - t0:.1f} s "
            f"({(srv.data / f'{sid}.xlsx').stat().st_size / MiB:.1f} MiB)")
        srv.start()
        try:
            status, _, took = timed(srv, "GET", f"/v1/data/{sid}/{SHEET}?limit=1", timeout=120)
            if status != 200:
                raise HarnessError(f"first read answered {status}")
            before = srv.mem()
            log(f"cold read {took:.1f} s; VmRSS {mib(before['VmRSS'])}, VmHWM {mib(before['VmHWM'])}")
            req = (f"GET /v1/data/{sid}/{SHEET}?limit={o.hoard_rows} HTTP/1.1\r\n"
                   "Host: x\r\n\r\n").encode()
            for _ in range(o.hoarders):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.settimeout(5)
                s.connect(("127.0.0.1", srv.port))
                s.sendall(req)
                socks.append(s)
            # Hold at least o.hold seconds, longer while RSS still grows
            # (at most 60 s): the answers are built on two cores.
            t_start = time.monotonic()
            last_growth = t_start
            best = 0
            while srv.alive():
                now = time.monotonic()
                rss = srv.mem()["VmRSS"]
                if rss > best * 1.02:
                    best = rss
                    last_growth = now
                if now - t_start >= o.hold and now - last_growth >= 3:
                    break
                if now - t_start >= 60:
                    break
                time.sleep(0.2)
            during = srv.mem()
            held_for = time.monotonic() - t_start
            log(f"held {held_for:.1f} s: VmRSS {mib(during['VmRSS'])}, VmHWM {mib(during['VmHWM'])}")
            # What each hoarder was answered (the status line sits in its
            # small receive buffer): 200 means the attack really ran.
            hoard_statuses: dict = {}
            for s in socks:
                try:
                    s.settimeout(1)
                    head = s.recv(64)
                    st = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else "closed"
                except (OSError, ValueError, IndexError):
                    st = "none"
                hoard_statuses[st] = hoard_statuses.get(st, 0) + 1
            for s in socks:
                with contextlib.suppress(OSError):
                    s.close()
            socks.clear()
            time.sleep(2)
            h_status, _, h_took = timed(srv, "GET", "/healthz", timeout=10)
            r_status, _, r_took = timed(srv, "GET", f"/v1/data/{sid}/{SHEET}?limit=10", timeout=10)
            time.sleep(1)
            after = srv.mem()
            aborted = srv.aborted
        finally:
            for s in socks:
                with contextlib.suppress(OSError):
                    s.close()
    hwm = max(during["VmHWM"], after["VmHWM"])
    answers = h_status == 200 and r_status == 200
    passed = hwm < 800 * MiB and answers and not aborted
    figures = (f"hoarders answered {hoard_statuses}; "
               f"VmHWM={mib(hwm)} VmRSS_while_held={mib(during['VmRSS'])} "
               f"VmRSS_after_close={mib(after['VmRSS'])} held={held_for:.0f}s "
               f"afterwards healthz={h_status} ({secs(h_took)}) read={r_status} ({secs(r_took)})"
               + (" ABORTED(RSS limit)" if aborted else ""))
    return Result("hoard", passed, figures, target)


# --------------------------------------------------------------------------
# 3. ssbomb: 60 million one-character shared strings


def write_ssbomb(path: Path, count: int) -> None:
    def shared_strings(f):
        f.write((f'{XML_DECL}<sst xmlns="{NS}" count="{count}" uniqueCount="{count}">').encode())
        chunk = b"<si><t>a</t></si>" * 1_000_000
        left = count
        while left >= 1_000_000:
            f.write(chunk)
            left -= 1_000_000
        f.write(b"<si><t>a</t></si>" * left)
        f.write(b"</sst>")

    write_xlsx(path, [[SharedRef(0)]], 1, 1, shared_strings=shared_strings, compresslevel=9)


def sc_ssbomb(o) -> Result:
    target = "answered (4xx refusal or accepted) within 20 s and VmHWM < 1 GiB, on upload and on a dropped-in file"
    gen = Path(tempfile.mkdtemp(prefix="sheetd-attack-ssbomb-gen-"))
    try:
        bomb = gen / "bomb.xlsx"
        t0 = time.monotonic()
        write_ssbomb(bomb, o.bomb_strings)
        with zipfile.ZipFile(bomb) as z:
            unpacked = sum(i.file_size for i in z.infolist())
        log(f"bomb: {bomb.stat().st_size / MiB:.1f} MiB zipped, {unpacked / MiB:.0f} MiB unpacked, "
            f"made in {time.monotonic() - t0:.0f} s")
        data = bomb.read_bytes()

        # a) upload
        with Server(o, "ssbomb-upload") as srv:
            srv.start()
            status, body, took = timed(srv, "POST", "/v1/spreadsheets", data,
                                       timeout=o.bomb_timeout,
                                       content_type="application/octet-stream")
            up_hwm = srv.hwm()
            up_aborted = srv.aborted
            up_detail = body[:160].decode(errors="replace")
        log(f"upload: {status} in {took:.1f} s, VmHWM {mib(up_hwm)}: {up_detail}")
        up_ok = (status is not None and (status == 201 or 400 <= status < 500)
                 and took < 20 and up_hwm < GiB and not up_aborted)
        up = (status, took, up_hwm)

        # b) the same file dropped into the data directory, read once
        with Server(o, "ssbomb-dropin") as srv:
            srv.start()
            sid = str(uuid.uuid4())
            shutil.copyfile(bomb, srv.data / f"{sid}.xlsx")
            d_status, body, d_took = timed(srv, "GET", f"/v1/data/{sid}/{SHEET}?limit=1",
                                           timeout=o.bomb_timeout)
            d_hwm = srv.hwm()
            d_aborted = srv.aborted
            d_detail = body[:160].decode(errors="replace")
        log(f"drop-in read: {d_status} in {d_took:.1f} s, VmHWM {mib(d_hwm)}: {d_detail}")
        # A refused stored file is a 500 by the contract; any answer counts.
        d_ok = d_status is not None and d_took < 20 and d_hwm < GiB and not d_aborted
    finally:
        shutil.rmtree(gen, ignore_errors=True)

    def show(status, took, hwm):
        st = status if status is not None else f"no answer within {o.bomb_timeout:.0f} s"
        return f"{st} in {secs(took)}, VmHWM={mib(hwm)}"

    figures = (f"upload: {show(*up)}" + (" ABORTED(RSS limit)" if up_aborted else "")
               + f"; drop-in read: {show(d_status, d_took, d_hwm)}"
               + (" ABORTED(RSS limit)" if d_aborted else ""))
    return Result("ssbomb", up_ok and d_ok, figures, target)


# --------------------------------------------------------------------------
# 4. infilter: a 100,000-value `in` filter beside a writer


def sc_infilter(o) -> Result:
    target = "PATCH answered (<500) within 2 s; no insert waits > 2 s, none gets 503"
    with Server(o, "infilter") as srv:
        srv.start()
        sid = upload(srv, small_xlsx(["name", "city", "n"], [["name-0", "Berlin", 0]]))
        rows = [{"name": f"name-{i}", "city": CITIES[i % 7], "n": i} for i in range(1, o.filter_rows)]
        for k in range(0, len(rows), 10_000):
            insert(srv, sid, rows[k:k + 10_000])
        values = [f"v{i}" for i in range(o.in_values - 1)] + ["name-5000"]
        body = {"type": "filter", "filter": "name:in:" + ",".join(values),
                "data": {"city": "patched"}}

        inserts: list[tuple[float, float, int | None]] = []
        stop = threading.Event()

        def writer():
            k = 0
            while not stop.is_set():
                k += 1
                t = time.monotonic()
                st, _, took = timed(srv, "POST", f"/v1/data/{sid}/{SHEET}",
                                    {"data": [{"name": f"writer-{k}", "city": "w", "n": k}]},
                                    timeout=o.patch_timeout + 10)
                inserts.append((t, took, st))
                time.sleep(0.05)

        w = threading.Thread(target=writer, daemon=True)
        w.start()
        try:
            time.sleep(1.0)
            p_status, p_body, p_took = timed(srv, "PATCH", f"/v1/data/{sid}/{SHEET}", body,
                                             timeout=o.patch_timeout)
            time.sleep(1.0)
        finally:
            stop.set()
        w.join(o.patch_timeout + 15)
    worst = max((took for _, took, _ in inserts), default=None)
    n503 = sum(1 for _, _, st in inserts if st == 503)
    other = sum(1 for _, _, st in inserts if st not in (201, 503))
    detail = "" if p_status in (200, None) else f" ({p_body[:100].decode(errors='replace')})"
    patch_ok = p_status is not None and p_status < 500 and p_took < 2
    passed = patch_ok and worst is not None and worst < 2 and n503 == 0 and other == 0
    ps = p_status if p_status is not None else f"no answer within {o.patch_timeout:.0f} s"
    figures = (f"PATCH in:{o.in_values} on {o.filter_rows} rows: {ps}{detail} in {secs(p_took)}; "
               f"inserts meanwhile: {len(inserts)}, worst {secs(worst)}, 503: {n503}, other failures: {other}")
    return Result("infilter", passed, figures, target)


# --------------------------------------------------------------------------
# 5. badneighbour: valid inserts batched with ones the writer refuses


def sc_badneighbour(o) -> Result:
    n_valid, n_bad = o.valid_inserts, o.bad_inserts
    target = f"0 of {n_valid} valid inserts fail; all {n_valid} rows read back and on disk"
    with Server(o, "badneighbour") as srv:
        srv.start()
        sid = upload(srv, small_xlsx(["name", "note"]))
        jobs = [("valid", i) for i in range(n_valid)]
        step = max(1, (n_valid + n_bad) // max(1, n_bad))
        for j in range(n_bad):
            jobs.insert(min(len(jobs), j * step + step // 2), ("bad", j))
        emoji = "\U0001F600" * o.emoji
        results: list[tuple[str, int, int | None, bytes]] = []
        lock = threading.Lock()
        barrier = threading.Barrier(o.concurrency)
        it = iter(jobs)

        def worker():
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(30)
            while True:
                with lock:
                    job = next(it, None)
                if job is None:
                    return
                kind, i = job
                row = {"name": f"valid-{i}", "note": "ok"} if kind == "valid" else {
                    "name": f"bad-{i}", "note": emoji}
                st, body, _ = timed(srv, "POST", f"/v1/data/{sid}/{SHEET}", {"data": [row]},
                                    timeout=90)
                with lock:
                    results.append((kind, i, st, body[:200]))

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(o.concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        via_api = row_total(srv, sid, "name:like:valid-*")
        status, book = request(srv, "GET", f"/v1/spreadsheets/{sid}", timeout=60)
        on_disk = len(set(re.findall(rb"valid-(\d+)", parts_text(book)))) if status == 200 else None
    valid = [r for r in results if r[0] == "valid"]
    failed = [r for r in valid if r[2] != 201]
    bad_statuses: dict = {}
    for r in results:
        if r[0] == "bad":
            bad_statuses[r[2]] = bad_statuses.get(r[2], 0) + 1
    failed_statuses: dict = {}
    for r in failed:
        failed_statuses[r[2]] = failed_statuses.get(r[2], 0) + 1
    passed = not failed and len(valid) == n_valid and via_api == n_valid and on_disk == n_valid
    figures = (f"valid failed={len(failed)}/{n_valid}{' ' + str(failed_statuses) if failed_statuses else ''} "
               f"bad inserts answered {bad_statuses}; rows read back={via_api}, on disk={on_disk}")
    return Result("badneighbour", passed, figures, target)


# --------------------------------------------------------------------------
# 6. outsidesave: a spreadsheet app saves (temp + rename) during a long write


def sc_outsidesave(o) -> Result:
    target = f"0 outside saves lost in {o.races} races"
    sid = str(uuid.uuid4())
    races: list[dict] = []
    missed = 0
    with Server(o, "outsidesave") as srv:
        book = srv.data / f"{sid}.xlsx"
        book.write_bytes(wide_xlsx(o.race_rows, "base-0"))
        srv.start()
        attempt = 0
        while len(races) < o.races and attempt < o.races * 3:
            attempt += 1
            k = attempt
            # Reset to a fresh file nobody has read yet, so sheetd's write is
            # a cold load and a full rewrite (seconds, not an append).
            base_tmp = srv.data / "attack-base.tmp"
            write_file_durably(base_tmp, wide_xlsx(o.race_rows, f"base-{k}"))
            os.rename(base_tmp, book)
            outside_tmp = srv.data / f"outside-save-{k}.tmp"
            outside_marker = f"outside-{k}"
            write_file_durably(outside_tmp, wide_xlsx(o.race_rows, outside_marker))
            sheetd_marker = f"sheetd-{k}"
            answer: dict = {}

            def do_insert():
                answer["status"], answer["body"], answer["took"] = timed(
                    srv, "POST", f"/v1/data/{sid}/{SHEET}",
                    {"data": [{"id": 0, "name": sheetd_marker}]}, timeout=120)

            t = threading.Thread(target=do_insert, daemon=True)
            t0 = time.monotonic()
            t.start()
            renamed_at = None
            while t.is_alive():
                if any(n.startswith(".sheetd-tmp-") for n in os.listdir(srv.data)):
                    os.rename(outside_tmp, book)  # the app's save
                    renamed_at = time.monotonic() - t0
                    break
                time.sleep(0.002)
            t.join(130)
            if renamed_at is None:
                missed += 1
                outside_tmp.unlink(missing_ok=True)
                log(f"race {k}: sheetd's write ended ({answer.get('status')}) before its temp "
                    "file was seen; not counted")
                continue
            time.sleep(0.2)
            status, data = request(srv, "GET", f"/v1/spreadsheets/{sid}", timeout=60)
            if status != 200:
                data = book.read_bytes()
            text = parts_text(data)
            race = {
                "outside_kept": outside_marker.encode() in text,
                "sheetd_kept": sheetd_marker.encode() in text,
                "status": answer.get("status"),
                "took": answer.get("took"),
                "renamed_at": renamed_at,
            }
            races.append(race)
            log(f"race {k}: outside save at {renamed_at:.2f} s into sheetd's write "
                f"({race['status']} after {race['took']:.2f} s); outside edit "
                f"{'kept' if race['outside_kept'] else 'LOST'}, sheetd edit "
                f"{'kept' if race['sheetd_kept'] else 'absent'}")
    lost = sum(1 for r in races if not r["outside_kept"])
    both = sum(1 for r in races if r["outside_kept"] and r["sheetd_kept"])
    statuses: dict = {}
    for r in races:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    passed = len(races) == o.races and lost == 0
    figures = (f"outside saves lost={lost}/{len(races)} races; both edits kept={both}; "
               f"sheetd answers {statuses}; races missed={missed}")
    return Result("outsidesave", passed, figures, target)


# --------------------------------------------------------------------------
# 7. unknownids: requests for spreadsheets that do not exist


def sc_unknownids(o) -> Result:
    target = "data directory entry count unchanged (unknown ids and removed workbooks leave nothing)"
    with Server(o, "unknownids") as srv:
        srv.start()
        sid = upload(srv, small_xlsx(["name"]))
        insert(srv, sid, [{"name": "real"}])
        before_entries = count_entries(srv.data)
        rss_before = srv.mem()["VmRSS"]

        statuses: dict = {}
        errors = 0
        lock = threading.Lock()
        counter = iter(range(o.unknown_requests))

        def worker():
            nonlocal errors
            conn = None
            rng = random.Random()
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    break
                uid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                if i % 10 == 7:
                    method, path = "PATCH", f"/v1/data/{uid}/{SHEET}"
                    body = {"type": "filter", "filter": "name:eq:x", "data": {"name": "y"}}
                elif i % 10 == 8:
                    method, path, body = "POST", f"/v1/data/{uid}/{SHEET}", {"data": [{"name": "x"}]}
                else:
                    method, path, body = "DELETE", f"/v1/spreadsheets/{uid}", None
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
                    headers = {}
                    raw = None
                    if body is not None:
                        raw = json.dumps(body).encode()
                        headers["Content-Type"] = "application/json"
                    conn.request(method, path, body=raw, headers=headers)
                    resp = conn.getresponse()
                    resp.read()
                    st = resp.status
                    if resp.will_close:
                        conn.close()
                        conn = None
                except (OSError, http.client.HTTPException):
                    st = None
                    with contextlib.suppress(Exception):
                        conn.close()
                    conn = None
                with lock:
                    statuses[st] = statuses.get(st, 0) + 1
                    if st is None:
                        errors += 1
            if conn is not None:
                conn.close()

        t0 = time.monotonic()
        threads = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(max(60, o.unknown_requests / 50))
        took = time.monotonic() - t0
        time.sleep(0.5)
        after_unknown = count_entries(srv.data)
        rss_after = srv.mem()["VmRSS"]
        log(f"{o.unknown_requests} requests in {took:.1f} s: {statuses}; entries "
            f"{before_entries} -> {after_unknown}")

        # Workbooks that existed, were written to, and were removed.
        for i in range(o.removed_workbooks):
            rid = upload(srv, small_xlsx(["name"]))
            insert(srv, rid, [{"name": f"row-{i}"}])
            st, body = request(srv, "DELETE", f"/v1/spreadsheets/{rid}")
            if st != 204:
                raise HarnessError(f"DELETE of a real workbook answered {st}: {body[:200]!r}")
        time.sleep(0.5)
        after_removed = count_entries(srv.data)
        alive = srv.alive()
    left_unknown = after_unknown - before_entries
    left_removed = after_removed - after_unknown
    passed = left_unknown == 0 and left_removed == 0 and alive and errors == 0
    figures = (f"entries left by {o.unknown_requests} unknown-id requests={left_unknown}, "
               f"by {o.removed_workbooks} removed workbooks={left_removed}; answers {statuses} "
               f"in {took:.1f} s; VmRSS {mib(rss_before)} -> {mib(rss_after)}")
    return Result("unknownids", passed, figures, target)


# --------------------------------------------------------------------------
# 8. sigterm: shutdown with a stalled head, a half-sent body, an idle keep-alive


def sc_sigterm(o) -> Result:
    target = "process exits within 15 s of SIGTERM (with a stalled head and a half-sent body open)"
    socks = []
    with Server(o, "sigterm") as srv:
        srv.start()
        try:
            upload(srv, small_xlsx(["name"]))
            socks.append(half_header_socket(srv.port))
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            total = 15_000_000
            s.sendall(("POST /v1/spreadsheets HTTP/1.1\r\nHost: x\r\n"
                       "Content-Type: application/octet-stream\r\n"
                       f"Content-Length: {total}\r\n\r\n").encode())
            s.sendall(b"\0" * MiB)
            socks.append(s)
            idle = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            idle_status = read_http_response(idle)
            socks.append(idle)
            time.sleep(0.5)
            t0 = time.monotonic()
            srv.proc.send_signal(signal.SIGTERM)
            try:
                code = srv.proc.wait(o.term_timeout)
                took = time.monotonic() - t0
            except subprocess.TimeoutExpired:
                code, took = None, None
        finally:
            for s in socks:
                with contextlib.suppress(OSError):
                    s.close()
    passed = took is not None and took < 15
    if took is None:
        figures = f"still running {o.term_timeout:.0f} s after SIGTERM (killed)"
    else:
        figures = f"exited {code} after {secs(took)}"
    figures += f" (idle keep-alive probe answered {idle_status})"
    return Result("sigterm", passed, figures, target)


# --------------------------------------------------------------------------
# 9. scopes: scoped tokens (contract §11.7) trying to reach beyond their scope

SECRET_MARKERS = ("TOPSECRET", "vault_code", "BOOKB")


def book_xlsx(sheets: list[tuple[str, list[list], str | None]]) -> bytes:
    """A workbook of several sheets, each `(name, rows, table)`: rows[0] is
    the header; `table`, when given, names an Excel table over all rows."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        overrides = [("/xl/workbook.xml", f"{CT_MAIN}.sheet.main+xml"),
                     ("/xl/styles.xml", f"{CT_MAIN}.styles+xml")]
        rels = []
        sheet_tags = []
        tables = 0
        for n, (name, rows, table) in enumerate(sheets, start=1):
            overrides.append((f"/xl/worksheets/sheet{n}.xml", f"{CT_MAIN}.worksheet+xml"))
            rels.append((f"rId{n}", "worksheet", f"worksheets/sheet{n}.xml"))
            sheet_tags.append(f'<sheet name="{xml_escape(name)}" sheetId="{n}" r:id="rId{n}"/>')
            ncols = max(len(r) for r in rows)
            ref = f"A1:{col_name(ncols - 1)}{len(rows)}"
            body = "".join(
                f'<row r="{r}">' + "".join(cell_xml(f"{col_name(c)}{r}", v)
                                           for c, v in enumerate(vals)) + "</row>"
                for r, vals in enumerate(rows, start=1))
            parts = ""
            if table:
                tables += 1
                parts = '<tableParts count="1"><tablePart r:id="rId1"/></tableParts>'
                z.writestr(f"xl/worksheets/_rels/sheet{n}.xml.rels", (
                    f'{XML_DECL}<Relationships xmlns="{NS_PR}"><Relationship Id="rId1" '
                    f'Type="{NS_R}/table" Target="../tables/table{tables}.xml"/></Relationships>'))
                columns = "".join(f'<tableColumn id="{i + 1}" name="{xml_escape(str(h))}"/>'
                                  for i, h in enumerate(rows[0]))
                z.writestr(f"xl/tables/table{tables}.xml", (
                    f'{XML_DECL}<table xmlns="{NS}" id="{tables}" name="{table}" '
                    f'displayName="{table}" ref="{ref}" totalsRowShown="0">'
                    f'<autoFilter ref="{ref}"/><tableColumns count="{len(rows[0])}">{columns}'
                    '</tableColumns><tableStyleInfo name="TableStyleMedium2" showFirstColumn="0" '
                    'showLastColumn="0" showRowStripes="1" showColumnStripes="0"/></table>'))
                overrides.append((f"/xl/tables/table{tables}.xml", f"{CT_MAIN}.table+xml"))
            z.writestr(f"xl/worksheets/sheet{n}.xml", (
                f'{XML_DECL}<worksheet xmlns="{NS}" xmlns:r="{NS_R}"><dimension ref="{ref}"/>'
                f'<sheetData>{body}</sheetData>{parts}</worksheet>'))
        rels.append((f"rId{len(sheets) + 1}", "styles", "styles.xml"))
        z.writestr("[Content_Types].xml", (
            f'{XML_DECL}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            + "".join(f'<Override PartName="{p}" ContentType="{c}"/>' for p, c in overrides)
            + "</Types>"))
        z.writestr("_rels/.rels", (
            f'{XML_DECL}<Relationships xmlns="{NS_PR}"><Relationship Id="rId1" '
            'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="xl/workbook.xml"/></Relationships>'))
        z.writestr("xl/workbook.xml", (
            f'{XML_DECL}<workbook xmlns="{NS}" xmlns:r="{NS_R}"><sheets>{"".join(sheet_tags)}'
            '</sheets></workbook>'))
        z.writestr("xl/_rels/workbook.xml.rels", (
            f'{XML_DECL}<Relationships xmlns="{NS_PR}">'
            + "".join(f'<Relationship Id="{i}" Type="{NS_R}/{t}" Target="{p}"/>' for i, t, p in rels)
            + "</Relationships>"))
        z.writestr("xl/styles.xml", STYLES)
    return out.getvalue()


def call(srv: Server, method: str, path: str, auth: list[str] | str | None = None,
         body=None, content_type: str | None = None,
         timeout: float = 30.0) -> tuple[int | None, dict, bytes]:
    """One request with raw control of the path and the Authorization
    header(s) (a list sends that header several times, values as given).
    Returns (status or None on a socket error, lower-cased headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            content_type = content_type or "application/json"
        conn.putrequest(method, path, skip_accept_encoding=True)
        conn.putheader("Connection", "close")
        for value in ([auth] if isinstance(auth, str) else auth or []):
            conn.putheader("Authorization", value)
        if content_type:
            conn.putheader("Content-Type", content_type)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    except (OSError, http.client.HTTPException) as e:
        return None, {}, repr(e).encode()
    finally:
        conn.close()


def bearer(secret: str) -> str:
    return f"Bearer {secret}"


def pct_first(text: str) -> str:
    """`text` with its first character percent-encoded (`0b1e…` as `%30b1e…`)."""
    return f"%{ord(text[0]):02X}{text[1:]}"


def sc_scopes(o) -> Result:
    target = ("every probe refused with its allowed status (404 out-of-scope workbook, as for an "
              "absent one; 403/404 sheet or permission; 401 expired or unknown), no answer "
              "carries Secret's or B's data, admin's view of A and B unchanged")
    sid_a, sid_b = str(uuid.uuid4()), str(uuid.uuid4())
    absent = str(uuid.uuid4())
    secret = {k: uuid.uuid4().hex + uuid.uuid4().hex
              for k in ("admin", "append", "ro", "expired", "orw", "mgr")}
    admin, append, ro, orw, mgr = (bearer(secret[k]) for k in
                                   ("admin", "append", "ro", "orw", "mgr"))

    def entry(name, key, books, can, sheets=None, expires=None):
        lines = [f'name = "{name}"',
                 f'sha256 = "{hashlib.sha256(secret[key].encode()).hexdigest()}"',
                 "spreadsheets = [" + ", ".join(f'"{b}"' for b in books) + "]",
                 "can = [" + ", ".join(f'"{c}"' for c in can) + "]"]
        if sheets is not None:
            lines.append("sheets = [" + ", ".join(f'"{s}"' for s in sheets) + "]")
        if expires:
            lines.append(f'expires = "{expires}"')
        return "[[tokens]]\n" + "\n".join(lines) + "\n"

    tokens_toml = "".join([
        entry("orders-append", "append", [sid_a], ["insert"], sheets=["Orders"]),
        entry("a-reader", "ro", [sid_a], ["read"]),
        entry("old-key", "expired", ["*"], ["read", "insert", "update", "delete", "manage"],
              expires="2021-01-01T00:00:00Z"),
        entry("orders-form", "orw", [sid_a], ["read", "insert"], sheets=["Orders"]),
        entry("a-owner", "mgr", [sid_a], ["read", "insert", "update", "delete", "manage"]),
    ])
    book_a = book_xlsx([
        ("Orders", [["id", "item", "qty"], [1, "apple", 3], [2, "pear", 5]], None),
        # A table on the Secret sheet named like the Orders sheet, in capitals.
        ("Secret", [["key", "vault_code"], ["k1", "TOPSECRET-1"], ["k2", "TOPSECRET-2"]],
         "ORDERS"),
    ])
    book_b = book_xlsx([
        ("Orders", [["id", "item", "qty"], [1, "BOOKB-apple", 3]], None),
        ("Ledger", [["entry", "amount"], ["BOOKB-salary", 1000]], None),
    ])
    sheets_of = {sid_a: ["Orders", "Secret", "ORDERS"], sid_b: ["Orders", "Ledger"]}
    probes: list[dict] = []
    formula_findings: list[str] = []

    with Server(o, "scopes") as srv:
        tokens_path = srv.root / "tokens.toml"
        tokens_path.write_text(tokens_toml)
        srv.start(extra_args=["--tokens-file", str(tokens_path), "--keep-versions", "10",
                              f"--token={secret['admin']}"])

        def admin_ok(method, path, body=None, ctype=None, want=(200, 201, 204)):
            st, h, data = call(srv, method, path, admin, body, ctype)
            if st not in want:
                raise HarnessError(f"setup {method} {path} answered {st}: {data[:300]!r}")
            return h, data

        # Setup through the admin token: both workbooks under known ids, then
        # writes so that versions exist.
        admin_ok("PUT", f"/v1/spreadsheets/{sid_a}", book_a, "application/octet-stream")
        admin_ok("PUT", f"/v1/spreadsheets/{sid_b}", book_b, "application/octet-stream")
        admin_ok("POST", f"/v1/data/{sid_a}/Orders", {"data": [{"id": 3, "item": "plum", "qty": 1}]})
        admin_ok("POST", f"/v1/data/{sid_a}/Secret",
                 {"data": [{"key": "k3", "vault_code": "TOPSECRET-3"}]})
        admin_ok("PATCH", f"/v1/data/{sid_a}/Orders",
                 {"type": "row", "row": 2, "data": {"qty": 4}})
        admin_ok("POST", f"/v1/data/{sid_b}/Orders", {"data": [{"id": 2, "item": "BOOKB-fig"}]})
        admin_ok("POST", f"/v1/data/{sid_b}/Ledger", {"data": [{"entry": "BOOKB-rent", "amount": -500}]})
        versions = {}
        for sid in (sid_a, sid_b):
            _, data = admin_ok("GET", f"/v1/spreadsheets/{sid}/versions")
            listed = json.loads(data)["versions"]
            if not listed:
                raise HarnessError(f"no versions kept of {sid} after writes")
            # The newest: the last one pruned if writes get through.
            versions[sid] = listed[0]["etag"].strip('"')
        log(f"workbooks A={sid_a} B={sid_b}; newest versions {list(versions.values())}")

        def snapshot() -> dict:
            """The admin's view of A and B; an answer that is not 200 is kept
            as its status (a workbook removed shows as a change, not an error)."""
            def seen(path, parse):
                st, _, data = call(srv, "GET", path, admin)
                return parse(data) if st == 200 else f"answered {st}"
            snap = {}
            for sid in (sid_a, sid_b):
                book_name = "A" if sid == sid_a else "B"
                snap[f"{book_name} download sha256"] = seen(f"/v1/spreadsheets/{sid}",
                                                      lambda d: hashlib.sha256(d).hexdigest())
                book = srv.data / f"{sid}.xlsx"
                snap[f"{book_name} file sha256"] = (hashlib.sha256(book.read_bytes()).hexdigest()
                                              if book.exists() else "absent")
                snap[f"{book_name} sheets"] = seen(f"/v1/data/{sid}", json.loads)
                for sheet in sheets_of[sid]:
                    snap[f"{book_name}/{sheet} rows"] = seen(f"/v1/data/{sid}/{sheet}?limit=1000",
                                                       lambda d: json.loads(d)["data"])
                snap[f"{book_name} versions"] = seen(f"/v1/spreadsheets/{sid}/versions", json.loads)
            snap["workbooks"] = seen("/v1/spreadsheets", lambda d: sorted(
                w["spreadsheet_id"] for w in json.loads(d)["spreadsheets"]))
            snap["data dir"] = sorted(str(p.relative_to(srv.data)) for p in srv.data.rglob("*")
                                      if ".sheetd-locks" not in p.parts)
            return snap

        before = snapshot()

        def leaks(data: bytes, extra=()) -> list[str]:
            text = data.decode("utf-8", "replace")
            return [m for m in (*SECRET_MARKERS, *extra) if m in text]

        def probe(group, label, auth, method, path, body=None, ctype=None,
                  allowed=(403, 404), forbid=(), check=None):
            st, h, data = call(srv, method, path, auth, body, ctype)
            problems = []
            if st not in allowed:
                problems.append(f"status {st} not in {list(allowed)}")
            found = leaks(data, forbid)
            if found:
                problems.append(f"answer carries {found}")
            if check:
                problems.extend(check(st, h, data))
            probes.append({"group": group, "label": label, "status": st,
                           "problems": problems, "method": method, "path": path,
                           "answer": data[:300]})
            return st, h, data

        # 1. Out-of-scope workbook B, by every route, through each scoped
        # token, with the id spelled four ways: each answer must be the one
        # an absent id gets, with no ETag or Last-Modified of B.
        upload_bytes = small_xlsx(["a"], [["x"]])
        ins = {"data": [{"id": 99, "item": "INJECTED"}]}
        routes = [
            ("GET", "/v1/data/{ID}/Orders", None, None),
            ("HEAD", "/v1/data/{ID}/Orders", None, None),
            ("GET", "/v1/data/{ID}/Ledger", None, None),
            ("POST", "/v1/data/{ID}/Orders", ins, None),
            ("POST", "/v1/data/{ID}/Orders?on_conflict=id", ins, None),
            ("PATCH", "/v1/data/{ID}/Orders", {"type": "row", "row": 2, "data": {"item": "X"}}, None),
            ("DELETE", "/v1/data/{ID}/Orders", {"type": "row", "row": 2}, None),
            ("GET", "/v1/data/{ID}", None, None),
            ("POST", "/v1/data/{ID}", {"name": "Evil", "columns": ["a"]}, None),
            ("GET", "/v1/spreadsheets/{ID}", None, None),
            ("PUT", "/v1/spreadsheets/{ID}", upload_bytes, "application/octet-stream"),
            ("GET", "/v1/spreadsheets/{ID}/versions", None, None),
            ("GET", "/v1/spreadsheets/{ID}/versions/{V}", None, None),
            ("POST", "/v1/spreadsheets/{ID}/versions/{V}/restore", None, None),
            ("POST", "/v1/batch/{ID}", {"operations": [{"op": "insert", "sheet": "Orders",
                                                        "data": ins["data"]}]}, None),
            ("DELETE", "/v1/spreadsheets/{ID}", None, None),  # last: it would remove B
        ]
        spellings = [("lower", str.lower), ("upper", str.upper), ("%-first", pct_first),
                     ("%2D", lambda s: s.replace("-", "%2D"))]
        for tname, tok in (("orders-append", append), ("a-reader", ro), ("orders-form", orw),
                           ("a-owner", mgr)):
            for method, tmpl, body, ctype in routes:
                # B's newest version as it stands (writes that got through
                # may have pruned the one seen at setup).
                st, _, data = call(srv, "GET", f"/v1/spreadsheets/{sid_b}/versions", admin)
                if st == 200 and json.loads(data)["versions"]:
                    versions[sid_b] = json.loads(data)["versions"][0]["etag"].strip('"')
                for sname, spell in spellings:
                    def mk(sid, tmpl=tmpl, spell=spell):
                        return tmpl.replace("{ID}", spell(sid)).replace("{V}", versions[sid_b])
                    twin = call(srv, method, mk(absent), tok, body, ctype)

                    def as_absent(st, h, data, twin=twin):
                        out = []
                        if (st, data) != (twin[0], twin[2]):
                            out.append(f"differs from an absent id's answer ({twin[0]} "
                                       f"{twin[2][:120]!r})")
                        if "etag" in h or "last-modified" in h:
                            out.append("carries B's ETag/Last-Modified")
                        return out
                    # 403 passes only when an absent id gets the same answer
                    # (a permission the token lacks whatever the workbook).
                    probe("workbook B", f"{tname} {method} {tmpl} ({sname})", tok, method,
                          mk(sid_b), body, ctype, allowed=(403, 404), check=as_absent)

        # B never in the scoped tokens' listings.
        def no_b(st, h, data):
            text = data.decode("utf-8", "replace").lower()
            out = ["lists B"] if sid_b in text else []
            if st == 200:
                listed = json.loads(data)
                if listed.get("total") != 1 or len(listed.get("spreadsheets", [])) > 1:
                    out.append(f"total {listed.get('total')}, "
                               f"{len(listed.get('spreadsheets', []))} listed (only A reached)")
            return out
        for tname, tok in (("orders-append", append), ("a-reader", ro), ("orders-form", orw),
                           ("a-owner", mgr)):
            for q in ("", "?limit=1000", "?offset=1"):
                probe("listing", f"{tname} GET /v1/spreadsheets{q}", tok, "GET",
                      f"/v1/spreadsheets{q}", allowed=(200, 403), check=no_b)
        # The sheet-scoped reader sees only Orders in listings.
        probe("listing", "orders-form GET /v1/data/A (sheets)", orw, "GET", f"/v1/data/{sid_a}",
              allowed=(200, 403), forbid=("Secret", "ORDERS"))
        probe("listing", "orders-form GET /v1/spreadsheets (sheets)", orw, "GET",
              "/v1/spreadsheets", allowed=(200, 403), forbid=("Secret", "ORDERS"))

        # 2. Sheet-name tricks on the sheet-scoped tokens against A: never
        # Secret (nor its table ORDERS), whatever the spelling.
        other_names = ["Secret", "secret", "SECRET", "ORDERS", "Orders%20",
                       "%20Orders", "Orders.", "Orders%2E", "Orders%09", "Orders%00",
                       "S%65cret", "%53ecret", "ORD%45RS", "Ord%2565rs", "Orders%2F..%2FSecret",
                       "Orders%2F%2E%2E%2FSecret", "Orders%E2%80%8B", "%EF%BC%AFrders",
                       "Secret%23", "Orders%3BSecret"]
        odd_paths = [f"/v1/data/{sid_a}/Orders/../Secret", f"/v1/data/{sid_a}/./Secret",
                     f"/v1/data/{sid_a}/Secret/", f"/v1/data/{sid_a}//Secret",
                     f"/v1//data/{sid_a}/Secret", f"//v1/data/{sid_a}/Secret",
                     f"/v1/data/{sid_a}/Orders/%2E%2E/Secret", f"/v1/data/{sid_a}/Orders/"]
        secret_ins = {"data": [{"key": "INJECTED", "_B": "INJECTED"}]}
        tricky = {"GET": None, "POST": secret_ins,
                  "PATCH": {"type": "row", "row": 2, "data": {"_B": "INJECTED"}},
                  "DELETE": {"type": "row", "row": 2}}
        for tname, tok in (("orders-append", append), ("orders-form", orw)):
            for name in other_names:
                for method, body in tricky.items():
                    probe("sheet names", f"{tname} {method} {name}", tok, method,
                          f"/v1/data/{sid_a}/{name}", body, allowed=(400, 403, 404))
            for path in odd_paths:
                for method, body in tricky.items():
                    probe("sheet names", f"{tname} {method} {path.replace(sid_a, 'A')}", tok,
                          method, path, body, allowed=(400, 403, 404))
        # Spellings of Orders itself (`orders` leads to the sheet Orders, as
        # any request's name does; `ORDERS` is the table on Secret, above):
        # the append-only token still may not read, update or delete there.
        for name in ["Orders", "orders", "Ord%65rs", "%4Frders", "%4F%72%64%65%72%73"]:
            for method, body in tricky.items():
                if method == "POST":
                    continue
                probe("sheet names", f"orders-append {method} {name}", append, method,
                      f"/v1/data/{sid_a}/{name}", body, allowed=(403,))
        # Letter-form columns and _row keys.
        probe("columns", "orders-append GET Orders?columns=_A,_B", append, "GET",
              f"/v1/data/{sid_a}/Orders?columns=_A,_B")
        probe("columns", "orders-append PATCH Orders _B", append, "PATCH",
              f"/v1/data/{sid_a}/Orders", {"type": "filter", "filter": "_A:gte:0", "data": {"_B": "X"}})
        probe("columns", "orders-append POST Orders with _row 2", append, "POST",
              f"/v1/data/{sid_a}/Orders", {"data": [{"_row": 2, "item": "INJECTED"}]},
              allowed=(400, 403))
        probe("columns", "orders-form GET Orders?columns=_D,_E", orw, "GET",
              f"/v1/data/{sid_a}/Orders?columns=_D,_E", allowed=(200, 400, 403))
        probe("columns", "orders-form GET Orders?header_row=1&columns=_A", orw, "GET",
              f"/v1/data/{sid_a}/Orders?header_row=1&columns=_A", allowed=(200, 400, 403))

        # 3. Permission escapes of the append-only token on Orders.
        up = {"data": [{"id": 1, "item": "UPSERTED"}]}
        for q in ("on_conflict=id", "on%5Fconflict=id", "%6Fn_conflict=id",
                  "on_conflict%3Did", "header_row=1&on_conflict=id", "on_conflict=id&on_conflict=id",
                  "ON_CONFLICT=id", "on_conflict=%69d"):
            probe("permissions", f"orders-append POST Orders?{q}", append, "POST",
                  f"/v1/data/{sid_a}/Orders?{q}", up, allowed=(400, 403))
        for tname, tok in (("orders-append", append), ("orders-form", orw)):
            probe("permissions", f"{tname} PATCH Orders row", tok, "PATCH",
                  f"/v1/data/{sid_a}/Orders", {"type": "row", "row": 2, "data": {"item": "X"}})
            probe("permissions", f"{tname} PATCH Orders rows", tok, "PATCH",
                  f"/v1/data/{sid_a}/Orders", {"type": "rows", "data": [{"_row": 2, "item": "X"}]})
            probe("permissions", f"{tname} DELETE Orders row", tok, "DELETE",
                  f"/v1/data/{sid_a}/Orders", {"type": "row", "row": 2})
            probe("permissions", f"{tname} DELETE Orders filter", tok, "DELETE",
                  f"/v1/data/{sid_a}/Orders", {"type": "filter", "filter": "id:gte:0"})
            good = {"op": "insert", "sheet": "Orders", "data": [{"id": 50, "item": "INJECTED"}]}
            batches = {
                "delete op": [good, {"op": "delete", "sheet": "Orders", "type": "row", "row": 2}],
                "update op": [good, {"op": "update", "sheet": "Orders", "type": "row", "row": 2,
                                     "data": {"item": "X"}}],
                "upsert op": [{**good, "on_conflict": "id", "data": [{"id": 1, "item": "X"}]}],
                "insert Secret": [good, {"op": "insert", "sheet": "Secret",
                                         "data": [{"key": "INJECTED"}]}],
                "insert secret": [{"op": "insert", "sheet": "secret", "data": [{"key": "X"}]}],
                "insert ORDERS table": [{"op": "insert", "sheet": "ORDERS",
                                         "data": [{"key": "X"}]}],
                "insert Ord%65rs": [{"op": "insert", "sheet": "Ord%65rs", "data": [{"id": 52}]}],
                "insert 'Orders '": [{"op": "insert", "sheet": "Orders ", "data": [{"id": 53}]}],
                "delete Secret": [{"op": "delete", "sheet": "Secret", "type": "row", "row": 2}],
                "unknown op": [good, {"op": "replace", "sheet": "Orders"}],
            }
            for label, ops in batches.items():
                probe("permissions", f"{tname} batch {label}", tok, "POST", f"/v1/batch/{sid_a}",
                      {"operations": ops}, allowed=(400, 403, 404))
        for tname, tok in (("orders-append", append), ("orders-form", orw), ("a-reader", ro)):
            manage = [
                ("add sheet", "POST", f"/v1/data/{sid_a}", {"name": "Evil", "columns": ["a"]}, None),
                ("add sheet Orders2", "POST", f"/v1/data/{sid_a}",
                 {"name": "Orders2", "columns": ["a"]}, None),
                ("upload", "POST", "/v1/spreadsheets", upload_bytes, "application/octet-stream"),
                ("create JSON", "POST", "/v1/spreadsheets",
                 {"sheets": [{"name": "Orders", "columns": ["a"]}]}, None),
                ("PUT A", "PUT", f"/v1/spreadsheets/{sid_a}", upload_bytes, "application/octet-stream"),
                ("PUT A JSON", "PUT", f"/v1/spreadsheets/{sid_a}",
                 {"sheets": [{"name": "Orders", "columns": ["a"]}]}, None),
                ("PUT new id", "PUT", f"/v1/spreadsheets/{absent}", upload_bytes,
                 "application/octet-stream"),
                ("DELETE A", "DELETE", f"/v1/spreadsheets/{sid_a}", None, None),
                ("restore", "POST", f"/v1/spreadsheets/{sid_a}/versions/{versions[sid_a]}/restore",
                 None, None),
            ]
            for label, method, path, body, ctype in manage:
                probe("permissions", f"{tname} {label}", tok, method, path, body, ctype)
        for tname, tok in (("orders-append", append), ("orders-form", orw)):
            for label, path in (("download A", f"/v1/spreadsheets/{sid_a}"),
                                ("versions A", f"/v1/spreadsheets/{sid_a}/versions"),
                                ("version A", f"/v1/spreadsheets/{sid_a}/versions/{versions[sid_a]}")):
                probe("permissions", f"{tname} {label}", tok, "GET", path)
        probe("permissions", "orders-append GET A sheets", append, "GET", f"/v1/data/{sid_a}")
        probe("permissions", "orders-append GET Orders", append, "GET", f"/v1/data/{sid_a}/Orders")
        probe("permissions", "orders-append HEAD Orders", append, "HEAD", f"/v1/data/{sid_a}/Orders")
        # The read-only token writing.
        for sheet in ("Orders", "Secret", "ORDERS"):
            for method, body in (("POST", {"data": [{"_A": "INJECTED"}]}),
                                 ("PATCH", {"type": "row", "row": 2, "data": {"_A": "X"}}),
                                 ("DELETE", {"type": "row", "row": 2})):
                probe("read-only", f"a-reader {method} {sheet}", ro, method,
                      f"/v1/data/{sid_a}/{sheet}", body, allowed=(403,))
        probe("read-only", "a-reader upsert Orders", ro, "POST",
              f"/v1/data/{sid_a}/Orders?on_conflict=id", up, allowed=(403,))
        probe("read-only", "a-reader upsert Orders (on%5Fconflict)", ro, "POST",
              f"/v1/data/{sid_a}/Orders?on%5Fconflict=id", up, allowed=(403,))
        probe("read-only", "a-reader batch insert", ro, "POST", f"/v1/batch/{sid_a}",
              {"operations": [{"op": "insert", "sheet": "Orders", "data": [{"id": 7}]}]},
              allowed=(403,))

        # 4. Expired, unknown and oddly written tokens.
        s_app, s_ro, s_exp = secret["append"], secret["ro"], secret["expired"]
        reqs = [("GET", f"/v1/data/{sid_a}/Secret", None),
                ("POST", f"/v1/data/{sid_a}/Orders", {"data": [{"id": 60, "item": "INJECTED"}]}),
                ("GET", "/v1/spreadsheets", None),
                ("DELETE", f"/v1/spreadsheets/{sid_b}", None)]
        for label, header in [
                ("expired", bearer(s_exp)), ("expired lower-case scheme", f"bearer {s_exp}"),
                ("expired trailing space", f"Bearer {s_exp} "), ("expired tab", f"Bearer\t{s_exp}"),
                ("expired upper-case", bearer(s_exp.upper())),
                ("hash of the admin secret", bearer(hashlib.sha256(secret["admin"].encode()).hexdigest())),
                ("admin secret cut by one", bearer(secret["admin"][:-1])),
                ("admin secret inner space", bearer(secret["admin"][:10] + " " + secret["admin"][10:])),
                ("no scheme", secret["admin"]), ("Basic", f"Basic {secret['admin']}"),
                ("empty", "Bearer "), ("append + admin in one", f"Bearer {s_app} {secret['admin']}"),
                ("append, admin comma", f"Bearer {s_app}, Bearer {secret['admin']}")]:
            for method, path, body in reqs:
                probe("tokens", f"{label}: {method} {path.replace(sid_a, 'A').replace(sid_b, 'B')}",
                      header, method, path, body, allowed=(401,))
        # Whitespace around a scoped secret is the same token: still its scope.
        for label, header in [("append double space", f"Bearer  {s_app}"),
                              ("append trailing tab", f"Bearer {s_app}\t"),
                              ("append BEARER", f"BEARER {s_app}"),
                              ("append leading space", f" Bearer {s_app}"),
                              ("ro trailing space", f"Bearer {s_ro} "),
                              ("ro tab", f"Bearer\t{s_ro}")]:
            tok_ro = label.startswith("ro")
            probe("tokens", f"{label}: POST Secret", header, "POST", f"/v1/data/{sid_a}/Secret",
                  secret_ins, allowed=(401, 403))
            probe("tokens", f"{label}: PATCH Orders", header, "PATCH", f"/v1/data/{sid_a}/Orders",
                  {"type": "row", "row": 2, "data": {"item": "X"}}, allowed=(401, 403))
            probe("tokens", f"{label}: GET B", header, "GET", f"/v1/data/{sid_b}/Orders",
                  allowed=(401, 404))
            if not tok_ro:
                probe("tokens", f"{label}: GET Orders", header, "GET",
                      f"/v1/data/{sid_a}/Orders", allowed=(401, 403))
        # Two Authorization headers: a scoped or expired one first.
        for label, headers in [("append then expired", [bearer(s_app), bearer(s_exp)]),
                               ("expired then append", [bearer(s_exp), bearer(s_app)]),
                               ("ro then append", [bearer(s_ro), bearer(s_app)])]:
            probe("tokens", f"{label}: POST Secret", headers, "POST", f"/v1/data/{sid_a}/Secret",
                  secret_ins, allowed=(400, 401, 403))
            probe("tokens", f"{label}: DELETE Orders row", headers, "DELETE",
                  f"/v1/data/{sid_a}/Orders", {"type": "row", "row": 2}, allowed=(400, 401, 403))

        # Control: the trick names the admin token reads Secret through (so the
        # refusals above are the scope's, not names that lead nowhere).
        reach_secret = [n for n in other_names
                        if leaks(call(srv, "GET", f"/v1/data/{sid_a}/{n}", admin)[2])]
        log(f"trick names that reach Secret for the admin: {reach_secret}")
        by_status: dict = {}
        for p in probes:
            key = (p["group"], p["status"])
            by_status[key] = by_status.get(key, 0) + 1
        log(f"statuses by group: {by_status}")

        time.sleep(0.3)
        after = snapshot()
        changed = [k for k in before if before[k] != after.get(k)]
        alive = srv.alive()

        # 5. Formulas in a reachable sheet that read an unreachable one: the
        # Orders-only token (read, insert) writes a formula pointing at
        # Secret and reads its own row back. Run last: a 201 here writes.
        for formula in ("=Secret!B2", "=INDIRECT(\"Secret!B3\")", "=ORDERS[vault_code]",
                        "=INDEX(ORDERS[vault_code],1)", "=CONCAT(Secret!B2:B4)"):
            st, _, data = call(srv, "POST", f"/v1/data/{sid_a}/Orders", orw,
                               {"data": [{"id": 900, "item": {"formula": formula}}]})
            detail = f"insert {st}"
            if st == 201:
                rst, _, rdata = call(srv, "GET", f"/v1/data/{sid_a}/Orders?filter=id:eq:900", orw)
                found = leaks(rdata)
                detail += f", read back {rst}"
                if found:
                    formula_findings.append(f"{formula}: read back {rdata[:200]!r}")
                call(srv, "DELETE", f"/v1/data/{sid_a}/Orders", admin,
                     {"type": "filter", "filter": "id:eq:900"})
            elif leaks(data):
                formula_findings.append(f"{formula}: error answer {data[:200]!r}")
            log(f"formula {formula}: {detail}")

    bad = [p for p in probes if p["problems"]]
    for p in bad:
        log(f"ESCAPE? [{p['group']}] {p['label']}: {p['method']} {p['path']} -> "
            f"{p['status']} {'; '.join(p['problems'])}; answer {p['answer'][:160]!r}")
    for c in changed:
        log(f"CHANGED: {c}: {before[c]!r} -> {after.get(c)!r}")
    for f in formula_findings:
        log(f"FORMULA LEAK: {f}")
    by_group: dict = {}
    for p in probes:
        g = by_group.setdefault(p["group"], [0, 0])
        g[0] += 1
        g[1] += bool(p["problems"])
    statuses: dict = {}
    for p in probes:
        statuses[p["status"]] = statuses.get(p["status"], 0) + 1
    passed = not bad and not changed and not formula_findings and alive
    figures = (f"{len(probes) - len(bad)}/{len(probes)} probes refused as allowed ("
               + ", ".join(f"{g} {n - b}/{n}" for g, (n, b) in by_group.items())
               + f"); statuses {dict(sorted(statuses.items(), key=lambda kv: str(kv[0])))}; "
               f"A and B {'unchanged' if not changed else 'CHANGED: ' + ', '.join(changed)}; "
               f"formula reads of Secret {len(formula_findings)}/5; "
               f"{len(reach_secret)}/{len(other_names)} trick names reach Secret for the admin")
    return Result("scopes", passed, figures, target)


# --------------------------------------------------------------------------
# Command line

SUMMARY = {
    "stalled": "3,000 half-sent request heads held open; /healthz latency and RSS",
    "hoard": "24 clients ask for 100k rows x 10 columns and never read",
    "ssbomb": "2.4 MB workbook with 60 million shared strings: upload, and a dropped-in copy read once",
    "infilter": "100,000-value in filter on 10k rows beside an insert loop",
    "badneighbour": "190 valid inserts and 10 with 20,000 emoji, concurrently",
    "outsidesave": "an app's save (temp + rename) during a long sheetd write, 5 races",
    "unknownids": "DELETE/PATCH/POST for ids that do not exist, and removed workbooks: files left behind",
    "sigterm": "SIGTERM with a stalled head, a half-sent body and an idle keep-alive open",
    "scopes": "scoped tokens reaching for another workbook, sheet or permission: refused, nothing changed",
}

SCENARIOS = {
    "stalled": (sc_stalled, lambda o: 120 + o.stall_wait),
    "hoard": (sc_hoard, lambda o: 300),
    "ssbomb": (sc_ssbomb, lambda o: 180 + 2 * o.bomb_timeout),
    "infilter": (sc_infilter, lambda o: 120 + 2 * o.patch_timeout),
    "badneighbour": (sc_badneighbour, lambda o: 240),
    "outsidesave": (sc_outsidesave, lambda o: 120 + 60 * o.races),
    "unknownids": (sc_unknownids, lambda o: 120 + o.unknown_requests / 50),
    "sigterm": (sc_sigterm, lambda o: 60 + o.term_timeout),
    "scopes": (sc_scopes, lambda o: 180),
}


def run_one(name: str, o) -> Result:
    fn, bound = SCENARIOS[name]
    seconds = o.deadline or bound(o)
    print(f"== {name} (deadline {seconds:.0f} s)", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    try:
        with deadline(seconds, name):
            result = fn(o)
    except (ScenarioTimeout, HarnessError) as e:
        result = Result(name, False, "", "", error=str(e))
    except Exception as e:  # a harness bug: report it, keep going in `all`
        result = Result(name, False, "", "", error=f"{type(e).__name__}: {e}")
    finally:
        kill_all_servers()
    result.extra["seconds"] = time.monotonic() - t0
    print(result.line(), flush=True)
    return result


def add_common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("common")
    g.add_argument("--binary", default=str(DEFAULT_BINARY), help="server binary")
    g.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for every server started, repeatable; "
                        "write --server-arg=--flag=value")
    g.add_argument("--rss-abort-mib", type=int, default=8192,
                   help="kill the server when its RSS passes this many MiB (protects the machine)")
    g.add_argument("--deadline", type=float, default=0,
                   help="whole-scenario time bound in seconds (0: each scenario's own)")
    g.add_argument("--keep-tmp", action="store_true", help="keep the temp directories")


def add_options(name: str, p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(name)
    a = g.add_argument
    if name == "stalled":
        a("--connections", type=int, default=3000, help="stalled connections to open")
        a("--stall-wait", type=float, default=20,
          help="seconds after opening them to count the connections the server closed")
        a("--probe-timeout", type=float, default=10, help="socket timeout of each /healthz probe")
        a("--require-close", action="store_true",
          help="also require the server to close every stalled connection within "
               "--stall-wait (otherwise only reported)")
    elif name == "hoard":
        a("--hoarders", type=int, default=24, help="clients that never read their answer")
        a("--hoard-rows", type=int, default=100_000, help="rows of the 10-column sheet, all asked for")
        a("--hold", type=float, default=8,
          help="least seconds to hold the answers unread (longer while RSS grows, at most 60)")
    elif name == "ssbomb":
        a("--bomb-strings", type=int, default=60_000_000, help="shared strings in the bomb")
        a("--bomb-timeout", type=float, default=30,
          help="seconds to wait for each answer (the target is 20)")
    elif name == "infilter":
        a("--filter-rows", type=int, default=10_000, help="data rows of the sheet")
        a("--in-values", type=int, default=100_000, help="values of the in filter")
        a("--patch-timeout", type=float, default=60, help="seconds to wait for the PATCH")
    elif name == "badneighbour":
        a("--valid-inserts", type=int, default=190, help="valid one-row inserts")
        a("--bad-inserts", type=int, default=10, help="inserts with an over-long text")
        a("--emoji", type=int, default=20_000, help="emoji in each bad insert's text")
        a("--concurrency", type=int, default=40,
          help="client threads (below the server's default --queue-limit of 64)")
    elif name == "outsidesave":
        a("--races", type=int, default=5, help="races to run")
        a("--race-rows", type=int, default=60_000, help="rows of the raced workbook (10 columns)")
    elif name == "unknownids":
        a("--unknown-requests", type=int, default=5000,
          help="requests for random ids (8 in 10 DELETE, 1 PATCH, 1 POST); the issue used 50000")
        a("--removed-workbooks", type=int, default=20,
          help="workbooks uploaded, written to and deleted")
    elif name == "sigterm":
        a("--term-timeout", type=float, default=20,
          help="seconds to wait for the exit before SIGKILL (the target is 15)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    sub = ap.add_subparsers(dest="scenario", required=True)
    for name in SCENARIOS:
        p = sub.add_parser(name, help=SUMMARY[name], description=SUMMARY[name],
                           formatter_class=argparse.ArgumentDefaultsHelpFormatter)
        add_common(p)
        add_options(name, p)
    p = sub.add_parser("all", help="every scenario in turn, then a markdown table",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_common(p)
    for name in SCENARIOS:
        add_options(name, p)
    o = ap.parse_args(argv)

    names = list(SCENARIOS) if o.scenario == "all" else [o.scenario]
    results = [run_one(n, o) for n in names]
    if o.scenario == "all":
        print()
        print("| scenario | measured | target | result |")
        print("|---|---|---|---|")
        for r in results:
            measured = (r.error + " " + r.figures).strip() if r.error else r.figures
            print(f"| {r.name} | {measured.replace('|', '/')} | {r.target} | {r.verdict()} |")
        total = sum(r.extra["seconds"] for r in results)
        print(f"\n{sum(r.passed for r in results)}/{len(results)} passed in {total:.0f} s")
    if any(r.error for r in results):
        return 2
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
