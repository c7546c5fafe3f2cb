#include "engine/sequential_engine.hpp"

#include <chrono>

#include <spdlog/spdlog.h>

#include "data/reader.hpp"
#include "engine/evaluation.hpp"
#include "engine/input.hpp"
#include "engine/stop_signal.hpp"

namespace runtime {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

} // namespace

sequential_engine::sequential_engine(const train_config& cfg)
  : cfg_(cfg), net_(cfg.arch), params_(net_.layout().size()), dense_acc_(params_.size(), 0.0f),
    grads_(params_.size()),
    tables_(cfg.arch.num_tables, cfg.embedding.dynamic ? 1 : cfg.arch.rows_per_table,
            cfg.arch.dim, cfg.train.sparse.state_per_row(cfg.arch.dim)) {
  model::init_dense(net_.layout(), params_.data(), cfg.train.seed);
  tables_.init(cfg.train.seed + 1);
  if (cfg.embedding.dynamic)
    dynamic_ = std::make_unique<model::dynamic_tables>(
      cfg.arch.num_tables, cfg.embedding.table, cfg.arch.dim,
      cfg.train.sparse.state_per_row(cfg.arch.dim), cfg.train.seed + 1);
  if (cfg.embedding.collisions)
    collisions_ =
      std::make_unique<model::collision_counter>(cfg.arch.num_tables, cfg.arch.rows_per_table);
}

void sequential_engine::train_step(const data::batch& b, model::ne_accumulator& ne) {
  const auto& a = cfg_.arch;
  const std::uint32_t* bags = b.multi_hot() ? b.cat_offsets.data() : nullptr;
  if (dynamic_)
    dynamic_->train_lookup(rows_, b.cat.data(), b.size, trained_, bags);
  else
    rows_.lookup(b.cat.data(), b.size, a, tables_, bags);
  if (collisions_) // rows_.keys[i] is the row of id b.cat[i]
    collisions_->add(rows_.keys.data(), b.cat.data(), rows_.keys.size());
  trained_ += b.size;
  grad_unique_.resize(rows_.unique_rows.size());
  net_.forward_backward(params_.data(), b.dense.data(), rows_.input(), b.labels.data(), b.size,
                        ws_, grads_.data(), grad_unique_.data());
  double prob_sum = 0;
  std::uint64_t pos = 0;
  for (std::size_t e = 0; e < b.size; ++e) {
    prob_sum += model::sigmoid(ws_.logits[Eigen::Index(e)]);
    pos += b.labels[e] > 0.5f;
  }
  ne.add_batch(ws_.loss_sum, prob_sum, b.size, pos);
  cfg_.train.dense.at(trained_).apply(params_.data(), dense_acc_.data(), grads_.data(),
                                      params_.size());
  if (bg_) // a checkpoint is being written: rows keep their value at the cut there
    bg_->before_update(rows_.index.unique());
  if (dynamic_)
    dynamic_->apply(rows_.index, grad_unique_.data(), cfg_.train.sparse);
  else
    tables_.apply(rows_.index, grad_unique_.data(), cfg_.train.sparse);
}

std::optional<std::string> sequential_engine::train(progress_reporter& progress,
                                                    run_metrics& out) {
  const std::size_t bs = cfg_.train.batch_size;
  const std::uint64_t limit = cfg_.train.max_examples;
  const double bytes_per_epoch = double(total_bytes(cfg_.data.train));
  const auto& ck = cfg_.checkpoint;
  data::batch b;
  model::ne_accumulator ne = start_.ne;
  std::uint64_t examples = start_.examples;
  input_counts before = start_.before; // the passes before this one
  std::uint64_t next_ck = ck.every_examples ? (examples / ck.every_examples + 1) * ck.every_examples : 0;
  const auto t0 = clock_type::now();
  auto last_ck = t0;
  auto seconds = [&] { return start_.seconds + seconds_since(t0); };
  std::size_t epoch = std::size_t(start_.reader.epoch);
  std::uint64_t skip = start_.reader.examples; // examples of this pass already trained
  bool stopped = false;
  for (; !stopped && epoch < cfg_.train.epochs && (!limit || examples < limit); ++epoch) {
    std::string err;
    auto r = open_reader(cfg_, cfg_.data.train, &err);
    if (!r)
      return err;
    std::uint64_t pass_examples = 0;
    for (; skip > 0; b.clear()) { // resume: the same lines, read and dropped
      if (!r->next(b, std::size_t(std::min<std::uint64_t>(skip, 4096))))
        return r->error().empty() ? "resume: the training data ends before the checkpoint's "
                                    "position (" + std::to_string(start_.reader.examples) +
                                      " examples into pass " + std::to_string(epoch + 1) +
                                      "): not the data it was trained on?"
                                  : r->error();
      skip -= b.size;
      pass_examples += b.size;
    }
    while (!limit || examples < limit) {
      b.clear();
      const std::size_t want = limit ? std::min<std::uint64_t>(bs, limit - examples) : bs;
      if (!r->next(b, want))
        break;
      train_step(b, ne);
      examples += b.size;
      pass_examples += b.size;
      progress_sample s;
      s.examples = examples;
      s.train_ne = ne.ne();
      if (bytes_per_epoch > 0)
        s.fraction_done = (double(epoch) + double(r->statistics().bytes) / bytes_per_epoch) /
                          double(cfg_.train.epochs);
      progress.update(s);
      if (const int sig = stop_requested()) { // SIGINT/SIGTERM: keep this batch boundary
        stopped = true;
        out.stopped_by = signal_name(sig);
        if (ck.enabled())
          if (auto e = save(ck.dir, ck.keep,
                            manifest_at(epoch, pass_examples, r.get(), examples, ne, before,
                                        seconds())))
            return e;
        before.add(r->statistics());
        break;
      }
      const bool by_examples = next_ck && examples >= next_ck;
      const bool by_time = ck.every_seconds > 0 && seconds_since(last_ck) >= ck.every_seconds;
      // With checkpoint.background the write runs beside training; a due
      // checkpoint waits (is re-tried after each batch) while one is written.
      const bool busy = bg_ && !bg_->done();
      if (ck.enabled() && (by_examples || by_time) && !busy) {
        auto m = manifest_at(epoch, pass_examples, r.get(), examples, ne, before, seconds());
        if (auto e = ck.background ? start_checkpoint(ck.dir, ck.keep, std::move(m))
                                   : save(ck.dir, ck.keep, std::move(m)))
          return e;
        while (next_ck && next_ck <= examples)
          next_ck += ck.every_examples;
        last_ck = clock_type::now();
      }
    }
    if (stopped)
      break;
    if (!r->error().empty())
      return r->error();
    before.add(r->statistics());
    log_malformed(*r, "training");
  }
  if (examples == 0)
    return empty_set_error("training", cfg_.data.train, before.malformed);
  out.seconds = seconds();
  out.examples = examples;
  out.train_ne = ne.ne();
  out.malformed_lines = before.malformed;
  out.cut_bags = before.cut_bags;
  out.flops_per_example = net_.flops_per_example();
  fill_embedding_metrics(out);
  if (auto e = finish_checkpoint())
    return e;
  if (stopped) { // the checkpoint of this point is written; the run is not done
    progress_sample s;
    s.examples = examples;
    s.train_ne = out.train_ne;
    progress.finish(s);
    return std::nullopt;
  }
  const auto last = manifest_at(epoch, 0, nullptr, examples, ne, before, out.seconds);
  // The end, always: its reader position says "pass done" (a periodic
  // checkpoint at the same count, replaced here, would re-read the pass).
  if (ck.enabled())
    if (auto e = save(ck.dir, ck.keep, last))
      return e;
  if (!ck.model_out.empty()) // output.model: the same format, one checkpoint
    if (auto e = save(ck.model_out, 1, last))
      return e;
  progress_sample s;
  s.examples = examples;
  s.train_ne = out.train_ne;
  s.fraction_done = 1;
  progress.finish(s);
  return std::nullopt;
}

std::optional<std::string> sequential_engine::evaluate(const std::vector<std::string>& files,
                                                       run_metrics& out) {
  if (dynamic_)
    return evaluate_model(cfg_, net_, params_.data(), params_.size(), *dynamic_, files, out);
  return evaluate_model(cfg_, net_, params_.data(), params_.size(), tables_, files, out);
}

void sequential_engine::fill_embedding_metrics(run_metrics& out) const {
  if (collisions_) {
    const auto t = collisions_->count();
    out.collisions = collision_metrics{t.lookups, t.shared_lookups, t.used_rows, t.shared_rows};
    spdlog::info("hashed embeddings: {} of {} training lookups ({:.2f}%) read a row that another "
                 "id also reads; {} of {} rows looked up are shared",
                 t.shared_lookups, t.lookups,
                 t.lookups ? 100.0 * double(t.shared_lookups) / double(t.lookups) : 0.0,
                 t.shared_rows, t.used_rows);
  }
  if (!dynamic_)
    return;
  auto& d = out.embedding.emplace();
  const auto& s = dynamic_->settings();
  d.max_rows = s.max_rows;
  d.admit_after = s.admit_after;
  d.ttl = s.ttl;
  for (std::size_t t = 0; t < dynamic_->num_tables(); ++t)
    d.rows.push_back(dynamic_->table(t).rows());
  const auto x = dynamic_->totals();
  d.admissions = x.admissions;
  d.evictions = x.evictions;
  d.expired = x.expired;
  d.lookups = x.lookups;
  d.missing = x.missing;
  d.bytes = dynamic_->bytes();
  std::uint64_t rows = 0;
  for (const auto r : d.rows)
    rows += r;
  spdlog::info("dynamic embeddings: {} rows in {} tables (at most {} each, {:.1f} MB), {} "
               "admitted, {} evicted; {} of {} training lookups ({:.2f}%) were of ids without a row",
               rows, d.rows.size(), d.max_rows, double(d.bytes) / 1e6, d.admissions, d.evictions,
               d.missing, d.lookups, d.lookups ? 100.0 * double(d.missing) / double(d.lookups) : 0.0);
}

} // namespace runtime
