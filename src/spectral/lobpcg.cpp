#include "kembed/spectral/lobpcg.hpp"

#include <algorithm>
#include <cmath>

#include "kembed/core/splitmix64.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/mpi/comm.hpp"

namespace kembed::spectral {

namespace {

// The buffers of the blocks freed during one LOBPCG run, which the next
// blocks take instead of fresh memory: a block of n rows is allocated many
// times per iteration, and fresh memory's first touch is slow on VMs (page
// faults were 18% of a run at n = 10^6, one rank). Set by SpareBuffers.
std::vector<std::vector<double>>* spare = nullptr;

struct SpareBuffers {
  std::vector<std::vector<double>> pool;
  SpareBuffers() { spare = &pool; }
  ~SpareBuffers() { spare = nullptr; }
  SpareBuffers(const SpareBuffers&) = delete;
  SpareBuffers& operator=(const SpareBuffers&) = delete;
};

// A block of this rank's rows, column-major with leading dimension ld;
// zero-filled unless `zero` is false (a block its maker overwrites whole).
struct Block {
  int ld = 1, cols = 0;
  std::vector<double> v;
  Block() = default;
  Block(int ld_, int cols_, bool zero = true) : ld(ld_), cols(cols_) {
    const std::size_t n = std::size_t(ld_) * cols_;
    if (spare) {  // the smallest spare buffer that holds n
      std::size_t best = spare->size();
      for (std::size_t i = 0; i < spare->size(); ++i)
        if ((*spare)[i].capacity() >= n &&
            (best == spare->size() || (*spare)[i].capacity() < (*spare)[best].capacity()))
          best = i;
      if (best < spare->size()) {
        v = std::move((*spare)[best]);
        spare->erase(spare->begin() + std::ptrdiff_t(best));
      }
    }
    if (zero)
      v.assign(n, 0.0);
    else
      v.resize(n);
  }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  Block(Block&& o) noexcept : ld(o.ld), cols(o.cols), v(std::move(o.v)) {}
  // Swaps, so that the buffer replaced goes back to the spares with `o`.
  Block& operator=(Block&& o) noexcept {
    std::swap(ld, o.ld);
    std::swap(cols, o.cols);
    v.swap(o.v);
    return *this;
  }
  ~Block() {
    if (spare && v.capacity() > 0) spare->push_back(std::move(v));
  }
  double* col(int c) { return v.data() + std::size_t(c) * ld; }
  const double* col(int c) const { return v.data() + std::size_t(c) * ld; }
};

class Lobpcg {
 public:
  Lobpcg(SymmetricOperator& a, Preconditioner& t, const std::vector<double>& u,
         const LobpcgSettings& s)
      : a_(a), t_(t), u_(u), s_(s), comm_(a.grid().comm()),
        rows_(a.rows().local_size()), ld_(std::max(1, rows_)),
        deflating_(comm_.max(u.empty() ? 0.0 : 1.0) > 0) {}

  LobpcgResult run(int k) {
    SpareBuffers buffers;  // before every block of the run, so it outlives them
    LobpcgResult out;
    const std::int64_t room = a_.order() - (deflating_ ? 1 : 0);  // agreed, as m must be
    const int m = static_cast<int>(std::min<std::int64_t>(k + s_.guard, room));
    if (deflating_) {  // A u, for the images of deflated blocks
      Block u(ld_, 1);
      std::copy_n(u_.data(), rows_, u.v.data());
      au_ = multiply(u).v;
    }
    Block x(ld_, m);
    for (int c = 0; c < m; ++c)
      for (int i = 0; i < rows_; ++i)
        x.col(c)[i] = counter_gaussian(s_.seed, std::uint64_t(a_.rows().to_global(i)), c);
    deflate(x);
    orthonormalize(x);
    orthonormalize(x);
    Block ax = multiply(x);
    std::vector<double> theta;
    rayleigh_ritz_x(x, ax, theta);
    Block p;
    double best = INFINITY;
    int best_it = 0;
    for (int it = 1; it <= s_.max_iterations; ++it) {
      out.iterations = it;
      Block r = residual(x, ax, theta);
      std::vector<double> res = column_norms(r);
      double scale = 0;
      for (double t : theta) scale = std::max(scale, std::abs(t));
      scale = std::max(scale, 1e-300);
      int converged = 0;
      double worst = 0;
      for (int j = 0; j < k; ++j) {
        res[j] /= scale;
        converged += res[j] <= s_.tol;
        worst = std::max(worst, res[j]);
      }
      // The precision floor: no halving of the largest residual in
      // kFloorIterations iterations (round-off in the products of many rows
      // stops LOBPCG above a --tol below it).
      if (worst < best / 2) best = worst, best_it = it;
      const bool stalled = it - best_it >= kFloorIterations && best <= kFloorAccepted;
      if (converged == k || it % 16 == 0 || stalled) {
        // The updated A X drifts from the product: refresh it, and confirm
        // a convergence with it.
        ax = multiply(x);
        rayleigh_ritz_x(x, ax, theta);
        r = residual(x, ax, theta);
        res = column_norms(r);
        converged = 0;
        worst = 0;
        for (int j = 0; j < k; ++j) {
          res[j] /= scale;
          converged += res[j] <= s_.tol;
          worst = std::max(worst, res[j]);
        }
        if (converged == k || (stalled && worst <= kFloorAccepted)) {
          out.converged = true;
          out.at_precision_floor = converged < k;
          finish(out, x, theta, res, k);
          return out;
        }
      }
      if (s_.progress) s_.progress(it, converged, k, worst);
      // W = T R, orthogonal to u and X.
      Block w(ld_, m, false);
      t_.apply(r.v.data(), r.ld, m, w.v.data(), w.ld);
      ++out.preconditioned;
      deflate(w);
      project_out(x, w);
      project_out(x, w);
      deflate(w);
      if (p.cols > 0) {
        project_out(x, p);
        project_out(x, p);
        deflate(p);
      }
      // Z = [W, P] made orthonormal, then its image by a product: an image
      // carried along (A P from earlier products) loses its accuracy where
      // P's columns cancel near convergence, and the Rayleigh-Ritz step then
      // trusts a wrong Rayleigh quotient.
      Block z(ld_, w.cols + p.cols, false), none;
      std::copy(w.v.begin(), w.v.end(), z.v.begin());
      if (p.cols > 0) std::copy(p.v.begin(), p.v.end(), z.v.begin() + w.v.size());
      bool spans = svqb(z, none);
      if (spans) {  // again after the last deflation, which leaves Z nearly orthonormal
        deflate(z);
        spans = svqb(z, none);
      }
      if (!spans) {
        // Nothing new to add: the block cannot improve.
        ax = multiply(x);
        Block rr = residual(x, ax, theta);
        res = column_norms(rr);
        for (double& v : res) v /= scale;
        finish(out, x, theta, res, k);
        out.converged = false;
        return out;
      }
      Block az = multiply(z);
      // Rayleigh-Ritz on S = [X, Z].
      const int q = z.cols, sc = m + q;
      std::vector<double> h(std::size_t(sc) * sc, 0.0);
      {
        std::vector<double> local(std::size_t(sc) * sc, 0.0);
        // [X Z]^T [AX AZ] blockwise.
        const auto gram_into = [&](const Block& l, const Block& rgt, int r0, int c0) {
          std::vector<double> g(std::size_t(l.cols) * rgt.cols, 0.0);
          if (rows_ > 0)
            lapack::gemm('T', 'N', l.cols, rgt.cols, rows_, 1.0, l.v.data(), l.ld, rgt.v.data(),
                         rgt.ld, 0.0, g.data(), l.cols);
          for (int j = 0; j < rgt.cols; ++j)
            for (int i = 0; i < l.cols; ++i)
              local[(r0 + i) + std::size_t(c0 + j) * sc] = g[i + std::size_t(j) * l.cols];
        };
        gram_into(x, ax, 0, 0);
        gram_into(x, az, 0, m);
        gram_into(z, az, m, m);
        comm_.sum_in_place(local);
        for (int j = 0; j < sc; ++j)
          for (int i = 0; i <= j; ++i) {
            const double v = i < m && j >= m ? local[i + std::size_t(j) * sc]
                             : 0.5 * (local[i + std::size_t(j) * sc] + local[j + std::size_t(i) * sc]);
            h[i + std::size_t(j) * sc] = h[j + std::size_t(i) * sc] = v;
          }
      }
      std::vector<double> ev = lapack::syevd(h, sc);  // ascending
      std::vector<double> c(std::size_t(sc) * m);
      theta.assign(std::size_t(m), 0.0);
      for (int j = 0; j < m; ++j) {
        theta[j] = ev[sc - 1 - j];
        std::copy_n(&h[std::size_t(sc - 1 - j) * sc], sc, &c[std::size_t(j) * sc]);
      }
      // X <- S C, P <- Z C_Z, and their images.
      Block nx = combine(x, z, c, sc, m), nax = combine(ax, az, c, sc, m);
      p = combine_tail(z, c, sc, m, m);
      x = std::move(nx);
      ax = std::move(nax);
      deflate(x, &ax);
    }
    ax = multiply(x);
    Block r = residual(x, ax, theta);
    std::vector<double> res = column_norms(r);
    double scale = 0;
    for (double t : theta) scale = std::max(scale, std::abs(t));
    for (double& v : res) v /= std::max(scale, 1e-300);
    finish(out, x, theta, res, k);
    return out;
  }

  long long products = 0;

 private:
  Block multiply(const Block& x) {
    Block y(ld_, x.cols, false);
    a_.apply(x.v.data(), x.ld, x.cols, y.v.data(), y.ld);
    ++products;
    return y;
  }

  // z <- z - u (u^T z) for every column, and with its image az (A z),
  // az <- az - (A u)(u^T z). Done to every block the Rayleigh-Ritz step
  // sees, after the other projections: near convergence a block's own norm
  // is tiny, and the round-off u-component left by earlier steps would be
  // large beside it (A's top eigenvector, which the step would then find).
  void deflate(Block& z, Block* az = nullptr) {
    if (!deflating_) return;
    std::vector<double> d(std::size_t(z.cols), 0.0);
    if (!u_.empty())
      for (int c = 0; c < z.cols; ++c)
        for (int i = 0; i < rows_; ++i) d[c] += u_[i] * z.col(c)[i];
    comm_.sum_in_place(d);
    if (u_.empty()) return;
    for (int c = 0; c < z.cols; ++c)
      for (int i = 0; i < rows_; ++i) {
        z.col(c)[i] -= d[c] * u_[i];
        if (az) az->col(c)[i] -= d[c] * au_[i];
      }
  }

  std::vector<double> gram(const Block& l, const Block& r) {
    std::vector<double> g(std::size_t(l.cols) * r.cols, 0.0);
    if (rows_ > 0 && l.cols > 0 && r.cols > 0)
      lapack::gemm('T', 'N', l.cols, r.cols, rows_, 1.0, l.v.data(), l.ld, r.v.data(), r.ld, 0.0,
                   g.data(), l.cols);
    comm_.sum_in_place(g);
    return g;
  }

  // y <- y - x (x^T y).
  void project_out(const Block& x, Block& y) {
    const std::vector<double> g = gram(x, y);
    if (rows_ == 0) return;
    lapack::gemm('N', 'N', rows_, y.cols, x.cols, -1.0, x.v.data(), x.ld, g.data(), x.cols, 1.0,
                 y.v.data(), y.ld);
  }

  // Cholesky QR: x <- x R^-1 (the scaled-Gram basis where columns depend).
  void orthonormalize(Block& x) {
    std::vector<double> g = gram(x, x);
    if (!lapack::potrf_upper(g, x.cols)) {
      Block none;
      svqb(x, none);
      return;
    }
    if (rows_ == 0) return;
    lapack::solve_right_upper(g, x.cols, x.v.data(), rows_, x.ld);
  }

  // An orthonormal basis of span(z) (same number of columns or fewer): the
  // Gram matrix scaled to unit diagonal, its eigenvectors, directions whose
  // eigenvalue is below 1e-13 of the largest dropped; az follows z. Returns
  // false when nothing is left.
  bool svqb(Block& z, Block& az) {
    const int q = z.cols;
    if (q == 0) return false;
    std::vector<double> g = gram(z, z);
    std::vector<double> dscale(static_cast<std::size_t>(q));
    for (int i = 0; i < q; ++i) {
      const double d = g[i + std::size_t(i) * q];
      dscale[i] = d > 0 ? 1 / std::sqrt(d) : 0;
    }
    for (int j = 0; j < q; ++j)
      for (int i = 0; i < q; ++i) g[i + std::size_t(j) * q] *= dscale[i] * dscale[j];
    std::vector<double> ev = lapack::syevd(g, q);
    const double top = std::max(ev.back(), 0.0);
    std::vector<double> t;
    int kept = 0;
    for (int j = 0; j < q; ++j) {
      if (!(ev[j] > 1e-13 * top) || top == 0) continue;
      const double s = 1 / std::sqrt(ev[j]);
      for (int i = 0; i < q; ++i) t.push_back(g[i + std::size_t(j) * q] * dscale[i] * s);
      ++kept;
    }
    if (kept == 0) return false;
    Block nz(ld_, kept, false), naz = az.cols == q ? Block(ld_, kept, false) : Block();
    if (rows_ > 0) {
      lapack::gemm('N', 'N', rows_, kept, q, 1.0, z.v.data(), z.ld, t.data(), q, 0.0, nz.v.data(),
                   nz.ld);
      if (az.cols == q)
        lapack::gemm('N', 'N', rows_, kept, q, 1.0, az.v.data(), az.ld, t.data(), q, 0.0,
                     naz.v.data(), naz.ld);
    }
    z = std::move(nz);
    if (az.cols == q) az = std::move(naz);
    return true;
  }

  // Rayleigh-Ritz on X alone: X, AX rotated to the Ritz vectors, descending.
  void rayleigh_ritz_x(Block& x, Block& ax, std::vector<double>& theta) {
    const int m = x.cols;
    std::vector<double> h = gram(x, ax);
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < j; ++i) {
        const double v = 0.5 * (h[i + std::size_t(j) * m] + h[j + std::size_t(i) * m]);
        h[i + std::size_t(j) * m] = h[j + std::size_t(i) * m] = v;
      }
    std::vector<double> ev = lapack::syevd(h, m);
    std::vector<double> c(std::size_t(m) * m);
    theta.assign(std::size_t(m), 0.0);
    for (int j = 0; j < m; ++j) {
      theta[j] = ev[m - 1 - j];
      std::copy_n(&h[std::size_t(m - 1 - j) * m], m, &c[std::size_t(j) * m]);
    }
    Block empty(ld_, 0);
    x = combine(x, empty, c, m, m);
    ax = combine(ax, empty, c, m, m);
  }

  // [a b] C for the (a.cols + b.cols) x m C.
  Block combine(const Block& a, const Block& b, const std::vector<double>& c, int sc, int m) {
    Block y(ld_, m, false);
    if (rows_ == 0) return y;
    lapack::gemm('N', 'N', rows_, m, a.cols, 1.0, a.v.data(), a.ld, c.data(), sc, 0.0, y.v.data(),
                 y.ld);
    if (b.cols > 0)
      lapack::gemm('N', 'N', rows_, m, b.cols, 1.0, b.v.data(), b.ld, c.data() + a.cols, sc, 1.0,
                   y.v.data(), y.ld);
    return y;
  }

  // b C[offset:, :].
  Block combine_tail(const Block& b, const std::vector<double>& c, int sc, int offset, int m) {
    Block y(ld_, m, b.cols == 0);
    if (rows_ == 0 || b.cols == 0) return y;
    lapack::gemm('N', 'N', rows_, m, b.cols, 1.0, b.v.data(), b.ld, c.data() + offset, sc, 0.0,
                 y.v.data(), y.ld);
    return y;
  }

  Block residual(const Block& x, const Block& ax, const std::vector<double>& theta) {
    Block r(ld_, x.cols, false);
    for (int c = 0; c < x.cols; ++c)
      for (int i = 0; i < rows_; ++i) r.col(c)[i] = ax.col(c)[i] - theta[c] * x.col(c)[i];
    return r;
  }

  std::vector<double> column_norms(const Block& r) {
    std::vector<double> s(std::size_t(r.cols), 0.0);
    for (int c = 0; c < r.cols; ++c)
      for (int i = 0; i < rows_; ++i) s[c] += r.col(c)[i] * r.col(c)[i];
    comm_.sum_in_place(s);
    for (double& v : s) v = std::sqrt(v);
    return s;
  }

  void finish(LobpcgResult& out, const Block& x, const std::vector<double>& theta,
              const std::vector<double>& res, int k) {
    out.values.assign(theta.begin(), theta.begin() + k);
    out.residuals.assign(res.begin(), res.begin() + k);
    out.vectors.assign(x.v.begin(), x.v.begin() + std::size_t(x.ld) * k);
    out.products = products;
  }

  SymmetricOperator& a_;
  Preconditioner& t_;
  const std::vector<double>& u_;
  const LobpcgSettings& s_;
  const Comm& comm_;
  int rows_, ld_;
  bool deflating_;
  std::vector<double> au_;  // A u (this rank's rows)  // agreed: a rank without rows holds an empty u
};

}  // namespace

LobpcgResult lobpcg_top_eigenpairs(SymmetricOperator& a, int k, Preconditioner& t,
                                   const LobpcgSettings& settings,
                                   const std::vector<double>& deflate) {
  Lobpcg solver(a, t, deflate, settings);
  return solver.run(k);
}

}  // namespace kembed::spectral
