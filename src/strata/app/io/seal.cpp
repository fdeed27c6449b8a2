// Seals: see seal.hpp for the layout and what a seal promises.
#include <strata/app/io/seal.hpp>

#include <strata/core/error.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <sys/stat.h>
#include <vector>

namespace strata::app {
namespace {

constexpr std::string_view magic = "STRATA-S";
constexpr uint32_t sealVersion = 1;
constexpr std::size_t fieldBytes = 32; // the fields the digest covers; the digest fills the rest
using Digest = std::array<unsigned char, 32>;
static_assert(fieldBytes + sizeof(Digest) == sealBytes);

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

void putLittle(unsigned char* at, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i)
        at[i] = static_cast<unsigned char>(value >> (8 * i));
}

uint64_t getLittle(unsigned char const* at, int bytes) {
    uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; --i)
        value = (value << 8) | at[i];
    return value;
}

std::array<unsigned char, fieldBytes> sealFields(uint64_t payload) {
    std::array<unsigned char, fieldBytes> fields{};
    std::copy(magic.begin(), magic.end(), fields.begin());
    putLittle(&fields[8], sealVersion, 4);
    putLittle(&fields[12], sealBytes, 4);
    putLittle(&fields[16], payload, 8);
    return fields;
}

// SHA-256 of the first `payload` bytes of the file (read from its start) followed by `fields`; nothing when the file
// ends before `payload` bytes or cannot be read.
std::optional<Digest> digest(std::FILE* f, uint64_t payload, std::array<unsigned char, fieldBytes> const& fields) {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw Error("OpenSSL has no SHA-256");
    std::vector<unsigned char> buffer(std::size_t{1} << 16);
    if (std::fseek(f, 0, SEEK_SET) != 0) return std::nullopt;
    for (uint64_t left = payload; left > 0;) {
        std::size_t const want = static_cast<std::size_t>(std::min<uint64_t>(left, buffer.size()));
        std::size_t const got = std::fread(buffer.data(), 1, want, f);
        if (got != want) return std::nullopt;
        EVP_DigestUpdate(ctx.get(), buffer.data(), got);
        left -= got;
    }
    EVP_DigestUpdate(ctx.get(), fields.data(), fields.size());
    Digest d{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(ctx.get(), d.data(), &length);
    return d;
}

std::string hex(unsigned char const* bytes, std::size_t n) {
    std::string out;
    char two[3];
    for (std::size_t i = 0; i < n; ++i) {
        std::snprintf(two, sizeof two, "%02x", bytes[i]);
        out += two;
    }
    return out;
}

// Every byte compared, no early exit: the comparison says only "same" or "not", so a fuzzer's comparison tracing
// cannot read the expected digest off it and forge seals (which would make it fuzz libnetcdf, not Strata).
bool sameDigest(Digest const& d, unsigned char const* sealed) {
    unsigned difference = 0;
    for (std::size_t i = 0; i < d.size(); ++i)
        difference |= static_cast<unsigned>(d[i] ^ sealed[i]);
    return difference == 0;
}

std::string noSeal() {
    return "no seal at its end: cut short, or written or rewritten by another program (or an older Strata)";
}

// A seal cut short: its magic within the last bytes and its payload length whole gives the file's full size.
std::optional<std::string> cutSeal(std::vector<unsigned char> const& tail, uint64_t size) {
    auto const at = std::search(tail.begin(), tail.end(), magic.begin(), magic.end());
    auto const from = static_cast<std::size_t>(at - tail.begin());
    if (at == tail.end() || from + 24 > tail.size()) return std::nullopt;
    uint64_t const payload = getLittle(&tail[from + 16], 8);
    if (getLittle(&tail[from + 8], 4) != sealVersion || payload > UINT64_MAX - sealBytes || payload + sealBytes <= size)
        return std::nullopt;
    return "truncated: " + std::to_string(size) + " of " + std::to_string(payload + sealBytes) + " bytes";
}

} // namespace

void sealFile(std::string const& path) {
    File f(std::fopen(path.c_str(), "r+b"));
    if (!f) throw Error("cannot open " + path + " to seal it: " + std::strerror(errno));
    if (std::fseek(f.get(), 0, SEEK_END) != 0) throw Error("cannot seek in " + path);
    long const end = std::ftell(f.get());
    if (end < 0) throw Error("cannot find the size of " + path);
    auto const payload = static_cast<uint64_t>(end);
    auto const fields = sealFields(payload);
    auto const d = digest(f.get(), payload, fields);
    if (!d) throw Error("cannot read " + path + " back to seal it");
    std::array<unsigned char, sealBytes> seal{};
    std::copy(fields.begin(), fields.end(), seal.begin());
    std::copy(d->begin(), d->end(), seal.begin() + fieldBytes);
    if (std::fseek(f.get(), 0, SEEK_END) != 0 || std::fwrite(seal.data(), 1, seal.size(), f.get()) != seal.size() ||
        std::fflush(f.get()) != 0)
        throw Error("cannot write the seal of " + path + ": " + std::strerror(errno));
}

std::optional<std::string> sealProblem(std::string const& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::string("cannot be opened: ") + std::strerror(errno);
    if (!S_ISREG(st.st_mode)) return std::string("not a regular file");
    File f(std::fopen(path.c_str(), "rb"));
    if (!f) return std::string("cannot be opened: ") + std::strerror(errno);
    auto const size = static_cast<uint64_t>(st.st_size);

    std::vector<unsigned char> tail(static_cast<std::size_t>(std::min<uint64_t>(size, sealBytes)));
    if (std::fseek(f.get(), static_cast<long>(size - tail.size()), SEEK_SET) != 0 ||
        std::fread(tail.data(), 1, tail.size(), f.get()) != tail.size())
        return std::string("cannot be read");
    if (tail.size() < sealBytes || !std::equal(magic.begin(), magic.end(), tail.begin()))
        return cutSeal(tail, size).value_or(noSeal());

    uint64_t const version = getLittle(&tail[8], 4), length = getLittle(&tail[12], 4);
    if (version != sealVersion || length != sealBytes)
        return "unknown seal (version " + std::to_string(version) + ", " + std::to_string(length) +
               " bytes; this Strata reads version " + std::to_string(sealVersion) + ", " + std::to_string(sealBytes) +
               " bytes): damaged, or sealed by another Strata version";
    uint64_t const payload = getLittle(&tail[16], 8), found = size - sealBytes;
    // A cut keeps the front of a file, and so loses the seal: a whole seal with another length is a damaged seal or
    // bytes removed or added in the middle.
    if (payload != found)
        return "length mismatch: " + std::to_string(found) + " bytes before the seal, which says " +
               std::to_string(payload);
    std::array<unsigned char, fieldBytes> fields{};
    std::copy(tail.begin(), tail.begin() + fieldBytes, fields.begin());
    auto const d = digest(f.get(), payload, fields);
    if (!d) return std::string("cannot be read to its end");
    if (!sameDigest(*d, &tail[fieldBytes]))
        return "checksum mismatch: its bytes are not the ones written (SHA-256 " + hex(d->data(), 8) +
               "..., its seal says " + hex(&tail[fieldBytes], 8) + "...)";
    return std::nullopt;
}

} // namespace strata::app
