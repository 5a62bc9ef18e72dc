#include "kembed/io/output_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kembed/core/error.hpp"

namespace fs = std::filesystem;

namespace kembed::io {

namespace {

std::string parent_of(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.has_filename() == false) p = p.parent_path();
  fs::path parent = p.parent_path();
  return parent.empty() ? "." : parent.string();
}

std::string name_of(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

void sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw Error("cannot open '" + path + "' to sync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw Error("cannot sync '" + path + "': " + std::strerror(saved));
}

}  // namespace

void check_output_path(const std::string& path) {
  if (path.empty()) throw Error("no output directory given (--output-dir)");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      throw Error("output path '" + path + "' exists and is not a directory");
  }
  const std::string parent = parent_of(path);
  if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error("cannot create output directory '" + path + "': parent directory '" + parent +
                "' does not exist");
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw Error("cannot create output directory '" + path + "': parent directory '" + parent +
                "' is not writable");
}

namespace {

// Removes staging directories of earlier runs of this output directory whose
// process is gone (a run killed by a signal cannot clean up after itself).
void remove_stale_staging(const std::string& parent, const std::string& name) {
  const std::string prefix = "." + name + ".tmp-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = file.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (::kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(entry.path(), ec);
  }
}

}  // namespace

OutputDir::OutputDir(std::string path) : path_(std::move(path)) {
  check_output_path(path_);
  remove_stale_staging(parent_of(path_), name_of(path_));
  staging_ = (fs::path(parent_of(path_)) /
              ("." + name_of(path_) + ".tmp-" + std::to_string(::getpid())))
                 .string();
  std::error_code ec;
  fs::remove_all(staging_, ec);
  if (!fs::create_directory(staging_, ec) || ec)
    throw Error("cannot create '" + staging_ + "': " + ec.message());
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
  const std::string target = file(name);
  const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error("cannot write '" + target + "': " + std::strerror(errno));
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t w = ::write(fd, contents.data() + done, contents.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      throw Error("cannot write '" + target + "': " + std::strerror(saved));
    }
    done += static_cast<std::size_t>(w);
  }
  const bool synced = ::fsync(fd) == 0;
  const int saved = errno;
  if (::close(fd) != 0 || !synced)
    throw Error("cannot write '" + target + "': " + std::strerror(synced ? errno : saved));
}

void OutputDir::commit() {
  sync_path(staging_, O_RDONLY | O_DIRECTORY);
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    // Swap atomically with the earlier result, then remove it.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) != 0)
      throw Error("cannot replace '" + path_ + "': " + std::strerror(errno));
    committed_ = true;
    std::error_code ec;
    fs::remove_all(staging_, ec);  // now holds the earlier result
  } else {
    if (::rename(staging_.c_str(), path_.c_str()) != 0)
      throw Error("cannot create '" + path_ + "': " + std::strerror(errno));
    committed_ = true;
  }
  sync_path(parent_of(path_), O_RDONLY | O_DIRECTORY);
}

}  // namespace kembed::io
