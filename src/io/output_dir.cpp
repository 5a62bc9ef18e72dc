#include "kembed/io/output_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "kembed/core/error.hpp"

namespace fs = std::filesystem;

namespace kembed::io {

namespace {

constexpr const char* kStagingPrefix = ".kembed-tmp-";
constexpr const char* kStagingMarker = ".kembed-staging";
constexpr const char* kMarkerHeader = "kembed-result 1";

fs::path normal(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

std::string parent_of(const std::string& path) {
  const fs::path parent = normal(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

/// Absolute, with symbolic links of the existing part resolved.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) return p.lexically_normal();
  fs::path canonical = fs::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal() : canonical;
}

/// True when `inner` is `outer` or lies below it (both resolved).
bool is_within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

std::string hostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

/// A new file `target` holding the pieces that `produce` hands over, synced.
void write_new_file(const std::string& target, const std::function<void(const TextSink&)>& produce) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) throw Error("cannot write '" + target + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } open_file{fd};
  produce([&](std::string_view piece) {
    std::size_t done = 0;
    while (done < piece.size()) {
      const ssize_t w = ::write(fd, piece.data() + done, piece.size() - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw Error("cannot write '" + target + "': " + std::strerror(errno));
      }
      done += static_cast<std::size_t>(w);
    }
  });
  const bool synced = ::fsync(fd) == 0;
  const int saved = errno;
  open_file.fd = -1;
  if (::close(fd) != 0 || !synced)
    throw Error("cannot write '" + target + "': " + std::strerror(synced ? errno : saved));
}

void write_whole_file(const std::string& target, const std::string& contents) {
  write_new_file(target, [&](const TextSink& sink) { sink(contents); });
}

void sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw Error("cannot open '" + path + "' to sync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw Error("cannot sync '" + path + "': " + std::strerror(saved));
}

/// Every entry below `dir` as a relative path (directories end in '/'),
/// except the result marker itself; symbolic links are listed, not followed.
std::set<std::string> tree_entries(const fs::path& dir) {
  std::set<std::string> entries;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    std::string rel = it->path().lexically_relative(dir).generic_string();
    if (rel == kResultMarker) continue;
    if (it->is_directory() && !it->is_symlink()) rel += '/';
    entries.insert(rel);
  }
  return entries;
}

/// The entries a result marker in `dir` lists; false when there is none or
/// it is not one kembed wrote.
bool read_marker(const fs::path& dir, std::set<std::string>& listed) {
  std::ifstream in(dir / kResultMarker);
  std::string line;
  if (!in || !std::getline(in, line) || line != kMarkerHeader) return false;
  while (std::getline(in, line))
    if (!line.empty()) listed.insert(line);
  return true;
}

enum class Kind { absent, empty, result, other };

struct Existing {
  Kind kind = Kind::absent;
  std::string why;  ///< for Kind::other: what is there
};

/// What is at `path` now, as far as replacing it is concerned.
Existing inspect(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    // ENOTDIR: a parent is a file; the parent check says so.
    if (errno == ENOENT || errno == ENOTDIR) return {Kind::absent, {}};
    return {Kind::other, std::string("cannot be examined: ") + std::strerror(errno)};
  }
  if (S_ISLNK(st.st_mode))
    return {Kind::other, "is a symbolic link (give the directory it points to, or a new name)"};
  if (!S_ISDIR(st.st_mode)) return {Kind::other, "exists and is not a directory"};
  std::set<std::string> entries;
  try {
    entries = tree_entries(path);
  } catch (const fs::filesystem_error& e) {
    return {Kind::other, std::string("cannot be listed: ") + e.code().message()};
  }
  std::set<std::string> listed;
  const bool marked = read_marker(path, listed);
  if (!marked && fs::exists(fs::path(path) / kResultMarker))
    return {Kind::other, std::string("holds a '") + kResultMarker + "' file kembed did not write"};
  if (entries.empty()) return {marked ? Kind::result : Kind::empty, {}};
  for (const std::string& e : entries)
    if (!marked || !listed.count(e))
      return {Kind::other, marked ? "is an earlier kembed result, but holds '" + e +
                                        "', which kembed did not write there"
                                  : "is not empty and is not a kembed result (it holds '" + e +
                                        "')"};
  return {Kind::result, {}};
}

/// Nearest ancestor of `path` that exists (where missing parents will be created).
fs::path existing_ancestor(const fs::path& path) {
  fs::path p = path.parent_path();
  struct stat st {};
  while (!p.empty() && ::lstat(p.c_str(), &st) != 0 && p != p.root_path()) p = p.parent_path();
  return p.empty() ? fs::path(".") : p;
}

/// Removes staging directories that killed runs left in `parent`: only those
/// kembed marked as its own, written on this host by a process that is gone.
void remove_stale_staging(const fs::path& parent) {
  const std::string host = hostname();
  std::error_code ec;
  // Best effort: an entry that cannot be read or removed is left alone.
  try {
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(kStagingPrefix, 0) != 0 || !entry.is_directory(ec)) continue;
      std::ifstream marker(entry.path() / kStagingMarker);
      std::string marker_host;
      long long pid = 0;
      if (!(marker >> marker_host >> pid) || marker_host != host || pid <= 0 || pid > INT_MAX)
        continue;
      if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(entry.path(), ec);
    }
  } catch (const fs::filesystem_error&) {
  }
}

}  // namespace

void check_output_path(const std::string& path, const std::vector<std::string>& reads) {
  if (path.empty()) throw Error("no output directory given (--output-dir)");
  const std::string what = "output directory '" + path + "'";
  const fs::path target = resolved(normal(path));
  std::error_code ec;
  const fs::path cwd = resolved(fs::current_path(ec));
  if (target == target.root_path())
    throw Error(what + " is the root directory; give a new directory for the results");
  if (!ec && target == cwd)
    throw Error(what + " is the current directory, which kembed would have to replace as a "
                       "whole; give a new subdirectory, e.g. --output-dir results");
  if (const char* home = std::getenv("HOME"); home && *home && target == resolved(home))
    throw Error(what + " is the home directory; give a new directory for the results");
  for (const std::string& read : reads) {
    if (read.empty() || read == "-") continue;
    const fs::path source = resolved(read);
    if (is_within(source, target))
      throw Error(what + (source == target ? " is" : " contains") + " '" + read +
                  "', which this run reads; kembed never replaces its input: choose another "
                  "output directory");
    if (is_within(target, source))
      throw Error(what + " lies inside '" + read +
                  "', which this run reads; choose an output directory outside it");
  }
  const Existing existing = inspect(path);
  if (existing.kind == Kind::other)
    throw Error(what + " " + existing.why +
                "; kembed replaces only empty directories and its own earlier results: "
                "choose a new or empty directory");
  const fs::path ancestor = existing_ancestor(normal(path));
  struct stat st {};
  if (::stat(ancestor.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error("cannot create " + what + ": '" + ancestor.string() + "' is not a directory");
  if (::access(ancestor.c_str(), W_OK | X_OK) != 0)
    throw Error("cannot create " + what + ": directory '" + ancestor.string() +
                "' is not writable");
}

OutputDir::OutputDir(std::string path, const std::vector<std::string>& reads)
    : path_(std::move(path)), reads_(reads) {
  check_output_path(path_, reads_);
  const fs::path parent = parent_of(path_);
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw Error("cannot create '" + parent.string() + "': " + ec.message());
  remove_stale_staging(parent);
  staging_ = (parent / (kStagingPrefix + std::to_string(::getpid()))).string();
  if (!fs::create_directory(staging_, ec) || ec)
    throw Error("cannot create '" + staging_ + "': " +
                (ec ? ec.message() : std::string("it exists already")));
  write_whole_file(file(kStagingMarker), hostname() + " " + std::to_string(::getpid()) + "\n");
}

OutputDir::~OutputDir() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

std::string OutputDir::file(const std::string& name) const {
  return (fs::path(staging_) / name).string();
}

void OutputDir::write(const std::string& name, const std::string& contents) const {
  write(name, [&](const TextSink& sink) { sink(contents); });
}

void OutputDir::write(const std::string& name, const std::function<void(const TextSink&)>& produce) const {
  const std::string target = file(name);
  fs::remove(target);  // a file this run staged earlier under the same name
  write_new_file(target, produce);
}

void OutputDir::commit() {
  fs::remove(file(kStagingMarker));
  std::string marker = std::string(kMarkerHeader) + "\n";
  for (const std::string& entry : tree_entries(staging_)) marker += entry + "\n";
  write_whole_file(file(kResultMarker), marker);
  sync_path(staging_, O_RDONLY | O_DIRECTORY);
  // DIR may have changed since the check before the work: look again.
  const Existing existing = inspect(path_);
  if (existing.kind == Kind::other)
    throw Error("output directory '" + path_ + "' changed during the run and now " +
                existing.why + "; nothing was replaced");
  if (existing.kind == Kind::absent) {
    if (::rename(staging_.c_str(), path_.c_str()) != 0)
      throw Error("cannot create '" + path_ + "': " + std::strerror(errno));
    committed_ = true;
  } else {
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) != 0)
      throw Error("cannot replace '" + path_ + "': " + std::strerror(errno));
    committed_ = true;
    // The staging name now holds what was there: remove it only if it is
    // still what may be removed (a race could have added a user's file).
    std::error_code ec;
    const Kind old = inspect(staging_).kind;
    if (old == Kind::result)
      fs::remove_all(staging_, ec);
    else if (old == Kind::empty)
      fs::remove(staging_, ec);
    else
      std::fprintf(stderr, "kembed: note: '%s' changed during the run; its earlier contents "
                           "are kept in '%s'\n", path_.c_str(), staging_.c_str());
  }
  sync_path(parent_of(path_), O_RDONLY | O_DIRECTORY);
}

}  // namespace kembed::io
