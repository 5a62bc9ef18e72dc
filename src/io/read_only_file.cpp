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
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(cannot_open(path, errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(std::exchange(fd_, -1));
    throw Error(cannot_open(path, err));
  }
  // open(2) succeeds on a directory; reading it would fail later with a
  // less helpful message, so refuse it here.
  if (S_ISDIR(st.st_mode)) {
    ::close(std::exchange(fd_, -1));
    throw Error(cannot_open(path, EISDIR));
  }
  size_ = static_cast<std::int64_t>(st.st_size);
}

ReadOnlyFile::ReadOnlyFile(ReadOnlyFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(std::exchange(other.size_, 0)) {}

ReadOnlyFile& ReadOnlyFile::operator=(ReadOnlyFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
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
  std::string text(static_cast<std::size_t>(size_), '\0');
  read_at(0, text.data(), size_);
  return text;
}

bool host_is_little_endian() {
  const std::uint16_t probe = 1;
  unsigned char first = 0;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

}  // namespace kembed::io
