#pragma once
/// @file The INI reader behind --config. Serial and without MPI: every rank
/// reads the file itself (parse_config_file), tests and fuzzers give
/// parse_config a string stream.
#include <boost/program_options.hpp>
#include <istream>
#include <string>
#include <string_view>

namespace kembed::app {

/// Reads `key = value` lines (long option names without dashes, `#`
/// comments) of the options in `options` from `in` and stores them in `vm`;
/// values already in `vm` (from the command line) win. A leading UTF-8 byte
/// order mark is skipped. Every error throws kembed::Error naming `path` and
/// the 1-based line:
///   PATH:L: unrecognised option 'colour'
///   PATH:L: the argument ('two') for option 'components' is invalid
///   PATH:L: the options configuration file contains an invalid line '...'
///   PATH:L: option '--gamma' cannot be specified more than once
///   PATH:L: '%value%' cannot appear in an option name or value
///   PATH:L: not a text file (NUL byte)
///   PATH:L: not UTF-8 text
/// Nothing else is thrown except std::bad_alloc. po::notify() is left to
/// the caller.
void parse_config(std::istream& in, const boost::program_options::options_description& options,
                  const std::string& path, boost::program_options::variables_map& vm);

/// parse_config() of the file at `path`. The file must be a readable regular
/// file of at most 1 MiB; otherwise kembed::Error
///   cannot read config 'PATH': is a directory
///   cannot read config 'PATH': not a regular file   (FIFO, device, socket)
///   cannot read config 'PATH': larger than 1 MiB, not an options file
///   cannot read config 'PATH': <strerror>            (missing, no permission, I/O)
/// A FIFO is never opened (that would block until someone writes to it).
void parse_config_file(const std::string& path,
                       const boost::program_options::options_description& options,
                       boost::program_options::variables_map& vm);

/// Throws kembed::Error "WHERE: '%name%' cannot appear in an option name or
/// value" when `text` holds a %name% placeholder (lower-case letters and '_'
/// between two '%'). Boost.ProgramOptions (1.74) builds its error messages by
/// replacing %canonical_option%, %value%, %invalid_line%, ... until none is
/// left, so a bad option whose name or value contains one (for example
/// `components = %value%`) made the message grow forever instead of failing.
void reject_option_placeholders(std::string_view text, const std::string& where);

}  // namespace kembed::app
