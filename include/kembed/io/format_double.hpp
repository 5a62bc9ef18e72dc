#pragma once
/// @file The one number formatter of kembed's output: the shortest decimal
/// text that reads back as exactly the same double (std::to_chars).
#include <string>

namespace kembed::io {

/// Longest text format_double() writes ("-2.2250738585072014e-308" is 24).
inline constexpr int kMaxDoubleChars = 32;

/// Writes the shortest round-trip text of `value` at `first` and returns the
/// end; strtod of the text gives back `value` bit for bit ("-0" for negative
/// zero, "nan", "inf", "-inf" for the non-finite).
/// @pre [first, first + kMaxDoubleChars) is writable
char* format_double(char* first, double value);

/// The same text as a string, for messages and reports.
std::string format_double(double value);

}  // namespace kembed::io
