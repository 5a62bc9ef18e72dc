#pragma once
/// @file How much kembed says on stderr while it runs.

namespace kembed {

/// quiet: nothing but errors; normal: one line when each phase starts and
/// ends (rank 0); verbose: also the spread of phase times over ranks at the end.
/// @pre the same on every rank (verbose adds collectives).
enum class Verbosity { quiet, normal, verbose };

}  // namespace kembed
