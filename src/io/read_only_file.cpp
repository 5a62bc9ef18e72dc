#include "io/read_only_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

std::string cannot_open(const std::string& path, int err) {
  return "cannot open '" + path + "': " + std::strerror(err);
}

}  // namespace

ReadOnlyFile::ReadOnlyFile(const std::string& path) : path_(path) {
  // Look before opening: opening a device can have effects of its own (a
  // tape rewinds), and a FIFO's open waits for its writer, which is meant.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) refuse_special(st.st_mode);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(cannot_open(path, errno));
  inspect();
  refuse_special(mode_);
}

void ReadOnlyFile::refuse_special(unsigned mode) {
  const char* kind = S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
                     : S_ISSOCK(mode) ? "a socket" : nullptr;
  if (!kind) return;
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  // /dev/zero or /dev/urandom would be read until memory runs out.
  throw Error("'" + path_ + "' is " + kind + ", not a file: kembed reads input from regular files, FIFOs "
              "and standard input ('-')");
}

ReadOnlyFile ReadOnlyFile::standard_input() {
  ReadOnlyFile file;
  file.path_ = "<stdin>";
  // A duplicate, so closing it never closes the process's standard input.
  file.fd_ = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
  if (file.fd_ < 0) throw Error(cannot_open(file.path_, errno));
  file.inspect();
  return file;
}

void ReadOnlyFile::inspect() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(std::exchange(fd_, -1));
    throw Error(cannot_open(path_, err));
  }
  // open(2) succeeds on a directory; reading it would fail later with a
  // less helpful message, so refuse it here.
  if (S_ISDIR(st.st_mode)) {
    ::close(std::exchange(fd_, -1));
    throw Error(cannot_open(path_, EISDIR));
  }
  regular_ = S_ISREG(st.st_mode);
  mode_ = st.st_mode;
  // A FIFO's or a device's st_size says nothing about what it will deliver.
  size_ = regular_ ? static_cast<std::int64_t>(st.st_size) : 0;
}

ReadOnlyFile::ReadOnlyFile(ReadOnlyFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(std::exchange(other.size_, 0)),
      regular_(std::exchange(other.regular_, false)),
      mode_(std::exchange(other.mode_, 0u)) {}

ReadOnlyFile& ReadOnlyFile::operator=(ReadOnlyFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
    regular_ = std::exchange(other.regular_, false);
    mode_ = std::exchange(other.mode_, 0u);
  }
  return *this;
}

ReadOnlyFile::~ReadOnlyFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ReadOnlyFile::read_at(std::int64_t offset, void* out, std::int64_t count) const {
  auto* dst = static_cast<char*>(out);
  while (count > 0) {
    const ssize_t got = ::pread(fd_, dst, static_cast<std::size_t>(count), static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot read '" + path_ + "': " + std::strerror(errno));
    }
    if (got == 0) throw Error("cannot read '" + path_ + "': unexpected end of file");
    dst += got;
    offset += got;
    count -= got;
  }
}

std::string ReadOnlyFile::read_all() const {
  // /proc and similar files are "regular" with size 0: read those as streams.
  if (regular_ && size_ > 0) {
    std::string text(static_cast<std::size_t>(size_), '\0');
    read_at(0, text.data(), size_);
    return text;
  }
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd_, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error("cannot read '" + path_ + "': " + std::strerror(errno));
    }
    if (got == 0) return text;
    text.append(buffer, static_cast<std::size_t>(got));
  }
}

bool host_is_little_endian() {
  const std::uint16_t probe = 1;
  unsigned char first = 0;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

}  // namespace kembed::io
