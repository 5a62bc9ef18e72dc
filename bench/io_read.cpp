// Read and write rates of kembed's distribution paths beside the streaming
// bandwidth of the same machine, measured in one run (bench/io.sh):
//   - stream: one sequential read of the whole file by rank 0 (page cache warm);
//   - rows: read_rows of one contiguous block of rows per rank (what pca's
//     fingerprint and a row-panel layout read);
//   - block-cyclic: read_block_cyclic of the file into a DistMatrix on the
//     near-square grid (pca's "distribute" for X, kpca/mds's precomputed
//     kernel);
//   - panels: read_panel of the row and the column indices of an n x n
//     kernel on that grid (kpca's read of X);
//   - copy: copy_to_npy of the file to a new .npy (the model's X.npy).
// Every time is the slowest rank's, best of --repeat runs. Rates are file
// bytes (or bytes written) per second over the whole job.
//
//   mpirun -np 2 kembed_bench_io FILE... [--block-size 64] [--repeat 3] [--out DIR]
//       [--bin-shape ROWSxCOLS]   (the shape of the .bin files after it)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/io/matrix_file.hpp"
#include "kembed/io/model.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/mpi/comm.hpp"
#include "kembed/mpi/session.hpp"

using namespace kembed;

namespace {

/// Seconds of one sequential read of `path` in 16 MB pieces (rank 0 only).
double stream_seconds(const std::string& path) {
  std::vector<char> buffer(std::size_t{16} << 20);
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error("cannot open " + path);
  const double start = Comm::wtime();
  while (::read(fd, buffer.data(), buffer.size()) > 0) {
  }
  const double seconds = Comm::wtime() - start;
  ::close(fd);
  return seconds;
}

/// Slowest rank's time of `work`, best of `repeat`.
double best_of(const Comm& comm, int repeat, const std::function<void()>& work) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeat; ++r) {
    comm.barrier();
    const double start = Comm::wtime();
    work();
    best = std::min(best, comm.max(Comm::wtime() - start));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  const Comm world = Comm::world();
  int nb = 64, repeat = 3;
  std::string out_dir = "/tmp";
  std::int64_t bin_rows = -1, bin_cols = -1;
  std::vector<std::pair<std::string, io::FileHints>> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--block-size" && i + 1 < argc) nb = std::stoi(argv[++i]);
    else if (arg == "--repeat" && i + 1 < argc) repeat = std::stoi(argv[++i]);
    else if (arg == "--out" && i + 1 < argc) out_dir = argv[++i];
    else if (arg == "--bin-shape" && i + 1 < argc) {
      const std::string shape = argv[++i];
      bin_rows = std::stoll(shape.substr(0, shape.find('x')));
      bin_cols = std::stoll(shape.substr(shape.find('x') + 1));
    }
    else files.push_back({arg, io::FileHints{bin_rows, bin_cols}});
  }
  try {
    const BlacsGrid grid(world);
    if (world.is_root())
      std::printf("| file | format | shape | path | grid | bytes | seconds | GB/s | of streaming |\n"
                  "|---|---|---|---|---|---|---|---|---|\n");
    for (const auto& [given, hints] : files) {
      const bool bin = given.size() > 4 && given.substr(given.size() - 4) == ".bin";
      auto file = io::open_matrix_file(world, given, bin ? hints : io::FileHints{});
      const std::int64_t n = file->rows(), d = file->cols();
      const std::string plain = io::split_dataset(given).first;
      const auto bytes = static_cast<double>(n * d * 8);
      double stream = 0;
      if (world.is_root()) {
        stream_seconds(plain);
        stream = std::min(stream_seconds(plain), stream_seconds(plain));
      }
      stream = world.max(stream);
      const double stream_rate = static_cast<double>(std::filesystem::file_size(plain)) / stream;
      const std::string shape = std::to_string(n) + " x " + std::to_string(d);
      const std::string grid_text = std::to_string(grid.nprow()) + "x" + std::to_string(grid.npcol());
      auto row = [&](const std::string& what, const std::string& g, double moved, double seconds) {
        if (world.is_root())
          std::printf("| %s | %s | %s | %s | %s | %.0f | %.3f | %.2f | %.0f%% |\n",
                      std::filesystem::path(plain).filename().c_str(), file->format().c_str(), shape.c_str(),
                      what.c_str(), g.c_str(), moved, seconds, moved / seconds / 1e9,
                      100 * moved / seconds / stream_rate);
      };
      row("stream (rank 0)", "-", static_cast<double>(std::filesystem::file_size(plain)), stream);

      const std::int64_t per = (n + world.size() - 1) / world.size();
      const std::int64_t begin = std::min(n, per * world.rank()), end = std::min(n, begin + per);
      row("read_rows, one block per rank", "-", bytes, best_of(world, repeat, [&] {
            file->read_rows(begin < end ? std::vector<io::RowRange>{{begin, end}} : std::vector<io::RowRange>{});
          }));
      row("read_block_cyclic", grid_text, bytes, best_of(world, repeat, [&] {
            DistMatrix x(grid, n, d, nb, nb);
            distribute::read_block_cyclic(*file, x);
          }));
      if (n != d) {
        // kpca's read of X: the rows of the kernel's row and column indices.
        const DistMatrix k(grid, 0, 0, nb, nb);
        const BlockCyclic1D rows(n, nb, grid.myrow(), grid.nprow()), cols(n, nb, grid.mycol(), grid.npcol());
        const double moved = bytes * (grid.npcol() + grid.nprow());
        row("read_panel (rows + cols)", grid_text, moved, best_of(world, repeat, [&] {
              distribute::read_panel(*file, rows);
              distribute::read_panel(*file, cols);
            }));
        const std::string copy = out_dir + "/kembed-bench-io-copy.npy";
        row("copy_to_npy (bytes written)", "-", bytes, best_of(world, repeat, [&] {
              if (world.is_root()) std::filesystem::remove(copy);
              world.barrier();
              io::copy_to_npy(world, *file, copy);
            }));
        if (world.is_root()) std::filesystem::remove(copy);
        std::string fingerprint;
        row("fingerprint_rows", "-", bytes,
            best_of(world, repeat, [&] { fingerprint = io::fingerprint_rows(world, *file); }));
        if (world.is_root()) std::fprintf(stderr, "fingerprint of %s: %s\n", plain.c_str(), fingerprint.c_str());
      }
    }
  } catch (const Error& e) {
    if (world.is_root()) std::fprintf(stderr, "kembed_bench_io: %s\n", e.what());
    return 1;
  }
  return 0;
}
