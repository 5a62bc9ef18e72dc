#include "kembed/io/sparse_file_shape.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>

#include "io/mtx_parser.hpp"
#include "io/read_only_file.hpp"
#include "io/sparse_readers.hpp"
#include "io/zip_archive.hpp"
#include "kembed/core/error.hpp"
#include "kembed/io/npy_header.hpp"
#include "kembed/io/sparse_matrix_file.hpp"

namespace kembed::io {

namespace {

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// The .npy header of a member, its reader left at the first element.
NpyArrayHeader member_header(ZipMemberReader& reader, const std::string& where) {
  std::string bytes(npy_preamble_max, '\0');
  if (reader.left() < static_cast<std::int64_t>(npy_preamble_max))
    throw Error(where + ": too short for a .npy header");
  reader.read(bytes.data(), static_cast<std::int64_t>(npy_preamble_max));
  const std::int64_t total = npy_header_size(bytes, where);
  if (total < static_cast<std::int64_t>(npy_preamble_max) || total > (1 << 20) || total > reader.left() + 12)
    throw Error(where + ": malformed .npy header (" + std::to_string(total) + " bytes)");
  bytes.resize(static_cast<std::size_t>(total));
  reader.read(bytes.data() + npy_preamble_max, total - static_cast<std::int64_t>(npy_preamble_max));
  return parse_npy_array_header(bytes, where);
}

const ZipMember& member(const ZipArchive& zip, const std::string& name) {
  if (const ZipMember* m = zip.find(name)) return *m;
  throw Error(zip.path() + ": no member " + name + "; not a scipy.sparse.save_npz file");
}

/// The length of a 1-D member whose elements are `size` bytes ("" kinds:
/// any), its data filling the member.
std::int64_t vector_length(const ZipArchive& zip, const std::string& name) {
  const std::string where = zip.path() + ": " + name;
  ZipMemberReader reader(zip, member(zip, name));
  const NpyArrayHeader h = member_header(reader, where);
  if (h.shape.size() != 1) throw Error(where + ": expected a 1-D array");
  const std::string& d = h.descr;
  const int size = d.size() == 3 && std::isdigit(static_cast<unsigned char>(d[2])) ? d[2] - '0' : 0;
  if (size < 1 || (d[0] == '>' && size > 1))
    throw Error(where + ": dtype '" + d + "' is not supported (big-endian or not a number)");
  if (h.shape[0] < 0 || reader.left() != h.shape[0] * size)
    throw Error(where + ": holds " + std::to_string(reader.left()) + " bytes of data, but its shape needs " +
                std::to_string(h.shape[0]) + " x " + std::to_string(size) + " (truncated or corrupt)");
  return h.shape[0];
}

SparseFileShape npz_shape(const std::string& path) {
  if (!host_is_little_endian()) throw Error(path + ": .npz files are read on little-endian machines only");
  const ZipArchive zip(path);
  SparseFileShape out;
  out.format = "npz";
  {
    // format.npy: a 0-d string, b'csr' ('|S3') or 'csr' ('<U3').
    ZipMemberReader reader(zip, member(zip, "format.npy"));
    member_header(reader, path + ": format.npy");
    if (reader.left() > 64) throw Error(path + ": format.npy: expected a 0-d string such as b'csr'");
    std::string text(static_cast<std::size_t>(reader.left()), '\0');
    reader.read(text.data(), reader.left());
    text.erase(std::remove(text.begin(), text.end(), '\0'), text.end());
    if (text != "csr")
      throw Error(path + ": holds a sparse matrix in format '" + text + "'; kembed reads CSR: convert it with "
                         "scipy, scipy.sparse.save_npz(out, scipy.sparse.load_npz(in).tocsr())");
  }
  {
    const std::string where = path + ": shape.npy";
    ZipMemberReader reader(zip, member(zip, "shape.npy"));
    const NpyArrayHeader h = member_header(reader, where);
    const std::string& d = h.descr;
    const bool integer = d.size() == 3 && (d[0] == '<' || d[0] == '=') && (d[1] == 'i' || d[1] == 'u') &&
                         (d[2] == '4' || d[2] == '8');
    if (!integer || h.shape.size() != 1 || h.shape[0] != 2 || reader.left() != 2 * (d[2] - '0'))
      throw Error(where + ": expected 2 integers (rows, columns)");
    std::int64_t extent[2] = {0, 0};
    for (std::int64_t& e : extent) {
      if (d[2] == '8') {
        reader.read(&e, 8);
      } else {
        std::int32_t v = 0;
        reader.read(&v, 4);
        e = d[1] == 'u' ? static_cast<std::int64_t>(static_cast<std::uint32_t>(v)) : v;
      }
    }
    out.rows = extent[0];
    out.cols = extent[1];
    if (out.rows < 0 || out.cols < 0)
      throw Error(where + ": negative extent in shape (" + std::to_string(out.rows) + ", " +
                  std::to_string(out.cols) + ")");
  }
  out.entries = vector_length(zip, "data.npy");
  const std::int64_t pointers = vector_length(zip, "indptr.npy");
  if (pointers != out.rows + 1)
    throw Error(path + ": indptr.npy has " + std::to_string(pointers) + " values, but the shape (" +
                std::to_string(out.rows) + ", " + std::to_string(out.cols) + ") needs " +
                std::to_string(out.rows + 1));
  return out;
}

/// The banner and the size line, read a piece at a time until the size line
/// (comments may come between them), parsed as the reader parses them.
SparseFileShape mtx_shape(const std::string& path) {
  const ReadOnlyFile file(path);
  std::string text;
  if (!file.is_regular()) {
    text = file.read_all();
  } else {
    constexpr std::int64_t piece = 1 << 16;
    std::int64_t at = 0;
    auto lines_in = [&] { return std::count(text.begin(), text.end(), '\n'); };
    // Enough for the banner and the size line unless comments are long.
    while (at < file.size()) {
      const std::int64_t n = std::min(piece, file.size() - at);
      text.resize(static_cast<std::size_t>(at + n));
      file.read_at(at, text.data() + at, n);
      at += n;
      std::istringstream lines(text);
      std::string line;
      bool size_line = false;
      std::int64_t complete = lines_in();
      for (std::int64_t i = 0; i < complete && std::getline(lines, line); ++i)
        if (i > 0 && !line.empty() && line[0] != '%' &&
            line.find_first_not_of(" \t\r") != std::string::npos) {
          size_line = true;
          break;
        }
      if (size_line) break;
    }
  }
  const MtxHeader header = parse_mtx_header(text, path);
  SparseFileShape out;
  out.format = "mtx";
  out.rows = header.rows;
  out.cols = header.cols;
  out.entries = header.entries;
  out.one_triangle = header.symmetric;
  return out;
}

}  // namespace

SparseFileShape read_sparse_shape(const std::string& path, const std::string& dataset, const Comm& comm) {
  // Rank 0 reads the header (a few bytes) and tells the others.
  const std::string ext = lowered(std::filesystem::path(path).extension().string());
  SparseFileShape out;
  const bool h5ad = ext == ".h5ad";
  collectively(comm, [&] {
    if (!comm.is_root() || h5ad) return;
    if (ext != ".npz" && ext != ".mtx" && !is_sparse_file(path)) {
      ReadOnlyFile check(path);  // a missing file says so first
      throw Error(path + ": not a sparse matrix file; kembed reads sparse matrices from AnnData .h5ad, "
                         "scipy.sparse.save_npz .npz and Matrix Market .mtx files");
    }
    if (!dataset.empty())
      throw Error(path + ": --dataset " + dataset + " names a group of an .h5ad file; this is not one");
    out = ext == ".npz" ? npz_shape(path) : mtx_shape(path);
  });
  if (h5ad) return read_h5ad_shape(path, dataset, comm);
  std::int64_t numbers[4] = {out.rows, out.cols, out.entries, out.one_triangle ? 1 : 0};
  comm.broadcast(numbers, 4);
  out.rows = numbers[0];
  out.cols = numbers[1];
  out.entries = numbers[2];
  out.one_triangle = numbers[3] != 0;
  out.format = ext == ".npz" ? "npz" : "mtx";
  if (out.cols > std::numeric_limits<std::int32_t>::max())
    throw Error(path + ": " + std::to_string(out.cols) + " columns is more than kembed supports (2^31 - 1)");
  return out;
}

}  // namespace kembed::io
