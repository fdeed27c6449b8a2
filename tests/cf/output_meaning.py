#!/usr/bin/env python3
"""What a Strata history means to the tools that read it: interval means that average right, labels that say what
each variable is in the case that wrote it.

Usage: output_meaning.py STRATA SOURCE_DIR WORK_DIR   (exit 0: every check passed; 1: the failures are listed)

1. Interval means. The surface fields ("time: mean" over each record's time_bnds) of a run of configs/default.yaml
   are averaged as a user would: xarray's mean("time") then the cos(latitude)-weighted mean over the grid, and
   `cdo timmean` then the same area mean. Both must equal the whole-run global mean the program prints ("over the
   whole run, global mean NAME = V"), which it accumulates from its own fields step by step, to the printed and
   stored precision. A run whose length is not a multiple of output.interval ends with a shorter interval: there
   the time_bnds-weighted mean must agree. The first record closes no interval (time_bnds = [0, 0]) and must read
   as missing.
2. Labels. Short runs of three cases with extra output variables; each label must say what the variable is there:
   the precipitation's process, the kind of prescribed w, units that follow from the definitions.
Each interval-mean check is also run on a copy of the file whose first record holds 0 (what the writer did once):
it must fail there, or the check proves nothing.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import netCDF4
import numpy as np
import xarray as xr

failures = []
RTOL = 1e-6  # the history holds floats; the run prints 7 digits


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def run(strata, config, out_dir, *sets):
    manifest = out_dir / "manifest"
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = [strata, "run", str(config), "--output", str(out_dir), "--manifest", str(manifest)]
    for s in sets:
        cmd += ["--set", s]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"output_meaning: {' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    printed = {m[0]: float(m[1]) for m in re.findall(r"over the whole run, global mean (\S+) = (\S+)", done.stdout)}
    history = re.search(r"^history (.+)$", manifest.read_text(), re.M)
    return Path(history[1]), printed


def interval_problems(path, printed):
    """Every way the file's interval means disagree with the printed whole-run means."""
    problems = []
    ds = xr.open_dataset(path)
    raw = xr.open_dataset(path, decode_times=False)
    tb = raw["time_bnds"].values
    length = tb[:, 1] - tb[:, 0]
    weights = np.cos(np.deg2rad(ds["lat"]))
    means = [n for n, v in ds.data_vars.items() if "time: mean" in v.attrs.get("cell_methods", "")]
    if not means:
        problems.append(f"{path}: no 'time: mean' variable to check")
    for name in means:
        var = ds[name]
        empty = length == 0
        if not np.all(np.isnan(var.values[empty])):
            problems.append(f"{path}: {name} has values in records {np.flatnonzero(empty)}, whose interval is empty")
        if name not in printed:
            problems.append(f"{path}: the run printed no whole-run mean of {name}")
            continue
        expect = printed[name]
        if np.allclose(length[~empty], length[~empty][0]):  # equal intervals: the plain mean is the run's mean
            got = float(var.mean("time").weighted(weights).mean(("lat", "lon")))
            if not np.isclose(got, expect, rtol=RTOL, atol=0):
                problems.append(f"{path}: xarray mean('time') of {name} = {got:.7g}, the run printed {expect:.7g}")
            # cdo's time mean, then the area weights of lat-lon boxes (cdo's fldmean takes great-circle cells,
            # which on a coarse grid weigh the latitudes differently from the boxes the model's means use).
            cdo = subprocess.run(["cdo", "-s", "outputf,%.9g", "-timmean", f"-selname,{name}", str(path)],
                                 capture_output=True, text=True)
            if check_tool(problems, path, cdo):
                field = np.array(cdo.stdout.split(), dtype=float).reshape(var.shape[1:])
                got = float(np.average(field.mean(axis=-1), weights=weights.values))
                if not np.isclose(got, expect, rtol=RTOL, atol=0):
                    problems.append(f"{path}: cdo timmean of {name}, area mean {got:.7g}, the run printed {expect:.7g}")
        dt = xr.DataArray(length, dims="time")
        got = float(var.weighted(dt).mean("time").weighted(weights).mean(("lat", "lon")))
        if not np.isclose(got, expect, rtol=RTOL, atol=0):
            problems.append(f"{path}: time_bnds-weighted mean of {name} = {got:.7g}, the run printed {expect:.7g}")
    return problems


def check_tool(problems, path, done):
    if done.returncode != 0:
        problems.append(f"{path}: {' '.join(done.args[:2])} exited {done.returncode}: {done.stderr.strip()}")
    return done.returncode == 0


def first_record_zeroed(path, copy):
    shutil.copy(path, copy)
    with netCDF4.Dataset(copy, "a") as nc:
        for name, var in nc.variables.items():
            if "time: mean" in getattr(var, "cell_methods", ""):
                var[0, ...] = 0.0
    return copy


def check_intervals(strata, source, work):
    for label, sets in (("equal", ["time.days=1"]), ("ragged", ["time.days=1", "output.interval=25200"])):
        out = work / label
        path, printed = run(strata, source / "configs/default.yaml", out, *sets)
        for p in interval_problems(path, printed):
            check(False, p)
        broken = interval_problems(first_record_zeroed(path, out / "zeroed.nc"), printed)
        check(len(broken) > 0, f"{label}: the checks pass on a file whose first record holds 0: they cannot fail")


def attrs(path, name):
    with netCDF4.Dataset(path) as nc:
        return {k: nc.variables[name].getncattr(k) for k in nc.variables[name].ncattrs()}


def check_labels(strata, source, work):
    default, _ = run(strata, source / "configs/default.yaml", work / "labels", "time.days=0.25",
                     "output.variables=[T, q, tracer, w, precipitation_flux]")
    kessler, _ = run(strata, source / "configs/kessler_column.yaml", work / "labels", "time.steps=12",
                     "output.variables=[T, qc, qr, w, precipitation_flux]")
    heat, _ = run(strata, source / "configs/heat_equation.yaml", work / "labels", "time.steps=10")

    def says(path, name, words):
        text = attrs(path, name).get("long_name", "")
        check(all(w.lower() in text.lower() for w in words), f"{path}: {name} long_name {text!r} lacks {words}")

    says(default, "precipitation_flux", ["large-scale condensation"])
    says(kessler, "precipitation_flux", ["Kessler"])
    says(default, "w", ["subsidence"])
    says(kessler, "w", ["updraft"])
    for path, name in ((kessler, "qc"), (kessler, "qr"), (default, "q")):
        a = attrs(path, name)
        standard = a.get("standard_name", "")
        check(standard != "", f"{path}: {name} has no standard_name")
        # A mass fraction and a mixing ratio differ by a factor 1 + q: the long_name must not claim the other one.
        if standard.startswith("mass_fraction") or standard == "specific_humidity":
            check("mixing ratio" not in a["long_name"], f"{path}: {name} is a mass fraction called {a['long_name']!r}")
        check(a.get("units") == "kg kg-1", f"{path}: {name} units {a.get('units')!r}")
    # Content = sum(rho0 x dz): kg m-3 times x's units times m.
    tracer_units = attrs(default, "tracer").get("units")
    check(tracer_units == "1", f"{default}: tracer units {tracer_units!r}")
    content_units = attrs(default, "tracer_content").get("units")
    check(content_units == "kg m-2", f"{default}: tracer_content units {content_units!r}, rho0 tracer dz is kg m-2")
    k = attrs(heat, "K")
    check(k.get("standard_name", "").endswith("diffusivity"), f"{heat}: K standard_name {k.get('standard_name')!r}")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    strata, source, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    check_intervals(strata, source, work)
    check_labels(strata, source, work)
    for f in failures:
        print("FAILED:", f)
    print(f"output_meaning: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


main()
