#include "kembed/spectral/sparse_ca.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kembed/core/error.hpp"
#include "kembed/io/format_double.hpp"
#include "kembed/spectral/sign_convention.hpp"
#include "kembed/spectral/sparse_normal_operator.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::spectral {

namespace {

// What the sparse fit cannot do, and bad settings: agreed.
void check_sparse_ca_settings(const CaSettings& s, const Comm& comm) {
  std::string error;
  if (s.block_size < 1)
    error = "--block-size must be positive, got " + std::to_string(s.block_size);
  else if (s.route == CaRoute::rows)
    error =
        "--route rows is not available for a sparse table: the sparse fit solves S^T S "
        "(the columns route)";
  else if (s.solver != Solver::automatic && s.solver != Solver::krylov)
    error = "--solver " + solver_name(s.solver) +
            " is not available for a sparse table: its standardized residuals are applied as an "
            "operator, which only the krylov solver takes";
  agree(comm, error);
}

// The first negative count in row-major order: each rank reports its own
// first, and agree() keeps the lowest rank's, which holds the earlier rows.
void check_sparse_non_negative(const io::CsrRows& x, const Comm& comm, const std::string& source) {
  std::string error;
  for (std::int64_t i = 0; error.empty() && i < x.local_rows(); ++i)
    for (std::int64_t e = x.offsets[i]; e < x.offsets[i + 1]; ++e)
      if (x.values[e] < 0) {
        error = source + ": row " + std::to_string(x.first_row + i + 1) + ", column " +
                std::to_string(x.columns[e] + 1) + " holds the negative count " +
                io::format_double(x.values[e]) +
                "; correspondence analysis needs non-negative counts";
        break;
      }
  agree(comm, error);
}

}  // namespace

CaResult fit_sparse_ca(const io::CsrRows& x, const BlacsGrid& grid, const CaSettings& settings,
                       const std::string& source, PhaseTimer& timer) {
  const Comm& comm = grid.comm();
  timer.start("masses");
  check_sparse_ca_settings(settings, comm);
  check_csr_rows(x, comm, source);
  check_sparse_non_negative(x, comm, source);
  const std::int64_t rows = x.rows, cols = x.cols;
  const auto local = static_cast<std::size_t>(x.local_rows());
  const auto d = static_cast<std::size_t>(cols);
  CaResult result;
  result.rows = rows;
  result.cols = cols;
  result.route = CaRoute::columns;

  // Row sums where the rows are, column sums in one allreduce.
  std::vector<double> local_sum(local, 0.0), col_sum(d, 0.0);
  for (std::size_t i = 0; i < local; ++i)
    for (std::int64_t e = x.offsets[i]; e < x.offsets[i + 1]; ++e) {
      local_sum[i] += x.values[e];
      col_sum[std::size_t(x.columns[e])] += x.values[e];
    }
  comm.sum_in_place(col_sum);
  const std::vector<double> row_sum = comm.allgatherv(local_sum);
  check_ca_margins(comm, row_sum, col_sum, settings, source, {}, {}, result);
  const double n = result.grand_total;
  CaPoints& rp = result.row_points;
  CaPoints& cp = result.col_points;
  const std::vector<double>& r = rp.mass;
  const std::vector<double>& c = cp.mass;

  // Inertias, s_ij^2 = (p_ij - r_i c_j)^2 / (r_i c_j): stored entries one
  // by one, each unstored one r_i c_j, summed per row as r_i times the mass
  // of the columns the row does not store. Both masses sum in ascending
  // order, so a row that stores every column gets exactly 0 there (a table
  // of independence keeps its rounding-level inertia).
  timer.start("residuals");
  double col_mass = 0, row_mass = 0;
  for (double v : c) col_mass += v;
  for (double v : r) row_mass += v;
  std::vector<double> local_inertia(local, 0.0);
  // Per column: the stored entries' squares, then the mass of the rows that
  // store the column.
  std::vector<double> col_parts(2 * d, 0.0);
  for (std::size_t i = 0; i < local; ++i) {
    const double ri = r[std::size_t(x.first_row) + i];
    if (ri == 0) continue;
    double stored_mass = 0;
    for (std::int64_t e = x.offsets[i]; e < x.offsets[i + 1]; ++e) {
      const auto j = std::size_t(x.columns[e]);
      if (c[j] == 0) continue;
      const double expected = ri * c[j];
      const double s2 = std::pow(x.values[e] / n - expected, 2) / expected;
      local_inertia[i] += s2;
      stored_mass += c[j];
      col_parts[j] += s2;
      col_parts[d + j] += ri;
    }
    local_inertia[i] += ri * std::max(0.0, col_mass - stored_mass);
  }
  comm.sum_in_place(col_parts);
  rp.inertia = comm.allgatherv(local_inertia);
  cp.inertia.assign(d, 0.0);
  for (std::size_t j = 0; j < d; ++j)
    if (c[j] > 0) cp.inertia[j] = col_parts[j] + c[j] * std::max(0.0, row_mass - col_parts[d + j]);
  for (double v : rp.inertia) result.total_inertia += v;
  // The dense fit's threshold: rounding leaves residuals of about eps
  // sqrt(r_i c_j) in a table of independence.
  const double eps = std::numeric_limits<double>::epsilon();
  const double zero = std::pow(16 * double(rows + cols) * eps, 2);
  if (!(result.total_inertia > zero))
    agree(comm, source +
                    ": the table is one of independence (every row profile equals the "
                    "average row profile to rounding): its total inertia " +
                    io::format_double(result.total_inertia) +
                    " = chi-square / n is zero, so there is no dimension to show");

  // S^T S as an operator; dropped rows and columns are zero in S.
  NormalFactors factors;
  factors.row_scale.assign(local, 0.0);
  factors.row_shift.assign(local, 0.0);
  for (std::size_t i = 0; i < local; ++i) {
    const double ri = r[std::size_t(x.first_row) + i];
    if (ri > 0) {
      factors.row_scale[i] = 1 / (n * std::sqrt(ri));
      factors.row_shift[i] = std::sqrt(ri);
    }
  }
  factors.col_scale.assign(d, 0.0);
  factors.col_shift.assign(d, 0.0);
  for (std::size_t j = 0; j < d; ++j)
    if (c[j] > 0) {
      factors.col_scale[j] = 1 / std::sqrt(c[j]);
      factors.col_shift[j] = std::sqrt(c[j]);
    }
  SparseNormalOperator op(x, grid, settings.block_size, std::move(factors));

  SpectralRequest request{settings.components, Solver::krylov,
                          sparse_krylov(settings.krylov, settings.components, op.order())};
  request.threshold_size = double(std::max(rows, cols));
  request.too_few_positive = [&](const PositiveShortfall& f) {
    const int available = f.total.value_or(f.positive);
    return source + ": dimension " + std::to_string(f.positive + 1) + " has principal inertia " +
           io::format_double(f.value) + ", numerically zero; the table has " +
           (f.total ? "" : "at most ") + std::to_string(available) +
           " dimensions of positive inertia" +
           (available > 0 ? "; use --components " + std::to_string(available) + " or fewer"
                          : ": every profile equals the average one, so no dimension exists");
  };
  // trace(S^T S) = the total inertia >= ||S^T S||_F (positive semi-definite).
  request.known_frobenius_norm = result.total_inertia;
  request.fix_signs = false;  // the convention belongs to the row standard coordinates
  SpectralStep step = spectral_step(op, result.total_inertia, request, timer);
  record_solve(step, result);
  result.solved_frobenius = step.frobenius_norm;
  const int k = int(step.values.size());
  result.k = k;
  result.principal_inertias = step.values;

  // V replicated (J x k is small), row-major; Gam = D_c^{-1/2} V.
  std::vector<double> column_major = step.vectors.gather_to_root();
  comm.broadcast(column_major);
  std::vector<double> v(d * std::size_t(k)), gamma(d * std::size_t(k));
  for (std::size_t j = 0; j < d; ++j)
    for (int t = 0; t < k; ++t) {
      v[j * k + t] = column_major[std::size_t(t) * d + j];
      gamma[j * k + t] = v[j * k + t] * op.factors().col_scale[j];
    }
  // This rank's rows: U = S V / sigma, Phi = D_r^{-1/2} U.
  std::vector<double> phi(local * std::size_t(k));
  op.left_product(v.data(), k, phi.data());
  std::vector<double> inverse_sigma(static_cast<std::size_t>(k));
  for (int t = 0; t < k; ++t) inverse_sigma[std::size_t(t)] = 1 / std::sqrt(step.values[t]);
  for (std::size_t i = 0; i < local; ++i) {
    const double ri = r[std::size_t(x.first_row) + i];
    const double inverse_root = ri > 0 ? 1 / std::sqrt(ri) : 0.0;
    for (int t = 0; t < k; ++t) phi[i * k + t] *= inverse_sigma[std::size_t(t)] * inverse_root;
  }
  const std::vector<double> sign = fix_signs(comm, x.first_row, x.local_rows(), k, phi.data());
  for (std::size_t j = 0; j < d; ++j)
    for (int t = 0; t < k; ++t) gamma[j * k + t] *= sign[std::size_t(t)];
  rp.standard = comm.gatherv(phi);
  if (comm.is_root()) {
    cp.standard = std::move(gamma);
    derive_ca_points(rp, result.principal_inertias);
    derive_ca_points(cp, result.principal_inertias);
  }
  timer.stop();
  return result;
}

}  // namespace kembed::spectral
