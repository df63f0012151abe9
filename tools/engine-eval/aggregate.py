import os
# Aggregates corpus-<engine>.jsonl into corpus-summary.md
import json, collections, sys
out = []
for e in ["fz", "ic"]:
    files = collections.OrderedDict()
    for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", f"corpus-{e}.jsonl")):
        try: j = json.loads(line)
        except Exception: continue
        files.setdefault(j["file"], []).append(j)
    tot = collections.Counter(); fn = collections.Counter(); crashed = []; per_repo = collections.defaultdict(collections.Counter)
    loaded_files = 0
    for f, recs in files.items():
        repo = f.split("/")[-1].split("__")[0]
        ph = {r["phase"]: r for r in recs}
        if "loaded" in ph: loaded_files += 1
        if "done" in ph:
            for k, v in ph["done"]["counts"].items():
                tot[k] += v; per_repo[repo][k] += v
                if k.startswith("fail:unsupported_function:"): fn[k.split(":",2)[2]] += v
        elif "loaded" in ph and ph["loaded"]["formula_cells"] > 0:
            n = ph["loaded"]["with_cached"]
            rc = ph.get("exit", {}).get("rc")
            crashed.append((f.split("/")[-1], rc, n))
            tot["fail:crash_or_timeout"] += n; per_repo[repo]["fail:crash_or_timeout"] += n
    comp = sum(v for k, v in tot.items() if not k.startswith("skip"))
    ok = tot["ok"]
    out.append(f"## {e}\n\nfiles: {len(files)} (loaded {loaded_files}); compared formula cells: {comp}; equal: {ok} ({100*ok/comp:.2f}%)\n")
    out.append("| outcome | cells |\n|---|---|")
    agg = collections.Counter()
    for k, v in tot.items():
        kk = "fail:unsupported_function (all names)" if k.startswith("fail:unsupported_function:") else k
        agg[kk] += v
    for k, v in agg.most_common(): out.append(f"| {k} | {v} |")
    out.append("\nper repo (equal / compared):")
    for r, c in per_repo.items():
        cc = sum(v for k, v in c.items() if not k.startswith("skip"))
        out.append(f"- {r}: {c['ok']} / {cc} ({100*c['ok']/max(cc,1):.1f}%)")
    out.append("\nunsupported functions (cells): " + ", ".join(f"{k} {v}" for k, v in fn.most_common(25)))
    out.append("\ncrashed/timed-out workbooks (name, exit code, cells): " + repr(crashed) + "\n")
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "corpus-summary.md"), "w").write("\n".join(out))
print("\n".join(out))

# Adjusted rate: drop the workbook calamine misreads (51710.xlsx) and volatile-function cells.
adj = []
for e in ["fz", "ic"]:
    ok = comp = 0
    for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", f"corpus-{e}.jsonl")):
        j = json.loads(line)
        if j["phase"] != "done" or "51710" in j["file"]: continue
        for k, v in j["counts"].items():
            if k.startswith("skip") or k == "diff:volatile_function": continue
            comp += v; ok += v if k == "ok" else 0
    adj.append(f"{e}: adjusted (no 51710.xlsx, no volatile cells): {ok}/{comp} = {100*ok/comp:.2f}%")
print("\n".join(adj))
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "corpus-summary.md"), "a").write("\n" + "\n".join(adj) + "\n")
