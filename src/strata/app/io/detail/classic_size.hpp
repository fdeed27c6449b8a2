// The size a NetCDF classic, 64-bit offset or CDF-5 file must have, read from its header.
//
// libnetcdf reads the bytes a truncated classic file lacks as zeros (or fill values) without an error, so a cut file
// compares as "different" instead of unreadable. The classic header gives every variable's offset (`begin`) and the
// record count, from which the last byte any variable ends at follows. The format is the one of the NetCDF User's
// Guide, "File Format Specification": big-endian, every list tagged, names and attribute values padded to 4 bytes.
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace strata::app::detail {

class ClassicHeader {
public:
    // The bytes the file must hold, or nullopt when it is not a classic-model file (netCDF-4/HDF5), is streaming
    // (numrecs unknown) or its header cannot be read (which libnetcdf then reports itself).
    static std::optional<uint64_t> expectedSize(std::string const& path) {
        std::ifstream in(path, std::ios::binary);
        char magic[4] = {};
        if (!in.read(magic, 4) || magic[0] != 'C' || magic[1] != 'D' || magic[2] != 'F') return std::nullopt;
        if (magic[3] != 1 && magic[3] != 2 && magic[3] != 5) return std::nullopt;
        ClassicHeader h(in, magic[3]);
        try {
            return h.parse();
        } catch (Malformed const&) {
            return std::nullopt;
        }
    }

private:
    struct Malformed {};
    static constexpr uint32_t dimensionTag = 10, variableTag = 11, attributeTag = 12;
    static constexpr uint64_t streaming = 0xFFFFFFFFu;

    ClassicHeader(std::ifstream& in, int version) : m_in(in), m_version(version) {}

    uint64_t big(int bytes) {
        std::array<unsigned char, 8> b{};
        if (!m_in.read(reinterpret_cast<char*>(b.data()), bytes)) throw Malformed{};
        uint64_t v = 0;
        for (int i = 0; i < bytes; ++i)
            v = (v << 8) | b[static_cast<std::size_t>(i)];
        return v;
    }
    uint64_t count() { return big(m_version == 5 ? 8 : 4); } // nelems, dimension lengths, numrecs, vsize
    void skip(uint64_t bytes) {
        if (bytes > (uint64_t{1} << 40) || !m_in.seekg(static_cast<std::streamoff>(bytes), std::ios::cur))
            throw Malformed{};
    }
    // Sizes from a damaged header can be anything: a product or sum that wraps around is a malformed header, not a
    // small file size.
    static uint64_t mul(uint64_t a, uint64_t b) {
        uint64_t r = 0;
        if (__builtin_mul_overflow(a, b, &r)) throw Malformed{};
        return r;
    }
    static uint64_t add(uint64_t a, uint64_t b) {
        uint64_t r = 0;
        if (__builtin_add_overflow(a, b, &r)) throw Malformed{};
        return r;
    }
    static uint64_t padded(uint64_t n) { return add(n, 3) / 4 * 4; }
    void skipName() { skip(padded(count())); }

    static uint64_t typeSize(uint64_t type) {
        switch (type) {
        case 1:
        case 2:
        case 7: return 1; // byte, char, ubyte
        case 3:
        case 8: return 2; // short, ushort
        case 4:
        case 5:
        case 9: return 4; // int, float, uint
        case 6:
        case 10:
        case 11: return 8; // double, int64, uint64
        default: throw Malformed{};
        }
    }

    void skipAttributes() {
        uint64_t const tag = big(4), n = count();
        if (tag == 0 && n == 0) return;
        if (tag != attributeTag) throw Malformed{};
        for (uint64_t a = 0; a < n; ++a) {
            skipName();
            uint64_t const type = big(4);
            skip(padded(mul(count(), typeSize(type))));
        }
    }

    uint64_t parse() {
        uint64_t const numrecs = count();
        if (numrecs == streaming || (m_version == 5 && numrecs == ~uint64_t{0})) throw Malformed{};
        std::vector<uint64_t> dims; // lengths; 0: the record dimension
        uint64_t tag = big(4), n = count();
        if (!(tag == 0 && n == 0)) {
            if (tag != dimensionTag) throw Malformed{};
            for (uint64_t d = 0; d < n; ++d) {
                skipName();
                dims.push_back(count());
            }
        }
        skipAttributes();
        struct Var {
            uint64_t bytes, begin;
            bool record;
        };
        std::vector<Var> vars;
        tag = big(4), n = count();
        if (!(tag == 0 && n == 0)) {
            if (tag != variableTag) throw Malformed{};
            for (uint64_t v = 0; v < n; ++v) {
                skipName();
                uint64_t const rank = count();
                uint64_t elements = 1;
                bool record = false;
                for (uint64_t r = 0; r < rank; ++r) {
                    uint64_t const id = count();
                    if (id >= dims.size()) throw Malformed{};
                    if (dims[id] == 0 && r == 0)
                        record = true;
                    else
                        elements = mul(elements, dims[id]);
                }
                skipAttributes();
                uint64_t const bytes = mul(elements, typeSize(big(4)));
                count(); // vsize: recomputed above (it saturates for variables over 4 GiB)
                uint64_t const begin = big(m_version == 1 ? 4 : 8);
                vars.push_back({bytes, begin, record});
            }
        }
        // One record holds every record variable, each padded to 4 bytes, unless there is only one.
        uint64_t recordSize = 0, recordVars = 0;
        for (Var const& v : vars)
            if (v.record) recordSize = add(recordSize, padded(v.bytes)), ++recordVars;
        if (recordVars == 1)
            for (Var const& v : vars)
                if (v.record) recordSize = v.bytes;
        uint64_t end = 0;
        for (Var const& v : vars) {
            uint64_t const last = !v.record      ? add(v.begin, v.bytes)
                                  : numrecs == 0 ? 0
                                                 : add(add(v.begin, mul(numrecs - 1, recordSize)), v.bytes);
            end = last > end ? last : end;
        }
        return end;
    }

    std::ifstream& m_in;
    int m_version;
};

} // namespace strata::app::detail
