// The defences against damaged files: the seal (app/io/seal.hpp) holds on the file it sealed and on nothing else, with
// a message that says what is wrong; runIsolated (app/io/isolated.hpp) turns a crash into a signal number and relays
// what the work wrote before it.
#include <strata/app/io/isolated.hpp>
#include <strata/app/io/seal.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using strata::app::sealBytes;
using strata::app::sealFile;
using strata::app::sealProblem;

std::string scratch(std::string const& name) {
    return (fs::temp_directory_path() / ("strata-test-seal-" + std::to_string(::getpid()) + "-" + name)).string();
}

void write(std::string const& path, std::string const& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string read(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string sealed(std::string const& name, std::string const& payload) {
    std::string const path = scratch(name);
    write(path, payload);
    sealFile(path);
    return path;
}

} // namespace

TEST_CASE("seal: a sealed file holds, and keeps its bytes in front of the seal") {
    std::string const payload = "CDF\x02 any bytes at all, a NetCDF file in practice";
    std::string const path = sealed("whole", payload);
    CHECK(sealProblem(path) == std::nullopt);
    std::string const bytes = read(path);
    REQUIRE(bytes.size() == payload.size() + sealBytes);
    CHECK(bytes.substr(0, payload.size()) == payload);
    CHECK(bytes.substr(payload.size(), 8) == "STRATA-S");
    std::string const empty = sealed("empty", "");
    CHECK(sealProblem(empty) == std::nullopt);
    fs::remove(path);
    fs::remove(empty);
}

TEST_CASE("seal: every cut, every flipped byte, an unsealed file and a missing file are refused, saying why") {
    std::string const payload(300, 'x');
    std::string const path = sealed("damage", payload);
    std::string const bytes = read(path);
    std::string const probe = scratch("probe");
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        write(probe, bytes.substr(0, cut));
        auto const problem = sealProblem(probe);
        REQUIRE(problem);
        // A seal cut short still gives the full length; a lost one cannot.
        if (cut >= payload.size() + 24)
            CHECK(*problem == "truncated: " + std::to_string(cut) + " of " + std::to_string(bytes.size()) + " bytes");
        else
            CHECK(problem->starts_with("no seal at its end"));
    }
    for (std::size_t at = 0; at < bytes.size(); ++at) {
        std::string changed = bytes;
        changed[at] = static_cast<char>(changed[at] ^ 0x01);
        write(probe, changed);
        auto const problem = sealProblem(probe);
        REQUIRE(problem);
        if (at < payload.size() || at >= payload.size() + 32) CHECK(problem->starts_with("checksum mismatch"));
    }
    write(probe, bytes + "more");
    CHECK(sealProblem(probe)->starts_with("no seal at its end"));
    write(probe, payload);
    CHECK(sealProblem(probe)->starts_with("no seal at its end"));
    CHECK(sealProblem(scratch("missing"))->starts_with("cannot be opened"));
    CHECK(*sealProblem(fs::temp_directory_path().string()) == "not a regular file");
    fs::remove(path);
    fs::remove(probe);
}

TEST_CASE("seal: the seal's own fields are covered") {
    std::string const path = sealed("fields", std::string(100, 'y'));
    std::string bytes = read(path);
    std::string const probe = scratch("fields-probe");
    std::string version = bytes;
    version[100 + 8] = 2;
    write(probe, version);
    CHECK(sealProblem(probe)->starts_with("unknown seal (version 2, 64 bytes"));
    std::string length = bytes;
    length[100 + 16] = 99;
    write(probe, length);
    CHECK(*sealProblem(probe) == "length mismatch: 100 bytes before the seal, which says 99");
    std::string reserved = bytes;
    reserved[100 + 24] = 1;
    write(probe, reserved);
    CHECK(sealProblem(probe)->starts_with("checksum mismatch"));
    fs::remove(path);
    fs::remove(probe);
}

TEST_CASE("runIsolated: the work's code and output come back, and a crash as its signal") {
    std::ostringstream out;
    auto const fine = strata::app::runIsolated(out, [](std::ostream& o) {
        o << "compared\n";
        return 1;
    });
    CHECK(fine.code == 1);
    CHECK(fine.signal == 0);
    CHECK(out.str() == "compared\n");

    std::ostringstream crashed;
    auto const crash = strata::app::runIsolated(crashed, [](std::ostream& o) {
        o << "before the crash\n";
        std::signal(SIGSEGV, SIG_DFL); // as in a library, not through Catch's handler
        std::raise(SIGSEGV);
        return 0;
    });
    CHECK(crash.signal == SIGSEGV);
    CHECK(crashed.str() == "before the crash\n");

    int changed = 0;
    std::ostringstream quiet;
    strata::app::runIsolated(quiet, [&](std::ostream&) { return changed = 7; });
    CHECK(changed == 0); // the child's state stays in the child
}
