#!/usr/bin/env bash
# The bad-configuration corpus (tests/configs/bad/*.yaml), run by CTest as one test:
#   tests/configs/run_bad_configs.sh STRATA CORPUS_DIR WORK_DIR [NAME_REGEX]
#
# Every file is one broken configuration named CLASS-what.yaml (CLASS: the kind of mistake, counted per class). Its
# header, the comment lines at the very top of the file, says what must happen:
#   # expect: TEXT        a substring the message must contain (literal text, not a regex; several lines: all)
#   # exit: N             the exit code (default 2)
#   # args: A B ...       more arguments after the file (split at spaces), e.g. --set time.dt=5
#   # subcommand: run     run the case with `strata run` instead of `strata validate`
# A file that cannot hold a header (an empty file, binary garbage from its first byte) has it in CLASS-what.expect.
# Each case runs in a fresh empty working directory (WORK_DIR/CLASS-what) that must still be empty afterwards: a
# configuration error creates no output file (the default output.path is relative, out/strata.nc). Cases run 4 at a
# time (each mostly waits for MPI to start). Prints the number of cases per class; fails listing every case that did
# not behave, with what it printed.
set -u
if [ $# -lt 3 ]; then
    echo "usage: $0 STRATA CORPUS_DIR WORK_DIR [NAME_REGEX]" >&2
    exit 2
fi
strata=$1 corpus=$2 work=$3 only=${4:-}
jobs=${STRATA_BAD_CONFIG_JOBS:-4}
# (Not OMPI_MCA_ess_singleton_isolated=1: it starts faster, but then concurrent singletons share one Open MPI
# session directory and one may remove it under another.)

# One case: writes WORK_DIR/CLASS-what.result ("ok", or the problems and the output) and leaves nothing else.
run_case() {
    local file=$1 name dir header code=2 subcommand=validate line problems="" out rc
    local -a expects=() args=()
    name=$(basename "$file" .yaml)
    header="${file%.yaml}.expect"
    [ -f "$header" ] || header=$file
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line%$'\r'}
        case $line in
        "# expect: "*) expects+=("${line#"# expect: "}") ;;
        "# exit: "*) code=${line#"# exit: "} ;;
        "# args: "*) read -r -a args <<<"${line#"# args: "}" ;;
        "# subcommand: "*) subcommand=${line#"# subcommand: "} ;;
        "#"*) ;;
        *) break ;;
        esac
    done < <(head -c 4000 "$header" | tr -d '\000')
    dir=$work/$name
    rm -rf "$dir" && mkdir -p "$dir"
    out=$(cd "$dir" && "$strata" "$subcommand" "$file" "${args[@]}" 2>&1)
    rc=$?
    [ ${#expects[@]} -gt 0 ] || problems+="no '# expect: TEXT' line in its header; "
    [ "$rc" = "$code" ] || problems+="exit code $rc, expected $code; "
    for e in "${expects[@]}"; do
        [[ $out == *"$e"* ]] || problems+="the output does not contain '$e'; "
    done
    local created
    created=$(cd "$dir" && find . -mindepth 1 | head -5 | tr '\n' ' ')
    [ -z "$created" ] || problems+="it created: $created; "
    if [ -z "$problems" ]; then
        echo ok >"$work/$name.result"
        rm -rf "$dir"
    else
        printf '%s\n    output: %s\n' "$problems" "$out" >"$work/$name.result"
    fi
}
export -f run_case
export strata work

mkdir -p "$work" || exit 1
rm -f "$work"/*.result
mapfile -t files < <(find "$corpus" -maxdepth 1 -name '*.yaml' | LC_ALL=C sort)
if [ -n "$only" ]; then
    mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -E "/[^/]*${only}[^/]*\.yaml$")
fi
if [ ${#files[@]} -eq 0 ] || [ -z "${files[0]}" ]; then
    echo "no *.yaml cases in $corpus${only:+ matching $only}" >&2
    exit 1
fi
printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$jobs" bash -c 'run_case "$1"' _

declare -A perClass=()
failed=0
report=""
for file in "${files[@]}"; do
    name=$(basename "$file" .yaml)
    class=${name%%-*}
    if [ "$class" = "$name" ]; then
        report+="  $name: the name is not CLASS-what.yaml"$'\n'
        failed=$((failed + 1))
        continue
    fi
    perClass[$class]=$((${perClass[$class]:-0} + 1))
    result=$(cat "$work/$name.result" 2>/dev/null || echo "no result (the runner itself failed)")
    if [ "$result" != ok ]; then
        report+="  $name: $result"$'\n'
        failed=$((failed + 1))
    fi
done
echo "bad configurations: ${#files[@]} cases in $corpus, per class:"
for class in $(printf '%s\n' "${!perClass[@]}" | LC_ALL=C sort); do
    echo "  $class: ${perClass[$class]}"
done
rm -f "$work"/*.result
if [ "$failed" -gt 0 ]; then
    echo "FAILED: $failed of ${#files[@]} cases did not behave:"
    printf '%s' "$report"
    exit 1
fi
echo "all ${#files[@]} cases exit with the expected code and message and create no file"
