#include "lobpcg.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/core/error.hpp"
#include "kembed/core/splitmix64.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/linalg/lapack.hpp"

namespace kembed::bench {

namespace {

// Basis B = [X | P | W] (s + s + s columns) and A B, row-distributed.
class Lobpcg {
 public:
  Lobpcg(const DistMatrix& a, int k, const LobpcgSettings& s)
      : a_(a),
        comm_(a.grid().comm()),
        n_(a.rows()),
        k_(k),
        s_(static_cast<int>(std::min<std::int64_t>(a.rows() / 3, k + std::max(0, s.guard)))),
        settings_(s),
        product_(a),
        rows_(product_.line_rows()),
        ld_(std::max(1, rows_)),
        b_(std::size_t(ld_) * 3 * s_, 0.0),
        ab_(b_.size(), 0.0),
        theta_(s_, 0.0),
        res_(s_, 1.0) {
    if (s_ < k_) throw Error("lobpcg: n too small for the block");
  }

  LobpcgResult run() {
    for (int j = 0; j < s_; ++j)
      for (int li = 0; li < rows_; ++li)
        col(b_, j)[li] = counter_gaussian(settings_.seed, product_.line_dist().to_global(li), j);
    int filled = s_;
    orthonormalize(0, filled, false);
    if (filled < s_) agree(comm_, "lobpcg: random start block is rank deficient");
    multiply(0, s_);
    rayleigh_ritz(s_);
    int p = 0, iteration = 0;
    while (!converged() && iteration < settings_.max_iterations) {
      ++iteration;
      // P against X (A P follows), then the residuals of the unconverged pairs.
      int end = s_ + p;
      orthonormalize(s_, end, true);
      const int w_from = end;
      for (int j = 0; j < s_; ++j) {
        if (res_[j] <= settings_.tol) continue;
        double* w = col(b_, end++);
        for (int i = 0; i < rows_; ++i) w[i] = col(ab_, j)[i] - theta_[j] * col(b_, j)[i];
      }
      orthonormalize(w_from, end, false);
      multiply(w_from, end - w_from);
      p = rayleigh_ritz(end);
    }
    LobpcgResult result{{}, DistMatrix(a_.grid(), n_, k_, a_.row_dist().block_size(),
                                       a_.row_dist().block_size()),
                        passes_, matvecs_, iteration, converged()};
    BlacsGrid line(comm_, comm_.size(), 1);
    const int nb = a_.row_dist().block_size();
    DistMatrix v(line, n_, k_, nb, k_);
    for (int j = 0; j < k_; ++j) {
      result.values.push_back(theta_[j]);
      std::copy_n(col(b_, j), rows_, v.data() + std::size_t(j) * v.ld());
    }
    copy(v, 0, 0, n_, k_, result.vectors, 0, 0);
    return result;
  }

 private:
  double* col(std::vector<double>& b, int j) { return b.data() + std::size_t(j) * ld_; }

  bool converged() const {
    for (int j = 0; j < k_; ++j)
      if (!(res_[j] <= settings_.tol)) return false;
    return true;
  }

  void multiply(int c, int width) {
    if (width <= 0) return;
    product_.apply(col(b_, c), ld_, width, col(ab_, c), ld_);
    ++passes_;
    matvecs_ += width;
  }

  double norm(int j) {
    double s = 0;
    const double* x = col(b_, j);
    for (int i = 0; i < rows_; ++i) s += x[i] * x[i];
    return std::sqrt(comm_.sum(s));
  }

  // Columns [from, end) of B: orthonormal and orthogonal to all before them
  // (Gram-Schmidt twice); a column with no new direction is dropped and the
  // later ones move left (end shrinks). With `track`, A B follows.
  void orthonormalize(int from, int& end, bool track) {
    std::vector<double> h;
    int j = from;
    while (j < end) {
      const double before = norm(j);
      for (int pass = 0; pass < 2 && j > 0; ++pass) {
        h.assign(j, 0.0);
        lapack::gemm('T', 'N', j, 1, rows_, 1.0, b_.data(), ld_, col(b_, j), ld_, 0.0, h.data(), j);
        comm_.sum_in_place(h);
        lapack::gemm('N', 'N', rows_, 1, j, -1.0, b_.data(), ld_, h.data(), j, 1.0, col(b_, j), ld_);
        if (track)
          lapack::gemm('N', 'N', rows_, 1, j, -1.0, ab_.data(), ld_, h.data(), j, 1.0, col(ab_, j), ld_);
      }
      const double after = norm(j);
      if (after > 1e-8 * before && after > 0) {
        for (int i = 0; i < rows_; ++i) col(b_, j)[i] /= after;
        if (track)
          for (int i = 0; i < rows_; ++i) col(ab_, j)[i] /= after;
        ++j;
        continue;
      }
      for (int c = j + 1; c < end; ++c) {
        std::copy_n(col(b_, c), rows_, col(b_, c - 1));
        if (track) std::copy_n(col(ab_, c), rows_, col(ab_, c - 1));
      }
      --end;
    }
  }

  // The s best Ritz pairs of the first t columns of B: X <- B C, A X <- A B C,
  // P <- B[:, s:t] C[s:t, :] (and A P). Returns the width of P.
  int rayleigh_ritz(int t) {
    std::vector<double> h(std::size_t(t) * t, 0.0);
    lapack::gemm('T', 'N', t, t, rows_, 1.0, b_.data(), ld_, ab_.data(), ld_, 0.0, h.data(), t);
    comm_.sum_in_place(h);
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < i; ++j) {
        const double m = 0.5 * (h[std::size_t(j) * t + i] + h[std::size_t(i) * t + j]);
        h[std::size_t(j) * t + i] = h[std::size_t(i) * t + j] = m;
      }
    std::vector<double> theta = lapack::syevd(h, t);  // ascending; h holds the vectors
    comm_.broadcast(theta.data(), theta.size());
    comm_.broadcast(h.data(), h.size());
    std::vector<double> c(std::size_t(t) * s_);
    for (int j = 0; j < s_; ++j) {
      std::copy_n(&h[std::size_t(t - 1 - j) * t], t, &c[std::size_t(j) * t]);
      theta_[j] = theta[t - 1 - j];
    }
    norm_estimate_ = std::max(norm_estimate_, std::max(std::abs(theta[t - 1]), std::abs(theta[0])));
    const std::size_t size = std::size_t(ld_) * s_;
    std::vector<double> x(size), ax(size), p(size), ap(size);
    lapack::gemm('N', 'N', rows_, s_, t, 1.0, b_.data(), ld_, c.data(), t, 0.0, x.data(), ld_);
    lapack::gemm('N', 'N', rows_, s_, t, 1.0, ab_.data(), ld_, c.data(), t, 0.0, ax.data(), ld_);
    const int rest = t - s_;
    if (rest > 0) {
      lapack::gemm('N', 'N', rows_, s_, rest, 1.0, col(b_, s_), ld_, c.data() + s_, t, 0.0, p.data(), ld_);
      lapack::gemm('N', 'N', rows_, s_, rest, 1.0, col(ab_, s_), ld_, c.data() + s_, t, 0.0, ap.data(), ld_);
    }
    std::copy(x.begin(), x.end(), b_.begin());
    std::copy(ax.begin(), ax.end(), ab_.begin());
    std::copy(p.begin(), p.end(), col(b_, s_));
    std::copy(ap.begin(), ap.end(), col(ab_, s_));
    std::vector<double> norms(s_, 0.0);
    for (int j = 0; j < s_; ++j)
      for (int i = 0; i < rows_; ++i) {
        const double r = col(ab_, j)[i] - theta_[j] * col(b_, j)[i];
        norms[j] += r * r;
      }
    comm_.sum_in_place(norms);
    for (int j = 0; j < s_; ++j) res_[j] = std::sqrt(norms[j]) / std::max(norm_estimate_, 1e-300);
    return rest > 0 ? s_ : 0;
  }

  const DistMatrix& a_;
  const Comm& comm_;
  std::int64_t n_;
  int k_, s_;
  LobpcgSettings settings_;
  BlockProduct product_;
  int rows_, ld_;
  std::vector<double> b_, ab_;
  std::vector<double> theta_, res_;
  double norm_estimate_ = 0;
  int passes_ = 0;
  long long matvecs_ = 0;
};

}  // namespace

LobpcgResult lobpcg_top_eigenpairs(const DistMatrix& a, int k, const LobpcgSettings& settings) {
  if (k < 1 || k > a.rows()) throw Error("lobpcg: need 1 <= k <= n");
  Lobpcg solver(a, k, settings);
  return solver.run();
}

}  // namespace kembed::bench
