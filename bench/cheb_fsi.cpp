#include "cheb_fsi.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kembed/core/error.hpp"
#include "kembed/core/splitmix64.hpp"
#include "kembed/linalg/blacs_grid.hpp"
#include "kembed/linalg/block_product.hpp"
#include "kembed/linalg/lapack.hpp"

namespace kembed::bench {

namespace {

class ChebyshevFsi {
 public:
  ChebyshevFsi(const DistMatrix& a, int k, const ChebSettings& s)
      : a_(a),
        comm_(a.grid().comm()),
        n_(a.rows()),
        k_(k),
        s_(static_cast<int>(std::min<std::int64_t>(a.rows(), k + std::max(0, s.guard)))),
        settings_(s),
        product_(a),
        rows_(product_.line_rows()),
        ld_(std::max(1, rows_)),
        x_(buffer()),
        w_(buffer()),
        prev_(buffer()),
        cur_(buffer()),
        next_(buffer()),
        theta_(s_, 0.0),
        res_(s_, 1.0) {}

  ChebResult run() {
    for (int j = 0; j < s_; ++j) fill_random(j, 0);
    orthonormalize(0);
    rayleigh_ritz();
    lock();
    int iteration = 0;
    while (locked_ < k_ && iteration < settings_.max_iterations) {
      filter(iteration == 0);
      orthonormalize(locked_);
      rayleigh_ritz();
      lock();
      ++iteration;
    }
    // Locked pairs keep the Ritz value they were locked with; order all k.
    std::vector<int> order(k_);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int p, int q) { return theta_[p] > theta_[q]; });
    BlacsGrid line(comm_, comm_.size(), 1);
    const int nb = a_.row_dist().block_size();
    DistMatrix v(line, n_, k_, nb, k_);
    ChebResult result{{}, DistMatrix(a_.grid(), n_, k_, nb, nb), passes_, matvecs_, iteration,
                      locked_ >= k_};
    for (int j = 0; j < k_; ++j) {
      result.values.push_back(theta_[order[j]]);
      std::copy_n(col(x_, order[j]), rows_, v.data() + std::size_t(j) * v.ld());
    }
    copy(v, 0, 0, n_, k_, result.vectors, 0, 0);
    return result;
  }

 private:
  std::vector<double> buffer() const { return std::vector<double>(std::size_t(ld_) * s_, 0.0); }
  double* col(std::vector<double>& b, int j) { return b.data() + std::size_t(j) * ld_; }

  void fill_random(int j, std::uint64_t salt) {
    for (int li = 0; li < rows_; ++li)
      col(x_, j)[li] = counter_gaussian(settings_.seed + salt * 0x1000193ULL,
                                product_.line_dist().to_global(li), j);
  }

  // out[:, c:c+width] = A in[:, c:c+width]: one pass over A.
  void multiply(std::vector<double>& in, int c, int width, std::vector<double>& out) {
    product_.apply(col(in, c), ld_, width, col(out, c), ld_);
    ++passes_;
    matvecs_ += width;
  }

  double norm(int j) {
    double s = 0;
    const double* x = col(x_, j);
    for (int i = 0; i < rows_; ++i) s += x[i] * x[i];
    return std::sqrt(comm_.sum(s));
  }

  // Columns from `first` on: orthonormal, and orthogonal to all before them.
  // Classical Gram-Schmidt twice per column: the filtered block can be far
  // too ill-conditioned for Cholesky QR. A column left with no new direction
  // is replaced by a random one.
  void orthonormalize(int first) {
    std::vector<double> h;
    for (int j = first; j < s_; ++j) {
      for (int attempt = 0;; ++attempt) {
        const double before = norm(j);
        for (int pass = 0; pass < 2 && j > 0; ++pass) {
          h.assign(j, 0.0);
          lapack::gemm('T', 'N', j, 1, rows_, 1.0, x_.data(), ld_, col(x_, j), ld_, 0.0, h.data(), j);
          comm_.sum_in_place(h);
          lapack::gemm('N', 'N', rows_, 1, j, -1.0, x_.data(), ld_, h.data(), j, 1.0, col(x_, j), ld_);
        }
        const double after = norm(j);
        if (after > 1e-10 * before && after > 0) {
          for (int i = 0; i < rows_; ++i) col(x_, j)[i] /= after;
          break;
        }
        if (attempt == 3) agree(comm_, "chebyshev: cannot extend the block");
        fill_random(j, ++restarts_);
      }
    }
  }

  // Rayleigh-Ritz on the unlocked columns: one pass. Leaves the Ritz vectors,
  // descending, in x_ and their products in w_, with values and residuals.
  void rayleigh_ritz() {
    const int c = locked_, w = s_ - locked_;
    multiply(x_, c, w, w_);
    std::vector<double> t(std::size_t(w) * w, 0.0);
    lapack::gemm('T', 'N', w, w, rows_, 1.0, col(x_, c), ld_, col(w_, c), ld_, 0.0, t.data(), w);
    comm_.sum_in_place(t);
    for (int i = 0; i < w; ++i)
      for (int j = 0; j < i; ++j) {
        const double m = 0.5 * (t[std::size_t(j) * w + i] + t[std::size_t(i) * w + j]);
        t[std::size_t(j) * w + i] = t[std::size_t(i) * w + j] = m;
      }
    std::vector<double> theta = lapack::syevd(t, w);  // ascending; t holds S
    comm_.broadcast(theta.data(), theta.size());
    comm_.broadcast(t.data(), t.size());
    std::vector<double> s(std::size_t(w) * w);
    for (int j = 0; j < w; ++j) std::copy_n(&t[std::size_t(w - 1 - j) * w], w, &s[std::size_t(j) * w]);
    std::vector<double> y(std::size_t(ld_) * w), ay(y.size());
    lapack::gemm('N', 'N', rows_, w, w, 1.0, col(x_, c), ld_, s.data(), w, 0.0, y.data(), ld_);
    lapack::gemm('N', 'N', rows_, w, w, 1.0, col(w_, c), ld_, s.data(), w, 0.0, ay.data(), ld_);
    std::vector<double> norms(w, 0.0);
    for (int j = 0; j < w; ++j) {
      const double th = theta[w - 1 - j];
      for (int i = 0; i < rows_; ++i) {
        const double r = ay[std::size_t(j) * ld_ + i] - th * y[std::size_t(j) * ld_ + i];
        norms[j] += r * r;
      }
    }
    comm_.sum_in_place(norms);
    std::copy(y.begin(), y.end(), col(x_, c));
    std::copy(ay.begin(), ay.end(), col(w_, c));
    for (int j = 0; j < w; ++j) theta_[c + j] = theta[w - 1 - j];
    norm_estimate_ = std::max(norm_estimate_, std::max(std::abs(theta[w - 1]), std::abs(theta[0])));
    for (int j = 0; j < w; ++j) res_[c + j] = std::sqrt(norms[j]) / std::max(norm_estimate_, 1e-300);
  }

  void lock() {
    while (locked_ < k_ && res_[locked_] <= settings_.tol) ++locked_;
  }

  // Degree of each unlocked column from the damped interval [lower, cutoff]:
  // its error shrinks by about rho^m, rho = t + sqrt(t^2 - 1) at the column's
  // Ritz value t in interval coordinates (ChASE's rule). Degrees are made
  // non-decreasing along the columns so the columns still being filtered are
  // a trailing range (one product per degree step); guard columns take the
  // largest wanted degree.
  std::vector<int> degrees(bool first, double center, double half) const {
    std::vector<int> m(s_, 0);
    int largest = 1;
    for (int j = locked_; j < s_; ++j) {
      int d = settings_.max_degree;
      if (first) {
        d = settings_.first_degree;
      } else if (j < k_) {
        const double t = (theta_[j] - center) / half;
        if (t > 1) {
          const double rho = t + std::sqrt(t * t - 1);
          d = static_cast<int>(std::ceil(std::log(res_[j] / settings_.tol) / std::log(rho)));
        }
      } else {
        d = largest;
      }
      d = std::clamp(d, 1, settings_.max_degree);
      if (j > locked_) d = std::max(d, m[j - 1]);
      m[j] = d;
      if (j < k_) largest = std::max(largest, d);
    }
    return m;
  }

  // x_[:, unlocked] <- p(A) x_[:, unlocked], p the scaled Chebyshev
  // polynomial of each column's degree (Zhou and Saad's three-term recurrence,
  // p(theta_1) = 1, so nothing overflows).
  void filter(bool first) {
    const double top = theta_[0];
    const double lower = std::min(settings_.lower_bound, theta_[s_ - 1]);
    double cutoff = theta_[s_ - 1];
    if (!(cutoff > lower)) cutoff = lower + 1e-3 * std::max(top - lower, 1e-300);
    const double half = (cutoff - lower) / 2, center = (cutoff + lower) / 2;
    const std::vector<int> m = degrees(first, center, half);
    const int lo = locked_, hi = s_, width = hi - lo;
    const int degree = m[hi - 1];
    double sigma = half / (top - center);
    const double tau = 2 / sigma;
    multiply(x_, lo, width, next_);
    for (int j = lo; j < hi; ++j)
      for (int i = 0; i < rows_; ++i) {
        col(prev_, j)[i] = col(x_, j)[i];
        col(cur_, j)[i] = (col(next_, j)[i] - center * col(x_, j)[i]) * (sigma / half);
      }
    auto finish = [&](int step) {
      for (int j = lo; j < hi; ++j)
        if (m[j] == step) std::copy_n(col(cur_, j), rows_, col(x_, j));
    };
    finish(1);
    for (int step = 2; step <= degree; ++step) {
      int from = lo;
      while (m[from] < step) ++from;
      const double sigma_new = 1 / (tau - sigma);
      multiply(cur_, from, hi - from, next_);
      for (int j = from; j < hi; ++j)
        for (int i = 0; i < rows_; ++i)
          col(next_, j)[i] = (col(next_, j)[i] - center * col(cur_, j)[i]) * (2 * sigma_new / half) -
                             sigma * sigma_new * col(prev_, j)[i];
      std::swap(prev_, cur_);
      std::swap(cur_, next_);
      sigma = sigma_new;
      finish(step);
    }
  }

  const DistMatrix& a_;
  const Comm& comm_;
  std::int64_t n_;
  int k_, s_;
  ChebSettings settings_;
  BlockProduct product_;
  int rows_, ld_;
  std::vector<double> x_, w_, prev_, cur_, next_;
  std::vector<double> theta_, res_;
  double norm_estimate_ = 0;
  int locked_ = 0, passes_ = 0;
  long long matvecs_ = 0;
  std::uint64_t restarts_ = 0;
};

}  // namespace

ChebResult chebyshev_top_eigenpairs(const DistMatrix& a, int k, const ChebSettings& settings) {
  if (k < 1 || k > a.rows()) throw Error("chebyshev: need 1 <= k <= n");
  ChebyshevFsi solver(a, k, settings);
  return solver.run();
}

}  // namespace kembed::bench
