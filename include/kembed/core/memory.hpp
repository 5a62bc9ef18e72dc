#pragma once
/// @file Memory use of this process.
#include <cstdint>

namespace kembed {

/// Peak resident set size of this process so far, in bytes.
std::int64_t peak_rss_bytes();

/// Resident set size of this process now, in bytes (the peak where the
/// system does not tell the current value).
std::int64_t current_rss_bytes();

}  // namespace kembed
