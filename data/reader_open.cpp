// reader::open: expands the inputs, probes every file (size, header,
// schema) and computes this reader's part of the concatenated data; and
// measure_compressed_inputs. Reading is in reader.cpp.
#include "data/byte_stream.hpp"
#include "data/input_files.hpp"
#include "data/reader.hpp"
#include "data/reader_input.hpp"

#include <algorithm>

namespace data {

namespace {

// floor(total * i / n) without overflowing 64 bits.
std::uint64_t split_point(std::uint64_t total, std::uint64_t i, std::uint64_t n) {
  return (total / n) * i + (total % n) * i / n;
}

// The layout without its label column: the fields after it move one left.
resolved_schema drop_label(resolved_schema s) {
  const std::size_t label = s.label_column;
  s.roles.erase(s.roles.begin() + std::ptrdiff_t(label));
  s.names.erase(s.names.begin() + std::ptrdiff_t(label));
  s.num_columns -= 1;
  s.label_column = ~std::size_t(0);
  if (s.user_column != resolved_schema::no_user && s.user_column > label)
    s.user_column -= 1;
  return s;
}

// Resolves f's labelled and (labels != required) unlabelled schemas.
bool resolve_file(const reader_options& o, const std::vector<std::string>* header,
                  resolved_schema* schema, resolved_schema* unlabelled, bool* all_unlabelled,
                  const std::string& path, std::string* error) {
  *all_unlabelled = o.labels == label_presence::absent;
  if (o.labels != label_presence::required && header && o.schema.label.by_name() &&
      std::find(header->begin(), header->end(), o.schema.label.name) == header->end()) {
    // The header decides: no label column in this file. Resolve as if the
    // label were a first column, then drop it.
    std::vector<std::string> with_label{o.schema.label.name};
    with_label.insert(with_label.end(), header->begin(), header->end());
    *all_unlabelled = true;
    header = &with_label;
    if (!resolve_schema(o.schema, header, path, schema, error))
      return false;
  } else {
    if (header && o.labels != label_presence::required)
      *all_unlabelled = false; // the header names the label: lines have it
    if (!resolve_schema(o.schema, header, path, schema, error))
      return false;
  }
  if (o.labels == label_presence::required)
    return true;
  if (schema->num_columns < 2) {
    *error = path + ": a layout of the label alone has nothing to read without it";
    return false;
  }
  *unlabelled = drop_label(*schema);
  return true;
}

} // namespace

std::unique_ptr<reader> reader::open(const reader_options& options, std::string* error_out) {
  std::string ignored;
  std::string* error = error_out ? error_out : &ignored;
  if (options.files.empty()) {
    *error = "no input files given";
    return nullptr;
  }
  if (options.num_parts == 0 || options.part >= options.num_parts) {
    *error = "input part " + std::to_string(options.part) + " of " + std::to_string(options.num_parts) +
             " is out of range: expected 0 <= part < num_parts";
    return nullptr;
  }
  std::vector<std::string> files;
  if (!expand_inputs(options.files, &files, error))
    return nullptr;
  std::unique_ptr<reader> r(new reader(options));
  r->options_.files = files;
  std::uint64_t total = 0;
  for (const std::string& path : files) {
    input_file f;
    f.path = path;
    if (is_stdin(path) && options.num_parts > 1) {
      *error = "standard input ('-') cannot be split into " + std::to_string(options.num_parts) +
               " parts (one per trainer): it is read once, by one reader; give a file, or use one "
               "trainer (cluster.trainers=1 or cluster.mode=sequential)";
      return nullptr;
    }
    std::string header;
    bool has_newline = false;
    const bool split = options.num_parts > 1;
    const std::uint64_t* known = nullptr; // measured before (known_sizes)
    if (split && options.known_sizes) {
      const auto it = options.known_sizes->find(path);
      if (it != options.known_sizes->end())
        known = &it->second;
    }
    if (!probe_file(path, options.schema.header, split && !known, &f.size, &header, &has_newline, error))
      return nullptr;
    if (known && f.size == line_source::unknown_size) // compressed
      f.size = *known;
    std::vector<std::string> header_fields;
    if (options.schema.header) {
      if (f.size == 0 || (header.empty() && !has_newline)) {
        *error = path + ": expected a header line naming the columns, but the file is empty";
        return nullptr;
      }
      header_fields = split_header(header, options.schema.delimiter);
      f.data_begin = has_newline ? header.size() + 1 : header.size();
    }
    if (!resolve_file(options, options.schema.header ? &header_fields : nullptr, &f.schema,
                      &f.unlabelled, &f.all_unlabelled, path, error))
      return nullptr;
    f.global_begin = total;
    if (f.size != line_source::unknown_size) // unknown only with one part: then not needed
      total += f.size - f.data_begin;
    r->files_.push_back(std::move(f));
  }
  r->num_dense_ = r->files_.front().schema.num_dense;
  r->num_cat_ = r->files_.front().schema.num_cat;
  r->part_begin_ = split_point(total, options.part, options.num_parts);
  r->part_end_ = split_point(total, options.part + 1, options.num_parts);
  return r;
}

input_sizes measure_compressed_inputs(const std::vector<std::string>& entries) {
  input_sizes sizes;
  std::vector<std::string> files;
  std::string error;
  if (!expand_inputs(entries, &files, &error))
    return sizes;
  for (const auto& path : files) {
    if (is_stdin(path) || sniff_compression(path) == compression::none || sizes.count(path))
      continue;
    std::uint64_t size = 0;
    std::string first_line;
    bool has_newline = false;
    if (probe_file(path, false, true, &size, &first_line, &has_newline, &error))
      sizes.emplace(path, size);
  }
  return sizes;
}

} // namespace data
