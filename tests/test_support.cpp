#include "test_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace kembed::test {

std::vector<double> panel(const std::vector<double>& x, int d, const BlockCyclic1D& dist) {
  std::vector<double> p(std::size_t(dist.local_size()) * d);
  for (int l = 0; l < dist.local_size(); ++l)
    std::copy_n(&x[std::size_t(dist.to_global(l)) * d], d, &p[std::size_t(l) * d]);
  return p;
}

kernel::Kernel test_kernel(kernel::KernelType type) {
  kernel::Kernel k;
  k.type = type;
  k.gamma = 0.3;
  k.degree = 3;
  k.coef0 = 0.5;
  return k;
}

bool all_ranks(const Comm& comm, bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm.get());
  return all == 1;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  const double none = std::numeric_limits<double>::infinity();
  if (a.size() != b.size()) return none;
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double diff = std::abs(a[i] - b[i]);
    if (std::isnan(diff)) return none;
    worst = std::max(worst, diff);
  }
  return worst;
}

std::vector<std::pair<int, int>> grid_shapes(int p) {
  std::vector<std::pair<int, int>> shapes;
  for (int r = 1; r <= p; ++r)
    if (p % r == 0) shapes.push_back({r, p / r});
  return shapes;
}

std::string scratch_dir(const Comm& comm, const std::string& name) {
  std::string dir;
  if (comm.is_root()) {
    auto path = std::filesystem::temp_directory_path() /
                ("kembed-test-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
    dir = path.string();
  }
  comm.broadcast(dir);
  return dir;
}

std::vector<SimdLevel> supported_simd_levels() {
  std::vector<SimdLevel> levels;
  for (SimdLevel l : {SimdLevel::baseline, SimdLevel::avx2, SimdLevel::avx512})
    if (static_cast<int>(l) <= static_cast<int>(best_simd_level())) levels.push_back(l);
  return levels;
}

}  // namespace kembed::test
