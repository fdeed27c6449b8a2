#!/usr/bin/env python3
"""An adversarial probe of strata's restarts and the files around them: damaged restarts, stops at random moments
through the MPI launcher, concurrent runs, ranks started with different configurations, restart paths that name
something that is not the run's to replace, and continuations onto histories that are not theirs.

Usage: probe.py STRATA MPIRUN SOURCE_DIR WORK_DIR [--cases N] [--seed S] [--only CLASS,...]

Every case ends in one of these outcomes; only the first four are allowed:
  refused     exit 2 with a message, and nothing of the user's changed
  correct     exit 0 (or a stop and a continuation) with a history identical bit for bit to the uninterrupted run's
  stopped     exit 143 with a restart that continues to the uninterrupted run's history
  not started exit 143 from a stop that came before the run began (within milliseconds of the launch, before the
              program could hold the signal), having written nothing: nothing to continue, nothing lost
  WRONG       exit 0 with a history that differs from the uninterrupted run's (a wrong success)
  LOST        a file of the user's changed or gone, or a stop that left no restart to continue from
  CRASH       killed by a signal (a segmentation fault) or any other exit code
  HANG        no exit within the time limit
The counts per class and outcome are printed; the exit code is 1 if any case was not allowed. With N cases in all
(default 400), each class takes its share; CI runs a reduced N. The seed makes a run repeatable.
"""
import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ALLOWED = {"refused", "correct", "stopped", "not started"}
LIMIT = 120  # seconds a run may take before it counts as a hang


class Probe:
    def __init__(self, args):
        self.strata = os.path.abspath(args.strata)
        self.mpirun = os.path.abspath(args.mpirun)
        self.config = Path(args.source).resolve() / "configs" / "default.yaml"
        self.work = Path(args.work).resolve()
        self.rng = random.Random(args.seed)
        self.counts = defaultdict(Counter)
        self.failures = []
        self.references = {}
        self.serial = 0

    # ---- running strata ------------------------------------------------------------------------------------------

    def case_dir(self, kind):
        self.serial += 1
        d = self.work / f"{kind}-{self.serial:04d}"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        return d

    @staticmethod
    def sets(steps, *more):
        out = ["--set", "time.days=", "--set", f"time.steps={steps}", "--set", "output.interval=1800"]
        for s in more:
            out += ["--set", s]
        return out

    def run(self, args, cwd, ranks=1, timeout=LIMIT):
        cmd = ([self.mpirun, "-n", str(ranks)] if ranks > 1 else []) + [self.strata] + args
        try:
            done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
            return done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired:
            return None, "timeout"

    def reference(self, steps):
        """The uninterrupted run of `steps` steps: its history and final restart."""
        if steps not in self.references:
            d = self.work / f"reference-{steps}"
            shutil.rmtree(d, ignore_errors=True)
            code, log = self.run(["run", str(self.config), "--output", str(d)] + self.sets(steps), self.work)
            if code != 0:
                sys.exit(f"probe: the reference run of {steps} steps failed:\n{log}")
            self.references[steps] = (d / "default.nc", d / "default.restart.nc")
        return self.references[steps]

    def identical(self, a, b):
        done = subprocess.run([self.strata, "compare", "--bfb", str(a), str(b)], capture_output=True, text=True)
        return done.returncode == 0

    @staticmethod
    def digest(path):
        p = Path(path)
        if p.is_fifo():
            return "fifo"
        if p.is_char_device():
            return f"device {os.stat(p).st_rdev}"
        if not p.exists():
            return "absent"
        if p.is_dir():
            return "dir:" + ",".join(sorted(os.listdir(p)))
        return hashlib.sha256(p.read_bytes()).hexdigest()

    def record(self, kind, outcome, what, log=""):
        self.counts[kind][outcome] += 1
        if outcome not in ALLOWED:
            self.failures.append(f"{kind}: {outcome}: {what}\n    {log.strip()[-400:]}")

    def judge_exit(self, code, log):
        if code is None:
            return "HANG"
        if code == 2:
            return "refused"
        if code not in (0, 1, 143):
            return "CRASH"
        return None

    # ---- classes -------------------------------------------------------------------------------------------------

    def damaged_restart(self, kind, damage):
        """Continue from a restart damaged by `damage(bytes) -> bytes`: refused, or (if the damage changed
        nothing that matters) a correct continuation; never a wrong one."""
        history, restart = self.reference(24)
        full, _ = self.reference(36)
        d = self.case_dir(kind)
        data = restart.read_bytes()
        damaged, what = damage(data)
        (d / "r.nc").write_bytes(damaged)
        shutil.copy(history, d / "default.nc")
        before = self.digest(d / "default.nc")
        code, log = self.run(["run", str(self.config), "--output", str(d), "--restart", str(d / "r.nc")]
                             + self.sets(36), d)
        outcome = self.judge_exit(code, log)
        if outcome is None:
            if code == 0 and self.identical(d / "default.nc", full):
                outcome = "correct"
            elif code == 0:
                outcome = "WRONG"
            else:
                outcome = "LOST" if self.digest(d / "default.nc") != before else "refused"
        elif outcome == "refused" and self.digest(d / "default.nc") != before:
            outcome = "LOST"
        self.record(kind, outcome, what, log)

    def truncate(self):
        def cut(data):
            n = len(data)
            region = self.rng.choice(["header", "middle", "tail", "last"])
            keep = {"header": self.rng.randrange(0, min(n, 2048)),
                    "middle": self.rng.randrange(n // 4, 3 * n // 4),
                    "tail": self.rng.randrange(3 * n // 4, n),
                    "last": n - self.rng.randrange(1, 17)}[region]
            return data[:keep], f"cut to {keep} of {n} bytes ({region})"
        self.damaged_restart("truncate", cut)

    def bitflip(self):
        def flip(data):
            b = bytearray(data)
            at = self.rng.randrange(len(b)) if self.rng.random() < 0.7 else self.rng.randrange(min(len(b), 1024))
            bit = self.rng.randrange(8)
            b[at] ^= 1 << bit
            return bytes(b), f"bit {bit} of byte {at} flipped"
        self.damaged_restart("bitflip", flip)

    def stop(self):
        """SIGTERM to the MPI launcher at a random moment: the job ends (0) with the whole history, or stops (143)
        with a restart that continues to it."""
        steps = 576  # long enough (a few seconds) that most stops land while it steps
        big = ["grid.horizontal.nlat=16", "grid.horizontal.nlon=32"]
        d = self.case_dir("stop")
        ref = self.work / "reference-stop"
        if not (ref / "default.nc").exists():
            code, log = self.run(["run", str(self.config), "--output", str(ref)] + self.sets(steps, *big), self.work)
            if code != 0:
                sys.exit(f"probe: the stop reference failed:\n{log}")
        cmd = [self.mpirun, "-n", "2", self.strata, "run", str(self.config), "--output", str(d)] + \
            self.sets(steps, *big)
        job = subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        delay = self.rng.uniform(0.05, 4.0)  # from before the ranks can answer a signal
        time.sleep(delay)
        job.send_signal(signal.SIGTERM)
        try:
            log, _ = job.communicate(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            job.kill()
            self.record("stop", "HANG", f"SIGTERM after {delay:.2f} s")
            return
        what = f"SIGTERM to the launcher after {delay:.2f} s, exit {job.returncode}"
        if job.returncode == 0:
            outcome = "correct" if self.identical(d / "default.nc", ref / "default.nc") else "WRONG"
        elif job.returncode == 143:
            restart = d / "default.restart.nc"
            written = [p.name for p in d.iterdir() if p.name.startswith("default.")]
            if not restart.exists():
                outcome = "not started" if not written else "LOST"
            else:
                code, more = self.run(["run", str(self.config), "--output", str(d), "--restart", str(restart)]
                                      + self.sets(steps, *big), d)
                log += more
                ok = code == 0 and self.identical(d / "default.nc", ref / "default.nc")
                outcome = "stopped" if ok else "WRONG" if code == 0 else "LOST"
        else:
            outcome = "LOST" if job.returncode == 1 else "CRASH"
        self.record("stop", outcome, what, log)

    def concurrent(self):
        """Two runs into one folder at once: each is whole or refused, the history at the path is one whole run."""
        history, _ = self.reference(36)
        d = self.case_dir("concurrent")
        cmd = [self.strata, "run", str(self.config), "--output", str(d)] + self.sets(36)
        jobs = [subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                for _ in range(2)]
        results = [(j.communicate(timeout=LIMIT)[0], j.returncode) for j in jobs]
        codes = sorted(c for _, c in results)
        log = "\n".join(l for l, _ in results)
        if any(c not in (0, 2) for c in codes):
            outcome = "CRASH"
        elif 0 not in codes:
            outcome = "LOST"  # both refused: nothing written
        else:
            whole = self.identical(d / "default.nc", history)
            restart_ok = (d / "default.restart.nc").exists()
            outcome = ("correct" if codes == [0, 0] else "refused") if whole and restart_ok else "WRONG"
        self.record("concurrent", outcome, f"exit codes {codes}", log)

    def mismatch(self):
        """Ranks started with different configurations (an MPMD launch): refused on every rank, never run."""
        key = self.rng.choice(["time.steps=12", "processes.held_suarez.kf=0.5", "output.interval=3600",
                               "grid.vertical.levels=20", "backend.engine=direct"])
        d = self.case_dir("mismatch")
        base = ["run", str(self.config), "--output", str(d)] + self.sets(6)
        cmd = [self.mpirun, "-n", "1", self.strata] + base + [":", "-n", "1", self.strata] + base + ["--set", key]
        try:
            done = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=LIMIT)
            code, log = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired:
            code, log = None, "timeout"
        outcome = self.judge_exit(code, log) or ("WRONG" if code == 0 else "CRASH")
        if outcome == "refused" and (d / "default.nc").exists():
            outcome = "WRONG"
        self.record("mismatch", outcome, f"one rank with --set {key}", log)

    def restart_path(self):
        """restart.path naming what is not the run's to replace: refused, the thing untouched."""
        d = self.case_dir("restart_path")
        kind = self.rng.choice(["config", "fifo", "output", "directory", "under_file", "device"])
        config = d / "case.yaml"
        shutil.copy(self.config, config)
        target = {"config": config, "fifo": d / "fifo", "output": d / "default.nc", "directory": d / "folder",
                  "under_file": d / "plain" / "r.nc", "device": d / "null"}[kind]
        if kind == "device":  # a node of its own (/dev/null's numbers): the machine's is never at stake
            if os.geteuid() != 0:
                kind, target = "fifo", d / "fifo"
            else:
                os.mknod(target, 0o666 | 0o020000, os.makedev(1, 3))
        if kind == "fifo":
            os.mkfifo(target)
        if kind == "directory":
            target.mkdir()
        if kind == "under_file":
            (d / "plain").write_text("a file\n")
        watched = [config, target if kind != "under_file" else d / "plain"]
        before = [self.digest(p) for p in watched]
        # output.path, not --output: --output also moves the restart into its folder.
        code, log = self.run(["run", str(config), "--set", f"output.path={d / 'default.nc'}",
                              "--set", f"restart.path={target}"] + self.sets(6), d, timeout=30)
        after = [self.digest(p) for p in watched]
        outcome = self.judge_exit(code, log) or "WRONG"
        if kind == "output" and outcome == "refused" and after[1] != "absent":
            outcome = "LOST"
        elif before != after or (kind == "device" and not target.is_char_device()):
            outcome = "LOST"
        self.record("restart_path", outcome, f"restart.path is {kind}", log)

    def continuation(self):
        """A continuation onto a history that is not its own (another run's file at the path, a run continued
        twice to different ends): refused, or a history identical to the uninterrupted run's."""
        history, restart = self.reference(24)
        d = self.case_dir("continuation")
        kind = self.rng.choice(["foreign", "twice", "longer_than_restart"])
        shutil.copy(restart, d / "r.nc")
        other = self.work / "reference-foreign"
        if not (other / "default.nc").exists():
            code, log = self.run(["run", str(self.config), "--output", str(other)]
                                 + self.sets(12, "grid.horizontal.nlat=2", "grid.horizontal.nlon=4"), self.work)
            if code != 0:
                sys.exit(f"probe: the foreign reference failed:\n{log}")
        if kind == "foreign":
            shutil.copy(other / "default.nc", d / "default.nc")
        elif kind == "longer_than_restart":
            shutil.copy(self.reference(36)[0], d / "default.nc")  # later records than the restart's
        else:
            shutil.copy(history, d / "default.nc")
        foreign_before = self.digest(d / "default.nc") if kind == "foreign" else None
        ends = [36] if kind != "twice" else [36, 30]
        outcome, log = "correct", ""
        for end in ends:
            shutil.copy(restart, d / "r.nc")
            code, out = self.run(["run", str(self.config), "--output", str(d), "--restart", str(d / "r.nc")]
                                 + self.sets(end), d)
            log += out
            verdict = self.judge_exit(code, out)
            if verdict is not None and verdict != "refused":
                outcome = verdict
                break
            if code == 2:
                outcome = "refused"
                continue
            if code != 0 or not self.identical(d / "default.nc", self.reference(end)[0]):
                outcome = "WRONG"
                break
        if kind == "foreign" and outcome == "refused" and self.digest(d / "default.nc") != foreign_before:
            outcome = "LOST"
        self.record("continuation", outcome, kind, log)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("strata")
    parser.add_argument("mpirun")
    parser.add_argument("source")
    parser.add_argument("work")
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    Path(args.work).mkdir(parents=True)
    probe = Probe(args)
    # Shares of the cases: the cheap file classes take most; a stop runs a longer job.
    shares = {"truncate": 0.25, "bitflip": 0.25, "stop": 0.1, "concurrent": 0.1, "mismatch": 0.1,
              "restart_path": 0.1, "continuation": 0.1}
    if args.only:
        shares = {k: v for k, v in shares.items() if k in args.only.split(",")}
    total = sum(shares.values())
    start = time.time()
    for kind, share in shares.items():
        for _ in range(max(1, round(args.cases * share / total))):
            getattr(probe, kind)()
    print(f"probe: {sum(sum(c.values()) for c in probe.counts.values())} cases in {time.time() - start:.0f} s "
          f"(seed {args.seed})")
    for kind in shares:
        print(f"  {kind:13s} " + "  ".join(f"{o} {n}" for o, n in sorted(probe.counts[kind].items())))
    for f in probe.failures:
        print("FAILED", f)
    sys.exit(1 if probe.failures else 0)


main()
