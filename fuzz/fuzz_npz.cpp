// libFuzzer target: the zip reader (io::ZipArchive: end record, zip64,
// central directory; io::ZipMemberReader: local headers, stored and
// deflated members, CRC-32) and the scipy .npz layer above it
// (io::NpzCsrArchive: member names, .npy headers, shape, indptr) on
// arbitrary bytes, then what the reader does with an accepted matrix: the
// entries of each rank's rows for 1 to 4 ranks, put into canonical CSR form.
// The bytes are a memfd opened by its /proc path, as the reader opens a
// file. kembed::Error is the documented rejection; anything else is a bug,
// as is an accepted result that breaks an invariant: a member larger than
// deflate can make of its bytes, a reader that delivers other than the
// member's size, skipped and read bytes that differ, a CSR invariant
// (fuzz/csr_invariants.hpp).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "csr_invariants.hpp"
#include "io/npz_csr_archive.hpp"
#include "io/zip_archive.hpp"
#include "kembed/core/error.hpp"

namespace {

using kembed::fuzz::require;

/// The input as a file: one memfd, rewritten for every input.
std::string input_file(const std::uint8_t* data, std::size_t size) {
  static const int fd = memfd_create("fuzz_npz", 0);
  require(fd >= 0 && ftruncate(fd, 0) == 0);
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    require(n > 0);
    done += static_cast<std::size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

/// The whole member through the reader, or false when it is refused; the
/// reader delivers exactly the member's size.
bool read_member(const kembed::io::ZipArchive& zip, const kembed::io::ZipMember& m, std::vector<unsigned char>& out) {
  out.clear();
  try {
    kembed::io::ZipMemberReader reader(zip, m);
    require(reader.left() == m.size);
    unsigned char chunk[4096];
    while (reader.left() > 0) {
      const std::int64_t n = std::min<std::int64_t>(reader.left(), sizeof chunk);
      reader.read(chunk, n);
      out.insert(out.end(), chunk, chunk + n);
    }
    require(reader.left() == 0);
  } catch (const kembed::Error&) {
    return false;
  }
  require(static_cast<std::int64_t>(out.size()) == m.size);
  return true;
}

/// The second half of a member after skip(): the same bytes as read whole.
void check_skip(const kembed::io::ZipArchive& zip, const kembed::io::ZipMember& m,
                const std::vector<unsigned char>& whole) {
  kembed::io::ZipMemberReader reader(zip, m);  // accepted a moment ago
  const std::int64_t half = m.size / 2;
  reader.skip(half);
  std::vector<unsigned char> rest(static_cast<std::size_t>(m.size - half));
  reader.read(rest.data(), static_cast<std::int64_t>(rest.size()));
  require(reader.left() == 0 && std::equal(rest.begin(), rest.end(), whole.begin() + half));
}

void fuzz_zip(const std::string& path, std::size_t size) {
  std::unique_ptr<kembed::io::ZipArchive> zip;
  try {
    zip = std::make_unique<kembed::io::ZipArchive>(path);
  } catch (const kembed::Error&) {
    return;
  }
  const auto bytes = static_cast<std::int64_t>(size);
  std::vector<unsigned char> whole;
  for (const kembed::io::ZipMember& m : zip->members()) {
    require(m.header_offset >= 0 && m.header_offset < bytes && m.compressed >= 0 && m.compressed <= bytes);
    require(m.size >= 0 && (m.method != 8 || m.size / 1032 <= m.compressed));
    if (m.method == 0 && (m.flags & 1) == 0) require(m.size == m.compressed);
    if (read_member(*zip, m, whole)) check_skip(*zip, m, whole);
  }
}

void fuzz_npz(const std::string& path) {
  std::unique_ptr<kembed::io::NpzCsrArchive> npz;
  try {
    npz = std::make_unique<kembed::io::NpzCsrArchive>(path);
  } catch (const kembed::Error&) {
    return;
  }
  const std::int64_t rows = npz->rows(), cols = npz->cols(), entries = npz->entries();
  const std::vector<std::int64_t> indptr = npz->indptr();
  kembed::fuzz::check_indptr(rows, cols, indptr, entries);
  kembed::io::RawCsrRows all;
  all.cols = cols;
  try {
    // Deflated data after the checked headers, or a CRC-32, may still be bad.
    npz->read_entries(0, entries, all);
  } catch (const kembed::Error&) {
    return;
  }
  // Narrowed columns, widened back: an index outside [0, cols) reads -1,
  // still outside, which is all the checks below ask of it.
  const std::vector<std::int64_t> columns(all.columns.begin(), all.columns.end());
  const std::vector<double>& values = all.values;
  require(static_cast<std::int64_t>(columns.size()) == entries && static_cast<std::int64_t>(values.size()) == entries);
  // Each rank's slice as the reader reads it (skipping the entries before
  // it): the same entries, and no error once the whole members were read.
  for (int parts = 2; parts <= 4; ++parts) {
    const std::vector<std::int64_t> split = kembed::io::split_rows_by_entries(indptr, parts);
    for (int r = 0; r < parts; ++r) {
      const std::int64_t first = indptr[static_cast<std::size_t>(split[static_cast<std::size_t>(r)])];
      const std::int64_t end = indptr[static_cast<std::size_t>(split[static_cast<std::size_t>(r) + 1])];
      kembed::io::RawCsrRows part;
      part.cols = cols;
      npz->read_entries(first, end - first, part);
      const std::vector<std::int32_t>& c = part.columns;
      const std::vector<double>& v = part.values;
      require(c.size() == static_cast<std::size_t>(end - first) && v.size() == c.size());
      require(std::equal(c.begin(), c.end(), all.columns.begin() + first, all.columns.begin() + end));
      require(std::equal(v.begin(), v.end(), values.begin() + first, values.begin() + end,
                         [](double a, double b) { return a == b || (a != a && b != b); }));
    }
  }
  for (int parts = 1; parts <= 4; ++parts) kembed::fuzz::check_split(rows, cols, indptr, columns, values, parts);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = input_file(data, size);
  fuzz_zip(path, size);
  fuzz_npz(path);
  return 0;
}
