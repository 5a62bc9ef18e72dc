#include "io/csr_canonical.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kembed/core/error.hpp"

namespace kembed::io {

CsrRows canonical_rows(RawCsrRows raw, const EntryNames& names) {
  const std::int64_t local_rows = static_cast<std::int64_t>(raw.offsets.size()) - 1;
  const std::int64_t base = names.base;
  const auto row_of = [&](std::int64_t i) { return std::to_string(raw.first_row + i + base); };
  // Checks first, in file order, so the first bad entry is the one named.
  for (std::int64_t i = 0; i < local_rows; ++i) {
    for (std::int64_t k = raw.offsets[static_cast<std::size_t>(i)]; k < raw.offsets[static_cast<std::size_t>(i) + 1]; ++k) {
      const std::int64_t c = raw.columns[static_cast<std::size_t>(k)];
      const double v = raw.values[static_cast<std::size_t>(k)];
      if (c >= 0 && c < raw.cols && std::isfinite(v)) continue;
      const std::string entry = std::to_string(names.first_entry + k);
      if (c < 0 || c >= raw.cols)
        throw Error(names.indices + "[" + entry + "] (row " + row_of(i) + "): column " + std::to_string(c + base) +
                    " is outside " + std::to_string(base) + ".." + std::to_string(raw.cols - 1 + base));
      throw Error(names.values + "[" + entry + "] (row " + row_of(i) + ", column " + std::to_string(c + base) +
                  "): non-finite value (" + std::to_string(v) + ")");
    }
  }
  CsrRows out;
  out.rows = raw.rows;
  out.cols = raw.cols;
  out.first_row = raw.first_row;
  bool all_canonical = true;
  for (std::int64_t i = 0; i < local_rows && all_canonical; ++i)
    for (std::int64_t k = raw.offsets[static_cast<std::size_t>(i)] + 1; k < raw.offsets[static_cast<std::size_t>(i) + 1]; ++k)
      if (raw.columns[static_cast<std::size_t>(k) - 1] >= raw.columns[static_cast<std::size_t>(k)]) {
        all_canonical = false;
        break;
      }
  if (all_canonical) {
    // The usual file (scipy and anndata write canonical rows): the values
    // and offsets are kept as read, the columns narrowed, with no second
    // copy of the values at any time.
    out.columns.assign(raw.columns.begin(), raw.columns.end());
    raw.columns = {};
    out.values = std::move(raw.values);
    out.offsets = std::move(raw.offsets);
    return out;
  }
  out.offsets.assign(1, 0);
  out.offsets.reserve(static_cast<std::size_t>(local_rows) + 1);
  out.columns.reserve(raw.columns.size());
  out.values.reserve(raw.values.size());
  std::vector<std::int64_t> order;
  for (std::int64_t i = 0; i < local_rows; ++i) {
    const std::int64_t begin = raw.offsets[static_cast<std::size_t>(i)];
    const std::int64_t end = raw.offsets[static_cast<std::size_t>(i) + 1];
    bool canonical = true;
    for (std::int64_t k = begin + 1; k < end && canonical; ++k)
      canonical = raw.columns[static_cast<std::size_t>(k - 1)] < raw.columns[static_cast<std::size_t>(k)];
    if (canonical) {
      for (std::int64_t k = begin; k < end; ++k) {
        out.columns.push_back(static_cast<std::int32_t>(raw.columns[static_cast<std::size_t>(k)]));
        out.values.push_back(raw.values[static_cast<std::size_t>(k)]);
      }
    } else {
      // A stable sort keeps repeats in file order: their sum is the same
      // whatever the rank count.
      order.resize(static_cast<std::size_t>(end - begin));
      std::iota(order.begin(), order.end(), begin);
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return raw.columns[static_cast<std::size_t>(a)] < raw.columns[static_cast<std::size_t>(b)];
      });
      const std::size_t row_start = out.columns.size();
      for (std::int64_t k : order) {
        const auto c = static_cast<std::int32_t>(raw.columns[static_cast<std::size_t>(k)]);
        const double v = raw.values[static_cast<std::size_t>(k)];
        if (out.columns.size() > row_start && out.columns.back() == c) {
          out.values.back() += v;
        } else {
          out.columns.push_back(c);
          out.values.push_back(v);
        }
      }
      for (std::size_t k = row_start; k < out.columns.size(); ++k)
        if (!std::isfinite(out.values[k]))
          throw Error(names.file + ": row " + row_of(i) + ", column " + std::to_string(out.columns[k] + base) +
                      ": the repeated entries sum to a non-finite value");
    }
    out.offsets.push_back(static_cast<std::int64_t>(out.columns.size()));
  }
  return out;
}

}  // namespace kembed::io
