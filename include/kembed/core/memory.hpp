#pragma once
/// @file Memory use of this process.
#include <cstdint>

namespace kembed {

/// Peak resident set size of this process so far, in bytes.
std::int64_t peak_rss_bytes();

}  // namespace kembed
