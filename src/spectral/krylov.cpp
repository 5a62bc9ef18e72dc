#include "kembed/spectral/krylov.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kembed/core/error.hpp"
#include "kembed/core/splitmix64.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/linalg/scalapack.hpp"

namespace kembed::spectral {

namespace {

// The row-distributed basis: every rank holds whole rows of an n x m block.
class Basis {
 public:
  Basis(const BlacsGrid& line, std::int64_t n, int m, int nb) : v_(line, n, m, nb, m) {}
  DistMatrix& matrix() { return v_; }
  int local_rows() const { return v_.local_rows(); }
  int ld() const { return v_.ld(); }
  double* col(int j) { return v_.data() + std::size_t(j) * v_.ld(); }
  const double* col(int j) const { return v_.data() + std::size_t(j) * v_.ld(); }

 private:
  DistMatrix v_;
};

}  // namespace

// Block width: a few more vectors than wanted, and at least 24 so that each
// product with K is an efficient BLAS-3 call (measured on gaussian data,
// n = 8000: b = 24, 8 blocks per cycle was fastest for k = 10; b = k + k/4,
// 6 blocks for k = 50).
int krylov_block_width(int k, const KrylovSettings& s) {
  return s.block > 0 ? s.block : std::max(k + std::max(4, k / 4), 24);
}

int krylov_depth(int b, const KrylovSettings& s, std::int64_t n) {
  if (s.depth > 0) return s.depth;
  // Deeper cycles need fewer passes for the same residual (bench/passes.sh:
  // 12 blocks of 24 took 12 passes where 8 took 15), while the basis stays
  // at most n/2; never shallower than 8 blocks (6 for wide blocks).
  const int deepest = b <= 32 ? 12 : 6, shallowest = b <= 32 ? 8 : 6;
  const std::int64_t fits = n / (2 * std::int64_t{std::max(b, 1)});
  return static_cast<int>(std::clamp<std::int64_t>(fits, shallowest, deepest));
}

namespace {

// Sum of small matrices over ranks, identical on every rank.
void reduce(const Comm& comm, std::vector<double>& values) { comm.sum_in_place(values); }

// T: the storage of A (double, or float with single-precision storage); the
// basis, Rayleigh-Ritz and residuals are double either way.
template <class T>
class BlockKrylov {
 public:
  BlockKrylov(const BasicDistMatrix<T>& a, int k, const KrylovSettings& s)
      : a_(a),
        comm_(a.grid().comm()),
        line_(a.grid().comm(), a.grid().comm().size(), 1),
        n_(a.rows()),
        nb_(a.row_dist().block_size()),
        k_(k),
        settings_(s),
        b_(static_cast<int>(std::min<std::int64_t>(n_, std::max(k, krylov_block_width(k, s))))),
        q_(std::max<int>(2, std::min<std::int64_t>(krylov_depth(b_, s, n_), n_ / b_))),
        m_(static_cast<int>(std::min<std::int64_t>(std::int64_t{q_} * b_, n_))),
        v_(line_, n_, m_, nb_),
        av_(line_, n_, m_, nb_),
        x_(a.grid(), n_, s.product == KrylovProduct::pdgemm ? b_ : 0, nb_, nb_),
        y_(a.grid(), n_, s.product == KrylovProduct::pdgemm ? b_ : 0, nb_, nb_),
        product_(a) {}

  KrylovResult run() {
    KrylovResult result{{}, DistMatrix(a_.grid(), n_, k_, nb_, nb_), {}, 0, 0, 0, false, {}};
    fill_random(0, b_, 0);
    orthonormalize(0, b_);
    multiply(0, b_);
    for (int cycle = 1; cycle <= settings_.max_cycles; ++cycle) {
      result.cycles = cycle;
      project(0, b_);
      // Extend the basis: V_j = orth(A V_{j-1}), reusing the stored products.
      // --tol is tested after every block, not only on the full basis: a
      // loose tolerance stops within a cycle instead of at its end, and the
      // test costs O(n m b) beside the product's O(n^2 b / P).
      int filled = b_;
      bool converged = false;
      while (filled < m_ && !converged) {
        const int width = std::min(b_, m_ - filled);
        for (int j = 0; j < width; ++j)
          std::copy_n(av_.col(filled - b_ + j), av_.local_rows(), v_.col(filled + j));
        orthonormalize(filled, width);
        multiply(filled, width);
        project(filled, width);
        filled += width;
        if (filled < m_) converged = rayleigh_ritz(result, filled, false);
      }
      if (converged || rayleigh_ritz(result, m_, true)) {
        result.converged = true;
        break;
      }
    }
    // The first k Ritz vectors sit in columns 0..k-1 of the basis.
    copy(v_.matrix(), 0, 0, n_, k_, result.vectors, 0, 0);
    result.matvecs = matvecs_;
    return result;
  }

 private:
  // Columns [c, c + width) of V <- random (stream `salt`).
  void fill_random(int c, int width, std::uint64_t salt) {
    const auto& rows = v_.matrix().row_dist();
    for (int j = 0; j < width; ++j)
      for (int li = 0; li < v_.local_rows(); ++li)
        v_.col(c + j)[li] =
            counter_gaussian(settings_.seed + salt * 0x1000193ULL, rows.to_global(li), c + j);
  }

  // AV[:, c:c+width] = A V[:, c:c+width]: one local dgemm per rank
  // (BlockProduct), or pdgemm through copies to the 2-D grid.
  void multiply(int c, int width) {
    ++matvecs_;
    if constexpr (std::is_same_v<T, double>) {
      if (settings_.product == KrylovProduct::pdgemm) {
        copy(v_.matrix(), 0, c, n_, width, x_, 0, 0);
        scalapack::gemm('N', 'N', 1.0, a_, x_, 0.0, y_);
        copy(y_, 0, 0, n_, width, av_.matrix(), 0, c);
        return;
      }
    }
    product_.apply(v_.col(c), v_.ld(), width, av_.col(c), av_.ld());
  }

  // Makes V[:, c:c+width] orthonormal and orthogonal to V[:, 0:c]: two passes
  // of block Gram-Schmidt, each followed by a Cholesky QR step. A block that
  // has (numerically) no new direction is replaced by random vectors.
  void orthonormalize(int c, int width) {
    const int rows = v_.local_rows(), ld = v_.ld();
    for (int attempt = 0; attempt < 4; ++attempt) {
      bool ok = true;
      for (int pass = 0; pass < 2 && ok; ++pass) {
        if (c > 0) {
          std::vector<double> h(std::size_t(c) * width, 0.0);
          lapack::gemm('T', 'N', c, width, rows, 1.0, v_.col(0), ld, v_.col(c), ld, 0.0, h.data(), c);
          reduce(comm_, h);
          lapack::gemm('N', 'N', rows, width, c, -1.0, v_.col(0), ld, h.data(), c, 1.0, v_.col(c), ld);
        }
        std::vector<double> g(std::size_t(width) * width, 0.0);
        lapack::gemm('T', 'N', width, width, rows, 1.0, v_.col(c), ld, v_.col(c), ld, 0.0, g.data(),
                     width);
        reduce(comm_, g);
        double trace = 0;
        for (int j = 0; j < width; ++j) trace += g[std::size_t(j) * width + j];
        ok = trace > 0 && lapack::potrf_upper(g, width);
        if (ok) {
          // A direction that is pure round-off after projection is not new.
          for (int j = 0; j < width && ok; ++j)
            ok = g[std::size_t(j) * width + j] > 1e-13 * std::sqrt(trace / width) || pass == 1;
        }
        if (ok) lapack::solve_right_upper(g, width, v_.col(c), rows, ld);
      }
      if (ok) return;
      fill_random(c, width, ++restarts_);
    }
    agree(comm_, "krylov: cannot extend the basis (the matrix has too small a rank for " +
                     std::to_string(m_) + " basis vectors)");
  }

  // Columns [c, c + width) of T = V^T A V from the new block (and rows, by
  // symmetry): V[:, 0:c+width]^T AV[:, c:c+width], the new square averaged
  // with its transpose.
  void project(int c, int width) {
    const int rows = v_.local_rows(), ld = v_.ld(), top = c + width;
    std::vector<double> h(std::size_t(top) * width, 0.0);
    lapack::gemm('T', 'N', top, width, rows, 1.0, v_.col(0), ld, av_.col(c), ld, 0.0, h.data(),
                 top);
    reduce(comm_, h);
    const auto at = [&](int i, int j) -> double& { return t_[std::size_t(j) * m_ + i]; };
    for (int j = 0; j < width; ++j)
      for (int i = 0; i < top; ++i) at(i, c + j) = h[std::size_t(j) * top + i];
    for (int j = c; j < top; ++j)
      for (int i = c; i < j; ++i) at(i, j) = at(j, i) = 0.5 * (at(i, j) + at(j, i));
    for (int j = c; j < top; ++j)
      for (int i = 0; i < c; ++i) at(j, i) = at(i, j);
  }

  // Rayleigh-Ritz on the first m columns of the basis. Returns true when the
  // top k converged; then, or when `restart`, leaves the b best Ritz vectors
  // in V[:, 0:b] and their products in AV[:, 0:b] (otherwise the basis stays,
  // to be extended).
  bool rayleigh_ritz(KrylovResult& result, int m, bool restart) {
    const int rows = v_.local_rows(), ld = v_.ld();
    std::vector<double> t(std::size_t(m) * m);
    for (int j = 0; j < m; ++j) std::copy_n(&t_[std::size_t(j) * m_], m, &t[std::size_t(j) * m]);
    std::vector<double> theta = lapack::syevd(t, m);  // ascending; t holds S
    // Identical Ritz data on every rank, whatever each rank's LAPACK did.
    comm_.broadcast(theta.data(), theta.size());
    comm_.broadcast(t.data(), t.size());
    // Best b, descending: columns m-1, m-2, ... of S.
    std::vector<double> s_best(std::size_t(m) * b_), theta_best(b_);
    for (int j = 0; j < b_; ++j) {
      theta_best[j] = theta[m - 1 - j];
      std::copy_n(&t[std::size_t(m - 1 - j) * m], m, &s_best[std::size_t(j) * m]);
    }
    std::vector<double> y(std::size_t(std::max(rows, 1)) * b_), ay(y.size());
    lapack::gemm('N', 'N', rows, b_, m, 1.0, v_.col(0), ld, s_best.data(), m, 0.0, y.data(),
                 std::max(rows, 1));
    lapack::gemm('N', 'N', rows, b_, m, 1.0, av_.col(0), ld, s_best.data(), m, 0.0, ay.data(),
                 std::max(rows, 1));
    std::vector<double> norms(b_, 0.0);
    for (int j = 0; j < b_; ++j)
      for (int i = 0; i < rows; ++i) {
        const double r = ay[std::size_t(j) * std::max(rows, 1) + i] -
                         theta_best[j] * y[std::size_t(j) * std::max(rows, 1) + i];
        norms[j] += r * r;
      }
    reduce(comm_, norms);
    result.norm_estimate = std::max(std::abs(theta[m - 1]), std::abs(theta[0]));
    result.values.assign(theta_best.begin(), theta_best.begin() + k_);
    result.residuals.resize(k_);
    result.residual_norms.resize(k_);
    int converged = 0;
    double worst = 0;
    for (int j = 0; j < k_; ++j) {
      result.residual_norms[j] = std::sqrt(norms[j]);
      result.residuals[j] = result.residual_norms[j] / std::max(result.norm_estimate, 1e-300);
      converged += result.residuals[j] <= settings_.tol ? 1 : 0;
      worst = std::max(worst, result.residuals[j]);
    }
    if (!restart && converged < k_) return false;
    if (settings_.progress) settings_.progress(result.cycles, converged, k_, worst);
    for (int j = 0; j < b_; ++j) {
      std::copy_n(&y[std::size_t(j) * std::max(rows, 1)], rows, v_.col(j));
      std::copy_n(&ay[std::size_t(j) * std::max(rows, 1)], rows, av_.col(j));
    }
    return converged == k_;
  }

  const BasicDistMatrix<T>& a_;
  const Comm& comm_;
  BlacsGrid line_;
  std::int64_t n_;
  int nb_, k_;
  KrylovSettings settings_;
  int b_, q_, m_;
  Basis v_, av_;
  std::vector<double> t_ = std::vector<double>(std::size_t(m_) * m_);  ///< V^T A V, m x m
  DistMatrix x_, y_;  // pdgemm's operands on the 2-D grid (0 columns otherwise)
  BlockProduct product_;
  int matvecs_ = 0;
  std::uint64_t restarts_ = 0;
};

}  // namespace

KrylovResult krylov_top_eigenpairs(const DistMatrix& a, int k, const KrylovSettings& settings) {
  if (k < 1 || k > a.rows()) throw Error("krylov: need 1 <= k <= n");
  if (settings.product == KrylovProduct::pdgemm && a.storage() != Storage::full)
    throw Error("krylov: the pdgemm product needs full storage");
  BlockKrylov<double> solver(a, k, settings);
  return solver.run();
}

KrylovResult krylov_top_eigenpairs(const SingleMatrix& a, int k, const KrylovSettings& settings) {
  if (k < 1 || k > a.rows()) throw Error("krylov: need 1 <= k <= n");
  if (settings.product == KrylovProduct::pdgemm)
    throw Error("krylov: the pdgemm product needs double-precision storage");
  BlockKrylov<float> solver(a, k, settings);
  return solver.run();
}

}  // namespace kembed::spectral
