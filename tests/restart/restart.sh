#!/usr/bin/env bash
# Restart tests of the strata program (CIME's ERS and ERP, signals, bad restart files):
#   restart.sh STRATA MPIRUN SOURCE_DIR WORK_DIR CASE
# The reference is always the uninterrupted run; "identical" means `strata compare --bfb` (every variable of the
# history, and of the final restart file, bit for bit). Exit 0: passed; 1: failed (the reason is printed).
set -uo pipefail
strata=$1 mpirun=$2 source=$3 work=$4 case=$5
dir=$work/$case
rm -rf "$dir" && mkdir -p "$dir"
config=$source/configs/default.yaml

fail() { echo "FAILED ($case): $*"; exit 1; }
run() { # run NAME [args...]: strata run into $dir/NAME, log in $dir/NAME.log
  local name=$1
  shift
  "$@" --output "$dir/$name" >"$dir/$name.log" 2>&1
}
same() { # same A B: both files identical bit for bit
  "$strata" compare --bfb "$1" "$2" >"$dir/compare.log" 2>&1 || { cat "$dir/compare.log"; fail "$1 differs from $2"; }
}
steps() { echo --set time.days= --set "time.steps=$1"; }
await() { # await FILE REGEX: until a line of FILE matches (10 s at most)
  for _ in $(seq 1 200); do
    grep -Eq -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}
run_status() { ncdump -h "$1" 2>/dev/null | sed -n 's/^\t\t:strata_run_status = "\(.*\)" ;$/\1/p'; }
# stop_and_continue SIGNAL CODE NUMBER [LAUNCHER...]: a run of 288 steps (started through LAUNCHER) gets SIGNAL once it
# is stepping. It must exit CODE, say where its history and restart are, leave a history that says "stopped by signal
# NUMBER"; continued, it ends identical to the straight run.
stop_and_continue() {
  local signal=$1 code=$2 number=$3 status
  shift 3
  local long=(--set grid.horizontal.nlat=16 --set grid.horizontal.nlon=32)
  run straight "$strata" run "$config" "${long[@]}" $(steps 288) || fail "the straight run failed"
  "$@" "$strata" run "$config" "${long[@]}" $(steps 288) --output "$dir/stopped" >"$dir/stopped.log" 2>&1 &
  local pid=$!
  if [ "${early:-0}" = 1 ]; then
    sleep 0.05 # while MPI starts and the configuration is read: the signal is held until the run can answer it
  else
    await "$dir/stopped.log" "^step " || fail "the run did not start: $(tail -3 "$dir/stopped.log")"
  fi
  kill -s "$signal" $pid
  wait $pid
  local got=$?
  tail -2 "$dir/stopped.log"
  [ $got = "$code" ] || fail "exit $got after SIG$signal, expected $code"
  grep -Eq "stopped by signal $number after step [0-9]+ of 288; history .*default.nc, restart .*default.restart.nc" \
    "$dir/stopped.log" || fail "no message saying where the history and the restart are"
  status=$(run_status "$dir/stopped/default.nc")
  [[ $status == "stopped by signal $number after step "* ]] || fail "the history says '$status'"
  run stopped "$strata" run "$config" "${long[@]}" $(steps 288) --restart "$dir/stopped/default.restart.nc" ||
    fail "the continuation failed: $(tail -3 "$dir/stopped.log")"
  status=$(run_status "$dir/stopped/default.nc")
  [ "$status" = completed ] || fail "the continued history says '$status'"
  same "$dir/stopped/default.nc" "$dir/straight/default.nc"
}

case $case in
ers)
  # 288 steps straight vs 144 + restart + 144 (the restart in the middle of an output interval: 144 = 4 x 36).
  run straight "$strata" run "$config" $(steps 288) || fail "the straight run failed"
  run split "$strata" run "$config" $(steps 150) || fail "the first half failed"
  run split "$strata" run "$config" $(steps 288) --restart "$dir/split/default.restart.nc" ||
    fail "the continued run failed: $(tail -3 "$dir/split.log")"
  grep -q "continuing from .* at step 150" "$dir/split.log" || fail "the run did not say it continued"
  same "$dir/split/default.nc" "$dir/straight/default.nc"
  same "$dir/split/default.restart.nc" "$dir/straight/default.restart.nc"
  ;;
tendencies)
  # Each process's tendencies and the whole step's (means over the output interval, their sums in the restart), and
  # the reference state: 288 steps straight vs 150 on 2 ranks + restart + the rest on 1 rank (the restart in the
  # middle of an interval).
  tend=(--set "output.variables=[T, u, q, rho_face, exner, tendency_of_T, tendency_of_T_due_to_held_suarez,
        tendency_of_T_due_to_vertical_advection, tendency_of_T_due_to_surface_fluxes,
        tendency_of_T_due_to_vertical_diffusion, tendency_of_T_due_to_large_scale_condensation,
        tendency_of_u_due_to_coriolis, tendency_of_q_due_to_large_scale_condensation, tendency_of_tracer]")
  run straight "$strata" run "$config" "${tend[@]}" $(steps 288) ||
    fail "the straight run failed: $(tail -3 "$dir/straight.log")"
  run split "$mpirun" -n 2 "$strata" run "$config" "${tend[@]}" $(steps 150) || fail "the first half failed"
  run split "$strata" run "$config" "${tend[@]}" $(steps 288) --restart "$dir/split/default.restart.nc" ||
    fail "the continued run failed: $(tail -3 "$dir/split.log")"
  ncdump -h "$dir/straight/default.nc" >"$dir/header.txt"
  grep -q "tendency_of_T_due_to_held_suarez:cell_methods = \"time: mean\"" "$dir/header.txt" ||
    fail "no tendency_of_T_due_to_held_suarez as a mean in the history"
  grep -q "float rho_face(time, ilev, lat, lon)" "$dir/header.txt" || fail "no rho_face on the faces in the history"
  same "$dir/split/default.nc" "$dir/straight/default.nc"
  same "$dir/split/default.restart.nc" "$dir/straight/default.restart.nc"
  ;;
erp)
  # A restart made on 2 ranks (Serial) continued on 3 ranks with the OpenMP backend, and one continued on 1 rank
  # with the Threads backend (smaller grid: Threads runs real worker threads).
  small=(--set grid.horizontal.nlat=4 --set grid.horizontal.nlon=4)
  run straight "$strata" run "$config" "${small[@]}" $(steps 72) || fail "the straight run failed"
  run np2 "$mpirun" -n 2 "$strata" run "$config" "${small[@]}" $(steps 36) || fail "the 2-rank run failed"
  cp -r "$dir/np2" "$dir/threads"
  run np2 "$mpirun" -n 3 "$strata" run "$config" "${small[@]}" $(steps 72) --set backend.type=openmp \
    --restart "$dir/np2/default.restart.nc" || fail "the 3-rank continuation failed: $(tail -3 "$dir/np2.log")"
  same "$dir/np2/default.nc" "$dir/straight/default.nc"
  run threads "$strata" run "$config" "${small[@]}" $(steps 72) --set backend.type=threads \
    --restart "$dir/threads/default.restart.nc" || fail "the Threads continuation failed: $(tail -3 "$dir/threads.log")"
  same "$dir/threads/default.nc" "$dir/straight/default.nc"
  ;;
interval)
  # Restarts every 12 steps; the run is killed (SIGKILL) mid-way; it continues from the latest restart, whose
  # history is the killed run's temporary file, and ends identical to the straight run.
  long=(--set grid.horizontal.nlat=8 --set grid.horizontal.nlon=16 --set restart.interval=7200)
  run straight "$strata" run "$config" "${long[@]}" $(steps 288) || fail "the straight run failed"
  "$strata" run "$config" "${long[@]}" $(steps 288) --output "$dir/killed" >"$dir/killed.log" 2>&1 &
  pid=$!
  await "$dir/killed.log" "restart .* at step 48 " || true # judged after the kill
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  grep -q "restart .* at step 48 " "$dir/killed.log" || fail "no restart at step 48 before the kill"
  partial=$(ls "$dir"/killed/default.nc.*.partial 2>/dev/null | head -1)
  [ -n "$partial" ] || fail "the killed run left no history"
  ncdump -h "$partial" >/dev/null || fail "the killed run's history does not open"
  run killed "$strata" run "$config" "${long[@]}" $(steps 288) --restart "$dir/killed/default.restart.nc" ||
    fail "the continuation failed: $(tail -3 "$dir/killed.log")"
  same "$dir/killed/default.nc" "$dir/straight/default.nc"
  ;;
signal)
  # SIGTERM: the run finishes its step, writes a restart, closes the history, says where, exits 143.
  stop_and_continue TERM 143 15
  ;;
sighup)
  # SIGHUP (a closed terminal or session) stops the run as SIGTERM does.
  stop_and_continue HUP 129 1
  ;;
signal_mpirun)
  # SIGTERM to scripts/mpirun (the README's launcher), not to the ranks: Open MPI's mpirun answers a SIGTERM of its
  # own by killing the ranks a second later, so the script passes the stop on as SIGUSR2 (signal 12), which mpirun
  # forwards to every rank; the ranks write the restart, and the job exits 143. (Run as outside a batch job, where
  # the script would lengthen mpirun's kill sequence, which mpirun waits out after a stop: the test's time.)
  stop_and_continue TERM 143 12 env -u SLURM_JOB_ID -u PBS_JOBID -u LSB_JOBID "$source/scripts/mpirun" -n 2
  ;;
signal_mpirun_early)
  # The same stop 50 ms after the launch, before strata has set up its handlers: the ranks hold the signal (it
  # killed a rank by its default action, leaving no restart), then stop after their first step.
  early=1 stop_and_continue TERM 143 12 env -u SLURM_JOB_ID -u PBS_JOBID -u LSB_JOBID "$source/scripts/mpirun" -n 2
  ;;
sigterm_then_kill)
  # SIGTERM, then SIGKILL before the stop is done (a grace too short): killed the moment the history appears at its
  # path, and at delays after the SIGTERM. A history that says "stopped" needs its restart; whatever restart is left
  # continues to a history identical to the straight run.
  long=(--set grid.horizontal.nlat=16 --set grid.horizontal.nlon=32)
  run straight "$strata" run "$config" "${long[@]}" $(steps 288) || fail "the straight run failed"
  for delay in renamed 0 0.002 0.01 0.03; do
    name=k_$delay
    "$strata" run "$config" "${long[@]}" $(steps 288) --output "$dir/$name" >"$dir/$name.log" 2>&1 &
    pid=$!
    await "$dir/$name.log" "^step " || fail "the run did not start: $(tail -3 "$dir/$name.log")"
    kill -TERM $pid
    if [ $delay = renamed ]; then
      until [ -e "$dir/$name/default.nc" ] || ! kill -0 $pid 2>/dev/null; do :; done
    else
      sleep $delay
    fi
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    history=$(ls "$dir/$name"/default.nc "$dir/$name"/default.nc.*.partial 2>/dev/null | head -1)
    status=$(run_status "$history")
    restart=$(ls "$dir/$name/default.restart.nc" 2>/dev/null)
    echo "killed $delay after SIGTERM: ${history##*/} says '$status'; restart: ${restart:-none}"
    if [ -e "$dir/$name/default.restart.nc" ]; then
      run "$name" "$strata" run "$config" "${long[@]}" $(steps 288) --restart "$dir/$name/default.restart.nc" ||
        fail "killed $delay after SIGTERM: the continuation failed: $(tail -3 "$dir/$name.log")"
      same "$dir/$name/default.nc" "$dir/straight/default.nc"
    else
      case $status in stopped*) fail "killed $delay after SIGTERM: the history says '$status', and no restart" ;; esac
    fi
  done
  ;;
sigusr1)
  # SIGUSR1 (a batch system's warning ahead of the time limit): a restart after the step the run is in, and the run
  # goes on to its end (exit 0, a history identical to the straight run); continued, that restart gives the same.
  long=(--set grid.horizontal.nlat=16 --set grid.horizontal.nlon=32)
  run straight "$strata" run "$config" "${long[@]}" $(steps 576) || fail "the straight run failed"
  "$strata" run "$config" "${long[@]}" $(steps 576) --output "$dir/warned" >"$dir/warned.log" 2>&1 &
  pid=$!
  await "$dir/warned.log" "^step " || fail "the run did not start: $(tail -3 "$dir/warned.log")"
  kill -USR1 $pid
  # The run overwrites that restart with its last one at the end: a copy, taken as soon as it is there.
  until [ -e "$dir/warned/default.restart.nc" ] || ! kill -0 $pid 2>/dev/null; do :; done
  cp "$dir/warned/default.restart.nc" "$dir/warned.restart.nc" 2>/dev/null
  wait $pid
  code=$?
  [ $code = 0 ] || fail "exit $code after SIGUSR1, expected 0: $(tail -3 "$dir/warned.log")"
  step=$(sed -n 's/^restart .* at step \([0-9]*\) .*/\1/p' "$dir/warned.log" | head -1)
  [ -n "$step" ] && [ "$step" != 576 ] || fail "no restart before the end"
  copied=$(ncdump -h "$dir/warned.restart.nc" 2>/dev/null | sed -n 's/^\t\t:step = \([0-9]*\)\. ;$/\1/p')
  [ "$copied" = "$step" ] || fail "the copy is not the restart of step $step (step '$copied')"
  status=$(run_status "$dir/warned/default.nc")
  [ "$status" = completed ] || fail "the history says '$status'"
  same "$dir/warned/default.nc" "$dir/straight/default.nc"
  run continued "$strata" run "$config" "${long[@]}" $(steps 576) --restart "$dir/warned.restart.nc" ||
    fail "the continuation from step $step failed: $(tail -3 "$dir/continued.log")"
  same "$dir/continued/default.nc" "$dir/straight/default.nc"
  ;;
state_check_status)
  # A run the state check stops (exit 1) says why in its history: the step, the variable, where.
  run bad "$strata" run "$config" --set grid.horizontal.nlat=2 --set grid.horizontal.nlon=4 $(steps 36) \
    --set processes.vertical_diffusion.surface_heat_flux=1e30
  code=$?
  tail -1 "$dir/bad.log"
  [ $code = 1 ] || fail "exit $code, expected 1"
  status=$(run_status "$dir/bad/default.nc")
  expected='^stopped by the state check after step 1 \(t = .*\): T = .* in column .*, level 0 .*; expected .*K$'
  [[ $status =~ $expected ]] || fail "the history says '$status'"
  ;;
bad_files)
  run good "$strata" run "$config" $(steps 36) || fail "the run failed"
  r=$dir/good/default.restart.nc
  expect() { # expect REGEX args...: exit 2 and the message
    local regex=$1
    shift
    "$strata" run "$config" --output "$dir/bad" "$@" >"$dir/bad.log" 2>&1
    local code=$?
    [ $code = 2 ] || fail "exit $code, expected 2, for: $* ($(tail -1 "$dir/bad.log"))"
    grep -Eq -- "$regex" "$dir/bad.log" || fail "no '$regex' for: $* ($(tail -1 "$dir/bad.log"))"
  }
  head -c 3000 "$r" >"$dir/truncated.nc"
  expect "restart error: .*truncated.nc: no seal at its end" --restart "$dir/truncated.nc"
  expect "restart error: .*good/default.nc: no seal at its end" --restart "$dir/good/default.nc" # a history
  expect "restart error: .*nothing.nc: no such file" --restart "$dir/nothing.nc"
  mkfifo "$dir/fifo.nc" && expect "restart error: .*fifo.nc: is a FIFO" --restart "$dir/fifo.nc"
  mkdir -p "$dir/folder.nc" && expect "restart error: .*folder.nc: is a directory" --restart "$dir/folder.nc"
  expect "grid.horizontal: differs from the run that wrote" --restart "$r" --set grid.horizontal.nlat=6
  expect "time.dt: differs from the run that wrote" --restart "$r" --set time.dt=300 --set output.interval=3600
  expect "processes.held_suarez: differs" --restart "$r" --set processes.held_suarez.ka=0.03
  expect "time.steps: the restart is at step 36, after the run's last step 10" --restart "$r" $(steps 10)
  # What may change does not refuse: a longer run, another output interval and backend.
  "$strata" run "$config" --output "$dir/good" $(steps 72) --set output.interval=7200 --set backend.type=openmp \
    --restart "$r" >"$dir/ok.log" 2>&1 || fail "a change that is allowed was refused: $(tail -1 "$dir/ok.log")"
  ;;
foreign_history)
  # Another run's history (4x8x10) at the path of this run's (2x3x6): continuing refuses (exit 2) and leaves it as it
  # is, instead of writing this run's records into it.
  mine=(--set grid.horizontal.nlat=2 --set grid.horizontal.nlon=3 --set grid.vertical.levels=6)
  other=(--set grid.horizontal.nlat=4 --set grid.horizontal.nlon=8 --set grid.vertical.levels=10)
  run x "$strata" run "$config" "${mine[@]}" $(steps 36) || fail "this run failed"
  cp "$dir/x/default.restart.nc" "$dir/r36.nc"
  run x "$strata" run "$config" "${other[@]}" $(steps 36) || fail "the other run failed"
  before=$(sha256sum <"$dir/x/default.nc")
  run x "$strata" run "$config" "${mine[@]}" $(steps 72) --restart "$dir/r36.nc"
  code=$?
  tail -2 "$dir/x.log"
  [ $code = 2 ] || fail "exit $code, expected 2"
  grep -Eq "restart error: .*x/default.nc: another run's history" "$dir/x.log" || fail "no message naming the history"
  [ "$(sha256sum <"$dir/x/default.nc")" = "$before" ] || fail "the other run's history changed"
  ;;
killed_before_rename)
  # What a kill after the final restart and before the history's rename leaves: the history under its temporary
  # name (the one the restart records), and at the path the older file of an earlier run. The continuation takes
  # the temporary file and ends identical to the straight run.
  small=(--set grid.horizontal.nlat=2 --set grid.horizontal.nlon=4)
  run straight "$strata" run "$config" "${small[@]}" $(steps 108) || fail "the straight run failed"
  run older "$strata" run "$config" "${small[@]}" $(steps 108) --set initial_conditions.u=3 || fail "older run failed"
  run b "$strata" run "$config" "${small[@]}" $(steps 72) || fail "the run failed"
  partial=$(ncdump -h "$dir/b/default.restart.nc" | sed -n 's/^\t\t:history_path = "\(.*\)" ;$/\1/p')
  [ -n "$partial" ] || fail "the restart records no history_path"
  [ "$partial" = "$dir/b/default.nc" ] || mv "$dir/b/default.nc" "$partial"
  cp "$dir/older/default.nc" "$dir/b/default.nc"
  run b "$strata" run "$config" "${small[@]}" $(steps 108) --restart "$dir/b/default.restart.nc" ||
    fail "the continuation failed: $(tail -3 "$dir/b.log")"
  same "$dir/b/default.nc" "$dir/straight/default.nc"
  ;;
twice)
  # Continuing twice from one restart, the second time to an earlier end: the history holds the second
  # continuation's records only, as a straight run to that end.
  small=(--set grid.horizontal.nlat=2 --set grid.horizontal.nlon=4)
  run straight "$strata" run "$config" "${small[@]}" $(steps 72) || fail "the straight run failed"
  run a "$strata" run "$config" "${small[@]}" $(steps 36) || fail "the first part failed"
  cp "$dir/a/default.restart.nc" "$dir/r36.nc"
  run a "$strata" run "$config" "${small[@]}" $(steps 144) --restart "$dir/r36.nc" || fail "the first continuation failed"
  run a "$strata" run "$config" "${small[@]}" $(steps 72) --restart "$dir/r36.nc" ||
    fail "the second continuation failed: $(tail -3 "$dir/a.log")"
  same "$dir/a/default.nc" "$dir/straight/default.nc"
  ;;
live_writer)
  # A run still writing its history (its temporary file): a continuation from its restart refuses (exit 2) and
  # copies nothing, whatever state the file is in.
  "$strata" run "$config" $(steps 100000) --set restart.interval=7200 --output "$dir/a" >"$dir/a.log" 2>&1 &
  pid=$!
  trap 'kill -9 $pid 2>/dev/null' EXIT
  await "$dir/a.log" "^restart .* at step" || fail "no restart from the running run: $(tail -3 "$dir/a.log")"
  cp "$dir/a/default.restart.nc" "$dir/r.nc"
  step=$(ncdump -h "$dir/r.nc" | sed -n 's/^\t\t:step = \([0-9]*\).*/\1/p')
  run b "$strata" run "$config" $(steps $((step + 12))) --restart "$dir/r.nc"
  code=$?
  tail -2 "$dir/b.log"
  kill -0 $pid 2>/dev/null || fail "the first run ended before the continuation was tried"
  [ $code = 2 ] || fail "exit $code, expected 2"
  grep -Eq "restart error: .*default.nc.*partial: being written by a running strata" "$dir/b.log" ||
    fail "no message saying the history is being written"
  [ -z "$(ls "$dir/b" 2>/dev/null | grep default.nc)" ] || fail "the continuation wrote a history: $(ls "$dir/b")"
  ;;
attributes)
  # A continued history carries the continuation's title and strata_config (and the first part's history lines).
  small=(--set grid.horizontal.nlat=2 --set grid.horizontal.nlon=4)
  run a "$strata" run "$config" "${small[@]}" $(steps 36) || fail "the first part failed"
  run a "$strata" run "$config" "${small[@]}" $(steps 72) --set "title=part two" \
    --restart "$dir/a/default.restart.nc" || fail "the continuation failed: $(tail -3 "$dir/a.log")"
  header=$(ncdump -h "$dir/a/default.nc")
  echo "$header" | grep -q ':title = "part two"' || fail "the title is not the continuation's"
  echo "$header" | grep -q ':strata_config = "title: part two\\n' || fail "strata_config is not the continuation's"
  echo "$header" | grep -q 'steps=36' || fail "the first part's history line is gone"
  ;;
missing_history)
  # The history the restart belongs to is gone: exit 2 naming that file (not this run's output path). An empty
  # --restart is an error, not a fresh run.
  run a "$strata" run "$config" $(steps 36) || fail "the first part failed"
  cp "$dir/a/default.restart.nc" "$dir/r36.nc"
  rm "$dir/a/default.nc"
  run b "$strata" run "$config" $(steps 72) --restart "$dir/r36.nc"
  code=$?
  tail -1 "$dir/b.log"
  [ $code = 2 ] || fail "exit $code, expected 2"
  grep -Eq "restart error: .*r36.nc: the history it continues, .*/a/default.nc, is not there" "$dir/b.log" ||
    fail "the message does not name a/default.nc"
  grep -q "b/default.nc" "$dir/b.log" && fail "the message names this run's output path"
  run c "$strata" run "$config" $(steps 36) --restart ""
  code=$?
  tail -1 "$dir/c.log"
  [ $code = 2 ] || fail "exit $code for --restart \"\", expected 2"
  grep -q -- "--restart: " "$dir/c.log" || fail "no message naming --restart"
  [ ! -e "$dir/c/default.nc" ] || fail "--restart \"\" ran a fresh run"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "passed: $case"
