// Message flow:
//   worker -> reader: next; reader -> worker: example_batch (empty = end) or input_error
#include "actors/reader.hpp"
#include "actors/work.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "messages/errors.hpp"

namespace actors {

using messages::errc;
using messages::make_error;

std::string reader_state::who() const {
  return std::string{name} + "-" + std::to_string(cfg.options.part);
}

caf::error reader_state::open() {
  if (cfg.batch_size == 0 || cfg.epochs == 0)
    return make_error(errc::bad_request, "reader config: batch_size and epochs must be positive "
                                         "(batch_size " + std::to_string(cfg.batch_size) +
                                           ", epochs " + std::to_string(cfg.epochs) + ")");
  std::string err;
  input = data::reader::open(cfg.options, &err);
  if (!input)
    return make_error(errc::input_error, err);
  const auto& r = cfg.resume;
  passes = std::size_t(r.epoch);
  malformed = r.malformed;
  cut_bags = r.cut_bags;
  served = r.served;
  if (passes >= cfg.epochs) {
    finished = true;
    return {};
  }
  data::batch dropped;
  for (std::uint64_t skip = r.examples; skip > 0; dropped.clear()) {
    if (!input->next(dropped, std::size_t(std::min<std::uint64_t>(skip, 4096))))
      return make_error(errc::input_error,
                        input->error().empty()
                          ? who() + ": resume: the data ends before the checkpoint's position (" +
                              std::to_string(r.examples) + " examples into pass " +
                              std::to_string(r.epoch + 1) + "): not the data it was trained on?"
                          : input->error());
    skip -= dropped.size;
  }
  return {};
}

messages::reader_mark reader_state::where() const {
  messages::reader_mark m;
  m.epoch = passes;
  m.malformed = malformed;
  m.cut_bags = cut_bags;
  m.served = served;
  if (input && passes < cfg.epochs) {
    m.examples = input->statistics().examples;
    m.lines = input->statistics().lines;
  } else if (!input) { // never opened: still where it was started
    m = cfg.resume;
  }
  return m;
}

void reader_state::count_pass() {
  const auto& st = input->statistics();
  malformed += st.malformed;
  cut_bags += st.cut_bags;
  if (passes == 0) {
    for (const auto& e : st.first_errors)
      spdlog::warn("{}: skipped malformed line: {}", who(), e);
    if (st.cut_bags > 0)
      spdlog::warn("{}: {}", who(), st.cut_bags_note("training"));
  }
}

bool reader_state::end_pass() {
  count_pass();
  passes_bytes += input->statistics().bytes;
  if (++passes >= cfg.epochs)
    return false;
  input->reset(); // clears the pass's statistics, counted above
  return true;
}

void reader_state::finish(bool mid_pass) {
  if (mid_pass)
    count_pass();
  finished = true;
}

void reader_state::log_end() {
  if (malformed > 0)
    spdlog::warn("{}: end of data: {} examples in {} batches, {} malformed lines skipped", who(),
                 served, seq, malformed);
  else
    spdlog::info("{}: end of data: {} examples in {} batches", who(), served, seq);
}

messages::example_batch reader_state::take_batch() {
  messages::example_batch out;
  out.seq = seq;
  out.num_dense = static_cast<std::uint32_t>(buffer.num_dense);
  out.num_cat = static_cast<std::uint32_t>(buffer.num_cat);
  // The reply needs buffers of its own anyway: move instead of copying.
  out.labels.values = std::move(buffer.labels);
  out.dense.values = std::move(buffer.dense);
  out.cat.values = std::move(buffer.cat);
  out.cat_offsets.values = std::move(buffer.cat_offsets);
  buffer.clear();
  return out;
}

caf::expected<messages::example_batch> reader_state::next() {
  if (failure)
    return failure;
  if (!input) {
    if (auto err = open()) {
      spdlog::error("{}: {}", who(), messages::error_text(err));
      failure = err;
      return err;
    }
  }
  std::uint64_t want = cfg.read_none ? 0 : cfg.batch_size;
  if (cfg.max_examples > 0)
    want = std::min<std::uint64_t>(want, cfg.max_examples - served);
  buffer.clear();
  while (!finished && buffer.size < want) {
    if (input->next(buffer, want - buffer.size))
      continue;
    if (!input->error().empty()) {
      failure = make_error(errc::input_error, input->error());
      spdlog::error("{}: {}", who(), input->error());
      return failure;
    }
    if (!end_pass())
      finish(false);
  }
  if (cfg.bytes_read) // (a finished pass's bytes are in passes_bytes)
    cfg.bytes_read->store(passes_bytes + (finished ? 0 : input->statistics().bytes),
                          std::memory_order_relaxed);
  if (buffer.size == 0) { // finished (by a pass or by max_examples)
    if (!end_served)
      log_end();
    end_served = true;
    messages::example_batch end;
    end.seq = seq;
    end.num_dense = static_cast<std::uint32_t>(input ? input->num_dense() : 0);
    end.num_cat = static_cast<std::uint32_t>(input ? input->num_cat() : 0);
    end.malformed = malformed;
    end.cut_bags = cut_bags;
    return end;
  }
  served += buffer.size;
  auto out = take_batch();
  ++seq;
  if (cfg.max_examples > 0 && served >= cfg.max_examples && !finished)
    finish(true);
  return out;
}

reader_actor::behavior_type reader(reader_actor::stateful_pointer<reader_state> self,
                                   reader_config cfg) {
  self->state.cfg = std::move(cfg);
  return {
    [=](messages::next_atom) -> caf::result<messages::example_batch> {
      auto b = self->state.next();
      count(work::parse_examples, double(self->state.cfg.batch_size));
      return b;
    },
    [=](messages::where_atom) { return self->state.where(); },
  };
}

} // namespace actors
