#!/usr/bin/env python3
"""scripts/bench's A/B mode (scripts/bench_ab) on two fake strata-bench programs (CTest bench_ab, label bench).

The fakes write Google Benchmark JSON with times taken from the tables below, one column a round, and log every call
(side, round, filter, the CPUs they may run on). The expected medians, spreads and ratios are computed here from the
tables, and the log shows that the rounds alternate A and B, that every run is pinned and that each side gets its
own filter.

  test_bench_ab.py --root SOURCE_DIR
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

# ms a round (4 rounds). x/1: B faster in every round; x/2: B faster in the median but slower in round 3, so the
# verdict is "-"; the median of B/A (per round) differs from B's median over A's median. y/*: the variants' side.
TIMES = {
    "A": {"fake/x/1": [10.0, 12.0, 11.0, 30.0], "fake/x/2": [4.0, 4.4, 4.2, 4.1],
          "fake/y/1": [20.0, 21.0, 22.0, 19.0], "fake/y/2": [8.0, 8.0, 8.0, 8.0]},
    "B": {"fake/x/1": [9.0, 9.5, 10.0, 20.0], "fake/x/2": [3.0, 3.3, 5.0, 4.0],
          "fake/y/1": [10.0, 10.5, 11.0, 9.5], "fake/y/2": [16.0, 16.0, 17.0, 15.0]},
}
ROUNDS = 4
US = {"fake/x/2"}  # reported in microseconds, the others in milliseconds

FAKE = r'''#!/usr/bin/python3
import json, os, re, sys
SIDE = @SIDE@
TIMES = @TIMES@
US = @US@
here = os.path.dirname(os.path.abspath(__file__))
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--benchmark_") and "=" in a)
counter = os.path.join(here, "round_" + re.sub(r"\W", "_", args.get("benchmark_filter", "")))  # a round a filter
r = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
open(counter, "w").write(str(r))
reps = int(args.get("benchmark_repetitions", "1"))
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps({"side": SIDE, "round": r, "filter": args.get("benchmark_filter"), "reps": reps,
                          "cpus": sorted(os.sched_getaffinity(0))}) + "\n")
out = []
for name, times in TIMES.items():
    if not re.search(args.get("benchmark_filter", "."), name):
        continue
    t = times[r - 1]
    # repetitions: t, 5 t and t / 2 (their median is t), then the same again
    for k in range(reps):
        v = t * [1.0, 5.0, 0.5][k % 3]
        b = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": reps, "repetition_index": k,
             "iterations": 10, "real_time": v * 1000.0 if name in US else v, "cpu_time": v,
             "time_unit": "us" if name in US else "ms", "triad_bytes_per_second": 2e10 + 1e9 * r}
        if SIDE == "B" and name == "fake/y/2" and r == 2:
            b["error_occurred"] = True
            b["error_message"] = "result differs"
        out.append(b)
    if reps > 1:
        out.append({"name": name + "_median", "run_name": name, "run_type": "aggregate", "aggregate_name": "median",
                    "real_time": 1e9, "time_unit": "ms"})
json.dump({"context": {"cpu_model": "Fake CPU " + SIDE, "compiler": "GNU 12.2.0", "load_avg": [0.5, 0.4, 0.3]},
           "benchmarks": out}, open(args["benchmark_out"], "w"))
'''

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def close(x, y):
    return abs(x - y) <= 1e-9 * max(1.0, abs(y))


def make_fake(folder, side):
    os.makedirs(os.path.join(folder, "bin"))
    path = os.path.join(folder, "bin", "strata-bench")
    with open(path, "w") as f:
        f.write(FAKE.replace("@SIDE@", repr(side)).replace("@TIMES@", repr(TIMES[side])).replace("@US@", repr(US)))
    os.chmod(path, 0o755)
    return folder


def reset(tmp):
    """The fakes count their rounds from 1 again."""
    for side in "AB":
        for f in glob.glob(os.path.join(tmp, side, "bin", "round_*")):
            os.remove(f)


def run(root, args, env):
    p = subprocess.run([os.path.join(root, "scripts", "bench")] + args, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def expect_row(row, ta, tb, label):
    """The row's medians, spreads, ratios and verdict against the times of the two sides, computed here."""
    ratios = [b / a for a, b in zip(ta, tb)]
    check(close(row["a"]["median"], statistics.median(ta)), f"{label}: A's median")
    check(close(row["b"]["median"], statistics.median(tb)), f"{label}: B's median")
    check(close(row["a"]["min"], min(ta)) and close(row["a"]["max"], max(ta)), f"{label}: A's min-max")
    check(close(row["b"]["min"], min(tb)) and close(row["b"]["max"], max(tb)), f"{label}: B's min-max")
    check(close(row["ratio"]["median"], statistics.median(ratios)), f"{label}: the median of B/A per round")
    check(close(row["ratio"]["min"], min(ratios)) and close(row["ratio"]["max"], max(ratios)), f"{label}: B/A min-max")
    verdict = "B faster" if all(r < 1 for r in ratios) else "B slower" if all(r > 1 for r in ratios) else "-"
    check(row["verdict"] == verdict, f"{label}: verdict {row['verdict']!r}, expected {verdict!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    root = ap.parse_args().root
    tmp = tempfile.mkdtemp(prefix="bench_ab_")
    env = dict(os.environ, FAKE_LOG=os.path.join(tmp, "log"))
    cpu = str(min(os.sched_getaffinity(0)))

    # 1. Two builds, the same filter, pinned to one CPU.
    a, b = make_fake(os.path.join(tmp, "A"), "A"), make_fake(os.path.join(tmp, "B"), "B")
    out = os.path.join(tmp, "builds.json")
    rc, text = run(root, ["--ab", a, b, "--rounds", str(ROUNDS), "--core", cpu, "--filter", "^fake/x/",
                          "--out", out], env)
    check(rc == 0, f"two builds: exit code {rc}\n{text}")
    if rc == 0:
        log = read_log(env["FAKE_LOG"])
        check([e["side"] for e in log] == ["A", "B"] * ROUNDS, f"A and B alternate: {[e['side'] for e in log]}")
        check(all(e["cpus"] == [int(cpu)] for e in log), f"every run pinned to CPU {cpu}: {[e['cpus'] for e in log]}")
        check(all(e["filter"] == "^fake/x/" and e["reps"] == 1 for e in log), "the filter, one repetition a round")
        with open(out) as f:
            summary = json.load(f)
        rows = {r["name_a"]: r for r in summary["benchmarks"]}
        check(sorted(rows) == ["fake/x/1", "fake/x/2"], f"the benchmarks: {sorted(rows)}")
        check(summary["rounds"] == ROUNDS, "the number of rounds")
        for name, row in rows.items():
            expect_row(row, TIMES["A"][name], TIMES["B"][name], name)
        check(summary["context_a"].get("cpu_model") == "Fake CPU A", "A's context")
        check(all(os.path.exists(os.path.join(tmp, "builds", f"round{r}_{s}.json"))
                  for r in range(1, ROUNDS + 1) for s in "AB"), "every run's JSON is kept")
        check("fake/x/1" in text and "B faster" in text and "cpu_model: A Fake CPU A | B Fake CPU B" in text,
              f"the printed summary:\n{text}")
        os.remove(env["FAKE_LOG"])

    # 2. Two variants (filters) of one build: $STRATA_BUILD_DIR's; 3 repetitions a round (their median counts).
    reset(tmp)
    out = os.path.join(tmp, "variants.json")
    rc, text = run(root, ["--ab-filters", "^fake/x/", "^fake/y/", "--rounds", str(ROUNDS), "--core", cpu,
                          "--repetitions", "3", "--out", out], dict(env, STRATA_BUILD_DIR=a))
    check(rc == 0, f"two variants: exit code {rc}\n{text}")
    if rc == 0:
        log = read_log(env["FAKE_LOG"])
        check([e["filter"] for e in log] == ["^fake/x/", "^fake/y/"] * ROUNDS, "each side its filter, alternating")
        check(all(e["reps"] == 3 for e in log), "--repetitions reaches the runs")
        with open(out) as f:
            summary = json.load(f)
        pairs = [(r["name_a"], r["name_b"]) for r in summary["benchmarks"]]
        check(pairs == [("fake/x/1", "fake/y/1"), ("fake/x/2", "fake/y/2")], f"paired in run order: {pairs}")
        ta = TIMES["A"]  # one build (A's fake) for both variants
        expect_row(summary["benchmarks"][0], ta["fake/x/1"], ta["fake/y/1"], "variants x/1 | y/1")
        expect_row(summary["benchmarks"][1], ta["fake/x/2"], ta["fake/y/2"], "variants x/2 | y/2")
        os.remove(env["FAKE_LOG"])

    # 3. An error in one round marks the row; filters that select different numbers of benchmarks are refused.
    reset(tmp)
    out = os.path.join(tmp, "error.json")
    rc, text = run(root, ["--ab", a, b, "--rounds", "2", "--core", cpu, "--filter", "^fake/y/2", "--out", out], env)
    check(rc == 0, f"an error row: exit code {rc}\n{text}")
    if rc == 0:
        with open(out) as f:
            row = json.load(f)["benchmarks"][0]
        check(row.get("error") is True and "verdict" not in row, f"an error in a round marks the row: {row}")
    rc, text = run(root, ["--ab-filters", "^fake/x/1", "^fake/", "--rounds", "1", "--out",
                          os.path.join(tmp, "uneven.json")], dict(env, STRATA_BUILD_DIR=a))
    check(rc != 0 and "as many benchmarks" in text, f"uneven filters refused: {rc}\n{text}")

    # 4. The command line: unknown options and bad values exit 2 with a message.
    for args, says in ((["--abc"], "unknown option '--abc'"), (["--ab", a], "--ab takes 2"),
                       (["--ab", a, b, "--rounds", "0"], "--rounds 0"),
                       (["--ab", a, b, "--core", "last"], "--core last"),
                       (["--ab", a, b, "--plot"], "--plot is not for an A/B run")):
        rc, text = run(root, args, env)
        check(rc == 2 and says in text, f"{' '.join(args)}: exit code {rc}, expected 2 and {says!r}: {text}")

    if failures:
        print(f"{len(failures)} check(s) failed; files in {tmp}")
        return 1
    shutil.rmtree(tmp)
    print("scripts/bench --ab: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
