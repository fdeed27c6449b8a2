#!/usr/bin/env python3
"""CF checks of a Strata output file with the tools climate users open it with: ncdump, cdo and xarray.

Usage: cf_check.py FILE...   (exit 0: every check passed; 1: the failures are listed)

Debian has no CF checker, so the conventions Strata claims are checked here one by one: bounds of every coordinate
(contiguous, holding their centers, latitudes -90..90 and longitudes 0..360, heights equal to ilev), time bounds
for "time: mean" fields, an honest cell_methods on every variable, a _FillValue on every data variable, a history
entry with an ISO 8601 timestamp, and a time axis xarray decodes to dates.
"""
import re
import subprocess
import sys

import numpy as np
import xarray as xr

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def check_file(path):
    for tool in (["ncdump", "-h", path], ["cdo", "-s", "sinfon", path]):
        run = subprocess.run(tool, capture_output=True, text=True)
        check(run.returncode == 0, f"{path}: {' '.join(tool[:2])} exited {run.returncode}: {run.stderr.strip()}")

    raw = xr.open_dataset(path, decode_cf=False, decode_times=False)
    ds = xr.open_dataset(path)  # decodes the time axis: fails on dates CF tools cannot decode
    check(raw.attrs.get("Conventions") == "CF-1.8", f"{path}: Conventions {raw.attrs.get('Conventions')!r}")
    check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: ", raw.attrs.get("history", "")) is not None,
          f"{path}: history without an ISO 8601 timestamp: {raw.attrs.get('history')!r}")
    check(np.issubdtype(ds["time"].dtype, np.datetime64), f"{path}: time decodes to {ds['time'].dtype}")

    for name, var in raw.variables.items():
        bounds = var.attrs.get("bounds")
        if bounds is None:
            continue
        check(bounds in raw.variables, f"{path}: {name}:bounds names a missing {bounds}")
        if bounds not in raw.variables:
            continue
        b = raw[bounds].values
        c = var.values
        check(b.shape == (c.size, 2), f"{path}: {bounds} has shape {b.shape}, expected ({c.size}, 2)")
        check(np.all(b[:, 0] <= c) and np.all(c <= b[:, 1]), f"{path}: {bounds} does not hold the {name} values")
        if name != "time":
            check(np.array_equal(b[1:, 0], b[:-1, 1]), f"{path}: {bounds} cells are not contiguous")
        if name == "lat":
            check(b[0, 0] == -90 and b[-1, 1] == 90, f"{path}: latitude cells from {b[0, 0]} to {b[-1, 1]}")
        if name == "lon":
            check(b[0, 0] == 0 and b[-1, 1] == 360, f"{path}: longitude cells from {b[0, 0]} to {b[-1, 1]}")
        if name == "lev" and "ilev" in raw.variables:
            check(np.array_equal(np.append(b[:, 0], b[-1, 1]), raw["ilev"].values), f"{path}: lev_bnds != ilev")
    for coordinate in ("lev", "lat", "lon"):
        if coordinate in raw.dims and coordinate in raw.variables:
            check("bounds" in raw[coordinate].attrs, f"{path}: {coordinate} has no bounds")

    coordinates = set(raw.dims) | {"time_bnds", "lev_bnds", "lat_bnds", "lon_bnds"}
    for name, var in raw.variables.items():
        if name in coordinates or name in ("lat", "lon"):
            continue
        methods = var.attrs.get("cell_methods")
        check(methods is not None, f"{path}: {name} has no cell_methods")
        check("_FillValue" in var.attrs, f"{path}: {name} has no _FillValue")
        if methods is None:
            continue
        if "time: mean" in methods:
            check("bounds" in raw["time"].attrs, f"{path}: {name} is a time mean but time has no bounds")
        if name.endswith("_budget_residual"):
            check(methods == "area: maximum time: maximum", f"{path}: {name} cell_methods {methods!r}")
        if name.endswith("_content") or name == "T_global_mean":
            check(methods == "area: mean time: point", f"{path}: {name} cell_methods {methods!r}")
        if name.endswith("_vs_analytic"):
            check(methods == "area: maximum time: point", f"{path}: {name} cell_methods {methods!r}")


for f in sys.argv[1:]:
    check_file(f)
for f in failures:
    print("FAILED:", f)
print(f"cf_check: {len(sys.argv) - 1} file(s), {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
