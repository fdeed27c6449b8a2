// strata-bench: Google Benchmark driver. Every benchmark registers itself in its own file; this is the main.
// Use the usual flags: --benchmark_filter=REGEX, --benchmark_format=json, --benchmark_out=FILE.
//
// Besides Google Benchmark's own context (host, CPU count and clock, caches, load average), every run states what
// its figures depend on, in the console header and in the JSON's "context":
//   cpu_model      /proc/cpuinfo's "model name", with its family, model and stepping (under a hypervisor the name
//                  can be as short as "AMD EPYC")
//   compiler       the C++ compiler's CMake id and version (or the compiler's own __VERSION__ without CMake)
//   build          the build type and its flags, -ffp-contract=off, the vector instructions the code was compiled
//                  for (-march=native with STRATA_NATIVE), OpenMP
//   huge_pages     whether Strata's large host arrays ask for huge pages (STRATA_HUGE_PAGES) and the kernel's mode
//   cpu_affinity   the CPUs this process may run on (`taskset -c 1` shows as "1"), of how many online
//   strata_git     the commit the binary was built from
#include <strata/app/version.hpp>
#include <strata/core/memory.hpp>

#include <benchmark/benchmark.h>

#include <fstream>
#include <string>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

// The value of the first "key : value" line of /proc/cpuinfo whose key is `key` (empty when none).
std::string cpuinfoValue(std::string const& key) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        auto const colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        while (!name.empty() && (name.back() == ' ' || name.back() == '\t'))
            name.pop_back();
        if (name != key) continue;
        std::string value = line.substr(colon + 1);
        auto const first = value.find_first_not_of(" \t");
        return first == std::string::npos ? std::string() : value.substr(first);
    }
    return {};
}

std::string cpuModel() {
    std::string model = cpuinfoValue("model name");
    if (model.empty()) return "unknown (no model name in /proc/cpuinfo)";
    std::string const family = cpuinfoValue("cpu family"), number = cpuinfoValue("model"),
                      stepping = cpuinfoValue("stepping");
    if (!family.empty()) {
        model.append(" (family ").append(family);
        if (!number.empty()) model.append(", model ").append(number);
        if (!stepping.empty()) model.append(", stepping ").append(stepping);
        model.append(")");
    }
    return model;
}

std::string compiler() {
#if defined(STRATA_BENCH_COMPILER)
    return STRATA_BENCH_COMPILER;
#elif defined(__clang__)
    return std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
    return std::string("GNU ") + __VERSION__;
#else
    return "unknown";
#endif
}

// The vector instructions this translation unit (and so, in one build, every other) was compiled for.
char const* vectorIsa() {
#if defined(__AVX512F__)
    return "AVX-512";
#elif defined(__AVX2__)
    return "AVX2";
#elif defined(__AVX__)
    return "AVX";
#elif defined(__SSE2__)
    return "SSE2";
#else
    return "scalar";
#endif
}

std::string build() {
    std::string b;
#if defined(STRATA_BENCH_BUILD_TYPE)
    b.append(STRATA_BENCH_BUILD_TYPE[0] != '\0' ? STRATA_BENCH_BUILD_TYPE : "no build type");
#endif
#if defined(STRATA_BENCH_CXX_FLAGS)
    b.append(" (").append(STRATA_BENCH_CXX_FLAGS).append(")");
#endif
#if defined(__OPTIMIZE__)
    b.append(b.empty() ? "" : ", ").append("optimised");
#else
    b.append(b.empty() ? "" : ", ").append("not optimised");
#endif
#if defined(NDEBUG)
    b.append(", NDEBUG");
#endif
    b.append(", -ffp-contract=off, vectors ").append(vectorIsa());
#if defined(STRATA_BENCH_NATIVE)
    b.append(" (-march=native)");
#endif
#if defined(_OPENMP)
    b.append(", OpenMP ").append(std::to_string(_OPENMP));
#endif
    return b;
}

std::string hugePages() {
    std::string s = strata::core::detail::hugePages() ? "asked (madvise)" : "off (STRATA_HUGE_PAGES=0)";
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string mode;
    if (std::getline(in, mode)) s.append("; kernel: ").append(mode);
    return s;
}

std::string cpuAffinity() {
    unsigned const online = std::thread::hardware_concurrency();
    std::string s;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int runStart = -1;
        auto flush = [&](int end) { // CPUs runStart .. end - 1
            if (runStart < 0) return;
            s.append(s.empty() ? "" : ",").append(std::to_string(runStart));
            if (end - 1 > runStart) s.append("-").append(std::to_string(end - 1));
            runStart = -1;
        };
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
            if (CPU_ISSET(cpu, &set)) {
                if (runStart < 0) runStart = cpu;
            } else {
                flush(cpu);
            }
        }
        flush(CPU_SETSIZE);
    }
#endif
    if (s.empty()) s = "unknown";
    s.append(" of ").append(std::to_string(online)).append(" online");
#if defined(_OPENMP)
    s.append("; OpenMP threads ").append(std::to_string(omp_get_max_threads()));
#endif
    return s;
}

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("cpu_model", cpuModel());
    benchmark::AddCustomContext("compiler", compiler());
    benchmark::AddCustomContext("build", build());
    benchmark::AddCustomContext("huge_pages", hugePages());
    benchmark::AddCustomContext("cpu_affinity", cpuAffinity());
    benchmark::AddCustomContext("strata_git", strata::app::gitHash);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
