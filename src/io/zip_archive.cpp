#include "io/zip_archive.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

constexpr std::int64_t zip_end_record_size = 22;        // end of central directory, without its comment
constexpr std::int64_t zip_zip64_locator_size = 20;
constexpr std::int64_t zip_zip64_end_record_size = 56;  // without its extensible data
constexpr std::int64_t zip_directory_entry_size = 46;   // without name, extra field and comment
constexpr std::int64_t zip_local_header_size = 30;      // without name and extra field
/// A .npz holds a handful of members; a directory larger than this is damage.
constexpr std::int64_t zip_directory_limit = 64 << 20;
constexpr std::size_t zip_input_buffer = 1 << 18;
/// Deflate expands at most 1032-fold (a 258-byte match per two bits): a
/// member that says it holds more from its compressed bytes is corrupt, and
/// is refused before anything of its announced size is allocated.
constexpr std::int64_t zip_deflate_max_ratio = 1032;

std::uint64_t zip_little(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/// Bounds-checked zip_little-endian fields of a byte range.
class ZipFields {
 public:
  ZipFields(const std::vector<unsigned char>& bytes, std::string where) : bytes_(bytes), where_(std::move(where)) {}
  std::uint64_t at(std::int64_t offset, int width) const {
    if (offset < 0 || offset + width > static_cast<std::int64_t>(bytes_.size()))
      throw Error(where_ + ": truncated or corrupt zip archive (a record runs past its end)");
    return zip_little(bytes_.data() + offset, width);
  }

 private:
  const std::vector<unsigned char>& bytes_;
  std::string where_;
};

std::vector<unsigned char> zip_read_range(const ReadOnlyFile& file, std::int64_t offset, std::int64_t count) {
  std::vector<unsigned char> out(static_cast<std::size_t>(count));
  if (count > 0) file.read_at(offset, out.data(), count);
  return out;
}

}  // namespace

ZipArchive::ZipArchive(const std::string& path) : path_(path), file_(path) {
  const std::string corrupt = path + ": not a zip archive, or a truncated or corrupt one";
  if (!file_.is_regular()) throw Error(path + ": a .npz must be a regular file (its directory is at its end)");
  const std::int64_t size = file_.size();
  if (size < zip_end_record_size) throw Error(corrupt + " (" + std::to_string(size) + " bytes)");
  // The end record is followed only by its comment (at most 65535 bytes).
  const std::int64_t tail_start = std::max<std::int64_t>(0, size - zip_end_record_size - 65535);
  const std::vector<unsigned char> tail = zip_read_range(file_, tail_start, size - tail_start);
  std::int64_t end = -1;
  for (std::int64_t i = static_cast<std::int64_t>(tail.size()) - zip_end_record_size; i >= 0; --i) {
    if (zip_little(tail.data() + i, 4) == 0x06054b50 &&
        i + zip_end_record_size + static_cast<std::int64_t>(zip_little(tail.data() + i + 20, 2)) ==
            static_cast<std::int64_t>(tail.size())) {
      end = i;
      break;
    }
  }
  if (end < 0) throw Error(corrupt + " (no end of central directory record)");
  const ZipFields record(tail, path);
  std::uint64_t disk = record.at(end + 4, 2), directory_disk = record.at(end + 6, 2);
  std::uint64_t disk_entries = record.at(end + 8, 2), entries = record.at(end + 10, 2);
  std::uint64_t directory_size = record.at(end + 12, 4), directory_offset = record.at(end + 16, 4);
  const std::int64_t end_position = tail_start + end;
  std::int64_t directory_end = end_position;
  if (entries == 0xffff || directory_size == 0xffffffff || directory_offset == 0xffffffff) {
    // zip64: a locator right before the end record points at the zip64 end record.
    if (end_position < zip_zip64_locator_size) throw Error(corrupt + " (zip64 locator missing)");
    const std::vector<unsigned char> locator = zip_read_range(file_, end_position - zip_zip64_locator_size, zip_zip64_locator_size);
    const ZipFields l(locator, path);
    if (l.at(0, 4) != 0x07064b50) throw Error(corrupt + " (zip64 locator missing)");
    const std::uint64_t record_offset = l.at(8, 8);
    if (l.at(16, 4) > 1 || record_offset > static_cast<std::uint64_t>(end_position - zip_zip64_locator_size - zip_zip64_end_record_size))
      throw Error(corrupt + " (zip64 end record outside the file, or a multi-disk archive)");
    const std::vector<unsigned char> z = zip_read_range(file_, static_cast<std::int64_t>(record_offset), zip_zip64_end_record_size);
    const ZipFields f(z, path);
    if (f.at(0, 4) != 0x06064b50) throw Error(corrupt + " (bad zip64 end record)");
    disk = f.at(16, 4);
    directory_disk = f.at(20, 4);
    disk_entries = f.at(24, 8);
    entries = f.at(32, 8);
    directory_size = f.at(40, 8);
    directory_offset = f.at(48, 8);
    directory_end = static_cast<std::int64_t>(record_offset);
  }
  if (disk != 0 || directory_disk != 0 || disk_entries != entries)
    throw Error(path + ": multi-disk (split) zip archives are not supported");
  if (directory_offset > static_cast<std::uint64_t>(directory_end) ||
      directory_size > static_cast<std::uint64_t>(directory_end) - directory_offset)
    throw Error(corrupt + " (central directory outside the file)");
  if (static_cast<std::int64_t>(directory_size) > zip_directory_limit ||
      entries > directory_size / static_cast<std::uint64_t>(zip_directory_entry_size))
    throw Error(corrupt + " (" + std::to_string(entries) + " members in a directory of " +
                std::to_string(directory_size) + " bytes)");
  directory_offset_ = static_cast<std::int64_t>(directory_offset);
  const std::vector<unsigned char> directory =
      zip_read_range(file_, directory_offset_, static_cast<std::int64_t>(directory_size));
  const ZipFields d(directory, path);
  std::int64_t at = 0;
  for (std::uint64_t e = 0; e < entries; ++e) {
    if (d.at(at, 4) != 0x02014b50) throw Error(corrupt + " (bad central directory entry " + std::to_string(e) + ")");
    ZipMember m;
    m.flags = static_cast<int>(d.at(at + 8, 2));
    m.method = static_cast<int>(d.at(at + 10, 2));
    m.crc = static_cast<std::uint32_t>(d.at(at + 16, 4));
    std::uint64_t compressed = d.at(at + 20, 4), uncompressed = d.at(at + 24, 4);
    const std::int64_t name_length = static_cast<std::int64_t>(d.at(at + 28, 2));
    const std::int64_t extra_length = static_cast<std::int64_t>(d.at(at + 30, 2));
    const std::int64_t comment_length = static_cast<std::int64_t>(d.at(at + 32, 2));
    std::uint64_t member_disk = d.at(at + 34, 2), offset = d.at(at + 42, 4);
    const std::int64_t name_at = at + zip_directory_entry_size;
    d.at(name_at + name_length + extra_length + comment_length - 1, 1);  // all inside the directory
    m.name.assign(reinterpret_cast<const char*>(directory.data() + name_at), static_cast<std::size_t>(name_length));
    // zip64 extra field (id 1): the 8-byte values of the fields set to all ones, in this order.
    for (std::int64_t x = name_at + name_length; x + 4 <= name_at + name_length + extra_length;) {
      const std::uint64_t id = d.at(x, 2), length = d.at(x + 2, 2);
      std::int64_t v = x + 4;
      const std::int64_t v_end = v + static_cast<std::int64_t>(length);
      if (v_end > name_at + name_length + extra_length) throw Error(corrupt + " (bad extra field of " + m.name + ")");
      if (id == 1) {
        for (std::uint64_t* field : {&uncompressed, &compressed, &offset}) {
          if (*field != 0xffffffff) continue;
          if (v + 8 > v_end) throw Error(corrupt + " (short zip64 field of " + m.name + ")");
          *field = d.at(v, 8);
          v += 8;
        }
        if (member_disk == 0xffff && v + 4 <= v_end) member_disk = d.at(v, 4);
      }
      x = v_end;
    }
    if (member_disk != 0) throw Error(path + ": multi-disk (split) zip archives are not supported");
    const auto limit = static_cast<std::uint64_t>(directory_offset_);
    if (offset >= limit || compressed > limit || uncompressed > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw Error(corrupt + " (member " + m.name + " lies outside the archive)");
    // (An encrypted member's 12-byte header counts among its compressed
    // bytes; its reader refuses it with its own message.)
    if (m.method == 0 && (m.flags & 1) == 0 && uncompressed != compressed)
      throw Error(corrupt + " (member " + m.name + " is stored with " + std::to_string(compressed) +
                  " bytes but says it has " + std::to_string(uncompressed) + ")");
    if (m.method == 8 && uncompressed / zip_deflate_max_ratio > compressed)
      throw Error(corrupt + " (member " + m.name + " says it inflates " + std::to_string(compressed) + " bytes to " +
                  std::to_string(uncompressed) + ", more than deflate can)");
    m.compressed = static_cast<std::int64_t>(compressed);
    m.size = static_cast<std::int64_t>(uncompressed);
    m.header_offset = static_cast<std::int64_t>(offset);
    members_.push_back(std::move(m));
    at = name_at + name_length + extra_length + comment_length;
  }
}

const ZipMember* ZipArchive::find(const std::string& name) const {
  for (const ZipMember& m : members_)
    if (m.name == name) return &m;
  return nullptr;
}

struct ZipMemberReader::Inflater {
  z_stream stream{};
  bool ended = false;
};

ZipMemberReader::ZipMemberReader(const ZipArchive& archive, const ZipMember& member)
    : archive_(archive), member_(member) {
  if (member_.flags & 1) fail("is encrypted, which is not supported");
  if (member_.method != 0 && member_.method != 8)
    fail("uses compression method " + std::to_string(member_.method) +
         "; only stored and deflate are read (numpy.savez and numpy.savez_compressed write those)");
  const std::vector<unsigned char> header = zip_read_range(archive_.file(), member_.header_offset,
      std::min<std::int64_t>(zip_local_header_size, archive_.directory_offset_ - member_.header_offset));
  const ZipFields h(header, archive_.path() + ", member " + member_.name);
  if (h.at(0, 4) != 0x04034b50) fail("has no local header where the directory says (corrupt archive)");
  data_offset_ = member_.header_offset + zip_local_header_size + static_cast<std::int64_t>(h.at(26, 2)) +
                 static_cast<std::int64_t>(h.at(28, 2));
  if (data_offset_ > archive_.directory_offset_ || member_.compressed > archive_.directory_offset_ - data_offset_)
    fail("runs past the start of the central directory (truncated or corrupt archive)");
  // An empty member is checked here: no read reaches its end.
  if (member_.size == 0 && member_.crc != 0) fail("fails its CRC-32 check (corrupt archive)");
  if (member_.method == 0 && member_.compressed != member_.size)
    fail("is stored with " + std::to_string(member_.compressed) + " bytes but says it has " +
         std::to_string(member_.size) + " (corrupt archive)");
  if (member_.method == 8) {
    inflater_ = std::make_unique<Inflater>();
    // Raw deflate data: zip members carry no zlib header.
    if (inflateInit2(&inflater_->stream, -MAX_WBITS) != Z_OK) fail("cannot start zlib's inflate");
    // No larger than the member's compressed bytes: the small members of a
    // .npz (format, shape) take a few hundred, not the whole buffer.
    input_.resize(static_cast<std::size_t>(
        std::clamp<std::int64_t>(member_.compressed, 1, static_cast<std::int64_t>(zip_input_buffer))));
  }
  crc_ = static_cast<std::uint32_t>(crc32(0L, Z_NULL, 0));
}

ZipMemberReader::~ZipMemberReader() {
  if (inflater_) inflateEnd(&inflater_->stream);
}

void ZipMemberReader::require(std::int64_t count) const {
  if (count > left())
    fail("ends after " + std::to_string(member_.size) + " bytes; " + std::to_string(position_ + count) +
         " were needed (truncated or corrupt .npy inside)");
}

void ZipMemberReader::fail(const std::string& what) const {
  throw Error(archive_.path() + ": member " + member_.name + " " + what);
}

void ZipMemberReader::produce(unsigned char* out, std::int64_t count) {
  require(count);
  if (!inflater_) {
    archive_.file().read_at(data_offset_ + position_, out, count);
  } else {
    z_stream& z = inflater_->stream;
    std::int64_t produced = 0;
    while (produced < count) {
      if (z.avail_in == 0 && consumed_ < member_.compressed) {
        const std::int64_t chunk = std::min<std::int64_t>(static_cast<std::int64_t>(input_.size()), member_.compressed - consumed_);
        archive_.file().read_at(data_offset_ + consumed_, input_.data(), chunk);
        consumed_ += chunk;
        z.next_in = input_.data();
        z.avail_in = static_cast<uInt>(chunk);
      }
      const std::int64_t want = std::min<std::int64_t>(count - produced, std::numeric_limits<uInt>::max());
      z.next_out = out + produced;
      z.avail_out = static_cast<uInt>(want);
      const int rc = inflate(&z, Z_NO_FLUSH);
      produced += want - static_cast<std::int64_t>(z.avail_out);
      if (rc == Z_STREAM_END) {
        if (produced < count) fail("has less deflated data than its size says (corrupt archive)");
        break;
      }
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) fail("holds corrupt deflate data" + std::string(z.msg ? std::string(" (") + z.msg + ")" : ""));
      if (rc == Z_MEM_ERROR) throw std::bad_alloc();
      if (rc == Z_BUF_ERROR && z.avail_in == 0 && consumed_ >= member_.compressed)
        fail("ends in the middle of its deflate data (truncated or corrupt archive)");
    }
  }
  for (std::int64_t done = 0; done < count;) {
    const std::int64_t piece = std::min<std::int64_t>(count - done, 1 << 30);
    crc_ = static_cast<std::uint32_t>(crc32(crc_, out + done, static_cast<uInt>(piece)));
    done += piece;
  }
  position_ += count;
  if (position_ == member_.size && crc_checked_ && crc_ != member_.crc) fail("fails its CRC-32 check (corrupt archive)");
}

void ZipMemberReader::read(void* out, std::int64_t count) { produce(static_cast<unsigned char*>(out), count); }

void ZipMemberReader::skip(std::int64_t count) {
  if (!inflater_) {
    require(count);
    // Stored bytes skipped are not read, so the CRC cannot be checked.
    position_ += count;
    crc_checked_ = false;
    return;
  }
  std::vector<unsigned char> scratch(static_cast<std::size_t>(std::min<std::int64_t>(count, 1 << 20)));
  while (count > 0) {
    const std::int64_t piece = std::min<std::int64_t>(count, static_cast<std::int64_t>(scratch.size()));
    produce(scratch.data(), piece);
    count -= piece;
  }
}

}  // namespace kembed::io
