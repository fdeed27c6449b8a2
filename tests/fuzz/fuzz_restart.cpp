// libFuzzer target: reading a restart file (strata::app::readRestartMeta: the seal checked with plain reads, then
// the attributes read with libnetcdf), and the seal itself.
//
// Input: the bytes of a file. Each input is written to a temporary file and
//   1. read as a restart: a RestartError (naming the file, printable) or the attributes are the only answers; a
//      crash, another exception, a sanitizer report, a hang or a leak is a finding. libnetcdf parses only files whose
//      seal holds, so a damaged file never reaches it;
//   2. sealed as the payload of a new file: the seal must then hold, and must not hold once one byte (chosen by the
//      input) is changed or the file is cut.
//
// Build: cmake -DSTRATA_FUZZ=ON with clang (tests/fuzz/CMakeLists.txt); run: scripts/fuzz.
#include <strata/app/io/restart.hpp>
#include <strata/app/io/seal.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

namespace {

[[noreturn]] void finding(char const* what, std::string_view detail) {
    std::fprintf(stderr, "fuzz_restart: %s: %.*s\n", what, static_cast<int>(detail.size()), detail.data());
    std::abort();
}

std::string const& scratch() {
    static std::string const path =
        (std::filesystem::temp_directory_path() / ("strata-fuzz-restart-" + std::to_string(::getpid()) + ".nc"))
            .string();
    return path;
}

void writeFile(std::string const& path, uint8_t const* data, std::size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<char const*>(data), static_cast<std::streamsize>(size));
    if (!out) finding("cannot write the scratch file", path);
}

void readAsRestart(std::string const& path) {
    try {
        strata::app::readRestartMeta(path);
    } catch (strata::app::RestartError const& e) {
        std::string_view const message = e.what();
        if (message.find(path) == std::string_view::npos)
            finding("a RestartError that does not name the file", message);
        for (char c : message)
            if (static_cast<unsigned char>(c) < 0x20) finding("control character in a message", message);
    } catch (std::exception const& e) {
        finding("exception other than RestartError", e.what());
    } catch (...) {
        finding("non-standard exception", "");
    }
}

void sealRoundTrip(std::string const& path, uint8_t const* data, std::size_t size) {
    writeFile(path, data, size);
    strata::app::sealFile(path);
    if (auto const problem = strata::app::sealProblem(path)) finding("a fresh seal does not hold", *problem);
    std::size_t const total = size + strata::app::sealBytes;
    std::size_t const at = size == 0 ? 0 : (data[0] * 257u + data[size - 1]) % total;
    {
        std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
        f.seekg(static_cast<std::streamoff>(at));
        char c = 0;
        f.get(c);
        f.seekp(static_cast<std::streamoff>(at));
        f.put(static_cast<char>(c ^ 0x10));
    }
    if (!strata::app::sealProblem(path)) finding("a changed byte passes the seal", std::to_string(at));
    std::filesystem::resize_file(path, at);
    if (!strata::app::sealProblem(path)) finding("a cut file passes the seal", std::to_string(at));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, std::size_t size) {
    std::string const& path = scratch();
    writeFile(path, data, size);
    readAsRestart(path);
    sealRoundTrip(path, data, size);
    std::remove(path.c_str());
    return 0;
}
