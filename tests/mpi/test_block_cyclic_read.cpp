// read_block_cyclic of every input format on every process grid of the rank
// count, with rectangular matrices and unequal row and column blocks,
// compared entry by entry with the values the test wrote into the file.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/hdf5.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/mpi/comm.hpp"
#include "test_support.hpp"

using namespace kembed;
using kembed::test::all_ranks;
using kembed::test::raw_bytes;
using kembed::test::grid_shapes;

namespace {

constexpr std::int64_t m = 29, n = 17;

/// Row-major m x n values, exactly representable as float32 too.
std::vector<double> matrix() {
  std::mt19937_64 gen(13);
  std::uniform_int_distribution<int> pick(-4096, 4096);
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (double& v : a) v = pick(gen) / 64.0;
  return a;
}

/// .npy bytes written from the format spec (version 1.0, C order).
std::string npy_bytes(const std::string& descr, const std::string& data) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + std::to_string(m) + ", " +
                     std::to_string(n) + "), }";
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict + data;
}

std::string csv_text(const std::vector<double>& a) {
  std::string out;
  char cell[64];
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      std::snprintf(cell, sizeof cell, "%.17g", a[static_cast<std::size_t>(i * n + j)]);
      out += cell + std::string(j + 1 < n ? "," : "\n");
    }
  return out;
}

class BlockCyclicRead : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::scratch_dir(comm_, "block_cyclic_read"); }
  void TearDown() override {
    comm_.barrier();
    if (comm_.is_root()) std::filesystem::remove_all(dir_);
  }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    if (comm_.is_root()) std::ofstream(path, std::ios::binary) << bytes;
    comm_.barrier();
    return path;
  }
  /// Every format the build reads, as (path, hints).
  std::vector<std::pair<std::string, io::FileHints>> files(const std::vector<double>& a) {
    std::vector<std::pair<std::string, io::FileHints>> out = {
        {write("a.npy", npy_bytes("<f8", raw_bytes<double>(a))), {}},
        {write("a32.npy", npy_bytes("<f4", raw_bytes<float>(a))), {}},
        {write("a.bin", raw_bytes<double>(a)), {m, n}},
        {write("a.csv", csv_text(a)), {}},
    };
    if (!io::hdf5_version().empty()) {
      const std::int64_t per = (m + comm_.size() - 1) / comm_.size();
      const std::int64_t begin = std::min(m, per * comm_.rank()), end = std::min(m, begin + per);
      const std::vector<double> mine(a.begin() + begin * n, a.begin() + end * n);
      io::write_hdf5_matrix(comm_, dir_ + "/a.h5", "/X", m, n, begin, mine);
      out.push_back({dir_ + "/a.h5", {}});
    }
    return out;
  }
  Comm comm_ = Comm::world();
  std::string dir_;
  std::vector<double> a_ = matrix();
};

}  // namespace

TEST_F(BlockCyclicRead, EveryFormatGridAndBlockingGivesTheFileEntries) {
  const std::vector<std::pair<int, int>> blockings = {{1, 1}, {3, 5}, {4, 2}, {64, 64}};
  for (const auto& [path, hints] : files(a_)) {
    auto file = io::open_matrix_file(comm_, path, hints);
    for (const auto& [p, q] : grid_shapes(comm_.size()))
      for (const auto& [mb, nb] : blockings) {
        const BlacsGrid grid(comm_, p, q);
        DistMatrix k(grid, m, n, mb, nb);
        k.fill([](std::int64_t, std::int64_t) { return -1e300; });
        distribute::read_block_cyclic(*file, k);
        bool ok = true;
        for (int lj = 0; lj < k.local_cols(); ++lj)
          for (int li = 0; li < k.local_rows(); ++li)
            ok = ok && k.local(li, lj) == a_[static_cast<std::size_t>(k.row_dist().to_global(li) * n +
                                                                       k.col_dist().to_global(lj))];
        EXPECT_TRUE(all_ranks(comm_, ok)) << path << " on " << p << "x" << q << ", blocks " << mb << "x" << nb;
      }
  }
}

TEST_F(BlockCyclicRead, LayoutOfAnotherCommunicatorTakesTheStripePath) {
  // Every rank asks for the whole matrix as the only process of a 1 x 1
  // grid: a layout that does not cover the file's ranks.
  auto file = io::open_matrix_file(comm_, write("b.npy", npy_bytes("<f8", raw_bytes<double>(a_))));
  std::vector<double> got(static_cast<std::size_t>(m * n), -1e300);
  std::vector<int> seen(static_cast<std::size_t>(m), 0);
  file->read_block_cyclic({5, 3, 1, 1, 0, 0}, [&](std::int64_t first, std::int64_t count, const double* v) {
    for (std::int64_t i = 0; i < count; ++i) {
      ++seen[static_cast<std::size_t>(first + i)];
      for (std::int64_t j = 0; j < n; ++j) got[static_cast<std::size_t>((first + i) * n + j)] = v[j * count + i];
    }
  });
  EXPECT_TRUE(all_ranks(comm_, got == a_ && seen == std::vector<int>(static_cast<std::size_t>(m), 1)));
}

TEST_F(BlockCyclicRead, FirstNonFiniteEntryInFileOrderIsNamedOnEveryRank) {
  std::vector<double> bad = a_;
  bad[static_cast<std::size_t>(20 * n + 1)] = std::numeric_limits<double>::infinity();
  bad[static_cast<std::size_t>(11 * n + 2)] = std::numeric_limits<double>::quiet_NaN();
  for (const std::string& name : {std::string("nan.npy"), std::string("nan32.npy")}) {
    const std::string path =
        write(name, npy_bytes(name == "nan.npy" ? "<f8" : "<f4",
                              name == "nan.npy" ? raw_bytes<double>(bad) : raw_bytes<float>(bad)));
    auto file = io::open_matrix_file(comm_, path);
    for (const auto& [p, q] : grid_shapes(comm_.size())) {
      const BlacsGrid grid(comm_, p, q);
      DistMatrix k(grid, m, n, 2, 3);
      std::string message;
      try {
        distribute::read_block_cyclic(*file, k);
      } catch (const Error& e) {
        message = e.what();
      }
      std::string root = message;
      comm_.broadcast(root);
      EXPECT_TRUE(all_ranks(comm_, message == root && message == path + ": row 12, column 3 (1-based): non-finite value"))
          << message;
    }
  }
}
