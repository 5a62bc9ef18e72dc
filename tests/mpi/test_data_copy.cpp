// The model's copy of the training data (copy_to_npy) written by all ranks,
// and the data fingerprint, against a serial one computed here over the
// values the test wrote (SplitMix64's published mixer, written out again),
// for several round sizes, and of the same values distributed block-cyclically
// on several grids and block sizes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "io/data_fingerprint.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/io/model.hpp"
#include "kembed/mpi/comm.hpp"
#include "rounded_to_float.hpp"
#include "test_support.hpp"

using namespace kembed;
using kembed::test::all_ranks;

namespace {

constexpr std::int64_t m = 41, n = 3;

// Sum over row-major t of mix(bits(a_t) + (t + 1) * gamma), modulo 2^64.
std::string serial_fingerprint(const std::vector<double>& a) {
  std::uint64_t sum = 0;
  for (std::size_t t = 0; t < a.size(); ++t) {
    std::uint64_t z;
    std::memcpy(&z, &a[t], sizeof z);
    z += (t + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    sum += z ^ (z >> 31);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(sum));
  return hex;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(DataCopy, EveryRankWritesItsRowsAndTheFingerprintIsTheSerialOne) {
  const Comm comm = Comm::world();
  const std::string dir = test::scratch_dir(comm, "data_copy");
  std::mt19937_64 gen(7);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (double& v : a) v = normal(gen);
  // float32 source: the fingerprint is of the float64 values kembed reads.
  const std::vector<double> widened = kembed::test::rounded_to_float(a);
  if (comm.is_root()) {
    std::ofstream(dir + "/a.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(a.data()), static_cast<std::streamsize>(a.size() * sizeof(double)));
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (41, 3), }";
    dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
    dict += '\n';
    std::string npy = "\x93NUMPY\x01";
    npy += '\0';
    npy += static_cast<char>(dict.size());
    npy += '\0';
    npy += dict;
    for (double v : a) {
      const float x = static_cast<float>(v);
      npy.append(reinterpret_cast<const char*>(&x), sizeof x);
    }
    std::ofstream(dir + "/a32.npy", std::ios::binary) << npy;
  }
  comm.barrier();
  const std::vector<std::pair<std::string, const std::vector<double>*>> sources = {{dir + "/a.bin", &a},
                                                                                  {dir + "/a32.npy", &widened}};
  int copy = 0;
  for (const auto& [source_path, values] : sources) {
    auto source = io::open_matrix_file(comm, source_path, source_path.size() > 4 && source_path.substr(source_path.size() - 4) == ".bin"
                                                              ? io::FileHints{m, n}
                                                              : io::FileHints{});
    const std::string expected = serial_fingerprint(*values);
    EXPECT_TRUE(all_ranks(comm, io::fingerprint_rows(comm, *source) == expected)) << source_path;
    // Rounds of 1, 4 and 100 rows per rank: many rounds, a partial last one, a single one.
    for (const std::int64_t chunk : {1, 4, 100}) {
      const std::string copy_path = dir + "/X" + std::to_string(copy++) + ".npy";
      const std::string fingerprint = io::fingerprint_rows_in_rounds(comm, *source, copy_path, chunk);
      EXPECT_TRUE(all_ranks(comm, fingerprint == expected)) << source_path << ", " << chunk << " rows a round";
      // The copy: a .npy header for (41, 3) float64, then exactly the values.
      bool ok = true;
      if (comm.is_root()) {
        const std::string bytes = read_all(copy_path);
        const std::size_t header = 10 + static_cast<unsigned char>(bytes[8]) + 256u * static_cast<unsigned char>(bytes[9]);
        ok = bytes.size() == header + values->size() * sizeof(double) &&
             bytes.find("'descr': '<f8'") != std::string::npos && bytes.find("'shape': (41, 3)") != std::string::npos &&
             std::memcmp(bytes.data() + header, values->data(), values->size() * sizeof(double)) == 0;
      }
      EXPECT_TRUE(all_ranks(comm, ok)) << copy_path;
    }
  }
  // The fingerprint of the distributed matrix (pca's) is the file's, on
  // every grid shape and block size.
  auto source = io::open_matrix_file(comm, dir + "/a.bin", io::FileHints{m, n});
  const std::string expected = serial_fingerprint(a);
  const int p = comm.size();
  for (const auto& [nprow, npcol] : {std::pair{p, 1}, std::pair{1, p}, BlacsGrid::near_square(p)}) {
    const BlacsGrid grid(comm, nprow, npcol);
    for (const int nb : {2, 5, 64}) {
      DistMatrix x(grid, m, n, nb, nb);
      distribute::read_block_cyclic(*source, x);
      EXPECT_TRUE(all_ranks(comm, data_fingerprint(x) == expected))
          << nprow << "x" << npcol << " grid, block size " << nb;
    }
  }
  comm.barrier();
  if (comm.is_root()) std::filesystem::remove_all(dir);
}
