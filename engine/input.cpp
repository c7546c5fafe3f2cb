#include "engine/input.hpp"

#include "config/option_values.hpp"
#include "data/byte_stream.hpp"
#include "data/input_files.hpp"

#include <filesystem>

#include <spdlog/spdlog.h>

namespace runtime {

data::reader_options reader_options_for(const train_config& cfg,
                                        const std::vector<std::string>& files, std::size_t part,
                                        std::size_t num_parts) {
  data::reader_options ro;
  ro.files = files;
  ro.schema = cfg.data.schema;
  ro.strict = cfg.data.strict;
  ro.whole_lines = cfg.data.whole_lines;
  ro.max_logged_errors = cfg.data.max_logged_errors;
  ro.part = part;
  ro.num_parts = num_parts;
  return ro;
}

std::unique_ptr<data::reader> open_reader(const train_config& cfg,
                                          const std::vector<std::string>& files,
                                          std::string* err) {
  return data::reader::open(reader_options_for(cfg, files), err);
}

void log_malformed(const data::reader& r, const char* what) {
  const auto& st = r.statistics();
  for (const auto& e : st.first_errors)
    spdlog::warn("malformed {} line skipped: {}", what, e);
  if (st.malformed > st.first_errors.size())
    spdlog::warn("{} more malformed {} lines skipped (not shown)",
                 st.malformed - st.first_errors.size(), what);
  if (st.cut_bags > 0)
    spdlog::warn("{}", st.cut_bags_note(what));
}

std::string empty_set_error(const char* what, const std::vector<std::string>& files,
                            std::uint64_t malformed) {
  return std::string("the ") + what + " set is empty: no valid example in " +
         (files.empty() ? std::string("(no files)") : detail::join(files, "'", "'")) + " (" +
         std::to_string(malformed) + " malformed line" + (malformed == 1 ? "" : "s") +
         " skipped)";
}

std::uint64_t total_bytes(const std::vector<std::string>& entries) {
  std::vector<std::string> files;
  std::string ignored; // the reader reports a bad entry
  if (!data::expand_inputs(entries, &files, &ignored))
    return 0;
  std::uint64_t n = 0;
  std::error_code ec;
  for (const auto& f : files) {
    // Compressed data and standard input have no size before they are read.
    if (data::is_stdin(f) || data::sniff_compression(f) != data::compression::none)
      return 0;
    auto s = std::filesystem::file_size(f, ec);
    n += ec ? 0 : s;
  }
  return n;
}

} // namespace runtime
