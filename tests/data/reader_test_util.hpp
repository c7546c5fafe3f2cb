#pragma once
// Helpers for the reader tests: a scratch directory and "read everything".
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "data/reader.hpp"

namespace reader_test {

// A fresh directory under the system temp dir, removed with its contents.
class temp_dir {
public:
  temp_dir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("ss-reader-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  // Writes `content` byte for byte; returns the file's path.
  std::string write(const std::string& name, const std::string& content) const {
    const std::string p = (path_ / name).string();
    std::ofstream out(p, std::ios::binary);
    out << content;
    return p;
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

// label, I1..I13, C1..C26 joined by tabs; short vectors leave fields out.
inline std::string criteo_line(const std::string& label, const std::vector<std::string>& ints,
                               const std::vector<std::string>& cats) {
  std::string line = label;
  for (std::size_t i = 0; i < 13; ++i)
    line += "\t" + (i < ints.size() ? ints[i] : std::string());
  for (std::size_t i = 0; i < 26; ++i)
    line += "\t" + (i < cats.size() ? cats[i] : std::string());
  return line;
}

struct read_result {
  std::string open_error;
  std::string error;
  data::batch all; // every example, concatenated
  data::reader::stats stats;
  std::size_t batches = 0;
};

// Opens and reads everything in batches of `batch_size`.
inline read_result read_all(const data::reader_options& options, std::size_t batch_size = 3) {
  read_result r;
  auto rd = data::reader::open(options, &r.open_error);
  if (!rd)
    return r;
  data::batch b;
  for (;;) {
    b.clear();
    const bool more = rd->next(b, batch_size);
    r.all.num_dense = b.num_dense;
    r.all.num_cat = b.num_cat;
    r.all.size += b.size;
    r.all.labels.insert(r.all.labels.end(), b.labels.begin(), b.labels.end());
    r.all.dense.insert(r.all.dense.end(), b.dense.begin(), b.dense.end());
    if (b.multi_hot()) { // bags: offsets continue from the ids already gathered
      const auto base = static_cast<std::uint32_t>(r.all.cat.size());
      if (r.all.cat_offsets.empty())
        r.all.cat_offsets.push_back(0);
      for (std::size_t k = 1; k < b.cat_offsets.size(); ++k)
        r.all.cat_offsets.push_back(base + b.cat_offsets[k]);
    }
    r.all.cat.insert(r.all.cat.end(), b.cat.begin(), b.cat.end());
    r.all.users.insert(r.all.users.end(), b.users.begin(), b.users.end());
    if (!more)
      break;
    ++r.batches;
  }
  r.error = rd->error();
  r.stats = rd->statistics();
  return r;
}

inline data::reader_options options_for(std::vector<std::string> files) {
  data::reader_options o;
  o.files = std::move(files);
  return o;
}

} // namespace reader_test
