#include "kembed/io/csv_writer.hpp"

#include <algorithm>

#include "kembed/core/error.hpp"
#include "kembed/io/format_double.hpp"

namespace kembed::io {

namespace {

/// Appends `values` (rows x cols, row-major) as CSV lines, each led by
/// `ids[i]` when ids are given. Numbers go straight into the string's
/// storage: formatting, not allocation, is what a large table costs.
void append_rows(std::string& out, const std::vector<double>& values, std::size_t cols,
                 const std::vector<std::string>* ids) {
  std::size_t at = out.size();
  // Grows the string geometrically; `at` marks the end of what is written.
  const auto room = [&](std::size_t need) {
    if (out.size() < at + need) out.resize(std::max(at + need, 2 * out.size()));
  };
  room(values.size() * 20);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (ids && i % cols == 0) {
      const std::string field = csv_field((*ids)[i / cols]) + ',';
      room(field.size());
      at = field.copy(&out[at], field.size()) + at;
    }
    room(kMaxDoubleChars + 1);
    char* end = format_double(&out[at], values[i]);
    *end++ = (i + 1) % cols == 0 ? '\n' : ',';
    at = static_cast<std::size_t>(end - out.data());
  }
  out.resize(at);
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
