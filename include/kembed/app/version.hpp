#pragma once
/// @file Version and build information.
#include <string>

namespace kembed {

/// "kembed X.Y.Z" plus the solvers and libraries this build has.
std::string version_text();

}  // namespace kembed
