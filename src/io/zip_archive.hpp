#pragma once
/// @file Private: the members of a zip archive (a NumPy .npz), found through
/// its central directory (zip64 included) and read as streams of their
/// uncompressed bytes, stored or deflated (zlib). Serial, no MPI: every rank
/// that needs a member reads the file on its own.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/read_only_file.hpp"

namespace kembed::io {

/// One member as the central directory describes it.
struct ZipMember {
  std::string name;
  int method = 0;                 ///< 0 stored, 8 deflate (others are refused when read)
  int flags = 0;                  ///< general purpose bits (bit 0: encrypted)
  std::uint32_t crc = 0;          ///< CRC-32 of the uncompressed bytes
  std::int64_t compressed = 0;    ///< bytes in the archive
  std::int64_t size = 0;          ///< bytes once uncompressed
  std::int64_t header_offset = 0; ///< of its local file header
};

/// The central directory of a zip archive. Every field is checked against
/// the file's size; a problem throws kembed::Error naming the file.
class ZipArchive {
 public:
  /// Opens `path` (a regular file) and reads its directory.
  explicit ZipArchive(const std::string& path);
  const std::string& path() const { return path_; }
  const std::vector<ZipMember>& members() const { return members_; }
  /// The member called `name`, or nullptr.
  const ZipMember* find(const std::string& name) const;
  const ReadOnlyFile& file() const { return file_; }

 private:
  std::string path_;
  ReadOnlyFile file_;
  std::int64_t directory_offset_ = 0;  ///< where member data must end
  std::vector<ZipMember> members_;
  friend class ZipMemberReader;
};

/// The uncompressed bytes of one member, read front to back through a
/// bounded buffer; the CRC-32 is checked when the last byte is read.
class ZipMemberReader {
 public:
  /// Finds the member's data after its local header; throws for an
  /// encrypted member or a compression method other than stored or deflate.
  ZipMemberReader(const ZipArchive& archive, const ZipMember& member);
  ZipMemberReader(const ZipMemberReader&) = delete;
  ZipMemberReader& operator=(const ZipMemberReader&) = delete;
  ~ZipMemberReader();

  /// Reads the next `count` bytes into `out`; fewer bytes than that in the
  /// member (a member that ends early or is damaged) throws.
  void read(void* out, std::int64_t count);
  /// Skips the next `count` bytes (deflated ones are inflated and dropped).
  void skip(std::int64_t count);
  /// Bytes of the member not read yet.
  std::int64_t left() const { return member_.size - position_; }

 private:
  /// Next `count` bytes into `out` (stored: read at their offset; deflate:
  /// inflated through a bounded input buffer).
  void produce(unsigned char* out, std::int64_t count);
  /// Throws unless `count` more bytes are left.
  void require(std::int64_t count) const;
  [[noreturn]] void fail(const std::string& what) const;
  const ZipArchive& archive_;
  ZipMember member_;
  std::int64_t data_offset_ = 0;
  std::int64_t position_ = 0;  ///< uncompressed bytes delivered
  std::int64_t consumed_ = 0;  ///< compressed bytes handed to zlib
  std::uint32_t crc_ = 0;
  bool crc_checked_ = true;  ///< false once stored bytes were skipped unread
  std::vector<unsigned char> input_;
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;
};

}  // namespace kembed::io
