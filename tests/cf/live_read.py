#!/usr/bin/env python3
"""Reading a history while the run writes it (the .partial file), as docs/config.md promises per output.format.

Usage: live_read.py STRATA SOURCE_DIR WORK_DIR FORMAT [--reads N] [--must-succeed]

Runs configs/default.yaml on a 16 x 32 grid with a record every step in FORMAT (64bit_offset or netcdf4) and, while
it runs, opens the .partial history again and again with netCDF4-python and reads every variable whole. A read
succeeds when the file opens, its record count never goes down, and every record it holds is whole: T in every
record within the state check's range (a record written only in part would hold fill values or zeros). Prints the
reads that succeeded and failed, and the reasons; with --must-succeed, any failed read fails the test.
"""
import argparse
import glob
import subprocess
import sys
import time
from pathlib import Path

import netCDF4
import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("strata")
    p.add_argument("source")
    p.add_argument("work")
    p.add_argument("format")
    p.add_argument("--reads", type=int, default=40)
    p.add_argument("--must-succeed", action="store_true")
    a = p.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    for old in work.glob("default.nc*"):
        old.unlink()
    cmd = [a.strata, "run", str(Path(a.source) / "configs" / "default.yaml"), "--output", str(work),
           "--set", "grid.horizontal.nlat=16", "--set", "grid.horizontal.nlon=32", "--set", "time.days=",
           "--set", "time.steps=2000", "--set", "output.interval=600", "--set", f"output.format={a.format}",
           "--set", "output.variables=[T, q, precipitation_flux]"]
    run = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ok, failed, reasons, last = 0, 0, {}, 0
    try:
        while ok + failed < a.reads and run.poll() is None:
            partial = glob.glob(str(work / "default.nc.*.partial"))
            if not partial:
                time.sleep(0.02)
                continue
            try:
                with netCDF4.Dataset(partial[0]) as nc:
                    for var in nc.variables.values():
                        var[...]
                    records = len(nc.dimensions["time"])
                    T = np.ma.filled(nc.variables["T"][:records], np.nan)
                if records < last:
                    raise ValueError(f"the record count went down from {last} to {records}")
                if records and not np.all((T > 100) & (T < 400)):
                    raise ValueError("a record holds T outside [100, 400] K: written in part")
                last = records
                ok += 1
            except Exception as e:  # any failure to read is what is counted
                failed += 1
                key = str(e).split(":")[0][:80]
                reasons[key] = reasons.get(key, 0) + 1
            time.sleep(0.01)
    finally:
        run.terminate()
        run.wait()
    print(f"live_read {a.format}: {ok} reads succeeded, {failed} failed, up to {last} records")
    for reason, n in reasons.items():
        print(f"  {n} x {reason}")
    if ok + failed < 5:
        sys.exit("live_read: the run ended before enough reads (a faster machine: raise time.steps)")
    sys.exit(1 if a.must_succeed and failed else 0)


main()
