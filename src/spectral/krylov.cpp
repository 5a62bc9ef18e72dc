#include "kembed/spectral/krylov.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "kembed/core/error.hpp"
#include "kembed/core/splitmix64.hpp"
#include "kembed/linalg/lapack.hpp"
#include "kembed/spectral/stored_operator.hpp"

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

bool krylov_broke_down(const std::vector<double>& history) {
  const std::size_t c = history.size();
  if (c >= 2 && history[c - 1] > 1 && history[c - 2] > 1) return true;
  if (c < std::size_t(kKrylovGrowthCycles) + 1) return false;
  for (std::size_t i = c - kKrylovGrowthCycles; i < c; ++i)
    if (!(history[i] > history[i - 1])) return false;
  const double smallest = *std::min_element(history.begin(), history.end());
  return history[c - 1] > 4 * smallest;
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

KrylovShape krylov_shape(int k, const KrylovSettings& s, std::int64_t n) {
  const auto basis = [&](int b) {
    const int q = std::max<int>(2, std::min<std::int64_t>(krylov_depth(b, s, n), n / b));
    return static_cast<int>(std::min<std::int64_t>(std::int64_t{q} * b, n));
  };
  if (s.keep > 0) {
    const int b = static_cast<int>(std::min<std::int64_t>(n, std::max(1, krylov_block_width(k, s))));
    // Rounded up to a multiple of b: the blocks after the kept vectors then
    // fill the basis (a multiple of b) exactly. A last block cut short
    // breaks the Krylov relation, and every cycle would then end with a
    // product of all keep Ritz vectors to test them, and restart without
    // the relation (measured: half the solve time of a sparse PCA, k = 50).
    const int keep = (std::max({s.keep, k, b}) + b - 1) / b * b, m = basis(b);
    if (keep + b <= m) return {b, keep, m};
  }
  const int b = static_cast<int>(std::min<std::int64_t>(n, std::max(k, krylov_block_width(k, s))));
  return {b, b, basis(b)};
}

namespace {

// Bases up to this many columns are tested for convergence after every block.
constexpr int kAlwaysTestedBasis = 256;

// Sum of small matrices over ranks, identical on every rank.
void reduce(const Comm& comm, std::vector<double>& values) { comm.sum_in_place(values); }

// The solver sees A only through SymmetricOperator::apply on blocks of the
// basis; the basis, Rayleigh-Ritz and residuals are double whatever A is.
//
// The basis keeps no products A V. Each product W = A V_c of the newest block
// V_c = V[:, last:top) is projected onto the basis (T = V^T A V) and then
// orthonormalized against it into the next block, V_next C = W - V V^T W. So
// A V[:, 0:top) = V[:, 0:top) T + V_next C E^T (E^T picks the newest block),
// and a Ritz pair (theta, V s) has the residual A V s - theta V s =
// V_next C s_new, of norm ||C s_new||: a b x b product, with no n x m block
// A V to keep or to combine. The restart keeps the b best Ritz vectors Y and
// the next block: A Y = Y Theta + V_next C S_new is again such a relation.
//
// When the relation does not hold (the next block had fewer independent
// directions than columns and random ones fill the rest, or there is no room
// for it in n dimensions), Rayleigh-Ritz multiplies the Ritz vectors instead
// (one product) and the cycle restarts from A Y. When the operator's products
// are not exact (single-precision storage: X is rounded to float, so they are
// not exactly linear in the basis), a convergence the relation reports is
// confirmed by that product before it is accepted.
class BlockKrylov {
 public:
  BlockKrylov(SymmetricOperator& a, int k, const KrylovSettings& s)
      : a_(a),
        comm_(a.grid().comm()),
        line_(a.grid().comm(), a.grid().comm().size(), 1),
        n_(a.order()),
        nb_(a.block_size()),
        k_(k),
        settings_(s),
        shape_(krylov_shape(k, s, n_)),
        b_(shape_.b),
        keep_(shape_.keep),
        m_(shape_.m),
        v_(line_, n_, m_ + b_, nb_),
        y_(line_, n_, keep_, nb_),
        ay_(line_, n_, keep_, nb_),
        exact_(a.exact_products()),
        product_flops_(comm_.max(a.cost(b_).flops)) {
    agree(comm_, v_.local_rows() == a.rows().local_size() && a.rows().global_size() == n_ &&
                         a.rows().block_size() == nb_
                     ? ""
                     : "krylov: the operator's rows are not the 1-D block-cyclic distribution of "
                       "its order in blocks of its block size over the grid's ranks");
  }

  KrylovResult run() {
    KrylovResult result{{}, DistMatrix(a_.grid(), n_, k_, nb_, nb_), {}, 0, 0, 0, false, {},
                        false, false, {}};
    fill_random(0, b_, 0);
    orthonormalize(0, b_, nullptr);
    int last = 0, top = b_;  // the basis is V[:, 0:top), its newest block V[:, last:top)
    for (int cycle = 1; cycle <= settings_.max_cycles && !result.converged &&
                        !result.at_precision_floor && !result.broke_down;
         ++cycle) {
      result.cycles = cycle;
      // Extend the basis one block at a time. --tol is tested after every
      // block, not only on the full basis: a loose tolerance stops within a
      // cycle instead of at its end, and the test costs O(n m b) beside the
      // product's O(n^2 b / P).
      while (true) {
        const int width = top - last;
        int next = 0;
        if (width > 0) {  // 0 only after a restart with b = n (Y spans the whole space)
          multiply(v_, last, width, v_, top);
          project(last, width, v_.col(top));
          // The next block: W orthonormalized against the basis, at
          // V[:, top:). Inside a cycle it extends the basis (cut to the
          // basis's size m); at the end of one it is the restart's second block.
          next = top < m_ ? std::min(width, m_ - top) : width;
          if (next != width || top + next > n_) related_ = false;
          if (top < m_ || (related_ && top + next <= n_))
            related_ = orthonormalize(top, next, &coupling_) && related_;
        }
        const bool full = top == m_;
        // The test inside a cycle solves the top x top projection (about
        // 10 top^3 flops on every rank). While that is cheap (top <= 256,
        // milliseconds) it runs after every block; beyond, once the products
        // since the last test cost as much, so that a cheap operator (sparse
        // rows) with a deep basis is not dominated by its tests. Agreed on
        // every rank (product_flops_ is the ranks' largest).
        untested_flops_ += product_flops_;
        const double test_flops = 10.0 * double(top) * top * top;
        // A thick restart wider than its blocks (cheap operators) always tests by flops.
        const bool test = full || untested_flops_ >= test_flops ||
                          (top <= kAlwaysTestedBasis && keep_ == b_);
        if (test) untested_flops_ = 0;
        if (test && rayleigh_ritz(result, top, last, full)) {
          result.converged = true;
          break;
        }
        if (full || restarted_ || result.at_precision_floor) break;
        last = top;
        top += next;
      }
      // Restarted: V[:, 0:keep) holds the keep best Ritz vectors, and the
      // block after them V[:, keep:restart_top_).
      last = keep_;
      top = restart_top_;
      restarted_ = false;
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

  // to[:, t:t+width] = A from[:, c:c+width].
  void multiply(Basis& from, int c, int width, Basis& to, int t) {
    ++matvecs_;
    a_.apply(from.col(c), from.ld(), width, to.col(t), to.ld());
  }

  // Makes V[:, c:c+width] orthonormal and orthogonal to V[:, 0:c]: two passes
  // of block Gram-Schmidt, each followed by a Cholesky QR step. A block that
  // has (numerically) no new direction is replaced by random vectors. Returns
  // whether the first attempt succeeded; then, when `coupling` is given, it
  // receives C (upper triangular, width x width) with
  // W - V[:, 0:c] V[:, 0:c]^T W = V[:, c:c+width] C for the block W given.
  bool orthonormalize(int c, int width, std::vector<double>* coupling) {
    const int rows = v_.local_rows(), ld = v_.ld();
    for (int attempt = 0; attempt < 4; ++attempt) {
      bool ok = true;
      std::vector<double> r(std::size_t(width) * width, 0.0);  // R2 R1 of the two passes
      for (int j = 0; j < width; ++j) r[std::size_t(j) * width + j] = 1.0;
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
        const std::vector<double> gram = g;
        ok = trace > 0 && lapack::potrf_upper(g, width);
        if (ok) {
          // A direction that is pure round-off after projection is not new.
          for (int j = 0; j < width && ok; ++j)
            ok = g[std::size_t(j) * width + j] > 1e-13 * std::sqrt(trace / width) || pass == 1;
        }
        if (!ok) {
          // Keep the block's independent directions and fill the rest with
          // random ones: a block of rank r < width (a matrix of small rank)
          // keeps what it adds to the basis.
          if (attempt == 0 && pass == 0 && keep_independent(c, width, gram)) return false;
          break;
        }
        lapack::solve_right_upper(g, width, v_.col(c), rows, ld);
        // r <- G r, both upper triangular (potrf leaves G's lower part as it was).
        std::vector<double> gr(r.size(), 0.0);
        for (int j = 0; j < width; ++j)
          for (int i = 0; i <= j; ++i) {
            double sum = 0;
            for (int l = i; l <= j; ++l)
              sum += g[std::size_t(l) * width + i] * r[std::size_t(j) * width + l];
            gr[std::size_t(j) * width + i] = sum;
          }
        r.swap(gr);
      }
      if (ok) {
        if (coupling && attempt == 0) coupling->swap(r);
        return attempt == 0;
      }
      fill_random(c, width, ++restarts_);
    }
    agree(comm_, "krylov: cannot extend the basis (the matrix has too small a rank for " +
                     std::to_string(m_) + " basis vectors)");
    return false;
  }

  // V[:, c:c+width] holds W, orthogonal to V[:, 0:c] and of Gram matrix
  // `gram`, but of numerical rank g < width. Replaces it by an orthonormal
  // basis of its g directions with singular values above 1e-8 of the largest
  // (W U_g S_g^-1 from gram = U S^2 U^T, then orthonormalized again) and
  // width - g random directions orthogonal to all before. Returns false
  // (leaving W) when no direction stands out.
  bool keep_independent(int c, int width, const std::vector<double>& gram) {
    std::vector<double> u = gram;
    std::vector<double> s2 = lapack::syevd(u, width);  // ascending
    comm_.broadcast(s2.data(), s2.size());
    comm_.broadcast(u.data(), u.size());
    const double largest = s2.back();
    int g = 0;
    while (g < width && s2[width - 1 - g] > 1e-16 * largest) ++g;
    if (!(largest > 0) || g == 0 || g == width) return false;
    const int rows = v_.local_rows(), ld = v_.ld();
    std::vector<double> scale(std::size_t(width) * g), w(std::size_t(std::max(rows, 1)) * width);
    for (int j = 0; j < g; ++j)
      for (int i = 0; i < width; ++i)
        scale[std::size_t(j) * width + i] =
            u[std::size_t(width - 1 - j) * width + i] / std::sqrt(s2[width - 1 - j]);
    for (int j = 0; j < width; ++j)
      std::copy_n(v_.col(c + j), rows, &w[std::size_t(j) * std::max(rows, 1)]);
    lapack::gemm('N', 'N', rows, g, width, 1.0, w.data(), std::max(rows, 1), scale.data(), width,
                 0.0, v_.col(c), ld);
    orthonormalize(c, g, nullptr);
    fill_random(c + g, width - g, ++restarts_);
    orthonormalize(c + g, width - g, nullptr);
    return true;
  }

  // Columns [c, c + width) of T = V^T A V from the product w = A V[:, c:c+width]
  // (and rows, by symmetry): V[:, 0:c+width]^T w, the new square averaged
  // with its transpose.
  void project(int c, int width, const double* w) {
    const int rows = v_.local_rows(), ld = v_.ld(), top = c + width;
    std::vector<double> h(std::size_t(top) * width, 0.0);
    lapack::gemm('T', 'N', top, width, rows, 1.0, v_.col(0), ld, w, ld, 0.0, h.data(), top);
    reduce(comm_, h);
    const auto at = [&](int i, int j) -> double& { return t_[std::size_t(j) * m_ + i]; };
    for (int j = 0; j < width; ++j)
      for (int i = 0; i < top; ++i) at(i, c + j) = h[std::size_t(j) * top + i];
    for (int j = c; j < top; ++j)
      for (int i = c; i < j; ++i) at(i, j) = at(j, i) = 0.5 * (at(i, j) + at(j, i));
    for (int j = c; j < top; ++j)
      for (int i = 0; i < c; ++i) at(j, i) = at(i, j);
  }

  // Residual norms ||A y_j - theta_j y_j|| of the Ritz vectors in y_, from
  // their product (into ay_).
  std::vector<double> multiplied_residuals(const std::vector<double>& theta) {
    multiply(y_, 0, keep_, ay_, 0);
    std::vector<double> norms(keep_, 0.0);
    for (int j = 0; j < keep_; ++j)
      for (int i = 0; i < y_.local_rows(); ++i) {
        const double r = ay_.col(j)[i] - theta[j] * y_.col(j)[i];
        norms[j] += r * r;
      }
    reduce(comm_, norms);
    for (double& x : norms) x = std::sqrt(x);
    return norms;
  }

  // Rayleigh-Ritz on the basis V[:, 0:m), whose newest block is V[:, last:m).
  // Returns true when the top k converged, leaving the Ritz vectors in
  // V[:, 0:keep); otherwise, when `restart` (or when a product of the Ritz
  // vectors was taken), restarts: V[:, 0:keep) <- the keep best Ritz
  // vectors, V[:, keep:keep+b) <- the block after them, T's first keep
  // columns <- their values.
  bool rayleigh_ritz(KrylovResult& result, int m, int last, bool restart) {
    if (!related_ && !restart) return false;  // the test needs a product: at the cycle's end only
    if (m < keep_) return false;  // a thick restart's first cycle: fewer columns than it keeps
    const int rows = v_.local_rows(), ld = v_.ld();
    std::vector<double> t(std::size_t(m) * m);
    for (int j = 0; j < m; ++j) std::copy_n(&t_[std::size_t(j) * m_], m, &t[std::size_t(j) * m]);
    std::vector<double> theta = lapack::syevd(t, m);  // ascending; t holds S
    // Identical Ritz data on every rank, whatever each rank's LAPACK did.
    comm_.broadcast(theta.data(), theta.size());
    comm_.broadcast(t.data(), t.size());
    // Best keep, descending: columns m-1, m-2, ... of S.
    std::vector<double> s_best(std::size_t(m) * keep_), theta_best(keep_);
    for (int j = 0; j < keep_; ++j) {
      theta_best[j] = theta[m - 1 - j];
      std::copy_n(&t[std::size_t(m - 1 - j) * m], m, &s_best[std::size_t(j) * m]);
    }
    const auto ritz_vectors = [&] {
      lapack::gemm('N', 'N', rows, keep_, m, 1.0, v_.col(0), ld, s_best.data(), m, 0.0,
                   y_.col(0), y_.ld());
    };
    std::vector<double> norms(keep_, 0.0);
    bool multiplied = false;
    if (related_) {
      // ||C s_new||, s_new the rows of s for the newest block.
      const int w = m - last;
      for (int j = 0; j < keep_; ++j) {
        double sum = 0;
        for (int i = 0; i < w; ++i) {
          double ci = 0;
          for (int l = i; l < w; ++l)
            ci += coupling_[std::size_t(l) * w + i] * s_best[std::size_t(j) * m + last + l];
          sum += ci * ci;
        }
        norms[j] = std::sqrt(sum);
      }
    } else {
      ritz_vectors();
      norms = multiplied_residuals(theta_best);
      multiplied = true;
    }
    result.norm_estimate = std::max(std::abs(theta[m - 1]), std::abs(theta[0]));
    const auto converged_pairs = [&] {
      result.values.assign(theta_best.begin(), theta_best.begin() + k_);
      result.residuals.resize(k_);
      result.residual_norms.resize(k_);
      int converged = 0;
      double worst = 0;
      for (int j = 0; j < k_; ++j) {
        result.residual_norms[j] = norms[j];
        result.residuals[j] = norms[j] / std::max(result.norm_estimate, 1e-300);
        converged += result.residuals[j] <= settings_.tol ? 1 : 0;
        worst = std::max(worst, result.residuals[j]);
      }
      return std::make_pair(converged, worst);
    };
    auto [converged, worst] = converged_pairs();
    if (converged == k_ && !multiplied && !exact_) {
      ritz_vectors();
      norms = multiplied_residuals(theta_best);
      multiplied = true;
      std::tie(converged, worst) = converged_pairs();
      // The relation met tol and the product did not: the products'
      // round-off (float's, with single-precision storage). Once a further
      // cycle no longer halves the product's residual, more cycles cannot
      // meet tol.
      if (converged < k_) {
        result.at_precision_floor = worst > 0.5 * last_verified_;
        last_verified_ = worst;
      }
    }
    if (!restart && !multiplied && converged < k_) return false;
    if (settings_.progress) settings_.progress(result.cycles, converged, k_, worst);
    if (converged < k_) {
      // Every rank holds the same residuals (reduced), so all stop alike.
      result.cycle_residuals.push_back(worst);
      if (krylov_broke_down(result.cycle_residuals)) {
        result.broke_down = true;
        if (!multiplied) ritz_vectors();
        for (int j = 0; j < keep_; ++j) std::copy_n(y_.col(j), rows, v_.col(j));
        return false;
      }
    }
    if (!multiplied) ritz_vectors();
    for (int j = 0; j < keep_; ++j) std::copy_n(y_.col(j), rows, v_.col(j));
    if (converged == k_) return true;
    if (result.at_precision_floor) return false;
    // Restart on [Y, next block]: the next block is orth(W) from the newest
    // block's product, or, after a product of Y, orth(A Y) against Y. A Y
    // has keep columns; with keep > b only its first b extend the basis, and
    // the relation no longer holds for the rest (tests then need products).
    if (multiplied) {
      const int width = std::min(b_, m_ - keep_);  // b, unless n < keep + b
      // With keep > b: the products of the b Ritz vectors of largest residual
      // (the best ones' products are nearly Y Theta and add no direction).
      std::vector<int> order(keep_);
      for (int j = 0; j < keep_; ++j) order[j] = j;
      if (keep_ > b_)
        std::stable_sort(order.begin(), order.end(),
                         [&](int i, int j) { return norms[i] > norms[j]; });
      for (int j = 0; j < width; ++j) std::copy_n(ay_.col(order[j]), rows, v_.col(keep_ + j));
      related_ = width > 0 && orthonormalize(keep_, width, &coupling_) && width == b_ &&
                 keep_ == b_;
      restart_top_ = keep_ + width;
    } else {  // related: every block has b columns, and m + b <= n
      for (int j = 0; j < b_; ++j) std::copy_n(v_.col(m + j), rows, v_.col(keep_ + j));
      restart_top_ = keep_ + b_;
    }
    std::fill(t_.begin(), t_.end(), 0.0);
    for (int j = 0; j < keep_; ++j) t_[std::size_t(j) * m_ + j] = theta_best[j];
    restarted_ = true;
    return false;
  }

  SymmetricOperator& a_;
  const Comm& comm_;
  BlacsGrid line_;
  std::int64_t n_;
  int nb_, k_;
  KrylovSettings settings_;
  KrylovShape shape_;
  int b_, keep_, m_;
  Basis v_;       ///< the basis V (m columns) and the next block (b more)
  Basis y_, ay_;  ///< the keep_ best Ritz vectors and, when multiplied, their products
  std::vector<double> t_ = std::vector<double>(std::size_t(m_) * m_);  ///< V^T A V, m x m
  std::vector<double> coupling_;  ///< C of the newest block's relation (see above)
  bool related_ = true;           ///< the relation holds for the basis
  bool restarted_ = false;
  int restart_top_ = 0;              ///< columns of the basis after a restart
  double last_verified_ = INFINITY;  ///< worst residual of the last product that failed tol
  bool exact_;                       ///< a.exact_products()
  int matvecs_ = 0;
  double product_flops_;        ///< one product of b columns, the ranks' largest
  double untested_flops_ = 0;   ///< product flops since the last convergence test
  std::uint64_t restarts_ = 0;
};

}  // namespace

KrylovResult krylov_top_eigenpairs(SymmetricOperator& a, int k, const KrylovSettings& settings) {
  if (k < 1 || k > a.order()) throw Error("krylov: need 1 <= k <= n");
  BlockKrylov solver(a, k, settings);
  return solver.run();
}

KrylovResult krylov_top_eigenpairs(const DistMatrix& a, int k, const KrylovSettings& settings) {
  if (k < 1 || k > a.rows()) throw Error("krylov: need 1 <= k <= n");
  StoredOperator op(a, settings.product);
  return krylov_top_eigenpairs(op, k, settings);
}

KrylovResult krylov_top_eigenpairs(const SingleMatrix& a, int k, const KrylovSettings& settings) {
  if (k < 1 || k > a.rows()) throw Error("krylov: need 1 <= k <= n");
  StoredOperator op(a, settings.product);
  return krylov_top_eigenpairs(op, k, settings);
}

}  // namespace kembed::spectral
