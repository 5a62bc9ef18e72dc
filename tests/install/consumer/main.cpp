// Built against an installed kembed: distributes a small matrix over the
// process grid, gathers it back and checks every entry against its formula.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

#include <kembed/linalg/blacs_grid.hpp>
#include <kembed/linalg/dist_matrix.hpp>
#include <kembed/mpi/comm.hpp>
#include <kembed/mpi/session.hpp>

#ifndef KEMBED_VERSION
#define KEMBED_VERSION "unknown (no usage requirements)"
#endif

int main(int argc, char** argv) {
  kembed::MpiSession mpi(argc, argv);
  try {
    const kembed::Comm world = kembed::Comm::world();
    const kembed::BlacsGrid grid(world);
    const std::int64_t m = 7, n = 5;
    kembed::DistMatrix a(grid, m, n, 2, 2);
    a.fill([](std::int64_t i, std::int64_t j) { return double(10 * i + j); });
    const std::vector<double> full = a.gather_to_root();
    int bad = 0;
    if (world.rank() == 0) {
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i)
          if (full[std::size_t(j * m + i)] != double(10 * i + j)) ++bad;
      std::printf("kembed %s: %lldx%lld round trip on %d ranks, %d wrong entries\n", KEMBED_VERSION,
                  (long long)m, (long long)n, world.size(), bad);
    }
    return bad == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
