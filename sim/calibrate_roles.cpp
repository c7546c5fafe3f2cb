#include "sim/calibrate_roles.hpp"
#include "sim/calibrate_timing.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <stdexcept>

#include "actors/embedding_shard.hpp"
#include "actors/worker_batch.hpp"
#include "messages/messages.hpp"
#include "model/dct_mp.hpp"
#include "model/embedding.hpp"

namespace runtime::calibrate_detail {

namespace {

// Each batch's distinct keys, as a worker's lookup and push send them to a
// shard owning every row; *rows: their count over the batches.
std::vector<std::vector<std::uint64_t>> distinct_keys(const model::arch& a,
                                                      const std::vector<data::batch>& batches,
                                                      std::size_t* rows) {
  std::vector<std::vector<std::uint64_t>> keys;
  model::sparse_index idx;
  std::vector<std::uint64_t> all;
  *rows = 0;
  for (const auto& b : batches) {
    all.resize(b.size * a.num_tables);
    model::make_keys(b.cat.data(), all.size(), a.num_tables, a.rows_per_table, all.data());
    idx.build(all.data(), all.size());
    keys.push_back(idx.unique());
    *rows += idx.unique().size();
  }
  return keys;
}

// `shard` holds the run's tables as one shard owning every row, at `dct`.
void init_whole_shard(actors::embedding_shard_state& shard, const train_config& cfg,
                      const model::dct_settings& dct) {
  actors::embedding_shard_config sc;
  sc.shard = 0;
  sc.num_shards = 1;
  sc.num_tables = cfg.arch.num_tables;
  sc.rows_per_table = cfg.arch.rows_per_table;
  sc.dim = cfg.arch.dim;
  sc.optimizer = cfg.train.sparse;
  sc.seed = cfg.train.seed;
  sc.dct = dct;
  if (auto err = shard.init(sc))
    throw std::runtime_error("calibrate: the shard's tables: " + caf::to_string(err));
}

messages::example_batch as_message(const data::batch& b, std::uint64_t seq) {
  messages::example_batch m;
  m.seq = seq;
  m.num_dense = std::uint32_t(b.num_dense);
  m.num_cat = std::uint32_t(b.num_cat);
  m.labels.values = b.labels;
  m.dense.values = b.dense;
  m.cat.values = b.cat;
  m.cat_offsets.values = b.cat_offsets;
  return m;
}

} // namespace

row_costs measure_rows(const train_config& cfg, const std::vector<data::batch>& batches) {
  const auto& a = cfg.arch;
  actors::embedding_shard_state shard;
  init_whole_shard(shard, cfg, model::dct_settings{});
  std::size_t rows = 0;
  std::vector<messages::lookup_request> lookups;
  std::vector<messages::embedding_grads> pushes;
  for (auto& k : distinct_keys(a, batches, &rows)) {
    messages::lookup_request req;
    req.keys.values = k;
    lookups.push_back(std::move(req));
    messages::embedding_grads g;
    g.grads.values.assign(k.size() * a.dim, 1e-3f);
    g.keys.values = std::move(k);
    pushes.push_back(std::move(g));
  }
  auto gather = [&] {
    const auto t0 = wall::now();
    for (const auto& req : lookups)
      if (!shard.lookup(req))
        throw std::runtime_error("calibrate: the shard refused a lookup of its own rows");
    return since(t0);
  };
  auto apply = [&] {
    const auto t0 = wall::now();
    for (const auto& g : pushes)
      if (shard.push(g))
        throw std::runtime_error("calibrate: the shard refused a push to its own rows");
    return since(t0);
  };
  gather(); // warm-up
  apply();
  row_costs c;
  c.lookup_ns = 1e9 * median_of_five(gather) / double(rows);
  c.push_ns = 1e9 * median_of_five(apply) / double(rows);
  return c;
}

double measure_batch_ids(const train_config& cfg, const std::vector<data::batch>& batches) {
  const auto& a = cfg.arch;
  const std::size_t shards = std::max<std::size_t>(cfg.cluster.embedding_shards, 1);
  std::size_t ids = 0, most = 0;
  for (const auto& b : batches) {
    ids += b.cat.size();
    most = std::max(most, b.cat.size());
  }
  std::vector<float> replies(most * a.dim, 0.01f), grad_unique(most * a.dim, 1e-3f), grads;
  std::vector<std::uint64_t> keys;
  actors::worker_batch slots[2];
  auto pass = [&] {
    std::vector<messages::example_batch> in; // the reader's batches, built apart
    in.reserve(batches.size());
    for (std::size_t i = 0; i < batches.size(); ++i)
      in.push_back(as_message(batches[i], i));
    const auto t0 = wall::now();
    for (std::size_t i = 0; i < in.size(); ++i) {
      auto& slot = slots[i % 2];
      slot.prepare(i, std::move(in[i]), a, shards);
      for (std::size_t s = 0; s < shards; ++s) { // each shard's lookup and its reply
        if (slot.shard_size(s) == 0)
          continue;
        slot.shard_keys(s, keys);
        slot.set_rows(s, replies.data(), slot.shard_size(s) * a.dim);
      }
      for (std::size_t s = 0; s < shards; ++s) { // each shard's push
        if (slot.shard_size(s) == 0)
          continue;
        slot.shard_keys(s, keys);
        slot.shard_grads(s, grad_unique.data(), grads);
      }
    }
    return since(t0);
  };
  pass(); // warm-up
  return 1e9 * median_of_five(pass) / double(ids);
}

mp_costs measure_mp(const train_config& cfg, const std::vector<data::batch>& batches,
                    const std::vector<data::batch>& stream, double lookup_row_ns) {
  const auto& a = cfg.arch;
  model::dct_settings d = cfg.dct;
  d.mp = true;
  std::size_t rows = 0, most = 0;
  const auto keys = distinct_keys(a, batches, &rows);
  for (const auto& k : keys)
    most = std::max(most, k.size());
  const double values = double(rows) * double(a.dim);
  // Gradients of a few sizes, the same every pass: a reply's threshold and a
  // push's see a spread of magnitudes, as in training.
  std::vector<float> grads(most * a.dim), work;
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto& g : grads) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    g = (float(x >> 40) / float(1u << 24) - 0.5f) * 1e-3f;
  }
  mp_costs c;
  { // the worker's push: residuals kept across passes, as across batches
    model::dct_row_thresholds tau(a.num_tables, d.mp_grad_keep, d.mp_refresh, 1000003ull);
    model::dct_row_residuals residual(a.dim);
    model::sparse_vector out;
    auto pass = [&] {
      const auto t0 = wall::now();
      for (const auto& k : keys) {
        work.assign(grads.begin(), grads.begin() + std::ptrdiff_t(k.size() * a.dim));
        model::threshold_row_push(tau, d.error_feedback ? &residual : nullptr, k.data(),
                                  work.data(), k.size(), a.dim, d.rounds_half(), out);
        (void)model::encode(out);
      }
      return since(t0);
    };
    pass(); // warm-up: the residuals of every row
    c.push_value_ns = 1e9 * median_of_five(pass) / values;
    c.map_rows = double(residual.rows());
  }
  // A run's map: every row the worker has pushed, its rows met again as
  // often as the data names them. Three fresh maps, the median.
  std::size_t stream_rows = 0;
  const auto stream_keys = distinct_keys(a, stream, &stream_rows);
  const std::size_t from = stream_keys.size() * 3 / 4;
  if (d.error_feedback && from > 0 && from < stream_keys.size()) {
    std::vector<double> ns, map;
    for (int round = 0; round < 3; ++round) {
      model::dct_row_thresholds tau(a.num_tables, d.mp_grad_keep, d.mp_refresh, 1000003ull);
      model::dct_row_residuals residual(a.dim);
      model::sparse_vector out;
      double seconds = 0, values_timed = 0, map_sum = 0;
      for (std::size_t i = 0; i < stream_keys.size(); ++i) {
        const auto& k = stream_keys[i];
        work.assign(grads.begin(), grads.begin() + std::ptrdiff_t(std::min(k.size(), most) * a.dim));
        work.resize(k.size() * a.dim, 1e-4f);
        const auto t0 = wall::now();
        model::threshold_row_push(tau, &residual, k.data(), work.data(), k.size(), a.dim,
                                  d.rounds_half(), out);
        (void)model::encode(out);
        if (i >= from) {
          seconds += since(t0);
          values_timed += double(k.size() * a.dim);
          map_sum += double(residual.rows());
        }
      }
      ns.push_back(1e9 * seconds / values_timed);
      map.push_back(map_sum / double(stream_keys.size() - from));
    }
    std::sort(ns.begin(), ns.end());
    std::sort(map.begin(), map.end());
    c.stream_value_ns = ns[1];
    c.stream_map_rows = map[1];
    const double big = mp_push_big_map_rows;
    if (c.map_rows > 0 && c.stream_map_rows > c.map_rows && c.stream_map_rows < big)
      c.push_value_big_ns =
        c.push_value_ns + std::max(0.0, c.stream_value_ns - c.push_value_ns) *
                            std::log(big / c.map_rows) / std::log(c.stream_map_rows / c.map_rows);
  }
  { // the shard's thresholded reply
    actors::embedding_shard_state shard;
    init_whole_shard(shard, cfg, d);
    std::vector<messages::lookup_request> lookups(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i)
      lookups[i].keys.values = keys[i];
    std::vector<messages::sparse_rows> replies(lookups.size());
    auto pass = [&] {
      const auto t0 = wall::now();
      for (std::size_t i = 0; i < lookups.size(); ++i) {
        auto r = shard.sparse_lookup(lookups[i]);
        if (!r)
          throw std::runtime_error("calibrate: the shard refused a thresholded lookup");
        replies[i] = std::move(*r);
      }
      return since(t0);
    };
    pass();
    const double ns = 1e9 * median_of_five(pass) - lookup_row_ns * double(rows);
    c.reply_value_ns = std::max(0.0, ns / values);
    // The worker's side of those replies: each decoded, its entries
    // scattered into the batch's rows.
    model::sparse_vector vec;
    std::vector<float> dense(most * a.dim);
    auto decode = [&] {
      const auto t0 = wall::now();
      for (std::size_t i = 0; i < replies.size(); ++i) {
        const auto n = std::uint32_t(keys[i].size() * a.dim);
        const auto& p = replies[i].payload;
        if (auto e = model::decode(p.data(), p.size(), n, vec))
          throw std::runtime_error("calibrate: a thresholded reply does not decode: " + *e);
        for (std::size_t j = 0; j < vec.nnz(); ++j)
          dense[vec.index[j]] = vec.value[j];
      }
      return since(t0);
    };
    decode();
    c.decode_value_ns = 1e9 * median_of_five(decode) / values;
  }
  return c;
}

} // namespace runtime::calibrate_detail
