#pragma once
/// @file Where a text goes when it is produced in pieces (a file being
/// written, a string): large results are streamed, never held whole.
#include <functional>
#include <string_view>

namespace kembed::io {

/// Receives a text in consecutive pieces.
using TextSink = std::function<void(std::string_view)>;

}  // namespace kembed::io
