#include "data/reader.hpp"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <system_error>


namespace data {

struct reader::input_file {
  std::string path;
  std::uint64_t size = 0;         // bytes at open()
  std::uint64_t data_begin = 0;   // first byte after the header line
  std::uint64_t global_begin = 0; // data_begin's offset in the concatenated data
  resolved_schema schema;
};

namespace {

std::string errno_text(int err) { return err ? std::strerror(err) : "unknown error"; }

// floor(total * i / n) without overflowing 64 bits.
std::uint64_t split_point(std::uint64_t total, std::uint64_t i, std::uint64_t n) {
  return (total / n) * i + (total % n) * i / n;
}

bool seek(std::FILE* fp, std::uint64_t offset) {
  // std::fseek takes a long: 64 bits on the LP64 platforms we build for.
  static_assert(sizeof(long) >= 8, "files over 2 GiB need a 64-bit long");
  return std::fseek(fp, static_cast<long>(offset), SEEK_SET) == 0;
}

// Opens `path`, takes its size and, when `want_header`, its first line.
bool probe_file(const std::string& path, bool want_header, std::uint64_t* size, std::string* header,
                bool* has_newline, std::string* error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = "cannot read '" + path + "': it is a directory";
    return false;
  }
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) {
    *error = "cannot open '" + path + "': " + errno_text(errno);
    return false;
  }
  bool ok = std::fseek(fp, 0, SEEK_END) == 0;
  const long end = ok ? std::ftell(fp) : -1;
  ok = end >= 0 && seek(fp, 0);
  *size = ok ? static_cast<std::uint64_t>(end) : 0;
  *has_newline = false;
  if (ok && want_header) {
    char chunk[1 << 16];
    while (header->size() < *size) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof chunk, *size - header->size()));
      const std::size_t got = std::fread(chunk, 1, want, fp);
      if (got != want) {
        ok = false;
        break;
      }
      const char* nl = static_cast<const char*>(std::memchr(chunk, '\n', got));
      header->append(chunk, nl ? static_cast<std::size_t>(nl - chunk) : got);
      if (nl) {
        *has_newline = true;
        break;
      }
    }
  }
  if (!ok)
    *error = "cannot read '" + path + "': " + errno_text(errno);
  std::fclose(fp);
  return ok;
}

} // namespace

reader::reader(reader_options options) : options_(std::move(options)) {
  buf_.resize(std::max<std::size_t>(options_.chunk_bytes, 1));
}

reader::~reader() { close_file(); }

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
  std::unique_ptr<reader> r(new reader(options));
  std::uint64_t total = 0;
  for (const std::string& path : options.files) {
    input_file f;
    f.path = path;
    std::string header;
    bool has_newline = false;
    if (!probe_file(path, options.schema.header, &f.size, &header, &has_newline, error))
      return nullptr;
    std::vector<std::string> header_fields;
    if (options.schema.header) {
      if (f.size == 0) {
        *error = path + ": expected a header line naming the columns, but the file is empty";
        return nullptr;
      }
      header_fields = split_header(header, options.schema.delimiter);
      f.data_begin = has_newline ? header.size() + 1 : f.size;
    }
    if (!resolve_schema(options.schema, options.schema.header ? &header_fields : nullptr, path, &f.schema,
                        error))
      return nullptr;
    f.global_begin = total;
    total += f.size - f.data_begin;
    r->files_.push_back(std::move(f));
  }
  r->num_dense_ = r->files_.front().schema.num_dense;
  r->num_cat_ = r->files_.front().schema.num_cat;
  r->part_begin_ = split_point(total, options.part, options.num_parts);
  r->part_end_ = split_point(total, options.part + 1, options.num_parts);
  return r;
}

void reader::reset() {
  close_file();
  file_ = 0;
  stats_ = stats{};
  error_.clear();
  done_ = false;
}

bool reader::fail(std::string message) {
  error_ = std::move(message);
  return false;
}

void reader::close_file() {
  if (fp_)
    std::fclose(fp_);
  fp_ = nullptr;
  // Empty lines not followed by data were the end of the file: not malformed.
  pending_blanks_ = 0;
  pending_blank_index_.clear();
  skipping_ = false;
}

bool reader::open_file() {
  for (; file_ < files_.size(); ++file_) {
    const input_file& f = files_[file_];
    const std::uint64_t global_end = f.global_begin + (f.size - f.data_begin);
    const std::uint64_t lo = std::max(part_begin_, f.global_begin);
    const std::uint64_t hi = std::min(part_end_, global_end);
    if (lo >= hi)
      continue; // no byte of this file is in our part
    fp_ = std::fopen(f.path.c_str(), "rb");
    if (!fp_)
      return fail("cannot open '" + f.path + "': " + errno_text(errno));
    std::setvbuf(fp_, nullptr, _IONBF, 0); // we read in large chunks ourselves
    parser_ = line_parser(&f.schema);
    const std::uint64_t start = f.data_begin + (lo - f.global_begin);
    stop_off_ = f.data_begin + (hi - f.global_begin);
    // Starting mid-file: our first line is the one after the first '\n' at or
    // after start-1, i.e. the first line beginning at or after start.
    skipping_ = start > f.data_begin;
    const std::uint64_t from = skipping_ ? start - 1 : start;
    if (!seek(fp_, from))
      return fail("cannot read '" + f.path + "': " + errno_text(errno));
    buf_off_ = read_off_ = from;
    beg_ = end_ = 0;
    eof_ = read_off_ >= f.size;
    first_line_off_ = start;
    base_line_ = 0;
    line_index_ = 0;
    return true;
  }
  done_ = true;
  return false;
}

bool reader::refill() {
  const input_file& f = files_[file_];
  if (beg_ > 0) {
    std::memmove(buf_.data(), buf_.data() + beg_, end_ - beg_);
    buf_off_ += beg_;
    end_ -= beg_;
    beg_ = 0;
  }
  if (end_ == buf_.size())
    buf_.resize(buf_.size() * 2); // a line longer than the buffer
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size() - end_, f.size - read_off_));
  const std::size_t got = want ? std::fread(buf_.data() + end_, 1, want, fp_) : 0;
  if (got != want)
    return fail(std::ferror(fp_) ? "cannot read '" + f.path + "': " + errno_text(errno)
                                 : f.path + ": the file got shorter while it was being read");
  end_ += got;
  read_off_ += got;
  eof_ = read_off_ >= f.size;
  return true;
}

std::uint64_t reader::line_number(std::uint64_t line_index) {
  if (base_line_ == 0) {
    const input_file& f = files_[file_];
    if (first_line_off_ == f.data_begin) {
      base_line_ = options_.schema.header ? 2 : 1;
    } else {
      // A part that starts mid-file learns its line numbers only when it has
      // something to report: count the newlines before it once.
      std::FILE* fp = std::fopen(f.path.c_str(), "rb");
      if (!fp)
        return 0;
      std::uint64_t newlines = 0, left = first_line_off_;
      std::vector<char> chunk(std::size_t(1) << 20);
      while (left > 0) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), left));
        if (std::fread(chunk.data(), 1, want, fp) != want)
          break;
        newlines += static_cast<std::uint64_t>(std::count(chunk.data(), chunk.data() + want, '\n'));
        left -= want;
      }
      std::fclose(fp);
      if (left > 0)
        return 0;
      base_line_ = newlines + 1;
    }
  }
  return base_line_ + line_index;
}

bool reader::malformed(std::uint64_t line_index, const std::string& message) {
  ++stats_.malformed;
  ++stats_.lines;
  if (stats_.first_errors.size() >= options_.max_logged_errors && !options_.strict)
    return true;
  const std::uint64_t line = line_number(line_index);
  const std::string full = files_[file_].path + ":" + (line ? std::to_string(line) : "?") + ": " + message;
  if (stats_.first_errors.size() < options_.max_logged_errors)
    stats_.first_errors.push_back(full);
  return options_.strict ? fail(full) : true;
}

bool reader::flush_pending_blanks() {
  const std::string message =
      "empty line: expected a label and up to " + std::to_string(files_[file_].schema.num_columns) + " fields";
  for (std::uint64_t i = 0; i < pending_blanks_; ++i) {
    if (i < pending_blank_index_.size()) {
      if (!malformed(pending_blank_index_[i], message))
        return false;
    } else { // beyond the messages we keep: count only
      ++stats_.malformed;
      ++stats_.lines;
    }
  }
  pending_blanks_ = 0;
  pending_blank_index_.clear();
  return true;
}

bool reader::next(batch& out, std::size_t max_examples) {
  if (!error_.empty() || done_ || max_examples == 0)
    return false;
  if (out.size == 0) {
    out.num_dense = num_dense_;
    out.num_cat = num_cat_;
  }
  assert(out.num_dense == num_dense_ && out.num_cat == num_cat_ && "batch holds another schema's examples");
  const std::size_t first = out.size, limit = out.size + max_examples;
  // Write in place; resize() keeps capacity, so steady state allocates nothing.
  out.labels.resize(limit);
  out.dense.resize(limit * num_dense_);
  out.cat.resize(limit * num_cat_);
  std::size_t n = first;
  bool ok = true;
  while (n < limit) {
    if (!fp_ && !open_file()) {
      ok = error_.empty();
      break;
    }
    const char* const base = buf_.data();
    const char* const b = base + beg_;
    const char* const e = base + end_;
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', static_cast<std::size_t>(e - b)));
    if (skipping_) { // discard the line that belongs to the previous part
      if (!nl) {
        beg_ = end_;
        if (eof_) {
          close_file();
          ++file_;
        } else if (!refill()) {
          ok = false;
          break;
        }
        continue;
      }
      beg_ = static_cast<std::size_t>(nl - base) + 1;
      skipping_ = false;
      first_line_off_ = buf_off_ + beg_;
      continue;
    }
    if (!nl) {
      if (!eof_) {
        if (!refill()) {
          ok = false;
          break;
        }
        continue;
      }
      if (b == e) {
        close_file();
        ++file_;
        continue;
      }
      nl = e; // last line without a newline
    }
    const std::uint64_t offset = buf_off_ + beg_;
    beg_ = nl == e ? end_ : static_cast<std::size_t>(nl - base) + 1;
    std::size_t len = static_cast<std::size_t>(nl - b);
    if (len > 0 && b[len - 1] == '\r')
      --len;
    if (offset >= stop_off_) {
      // Past our part. Only pending empty lines still need a decision: they
      // are malformed if data follows in this file, ignored if the file ends.
      if (pending_blanks_ > 0 && len == 0)
        continue;
      if (pending_blanks_ > 0 && !flush_pending_blanks()) {
        ok = false;
        break;
      }
      close_file();
      ++file_;
      continue;
    }
    stats_.bytes += buf_off_ + beg_ - offset;
    const std::uint64_t index = line_index_++;
    if (len == 0) {
      ++pending_blanks_;
      if (pending_blank_index_.size() < std::max<std::size_t>(options_.max_logged_errors, 1))
        pending_blank_index_.push_back(index);
      continue;
    }
    if (pending_blanks_ > 0 && !flush_pending_blanks()) {
      ok = false;
      break;
    }
    line_error err;
    if (parser_.parse(std::string_view(b, len), &out.labels[n], out.dense.data() + n * num_dense_,
                      out.cat.data() + n * num_cat_, &err)) {
      ++n;
      ++stats_.examples;
      ++stats_.lines;
    } else if (!malformed(index, describe(parser_.schema(), err))) {
      ok = false;
      break;
    }
  }
  out.size = n;
  out.labels.resize(n);
  out.dense.resize(n * num_dense_);
  out.cat.resize(n * num_cat_);
  return ok && n > first;
}

} // namespace data
