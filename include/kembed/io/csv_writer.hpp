#pragma once
/// @file CSV text of result tables, in full double precision.
#include <string>
#include <vector>

#include "kembed/io/text_sink.hpp"

namespace kembed::io {

/// The CSV text of format_csv below, handed to `sink` in pieces of about
/// 1 MiB: a large table is never held as one string.
void write_csv(const TextSink& sink, const std::vector<std::string>& header,
               const std::vector<double>& values);
/// The same with a first column of row ids (see format_csv).
void write_csv(const TextSink& sink, const std::vector<std::string>& header,
               const std::vector<double>& values, const std::string& ids_header,
               const std::vector<std::string>& ids);

/// A header line with the given column names, then `rows` lines of the
/// row-major `values` (rows x header.size()), each value in the shortest
/// text that reads back as the same double (io::format_double).
std::string format_csv(const std::vector<std::string>& header, const std::vector<double>& values);

/// The same table with a first column of row ids: header `ids_header`, then
/// one id per row. Ids and names are quoted as CSV requires (see
/// csv_field()). @pre values.size() == ids.size() * header.size(), else
/// throws kembed::Error.
std::string format_csv(const std::vector<std::string>& header, const std::vector<double>& values,
                       const std::string& ids_header, const std::vector<std::string>& ids);

/// `text` as one CSV field (RFC 4180): in double quotes, with inner quotes
/// doubled, when it holds a comma, a quote, a line break or a tab, starts or
/// ends with a space, or starts with '#' (which kembed's reader would take
/// for a comment); as it is otherwise.
std::string csv_field(const std::string& text);

/// Column names prefix1, prefix2, ..., prefixK.
std::vector<std::string> numbered_columns(const std::string& prefix, int k);

}  // namespace kembed::io
