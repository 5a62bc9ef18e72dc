#pragma once
/// @file Half-open ranges of global indices.
#include <cstdint>

namespace kembed {

/// Half-open range [begin, end) of global, 0-based indices.
struct IndexRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
};

}  // namespace kembed
