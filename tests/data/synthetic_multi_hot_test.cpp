// Generated multi-hot data (issue 39 item 2): bag sizes fixed or drawn, the
// MLPerf preset, the '|'-joined text, a teacher that sums per-id effects over
// the bag, and the Bayes metrics of the sidecar recomputed from the stream.
#include "data/meta.hpp"
#include "data/synthetic.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace data;

namespace {

std::string temp_file(const std::string& name) {
  return (fs::temp_directory_path() / ("ss-multi-hot-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::vector<std::string> split(const std::string& s, char d) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto at = s.find(d, start);
    out.push_back(s.substr(start, at - start));
    if (at == std::string::npos)
      return out;
    start = at + 1;
  }
}

synthetic_options mlperf_options(std::uint64_t rows) {
  synthetic_options o;
  o.rows = rows;
  o.calibration_rows = 5'000;
  o.bag_size = mlperf_bag_sizes;
  return o;
}

} // namespace

TEST_CASE("bag sizes: none, mlperf, a list of 26, and refusals") {
  std::array<std::uint32_t, synthetic_num_cat> b{};
  CHECK(parse_bag_sizes("mlperf", &b).empty());
  CHECK(b[20] == 100u);
  CHECK(b == mlperf_bag_sizes);
  CHECK(parse_bag_sizes("none", &b).empty());
  CHECK(b == std::array<std::uint32_t, synthetic_num_cat>{});
  CHECK(parse_bag_sizes("1,2,3,4,5,6,7,8,9,10,11,12,13,0,0,0,0,0,0,0,0,0,0,0,0,4", &b).empty());
  CHECK(b[25] == 4u);
  CHECK(parse_bag_sizes("1,2", &b) == "expected 26 bag sizes, got 2");
  CHECK(parse_bag_sizes("1,x", &b).find("got 'x' as item 2") != std::string::npos);
  CHECK(parse_bag_sizes("2000", &b).find("from 0 to 1024") != std::string::npos);
  synthetic_options o;
  o.bag_size[3] = 2000;
  CHECK(validate(o) == "bag sizes must be <= 1024");
}

TEST_CASE("fixed bags hold their size's ids joined by '|'; single-hot columns keep one id") {
  const auto o = mlperf_options(2'000);
  const std::string path = temp_file("fixed.tsv");
  generate_result r;
  std::string err;
  REQUIRE_MESSAGE(generate_synthetic(o, path, &r, &err), err);
  std::ifstream in(path);
  std::size_t lines = 0, empty_bags = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto f = split(line, '\t');
    REQUIRE(f.size() == 40u);
    for (std::size_t c = 0; c < synthetic_num_cat; ++c) {
      const auto& field = f[14 + c];
      if (field.empty()) {
        ++empty_bags;
        continue;
      }
      const auto ids = split(field, '|');
      REQUIRE(ids.size() == o.bag_size[c]);
      for (const auto& id : ids)
        REQUIRE(id.size() == 8u);
    }
  }
  CHECK(lines == o.rows);
  CHECK(empty_bags > 0); // cat_missing makes empty bags
  const auto meta = read_meta(meta_path_for(path), &err);
  REQUIRE_MESSAGE(meta, err);
  CHECK(meta->options.bag_size == o.bag_size);
  CHECK(*meta == r.meta);
  std::remove(path.c_str());
  std::remove(meta_path_for(path).c_str());
}

TEST_CASE("drawn bag sizes run from 1 to 2k-1 with mean k") {
  synthetic_options o = mlperf_options(10);
  o.bag_drawn = true;
  o.cat_missing.fill(0.0);
  example_sampler s(o);
  split_mix64 rng(5);
  synthetic_example x;
  const int n = 4'000;
  double total = 0;
  std::uint32_t lo = 1000, hi = 0;
  for (int i = 0; i < n; ++i) {
    s.draw(rng, &x);
    const std::uint32_t size = x.bag_begin[20 + 1] - x.bag_begin[20]; // C21: k = 100
    lo = std::min(lo, size);
    hi = std::max(hi, size);
    total += size;
    REQUIRE(x.bag_begin[2 + 1] - x.bag_begin[2] == 1u); // k = 1 stays 1
  }
  CHECK(lo >= 1u);
  CHECK(hi <= 199u);
  CHECK(hi > 180u);
  CHECK(total / n == doctest::Approx(100.0).epsilon(0.03));
}

TEST_CASE("the teacher sums per-id effects over a bag, scaled by 1/sqrt(k)") {
  auto o = mlperf_options(10);
  o.interaction_count = 0;
  o.dense_effect_scale = 0;
  const teacher t(o);
  synthetic_example x;
  example_sampler s(o);
  split_mix64 rng(9);
  s.draw(rng, &x);
  // x with the bag of column c replaced by `ids`.
  const auto replaced = [&](std::size_t c, const std::vector<std::uint32_t>& ids) {
    synthetic_example y = x;
    std::vector<std::uint32_t> all;
    std::array<std::uint32_t, synthetic_num_cat + 1> begin{};
    for (std::size_t k = 0; k < synthetic_num_cat; ++k) {
      if (k == c)
        all.insert(all.end(), ids.begin(), ids.end());
      else
        all.insert(all.end(), x.bag_ids.begin() + x.bag_begin[k], x.bag_ids.begin() + x.bag_begin[k + 1]);
      begin[k + 1] = static_cast<std::uint32_t>(all.size());
    }
    y.bag_ids = all;
    y.bag_begin = begin;
    return y;
  };
  const auto with_bag = [&](std::size_t c, const std::vector<std::uint32_t>& ids) {
    return t.categorical_term(replaced(c, ids));
  };
  const std::size_t c = 4; // k = 6
  const double none = with_bag(c, {});
  const double a = with_bag(c, {11}) - none, b = with_bag(c, {22}) - none;
  CHECK(a != 0.0);
  CHECK(with_bag(c, {11, 22}) - none == doctest::Approx(a + b).epsilon(1e-12));
  CHECK(with_bag(c, {22, 11}) - none == doctest::Approx(a + b).epsilon(1e-12));
  CHECK(with_bag(c, {11, 11, 11}) - none == doctest::Approx(3 * a).epsilon(1e-12));

  // Interactions through a bag: the pair vector is the (scaled) sum, so the
  // term is bilinear in the bags of the two sides.
  auto oi = mlperf_options(10);
  oi.interaction_count = 325; // every pair, so C5 takes part in some
  oi.cat_effect_scale = 0;
  oi.dense_effect_scale = 0;
  const teacher ti(oi);
  auto inter = [&](const std::vector<std::uint32_t>& ids) {
    return ti.interaction_term(replaced(c, ids));
  };
  const double i0 = inter({}), i1 = inter({11}) - i0, i2 = inter({22}) - i0;
  CHECK(i1 != 0.0);
  CHECK(inter({11, 22}) - i0 == doctest::Approx(i1 + i2).epsilon(1e-9));
}

TEST_CASE("multi-hot sidecar Bayes metrics equal a recomputation from the stream") {
  auto o = mlperf_options(5'000);
  o.bag_drawn = true;
  const std::string path = temp_file("bayes.tsv");
  generate_result r;
  std::string err;
  REQUIRE_MESSAGE(generate_synthetic(o, path, &r, &err), err);
  const teacher t(o);
  synthetic_stream stream(o, t);
  std::vector<char> buf(synthetic_line_bytes(o));
  std::ifstream in(path);
  double loss = 0, positives = 0;
  synthetic_example x;
  std::size_t lines = 0, long_lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    double z;
    int y;
    stream.next(&x, &z, &y);
    const std::string expected(buf.data(), format_synthetic_line(x, y, buf.data()) - 1);
    REQUIRE(line == expected);
    REQUIRE(line.size() < buf.size());
    long_lines += line.size() > synthetic_max_line_bytes;
    const double p = t.probability(x);
    positives += y;
    loss += -(y ? std::log(p) : std::log1p(-p));
  }
  REQUIRE(lines == o.rows);
  CHECK(long_lines > 0); // bags make lines longer than a single-hot line can be
  const double n = static_cast<double>(o.rows), rate = positives / n;
  const double h = -(rate * std::log(rate) + (1 - rate) * std::log(1 - rate));
  CHECK(std::fabs(r.meta.bayes_logloss - loss / n) < 1e-9);
  CHECK(std::fabs(r.meta.bayes_ne - loss / n / h) < 1e-9);
  // Bags carry signal: the floor is well below the base rate's entropy.
  CHECK(r.meta.bayes_ne < 0.9);
  CHECK(r.meta.bayes_ne > 0.5);
  std::remove(path.c_str());
  std::remove(meta_path_for(path).c_str());
}

TEST_CASE("without bags the sidecar has no bag keys") {
  synthetic_meta m;
  const std::string path = temp_file("plain.meta.json");
  std::string err;
  REQUIRE(write_meta(path, m, &err));
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("bag_") == std::string::npos);
  std::remove(path.c_str());
}
