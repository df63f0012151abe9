#!/usr/bin/env python3
"""The requests of examples/scaling/run.sh, one phase per call.

run.sh starts the instances and nginx, and calls this script between its
own steps (adding an instance, stopping one). Every phase raises on the
first failed check, so the script exits non-zero; standard library only.

Phases:
  load N       store N workbooks under new ids through the proxy, insert a
               row into each, read it back
  verify       every id is always served by the same instance, which is the
               only one whose data directory holds its file; the listings
               of the instances together name every id once
  refusals     what the proxy answers itself, and a token passing through
  rebalance    after an instance was added: move every workbook whose owner
               changed to its new owner (download, PUT, delete)
  outage NAME  with instance NAME stopped: its ids answer 502, others 200,
               and a PUT of one of its ids lands nowhere

The instances file has one line per instance: name, address, data
directory and log file, separated by tabs.
"""

import argparse
import collections
import http.client
import json
import os
import sys
import time
import uuid

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
TIMEOUT = 15  # seconds, for any one request


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def call(address, method, path, body=None, headers=None, token=None):
    """One request on a new connection: (status, headers, body)."""
    host, port = address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=TIMEOUT)
    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        data = response.read()
        got = {k.lower(): v for k, v in response.getheaders()}
        return response.status, got, data
    finally:
        conn.close()


def error_shaped(body):
    """Whether an answer's body is an error in the contract's shape."""
    try:
        value = json.loads(body)
    except ValueError:
        return False
    return value.get("success") is False and isinstance(value.get("error"), str)


class Run:
    def __init__(self, args):
        self.proxy = args.proxy
        self.token = args.token
        self.ids_file = args.ids
        self.fixture = args.fixture
        self.access_log = args.access_log
        self.instances = []
        with open(args.instances, encoding="utf-8") as f:
            for line in f:
                name, address, data_dir, log = line.rstrip("\n").split("\t")
                self.instances.append(
                    {"name": name, "address": address, "dir": data_dir, "log": log}
                )
        self.by_address = {i["address"]: i for i in self.instances}

    def through_proxy(self, method, path, body=None, headers=None, token=True):
        return call(self.proxy, method, path, body, headers, self.token if token else None)

    def direct(self, instance, method, path, body=None, headers=None):
        return call(instance["address"], method, path, body, headers, self.token)

    def ids(self):
        with open(self.ids_file, encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]

    def holders(self, spreadsheet_id):
        """The instances whose data directory holds the id's file."""
        name = f"{spreadsheet_id}.xlsx"
        return [i for i in self.instances if os.path.exists(os.path.join(i["dir"], name))]

    def listing(self, instance):
        status, _, body = self.direct(instance, "GET", "/v1/spreadsheets?limit=100000")
        check(status == 200, f"{instance['name']}: listing answered {status}")
        value = json.loads(body)
        ids = [s["spreadsheet_id"] for s in value["spreadsheets"]]
        check(value["total"] == len(ids), f"{instance['name']}: listing is one page")
        return ids

    # -- phases ---------------------------------------------------------

    def load(self, count):
        with open(self.fixture, "rb") as f:
            book = f.read()
        ids = [str(uuid.uuid4()) for _ in range(count)]
        started = time.monotonic()
        for spreadsheet_id in ids:
            served = set()

            status, headers, body = self.through_proxy(
                "PUT", f"/v1/spreadsheets/{spreadsheet_id}", book, {"Content-Type": XLSX}
            )
            check(status == 201, f"PUT {spreadsheet_id}: {status} {body[:200]!r}")
            served.add(headers.get("x-upstream"))

            status, headers, body = self.through_proxy("GET", f"/v1/data/{spreadsheet_id}")
            check(status == 200, f"sheets of {spreadsheet_id}: {status}")
            sheets = {s["name"]: s for s in json.loads(body)["sheets"]}
            check("name" in sheets.get("People", {}).get("columns", []),
                  f"{spreadsheet_id}: no People sheet with a name column")
            served.add(headers.get("x-upstream"))

            name = f"scaled-{spreadsheet_id[:8]}"
            status, headers, body = self.through_proxy(
                "POST", f"/v1/data/{spreadsheet_id}/People",
                json.dumps({"data": [{"name": name}]}), {"Content-Type": "application/json"},
            )
            check(status == 201 and json.loads(body) == {"inserted": 1},
                  f"insert into {spreadsheet_id}: {status} {body[:200]!r}")
            served.add(headers.get("x-upstream"))

            status, headers, body = self.through_proxy(
                "GET", f"/v1/data/{spreadsheet_id}/People?filter=name:eq:{name}"
            )
            rows = json.loads(body)["data"] if status == 200 else []
            check(len(rows) == 1, f"read back {spreadsheet_id}: {status} {body[:200]!r}")
            served.add(headers.get("x-upstream"))

            check(len(served) == 1 and None not in served,
                  f"{spreadsheet_id}: served by {sorted(map(str, served))}")
        seconds = time.monotonic() - started
        with open(self.ids_file, "w", encoding="utf-8") as f:
            f.write("".join(i + "\n" for i in ids))
        print(f"stored {count} workbooks through the proxy, one row inserted into each "
              f"and read back ({4 * count} requests, {seconds:.1f} s)")

    def verify(self):
        ids = self.ids()
        owners = collections.Counter()
        for spreadsheet_id in ids:
            served, request_ids = set(), []
            for path in [f"/v1/data/{spreadsheet_id}/People?columns=name"] * 3 + [
                f"/v1/spreadsheets/{spreadsheet_id}"
            ]:
                status, headers, body = self.through_proxy("GET", path)
                check(status == 200, f"GET {path}: {status} {body[:200]!r}")
                served.add(headers.get("x-upstream"))
                request_ids.append(headers.get("x-request-id"))
                if path.endswith("?columns=name"):
                    names = [r["name"] for r in json.loads(body)["data"]]
                    check(f"scaled-{spreadsheet_id[:8]}" in names and len(names) == 5,
                          f"{spreadsheet_id}: rows read back are {names}")
                else:
                    check(body[:2] == b"PK", f"{spreadsheet_id}: download is no xlsx")
            check(len(served) == 1, f"{spreadsheet_id}: served by {sorted(map(str, served))}")
            owner = self.by_address.get(served.pop())
            check(owner is not None, f"{spreadsheet_id}: served by an unknown address")
            holders = self.holders(spreadsheet_id)
            check([h["name"] for h in holders] == [owner["name"]],
                  f"{spreadsheet_id}: served by {owner['name']}, file in "
                  f"{[h['name'] for h in holders]}")
            with open(owner["log"], encoding="utf-8", errors="replace") as f:
                log = f.read()
            check(all(r and f"request_id={r} " in log for r in request_ids),
                  f"{spreadsheet_id}: {owner['name']}'s log lacks the requests it answered")
            owners[owner["name"]] += 1

        listed = {}
        for instance in self.instances:
            for spreadsheet_id in self.listing(instance):
                check(spreadsheet_id not in listed,
                      f"{spreadsheet_id} is listed by {listed.get(spreadsheet_id)} "
                      f"and {instance['name']}")
                listed[spreadsheet_id] = instance["name"]
        check(sorted(listed) == sorted(ids),
              f"the listings name {len(listed)} workbooks, {len(ids)} were stored")

        served = self.requests_per_upstream()
        print(f"{len(ids)} workbooks, each read 4 times through the proxy: always the "
              f"same instance, the only one holding its file")
        print(f"  {'instance':<9}{'address':<18}{'workbooks':>10}{'listed':>8}"
              f"{'requests':>10}")
        for i in self.instances:
            count = sum(1 for s in listed.values() if s == i["name"])
            print(f"  {i['name']:<9}{i['address']:<18}{owners[i['name']]:>10}{count:>8}"
                  f"{served[i['address']]:>10}")
        print(f"  {'total':<27}{sum(owners.values()):>10}{len(listed):>8}"
              f"{sum(served[i['address']] for i in self.instances):>10}")

    def requests_per_upstream(self):
        """Requests the proxy sent to each address so far, from its log."""
        counts = collections.Counter()
        with open(self.access_log, encoding="utf-8") as f:
            for line in f:
                for field in line.split():
                    if field.startswith("upstream=") and field != "upstream=-":
                        counts[field[len("upstream="):]] += 1
        return counts

    def refusals(self):
        first = self.ids()[0]
        expectations = [
            ("POST", "/v1/spreadsheets", "/v1/spreadsheets", 405,
             "an upload whose id the server would pick"),
            ("GET", "/v1/spreadsheets", "/v1/spreadsheets", 501,
             "the list of every workbook"),
            ("GET", f"/v1/data/{first.upper()}", "/v1/data/{ID}", 400,
             "an id in capitals"),
        ]
        for method, path, shown, expected, what in expectations:
            status, _, body = self.through_proxy(
                method, path, b"" if method == "POST" else None,
                {"Content-Type": XLSX} if method == "POST" else None,
            )
            check(status == expected and error_shaped(body),
                  f"{method} {path}: {status} {body[:200]!r}")
            print(f"  {method:<5}{shown:<26}{status}  {what}")

        path = f"/v1/data/{first}"
        status, headers, body = self.through_proxy("GET", path, token=False)
        check(status == 401 and headers.get("www-authenticate", "").startswith("Bearer")
              and error_shaped(body), f"GET {path} without a token: {status}")
        print(f"  {'GET':<5}{'/v1/data/{id}':<26}{status}  no token (the instance's answer)")

        big = b"\0" * (16 * 1024 * 1024 + 1)
        path = f"/v1/spreadsheets/{first}"
        status, _, body = self.through_proxy("PUT", path, big, {"Content-Type": XLSX})
        check(status == 413 and error_shaped(body), f"PUT of 16 MiB + 1 byte: {status}")
        print(f"  {'PUT':<5}{'/v1/spreadsheets/{id}':<26}{status}  16 MiB + 1 byte")

    def rebalance(self):
        started = time.monotonic()
        moves = collections.Counter()
        for holder in self.instances:
            for spreadsheet_id in self.listing(holder):
                # Ask the proxy where the id goes now; any answer names it.
                status, headers, _ = self.through_proxy("GET", f"/v1/data/{spreadsheet_id}")
                owner = self.by_address.get(headers.get("x-upstream"))
                check(owner is not None, f"{spreadsheet_id}: no owner ({status})")
                if owner is holder:
                    check(status == 200, f"{spreadsheet_id}: {status} from its holder")
                    continue
                check(status == 404, f"{spreadsheet_id}: {status} from its new owner")
                status, _, book = self.direct(holder, "GET", f"/v1/spreadsheets/{spreadsheet_id}")
                check(status == 200, f"download {spreadsheet_id}: {status}")
                status, _, body = self.through_proxy(
                    "PUT", f"/v1/spreadsheets/{spreadsheet_id}", book, {"Content-Type": XLSX}
                )
                check(status == 201, f"PUT {spreadsheet_id} to {owner['name']}: {status} {body!r}")
                status, _, copy = self.through_proxy("GET", f"/v1/spreadsheets/{spreadsheet_id}")
                check(status == 200 and copy == book, f"{spreadsheet_id}: the copy differs")
                status, _, _ = self.direct(holder, "DELETE", f"/v1/spreadsheets/{spreadsheet_id}")
                check(status == 204, f"delete {spreadsheet_id} from {holder['name']}: {status}")
                moves[(holder["name"], owner["name"])] += 1
        seconds = time.monotonic() - started
        total = sum(moves.values())
        ids = len(self.ids())
        print(f"moved {total} of {ids} workbooks ({100 * total / ids:.0f}%) to their new "
              f"owner in {seconds:.1f} s:")
        for (source, target), count in sorted(moves.items()):
            print(f"  {source} -> {target}: {count}")
        newest = self.instances[-1]["name"]
        check(all(target == newest for _, target in moves),
              f"adding {newest} moved ids between other instances too")

    def outage(self, down_name):
        down = next(i for i in self.instances if i["name"] == down_name)
        answers = collections.Counter()
        victim = None
        for spreadsheet_id in self.ids():
            path = f"/v1/data/{spreadsheet_id}/People?limit=1"
            status, headers, body = self.through_proxy("GET", path)
            on_down = headers.get("x-upstream") == down["address"]
            if on_down:
                check(status == 502 and error_shaped(body), f"GET {path}: {status}")
                victim = victim or spreadsheet_id
            else:
                check(status == 200, f"GET {path}: {status} while {down_name} is down")
            answers[(on_down, status)] += 1
        check(victim is not None, f"no id is held by {down_name}")
        with open(self.fixture, "rb") as f:
            book = f.read()
        status, _, _ = self.through_proxy(
            "PUT", f"/v1/spreadsheets/{victim}", book, {"Content-Type": XLSX}
        )
        holders = [h["name"] for h in self.holders(victim)]
        check(status == 502 and holders == [down_name],
              f"PUT {victim} while {down_name} is down: {status}, file in {holders}")
        print(f"with {down_name} stopped: its {answers[(True, 502)]} ids answer 502, "
              f"the other {answers[(False, 200)]} answer 200; a PUT of one of its ids "
              f"answers 502 and is stored nowhere else")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("phase", choices=["load", "verify", "refusals", "rebalance", "outage"])
    parser.add_argument("argument", nargs="?")
    parser.add_argument("--proxy", required=True, help="the proxy's address, host:port")
    parser.add_argument("--token", required=True)
    parser.add_argument("--instances", required=True, help="the instances file")
    parser.add_argument("--ids", required=True, help="the file of stored ids")
    parser.add_argument("--fixture", required=True, help="the workbook to store")
    parser.add_argument("--access-log", required=True, help="the proxy's access log")
    args = parser.parse_args()
    run = Run(args)
    try:
        if args.phase == "load":
            run.load(int(args.argument))
        elif args.phase == "outage":
            run.outage(args.argument)
        else:
            getattr(run, args.phase)()
    except (Failed, OSError, ValueError, KeyError) as e:
        print(f"FAILED ({args.phase}): {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
