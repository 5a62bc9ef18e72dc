#include "kembed/io/csv_writer.hpp"

#include <cstdio>

namespace kembed::io {

std::string format_csv(const std::vector<std::string>& header, const std::vector<double>& values) {
  std::string out;
  for (std::size_t j = 0; j < header.size(); ++j) out += (j ? "," : "") + header[j];
  out += '\n';
  const std::size_t cols = header.size();
  out.reserve(out.size() + values.size() * 24);
  char buffer[40];
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int len = std::snprintf(buffer, sizeof buffer, "%.17g", values[i]);
    out.append(buffer, static_cast<std::size_t>(len));
    out += (i + 1) % cols == 0 ? '\n' : ',';
  }
  return out;
}

std::vector<std::string> numbered_columns(const std::string& prefix, int k) {
  std::vector<std::string> names;
  for (int j = 1; j <= k; ++j) names.push_back(prefix + std::to_string(j));
  return names;
}

}  // namespace kembed::io
