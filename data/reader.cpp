// reader: reads its part of the input files line by line into batches
// (open() and its probing are in reader_open.cpp).
#include "data/reader.hpp"
#include "data/reader_input.hpp"
#include "model/check.hpp"

#include <algorithm>

namespace data {

reader::reader(reader_options options) : options_(std::move(options)), source_(options_.chunk_bytes) {}

reader::~reader() = default;

void reader::reset() {
  source_.close();
  file_ = 0;
  pending_blanks_ = 0;
  pending_blank_index_.clear();
  stats_ = stats{};
  error_.clear();
  done_ = false;
}

bool reader::fail(std::string message) {
  error_ = std::move(message);
  return false;
}

void reader::finish_file() {
  source_.close();
  ++file_;
  // Empty lines not followed by data were the end of the file: not malformed.
  pending_blanks_ = 0;
  pending_blank_index_.clear();
}

bool reader::open_file() {
  for (; file_ < files_.size(); ++file_) {
    const input_file& f = files_[file_];
    if (options_.num_parts == 1) { // the whole file, whatever its size
      stop_off_ = line_source::unknown_size;
      if (!source_.open(f.path, f.size, f.data_begin, f.data_begin, &error_))
        return false;
    } else {
      const std::uint64_t global_end = f.global_begin + (f.size - f.data_begin);
      const std::uint64_t lo = std::max(part_begin_, f.global_begin);
      const std::uint64_t hi = std::min(part_end_, global_end);
      if (lo >= hi)
        continue; // no byte of this file is in our part
      stop_off_ = f.data_begin + (hi - f.global_begin);
      if (!source_.open(f.path, f.size, f.data_begin, f.data_begin + (lo - f.global_begin), &error_))
        return false;
    }
    parser_ = line_parser(&f.schema);
    // either: a line's width says whether it has the label, so count fields.
    parser_.require_all_fields(options_.whole_lines || options_.labels == label_presence::either);
    unlabelled_parser_ = line_parser(&f.unlabelled);
    unlabelled_parser_.require_all_fields(options_.whole_lines);
    file_unlabelled_ = f.all_unlabelled;
    file_layout_known_ = f.all_unlabelled || f.data_begin > 0; // (a header line)
    base_line_ = 0;
    line_index_ = 0;
    return true;
  }
  done_ = true;
  return false;
}

std::uint64_t reader::line_number(std::uint64_t line_index) {
  if (base_line_ == 0) {
    const input_file& f = files_[file_];
    std::uint64_t newlines = 0;
    if (source_.first_line_offset() == f.data_begin)
      base_line_ = options_.schema.header ? 2 : 1;
    // A part that starts mid-file learns its line numbers only when it has
    // something to report: count the newlines before it, once.
    else if (count_newlines(f.path, source_.first_line_offset(), &newlines))
      base_line_ = newlines + 1;
    else
      return 0;
  }
  return base_line_ + line_index;
}

std::string reader::stats::cut_bags_note(const std::string& what) const {
  if (cut_bags == 0)
    return {};
  return std::to_string(cut_bags) + " " + what + (cut_bags == 1 ? " bag" : " bags") +
         " over data.max-ids; the first: " + first_cut_bag;
}

bool reader::malformed(std::uint64_t line_index, const std::string& message, bool fatal) {
  ++stats_.malformed;
  ++stats_.lines;
  fatal = fatal || options_.strict;
  if (stats_.first_errors.size() >= options_.max_logged_errors && !fatal)
    return true;
  const std::uint64_t line = line_number(line_index);
  const std::string full = files_[file_].path + ":" + (line ? std::to_string(line) : "?") + ": " + message;
  if (stats_.first_errors.size() < options_.max_logged_errors)
    stats_.first_errors.push_back(full);
  return fatal ? fail(full) : true;
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
  SS_CHECK(out.num_dense == num_dense_ && out.num_cat == num_cat_, "batch holds another schema's examples");
  const std::size_t first = out.size, limit = out.size + max_examples;
  // Write in place; resize() keeps capacity, so steady state allocates nothing.
  // The room grows with the lines read (doubling from 1024), not to `limit`
  // at once: a batch of a million on a file of 2 000 lines takes what the
  // lines need.
  std::size_t room = first;
  const bool with_users = options_.schema.user.has_value();
  const bool bags = !options_.schema.multi_hot.empty();
  if (bags) {
    single_.resize(num_cat_);
    if (out.cat_offsets.empty())
      out.cat_offsets.push_back(0);
  }
  const auto grow = [&] {
    room = std::min(limit, std::max(first + 1024, first + 2 * (room - first)));
    out.labels.resize(room);
    out.dense.resize(room * num_dense_);
    if (!bags)
      out.cat.resize(room * num_cat_);
    if (with_users)
      out.users.resize(room);
  };
  grow();
  std::size_t n = first;
  bool ok = true;
  line_source::line line;
  while (n < limit) {
    if (!source_.is_open() && !open_file()) {
      ok = error_.empty();
      break;
    }
    const line_source::status st = source_.next(&line, &error_);
    if (st == line_source::status::error) { // I/O, or compressed data cut short or corrupt
      const std::uint64_t at = line_number(line_index_);
      error_ = files_[file_].path + ":" + (at ? std::to_string(at) : "?") + ": " + error_;
      ok = false;
      break;
    }
    if (st == line_source::status::too_long) {
      const std::uint64_t at = line_number(line_index_);
      fail(files_[file_].path + ":" + (at ? std::to_string(at) : "?") +
           ": line longer than " + std::to_string(line_source::max_line_bytes) +
           " bytes, the most a line may have (is this a text data file?)");
      ok = false;
      break;
    }
    if (st == line_source::status::end) {
      finish_file();
      continue;
    }
    const bool empty = line.text.empty();
    if (line.begin >= stop_off_) {
      // Past our part. Only pending empty lines still need a decision: they
      // are malformed if data follows in this file, ignored if the file ends.
      if (pending_blanks_ > 0 && empty)
        continue;
      if (pending_blanks_ > 0 && !flush_pending_blanks()) {
        ok = false;
        break;
      }
      finish_file();
      continue;
    }
    stats_.bytes += line.end - line.begin;
    const std::uint64_t index = line_index_++;
    if (empty) {
      ++pending_blanks_;
      if (pending_blank_index_.size() < std::max<std::size_t>(options_.max_logged_errors, 1))
        pending_blank_index_.push_back(index);
      continue;
    }
    if (pending_blanks_ > 0 && !flush_pending_blanks()) {
      ok = false;
      break;
    }
    if (n == room)
      grow();
    line_error err;
    float* const label = &out.labels[n];
    float* const dense = out.dense.data() + n * num_dense_;
    std::uint64_t* const cat = bags ? single_.data() : out.cat.data() + n * num_cat_;
    std::uint64_t* const user = with_users ? &out.users[n] : nullptr;
    const line_parser* used = &parser_;
    bool parsed = false;
    if (file_unlabelled_) {
      used = &unlabelled_parser_;
      parsed = unlabelled_parser_.parse(line.text, label, dense, cat, &err, user);
    } else {
      parsed = parser_.parse(line.text, label, dense, cat, &err, user);
      if (!parsed && options_.labels == label_presence::either && !file_layout_known_ &&
          err.kind == line_error::too_few_fields &&
          err.fields + 1 == parser_.schema().num_columns) { // the layout without its label
        used = &unlabelled_parser_;
        parsed = unlabelled_parser_.parse(line.text, label, dense, cat, &err, user);
        file_unlabelled_ = parsed; // and so are the file's other lines
      }
      file_layout_known_ = file_layout_known_ || parsed;
    }
    if (parsed && used == &unlabelled_parser_) {
      *label = 0.0f; // no label to read
      ++stats_.unlabelled;
    }
    if (parsed && bags) {
      const std::size_t ids_before = out.cat.size(), offsets_before = out.cat_offsets.size();
      bag_cuts cuts;
      parsed = used->append_bags(cat, &out.cat, &out.cat_offsets, &cuts, &err);
      if (parsed && cuts.bags > 0) {
        if (options_.strict) {
          parsed = false;
          err.kind = line_error::long_bag;
          err.column = cuts.column;
          err.fields = cuts.ids;
          err.text = {};
        } else {
          if (stats_.cut_bags == 0) { // named once a pass, where the reader's user logs it
            line_error cut = err;
            cut.kind = line_error::long_bag;
            cut.column = cuts.column;
            cut.fields = cuts.ids;
            cut.text = {};
            const std::uint64_t at = line_number(index);
            stats_.first_cut_bag = files_[file_].path + ":" + (at ? std::to_string(at) : "?") +
                                   ": " + describe(used->schema(), cut);
          }
          stats_.cut_bags += cuts.bags;
        }
      }
      if (!parsed) {
        out.cat.resize(ids_before);
        out.cat_offsets.resize(offsets_before);
      }
    }
    if (parsed) {
      ++n;
      ++stats_.examples;
      ++stats_.lines;
    } else if (!malformed(index, describe(used->schema(), err),
                          options_.whole_lines && (err.kind == line_error::too_few_fields ||
                                                   err.kind == line_error::too_many_fields))) {
      ok = false;
      break;
    }
  }
  out.size = n;
  out.labels.resize(n);
  out.dense.resize(n * num_dense_);
  if (!bags)
    out.cat.resize(n * num_cat_);
  out.users.resize(with_users ? n : 0);
  return ok && n > first;
}

} // namespace data
