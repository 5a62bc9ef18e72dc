// scipy.sparse.save_npz files: a zip of indices.npy, indptr.npy, format.npy,
// shape.npy and data.npy, stored or deflated. Every rank reads the archive
// on its own: the directory, the small members and the whole of indptr,
// then only its slice of indices and data (deflated members are inflated
// up to the end of the slice through a bounded buffer and the rest dropped).
#include <memory>
#include <utility>

#include "io/csr_canonical.hpp"
#include "io/csr_row_split.hpp"
#include "io/npz_csr_archive.hpp"
#include "io/sparse_readers.hpp"
#include "kembed/core/error.hpp"

namespace kembed::io {

CsrRows read_npz_csr(const std::string& path, const Comm& comm) {
  std::unique_ptr<NpzCsrArchive> archive;
  std::vector<std::int64_t> indptr;
  collectively(comm, [&] {
    archive = std::make_unique<NpzCsrArchive>(path);
    indptr = archive->take_indptr();
  });
  const std::vector<std::int64_t> split = split_rows_by_entries(indptr, comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
  RawCsrRows raw;
  raw.rows = archive->rows();
  raw.cols = archive->cols();
  raw.first_row = split[me];
  const std::int64_t first = indptr[static_cast<std::size_t>(split[me])];
  const std::int64_t count = indptr[static_cast<std::size_t>(split[me + 1])] - first;
  raw.offsets.assign(indptr.begin() + split[me], indptr.begin() + split[me + 1] + 1);
  for (std::int64_t& o : raw.offsets) o -= first;
  indptr = {};
  CsrRows out;
  collectively(comm, [&] {
    archive->read_entries(first, count, raw);
    EntryNames names;
    names.file = path;
    names.indices = path + ": indices.npy";
    names.values = path + ": data.npy";
    names.first_entry = first;
    out = canonical_rows(std::move(raw), names);
  });
  return out;
}

}  // namespace kembed::io
