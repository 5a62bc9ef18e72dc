#include "kembed/io/csv_writer.hpp"

#include <algorithm>

#include "kembed/core/error.hpp"
#include "kembed/io/format_double.hpp"

namespace kembed::io {

namespace {

constexpr std::size_t kPieceBytes = std::size_t{1} << 20;

/// Hands `values` (rows x cols, row-major) as CSV lines, each led by
/// `ids[i]` when ids are given, to `sink` in pieces of about kPieceBytes.
/// Numbers go straight into the piece's storage: formatting, not
/// allocation, is what a large table costs.
void write_rows(const TextSink& sink, const std::vector<double>& values, std::size_t cols,
                const std::vector<std::string>* ids) {
  std::string piece(kPieceBytes + 2 * (kMaxDoubleChars + 1), '\0');
  std::size_t at = 0;
  const auto flush = [&] {
    sink(std::string_view(piece.data(), at));
    at = 0;
  };
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (ids && i % cols == 0) {
      const std::string field = csv_field((*ids)[i / cols]) + ',';
      if (at + field.size() > piece.size()) flush();
      if (field.size() > piece.size()) {
        sink(field);
      } else {
        at = field.copy(&piece[at], field.size()) + at;
      }
    }
    if (at + kMaxDoubleChars + 1 > piece.size()) flush();
    char* end = format_double(&piece[at], values[i]);
    *end++ = (i + 1) % cols == 0 ? '\n' : ',';
    at = static_cast<std::size_t>(end - piece.data());
    if (at >= kPieceBytes) flush();
  }
  if (at > 0) flush();
}

}  // namespace

void write_csv(const TextSink& sink, const std::vector<std::string>& header,
               const std::vector<double>& values) {
  std::string head;
  for (std::size_t j = 0; j < header.size(); ++j) head += (j ? "," : "") + header[j];
  head += '\n';
  sink(head);
  write_rows(sink, values, header.size(), nullptr);
}

void write_csv(const TextSink& sink, const std::vector<std::string>& header,
               const std::vector<double>& values, const std::string& ids_header,
               const std::vector<std::string>& ids) {
  if (header.empty() || values.size() != ids.size() * header.size())
    throw Error("format_csv: " + std::to_string(ids.size()) + " row ids for " + std::to_string(values.size()) +
                " values in " + std::to_string(header.size()) + " columns");
  std::string head = csv_field(ids_header);
  for (const std::string& name : header) head += ',' + csv_field(name);
  head += '\n';
  sink(head);
  write_rows(sink, values, header.size(), &ids);
}

std::string format_csv(const std::vector<std::string>& header, const std::vector<double>& values) {
  std::string out;
  write_csv([&](std::string_view piece) { out.append(piece); }, header, values);
  return out;
}

std::string format_csv(const std::vector<std::string>& header, const std::vector<double>& values,
                       const std::string& ids_header, const std::vector<std::string>& ids) {
  std::string out;
  write_csv([&](std::string_view piece) { out.append(piece); }, header, values, ids_header, ids);
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
