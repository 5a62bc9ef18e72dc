#include "kembed/graph/graph_multigrid.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <utility>

#include "kembed/linalg/lapack.hpp"

namespace kembed::graph {

struct GraphMultigrid::Level {
  explicit Level(const BlockCyclic1D& r) : rows(r) {}
  BlockCyclic1D rows;
  int real = 0;  // the first `real` local rows are vertices, the rest phantom padding
  std::vector<std::int64_t> offsets;
  std::vector<int> index;  // entries' places in the gathered rows
  std::vector<double> weight, degree;
  std::unique_ptr<RowExchange> exchange;
  std::vector<int> aggregate;  // local row -> local row of the next level (-1: phantom)
  bool replicated = false;     // held whole on every rank (a one-rank level)
  // Non-empty when the next level is this one copied onto every rank: the
  // first vertex of each rank's rows in the copy's numbering (ranks + 1).
  std::vector<std::int64_t> gather_begin;
  std::vector<double> x, b, r, gathered;
  int ld() const { return std::max(1, rows.local_size()); }
};

namespace {

using Level = GraphMultigrid::Level;

// A level from its rows (`real` of them vertices; the rest padding, given
// degree 1 and no entries so that L is the identity there).
std::unique_ptr<Level> make_level(SparseRows w, int real, const Comm& comm) {
  auto lv = std::make_unique<Level>(w.rows);
  lv->real = real;
  lv->exchange = std::make_unique<RowExchange>(w.rows, w.columns, comm);
  lv->index = lv->exchange->take_buffer_index();
  std::vector<std::int64_t>().swap(w.columns);
  lv->offsets = std::move(w.offsets);
  lv->weight = std::move(w.values);
  const int local = lv->rows.local_size();
  lv->degree.assign(std::size_t(local), 1.0);
  for (int li = 0; li < real; ++li) {
    double d = 0;
    for (std::int64_t t = lv->offsets[li]; t < lv->offsets[li + 1]; ++t) d += lv->weight[t];
    lv->degree[li] = d;
  }
  return lv;
}

// y = (D - W) x on the level's rows, with the gathered rows g (row-major,
// width w); each row's sums kept in registers, W columns at a time.
template <int W>
void laplacian_rows(const Level& lv, const double* x, std::size_t ldx, const double* g,
                    std::size_t w, int c0, double* y, std::size_t ldy) {
  const int rows = lv.rows.local_size();
  for (int li = 0; li < rows; ++li) {
    double s[W] = {};
    for (std::int64_t t = lv.offsets[li]; t < lv.offsets[li + 1]; ++t) {
      const double a = lv.weight[t];
      const double* row = g + std::size_t(lv.index[t]) * w + c0;
      for (int c = 0; c < W; ++c) s[c] += a * row[c];
    }
    const double d = lv.degree[li];
    for (int c = 0; c < W; ++c)
      y[li + (c0 + c) * ldy] = d * x[li + (c0 + c) * ldx] - s[c];
  }
}

void apply_laplacian(Level& lv, const double* x, int ldx, int width, double* y, int ldy) {
  lv.exchange->gather(x, ldx, width, lv.gathered);
  const double* g = lv.gathered.data();
  const std::size_t w = std::size_t(width);
  int c0 = 0;
  const auto columns = [&](auto width_constant) {
    laplacian_rows<decltype(width_constant)::value>(lv, x, std::size_t(ldx), g, w, c0, y,
                                                    std::size_t(ldy));
  };
  for (; width - c0 >= 8; c0 += 8) columns(std::integral_constant<int, 8>{});
  switch (width - c0) {
    case 1: columns(std::integral_constant<int, 1>{}); break;
    case 2: columns(std::integral_constant<int, 2>{}); break;
    case 3: columns(std::integral_constant<int, 3>{}); break;
    case 4: columns(std::integral_constant<int, 4>{}); break;
    case 5: columns(std::integral_constant<int, 5>{}); break;
    case 6: columns(std::integral_constant<int, 6>{}); break;
    case 7: columns(std::integral_constant<int, 7>{}); break;
    default: break;
  }
}

// Aggregates of the level's vertices, each a set of neighbours on this rank:
// (1) a vertex whose neighbours here are all free starts an aggregate with
// them; (2) a vertex still free joins the aggregate of its most strongly
// connected neighbour here that (1) placed; (3) the rest start aggregates
// with their free neighbours here. Returns the count; `agg` maps each local
// row (phantom rows: -1).
int aggregate_rows(const Level& lv, std::vector<int>& agg) {
  const int real = lv.real, local = lv.rows.local_size();
  agg.assign(std::size_t(local), -1);
  int count = 0;
  const auto local_column = [&](std::int64_t t) { return lv.index[t] < local ? lv.index[t] : -1; };
  for (int i = 0; i < real; ++i) {
    if (agg[i] >= 0) continue;
    bool free = true;
    for (std::int64_t t = lv.offsets[i]; t < lv.offsets[i + 1] && free; ++t) {
      const int j = local_column(t);
      free = j < 0 || agg[j] < 0;
    }
    if (!free) continue;
    agg[i] = count;
    for (std::int64_t t = lv.offsets[i]; t < lv.offsets[i + 1]; ++t)
      if (const int j = local_column(t); j >= 0) agg[j] = count;
    ++count;
  }
  const std::vector<int> first = agg;
  for (int i = 0; i < real; ++i) {
    if (first[i] >= 0) continue;
    double best = 0;
    for (std::int64_t t = lv.offsets[i]; t < lv.offsets[i + 1]; ++t)
      if (const int j = local_column(t); j >= 0 && first[j] >= 0 && lv.weight[t] > best) {
        best = lv.weight[t];
        agg[i] = first[j];
      }
  }
  for (int i = 0; i < real; ++i) {
    if (agg[i] >= 0) continue;
    agg[i] = count;
    for (std::int64_t t = lv.offsets[i]; t < lv.offsets[i + 1]; ++t)
      if (const int j = local_column(t); j >= 0 && agg[j] < 0) agg[j] = count;
    ++count;
  }
  return count;
}

// The rows of the next level: aggregates as vertices, laid out as one block
// of `block` per rank (the first `count` real), the weights between two
// aggregates summed, those inside one dropped.
SparseRows coarse_rows(Level& lv, const std::vector<int>& agg, int count, int block,
                       const Comm& comm) {
  const int local = lv.rows.local_size(), ranks = comm.size();
  const std::int64_t first = std::int64_t(comm.rank()) * block;
  std::vector<double> id(std::size_t(std::max(1, local)), -1.0);
  for (int li = 0; li < lv.real; ++li) id[li] = double(first + agg[li]);  // exact below 2^53
  std::vector<double> all;
  lv.exchange->gather(id.data(), std::max(1, local), 1, all);
  // Entries grouped by aggregate (a counting sort), then sorted and merged.
  std::vector<std::int64_t> start(std::size_t(block) + 1, 0);
  for (int li = 0; li < lv.real; ++li) start[agg[li] + 1] += lv.offsets[li + 1] - lv.offsets[li];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<std::pair<std::int64_t, double>> e(std::size_t(start.back()));
  std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
  for (int li = 0; li < lv.real; ++li)
    for (std::int64_t t = lv.offsets[li]; t < lv.offsets[li + 1]; ++t)
      e[fill[agg[li]]++] = {static_cast<std::int64_t>(all[lv.index[t]]), lv.weight[t]};
  SparseRows c{BlockCyclic1D(std::int64_t(ranks) * block, block, comm.rank(), ranks), {}, {}, {}};
  c.offsets.assign(std::size_t(block) + 1, 0);
  for (int a = 0; a < count; ++a) {
    auto b = e.begin() + start[a], end = e.begin() + start[a + 1];
    std::sort(b, end);
    const std::int64_t self = first + a;
    for (auto it = b; it != end; ++it) {
      if (it->first == self) continue;
      if (!c.columns.empty() && std::int64_t(c.columns.size()) > c.offsets[a] &&
          c.columns.back() == it->first)
        c.values.back() += it->second;
      else
        c.columns.push_back(it->first), c.values.push_back(it->second);
    }
    c.offsets[a + 1] = static_cast<std::int64_t>(c.columns.size());
  }
  for (int a = count; a < block; ++a) c.offsets[a + 1] = c.offsets[a];
  return c;
}

}  // namespace

GraphMultigrid::~GraphMultigrid() = default;

namespace {

// The level `lv` (distributed) copied onto every rank: its vertices
// numbered rank by rank (this rank's rows from begin[rank]), rows and
// weights gathered, held under `self` as a one-rank level.
std::unique_ptr<Level> gathered_level(Level& lv, const std::vector<std::int64_t>& begin,
                                      const Comm& comm, const Comm& self) {
  const int local = lv.rows.local_size();
  const std::int64_t first = begin[comm.rank()], n = begin.back();
  std::vector<double> id(std::size_t(std::max(1, local)), -1.0);
  for (int li = 0; li < lv.real; ++li) id[li] = double(first + li);
  std::vector<double> all;
  lv.exchange->gather(id.data(), std::max(1, local), 1, all);
  std::vector<double> triplets;  // (row, column, weight), rows ascending per rank
  for (int li = 0; li < lv.real; ++li)
    for (std::int64_t t = lv.offsets[li]; t < lv.offsets[li + 1]; ++t)
      triplets.insert(triplets.end(), {double(first + li), all[lv.index[t]], lv.weight[t]});
  triplets = comm.allgatherv(triplets);
  const int rows = static_cast<int>(n);
  SparseRows c{BlockCyclic1D(n, std::max(1, rows), 0, 1), {}, {}, {}};
  c.offsets.assign(std::size_t(rows) + 1, 0);
  for (std::size_t t = 0; t < triplets.size(); t += 3) ++c.offsets[std::size_t(triplets[t]) + 1];
  std::partial_sum(c.offsets.begin(), c.offsets.end(), c.offsets.begin());
  c.columns.resize(triplets.size() / 3);
  c.values.resize(triplets.size() / 3);
  // Gathered in rank order, each rank's rows ascending: already row-sorted.
  for (std::size_t t = 0, e = 0; t < triplets.size(); t += 3, ++e) {
    c.columns[e] = static_cast<std::int64_t>(triplets[t + 1]);
    c.values[e] = triplets[t + 2];
  }
  return make_level(std::move(c), rows, self);
}

}  // namespace

GraphMultigrid::GraphMultigrid(const SparseRows& w, const Comm& comm,
                               const MultigridSettings& settings)
    : comm_(comm), self_(Comm::self()), settings_(settings) {
  const bool distributed = comm.size() > 1;
  levels_.push_back(make_level(w, w.rows.local_size(), distributed ? comm : self_));
  levels_.back()->replicated = !distributed;
  sizes_.push_back(w.rows.global_size());
  const auto gather = [&] {
    Level& lv = *levels_.back();
    const std::vector<long long> reals = comm.allgatherv(std::vector<long long>{lv.real});
    lv.gather_begin.assign(reals.size() + 1, 0);
    std::partial_sum(reals.begin(), reals.end(), lv.gather_begin.begin() + 1);
    levels_.push_back(gathered_level(lv, lv.gather_begin, comm, self_));
    levels_.back()->replicated = true;
    sizes_.push_back(sizes_.back());
  };
  while (true) {
    Level& lv = *levels_.back();
    const std::int64_t size = sizes_.back();
    if (int(levels_.size()) >= settings_.max_levels) {
      usable_ = false;
      return;
    }
    // Small levels, and levels whose vertices have too few neighbours on
    // their own rank to merge, are copied onto every rank and coarsened
    // there (every neighbour then local).
    if (!lv.replicated && size <= std::max(settings_.gather, settings_.coarsest)) {
      gather();
      continue;
    }
    if (size <= settings_.coarsest) break;
    const Comm& level_comm = lv.replicated ? self_ : comm;
    const int count = aggregate_rows(lv, lv.aggregate);
    const std::int64_t total =
        lv.replicated ? count : comm.sum(static_cast<long long>(count));
    if (total * 5 > size * 4) {  // shrinks by less than a fifth
      lv.aggregate.clear();
      if (!lv.replicated && size <= settings_.gather_stalled) {
        gather();
        continue;
      }
      if (lv.replicated && size <= kDenseLimit) break;
      usable_ = false;
      return;
    }
    const int block =
        lv.replicated ? count : static_cast<int>(std::max(1LL, comm.max(static_cast<long long>(count))));
    const bool replicated = lv.replicated;
    levels_.push_back(make_level(coarse_rows(lv, lv.aggregate, count, block, level_comm), count,
                                 level_comm));
    levels_.back()->replicated = replicated;
    sizes_.push_back(total);
  }
  // The coarsest Laplacian L (on every rank), made definite by a rank-one
  // term c 1 1^T (its right-hand sides have zero sum, so the solution is
  // L^+ b's), inverted.
  const Level& top = *levels_.back();
  const int m = top.real;
  std::vector<double> a(std::size_t(m) * m, 0.0);
  double degree_sum = 0;
  for (int i = 0; i < m; ++i) {
    a[i + std::size_t(i) * m] += top.degree[i];
    degree_sum += top.degree[i];
    for (std::int64_t t = top.offsets[i]; t < top.offsets[i + 1]; ++t)
      a[i + std::size_t(top.index[t]) * m] -= top.weight[t];
  }
  const double c = degree_sum / (double(m) * m);
  for (double& v : a) v += c;
  if (!lapack::potrf_upper(a, m)) {
    usable_ = false;  // numerically disconnected
    return;
  }
  // A^-1 = R^-1 R^-T.
  std::vector<double> rinv(std::size_t(m) * m, 0.0);
  for (int i = 0; i < m; ++i) rinv[std::size_t(i) * m + i] = 1;
  lapack::solve_right_upper(a, m, rinv.data(), m, m);
  lapack::gemm('N', 'T', m, m, m, 1.0, rinv.data(), m, rinv.data(), m, 0.0, a.data(), m);
  factor_ = std::move(a);  // two m x m arrays at most
}

void GraphMultigrid::release() {
  levels_.clear();
  std::vector<double>().swap(factor_);
  usable_ = false;
}

const std::vector<double>& GraphMultigrid::degrees() const { return levels_.front()->degree; }

void GraphMultigrid::laplacian(const double* x, int ldx, int width, double* y, int ldy) {
  apply_laplacian(*levels_.front(), x, ldx, width, y, ldy);
}

void GraphMultigrid::solve(const double* b, int ldb, int width, double* z, int ldz) {
  Level& f = *levels_.front();
  const int rows = f.rows.local_size(), ld = f.ld();
  f.b.resize(std::size_t(ld) * width);
  for (int c = 0; c < width; ++c) std::copy_n(b + std::size_t(c) * ldb, rows, &f.b[std::size_t(c) * ld]);
  cycle(0, width);
  for (int c = 0; c < width; ++c) std::copy_n(&f.x[std::size_t(c) * ld], rows, z + std::size_t(c) * ldz);
}

void GraphMultigrid::cycle(std::size_t l, int width) {
  Level& lv = *levels_[l];
  const int rows = lv.rows.local_size(), ld = lv.ld();
  const std::size_t size = std::size_t(ld) * width;
  lv.x.assign(size, 0.0);
  lv.r.resize(size);
  if (l + 1 == levels_.size()) {  // the coarsest, on every rank: x = A^-1 b
    const int m = lv.real;
    lapack::gemm('N', 'N', m, width, m, 1.0, factor_.data(), m, lv.b.data(), ld, 0.0,
                 lv.x.data(), ld);
    return;
  }
  Level& next = *levels_[l + 1];
  const int nld = next.ld();
  if (!lv.gather_begin.empty()) {
    // The next level is this one on every rank: b gathered, x this rank's part.
    std::vector<double> mine(std::size_t(lv.real) * width);
    for (int li = 0; li < lv.real; ++li)
      for (int c = 0; c < width; ++c) mine[std::size_t(li) * width + c] = lv.b[li + std::size_t(c) * ld];
    const std::vector<double> all = comm_.allgatherv(mine);  // row-major, rank by rank
    next.b.assign(std::size_t(nld) * width, 0.0);
    for (int i = 0; i < next.real; ++i)
      for (int c = 0; c < width; ++c) next.b[i + std::size_t(c) * nld] = all[std::size_t(i) * width + c];
    cycle(l + 1, width);
    const std::int64_t first = lv.gather_begin[comm_.rank()];
    for (int li = 0; li < lv.real; ++li)
      for (int c = 0; c < width; ++c)
        lv.x[li + std::size_t(c) * ld] = next.x[first + li + std::size_t(c) * nld];
    return;
  }
  const double omega = settings_.jacobi_weight;
  const auto jacobi = [&] {  // x += omega D^-1 (b - L x)
    apply_laplacian(lv, lv.x.data(), ld, width, lv.r.data(), ld);
    for (int c = 0; c < width; ++c)
      for (int i = 0; i < rows; ++i) {
        const std::size_t p = i + std::size_t(c) * ld;
        lv.x[p] += omega * (lv.b[p] - lv.r[p]) / lv.degree[i];
      }
  };
  for (int c = 0; c < width; ++c)
    for (int i = 0; i < rows; ++i) {
      const std::size_t p = i + std::size_t(c) * ld;
      lv.x[p] = omega * lv.b[p] / lv.degree[i];
    }
  for (int s = 1; s < settings_.smoothing; ++s) jacobi();
  apply_laplacian(lv, lv.x.data(), ld, width, lv.r.data(), ld);
  next.b.assign(std::size_t(nld) * width, 0.0);
  for (int c = 0; c < width; ++c)
    for (int i = 0; i < lv.real; ++i) {
      const std::size_t p = i + std::size_t(c) * ld;
      next.b[lv.aggregate[i] + std::size_t(c) * nld] += lv.b[p] - lv.r[p];
    }
  cycle(l + 1, width);
  const double alpha = settings_.correction_weight;
  for (int c = 0; c < width; ++c)
    for (int i = 0; i < lv.real; ++i)
      lv.x[i + std::size_t(c) * ld] += alpha * next.x[lv.aggregate[i] + std::size_t(c) * nld];
  for (int s = 0; s < settings_.smoothing; ++s) jacobi();
}

std::size_t GraphMultigrid::held_bytes() const {
  std::size_t b = factor_.size() * sizeof(double);
  for (const auto& lv : levels_)
    b += lv->offsets.size() * 8 + lv->index.size() * 4 + lv->weight.size() * 8 +
         lv->degree.size() * 8 + lv->aggregate.size() * 4 + lv->exchange->plan_bytes();
  return b;
}

std::size_t GraphMultigrid::work_bytes(int width) const {
  std::size_t b = 0;
  for (const auto& lv : levels_)
    b += std::size_t(lv->ld()) * width * 3 * sizeof(double) + lv->exchange->buffer_bytes(width);
  return b;
}

double multigrid_planned_bytes(double n, double local_rows, double entries, double fetched,
                               double width, const MultigridSettings& settings) {
  const double fine = entries * 12 + local_rows * (8 + 8 + 8 + 4) +
                      (4 * local_rows + fetched) * width * 8;
  const double copied = std::min(n, double(std::max(settings.gather, settings.coarsest)));
  const double per_row = 2 * entries / std::max(1.0, local_rows);
  const double replicated = copied * (per_row * 12 + 28 + 4 * width * 8);
  const double c = std::min(n, double(std::max(settings.coarsest, kDenseLimit)));
  return 1.5 * fine + 2 * replicated + 2 * c * c * 8;
}

}  // namespace kembed::graph
