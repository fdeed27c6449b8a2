#!/usr/bin/env bash
# Damaged files (restarts and histories) given to the strata program:
#   damaged.sh STRATA SOURCE_DIR WORK_DIR CASE
# A restart is trusted only whole: cut anywhere, a bit flipped anywhere, or an attribute edited, `strata run
# --restart` exits 2 with a message naming the file, and no history is written or changed. `strata compare` on a file
# that crashes the NetCDF library when opened exits 2 ("cannot read"), never with a signal. Exit 0: passed; 1: failed.
set -uo pipefail
strata=$1 source=$2 work=$3 case=$4
dir=$work/$case
rm -rf "$dir" && mkdir -p "$dir"
config=$source/configs/default.yaml
steps36=(--set time.days= --set time.steps=36)
steps72=(--set time.days= --set time.steps=72)

fail() { echo "FAILED ($case): $*"; exit 1; }
size() { stat -c %s "$1"; }
flip() { # flip FILE OFFSET BIT: one bit of one byte, in place
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\x$(printf %02x $((byte ^ (1 << $3))))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
good_restart() { # a 36-step run in $dir/good; its restart's path in $r, its history's checksum in $history
  "$strata" run "$config" "${steps36[@]}" --output "$dir/good" >"$dir/good.log" 2>&1 || fail "the run failed"
  r=$dir/good/default.restart.nc
  history=$(sha256sum <"$dir/good/default.nc")
}
refused() { # refused FILE WHY REGEX: continuing from FILE exits 2, names it and matches REGEX; no history written
  local file=$1 why=$2 regex=$3 log=$dir/refused.log
  rm -rf "$dir/bad"
  "$strata" run "$config" "${steps72[@]}" --output "$dir/bad" --restart "$file" >"$log" 2>&1
  local code=$?
  [ $code = 2 ] || fail "$why: exit $code, expected 2 ($(tail -1 "$log"))"
  local message
  message=$(grep -- "restart error: .*$file: " "$log") || fail "$why: the message does not name the file: $(tail -1 "$log")"
  grep -Eq -- "$regex" <<<"${message#*"$file: "}" || fail "$why: no '$regex' after the file's name in: $message"
  [ -z "$(ls -A "$dir/bad" 2>/dev/null)" ] || fail "$why: the refused run wrote $(ls "$dir/bad")"
  [ "$(sha256sum <"$dir/good/default.nc")" = "$history" ] || fail "$why: the restart's history changed"
  n=$((n + 1))
}

n=0
case $case in
truncated)
  # Cut points in the header (the attributes, the dimension and variable lists), across the data, in the last
  # value written, and at the very end (only the last byte, the last 8 bytes).
  good_restart
  total=$(size "$r")
  cuts=(0 1 4 12 100 700 1500 2500)
  for k in $(seq 1 17); do cuts+=($((total * k / 18))); done
  cuts+=($((total - 80)) $((total - 72)) $((total - 64)) $((total - 40)) $((total - 8)) $((total - 1)))
  for cut in "${cuts[@]}"; do
    head -c "$cut" "$r" >"$dir/cut-$cut.nc"
    refused "$dir/cut-$cut.nc" "cut at $cut of $total bytes" "^(truncated: $cut of $total bytes|no seal at its end)"
  done
  ;;
bit_flips)
  # One bit flipped (OFFSET:BIT): in the header (the magic, the version, the record count, the top bit of the
  # dimension count, which crashes libnetcdf's nc_open, a name, the values of last_output_time and history_records),
  # across the data, and at the end.
  good_restart
  total=$(size "$r")
  at_time=$(grep -obUa 'last_output_time' "$r" | head -1 | cut -d: -f1)
  at_records=$(grep -obUa 'history_records' "$r" | head -1 | cut -d: -f1)
  flips=(0:0 3:1 6:2 12:7 13:0 40:5 200:3 $((at_time + 25)):4 $((at_records + 24)):4 $((at_records + 31)):0 900:6
    1700:1 2600:2)
  for k in $(seq 1 15); do flips+=($((total * k / 16 + k)):$((k % 8))); done
  for back in 64 56 44 30 9 1; do flips+=($((total - back)):$((back % 8))); done
  for f in "${flips[@]}"; do
    off=${f%:*} bit=${f#*:}
    cp "$r" "$dir/flip-$off.nc"
    flip "$dir/flip-$off.nc" "$off" "$bit"
    refused "$dir/flip-$off.nc" "bit $bit of byte $off of $total" "^(checksum mismatch|no seal at its end|truncated|unknown seal|length mismatch)"
  done
  ;;
edited_attribute)
  # history_records made smaller in place (the file's length unchanged): the continuation would drop records. The
  # same edit made by rewriting the file with ncdump and ncgen, as a user would: a file Strata did not write.
  good_restart
  cp "$r" "$dir/edited.nc"
  at=$(grep -obUa 'history_records' "$dir/edited.nc" | head -1 | cut -d: -f1)
  # name length (4 bytes), "history_records" padded to 16, type (4), count (4), then the value: 1.0, big-endian
  printf '\x3f\xf0\x00\x00\x00\x00\x00\x00' | dd of="$dir/edited.nc" bs=1 seek=$((at + 24)) conv=notrunc status=none
  [[ $(ncdump -h "$dir/edited.nc") == *"history_records = 1. ;"* ]] || fail "the edit did not make history_records 1"
  refused "$dir/edited.nc" "history_records edited in place" "^checksum mismatch"
  ncdump "$r" | sed 's/:history_records = .*/:history_records = 1. ;/' | ncgen -k '64-bit offset' -o "$dir/rewritten.nc"
  [[ $(ncdump -h "$dir/rewritten.nc") == *"history_records = 1. ;"* ]] || fail "ncgen did not write history_records = 1"
  refused "$dir/rewritten.nc" "history_records edited by ncdump | ncgen" "^no seal at its end"
  ;;
compare_damaged)
  # The top bit of the dimension count (byte 12 of a classic file) makes libnetcdf's nc_open crash: compare says it
  # cannot read the file, either side, a history (64-bit offset format) or a restart.
  good_restart
  "$strata" run "$config" "${steps36[@]}" --set output.format=64bit_offset --output "$dir/classic" \
    >"$dir/classic.log" 2>&1 || fail "the 64-bit offset run failed"
  h=$dir/classic/default.nc
  cp "$h" "$dir/history-flip.nc" && flip "$dir/history-flip.nc" 12 7
  cp "$r" "$dir/restart-flip.nc" && flip "$dir/restart-flip.nc" 12 7
  for pair in "$dir/history-flip.nc $h" "$h $dir/history-flip.nc" "$dir/restart-flip.nc $r"; do
    read -r a b <<<"$pair"
    "$strata" compare "$a" "$b" >"$dir/compare.log" 2>&1
    code=$?
    [ $code = 2 ] || fail "compare $a $b: exit $code, expected 2 ($(tail -1 "$dir/compare.log"))"
    grep -q "cannot read $dir/[a-z]*-flip.nc" "$dir/compare.log" || fail "compare $a $b: $(tail -1 "$dir/compare.log")"
    n=$((n + 1))
  done
  # The netCDF-4 history with a bit flipped across its first kilobytes (HDF5's superblock and object headers): an
  # answer (0 same, 1 different, 2 unreadable), never a signal.
  h4=$dir/good/default.nc
  for off in $(seq 0 37 1500); do
    cp "$h4" "$dir/h4-flip.nc" && flip "$dir/h4-flip.nc" "$off" $((off % 8))
    "$strata" compare "$dir/h4-flip.nc" "$h4" >"$dir/compare.log" 2>&1
    code=$?
    [ $code -le 2 ] || fail "compare with bit $((off % 8)) of byte $off flipped: exit $code ($(tail -1 "$dir/compare.log"))"
    n=$((n + 1))
  done
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "passed: $case ($n damaged files, each refused)"
