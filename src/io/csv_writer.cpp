#include "kembed/io/csv_writer.hpp"

#include <cstdio>

#include "kembed/core/error.hpp"

namespace kembed::io {

namespace {

/// Appends `values` (rows x cols, row-major) as CSV lines, each led by
/// `ids[i]` when ids are given.
void append_rows(std::string& out, const std::vector<double>& values, std::size_t cols,
                 const std::vector<std::string>* ids) {
  out.reserve(out.size() + values.size() * 24);
  char buffer[40];
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (ids && i % cols == 0) out += csv_field((*ids)[i / cols]) + ',';
    const int len = std::snprintf(buffer, sizeof buffer, "%.17g", values[i]);
    out.append(buffer, static_cast<std::size_t>(len));
    out += (i + 1) % cols == 0 ? '\n' : ',';
  }
}

}  // namespace

std::string format_csv(const std::vector<std::string>& header, const std::vector<double>& values) {
  std::string out;
  for (std::size_t j = 0; j < header.size(); ++j) out += (j ? "," : "") + header[j];
  out += '\n';
  append_rows(out, values, header.size(), nullptr);
  return out;
}

std::string format_csv(const std::vector<std::string>& header, const std::vector<double>& values,
                       const std::string& ids_header, const std::vector<std::string>& ids) {
  if (header.empty() || values.size() != ids.size() * header.size())
    throw Error("format_csv: " + std::to_string(ids.size()) + " row ids for " + std::to_string(values.size()) +
                " values in " + std::to_string(header.size()) + " columns");
  std::string out = csv_field(ids_header);
  for (const std::string& name : header) out += ',' + csv_field(name);
  out += '\n';
  append_rows(out, values, header.size(), &ids);
  return out;
}

std::string csv_field(const std::string& text) {
  const bool quote = text.find_first_of(",\"\r\n\t") != std::string::npos ||
                     (!text.empty() && (text.front() == ' ' || text.back() == ' ' || text.front() == '#'));
  if (!quote) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + '"';
}

std::vector<std::string> numbered_columns(const std::string& prefix, int k) {
  std::vector<std::string> names;
  for (int j = 1; j <= k; ++j) names.push_back(prefix + std::to_string(j));
  return names;
}

}  // namespace kembed::io
