#pragma once
/// @file The INI reader behind --config. Serial, no MPI and no file access:
/// the CLI gives it the opened file, tests and fuzzers a string stream.
#include <boost/program_options.hpp>
#include <istream>
#include <string>
#include <string_view>

namespace kembed::app {

/// Reads `key = value` lines (long option names without dashes, `#`
/// comments) of the options in `options` from `in` and stores them in `vm`;
/// values already in `vm` (from the command line) win. An unknown key, a
/// malformed line, a value of the wrong type or a placeholder (see
/// reject_option_placeholders()) throws kembed::Error "PATH: <reason>" with
/// `path` as given; nothing else is thrown except std::bad_alloc.
/// po::notify() is left to the caller.
void parse_config(std::istream& in, const boost::program_options::options_description& options,
                  const std::string& path, boost::program_options::variables_map& vm);

/// Throws kembed::Error "WHERE: '%name%' cannot appear in an option name or
/// value" when `text` holds a %name% placeholder (lower-case letters and '_'
/// between two '%'). Boost.ProgramOptions (1.74) builds its error messages by
/// replacing %canonical_option%, %value%, %invalid_line%, ... until none is
/// left, so a bad option whose name or value contains one (for example
/// `components = %value%`) made the message grow forever instead of failing.
void reject_option_placeholders(std::string_view text, const std::string& where);

}  // namespace kembed::app
