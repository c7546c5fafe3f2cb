// Deterministic trace of the sequential engine, for comparing it step by step
// with the PyTorch reference (bench/torch_reference.py --init-from/--trace).
//
// usage: bench_trace --train=FILE [--eval=FILE] [--arch=small] [--rows=100000] [--seed=1]
//                    [--batch=128] [--dense-lr=0.03] [--sparse-lr=0.03]
//                    [--max-examples=0] [--trace=20] [--every=0]
//                    [--dump-init=DIR] [--dump-final=DIR] [--dump-data=FILE]
//                    [--init-from=DIR] [--multi-hot=C1,C20,..] [--id-delimiter=|]
//                    [--max-ids=1024] [--pooling=sum]
//
// --arch=NAME       a model.arch preset (the dense lr stays --dense-lr's).
// --dump-init=DIR   writes DIR/dense.f32 (flat dense_layout buffer) and
//                   DIR/emb.f32 ([26*rows, dim], row = table*rows + r) of the
//                   initial model, before any training.
// --init-from=DIR   loads those two files instead of the engine's own init.
// --trace=N         prints "batch I loss L" (mean BCE, pre-update) for the
//                   first N batches.
// --every=K         prints "step I examples E avg_loss L ne N |dense| D |emb| M"
//                   every K batches (window mean loss of the last K batches).
// --dump-final=DIR  the same two files after training (+ rowacc.f32).
// --dump-data=FILE  writes every parsed training example as one record:
//                   label f32, dense 13 x f32, fused row ids 26 x i64
//                   (single-hot input only).
// --multi-hot=LIST, --id-delimiter=C, --max-ids=N, --pooling=sum|mean:
//                   data.multi-hot (comma-separated column names or indices),
//                   data.id-delimiter, data.max-ids and model.pooling.
// Evaluation (--eval) prints the eval NE/AUC like `shadowsync train`.
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "data/reader.hpp"
#include "model/metrics.hpp"
#include "engine/input.hpp"
#include "report/run_metrics.hpp"
#include "engine/sequential_engine.hpp"

namespace {

bool write_file(const std::string& path, const void* p, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(p), std::streamsize(bytes));
  return bool(out);
}

bool read_file(const std::string& path, void* p, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || std::size_t(in.tellg()) != bytes) {
    std::fprintf(stderr, "%s: missing or not %zu bytes\n", path.c_str(), bytes);
    return false;
  }
  in.seekg(0);
  in.read(static_cast<char*>(p), std::streamsize(bytes));
  return bool(in);
}

template <class V>
double norm(const V& v) {
  double s = 0;
  for (float x : v)
    s += double(x) * x;
  return std::sqrt(s);
}

} // namespace

int main(int argc, char** argv) {
  std::string train, eval, dump_init, dump_final, dump_data, init_from, arch = "small";
  std::size_t rows = 100000, batch = 128, trace = 20, every = 0;
  std::uint64_t seed = 1, max_examples = 0;
  double dense_lr = 0.03, sparse_lr = 0.03;
  std::vector<data::column_ref> multi_hot;
  char id_delimiter = '|';
  std::size_t max_ids = 1024;
  std::string pooling = "sum";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string k = a.substr(0, eq), v = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (k == "--train") train = v;
    else if (k == "--eval") eval = v;
    else if (k == "--arch") arch = v;
    else if (k == "--rows") rows = std::stoull(v);
    else if (k == "--seed") seed = std::stoull(v);
    else if (k == "--batch") batch = std::stoull(v);
    else if (k == "--dense-lr") dense_lr = std::stod(v);
    else if (k == "--sparse-lr") sparse_lr = std::stod(v);
    else if (k == "--max-examples") max_examples = std::stoull(v);
    else if (k == "--trace") trace = std::stoull(v);
    else if (k == "--every") every = std::stoull(v);
    else if (k == "--dump-init") dump_init = v;
    else if (k == "--dump-final") dump_final = v;
    else if (k == "--dump-data") dump_data = v;
    else if (k == "--init-from") init_from = v;
    else if (k == "--multi-hot") {
      std::size_t b = 0;
      for (std::size_t c; (c = v.find(',', b)) != std::string::npos; b = c + 1)
        multi_hot.push_back(data::column_ref::parse(v.substr(b, c - b)));
      multi_hot.push_back(data::column_ref::parse(v.substr(b)));
    } else if (k == "--id-delimiter" && v.size() == 1) id_delimiter = v[0];
    else if (k == "--max-ids") max_ids = std::stoull(v);
    else if (k == "--pooling" && (v == "sum" || v == "mean")) pooling = v;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (train.empty()) {
    std::fprintf(stderr, "--train=FILE is required\n");
    return 2;
  }
  runtime::train_config cfg;
  cfg.data.train = {train};
  if (!eval.empty())
    cfg.data.eval = {eval};
  const auto preset = model::preset(arch);
  if (!preset) {
    std::fprintf(stderr, "unknown --arch '%s'\n", arch.c_str());
    return 2;
  }
  cfg.arch = *preset;
  cfg.arch.rows_per_table = rows;
  cfg.arch.pooling = pooling == "mean" ? model::pooling_kind::mean : model::pooling_kind::sum;
  cfg.data.schema.multi_hot = multi_hot;
  cfg.data.schema.id_delimiter = id_delimiter;
  cfg.data.schema.max_ids = max_ids;
  if (!multi_hot.empty() && !dump_data.empty()) {
    std::fprintf(stderr, "--dump-data writes single-hot records: not with --multi-hot\n");
    return 2;
  }
  cfg.train.batch_size = batch;
  cfg.train.seed = seed;
  cfg.train.max_examples = max_examples;
  cfg.train.dense.lr = float(dense_lr);
  cfg.train.sparse.lr = float(sparse_lr);
  cfg.cluster.mode = runtime::cluster_mode::sequential;

  runtime::sequential_engine eng(cfg);
  auto& params = eng.mutable_params();
  auto& emb = eng.tables().weights();
  if (!init_from.empty()) {
    if (!read_file(init_from + "/dense.f32", params.data(), params.size() * 4) ||
        !read_file(init_from + "/emb.f32", emb.data(), emb.size() * 4))
      return 1;
  }
  if (!dump_init.empty()) {
    write_file(dump_init + "/dense.f32", params.data(), params.size() * 4);
    write_file(dump_init + "/emb.f32", emb.data(), emb.size() * 4);
  }
  std::printf("init |dense| %.9g |emb| %.9g (%zu dense floats, %zu emb floats; dense buffer at "
              "address %% 64 = %zu)\n",
              norm(params), norm(emb), params.size(), emb.size(),
              std::size_t(reinterpret_cast<std::uintptr_t>(params.data()) % 64));

  std::string err;
  auto r = runtime::open_reader(cfg, cfg.data.train, &err);
  if (!r) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  std::FILE* data_out = dump_data.empty() ? nullptr : std::fopen(dump_data.c_str(), "wb");
  data::batch b;
  model::ne_accumulator ne;
  std::uint64_t examples = 0, step = 0;
  double window = 0;
  std::uint64_t window_n = 0;
  while (!max_examples || examples < max_examples) {
    b.clear();
    const std::size_t want = max_examples ? std::min<std::uint64_t>(batch, max_examples - examples) : batch;
    if (!r->next(b, want))
      break;
    if (data_out) {
      for (std::size_t e = 0; e < b.size; ++e) {
        std::fwrite(&b.labels[e], 4, 1, data_out);
        std::fwrite(b.dense.data() + e * b.num_dense, 4, b.num_dense, data_out);
        for (std::size_t c = 0; c < b.num_cat; ++c) {
          const std::int64_t id = std::int64_t(c * rows + b.cat[e * b.num_cat + c] % rows);
          std::fwrite(&id, 8, 1, data_out);
        }
      }
    }
    const double before = ne.loss_sum;
    eng.train_step(b, ne);
    const double loss = (ne.loss_sum - before) / double(b.size);
    window += ne.loss_sum - before;
    window_n += b.size;
    examples += b.size;
    if (step < trace)
      std::printf("batch %llu loss %.9g\n", (unsigned long long)step, loss);
    ++step;
    if (every && step % every == 0) {
      std::printf("step %llu examples %llu avg_loss %.6f ne %.6f |dense| %.6f |emb| %.6f\n",
                  (unsigned long long)step, (unsigned long long)examples, window / double(window_n), ne.ne(),
                  norm(params), norm(emb));
      window = 0;
      window_n = 0;
    }
  }
  if (data_out)
    std::fclose(data_out);
  if (!r->error().empty()) {
    std::fprintf(stderr, "%s\n", r->error().c_str());
    return 1;
  }
  std::printf("trained %llu examples in %llu batches: train NE %.6f, malformed %llu\n",
              (unsigned long long)examples, (unsigned long long)step, ne.ne(),
              (unsigned long long)r->statistics().malformed);
  std::printf("final |dense| %.9g |emb| %.9g\n", norm(params), norm(emb));
  if (!dump_final.empty()) {
    write_file(dump_final + "/dense.f32", params.data(), params.size() * 4);
    write_file(dump_final + "/emb.f32", emb.data(), emb.size() * 4);
    const auto& acc = eng.tables().accumulators();
    write_file(dump_final + "/rowacc.f32", acc.data(), acc.size() * 4);
  }
  if (!eval.empty()) {
    runtime::run_metrics m;
    if (auto e = eng.evaluate(cfg.data.eval, m)) {
      std::fprintf(stderr, "%s\n", e->c_str());
      return 1;
    }
    std::printf("eval on %llu examples: NE %.6f AUC %.6f logloss %.6f calibration %.6f\n",
                (unsigned long long)m.eval->examples, m.eval->ne, m.eval->auc, m.eval->logloss,
                m.eval->calibration);
  }
  return 0;
}
