#include "kembed/app/config_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <sstream>
#include <utility>
#include <vector>

#include "kembed/core/error.hpp"

namespace po = boost::program_options;

namespace kembed::app {

namespace {

constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no
// overlong forms, no surrogates, at most U+10FFFF), or 0.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t j) { return static_cast<unsigned char>(text[j]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t j = 2; j < n; ++j)
    if (byte(i + j) < 0x80 || byte(i + j) > 0xBF) return 0;
  return n;
}

// Throws "PATH:L: ..." for a NUL byte or bytes that are not UTF-8: the
// values end up in run.json, and such bytes mean this is not an options file.
void check_text(std::string_view text, const std::string& path) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\0') throw Error(path + ":" + std::to_string(line) + ": not a text file (NUL byte)");
    const std::size_t n = utf8_length(text, i);
    if (n == 0) throw Error(path + ":" + std::to_string(line) + ": not UTF-8 text");
    if (text[i] == '\n') ++line;
    i += n;
  }
}

// Boost's parser and store, on the first `count` lines.
void store_lines(const std::vector<std::string>& lines, std::size_t count,
                 const po::options_description& options, po::variables_map& vm) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += lines[i] + "\n";
  std::istringstream in(text);
  po::store(po::parse_config_file(in, options, false), vm);
}

}  // namespace

void reject_option_placeholders(std::string_view text, const std::string& where) {
  auto is_name_char = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  for (std::size_t open = text.find('%'); open != std::string_view::npos;) {
    std::size_t end = open + 1;
    while (end < text.size() && is_name_char(text[end])) ++end;
    if (end < text.size() && text[end] == '%' && end > open + 1)
      throw Error(where + ": '" + std::string(text.substr(open, end - open + 1)) +
                  "' cannot appear in an option name or value");
    open = text.find('%', open + 1);
  }
}

void parse_config(std::istream& in, const po::options_description& options, const std::string& path,
                  po::variables_map& vm) {
  std::string text(std::istreambuf_iterator<char>(in), {});
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  check_text(text, path);
  std::vector<std::string> lines;
  std::istringstream split(text);
  for (std::string line; std::getline(split, line);) {
    reject_option_placeholders(line, path + ":" + std::to_string(lines.size() + 1));
    lines.push_back(line);
  }
  // Stored into a copy: a failed store leaves the options before the bad one
  // behind, which would make every later attempt fail as a duplicate.
  po::variables_map attempt = vm;
  try {
    store_lines(lines, lines.size(), options, attempt);
    vm = std::move(attempt);
    return;
  } catch (const po::error&) {
  }
  // Boost's messages name no line. Parsing stops at the first bad line, so
  // "the first m lines fail" is monotone in m: bisect for the smallest m.
  std::size_t good = 0, bad = lines.size();
  std::string message;
  while (bad - good > 1) {
    const std::size_t mid = good + (bad - good) / 2;
    po::variables_map scratch = vm;
    try {
      store_lines(lines, mid, options, scratch);
      good = mid;
    } catch (const po::error&) {
      bad = mid;
    }
  }
  po::variables_map scratch = vm;
  try {
    store_lines(lines, bad, options, scratch);
  } catch (const po::error& e) {
    message = e.what();
  }
  if (message.empty()) message = "invalid options file";  // not monotone after all
  throw Error(path + ":" + std::to_string(bad) + ": " + message);
}

void parse_config_file(const std::string& path, const po::options_description& options,
                       po::variables_map& vm) {
  const std::string where = "cannot read config '" + path + "': ";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(where + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error(where + "is a directory");
  if (!S_ISREG(st.st_mode)) throw Error(where + "not a regular file");
  // O_NONBLOCK: should the path be swapped for a FIFO after the stat, the
  // open does not wait for a writer; fstat then rejects it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(where + std::strerror(errno));
  std::string text;
  std::string error;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = "not a regular file";
  } else {
    char buffer[65536];
    for (;;) {
      const ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        error = std::strerror(errno);
        break;
      }
      if (got == 0) break;
      text.append(buffer, static_cast<std::size_t>(got));
      if (text.size() > kMaxConfigBytes) {
        error = "larger than 1 MiB, not an options file";
        break;
      }
    }
  }
  ::close(fd);
  if (!error.empty()) throw Error(where + error);
  std::istringstream in(text);
  parse_config(in, options, path, vm);
}

}  // namespace kembed::app
