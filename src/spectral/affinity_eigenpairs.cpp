#include "kembed/spectral/affinity_eigenpairs.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <numeric>
#include <sstream>

#include "kembed/linalg/dist_matrix.hpp"
#include "kembed/spectral/chebyshev_filter.hpp"
#include "kembed/spectral/eigensolver.hpp"
#include "kembed/spectral/laplacian_preconditioner.hpp"

namespace kembed::spectral {

namespace {

// Counts the products of the operator it wraps.
class Counted final : public SymmetricOperator {
 public:
  explicit Counted(SymmetricOperator& a) : a_(a) {}
  std::int64_t order() const override { return a_.order(); }
  const BlacsGrid& grid() const override { return a_.grid(); }
  int block_size() const override { return a_.block_size(); }
  const BlockCyclic1D& rows() const override { return a_.rows(); }
  void apply(const double* x, int ldx, int width, double* y, int ldy) override {
    a_.apply(x, ldx, width, y, ldy);
    ++products;
  }
  bool exact_products() const override { return a_.exact_products(); }
  OperatorCost cost(int width) const override { return a_.cost(width); }
  long long products = 0;

 private:
  SymmetricOperator& a_;
};

// P A P with P = I - u u^T for a unit vector u held in A's row layout: A
// restricted to u's orthogonal complement (u itself maps to 0).
class Deflated final : public SymmetricOperator {
 public:
  Deflated(SymmetricOperator& a, const std::vector<double>& u) : a_(a), u_(u) {}
  std::int64_t order() const override { return a_.order(); }
  const BlacsGrid& grid() const override { return a_.grid(); }
  int block_size() const override { return a_.block_size(); }
  const BlockCyclic1D& rows() const override { return a_.rows(); }
  void apply(const double* x, int ldx, int width, double* y, int ldy) override {
    const int rows = a_.rows().local_size(), ld = std::max(1, rows);
    px_.resize(std::size_t(ld) * width);
    for (int j = 0; j < width; ++j)
      std::copy_n(x + std::size_t(j) * ldx, rows, px_.data() + std::size_t(j) * ld);
    project(px_.data(), ld, width);
    a_.apply(px_.data(), ld, width, y, ldy);
    project(y, ldy, width);
  }
  bool exact_products() const override { return a_.exact_products(); }
  OperatorCost cost(int width) const override {
    OperatorCost c = a_.cost(width);
    c.work_bytes += std::size_t(std::max(1, a_.rows().local_size())) * width * sizeof(double);
    c.flops += 8.0 * a_.rows().local_size() * width;
    return c;
  }

 private:
  // z <- z - u (u^T z), one reduction for all columns.
  void project(double* z, int ldz, int width) {
    const int rows = a_.rows().local_size();
    dots_.assign(std::size_t(width), 0.0);
    for (int j = 0; j < width; ++j)
      for (int i = 0; i < rows; ++i) dots_[j] += u_[i] * z[std::size_t(j) * ldz + i];
    a_.grid().comm().sum_in_place(dots_);
    for (int j = 0; j < width; ++j)
      for (int i = 0; i < rows; ++i) z[std::size_t(j) * ldz + i] -= dots_[j] * u_[i];
  }
  SymmetricOperator& a_;
  const std::vector<double>& u_;
  std::vector<double> px_, dots_;
};

// Rayleigh quotients and residuals with M of the q columns of `x` (M's row
// layout: a DistMatrix on a (ranks x 1) grid with M's row block); the
// pairs sorted by descending quotient.
void rayleigh_quotients(SymmetricOperator& m, DistMatrix& x, AffinityEigenpairs& out) {
  const Comm& comm = m.grid().comm();
  const int q = static_cast<int>(x.cols());
  const int rows = m.rows().local_size(), ld = x.ld();
  std::vector<double> y(std::size_t(ld) * q);
  m.apply(x.data(), ld, q, y.data(), ld);
  std::vector<double> sums(std::size_t(3) * q, 0.0);  // v^T v, v^T M v, (Mv)^T (Mv)
  for (int j = 0; j < q; ++j)
    for (int i = 0; i < rows; ++i) {
      const double a = x.data()[std::size_t(j) * ld + i], b = y[std::size_t(j) * ld + i];
      sums[j] += a * a, sums[q + j] += a * b, sums[2 * q + j] += b * b;
    }
  comm.sum_in_place(sums);
  std::vector<double> mu(q), res(q);
  for (int j = 0; j < q; ++j) {
    mu[j] = sums[q + j] / sums[j];
    // ||Mv - mu v||^2 summed directly (no cancellation of the expanded form).
    double r = 0;
    for (int i = 0; i < rows; ++i) {
      const double e = y[std::size_t(j) * ld + i] - mu[j] * x.data()[std::size_t(j) * ld + i];
      r += e * e;
    }
    res[j] = r;
  }
  comm.sum_in_place(res);
  std::vector<int> order(q);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return mu[a] > mu[b]; });
  out.vectors.assign(std::size_t(std::max(1, rows)) * q, 0.0);
  out.values.clear();
  out.residual_norms.clear();
  for (int j = 0; j < q; ++j) {
    const int from = order[j];
    const double scale = 1 / std::sqrt(sums[from]);
    for (int i = 0; i < rows; ++i)
      out.vectors[std::size_t(j) * std::max(1, rows) + i] =
          x.data()[std::size_t(from) * ld + i] * scale;
    out.values.push_back(mu[from]);
    out.residual_norms.push_back(std::sqrt(res[from]) * scale);
  }
}

// `v` (n x q, any grid) with `top` (M's row layout; null: none) as one more
// column first.
void rayleigh_quotients(SymmetricOperator& m, const DistMatrix& v, AffinityEigenpairs& out,
                        const std::vector<double>* top = nullptr) {
  const int extra = top ? 1 : 0;
  const int q = static_cast<int>(v.cols()) + extra;
  BlacsGrid line(m.grid().comm(), m.grid().comm().size(), 1);
  DistMatrix x(line, m.order(), q, m.block_size(), std::max(1, q));
  copy(v, 0, 0, m.order(), q - extra, x, 0, extra);
  if (extra) std::copy_n(top->data(), m.rows().local_size(), x.data());
  rayleigh_quotients(m, x, out);
}

// The q columns of `vectors` (M's row layout, leading dimension max(1, local
// rows)) with `top` as one more column first.
void rayleigh_quotients(SymmetricOperator& m, const std::vector<double>& vectors, int q_given,
                        AffinityEigenpairs& out, const std::vector<double>* top) {
  const int extra = top ? 1 : 0;
  const int q = q_given + extra;
  BlacsGrid line(m.grid().comm(), m.grid().comm().size(), 1);
  DistMatrix x(line, m.order(), q, m.block_size(), std::max(1, q));
  const int rows = m.rows().local_size(), ld = std::max(1, rows);
  for (int j = 0; j < q_given; ++j)
    std::copy_n(vectors.data() + std::size_t(j) * ld, rows,
                x.data() + std::size_t(j + extra) * x.ld());
  if (extra) std::copy_n(top->data(), rows, x.data());
  rayleigh_quotients(m, x, out);
}

}  // namespace

int affinity_block_width(int q, std::int64_t /*n*/, const AffinitySolve& how) {
  return how.block > 0 ? how.block : q + 5;
}

AffinityEigenpairs top_affinity_eigenpairs(SymmetricOperator& m, int q_all,
                                           const KrylovSettings& settings,
                                           const AffinitySolve& how,
                                           const std::vector<double>& top,
                                           graph::GraphMultigrid* multigrid) {
  Counted counted(m);
  AffinityEigenpairs out;
  // Agreed: a rank without rows holds an empty `top` even when it is given.
  const bool given = m.grid().comm().max(top.empty() ? 0.0 : 1.0) > 0;
  const bool deflate = how.deflate && given && q_all > 1;
  const std::vector<double>* known = deflate ? &top : nullptr;
  Deflated deflated(counted, top);
  // The solver's operator and the pairs it looks for; M (counted) checks them.
  SymmetricOperator& a = deflate ? static_cast<SymmetricOperator&>(deflated) : counted;
  const int q = q_all - (deflate ? 1 : 0);
  const auto plain = [&](const std::string& why) {
    KrylovResult r = krylov_top_eigenpairs(a, q, settings);
    out.cycles += r.cycles;
    out.converged = r.converged;
    out.failure = r.converged ? "" : krylov_failure(r, settings.tol);
    rayleigh_quotients(counted, r.vectors, out, known);
    out.products = counted.products;
    out.note = why;
  };
  const std::int64_t n = m.order();
  std::string fallback;
  if (how.method == AffinityMethod::multigrid) {
    if (deflate && multigrid && multigrid->usable()) {
      NormalizedLaplacianPreconditioner t(*multigrid);
      LobpcgSettings ls;
      ls.tol = settings.tol;
      ls.guard = how.guard;
      ls.seed = settings.seed;
      ls.max_iterations = how.max_iterations;
      ls.progress = how.progress;
      LobpcgResult r = lobpcg_top_eigenpairs(counted, q, t, ls, top);
      out.cycles = r.iterations;
      out.preconditioned = r.preconditioned;
      std::string sizes;
      for (std::int64_t z : multigrid->level_sizes())
        sizes += (sizes.empty() ? "" : ", ") + std::to_string(z);
      if (r.converged) {
        out.converged = true;
        out.levels = multigrid->level_sizes();
        rayleigh_quotients(counted, r.vectors, q, out, known);
        out.products = counted.products;
        out.note = "lobpcg preconditioned by a multigrid V-cycle of the graph Laplacian (levels " +
                   sizes + "); the top eigenvector sqrt(degree) deflated";
        if (r.at_precision_floor) {
          char text[160];
          std::snprintf(text, sizeof text,
                        "; stopped at its precision floor, largest relative residual %.2g above "
                        "--tol %.1e",
                        *std::max_element(r.residuals.begin(), r.residuals.end()), settings.tol);
          out.note += text;
        }
        return out;
      }
      // A graph on which the multigrid preconditions poorly: the filter,
      // in the hierarchy's memory.
      multigrid->release();
      char text[200];
      std::snprintf(text, sizeof text,
                    "lobpcg with the multigrid (levels %s) did not converge in %d iterations "
                    "(largest relative residual %.2g); ",
                    sizes.c_str(), r.iterations,
                    *std::max_element(r.residuals.begin(), r.residuals.end()));
      fallback = text;
    } else {
      fallback = !deflate ? "multigrid needs the top eigenvector known; "
                 : !multigrid ? "no multigrid hierarchy given; "
                              : "the graph's multigrid could not be built (coarsening stalled); ";
    }
  }
  if (how.method == AffinityMethod::plain || n < 4 * std::int64_t(q + 5)) {
    plain(fallback + (how.method != AffinityMethod::plain
                          ? "plain krylov on M (n too small for the filter)" : ""));
    return out;
  }
  // (1) A lower bound of the q-th eigenvalue, from a short run on M.
  KrylovSettings rough = settings;
  rough.tol = how.rough_tol;
  rough.max_cycles = std::max(1, how.rough_cycles);
  rough.block = affinity_block_width(q, n, how);
  rough.depth = how.depth;
  rough.progress = {};
  KrylovResult first = krylov_top_eigenpairs(a, q, rough);
  out.cycles += first.cycles;
  const double bound = first.values.back();
  // The cut halfway between the bound and -1 would be safe but slow; a
  // little below the bound keeps the damped part large. The bound is below
  // the q-th eigenvalue already; the margin covers its round-off.
  const double cut = bound - 1e-3 * (1 - bound) - 1e-12;
  if (!(cut > -1 && cut < 1)) {
    plain(fallback + "plain krylov on M (no room for a filter: q-th eigenvalue estimate " +
          std::to_string(bound) + ")");
    return out;
  }
  const ChebyshevInterval interval{-1, cut, 1};
  int degree = how.degree;
  if (degree <= 0) {
    // T_m(L(1)) = cosh(m acosh(L(1))) >= 1 / kFilterDamping.
    const double l1 = (2 - (cut - 1)) / (cut + 1);
    degree = static_cast<int>(std::ceil(std::acosh(1 / kFilterDamping) / std::acosh(l1)));
    degree = std::clamp(degree, 8, kMaxFilterDegree);
  }
  ChebyshevFilter p(a, degree, interval);
  // (2) Krylov on p(M).
  KrylovSettings filtered = settings;
  filtered.block = affinity_block_width(q, n, how);
  filtered.depth = how.depth;
  KrylovResult r = krylov_top_eigenpairs(p, q, filtered);
  out.cycles += r.cycles;
  out.converged = r.converged;
  out.failure = r.converged ? "" : krylov_failure(r, settings.tol);
  // (3) M's eigenvalues and residuals.
  rayleigh_quotients(counted, r.vectors, out, known);
  std::ostringstream note;
  note.precision(6);
  note << fallback << "Chebyshev filter of degree " << degree << " damping [-1, " << cut
       << "] (cut below the Ritz bound " << bound << " of eigenvalue " << q_all << ")";
  if (deflate) note << "; the top eigenvector sqrt(degree) deflated";
  if (out.values.back() <= cut) {
    plain("");
    note << " left eigenvalue " << q_all << " below the cut; plain krylov on M used instead";
  }
  out.products = counted.products;
  out.note = note.str();
  return out;
}

}  // namespace kembed::spectral
