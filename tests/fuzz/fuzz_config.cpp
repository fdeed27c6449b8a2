// libFuzzer target: configuration loading, validation and --set overrides (strata::app::parseConfig).
//
// Input: YAML text, then up to kMaxOverrides overrides, each introduced by the separator "\n--set " (so a seed is a
// configuration file with its overrides appended, and stays readable). A ConfigError is the normal answer to bad
// input; anything else (another exception, a crash, a sanitizer report, a hang, a leak) is a finding. A configuration
// that loads must read back from its resolved YAML to the same configuration (config.hpp promises it), and a
// ConfigError's message must be printable (control characters escaped).
//
// Build: cmake -DSTRATA_FUZZ=ON with clang (tests/fuzz/CMakeLists.txt); run: scripts/fuzz.
#include <strata/app/config.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view kSeparator = "\n--set ";
constexpr std::size_t kMaxOverrides = 8;

// Well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool validUtf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        auto const c = static_cast<unsigned char>(s[i]);
        std::size_t const n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        uint32_t cp = n == 1 ? c : c & (0x7f >> n);
        for (std::size_t k = 1; k < n; ++k) {
            auto const d = static_cast<unsigned char>(s[i + k]);
            if ((d >> 6) != 0x2) return false;
            cp = (cp << 6) | (d & 0x3f);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n;
    }
    return true;
}

[[noreturn]] void finding(char const* what, std::string_view detail) {
    std::fprintf(stderr, "fuzz_config: %s: %.*s\n", what, static_cast<int>(detail.size()), detail.data());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, std::size_t size) {
    std::string_view const input(reinterpret_cast<char const*>(data), size);
    std::size_t end = input.find(kSeparator);
    std::string const yaml(input.substr(0, end));
    std::vector<std::string> overrides;
    while (end != std::string_view::npos && overrides.size() < kMaxOverrides) {
        std::size_t const begin = end + kSeparator.size();
        end = input.find(kSeparator, begin);
        overrides.emplace_back(input.substr(begin, end == std::string_view::npos ? end : end - begin));
    }

    strata::app::Config config;
    try {
        config = strata::app::parseConfig(yaml, "fuzz.yaml", overrides);
    } catch (strata::app::ConfigError const& e) {
        for (char const* c = e.what(); *c; ++c)
            if (static_cast<unsigned char>(*c) < 0x20 && *c != '\n')
                finding("control character in a message", e.what());
        return 0;
    } catch (std::exception const& e) {
        finding("exception other than ConfigError", e.what());
    } catch (...) {
        finding("non-standard exception", "");
    }

    // The resolved YAML reads back to the same configuration. Known exception: a text value that
    // is not UTF-8 (a YAML file must be) and needs quoting comes back changed, because yaml-cpp's emitter writes each
    // invalid byte of a quoted scalar as U+FFFD. Drop this test once the loader refuses text that is not UTF-8.
    if (!validUtf8(config.title) || !validUtf8(config.output.path) || !validUtf8(config.restart.path)) return 0;
    try {
        strata::app::Config again = strata::app::parseConfig(config.resolvedYaml, "fuzz.yaml");
        if (!(again == config)) finding("resolved YAML reads back differently", config.resolvedYaml);
    } catch (std::exception const& e) {
        finding("resolved YAML does not load", std::string(e.what()) + "\n" + config.resolvedYaml);
    }
    return 0;
}
