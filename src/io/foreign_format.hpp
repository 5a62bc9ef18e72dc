#pragma once
/// @file Private: files kembed does not read, recognized by their first
/// bytes (magic numbers) so that they are named instead of parsed as text.
#include <string>

namespace kembed::io {

/// How many leading bytes foreign_format() and is_hdf5() look at.
inline constexpr std::size_t kSniffBytes = 4096;

/// True when `head` (the first bytes of a file) carries the HDF5 signature at
/// offset 0 or after a user block (512, 1024, 2048 bytes: MATLAB v7.3 files).
bool is_hdf5(const std::string& head);

/// "" when `head` may be text; otherwise the message for `path`: what the
/// file is and how to turn it into something kembed reads. HDF5 is named
/// here too (for builds without HDF5 support).
std::string foreign_format(const std::string& path, const std::string& head);

}  // namespace kembed::io
