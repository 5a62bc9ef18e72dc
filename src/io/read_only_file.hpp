#pragma once
/// @file Private: a plain POSIX file opened read-only, used by rank 0 for
/// headers, sizes and whole text files. Never opened for writing.
#include <cstdint>
#include <string>

namespace kembed::io {

/// Move-only owner of a read-only file descriptor. Every failure throws
/// kembed::Error naming the file; callers run it inside collectively().
class ReadOnlyFile {
 public:
  /// Opens `path` read-only; a missing, unreadable or directory path throws
  /// Error "cannot open 'PATH': <strerror>".
  explicit ReadOnlyFile(const std::string& path);
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  ReadOnlyFile(ReadOnlyFile&& other) noexcept;
  ReadOnlyFile& operator=(ReadOnlyFile&& other) noexcept;
  ~ReadOnlyFile();

  /// Size of the file in bytes.
  std::int64_t size() const { return size_; }
  /// Reads exactly `count` bytes at `offset` into `out`; a short read throws.
  void read_at(std::int64_t offset, void* out, std::int64_t count) const;
  /// Reads the whole file into a string.
  std::string read_all() const;

 private:
  std::string path_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

/// True when this machine stores multi-byte numbers little-endian, the only
/// byte order the binary readers support.
bool host_is_little_endian();

}  // namespace kembed::io
