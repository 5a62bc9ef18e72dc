#pragma once
/// @file Private: a POSIX file opened read-only, used by rank 0 for
/// headers, sizes and whole text files: regular files, and pipes, FIFOs,
/// character devices and standard input read to their end. Never opened for
/// writing.
#include <cstdint>
#include <string>

namespace kembed::io {

/// Move-only owner of a read-only file descriptor. Every failure throws
/// kembed::Error naming the file; callers run it inside collectively().
class ReadOnlyFile {
 public:
  /// Opens `path` read-only; a missing, unreadable or directory path throws
  /// Error "cannot open 'PATH': <strerror>" ("Is a directory" for a
  /// directory), a character or block device or a socket "'PATH' is a
  /// character device, not a file: ..." (/dev/zero would never end).
  /// Opening a FIFO waits for its writer, as open(2) does.
  explicit ReadOnlyFile(const std::string& path);
  /// A duplicate of the standard input descriptor, named "<stdin>" in
  /// messages (the descriptor 0 itself stays open).
  static ReadOnlyFile standard_input();
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  ReadOnlyFile(ReadOnlyFile&& other) noexcept;
  ReadOnlyFile& operator=(ReadOnlyFile&& other) noexcept;
  ~ReadOnlyFile();

  /// Size of the file in bytes (0 for anything but a regular file).
  std::int64_t size() const { return size_; }
  /// True for a regular file, which has a size and can be read at offsets.
  bool is_regular() const { return regular_; }
  /// Reads exactly `count` bytes at `offset` into `out`; a short read throws.
  /// @pre is_regular()
  void read_at(std::int64_t offset, void* out, std::int64_t count) const;
  /// Reads the whole file into a string: a regular file by its size,
  /// anything else (pipe, FIFO, character device) by reading to end of file.
  /// Call it once for a stream: what it read is gone.
  std::string read_all() const;

 private:
  ReadOnlyFile() = default;
  /// Records size and kind of the open descriptor; refuses a directory.
  void inspect();
  /// Throws (closing the descriptor) when `mode` is a device or a socket.
  void refuse_special(unsigned mode);
  std::string path_;
  int fd_ = -1;
  std::int64_t size_ = 0;
  bool regular_ = false;
  unsigned mode_ = 0;  ///< st_mode of the open descriptor
};

/// True when this machine stores multi-byte numbers little-endian, the only
/// byte order the binary readers support.
bool host_is_little_endian();

}  // namespace kembed::io
