#!/usr/bin/env bash
# Fault tests of the strata program: what a run does to the files around it when things go wrong, and the paths it
# refuses to write (the history's and the restart's) before its first step.
#   faults.sh STRATA SOURCE_DIR WORK_DIR CASE
# Each case checks the exit code, the message, and that a file that existed before is unchanged (its checksum).
# Exit 0: passed; 1: failed (the reason is printed); 77: cannot be tested here (CTest reports it skipped).
set -uo pipefail
strata=$1 source=$2 work=$3 case=$4
dir=$work/$case
rm -rf "$dir" && mkdir -p "$dir"
config=$dir/case.yaml
# A small, quick case: the default physics on 4 x 4 columns and 10 levels, 12 steps, an output every 6.
cp "$source/configs/default.yaml" "$config"
small=(--set grid.horizontal.nlat=4 --set grid.horizontal.nlon=4 --set grid.vertical.levels=10
       --set time.days= --set time.steps=12 --set output.interval=3600)

fail() { echo "FAILED ($case): $*"; exit 1; }
# expect CODE REGEX -- command...: runs it, wants that exit code and the regex in what it printed.
expect() {
  local code=$1 regex=$2
  shift 3
  local out
  out=$("$@" 2>&1)
  local got=$?
  echo "$out" | tail -5
  [ "$got" = "$code" ] || fail "exit $got, expected $code: $*"
  echo "$out" | grep -Eq -- "$regex" || fail "no '$regex' in the output of: $*"
}
sum() { sha256sum "$1" | cut -d' ' -f1; }
no_partial() {
  local left
  left=$(find "$1" -name '*.partial' | head -1)
  [ -z "$left" ] || fail "a temporary file was left: $left"
}

case $case in
config_as_output)
  before=$(sum "$config")
  expect 2 "output.path: .*is the configuration file itself" -- "$strata" run "$config" "${small[@]}" \
    --set "output.path=$config"
  [ "$(sum "$config")" = "$before" ] || fail "the configuration file changed"
  ;;
directory)
  mkdir -p "$dir/out.nc" && touch "$dir/out.nc/keep"
  expect 2 "output.path: .*is a directory" -- "$strata" run "$config" "${small[@]}" --set "output.path=$dir/out.nc"
  [ -f "$dir/out.nc/keep" ] || fail "the directory's content changed"
  no_partial "$dir"
  ;;
fifo)
  mkfifo "$dir/out.nc"
  expect 2 "output.path: .*is a FIFO" -- "$strata" run "$config" "${small[@]}" --set "output.path=$dir/out.nc"
  [ -p "$dir/out.nc" ] || fail "the FIFO was replaced"
  no_partial "$dir"
  ;;
device)
  expect 2 "output.path: '/dev/null' is a device" -- "$strata" run "$config" "${small[@]}" --set output.path=/dev/null
  [ -c /dev/null ] || fail "/dev/null is no longer a device"
  ;;
under_a_file)
  echo "a file" >"$dir/plain"
  expect 2 "output.path: .*plain' is not a directory" -- "$strata" run "$config" "${small[@]}" \
    --set "output.path=$dir/plain/out.nc"
  ;;
concurrent)
  # Two runs writing one history path at once (each its own restart.path: a shared one is refused, restart_shared):
  # each has its own temporary file; both finish; the file is one whole run.
  "$strata" run "$config" "${small[@]}" --set "output.path=$dir/out.nc" --set "title=run A" \
    --set "restart.path=$dir/a.restart.nc" >"$dir/a.log" 2>&1 &
  a=$!
  "$strata" run "$config" "${small[@]}" --set "output.path=$dir/out.nc" --set "title=run B" \
    --set "restart.path=$dir/b.restart.nc" >"$dir/b.log" 2>&1 &
  b=$!
  wait $a || fail "run A exited $?: $(tail -3 "$dir/a.log")"
  wait $b || fail "run B exited $?: $(tail -3 "$dir/b.log")"
  header=$(ncdump -h "$dir/out.nc") || fail "ncdump cannot read the result"
  echo "$header" | grep -Eq 'title = "run (A|B)"' || fail "no title of either run"
  records=$(ncdump -v time "$dir/out.nc" | sed -n '/^ time = /,/;/p' | tr -cd ',' | wc -c)
  [ "$records" = 2 ] || fail "$((records + 1)) records, expected 3 (t = 0, 1 h, 2 h of one run)"
  no_partial "$dir"
  ;;
full_disk)
  # A 1 MiB file system: a small run fits, a larger one fills it. The error names the file and the cause, the run
  # exits 1 (not a crash in HDF5's exit handler), and the previous output is untouched.
  mnt=$dir/fs && mkdir -p "$mnt"
  mount -t tmpfs -o size=1m tmpfs "$mnt" 2>/dev/null || { echo "cannot mount a tmpfs here: skipped"; exit 77; }
  trap 'umount "$mnt"' EXIT
  "$strata" run "$config" "${small[@]}" --set "output.path=$mnt/out.nc" >/dev/null 2>&1 || fail "the small run failed"
  before=$(sum "$mnt/out.nc")
  restart_before=$(sum "$mnt/out.restart.nc")
  expect 1 "cannot write .*/out.nc.*partial.*(No space left on device|no space left on device)" -- "$strata" run "$config" \
    --set grid.horizontal.nlat=16 --set grid.horizontal.nlon=16 --set grid.vertical.levels=30 --set time.days= \
    --set time.steps=24 --set output.interval=600 --set output.precision=double --set "output.path=$mnt/out.nc"
  [ "$(sum "$mnt/out.nc")" = "$before" ] || fail "the previous output changed"
  [ "$(sum "$mnt/out.restart.nc")" = "$restart_before" ] || fail "the previous restart changed"
  ;;
memory_limit)
  # Under ulimit -v the run is refused before it allocates, with the figures; validate says the same.
  big=(--set grid.horizontal.nlat=200 --set grid.horizontal.nlon=400)
  (ulimit -v 700000 && exec "$strata" run "$config" "${big[@]}" --set "output.path=$dir/out.nc") >"$dir/log" 2>&1
  code=$?
  cat "$dir/log" | tail -3
  [ $code = 2 ] || fail "exit $code, expected 2"
  grep -Eq "the run needs .* GiB on rank 0 .* address-space limit" "$dir/log" || fail "no memory figures"
  [ ! -e "$dir/out.nc" ] || fail "an output file was created"
  no_partial "$dir"
  ;;
state_check)
  # A surface heat flux of 1e30 K m/s: the run stops after its first step, names T and where, writes that state.
  echo "previous" >"$dir/out.nc"
  expect 1 "state check failed after step 1 .*: T = [0-9.e+]+ in column [0-9]+ \(lat .*, lon .*\), level 0" -- \
    "$strata" run "$config" "${small[@]}" --set processes.vertical_diffusion.surface_heat_flux=1e30 \
    --set "output.path=$dir/out.nc"
  ncdump -h "$dir/out.nc" >/dev/null || fail "the state was not written"
  no_partial "$dir"
  ;;
restart_config)
  before=$(sum "$config")
  expect 2 "restart.path: .*is the configuration file itself" -- "$strata" run "$config" "${small[@]}" \
    --set "output.path=$dir/out.nc" --set "restart.path=$config"
  [ "$(sum "$config")" = "$before" ] || fail "the configuration file changed"
  [ ! -e "$dir/out.nc" ] || fail "a history was written"
  no_partial "$dir"
  ;;
restart_fifo)
  mkfifo "$dir/r.nc"
  expect 2 "restart.path: .*is a FIFO" -- "$strata" run "$config" "${small[@]}" --set "output.path=$dir/out.nc" \
    --set "restart.path=$dir/r.nc"
  [ -p "$dir/r.nc" ] || fail "the FIFO was replaced"
  [ ! -e "$dir/out.nc" ] || fail "a history was written"
  no_partial "$dir"
  ;;
restart_device)
  # A device node of our own (as root; /dev/null itself for anyone else, who cannot replace it).
  node=/dev/null
  mknod "$dir/null" c 1 3 2>/dev/null && node=$dir/null
  expect 2 "restart.path: '$node' is a device" -- "$strata" run "$config" "${small[@]}" \
    --set "output.path=$dir/out.nc" --set "restart.path=$node"
  [ -c "$node" ] || fail "$node is no longer a device"
  [ ! -e "$dir/out.nc" ] || fail "a history was written"
  ;;
restart_is_output)
  echo "previous" >"$dir/out.nc"
  expect 2 "restart.path: .*out.nc' is also output.path" -- "$strata" run "$config" "${small[@]}" \
    --set "output.path=$dir/out.nc" --set "restart.path=$dir/./out.nc"
  [ "$(cat "$dir/out.nc")" = previous ] || fail "the previous output changed"
  expect 2 "restart.path: .*out.nc' is also output.path" -- "$strata" validate "$config" "${small[@]}" \
    --set "output.path=$dir/out.nc" --set "restart.path=$dir/out.nc"
  no_partial "$dir"
  ;;
restart_unwritable)
  # Each is refused by validate and by run before the first step (exit 2): no history, no temporary file.
  mkdir -p "$dir/folder.nc"
  echo "a file" >"$dir/plain"
  long=$dir/$(printf 'r%.0s' $(seq 1 240)).nc # 243 characters; with its .partial suffix more than 255
  for target in "folder.nc' is a directory:$dir/folder.nc" "plain' is not a directory:$dir/plain/r.nc" \
    "name is too long:$long"; do
    regex=${target%%:*} path=${target#*:}
    for command in validate run; do
      expect 2 "restart.path: .*$regex" -- "$strata" $command "$config" "${small[@]}" \
        --set "output.path=$dir/out.nc" --set "restart.path=$path"
      [ ! -e "$dir/out.nc" ] || fail "a history was written for restart.path=$path"
      no_partial "$dir"
    done
  done
  ;;
restart_read_only)
  mnt=$dir/ro && mkdir -p "$mnt"
  if [ "$(id -u)" = 0 ]; then # root writes through permissions: a read-only file system
    mount -t tmpfs -o size=1m,ro tmpfs "$mnt" 2>/dev/null || { echo "cannot mount a tmpfs here: skipped"; exit 77; }
    trap 'umount "$mnt"' EXIT
  else
    chmod 555 "$mnt"
  fi
  for command in validate run; do
    expect 2 "restart.path: .*ro' (is on a read-only file system|cannot be written in)" -- "$strata" $command "$config" \
      "${small[@]}" --set "output.path=$dir/out.nc" --set "restart.path=$mnt/r.nc"
    [ ! -e "$dir/out.nc" ] || fail "a history was written"
    no_partial "$dir"
  done
  ;;
restart_shared)
  # A long run holds its restart path; a second run naming the same restart.path is refused at once, naming the
  # holder, and the first run is unaffected.
  slow=(--set grid.horizontal.nlat=4 --set grid.horizontal.nlon=8 --set grid.vertical.levels=30 --set time.days=
        --set time.steps=100000)
  "$strata" run "$config" "${slow[@]}" --set "output.path=$dir/a.nc" --set "restart.path=$dir/r.nc" \
    >"$dir/a.log" 2>&1 &
  a=$!
  trap 'kill -9 $a 2>/dev/null' EXIT
  for _ in $(seq 1 200); do
    grep -q "^strata: .* columns" "$dir/a.log" 2>/dev/null && break
    sleep 0.05
  done
  grep -q "^strata: .* columns" "$dir/a.log" || fail "the first run did not start: $(tail -3 "$dir/a.log")"
  expect 2 "restart.path: .*r.nc' is held by another run \(pid $a" -- "$strata" run "$config" "${small[@]}" \
    --set "output.path=$dir/b.nc" --set "restart.path=$dir/r.nc"
  [ ! -e "$dir/b.nc" ] || fail "the second run wrote a history"
  expect 2 "restart.path: .*r.nc' is held by another run \(pid $a" -- "$strata" validate "$config" "${small[@]}" \
    --set "output.path=$dir/b.nc" --set "restart.path=$dir/r.nc"
  kill -0 $a 2>/dev/null || fail "the first run ended: $(tail -3 "$dir/a.log")"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "passed: $case"
