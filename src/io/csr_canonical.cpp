#include "io/csr_canonical.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kembed/core/error.hpp"

namespace kembed::io {

void RawCsrRows::append_columns(const std::int64_t* stored, std::size_t count) {
  columns.reserve(columns.size() + count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::int64_t c = stored[k];
    if (c >= 0 && c < cols) {
      columns.push_back(static_cast<std::int32_t>(c));
      continue;
    }
    if (first_bad_entry < 0) {
      first_bad_entry = static_cast<std::int64_t>(columns.size());
      first_bad_column = c;
    }
    columns.push_back(-1);
  }
}

CsrRows canonical_rows(RawCsrRows raw, const EntryNames& names) {
  const std::int64_t local_rows = static_cast<std::int64_t>(raw.offsets.size()) - 1;
  const std::int64_t base = names.base;
  const auto row_of = [&](std::int64_t i) { return std::to_string(raw.first_row + i + base); };
  // Checks first, in file order, so the first bad entry is the one named.
  for (std::int64_t i = 0; i < local_rows; ++i) {
    for (std::int64_t k = raw.offsets[static_cast<std::size_t>(i)]; k < raw.offsets[static_cast<std::size_t>(i) + 1]; ++k) {
      const std::int32_t c = raw.columns[static_cast<std::size_t>(k)];
      const double v = raw.values[static_cast<std::size_t>(k)];
      if (c >= 0 && std::isfinite(v)) continue;
      const std::string entry = std::to_string(names.first_entry + k);
      if (c < 0)
        throw Error(names.indices + "[" + entry + "] (row " + row_of(i) + "): column " +
                    std::to_string(raw.first_bad_column + base) + " is outside " + std::to_string(base) + ".." +
                    std::to_string(raw.cols - 1 + base));
      throw Error(names.values + "[" + entry + "] (row " + row_of(i) + ", column " + std::to_string(c + base) +
                  "): non-finite value (" + std::to_string(v) + ")");
    }
  }
  // Each row is sorted and its repeats summed into the front of the same
  // arrays (a row never ends up longer than it was read, so the write
  // position never passes the read position).
  std::vector<std::int64_t> order;
  std::vector<std::int32_t> row_columns;
  std::vector<double> row_values;
  std::int64_t begin = 0, written = 0;
  for (std::int64_t i = 0; i < local_rows; ++i) {
    const std::int64_t end = raw.offsets[static_cast<std::size_t>(i) + 1];
    bool canonical = true;
    for (std::int64_t k = begin + 1; k < end && canonical; ++k)
      canonical = raw.columns[static_cast<std::size_t>(k - 1)] < raw.columns[static_cast<std::size_t>(k)];
    const std::int64_t row_start = written;
    if (canonical) {
      if (written != begin) {
        std::copy(raw.columns.begin() + begin, raw.columns.begin() + end, raw.columns.begin() + written);
        std::copy(raw.values.begin() + begin, raw.values.begin() + end, raw.values.begin() + written);
      }
      written += end - begin;
    } else {
      // A stable sort keeps repeats in file order: their sum is the same
      // whatever the rank count.
      order.resize(static_cast<std::size_t>(end - begin));
      std::iota(order.begin(), order.end(), begin);
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return raw.columns[static_cast<std::size_t>(a)] < raw.columns[static_cast<std::size_t>(b)];
      });
      row_columns.clear();
      row_values.clear();
      for (std::int64_t k : order) {
        const std::int32_t c = raw.columns[static_cast<std::size_t>(k)];
        const double v = raw.values[static_cast<std::size_t>(k)];
        if (!row_columns.empty() && row_columns.back() == c) {
          row_values.back() += v;
        } else {
          row_columns.push_back(c);
          row_values.push_back(v);
        }
      }
      for (std::size_t k = 0; k < row_columns.size(); ++k)
        if (!std::isfinite(row_values[k]))
          throw Error(names.file + ": row " + row_of(i) + ", column " + std::to_string(row_columns[k] + base) +
                      ": the repeated entries sum to a non-finite value");
      std::copy(row_columns.begin(), row_columns.end(), raw.columns.begin() + written);
      std::copy(row_values.begin(), row_values.end(), raw.values.begin() + written);
      written += static_cast<std::int64_t>(row_columns.size());
    }
    raw.offsets[static_cast<std::size_t>(i)] = row_start;
    begin = end;
  }
  raw.offsets[static_cast<std::size_t>(local_rows)] = written;
  raw.columns.resize(static_cast<std::size_t>(written));
  raw.values.resize(static_cast<std::size_t>(written));
  CsrRows out;
  out.rows = raw.rows;
  out.cols = raw.cols;
  out.first_row = raw.first_row;
  out.offsets = std::move(raw.offsets);
  out.columns = std::move(raw.columns);
  out.values = std::move(raw.values);
  return out;
}

}  // namespace kembed::io
