"""Open a workbook in headless LibreOffice, recalculate every formula and
save it as .xlsx.  Run by recalculate.sh, which picks a Python that can
`import uno` and makes the temporary directory; see README.md next to this
file.

    PYTHON-WITH-UNO recalculate.py --soffice SOFFICE --profile DIR \
        [--timeout SECONDS] [--label NAME] IN OUT

DIR is an empty directory used as
LibreOffice's user profile for this run only; it must not be shared with a
running LibreOffice.

What happens:
1. soffice starts headless with the profile DIR and listens on a named pipe
   whose name is unique to this run (so runs can go on side by side).  The
   profile is seeded with "recalculation on file load: always"
   (org.openoffice.Office.Calc/Formula/Load/OOXMLRecalcMode = 0).
2. IN is loaded hidden with the filter "Calc MS Excel 2007 XML".
3. XCalculatable.calculateAll() recalculates every formula cell, dirty or
   not (in Calc this is the hard recalculation, Ctrl+Shift+F9), so a cached
   value in IN is never carried over.
4. The document is stored to OUT with the filter "Calc MS Excel 2007 XML".

Exit status 0 on success; 1 with a message on stderr when anything fails
(soffice does not start or dies, IN does not load or is not a spreadsheet,
the store fails, or the whole run takes longer than --timeout seconds).
soffice (and whatever it started) is killed at the end of a run that did
not shut it down cleanly: it runs in a process group of its own, and only
that group is signalled.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException

FILTER = "Calc MS Excel 2007 XML"

# The user layer of a fresh profile: recalculate .xlsx formulas on load.
REGISTRY = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" \
xmlns:xs="http://www.w3.org/2001/XMLSchema" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">\
<prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


class Failure(Exception):
    """A reason to stop with exit status 1."""


def props(**values) -> tuple:
    """A tuple of com.sun.star.beans.PropertyValue, as UNO calls want."""
    result = []
    for name, value in values.items():
        prop = PropertyValue()
        prop.Name = name
        prop.Value = value
        result.append(prop)
    return tuple(result)


class Office:
    """One soffice process listening on a pipe of its own."""

    def __init__(self, soffice: str, profile: Path, log: Path):
        self.pipe = f"sheetd_recalc_{os.getpid()}_{secrets.token_hex(6)}"
        user = profile / "user"
        user.mkdir(parents=True, exist_ok=True)
        (user / "registrymodifications.xcu").write_text(REGISTRY, encoding="utf-8")
        self.log_path = log
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(
            [
                soffice,
                f"-env:UserInstallation={profile.as_uri()}",
                "--headless",
                "--invisible",
                "--nologo",
                "--nodefault",
                "--norestore",
                "--nolockcheck",
                f"--accept=pipe,name={self.pipe};urp;StarOffice.ComponentContext",
            ],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            # A process group of its own, so that kill() reaches soffice.bin
            # (started by the soffice script through oosplash) and nothing else.
            start_new_session=True,
        )
        self.desktop = None
        self.profile_url = profile.as_uri()

    def log_tail(self) -> str:
        self.log.flush()
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        # Every headless start without Java prints this; it says nothing.
        text = "\n".join(line for line in text.splitlines()
                         if "failed to launch javaldx" not in line).strip()
        return f"\nsoffice output:\n{text[-2000:]}" if text else ""

    def connect(self, deadline: float) -> None:
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext(
            "com.sun.star.bridge.UnoUrlResolver", local)
        url = f"uno:pipe,name={self.pipe};urp;StarOffice.ComponentContext"
        while True:
            if self.proc.poll() is not None:
                raise Failure(f"soffice exited with status {self.proc.returncode} "
                              f"before accepting a connection{self.log_tail()}")
            try:
                ctx = resolver.resolve(url)
                break
            except NoConnectException:
                if time.monotonic() > deadline:
                    raise Failure("soffice did not accept a connection in time"
                                  + self.log_tail()) from None
                time.sleep(0.2)
        self.desktop = ctx.ServiceManager.createInstanceWithContext(
            "com.sun.star.frame.Desktop", ctx)

    def shutdown(self) -> None:
        """Ask soffice to quit; kill its process group if it does not."""
        if self.desktop is not None:
            try:
                self.desktop.terminate()
            except Exception:  # the bridge goes away while soffice quits
                pass
            self.desktop = None
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.kill()
        self.log.close()
        self.remove_pipes()

    def remove_pipes(self) -> None:
        """Remove the two pipes (Unix sockets) of this soffice, which it
        leaves behind when it is killed: /tmp/OSL_PIPE_<uid>_<name> for the
        --accept pipe and for its single-instance pipe, whose name is
        SingleOfficeIPC_ plus the MD5 of the profile URL in UTF-16LE, each
        byte in hex without zero padding (LibreOffice's CreateMD5FromString).
        Both names are unique to this run."""
        digest = hashlib.md5(self.profile_url.encode("utf-16-le")).digest()
        ipc = "SingleOfficeIPC_" + "".join(format(b, "x") for b in digest)
        for folder in ("/tmp", "/var/tmp"):
            for name in (self.pipe, ipc):
                path = Path(folder) / f"OSL_PIPE_{os.getuid()}_{name}"
                try:
                    if path.is_socket():
                        path.unlink()
                except OSError:
                    pass

    def kill(self) -> None:
        """SIGKILL soffice's own process group (a no-op once it is gone)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def recalculate(office: Office, source: Path, target: Path, label: str) -> None:
    doc = office.desktop.loadComponentFromURL(
        source.as_uri(), "_blank", 0,
        props(Hidden=True, ReadOnly=True, FilterName=FILTER,
              # No macros run and no dialog waits for an answer.
              MacroExecutionMode=0, UpdateDocMode=0))
    if doc is None:
        raise Failure(f"LibreOffice could not load {label} as .xlsx" + office.log_tail())
    try:
        if not doc.supportsService("com.sun.star.sheet.SpreadsheetDocument"):
            raise Failure(f"{label} did not load as a spreadsheet")
        doc.calculateAll()
        doc.storeToURL(target.as_uri(), props(FilterName=FILTER, Overwrite=True))
    finally:
        try:
            doc.close(True)
        except Exception:
            pass
    if not target.is_file() or target.stat().st_size == 0:
        raise Failure(f"LibreOffice wrote nothing for {label}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soffice", default="soffice")
    parser.add_argument("--profile", required=True, type=Path)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--label", help="how messages name IN (default: its path)")
    parser.add_argument("input", type=Path)
    parser.add_argument("output", type=Path)
    args = parser.parse_args(argv)

    source, target = args.input.resolve(), args.output.resolve()
    label = args.label or str(source)
    start = time.monotonic()
    office = None
    timed_out = threading.Event()

    def on_timeout() -> None:
        # Killing soffice makes the pending UNO call fail at once.
        timed_out.set()
        if office is not None:
            office.kill()

    def on_signal(signum, _frame):
        raise Failure(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    watchdog = threading.Timer(args.timeout, on_timeout)
    watchdog.daemon = True
    try:
        office = Office(args.soffice, args.profile.resolve(), args.profile.resolve() / "soffice.log")
        watchdog.start()
        office.connect(start + args.timeout)
        recalculate(office, source, target, label)
    except (Exception, KeyboardInterrupt) as e:  # Failure, or UNO's error from a dead soffice
        if timed_out.is_set():
            print(f"recalculate: timed out after {args.timeout:g} s on {label}", file=sys.stderr)
        elif isinstance(e, Failure):
            print(f"recalculate: {e}", file=sys.stderr)
        else:
            print(f"recalculate: {type(e).__name__}: {e}"
                  + (office.log_tail() if office else ""), file=sys.stderr)
        return 1
    finally:
        watchdog.cancel()
        if office is not None:
            office.shutdown()
    if timed_out.is_set():
        print(f"recalculate: timed out after {args.timeout:g} s on {label}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
