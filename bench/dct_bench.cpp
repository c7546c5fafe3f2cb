// DCT codec throughput on one core (issue 13): estimate_threshold, threshold,
// encode, decode and scatter_add over a dense vector, in GB/s of the dense
// input (4 bytes per entry) per core, against a memcpy of the same vector
// measured in the same run. Medians of --repeats runs of each stage. The
// threshold pass is also timed as it was before its block-mask rewrite.
// A second table prices a dense shard's round for one trainer, as the
// virtual clock charges it (sim/work_costs.cpp): the dense EASGD step
// (easgd_centre_step) and the DCT exchange with the d reply and error
// feedback (decode the trainer's change, model::dct_mirror::exchange,
// encode the reply; log8 values, one threshold, refresh 10, the change
// keeping 0.6 % of the entries), and the syncer's end of a DCT round at
// keep 0.003 (dct_sender::encode_change of a replica that moved, encode; the reply's
// decode and on_reply), in memory-traffic bytes an entry: the
// stage's time at the traffic rate of the memcpy timed beside it (a copy of
// 4 bytes moves 8, as sim/calibrate.cpp's measure_memory counts them).
// A third table times a worker's thresholded push under dct.mp
// (model::threshold_row_push with error feedback and model::encode, at
// dct_settings' defaults: the `small` model's 26 tables of dim 16) against
// the size of its residual map: the map holds --map-rows rows (spread over
// the tables), and each push names 1 200 distinct rows drawn from them, so
// the map keeps its size; ns a value, and the ratio to the smallest map.
// sim.mp-push-value-ns is one constant, measured by calibrate on a map of
// its own batches' rows (about 35 000).
// A fourth table encodes and decodes the same thresholded vectors (log8
// values) in each index form: bytes and ns a value sent.
//
// usage: bench_dct [--repeats=31] [--sizes=29184,1048576] [--keeps=0.1,0.01,0.001]
//                  [--map-rows=1200,35000,120000,500000]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "model/dct_codec.hpp"
#include "model/dct_mp.hpp"
#include "model/dct_sync.hpp"
#include "model/shard_layout.hpp"
#include "model/sync_rules.hpp"

namespace {

template <class T>
std::vector<T> parse_list(const std::string& s) {
  std::vector<T> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    out.push_back(T(std::stod(item)));
  return out;
}

// The baseline the library's threshold() replaced (a branch per entry),
// timed in the same run for the ratio.
void branchy_threshold(const float* x, std::size_t n, float tau, model::sparse_vector& out) {
  out.size = std::uint32_t(n);
  out.index.clear();
  out.value.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] != 0.0f && std::fabs(x[i]) >= tau) {
      out.index.push_back(std::uint32_t(i));
      out.value.push_back(x[i]);
    }
}

// Median seconds of `repeats` calls of f.
template <class F>
double median_seconds(int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::nth_element(t.begin(), t.begin() + repeats / 2, t.end());
  return t[std::size_t(repeats / 2)];
}

// Median of `repeats` calls of f, which returns the seconds it timed.
template <class F>
double median_of(int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r)
    t.push_back(f());
  std::nth_element(t.begin(), t.begin() + repeats / 2, t.end());
  return t[std::size_t(repeats / 2)];
}

// The dense shard's round for one trainer, dense and DCT (the header).
void shard_rounds(const std::vector<std::size_t>& sizes, const std::vector<double>& keeps,
                  int repeats) {
  std::printf("\n| entries | reply keep | memcpy GB/s | dense step, bytes an entry | DCT exchange, "
              "bytes an entry | DCT / dense | syncer's DCT round, bytes an entry |\n"
              "|---|---|---|---|---|---|---|\n");
  for (auto n : sizes) {
    std::mt19937 g(2);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(n), copy(n), centre(n), w(n), delta(n);
    for (auto& v : x)
      v = d(g);
    for (auto& v : centre)
      v = d(g);
    const double mc = median_seconds(repeats, [&] { std::memcpy(copy.data(), x.data(), 4 * n); });
    const double per_entry = 8.0 / mc; // traffic bytes an entry, per second of a stage
    w = centre;
    const double td = median_seconds(repeats, [&] {
      model::easgd_centre_step(centre.data(), w.data(), 0.25f, delta.data(), n);
    });
    model::sparse_vector change;
    model::threshold(x.data(), n, model::estimate_threshold(x.data(), n, 0.006), change);
    model::round_to_log8(change);
    const auto payload = model::encode(change);
    for (double keep : keeps) {
      model::dct_settings s;
      s.dp = true;
      s.dp_keep = 0.003; // the syncer's: dct.dp-keep's default
      s.dp_reply_keep = keep;
      s.log8 = true;
      s.refresh = 10;
      model::dct_mirror mirror(s, n, 7, centre.data());
      std::vector<std::uint8_t> reply;
      const double tx = median_seconds(repeats, [&] {
        for (int r = 0; r < 10; ++r) { // a whole refresh period
          model::sparse_vector in;
          if (model::decode(payload.data(), payload.size(), std::uint32_t(n), in))
            std::abort();
          reply = model::encode(mirror.exchange(in, centre.data(), 0.25f));
        }
      }) / 10.0;
      // The syncer: a replica that moved by a normal step of 0.01 since the
      // last round (the step itself not timed), the change sent, the reply heard.
      model::dct_sender sender(s, n, 9, centre.data());
      std::vector<float> replica = centre;
      std::normal_distribution<float> step(0.0f, 0.01f);
      std::vector<std::vector<float>> steps(10, std::vector<float>(n));
      for (auto& st : steps)
        for (auto& v : st)
          v = step(g);
      const double ty = median_of(repeats, [&] {
        double t = 0;
        for (int r = 0; r < 10; ++r) {
          for (std::size_t i = 0; i < n; ++i)
            replica[i] += steps[std::size_t(r)][i];
          const auto a = std::chrono::steady_clock::now();
          const auto sent = model::encode(sender.encode_change(replica.data()));
          model::sparse_vector back;
          if (model::decode(reply.data(), reply.size(), std::uint32_t(n), back))
            std::abort();
          sender.on_reply(back);
          t += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
          if (sent.empty())
            std::abort();
        }
        return t;
      });
      std::printf("| %zu | %g | %.2f | %.1f | %.1f | %.2f | %.1f |\n", n, keep,
                  4.0 * double(n) / mc / 1e9, td * per_entry, tx * per_entry, tx / td,
                  ty / 10.0 * per_entry);
    }
  }
}

// A worker's thresholded push against its residual map's size (the header).
void pushes_by_map(const std::vector<std::size_t>& map_rows, int repeats) {
  const std::size_t tables = 26, dim = 16, per_push = 1200, pushes = 64;
  const model::dct_settings d;
  std::printf("\n| residual map rows | push ns a value | against the smallest map |\n"
              "|---|---|---|\n");
  double first = 0;
  for (std::size_t rows : map_rows) {
    rows = std::max(rows, per_push);
    std::mt19937_64 g(7);
    std::vector<std::uint64_t> keys(rows);
    for (std::size_t i = 0; i < rows; ++i) // distinct: row i / tables of table i % tables
      keys[i] = model::row_key(i % tables, i / tables);
    std::shuffle(keys.begin(), keys.end(), g);
    std::normal_distribution<float> nd(0.0f, 1e-3f);
    std::vector<float> grads(per_push * dim), work;
    for (auto& x : grads)
      x = nd(g);
    // Every 10th push estimates, as `train` derives dct.mp-refresh for a
    // batch of 128 (these pushes' size); docs/dct.md's figures are at it.
    const std::uint64_t refresh = 10;
    model::dct_row_thresholds tau(tables, d.mp_grad_keep, refresh, 1000003ull);
    model::dct_row_residuals residual(dim);
    model::sparse_vector out;
    auto push = [&](const std::uint64_t* k) {
      work = grads;
      model::threshold_row_push(tau, &residual, k, work.data(), per_push, dim, d.rounds_half(),
                                out);
      (void)model::encode(out);
    };
    for (std::size_t i = 0; i + per_push <= rows; i += per_push) // every row gets a residual
      push(keys.data() + i);
    std::vector<std::uint64_t> batch(per_push);
    const double s = median_of(repeats, [&] {
      double t = 0;
      for (std::size_t p = 0; p < pushes; ++p) {
        std::sample(keys.begin(), keys.end(), batch.begin(), per_push, g);
        const auto a = std::chrono::steady_clock::now();
        push(batch.data());
        t += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
      }
      return t;
    });
    const double ns = 1e9 * s / double(pushes * per_push * dim);
    if (first == 0)
      first = ns;
    std::printf("| %zu | %.2f | %.2f |\n", rows, ns, ns / first);
  }
}

// The fourth table: each index form (encode picks the smallest).
void forms(const std::vector<std::size_t>& sizes, const std::vector<double>& keeps, int repeats) {
  using model::sparse_format;
  std::printf("\n| entries | keep | form | bytes a value | encode ns a value | decode ns a value |\n"
              "|---|---|---|---|---|---|\n");
  for (auto n : sizes) {
    std::mt19937 g(2);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(n);
    for (auto& v : x)
      v = d(g);
    for (double keep : keeps) {
      model::sparse_vector s, back;
      model::threshold(x.data(), n, model::estimate_threshold(x.data(), n, keep), s);
      model::round_to_log8(s); // dct.dp's values: a byte each
      const double k = double(std::max<std::size_t>(1, s.nnz()));
      const auto picked = model::smaller_format(s);
      for (auto f : {sparse_format::deltas, sparse_format::bitmap, sparse_format::rice}) {
        std::vector<std::uint8_t> bytes;
        const double te = median_seconds(repeats, [&] { bytes = model::encode(s, f); });
        const double td = median_seconds(repeats, [&] {
          if (model::decode(bytes.data(), bytes.size(), std::uint32_t(n), back))
            std::abort();
        });
        std::printf("| %zu | %g | %s%s | %.2f | %.2f | %.2f |\n", n, keep,
                    f == sparse_format::deltas ? "deltas" : f == sparse_format::bitmap ? "bitmap" : "rice",
                    f == picked ? " (picked)" : "", double(bytes.size()) / k,
                    1e9 * te / k, 1e9 * td / k);
      }
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  int repeats = 31;
  std::vector<std::size_t> sizes{29184, 1048576};
  std::vector<double> keeps{0.1, 0.01, 0.001};
  std::vector<std::size_t> map_rows{1200, 35000, 120000, 500000};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&](const char* k) {
      const std::string p = std::string(k) + "=";
      return a.rfind(p, 0) == 0 ? a.substr(p.size()) : std::string();
    };
    if (auto v = val("--repeats"); !v.empty())
      repeats = std::max(1, std::stoi(v));
    else if (auto v = val("--sizes"); !v.empty())
      sizes = parse_list<std::size_t>(v);
    else if (auto v = val("--keeps"); !v.empty())
      keeps = parse_list<double>(v);
    else if (auto v = val("--map-rows"); !v.empty())
      map_rows = parse_list<std::size_t>(v);
    else {
      std::fprintf(stderr, "bench_dct: unknown argument '%s' (expected --repeats=, --sizes=, "
                           "--keeps=, --map-rows=)\n", argv[i]);
      return 2;
    }
  }
  std::printf("| entries | keep | memcpy GB/s | estimate | threshold | threshold, one branch per "
              "entry | encode | decode | scatter_add | all five | all / memcpy |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (auto n : sizes) {
    std::mt19937 g(1);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(n), copy(n), dst(n, 0.0f);
    for (auto& v : x)
      v = d(g);
    const double gb = 4.0 * double(n) / 1e9;
    const double mc = median_seconds(repeats, [&] { std::memcpy(copy.data(), x.data(), 4 * n); });
    for (double keep : keeps) {
      float tau = 0;
      model::sparse_vector s, back;
      std::vector<std::uint8_t> bytes;
      const double te = median_seconds(repeats, [&] { tau = model::estimate_threshold(x.data(), n, keep); });
      const double tt = median_seconds(repeats, [&] { model::threshold(x.data(), n, tau, s); });
      const double tb = median_seconds(repeats, [&] { branchy_threshold(x.data(), n, tau, s); });
      const double tc = median_seconds(repeats, [&] { bytes = model::encode(s); });
      const double td = median_seconds(repeats, [&] {
        if (model::decode(bytes.data(), bytes.size(), std::uint32_t(n), back))
          std::abort();
      });
      const double ts = median_seconds(repeats, [&] { model::scatter_add(back, dst.data()); });
      const double all = te + tt + tc + td + ts;
      std::printf("| %zu | %g | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                  n, keep, gb / mc, gb / te, gb / tt, gb / tb, gb / tc, gb / td, gb / ts, gb / all,
                  mc / all);
    }
  }
  shard_rounds(sizes, keeps, repeats);
  pushes_by_map(map_rows, std::min(repeats, 7));
  forms(sizes, keeps, repeats);
  return 0;
}
