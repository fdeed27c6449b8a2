// Host allocation for Buffer (core/memory.hpp): large arrays on 2 MiB boundaries, advised as transparent huge pages.
#include <strata/core/memory.hpp>

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace strata::core::detail {

bool hugePages() {
    static bool const on = [] {
        char const* v = std::getenv("STRATA_HUGE_PAGES");
        return !(v != nullptr && v[0] == '0' && v[1] == '\0');
    }();
    return on;
}

namespace {
bool onHugePages(std::size_t bytes) { return bytes >= hugePageBytes && hugePages(); }
} // namespace

void* hostAllocate(std::size_t bytes) {
    if (!onHugePages(bytes)) return ::operator new(bytes);
    void* const p = ::operator new (bytes, std::align_val_t{hugePageBytes});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Advice, before the first touch, for the whole 2 MiB pages of the array (the tail keeps 4 KiB pages). Where the
    // kernel has no THP, or none is free, the pages are 4 KiB ones as before: the result is not checked on purpose.
    (void)madvise(p, bytes / hugePageBytes * hugePageBytes, MADV_HUGEPAGE);
#endif
    return p;
}

void hostRelease(void* p, std::size_t bytes) noexcept {
    if (!onHugePages(bytes))
        ::operator delete(p);
    else
        ::operator delete (p, std::align_val_t{hugePageBytes});
}

} // namespace strata::core::detail
