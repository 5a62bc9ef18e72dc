#include "kembed/spectral/ca.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "kembed/core/error.hpp"
#include "kembed/distribute/read_distributed.hpp"
#include "kembed/linalg/cross_product.hpp"
#include "kembed/linalg/reductions.hpp"
#include "kembed/linalg/scalapack.hpp"
#include "kembed/spectral/sign_convention.hpp"
#include "kembed/spectral/spectral_step.hpp"

namespace kembed::spectral {

CaRoute parse_ca_route(const std::string& name) {
  if (name == "auto") return CaRoute::automatic;
  if (name == "rows") return CaRoute::rows;
  if (name == "columns") return CaRoute::columns;
  throw Error("unknown --route '" + name + "' (expected auto, rows or columns)");
}

std::string ca_route_name(CaRoute route) {
  switch (route) {
    case CaRoute::automatic:
      return "auto";
    case CaRoute::rows:
      return "rows";
    case CaRoute::columns:
      return "columns";
  }
  return "auto";
}

CaRoute resolve_ca_route(CaRoute route, std::int64_t rows, std::int64_t cols) {
  if (route != CaRoute::automatic) return route;
  return rows <= cols ? CaRoute::rows : CaRoute::columns;
}

ProblemShape ca_problem_shape(std::int64_t rows, std::int64_t cols, const CaSettings& settings,
                              int nprow, int npcol) {
  const bool by_rows = resolve_ca_route(settings.route, rows, cols) == CaRoute::rows;
  ProblemShape shape{
      by_rows ? rows : cols, 0, settings.components, nprow, npcol, settings.block_size,
      settings.solver};
  shape.data_rows = rows;
  shape.data_cols = cols;
  return shape;
}

namespace {

std::string number(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

// "row 3 ('label')": 1-based, with the label when rank 0 has one.
std::string describe(const char* kind, std::int64_t index, const std::vector<std::string>& names) {
  std::string text = std::string(kind) + " " + std::to_string(index + 1);
  if (std::size_t(index) < names.size()) text += " ('" + names[std::size_t(index)] + "')";
  return text;
}

// The first negative count, in row-major order, as an agreed error.
void check_non_negative(const DistMatrix& table, const std::string& source,
                        const std::vector<std::string>& row_names,
                        const std::vector<std::string>& col_names) {
  const Comm& comm = table.grid().comm();
  const long long none = std::numeric_limits<long long>::max();
  long long first = none;
  double value = std::numeric_limits<double>::infinity();
  for (int lj = 0; lj < table.local_cols(); ++lj) {
    const std::int64_t j = table.col_dist().to_global(lj);
    for (int li = 0; li < table.local_rows(); ++li) {
      const double v = table.local(li, lj);
      if (!(v < 0)) continue;
      const long long at = table.row_dist().to_global(li) * table.cols() + j;
      if (at < first) {
        first = at;
        value = v;
      }
    }
  }
  const long long global_first = comm.min(first);
  if (global_first == none) return;
  value = comm.min(first == global_first ? value : std::numeric_limits<double>::infinity());
  const std::int64_t i = global_first / table.cols(), j = global_first % table.cols();
  agree(comm, source + ": " + describe("row", i, row_names) + ", " +
                  describe("column", j, col_names) + " holds the negative count " + number(value) +
                  "; correspondence analysis needs non-negative counts");
}

// Local sums of f(entry) per global row and column, reduced over the grid.
template <class F>
void margins(const DistMatrix& a, F&& f, std::vector<double>& row, std::vector<double>& col) {
  row.assign(std::size_t(a.rows()), 0.0);
  col.assign(std::size_t(a.cols()), 0.0);
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const std::int64_t j = a.col_dist().to_global(lj);
    for (int li = 0; li < a.local_rows(); ++li) {
      const double v = f(a.local(li, lj));
      row[std::size_t(a.row_dist().to_global(li))] += v;
      col[std::size_t(j)] += v;
    }
  }
  a.grid().comm().sum_in_place(row);
  a.grid().comm().sum_in_place(col);
}

std::vector<std::int64_t> zero_entries(const std::vector<double>& sums) {
  std::vector<std::int64_t> zero;
  for (std::size_t i = 0; i < sums.size(); ++i)
    if (sums[i] == 0) zero.push_back(std::int64_t(i));
  return zero;
}

// Multiplies local row i (column j) of `a` by factor[global index]. Local.
void scale_rows(DistMatrix& a, const std::vector<double>& factor) {
  for (int lj = 0; lj < a.local_cols(); ++lj)
    for (int li = 0; li < a.local_rows(); ++li)
      a.local(li, lj) *= factor[std::size_t(a.row_dist().to_global(li))];
}
void scale_columns(DistMatrix& a, const std::vector<double>& factor) {
  for (int lj = 0; lj < a.local_cols(); ++lj) {
    const double f = factor[std::size_t(a.col_dist().to_global(lj))];
    for (int li = 0; li < a.local_rows(); ++li) a.local(li, lj) *= f;
  }
}

// 1 / sqrt(mass), 0 for a dropped (zero-mass) row or column.
std::vector<double> inverse_sqrt(const std::vector<double>& mass) {
  std::vector<double> out(mass.size(), 0.0);
  for (std::size_t i = 0; i < mass.size(); ++i)
    if (mass[i] > 0) out[i] = 1 / std::sqrt(mass[i]);
  return out;
}

// S S^T (rows route) or S^T S (columns route).
void form_cross(const DistMatrix& s, CaRoute route, DistMatrix& a) {
  cross_product(route == CaRoute::rows ? 'N' : 'T', 1.0, s, a);
}

}  // namespace

void derive_ca_points(CaPoints& p, const std::vector<double>& inertias) {
  const std::size_t k = inertias.size(), count = p.mass.size();
  p.principal.assign(count * k, 0.0);
  p.contribution.assign(count * k, 0.0);
  p.cos2.assign(count * k, 0.0);
  p.quality.assign(count, 0.0);
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t t = 0; t < k; ++t) {
      const double phi = p.standard[i * k + t], f = phi * std::sqrt(inertias[t]);
      p.principal[i * k + t] = f;
      p.contribution[i * k + t] = p.mass[i] * phi * phi;
      // r_i d_i^2 is the point's inertia; f^2 / d^2 = r f^2 / (r d^2).
      if (p.inertia[i] > 0) p.cos2[i * k + t] = p.mass[i] * f * f / p.inertia[i];
      p.quality[i] += p.cos2[i * k + t];
    }
}

void check_ca_margins(const Comm& comm, const std::vector<double>& row_sum,
                      const std::vector<double>& col_sum, const CaSettings& settings,
                      const std::string& source, const std::vector<std::string>& row_names,
                      const std::vector<std::string>& col_names, CaResult& result) {
  const std::int64_t rows = std::int64_t(row_sum.size()), cols = std::int64_t(col_sum.size());
  double n = 0;
  for (double v : row_sum) n += v;
  result.grand_total = n;
  if (!(n > 0) || !std::isfinite(n))
    agree(comm, source + ": the counts sum to " + number(n) +
                    "; correspondence analysis needs a positive, finite total");
  result.row_points.dropped = zero_entries(row_sum);
  result.col_points.dropped = zero_entries(col_sum);
  if (!settings.drop_empty) {
    const char* hint = "; remove it or pass --drop-empty to leave empty rows and columns out";
    if (!result.row_points.dropped.empty())
      agree(comm, source + ": " + describe("row", result.row_points.dropped[0], row_names) +
                      " is all zero (its profile is undefined)" + hint);
    if (!result.col_points.dropped.empty())
      agree(comm, source + ": " + describe("column", result.col_points.dropped[0], col_names) +
                      " is all zero (its profile is undefined)" + hint);
  }
  const std::int64_t kept_rows = rows - std::int64_t(result.row_points.dropped.size());
  const std::int64_t kept_cols = cols - std::int64_t(result.col_points.dropped.size());
  if (kept_rows < 2 || kept_cols < 2)
    agree(comm, source +
                    ": correspondence analysis needs at least 2 non-empty rows and 2 "
                    "non-empty columns, the table has " +
                    std::to_string(kept_rows) + " x " + std::to_string(kept_cols) +
                    " (a single row or column is its own average profile: it has no inertia)");
  const std::int64_t most = std::min(kept_rows, kept_cols) - 1;
  if (settings.components < 1 || settings.components > most)
    agree(comm, "--components " + std::to_string(settings.components) +
                    " must be between 1 and min(I, J) - 1 = " + std::to_string(most) + " for the " +
                    std::to_string(kept_rows) + " x " + std::to_string(kept_cols) +
                    " (non-empty) table in " + source);

  CaPoints& rp = result.row_points;
  CaPoints& cp = result.col_points;
  rp.mass = row_sum;
  cp.mass = col_sum;
  for (double& v : rp.mass) v /= n;
  for (double& v : cp.mass) v /= n;
}

CaResult fit_ca(DistMatrix& table, const CaSettings& settings, const std::string& source,
                const std::vector<std::string>& row_names,
                const std::vector<std::string>& col_names, PhaseTimer& timer) {
  const Comm& comm = table.grid().comm();
  const std::int64_t rows = table.rows(), cols = table.cols();
  CaResult result;
  result.rows = rows;
  result.cols = cols;
  result.route = resolve_ca_route(settings.route, rows, cols);
  const bool by_rows = result.route == CaRoute::rows;

  timer.start("masses");
  check_non_negative(table, source, row_names, col_names);
  std::vector<double> row_sum, col_sum;
  margins(
      table, [](double v) { return v; }, row_sum, col_sum);
  check_ca_margins(comm, row_sum, col_sum, settings, source, row_names, col_names, result);
  const double n = result.grand_total;
  CaPoints& rp = result.row_points;
  CaPoints& cp = result.col_points;

  timer.start("residuals");
  // s_ij = (p_ij - r_i c_j) / sqrt(r_i c_j), in place; 0 for dropped ones.
  const std::vector<double> row_scale = inverse_sqrt(rp.mass), col_scale = inverse_sqrt(cp.mass);
  for (int lj = 0; lj < table.local_cols(); ++lj) {
    const auto j = std::size_t(table.col_dist().to_global(lj));
    for (int li = 0; li < table.local_rows(); ++li) {
      const auto i = std::size_t(table.row_dist().to_global(li));
      double& s = table.local(li, lj);
      s = (s / n - rp.mass[i] * cp.mass[j]) * row_scale[i] * col_scale[j];
    }
  }
  margins(
      table, [](double v) { return v * v; }, rp.inertia, cp.inertia);
  {
    const double norm = frobenius_norm(table);
    result.total_inertia = norm * norm;
  }
  // Rounding leaves residuals of about eps sqrt(r_i c_j) (times the length
  // of the sums) in a table of independence: inertia below this is zero.
  const double eps = std::numeric_limits<double>::epsilon();
  const double zero = std::pow(16 * double(rows + cols) * eps, 2);
  if (!(result.total_inertia > zero))
    agree(comm, source +
                    ": the table is one of independence (every row profile equals the "
                    "average row profile to rounding): its total inertia " +
                    number(result.total_inertia) +
                    " = chi-square / n is zero, so there is no dimension to show");

  timer.start(by_rows ? "cross_rows" : "cross_columns");
  const int nb = table.row_dist().block_size();
  const std::int64_t m = by_rows ? rows : cols;
  DistMatrix a(table.grid(), m, m, nb, nb);
  form_cross(table, result.route, a);

  SpectralRequest request{settings.components, settings.solver, settings.krylov};
  request.threshold_size = double(std::max(rows, cols));
  request.too_few_positive = [&](const PositiveShortfall& f) {
    const int available = f.total.value_or(f.positive);
    return source + ": dimension " + std::to_string(f.positive + 1) + " has principal inertia " +
           number(f.value) + ", numerically zero; the table has " + (f.total ? "" : "at most ") +
           std::to_string(available) + " dimensions of positive inertia" +
           (available > 0 ? "; use --components " + std::to_string(available) + " or fewer"
                          : ": every profile equals the average one, so no dimension exists");
  };
  request.keep_copy = true;  // min(I, J)^2 is at most I x J: cheaper than a second product
  request.fix_signs = false;  // the convention belongs to the row standard coordinates
  SpectralStep step = spectral_step(a, request, timer);
  record_solve(step, result);
  result.solved_frobenius = step.frobenius_norm;
  const int k = int(step.values.size());
  result.k = k;
  result.principal_inertias = step.values;

  // The other side's singular vectors: V = S^T U / sigma or U = S V / sigma.
  std::vector<double> inverse_sigma(static_cast<std::size_t>(k));
  for (int t = 0; t < k; ++t) inverse_sigma[std::size_t(t)] = 1 / std::sqrt(step.values[t]);
  DistMatrix phi(table.grid(), rows, k, nb, nb);
  DistMatrix gamma(table.grid(), cols, k, nb, nb);
  if (by_rows) {
    copy(step.vectors, 0, 0, rows, k, phi, 0, 0);
    scalapack::gemm('T', 'N', 1.0, table, phi, 0.0, gamma);
    scale_columns(gamma, inverse_sigma);
  } else {
    copy(step.vectors, 0, 0, cols, k, gamma, 0, 0);
    scalapack::gemm('N', 'N', 1.0, table, gamma, 0.0, phi);
    scale_columns(phi, inverse_sigma);
  }
  scale_rows(phi, row_scale);
  scale_rows(gamma, col_scale);
  scale_columns(gamma, fix_signs(phi));
  rp.standard = row_major_on_root(phi);
  cp.standard = row_major_on_root(gamma);
  if (comm.is_root()) {
    derive_ca_points(rp, result.principal_inertias);
    derive_ca_points(cp, result.principal_inertias);
  }
  timer.stop();
  return result;
}

std::vector<double> ca_supplementary(io::MatrixFile& standard, io::MatrixFile& points,
                                     const BlacsGrid& grid, int block_size) {
  const Comm& comm = grid.comm();
  if (points.cols() != standard.rows())
    agree(comm, points.path() + ": has " + std::to_string(points.cols()) +
                    " columns, but the supplementary profiles must have the " +
                    std::to_string(standard.rows()) + " entries of the fitted side");
  const int nb = block_size;
  const std::int64_t m = points.rows(), k = standard.cols();
  DistMatrix h(grid, m, points.cols(), nb, nb);
  distribute::read_block_cyclic(points, h);
  check_non_negative(h, points.path(), {}, {});
  std::vector<double> row_sum, col_sum;
  margins(
      h, [](double v) { return v; }, row_sum, col_sum);
  for (std::size_t i = 0; i < row_sum.size(); ++i)
    if (!(row_sum[i] > 0))
      agree(comm, points.path() + ": row " + std::to_string(i + 1) +
                      " sums to zero; a supplementary point needs a profile");
  for (double& v : row_sum) v = 1 / v;
  scale_rows(h, row_sum);
  DistMatrix gamma(grid, standard.rows(), k, nb, nb);
  distribute::read_block_cyclic(standard, gamma);
  DistMatrix f(grid, m, k, nb, nb);
  scalapack::gemm('N', 'N', 1.0, h, gamma, 0.0, f);
  return row_major_on_root(f);
}

}  // namespace kembed::spectral
