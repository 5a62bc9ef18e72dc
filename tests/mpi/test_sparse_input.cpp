// Sparse input (issue 39): io::read_csr on AnnData .h5ad, scipy .npz and
// Matrix Market .mtx files. The fixtures hold one dense matrix D, written
// by this test (.mtx) and by scipy and h5py from the same numbers (.npz,
// .h5ad); each read is gathered to rank 0 and compared with D entry by
// entry. Values are multiples of 1/4, so every format, float32 and every
// sum of split entries hold them exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/io/sparse_matrix_file.hpp"
#include "kembed/mpi/comm.hpp"
#include "test_support.hpp"

using kembed::Comm;
using kembed::io::CsrRows;
using kembed::io::is_sparse_file;
using kembed::io::read_csr;
using kembed::test::all_ranks;
using kembed::test::caught;

namespace {

constexpr std::int64_t n = 41;
constexpr std::int64_t d = 9;

/// D: about 30% non-zeros in k/4, k in -20..20 without 0; row 17 full,
/// rows 5, 30-33 and 40 empty.
std::vector<double> dense_fixture() {
  std::mt19937_64 gen(39);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> level(1, 20);
  std::vector<double> a(static_cast<std::size_t>(n * d), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) {
      const bool empty = i == 5 || (i >= 30 && i <= 33) || i == n - 1;
      if (!empty && (i == 17 || unit(gen) < 0.3))
        a[static_cast<std::size_t>(i * d + j)] = level(gen) * (unit(gen) < 0.5 ? -0.25 : 0.25);
    }
  return a;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// D as a Matrix Market file: entries in a shuffled order, the first entry
/// of every row split into two halves (repeats that the reader sums).
std::string mtx_general(const std::vector<double>& a) {
  std::vector<std::string> lines;
  char buffer[96];
  for (std::int64_t i = 0; i < n; ++i) {
    bool first = true;
    for (std::int64_t j = 0; j < d; ++j) {
      const double v = a[static_cast<std::size_t>(i * d + j)];
      if (v == 0) continue;
      const int parts = first ? 2 : 1;
      for (int p = 0; p < parts; ++p) {
        std::snprintf(buffer, sizeof buffer, "%lld %lld %.17g", static_cast<long long>(i + 1),
                      static_cast<long long>(j + 1), v / parts);
        lines.emplace_back(buffer);
      }
      first = false;
    }
  }
  std::shuffle(lines.begin(), lines.end(), std::mt19937_64(7));
  std::string text = "%%MatrixMarket matrix coordinate real general\n% written by test_sparse_input\n%\n";
  text += std::to_string(n) + " " + std::to_string(d) + " " + std::to_string(lines.size()) + "\n";
  for (const std::string& l : lines) text += l + "\n";
  return text;
}

/// Runs the scipy and h5py script once per process (rank 0), with D from
/// dense.txt; the directory, or "" when Python could not write the files.
const std::string& fixtures(const Comm& comm) {
  static const std::string dir = [&] {
    const std::string where = kembed::test::scratch_dir(comm, "sparse_input");
    int ok = 1;
    if (comm.is_root()) {
      const std::vector<double> a = dense_fixture();
      std::string text;
      char buffer[64];
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < d; ++j) {
          std::snprintf(buffer, sizeof buffer, "%s%.17g", j ? " " : "", a[static_cast<std::size_t>(i * d + j)]);
          text += buffer;
        }
        text += "\n";
      }
      write_text(where + "/dense.txt", text);
      write_text(where + "/general.mtx", mtx_general(a));
      write_text(where + "/make.py", R"PY(
import os, sys
import numpy as np, scipy.sparse as sp, h5py
os.chdir(sys.argv[1])
D = np.loadtxt('dense.txt', ndmin=2)
A = sp.csr_matrix(D)
sp.save_npz('plain.npz', A)                    # deflated (compressed=True is the default)
sp.save_npz('stored.npz', A, compressed=False)
# Each row's entries in reverse column order, the first one split in halves.
indptr, indices, data = [0], [], []
for i in range(D.shape[0]):
    for k, j in enumerate(np.nonzero(D[i])[0][::-1]):
        parts = 2 if k == 0 else 1
        indices += [j] * parts
        data += [D[i, j] / parts] * parts
    indptr.append(len(indices))
M = sp.csr_matrix((np.array(data), np.array(indices, dtype=np.int32), np.array(indptr, dtype=np.int32)), shape=D.shape)
assert not M.has_sorted_indices and M.nnz == A.nnz + np.count_nonzero(np.diff(A.indptr))
sp.save_npz('messy.npz', M)
W = sp.csr_matrix((A.data.astype(np.float32), A.indices.astype(np.int64), A.indptr.astype(np.int64)), shape=A.shape)
sp.save_npz('wide.npz', W, compressed=False)
I = sp.csr_matrix((np.rint(A.data * 4).astype(np.int16), A.indices, A.indptr), shape=A.shape)   # 4 D
sp.save_npz('int16.npz', I)
sp.save_npz('csc.npz', A.tocsc())
sp.save_npz('coo.npz', A.tocoo())
np.savez('dense.npz', x=D)
def npz(name, indices=A.indices, indptr=A.indptr, data=A.data, shape=A.shape):
    np.savez_compressed(name, indices=indices, indptr=indptr, format=b'csr', shape=np.array(shape), data=data)
bad = A.indices.copy(); bad[7] = D.shape[1]
npz('badcol.npz', indices=bad)
# 2^32 + 3: an index that a 32-bit cast would read as column 3.
huge = A.indices.astype(np.int64); huge[7] = 2**32 + 3
npz('hugecol.npz', indices=huge)
nan = A.data.copy(); nan[11] = np.nan
npz('nan.npz', data=nan)
last = A.data.copy(); last[-1] = np.inf   # in the last rank's rows only
npz('inf_last.npz', data=last)
ptr = A.indptr.copy(); ptr[-1] += 1
npz('badend.npz', indptr=ptr)
npz('badshape.npz', shape=(D.shape[0] + 1, D.shape[1]))
E = sp.csr_matrix(D.shape)
sp.save_npz('empty.npz', E)
# zip64 throughout, as an archive over 4 GiB is written: sizes and offsets in
# the directory's zip64 fields, the end record pointing at the zip64 one.
import zipfile
limit = zipfile.ZIP64_LIMIT
zipfile.ZIP64_LIMIT = 0
sp.save_npz('zip64.npz', A)
zipfile.ZIP64_LIMIT = limit
z = bytearray(open('zip64.npz', 'rb').read())
assert z[-22:-18] == b'PK\x05\x06' and b'PK\x06\x06' in z
z[-14:-10] = b'\xff' * 4   # member counts
z[-10:-2] = b'\xff' * 8    # directory size and offset
open('zip64.npz', 'wb').write(z)

def csr(g, M, fixed=False, **kw):
    if fixed:
        g.attrs.create('encoding-type', np.bytes_('csr_matrix'))
    else:
        g.attrs['encoding-type'] = 'csr_matrix'
    g.attrs['encoding-version'] = '0.1.0'
    g.attrs['shape'] = np.array(M.shape)
    for name in ('data', 'indices', 'indptr'):
        g.create_dataset(name, data=getattr(M, name), **kw)
with h5py.File('cells.h5ad', 'w') as f:
    f.attrs['encoding-type'] = 'anndata'
    f.attrs['encoding-version'] = '0.1.0'
    csr(f.create_group('X'), A)
    csr(f.create_group('layers/messy'), M)
    csr(f.create_group('raw/X'), W, fixed=True)
    csr(f.create_group('layers/gzip'), A, compression='gzip', chunks=(7,))
    csr(f.create_group('layers/empty'), E)
    g = f.create_group('layers/csc'); csr(g, A.tocsc()); g.attrs['encoding-type'] = 'csc_matrix'
    f['layers/dense'] = D
    ptr = A.indptr.copy(); ptr[10] = ptr[-1] + 5
    csr(f.create_group('layers/badptr'), sp.csr_matrix(D.shape)); del f['layers/badptr/indptr']
    f['layers/badptr/indptr'] = ptr
    del f['layers/badptr/data'], f['layers/badptr/indices']
    f['layers/badptr/data'] = A.data; f['layers/badptr/indices'] = A.indices
    g = f.create_group('layers/badcol'); csr(g, A); del g['indices']; g['indices'] = bad
    g = f.create_group('layers/hugecol'); csr(g, A); del g['indices']; g['indices'] = huge
    late = A.indices.copy(); late[-1] = -1   # in the last rank's rows only
    g = f.create_group('layers/badlast'); csr(g, A); del g['indices']; g['indices'] = late
    g = f.create_group('layers/noshape'); csr(g, A); del g.attrs['shape']
    # More stored entries than one read round (2^20): row 0 holds 1,500,000
    # (columns 0.., values c % 7 + 1), rows 1-3 hold 1,000 each (columns
    # 1999 j + r, value r), as 64-bit indices.
    cols = [np.arange(1500000, dtype=np.int64)] + [1999 * np.arange(1000, dtype=np.int64) + r for r in (1, 2, 3)]
    vals = [(cols[0] % 7 + 1).astype(np.float64)] + [np.full(1000, float(r)) for r in (1, 2, 3)]
    ptr = np.cumsum([0] + [len(c) for c in cols]).astype(np.int64)
    g = f.create_group('layers/long'); g.attrs['encoding-type'] = 'csr_matrix'
    g.attrs['encoding-version'] = '0.1.0'; g.attrs['shape'] = np.array([4, 2000000])
    g['data'] = np.concatenate(vals); g['indices'] = np.concatenate(cols); g['indptr'] = ptr
    # anndata before 0.7 (h5sparse): h5sparse_format and h5sparse_shape.
    g = f.create_group('layers/legacy'); csr(g, A)
    g.attrs['h5sparse_format'] = 'csr'; g.attrs['h5sparse_shape'] = np.array(A.shape)
    del g.attrs['encoding-type'], g.attrs['encoding-version'], g.attrs['shape']
)PY");
      const std::string command = "/usr/bin/python3 " + where + "/make.py " + where;
      ok = std::system(command.c_str()) == 0 ? 1 : 0;
    }
    comm.broadcast(&ok, 1);
    return ok ? where : std::string();
  }();
  return dir;
}

#define REQUIRE_FIXTURES(comm)                                                                     \
  const std::string dir = fixtures(comm);                                                          \
  ASSERT_FALSE(dir.empty()) << "the fixtures need /usr/bin/python3 with numpy, scipy and h5py"; \
  static_assert(true, "")

/// The matrix the ranks hold, gathered to rank 0 as a dense row-major
/// matrix (empty elsewhere); false when the rows are not contiguous in rank
/// order, not canonical or the shape is not n x d.
bool gather_dense(const Comm& comm, const CsrRows& m, std::vector<double>& out) {
  bool ok = m.rows == n && m.cols == d && m.offsets.size() == static_cast<std::size_t>(m.local_rows()) + 1 &&
            m.offsets.front() == 0 && m.offsets.back() == m.nonzeros() &&
            m.values.size() == m.columns.size();
  std::vector<double> local(static_cast<std::size_t>(std::max<std::int64_t>(m.local_rows(), 0) * d), 0.0);
  for (std::int64_t i = 0; ok && i < m.local_rows(); ++i)
    for (std::int64_t k = m.offsets[static_cast<std::size_t>(i)]; k < m.offsets[static_cast<std::size_t>(i) + 1]; ++k) {
      const std::int32_t c = m.columns[static_cast<std::size_t>(k)];
      ok = ok && c >= 0 && c < d && (k == m.offsets[static_cast<std::size_t>(i)] || m.columns[static_cast<std::size_t>(k) - 1] < c);
      if (ok) local[static_cast<std::size_t>(i * d + c)] = m.values[static_cast<std::size_t>(k)];
    }
  const std::vector<std::int64_t> firsts = comm.gatherv(std::vector<std::int64_t>{m.first_row, m.local_rows()});
  out = comm.gatherv(local);
  if (comm.is_root()) {
    std::int64_t next = 0;
    for (std::size_t r = 0; r < firsts.size(); r += 2) {
      ok = ok && firsts[r] == next;
      next += firsts[r + 1];
    }
    ok = ok && next == n;
  }
  return all_ranks(comm, ok);
}

/// Reads `path` and compares it with `scale` * D on rank 0, entry by entry.
void expect_dense(const Comm& comm, const std::string& path, const std::string& dataset, double scale = 1.0) {
  const std::vector<double> a = dense_fixture();
  CsrRows m;
  const std::string error = caught([&] { m = read_csr(path, dataset, comm); });
  ASSERT_TRUE(all_ranks(comm, error.empty())) << error;
  std::vector<double> got;
  ASSERT_TRUE(gather_dense(comm, m, got)) << path << " " << dataset;
  bool same = true;
  if (comm.is_root()) {
    same = got.size() == a.size();
    for (std::size_t k = 0; same && k < a.size(); ++k) same = got[k] == scale * a[k];
  }
  EXPECT_TRUE(all_ranks(comm, same)) << path << " " << dataset << ": gathered rows differ from D";
}

/// Every rank throws the same one-line error, which contains `part`.
void expect_error(const Comm& comm, const std::string& path, const std::string& dataset, const std::string& part) {
  const std::string message = caught([&] { read_csr(path, dataset, comm); });
  std::string root = message;
  comm.broadcast(root);
  EXPECT_TRUE(all_ranks(comm, !message.empty() && message == root && message.find('\n') == std::string::npos))
      << path << ": '" << message << "'";
  EXPECT_NE(message.find(part), std::string::npos) << "got: " << message << "\nexpected to contain: " << part;
}

TEST(SparseInput, MatrixMarketEqualsDense) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  expect_dense(comm, dir + "/general.mtx", "");
}

TEST(SparseInput, NpzEqualsDense) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  for (const char* name : {"plain.npz", "stored.npz", "messy.npz", "wide.npz", "zip64.npz"}) expect_dense(comm, dir + "/" + name, "");
  expect_dense(comm, dir + "/int16.npz", "", 4.0);
}

TEST(SparseInput, H5adEqualsDense) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  const std::string file = dir + "/cells.h5ad";
  for (const char* group : {"", "X", "/X", "/layers/messy", "/raw/X", "/layers/gzip", "/layers/legacy"}) expect_dense(comm, file, group);
}

// The indices are read in collective rounds of 2^20 entries: the rank that
// holds row 0 (1.5 million entries) reads two, the others one and then an
// empty one (or none have entries at all), at every rank count.
TEST(SparseInput, H5adIndicesLongerThanOneReadRound) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  CsrRows m;
  const std::string error = caught([&] { m = read_csr(dir + "/cells.h5ad", "/layers/long", comm); });
  ASSERT_TRUE(all_ranks(comm, error.empty())) << error;
  ASSERT_EQ(m.rows, 4);
  ASSERT_EQ(m.cols, 2000000);
  std::string wrong;
  for (std::int64_t i = 0; i < m.local_rows() && wrong.empty(); ++i) {
    const std::int64_t row = m.first_row + i, from = m.offsets[std::size_t(i)];
    const std::int64_t count = m.offsets[std::size_t(i) + 1] - from;
    if (count != (row == 0 ? 1500000 : 1000)) {
      wrong = "row " + std::to_string(row) + " holds " + std::to_string(count) + " entries";
      break;
    }
    for (std::int64_t e = 0; e < count; ++e) {
      const std::int64_t c = row == 0 ? e : 1999 * e + row;
      const double v = row == 0 ? double(c % 7 + 1) : double(row);
      if (m.columns[std::size_t(from + e)] != c || m.values[std::size_t(from + e)] != v) {
        wrong = "row " + std::to_string(row) + ", entry " + std::to_string(e);
        break;
      }
    }
  }
  EXPECT_TRUE(all_ranks(comm, wrong.empty())) << "rank " << comm.rank() << ": " << wrong;
  EXPECT_EQ(comm.sum(static_cast<long long>(m.local_rows())), 4);
  EXPECT_EQ(comm.sum(static_cast<long long>(m.nonzeros())), 1503000);
}

TEST(SparseInput, RowsBalancedByStoredEntries) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  const std::vector<double> a = dense_fixture();
  std::int64_t total = 0, longest = 0, nonempty = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto row = std::count_if(a.begin() + i * d, a.begin() + (i + 1) * d, [](double v) { return v != 0; });
    total += row;
    nonempty += row > 0;
    longest = std::max<std::int64_t>(longest, row);
  }
  ASSERT_EQ(longest, d);  // row 17
  for (const char* name : {"general.mtx", "plain.npz", "stored.npz", "cells.h5ad"}) {
    CsrRows m;
    const std::string error = caught([&] { m = read_csr(dir + "/" + name, "", comm); });
    ASSERT_TRUE(all_ranks(comm, error.empty())) << error;
    // The split counts stored entries: the .mtx stores the first entry of
    // each non-empty row as two halves, one more entry per row.
    const bool halves = std::string(name) == "general.mtx";
    std::int64_t stored = m.nonzeros();
    for (std::int64_t i = 0; halves && i < m.local_rows(); ++i)
      stored += m.offsets[static_cast<std::size_t>(i) + 1] > m.offsets[static_cast<std::size_t>(i)];
    const std::int64_t stored_total = comm.sum(static_cast<long long>(stored));
    EXPECT_EQ(comm.sum(static_cast<long long>(m.nonzeros())), total) << name;
    EXPECT_EQ(stored_total, total + (halves ? nonempty : 0)) << name;
    const double mean = static_cast<double>(stored_total) / comm.size();
    const std::int64_t longest_stored = longest + (halves ? 1 : 0);
    EXPECT_TRUE(all_ranks(comm, static_cast<double>(stored) <= mean + static_cast<double>(longest_stored)))
        << name << ": rank " << comm.rank() << " holds " << stored << " stored entries, mean " << mean;
  }
}

TEST(SparseInput, AllEmptyMatrices) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  if (comm.is_root()) write_text(dir + "/empty.mtx", "%%MatrixMarket matrix coordinate pattern general\n41 9 0\n");
  comm.barrier();
  for (const auto& [file, group] : {std::pair<std::string, std::string>{"empty.npz", ""}, {"empty.mtx", ""},
                                    {"cells.h5ad", "/layers/empty"}}) {
    CsrRows m;
    // Copies: a lambda may not capture a structured binding in C++17.
    const std::string path = dir + "/" + file, dataset = group;
    const std::string error = caught([&] { m = read_csr(path, dataset, comm); });
    ASSERT_TRUE(all_ranks(comm, error.empty())) << error;
    EXPECT_TRUE(all_ranks(comm, m.rows == n && m.cols == d && m.nonzeros() == 0)) << file;
    EXPECT_EQ(comm.sum(static_cast<long long>(m.local_rows())), n) << file;
    // Rows split evenly when there is nothing to balance.
    EXPECT_TRUE(all_ranks(comm, m.local_rows() <= n / comm.size() + 1)) << file;
  }
}

TEST(SparseInput, MatrixMarketFieldsAndSymmetry) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  // Lower triangle of a symmetric 4 x 4 matrix, pattern and integer.
  if (comm.is_root()) {
    write_text(dir + "/sym.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 4\n1 1\n3 1\n4 2\n4 4\n");
    write_text(dir + "/int.mtx", "%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 3 -7\n2 1 +4\n1 3 2\n");
    write_text(dir + "/banner.txt", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2.5\n");
  }
  comm.barrier();
  const auto dense = [&](const std::string& path, std::int64_t rows, std::int64_t cols) {
    const CsrRows m = read_csr(path, "", comm);
    std::vector<double> local(static_cast<std::size_t>(rows * cols), 0.0);
    for (std::int64_t i = 0; i < m.local_rows(); ++i)
      for (std::int64_t k = m.offsets[static_cast<std::size_t>(i)]; k < m.offsets[static_cast<std::size_t>(i) + 1]; ++k)
        local[static_cast<std::size_t>((m.first_row + i) * cols + m.columns[static_cast<std::size_t>(k)])] =
            m.values[static_cast<std::size_t>(k)];
    comm.sum_in_place(local);
    return local;
  };
  const std::vector<double> sym = {1, 0, 1, 0,  //
                                   0, 0, 0, 1,  //
                                   1, 0, 0, 0,  //
                                   0, 1, 0, 1};
  EXPECT_EQ(dense(dir + "/sym.mtx", 4, 4), sym);
  EXPECT_EQ(dense(dir + "/int.mtx", 2, 3), (std::vector<double>{0, 0, -5, 4, 0, 0}));
  EXPECT_EQ(dense(dir + "/banner.txt", 1, 1), std::vector<double>{2.5});
}

TEST(SparseInput, IsSparseFile) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  EXPECT_TRUE(is_sparse_file("a.h5ad"));
  EXPECT_TRUE(is_sparse_file("dir/a.NPZ"));
  EXPECT_TRUE(is_sparse_file("a.mtx"));
  EXPECT_FALSE(is_sparse_file("a.csv"));
  EXPECT_FALSE(is_sparse_file("a.npy"));
  EXPECT_FALSE(is_sparse_file("-"));
  EXPECT_FALSE(is_sparse_file(dir + "/dense.txt"));
  if (comm.is_root()) write_text(dir + "/banner2.txt", "%%MatrixMarket matrix coordinate real general\n1 1 0\n");
  comm.barrier();
  EXPECT_TRUE(is_sparse_file(dir + "/banner2.txt"));
}

TEST(SparseInput, MatrixMarketErrors) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  const std::string head = "%%MatrixMarket matrix coordinate real general\n% comment\n3 10 2\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + "1 1 1.5\n3 12 2\n", "x.mtx: line 5: column 12 is outside 1..10"},
      {head + "0 1 1.5\n", "x.mtx: line 4: row 0 is outside 1..3"},
      {head + "1 1 nan\n", "x.mtx: line 4: non-finite value 'nan'"},
      {head + "1 1 inf\n", "x.mtx: line 4: non-finite value 'inf'"},
      {head + "1 1 abc\n", "x.mtx: line 4: value 'abc' is not a number"},
      {head + "1 1\n", "x.mtx: line 4: expected 'row column value', found 2 fields"},
      {head + "1 1 1\n", "x.mtx: ends after 1 of the 2 entries the size line declares (truncated?)"},
      {head + "1 1 1\n2 2 2\n3 3 3\n", "x.mtx: line 6: more entries than the 2 the size line declares"},
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "x.mtx: line 1: a dense 'array' file"},
      {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "x.mtx: line 1: complex values are not supported"},
      {"%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", "x.mtx: line 1: 'hermitian' matrices are not supported"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", "x.mtx: line 1: 'skew-symmetric' matrices are not supported"},
      {"%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", "x.mtx: line 2: a symmetric matrix must be square"},
      {"1 2 3\n", "x.mtx: line 1: not a Matrix Market file"},
      {"", "x.mtx: empty file"},
      {"%%MatrixMarket matrix coordinate real general\n% only comments\n", "x.mtx: ends before the size line"},
      {"%%MatrixMarket matrix coordinate real general\n2 -2 1\n", "x.mtx: line 2: expected the size line"},
      // Refused before rows + 1 offsets are allocated (it asked for 2^65
      // bytes; fuzz_mtx runs the parser with a small bound of the same kind).
      {"%%MatrixMarket matrix coordinate real general\n5000000000000000000 3 0\n",
       "x.mtx: line 2: 5000000000000000000 rows is more than kembed supports (2^62)"},
  };
  for (const auto& [text, part] : cases) {
    if (comm.is_root()) write_text(dir + "/x.mtx", text);
    comm.barrier();
    expect_error(comm, dir + "/x.mtx", "", dir + "/" + part);
    comm.barrier();  // every rank has read before the next case rewrites the file
  }
  // Repeats that sum to a non-finite value.
  if (comm.is_root())
    write_text(dir + "/x.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 2\n1 1 1e308\n1 1 1e308\n");
  comm.barrier();
  expect_error(comm, dir + "/x.mtx", "", dir + "/x.mtx: row 1, column 1: the repeated entries sum to a non-finite value");
}

TEST(SparseInput, NpzErrors) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  const std::string convert = "scipy.sparse.save_npz(out, scipy.sparse.load_npz(in).tocsr())";
  expect_error(comm, dir + "/csc.npz", "", dir + "/csc.npz: holds a CSC matrix (format 'csc'); kembed reads CSR: convert it with scipy, " + convert);
  expect_error(comm, dir + "/coo.npz", "", dir + "/coo.npz: holds a sparse matrix in format 'coo'");
  expect_error(comm, dir + "/dense.npz", "", dir + "/dense.npz: no member format.npy; not a scipy.sparse.save_npz file (members: x.npy)");
  // A.indices[7] is entry 7: row 2 of D (rows 0 and 1 hold 7 entries) or earlier.
  const std::string bad = caught([&] { read_csr(dir + "/badcol.npz", "", comm); });
  EXPECT_NE(bad.find(dir + "/badcol.npz: indices.npy[7] (row "), std::string::npos) << bad;
  EXPECT_NE(bad.find("): column 9 is outside 0..8"), std::string::npos) << bad;
  // Columns are narrowed to 32 bits as they are read: an index beyond that
  // range is named as stored, never wrapped into range.
  const std::string huge = caught([&] { read_csr(dir + "/hugecol.npz", "", comm); });
  EXPECT_NE(huge.find(dir + "/hugecol.npz: indices.npy[7] (row "), std::string::npos) << huge;
  EXPECT_NE(huge.find("): column 4294967299 is outside 0..8"), std::string::npos) << huge;
  const std::string nan = caught([&] { read_csr(dir + "/nan.npz", "", comm); });
  EXPECT_NE(nan.find(dir + "/nan.npz: data.npy[11] (row "), std::string::npos) << nan;
  EXPECT_NE(nan.find("): non-finite value (nan)"), std::string::npos) << nan;
  // Found by the last rank alone: the others wait in the agreement, not in a
  // read, and throw its message.
  const std::vector<double> a = dense_fixture();
  const auto last = static_cast<std::int64_t>(a.rend() - std::find_if(a.rbegin(), a.rend(), [](double v) { return v != 0; })) - 1;
  const std::string entry = std::to_string(std::count_if(a.begin(), a.end(), [](double v) { return v != 0; }) - 1);
  const std::string where = "(row " + std::to_string(last / d) + ", column " + std::to_string(last % d) + ")";
  expect_error(comm, dir + "/inf_last.npz", "", dir + "/inf_last.npz: data.npy[" + entry + "] " + where + ": non-finite value (inf)");
  expect_error(comm, dir + "/badend.npz", "", dir + "/badend.npz: indptr.npy: ends at ");
  expect_error(comm, dir + "/badshape.npz", "", dir + "/badshape.npz: indptr.npy: has 42 values, but the shape (42, 9) needs 43");
  expect_error(comm, dir + "/nothere.npz", "", "cannot open '" + dir + "/nothere.npz'");
  expect_error(comm, dir + "/plain.npz", "/X", dir + "/plain.npz: --dataset /X names a group of an .h5ad file");
  // Damaged archives: cut in half, and one byte changed in the middle (the
  // inflater or a CRC-32 finds it: the last rank reads each member to its end).
  if (comm.is_root()) {
    std::ifstream in(dir + "/plain.npz", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    write_text(dir + "/cut.npz", bytes.substr(0, bytes.size() / 2));
    for (std::size_t k = bytes.size() / 2 - 8; k < bytes.size() / 2 + 8; ++k) bytes[k] = static_cast<char>(bytes[k] ^ 0x5a);
    write_text(dir + "/flipped.npz", bytes);
  }
  comm.barrier();
  expect_error(comm, dir + "/cut.npz", "", dir + "/cut.npz: not a zip archive, or a truncated or corrupt one");
  expect_error(comm, dir + "/flipped.npz", "", dir + "/flipped.npz");
  // Sizes in the central directory that no member can have: refused when
  // the directory is read, before anything of the announced size is
  // allocated. 2130706432 bytes from a deflated member of a few hundred
  // (deflate expands at most 1032-fold; the member's .npy header was then
  // read and its shape compared with the false size), and a stored member
  // whose two sizes differ (fuzz_npz found the directory accepting it). An
  // empty member with a CRC-32 other than 0 is corrupt: its reader checks
  // that when it is made (fuzz_npz read one through without the check; the
  // .npz reader's read of its first bytes checked it already).
  if (comm.is_root()) {
    // The central directory entry of `member` in `name`.npz (signature
    // PK\1\2, the name's last copy in the file) with its uncompressed size,
    // at offset 24 (4 bytes, little-endian), set to `size`, as `out`.npz.
    const auto patch = [&](const char* name, const std::string& member, std::uint32_t size, const std::string& out) {
      std::ifstream in(dir + "/" + name + ".npz", std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const std::size_t entry = bytes.rfind("PK\x01\x02", bytes.rfind(member));
      for (int b = 0; b < 4; ++b) bytes[entry + 24 + b] = static_cast<char>((size >> (8 * b)) & 0xff);
      write_text(dir + "/" + out + ".npz", bytes);
    };
    patch("plain", "indptr.npy", 0x7f000000, "plain_huge");
    patch("stored", "indptr.npy", 0x7f000000, "stored_huge");
    patch("plain", "format.npy", 0, "empty_member");
  }
  comm.barrier();
  expect_error(comm, dir + "/plain_huge.npz", "", dir + "/plain_huge.npz: not a zip archive, or a truncated or corrupt one "
                                                   "(member indptr.npy says it inflates ");
  expect_error(comm, dir + "/plain_huge.npz", "", " bytes to 2130706432, more than deflate can)");
  expect_error(comm, dir + "/stored_huge.npz", "", dir + "/stored_huge.npz: not a zip archive, or a truncated or corrupt one "
                                                    "(member indptr.npy is stored with ");
  expect_error(comm, dir + "/empty_member.npz", "", dir + "/empty_member.npz: member format.npy fails its CRC-32 check (corrupt archive)");
}

TEST(SparseInput, H5adErrors) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  const std::string file = dir + "/cells.h5ad";
  expect_error(comm, file, "/layers/csc", file + ": /layers/csc is a CSC matrix (encoding-type csc_matrix); kembed reads CSR; convert it to CSR in Python");
  expect_error(comm, file, "/layers/dense", file + ": /layers/dense is a dense dataset, not a sparse matrix; read it through kembed's dense HDF5 reader (--dataset /layers/dense)");
  expect_error(comm, file, "/layers/badptr", file + ": /layers/badptr/indptr: decreases at position 11");
  expect_error(comm, file, "/layers/badcol", file + ": /layers/badcol/indices[7] (row ");
  const std::string huge = caught([&] { read_csr(file, "/layers/hugecol", comm); });
  EXPECT_NE(huge.find(file + ": /layers/hugecol/indices[7] (row "), std::string::npos) << huge;
  EXPECT_NE(huge.find("): column 4294967299 is outside 0..8"), std::string::npos) << huge;
  {
    const std::vector<double> a = dense_fixture();
    const auto last = static_cast<std::int64_t>(a.rend() - std::find_if(a.rbegin(), a.rend(), [](double v) { return v != 0; })) - 1;
    const auto entries = std::count_if(a.begin(), a.end(), [](double v) { return v != 0; });
    expect_error(comm, file, "/layers/badlast", file + ": /layers/badlast/indices[" + std::to_string(entries - 1) +
                 "] (row " + std::to_string(last / d) + "): column -1 is outside 0..8");
  }
  expect_error(comm, file, "/layers/noshape", file + ": group /layers/noshape has no shape attribute of two integers");
  expect_error(comm, file, "/layers/nothing", file + ": no group /layers/nothing");
  expect_error(comm, file, "/layers", file + ": group /layers has no encoding-type attribute");
  expect_error(comm, dir + "/plain.h5ad", "", "cannot open '" + dir + "/plain.h5ad'");
  if (comm.is_root()) write_text(dir + "/text.h5ad", "not hdf5\n");
  comm.barrier();
  expect_error(comm, dir + "/text.h5ad", "", dir + "/text.h5ad: cannot open as an HDF5 file");
}

TEST(SparseInput, NotSparseFiles) {
  const Comm comm = Comm::world();
  REQUIRE_FIXTURES(comm);
  expect_error(comm, dir + "/dense.txt", "", dir + "/dense.txt: not a sparse matrix file");
  expect_error(comm, dir + "/missing.txt", "", "cannot open '" + dir + "/missing.txt'");
}

}  // namespace
