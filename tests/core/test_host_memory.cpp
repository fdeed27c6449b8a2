// Host arrays of Buffer (core/memory.hpp): from 2 MiB they start on a 2 MiB boundary and are advised to the kernel as
// transparent huge pages, unless STRATA_HUGE_PAGES=0. CTest runs this binary twice, as it is and with
// STRATA_HUGE_PAGES=0, and each run checks what its setting promises: the advice is read back from the kernel's
// view of the process (the "hg" flag of the mapping in /proc/self/smaps), not from the code that gave it.
#include <strata/core/memory.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

using strata::core::Buffer;
using strata::core::MemSpace;
namespace detail = strata::core::detail;

namespace {

// The VmFlags of the mapping that holds address p, from /proc/self/smaps ("" where none holds it or no such file).
std::string vmFlagsOf(void const* p) {
    auto const a = reinterpret_cast<std::uintptr_t>(p);
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        std::uintptr_t lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
            inside = lo <= a && a < hi;
            continue;
        }
        if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
    }
    return "";
}

// Whether this kernel has transparent huge pages at all (madvise(MADV_HUGEPAGE) fails without them).
bool kernelHasThp() { return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good(); }

} // namespace

TEST_CASE("a host buffer of 2 MiB or more starts on a 2 MiB boundary and is advised as huge pages") {
    std::size_t const n = 3 * detail::hugePageBytes / sizeof(double) + 5; // 3 huge pages and a tail
    Buffer<double> b(n, MemSpace::Host, 2.5);
    auto const address = reinterpret_cast<std::uintptr_t>(b.host().data());
    REQUIRE(b.size() == n);
    CHECK(b.host()[0] == 2.5);
    CHECK(b.host()[n - 1] == 2.5);
    if (detail::hugePages()) {
        CHECK(address % detail::hugePageBytes == 0);
#if defined(__linux__)
        std::string const flags = vmFlagsOf(b.host().data());
        if (kernelHasThp() && !flags.empty()) {
            INFO("VmFlags of the buffer's mapping: " << flags);
            CHECK(flags.find(" hg ") != std::string::npos);
        } else {
            WARN("no transparent huge pages in this kernel, or no VmFlags in /proc/self/smaps: the advice is not read "
                 "back");
        }
#endif
    } else {
        INFO("STRATA_HUGE_PAGES=0: plain operator new, no advice");
        CHECK(vmFlagsOf(b.host().data()).find(" hg ") == std::string::npos);
    }
    // A moved buffer keeps its array (the allocator is stateless: equal in every buffer).
    double const* const before = b.host().data();
    Buffer<double> moved(std::move(b));
    CHECK(moved.host().data() == before);
    CHECK(b.size() == 0);
}

TEST_CASE("host buffers of every size around 2 MiB hold their values, and from 2 MiB they start on a 2 MiB boundary") {
    for (std::size_t bytes : {std::size_t{8}, std::size_t{4096}, detail::hugePageBytes - 8, detail::hugePageBytes,
                              detail::hugePageBytes + 8}) {
        std::size_t const n = bytes / sizeof(double);
        Buffer<double> b(n, MemSpace::Host, 1.0);
        for (std::size_t i = 0; i < n; ++i)
            b.host()[i] = static_cast<double>(i);
        double sum = 0;
        for (double v : b.host())
            sum += v;
        CHECK(sum == static_cast<double>(n) * static_cast<double>(n - 1) / 2);
        if (detail::hugePages() && bytes >= detail::hugePageBytes)
            CHECK(reinterpret_cast<std::uintptr_t>(b.host().data()) % detail::hugePageBytes == 0);
    }
}

TEST_CASE("STRATA_HUGE_PAGES is read as documented") {
    char const* v = std::getenv("STRATA_HUGE_PAGES");
    bool const off = v != nullptr && std::string(v) == "0";
    CHECK(detail::hugePages() == !off);
}
