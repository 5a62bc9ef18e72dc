// scipy.sparse.save_npz files: the members of the zip checked and
// indptr read (serial; see npz_csr_archive.hpp).
#include "io/npz_csr_archive.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "io/csr_row_split.hpp"
#include "io/read_only_file.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/npy_header.hpp"

namespace kembed::io {

namespace {

/// Bytes converted per step when a member is streamed.
constexpr std::int64_t npz_chunk_bytes = 1 << 20;

std::string npz_shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// Appends `n` little-endian elements of type In at `p` to `out` (the host
/// is little-endian: npz_element refuses the others).
template <class In, class T>
void npz_widen(const unsigned char* p, std::int64_t n, std::vector<T>& out) {
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(n));
  T* to = out.data() + at;  // a plain loop over a sized array vectorizes; push_back did not
  for (std::int64_t i = 0; i < n; ++i) {
    In v;
    std::memcpy(&v, p + i * static_cast<std::int64_t>(sizeof(In)), sizeof(In));
    if constexpr (std::is_same_v<In, std::uint64_t> && std::is_same_v<T, std::int64_t>)
      // Above 2^63 - 1 becomes 2^63 - 1, which every range check refuses.
      to[i] = static_cast<T>(std::min<std::uint64_t>(v, std::numeric_limits<std::int64_t>::max()));
    else
      to[i] = static_cast<T>(v);
  }
}

/// Appends `n` elements of type `t` at `p` to `out`, converted to T.
template <class T>
void npz_convert(const unsigned char* p, std::int64_t n, const NpzElement& t, std::vector<T>& out) {
  switch (t.kind * 16 + t.size) {
    case 'f' * 16 + 4: return npz_widen<float>(p, n, out);
    case 'f' * 16 + 8: return npz_widen<double>(p, n, out);
    case 'i' * 16 + 1: return npz_widen<std::int8_t>(p, n, out);
    case 'i' * 16 + 2: return npz_widen<std::int16_t>(p, n, out);
    case 'i' * 16 + 4: return npz_widen<std::int32_t>(p, n, out);
    case 'i' * 16 + 8: return npz_widen<std::int64_t>(p, n, out);
    case 'u' * 16 + 2: return npz_widen<std::uint16_t>(p, n, out);
    case 'u' * 16 + 4: return npz_widen<std::uint32_t>(p, n, out);
    case 'u' * 16 + 8: return npz_widen<std::uint64_t>(p, n, out);
    default: return npz_widen<std::uint8_t>(p, n, out);  // 'u' and 'b' of one byte
  }
}

/// One member .npy of the archive, its header read and checked, positioned
/// at its first element.
class NpzMember {
 public:
  NpzMember(const ZipArchive& archive, const ZipMember& member)
      : where_(archive.path() + ": " + member.name), reader_(archive, member) {
    std::string bytes(npy_preamble_max, '\0');
    reader_.read(bytes.data(), std::min<std::int64_t>(npy_preamble_max, reader_.left()));
    const std::int64_t total = npy_header_size(bytes, where_);
    if (total < static_cast<std::int64_t>(npy_preamble_max) || total > (1 << 20)) throw Error(where_ + ": malformed .npy header (" + std::to_string(total) + " bytes)");
    if (total > static_cast<std::int64_t>(npy_preamble_max)) {
      bytes.resize(static_cast<std::size_t>(total));
      reader_.read(bytes.data() + npy_preamble_max, total - static_cast<std::int64_t>(npy_preamble_max));
    }
    header_ = parse_npy_array_header(bytes, where_);
  }

  const NpyArrayHeader& header() const { return header_; }
  const std::string& where() const { return where_; }

  /// The element type, one of `kinds` ("iu", "fiub"); anything else throws.
  NpzElement element_type(const std::string& kinds, const std::string& expected) const {
    const std::string& d = header_.descr;
    NpzElement t;
    const bool little_order = d.size() >= 3 && (d[0] == '<' || d[0] == '|' || (d[0] == '=' && host_is_little_endian()));
    if (little_order && d.size() == 3 && kinds.find(d[1]) != std::string::npos) {
      t.kind = d[1];
      t.size = d[2] - '0';
      const bool ok = t.kind == 'f' ? (t.size == 4 || t.size == 8)
                      : t.kind == 'b' ? t.size == 1
                                      : (t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8);
      if (ok && (t.size == 1 || d[0] != '|')) return t;
    }
    if (!d.empty() && d[0] == '>')
      throw Error(where_ + ": dtype '" + d + "' is big-endian, which is not supported; expected " + expected);
    throw Error(where_ + ": dtype '" + d + "' is not supported; expected " + expected);
  }

  /// The length of a 1-D member, after checking that its data fills the
  /// member exactly.
  std::int64_t vector_length(const NpzElement& t) const {
    if (header_.shape.size() != 1)
      throw Error(where_ + ": has shape " + npz_shape_text(header_.shape) + "; expected a 1-D array");
    check_data_size(header_.shape[0], t);
    return header_.shape[0];
  }

  void check_data_size(std::int64_t count, const NpzElement& t) const {
    if (count > std::numeric_limits<std::int64_t>::max() / t.size || reader_.left() != count * t.size)
      throw Error(where_ + ": holds " + std::to_string(reader_.left()) + " bytes of data, but its shape " +
                  npz_shape_text(header_.shape) + " needs " + std::to_string(count) + " x " + std::to_string(t.size) +
                  " (truncated or corrupt)");
  }

  void skip(std::int64_t elements, const NpzElement& t) { reader_.skip(elements * t.size); }

  /// The next `count` elements, converted to T (int64 or double), appended
  /// to `out`, one bounded chunk at a time.
  template <class T>
  void read(std::int64_t count, const NpzElement& t, std::vector<T>& out) {
    std::vector<unsigned char> buffer(static_cast<std::size_t>(std::min<std::int64_t>(count * t.size, npz_chunk_bytes)));
    out.reserve(out.size() + static_cast<std::size_t>(count));
    const std::int64_t per_chunk = std::max<std::int64_t>(1, static_cast<std::int64_t>(buffer.size()) / t.size);
    while (count > 0) {
      const std::int64_t n = std::min(count, per_chunk);
      reader_.read(buffer.data(), n * t.size);
      npz_convert(buffer.data(), n, t, out);
      count -= n;
    }
  }

  /// The next `count` elements as column indices, narrowed into `raw` one
  /// bounded chunk at a time (never a wide copy of them all).
  void read_columns(std::int64_t count, const NpzElement& t, RawCsrRows& raw) {
    std::vector<std::int64_t> chunk;
    raw.columns.reserve(raw.columns.size() + static_cast<std::size_t>(count));
    const std::int64_t per_chunk = std::max<std::int64_t>(1, npz_chunk_bytes / t.size);
    while (count > 0) {
      const std::int64_t n = std::min(count, per_chunk);
      chunk.clear();
      read(n, t, chunk);
      raw.append_columns(chunk.data(), chunk.size());
      count -= n;
    }
  }

  /// Bytes of the member's data not read yet.
  std::int64_t left() const { return reader_.left(); }

  /// The rest of the member's bytes (small members only).
  std::string rest() {
    std::string bytes(static_cast<std::size_t>(reader_.left()), '\0');
    reader_.read(bytes.data(), reader_.left());
    return bytes;
  }

 private:
  std::string where_;
  ZipMemberReader reader_;
  NpyArrayHeader header_;
};

/// The text of format.npy: a 0-d bytes ('|S3', scipy) or str ('<U3') array.
std::string npz_format_text(NpzMember& member) {
  const std::string& d = member.header().descr;
  if (!member.header().shape.empty() || member.left() > 64)
    throw Error(member.where() + ": expected a 0-d string such as b'csr'");
  const std::string bytes = member.rest();
  std::string text;
  if (d.size() >= 3 && d[0] == '|' && d[1] == 'S') {
    text = bytes;
  } else if (d.size() >= 3 && (d[0] == '<' || d[0] == '=') && d[1] == 'U') {
    for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4)
      text += static_cast<char>(static_cast<unsigned char>(bytes[i]) < 128 && !bytes[i + 1] && !bytes[i + 2] && !bytes[i + 3]
                                    ? bytes[i] : '?');
  } else {
    throw Error(member.where() + ": dtype '" + d + "' is not a string; expected b'csr'");
  }
  text.erase(std::find(text.begin(), text.end(), '\0'), text.end());
  return text;
}

/// `path`, on a little-endian host (checked before the archive is opened).
const std::string& npz_little_endian_host(const std::string& path) {
  if (!host_is_little_endian()) throw Error(path + ": .npz files are read on little-endian machines only");
  return path;
}

const ZipMember& npz_member(const ZipArchive& zip, const std::string& name) {
  if (const ZipMember* m = zip.find(name)) return *m;
  std::string list;
  for (const ZipMember& m : zip.members()) list += (list.empty() ? "" : ", ") + m.name;
  throw Error(zip.path() + ": no member " + name + "; not a scipy.sparse.save_npz file (members: " +
              (list.empty() ? "none" : list) + ")");
}

}  // namespace

NpzCsrArchive::NpzCsrArchive(const std::string& path) : zip_(npz_little_endian_host(path)) {
  {
    // The format first: a COO or DIA matrix has other members.
    NpzMember format(zip_, npz_member(zip_, "format.npy"));
    const std::string text = npz_format_text(format);
    if (text == "csc")
      throw Error(path + ": holds a CSC matrix (format 'csc'); kembed reads CSR: convert it with scipy, "
                         "scipy.sparse.save_npz(out, scipy.sparse.load_npz(in).tocsr())");
    if (text != "csr")
      throw Error(path + ": holds a sparse matrix in format '" + text + "'; kembed reads CSR: convert it with "
                         "scipy, scipy.sparse.save_npz(out, scipy.sparse.load_npz(in).tocsr())");
  }
  for (const char* name : {"shape.npy", "indptr.npy", "indices.npy", "data.npy"}) npz_member(zip_, name);
  {
    NpzMember shape(zip_, npz_member(zip_, "shape.npy"));
    const NpzElement t = shape.element_type("iu", "an integer type");
    if (shape.vector_length(t) != 2) throw Error(shape.where() + ": expected 2 values (rows, columns)");
    std::vector<std::int64_t> extent;
    shape.read(2, t, extent);
    rows_ = extent[0];
    cols_ = extent[1];
    if (rows_ < 0 || cols_ < 0) throw Error(shape.where() + ": negative extent in shape (" + std::to_string(rows_) + ", " + std::to_string(cols_) + ")");
    if (cols_ > std::numeric_limits<std::int32_t>::max())
      throw Error(shape.where() + ": " + std::to_string(cols_) + " columns is more than kembed supports (2^31 - 1)");
    if (rows_ > (std::int64_t{1} << 62))
      throw Error(shape.where() + ": " + std::to_string(rows_) + " rows is more than kembed supports (2^62)");
  }
  {
    NpzMember indices(zip_, npz_member(zip_, "indices.npy"));
    index_type_ = indices.element_type("iu", "an integer type such as '<i4'");
    entries_ = indices.vector_length(index_type_);
    NpzMember data(zip_, npz_member(zip_, "data.npy"));
    data_type_ = data.element_type("fiub", "a float, integer or bool type such as '<f8'");
    const std::int64_t values = data.vector_length(data_type_);
    if (values != entries_)
      throw Error(path + ": indices.npy has " + std::to_string(entries_) + " entries but data.npy has " +
                  std::to_string(values));
  }
  NpzMember pointers(zip_, npz_member(zip_, "indptr.npy"));
  const NpzElement t = pointers.element_type("iu", "an integer type such as '<i4'");
  const std::int64_t length = pointers.vector_length(t);
  if (length != rows_ + 1)
    throw Error(pointers.where() + ": has " + std::to_string(length) + " values, but the shape (" +
                std::to_string(rows_) + ", " + std::to_string(cols_) + ") needs " + std::to_string(rows_ + 1));
  pointers.read(length, t, indptr_);
  const std::string bad = indptr_problem(indptr_, entries_, pointers.where());
  if (!bad.empty()) throw Error(bad);
}

void NpzCsrArchive::read_entries(std::int64_t first, std::int64_t count, RawCsrRows& raw) const {
  {
    NpzMember indices(zip_, npz_member(zip_, "indices.npy"));
    indices.skip(first, index_type_);
    indices.read_columns(count, index_type_, raw);
  }
  NpzMember data(zip_, npz_member(zip_, "data.npy"));
  data.skip(first, data_type_);
  data.read(count, data_type_, raw.values);
}

}  // namespace kembed::io
