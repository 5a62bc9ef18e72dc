#include "kembed/app/config_file.hpp"

#include <iterator>
#include <sstream>

#include "kembed/core/error.hpp"

namespace po = boost::program_options;

namespace kembed::app {

void reject_option_placeholders(std::string_view text, const std::string& where) {
  auto is_name_char = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  for (std::size_t open = text.find('%'); open != std::string_view::npos;) {
    std::size_t end = open + 1;
    while (end < text.size() && is_name_char(text[end])) ++end;
    if (end < text.size() && text[end] == '%' && end > open + 1)
      throw Error(where + ": '" + std::string(text.substr(open, end - open + 1)) +
                  "' cannot appear in an option name or value");
    open = text.find('%', open + 1);
  }
}

void parse_config(std::istream& in, const po::options_description& options, const std::string& path,
                  po::variables_map& vm) {
  const std::string text(std::istreambuf_iterator<char>(in), {});
  reject_option_placeholders(text, path);
  std::istringstream lines(text);
  try {
    po::store(po::parse_config_file(lines, options, false), vm);
  } catch (const po::error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace kembed::app
