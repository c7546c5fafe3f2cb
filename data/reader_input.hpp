#pragma once
// One input file of a reader as open() found it (reader.hpp keeps the type
// opaque): reader_open.cpp fills it, reader.cpp reads through it.
#include <cstdint>
#include <string>

#include "data/reader.hpp"

namespace data {

struct reader::input_file {
  std::string path;
  std::uint64_t size = 0;         // data bytes at open() (decompressed), or line_source::unknown_size
  std::uint64_t data_begin = 0;   // first byte after the header line
  std::uint64_t global_begin = 0; // data_begin's offset in the concatenated data
  resolved_schema schema;
  resolved_schema unlabelled;     // schema without its label column (labels != required)
  bool all_unlabelled = false;    // no line of the file has the label
};

} // namespace data
