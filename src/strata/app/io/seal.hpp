// A seal: 64 bytes appended to a finished file so that a reader can tell, with plain reads and before any library
// parses it, that the file holds exactly the bytes its writer wrote.
//
// Restart files carry one (restart.cpp): libnetcdf reads the bytes a cut file lacks as zeros, believes any edited
// attribute, and crashes on some single flipped bits in a header, so nothing it would parse is trusted unchecked.
// NetCDF readers ignore bytes after the data, so a sealed file stays an ordinary NetCDF file for every other tool.
//
// Layout (little-endian), at the very end of the file:
//   bytes  0..7   magic "STRATA-S"
//   bytes  8..11  seal version (1)
//   bytes 12..15  seal size (64)
//   bytes 16..23  payload bytes: the length of the file before the seal
//   bytes 24..31  zero
//   bytes 32..63  SHA-256 of the payload followed by bytes 0..31 of the seal (so the fields above are covered too)
//
// What it is not: a signature. Anyone can seal a file, so a file crafted on purpose passes; the seal catches damage
// and edits made by tools that do not know about it (a cut copy, a flipped bit, ncatted, ncgen).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace strata::app {

inline constexpr std::size_t sealBytes = 64;

// Appends the seal of the file's current contents and flushes it to the file (the caller syncs to disk). Throws
// strata::Error naming the file when it cannot be read or written.
void sealFile(std::string const& path);

// Why the file is not sealed intact, in a few words for a message after its name ("truncated: 1000 of 63444 bytes",
// "checksum mismatch: ..."), or nothing when it is. Reads the file; parses nothing but the seal.
std::optional<std::string> sealProblem(std::string const& path);

} // namespace strata::app
