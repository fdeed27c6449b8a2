// strata-bench: Google Benchmark driver. Every benchmark registers itself in its own file; this is the main.
// Use the usual flags: --benchmark_filter=REGEX, --benchmark_format=json, --benchmark_out=FILE.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
