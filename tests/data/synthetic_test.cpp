// Synthetic Criteo-shaped data with a planted teacher (the Zipf sampler is
// tested in zipf_test.cpp): vocabularies and value text, determinism per
// seed, the calibrated CTR, the Bayes metrics in the sidecar, the line
// format, missing rates and the sidecar round trip.
#include "data/meta.hpp"
#include "data/synthetic.hpp"
#include "reader_test_util.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace data;

namespace {

using reader_test::temp_dir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (;;) {
    const auto tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab - start));
    if (tab == std::string::npos)
      return fields;
    start = tab + 1;
  }
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

synthetic_options small_options(std::uint64_t rows) {
  synthetic_options o;
  o.rows = rows;
  o.calibration_rows = 20'000; // keeps each test case well under a second
  return o;
}

generate_result generate_ok(const synthetic_options& o, const std::string& path) {
  generate_result r;
  std::string err;
  const bool ok = generate_synthetic(o, path, &r, &err);
  REQUIRE_MESSAGE(ok, err);
  return r;
}

} // namespace

TEST_CASE("vocabulary sizes run from 10 to a million, Criteo-ordered") {
  synthetic_options o;
  const auto v = synthetic_vocab_sizes(o);
  CHECK(v[2] == 1'000'000u); // C3 is the largest column in Criteo Kaggle
  CHECK(v[8] == 10u);        // C9 the smallest
  std::set<std::uint64_t> distinct(v.begin(), v.end());
  CHECK(distinct.size() == synthetic_num_cat);
  o.vocab_scale = 0.1;
  CHECK(synthetic_vocab_sizes(o)[2] == 100'000u);
}

TEST_CASE("categorical text is 8 hex digits, one-to-one per column, keyed by column") {
  std::set<std::string> seen;
  char buf[8];
  for (std::uint32_t id = 0; id < 100'000; ++id) {
    categorical_text(4, id, buf);
    seen.emplace(buf, 8);
  }
  CHECK(seen.size() == 100'000u); // no two ids of a column share a string
  // Pinned: changing the mapping changes every generated file.
  categorical_text(0, 0, buf);
  CHECK(std::string(buf, 8) == "b425d5dc");
  categorical_text(25, 123456, buf);
  CHECK(std::string(buf, 8) == "229300f4");
  char a[8], b[8];
  categorical_text(0, 12345, a);
  categorical_text(1, 12345, b);
  CHECK(std::string(a, 8) != std::string(b, 8));
  for (char c : std::string(a, 8))
    CHECK(std::string("0123456789abcdef").find(c) != std::string::npos);
}

TEST_CASE("value ids: distinct ranks give distinct ids, rank 1 is not id 0") {
  synthetic_options o;
  example_sampler s(o);
  std::set<std::uint32_t> ids;
  for (std::uint64_t r = 1; r <= 50'000; ++r)
    ids.insert(s.value_id(2, r));
  CHECK(ids.size() == 50'000u);
  CHECK(s.value_id(2, 1) != 0u);
}

TEST_CASE("same options give the same bytes; another seed another file") {
  temp_dir dir;
  const auto o = small_options(3000);
  generate_ok(o, dir.path("a.tsv"));
  generate_ok(o, dir.path("b.tsv"));
  const auto a = slurp(dir.path("a.tsv"));
  CHECK(a.size() > 3000u * 40u); // at least the 39 tabs and a newline per row
  CHECK(a == slurp(dir.path("b.tsv")));
  CHECK(slurp(dir.path("a.tsv.meta.json")) == slurp(dir.path("b.tsv.meta.json")));

  auto o2 = o;
  o2.seed = 2;
  generate_ok(o2, dir.path("c.tsv"));
  CHECK(a != slurp(dir.path("c.tsv")));
}

TEST_CASE("the teacher depends on teacher_seed only, not on seed or rows") {
  auto o = small_options(10);
  auto o_other_sample = o;
  o_other_sample.seed = 99;
  o_other_sample.rows = 12345;
  auto o_other_teacher = o;
  o_other_teacher.teacher_seed = 43;
  const teacher t(o), same(o_other_sample), other(o_other_teacher);
  CHECK(t.bias() == same.bias());
  CHECK(t.interaction_pairs() == same.interaction_pairs());

  example_sampler sampler(o);
  split_mix64 rng(5);
  synthetic_example x;
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    sampler.draw(rng, &x);
    REQUIRE(t.logit(x) == same.logit(x));
    differ += t.logit(x) != other.logit(x);
  }
  CHECK(differ == 100);
}

TEST_CASE("a teacher without effects predicts the target CTR exactly") {
  auto o = small_options(10);
  o.cat_effect_scale = 0;
  o.interaction_count = 0;
  o.dense_effect_scale = 0;
  o.target_ctr = 0.25;
  const teacher t(o);
  // logit(0.25) = ln(0.25 / 0.75) = -1.0986
  CHECK(t.bias() == doctest::Approx(std::log(0.25 / 0.75)).epsilon(1e-12));
  synthetic_example x;
  CHECK(t.probability(x) == doctest::Approx(0.25).epsilon(1e-12));
}

TEST_CASE("interaction and dense terms have their configured spread") {
  auto o = small_options(10);
  const teacher t(o);
  // Uniformly random value ids (not Zipf draws), so every term averages over
  // many distinct vectors: Var = interaction_count * interaction_scale^2 = 4 * 0.25.
  split_mix64 rng(17);
  synthetic_example x;
  double s = 0, s2 = 0;
  const int n = 20'000;
  for (int i = 0; i < n; ++i) {
    for (auto& v : x.cat)
      v = static_cast<std::uint32_t>(rng.next());
    const double v = t.interaction_term(x);
    s += v;
    s2 += v * v;
  }
  CHECK(std::fabs(s / n) < 0.05); // sd of the mean is 0.007
  CHECK(s2 / n - (s / n) * (s / n) == doctest::Approx(1.0).epsilon(0.08));

  // The dense term is standardised on the calibration sample; on a fresh
  // sample its mean is about 0 and its sd about dense_effect_scale = 0.5.
  example_sampler sampler(o);
  s = s2 = 0;
  for (int i = 0; i < n; ++i) {
    sampler.draw(rng, &x);
    const double v = t.dense_term(x);
    s += v;
    s2 += v * v;
  }
  CHECK(std::fabs(s / n) < 0.03);
  CHECK(std::sqrt(s2 / n - (s / n) * (s / n)) == doctest::Approx(0.5).epsilon(0.05));
}

TEST_CASE("positive rate is close to the target CTR") {
  temp_dir dir;
  for (double target : {0.25, 0.05}) {
    CAPTURE(target);
    auto o = small_options(50'000);
    o.target_ctr = target;
    const auto r = generate_ok(o, dir.path("ctr.tsv"));
    // sd of a 50k-row rate is at most 0.0019; the calibration sample adds less.
    CHECK(std::fabs(r.meta.positive_rate - target) < 0.01);
    CHECK(std::fabs(r.meta.mean_probability - target) < 0.01);
  }
}

TEST_CASE("sidecar Bayes metrics equal a recomputation from the teacher") {
  temp_dir dir;
  const auto o = small_options(20'000);
  const std::string path = dir.path("bayes.tsv");
  std::uint64_t last_progress = 0;
  generate_result r;
  std::string err;
  REQUIRE(generate_synthetic(o, path, &r, &err, [&](std::uint64_t done) { last_progress = done; }));
  CHECK(last_progress == o.rows);

  const auto meta = read_meta(meta_path_for(path), &err);
  REQUIRE_MESSAGE(meta, err);
  CHECK(*meta == r.meta);

  // Replay the stream with a fresh teacher; every line must be the example
  // the stream draws, and the labels come from the file.
  const auto lines = read_lines(path);
  REQUIRE(lines.size() == o.rows);
  const teacher t(o);
  synthetic_stream stream(o, t);
  double positives = 0, loss = 0, entropy = 0;
  synthetic_example x;
  char buf[synthetic_max_line_bytes];
  for (const auto& line : lines) {
    double z;
    int stream_label;
    stream.next(&x, &z, &stream_label);
    const int y = line[0] == '1' ? 1 : 0;
    const std::string expected(buf, format_synthetic_line(x, y, buf) - 1); // without '\n'
    REQUIRE(line == expected);
    REQUIRE(y == stream_label);
    const double p = t.probability(x);
    positives += y;
    loss += -(y ? std::log(p) : std::log1p(-p));
    entropy += -(p * std::log(p) + (1 - p) * std::log1p(-p));
  }
  const double n = static_cast<double>(o.rows);
  const double rate = positives / n;
  const double h = -(rate * std::log(rate) + (1 - rate) * std::log(1 - rate));
  CHECK(meta->positive_rate == rate);
  CHECK(std::fabs(meta->bayes_logloss - loss / n) < 1e-9);
  CHECK(std::fabs(meta->bayes_expected_logloss - entropy / n) < 1e-9);
  CHECK(std::fabs(meta->base_entropy - h) < 1e-9);
  CHECK(std::fabs(meta->bayes_ne - loss / n / h) < 1e-9);
  // The defaults plant a learnable signal: clearly better than the base rate.
  CHECK(meta->bayes_ne > 0.6);
  CHECK(meta->bayes_ne < 0.9);
}

TEST_CASE("every line has 40 fields: label 0/1, integers, 8 hex digits or empty") {
  temp_dir dir;
  const auto o = small_options(5000);
  generate_ok(o, dir.path("fmt.tsv"));
  const auto lines = read_lines(dir.path("fmt.tsv"));
  REQUIRE(lines.size() == 5000u);
  int negative_i2 = 0;
  for (const auto& line : lines) {
    const auto f = split_tabs(line);
    REQUIRE(f.size() == 40u);
    REQUIRE((f[0] == "0" || f[0] == "1"));
    for (std::size_t j = 1; j <= 13; ++j) {
      if (f[j].empty())
        continue;
      const long long v = std::stoll(f[j]);
      REQUIRE(std::to_string(v) == f[j]);
      if (j == 2) { // I2: -1 or -2 at worst, like Criteo
        REQUIRE(v >= -2);
        negative_i2 += v < 0;
      } else {
        REQUIRE(v >= 0);
      }
    }
    for (std::size_t c = 14; c < 40; ++c)
      REQUIRE((f[c].empty() || (f[c].size() == 8 && f[c].find_first_not_of("0123456789abcdef") ==
                                                         std::string::npos)));
  }
  // 5% of present I2 values are negative: about 250 of 5000.
  CHECK(negative_i2 > 150);
  CHECK(negative_i2 < 350);
}

TEST_CASE("missing rates follow the options") {
  temp_dir dir;
  auto o = small_options(20'000);
  for (std::size_t j = 0; j < synthetic_num_dense; ++j)
    o.dense_missing[j] = 0.05 * static_cast<double>(j); // 0 .. 0.6
  for (std::size_t c = 0; c < synthetic_num_cat; ++c)
    o.cat_missing[c] = static_cast<double>(c) / 25.0; // 0 .. 1
  generate_ok(o, dir.path("missing.tsv"));
  std::vector<double> empty(40, 0.0);
  const auto lines = read_lines(dir.path("missing.tsv"));
  for (const auto& line : lines) {
    const auto f = split_tabs(line);
    for (std::size_t i = 1; i < 40; ++i)
      empty[i] += f[i].empty();
  }
  const double n = static_cast<double>(lines.size());
  // sd of a rate over 20k rows is at most 0.0035; 0.02 is over 5 sd.
  for (std::size_t j = 0; j < synthetic_num_dense; ++j) {
    CAPTURE(j);
    CHECK(std::fabs(empty[1 + j] / n - o.dense_missing[j]) < 0.02);
  }
  for (std::size_t c = 0; c < synthetic_num_cat; ++c) {
    CAPTURE(c);
    CHECK(std::fabs(empty[14 + c] / n - o.cat_missing[c]) < 0.02);
  }
  CHECK(empty[1] == 0);      // rate 0: never empty
  CHECK(empty[14 + 25] == n); // rate 1: always empty
}

TEST_CASE("meta round trip, tolerant reading and errors") {
  temp_dir dir;
  synthetic_meta m;
  m.rows = 123;
  m.positive_rate = 0.1 + 0.2; // 0.30000000000000004 must survive exactly
  m.bayes_logloss = 1.0 / 3.0;
  m.bayes_ne = std::nan("");   // written as null, read as NaN
  m.vocab_sizes[3] = 4'000'000'000ULL;
  m.options.rows = 123;
  m.options.teacher_seed = 18'446'744'073'709'551'615ULL; // 2^64 - 1: beyond a double's 53 bits
  m.options.cat_missing[7] = 0.125;
  m.options.negative_i2 = false;
  const auto path = dir.path("m.meta.json");
  std::string err;
  REQUIRE(write_meta(path, m, &err));
  auto back = read_meta(path, &err);
  REQUIRE_MESSAGE(back, err);
  CHECK(*back == m);
  CHECK(back->options.teacher_seed == m.options.teacher_seed);
  CHECK(std::isnan(back->bayes_ne));

  // Any order, extra whitespace, unknown keys; absent options keep defaults.
  std::ofstream(dir.path("hand.json"))
      << "{ \"bayes_ne\" : 0.75, \"unknown\": \"x\",\n\t\"rows\":10, \"positive_rate\": 0.5,"
         " \"bayes_logloss\": 0.52, \"version\": 1, \"format\": \"shadowsync-synthetic\" }";
  back = read_meta(dir.path("hand.json"), &err);
  REQUIRE_MESSAGE(back, err);
  CHECK(back->rows == 10u);
  CHECK(back->bayes_ne == 0.75);
  CHECK(back->options.zipf_exponent == synthetic_options{}.zipf_exponent);

  std::ofstream(dir.path("missing-key.json")) << R"({"format": "shadowsync-synthetic", "version": 1})";
  CHECK(!read_meta(dir.path("missing-key.json"), &err));
  CHECK(err.find("missing key 'rows'") != std::string::npos);

  std::ofstream(dir.path("bad-format.json"))
      << R"({"format": "other", "version": 1, "rows": 1, "positive_rate": 0, "bayes_logloss": 0, "bayes_ne": 0})";
  CHECK(!read_meta(dir.path("bad-format.json"), &err));
  CHECK(err.find("bad-format.json") != std::string::npos);

  // Version 1 wrote lists as comma-separated strings; they still read.
  std::ofstream(dir.path("v1.json"))
      << R"({"format": "shadowsync-synthetic", "version": 1, "rows": 1, "positive_rate": 0,)"
         R"( "bayes_logloss": 0, "bayes_ne": null, "dense_missing": "0,0,0,0,0,0,0,0,0,0,0,0,0.5"})";
  back = read_meta(dir.path("v1.json"), &err);
  REQUIRE_MESSAGE(back, err);
  CHECK(back->options.dense_missing[12] == 0.5);
  CHECK(std::isnan(back->bayes_ne));

  // Wrong type, wrong range, wrong length: refused naming the key.
  for (const auto& [value, key] : std::vector<std::pair<std::string, std::string>>{
           {R"("rows": "ten")", "rows"},
           {R"("rows": -1)", "rows"},
           {R"("rows": 4.4e83)", "rows"},
           {R"("negative_i2": 1)", "negative_i2"},
           {R"("dense_missing": [0.5])", "dense_missing"}}) {
    std::ofstream(dir.path("typed.json"))
        << R"({"format": "shadowsync-synthetic", "version": 1, "positive_rate": 0,)"
           R"( "bayes_logloss": 0, "bayes_ne": 0, "rows": 1, )" << value << "}";
    CHECK_MESSAGE(!read_meta(dir.path("typed.json"), &err), value);
    CHECK_MESSAGE(err.find("typed.json: field '" + key + "'") != std::string::npos, err);
  }

  CHECK(!read_meta(dir.path("absent.json"), &err));
  CHECK(err.find("absent.json") != std::string::npos);
}

TEST_CASE("errors are values naming the path or the option") {
  const std::string path = "/nonexistent-ss-dir/out.tsv";
  std::string err;
  CHECK(!generate_synthetic(small_options(10), path, nullptr, &err));
  CHECK(err.find(path) != std::string::npos);

  auto o = small_options(0);
  CHECK(!generate_synthetic(o, "/tmp/unused.tsv", nullptr, &err));
  CHECK(err.find("rows") != std::string::npos);
  o = small_options(10);
  o.target_ctr = 1.0;
  CHECK(validate(o).find("target_ctr") != std::string::npos);
  o = small_options(10);
  o.vocab_scale = 1e4; // largest vocabulary 1e10 > 2^32
  CHECK(validate(o).find("vocab_scale") != std::string::npos);

  CHECK(!write_meta("/nonexistent-ss-dir/x.meta.json", synthetic_meta{}, &err));
  CHECK(err.find("/nonexistent-ss-dir/x.meta.json") != std::string::npos);
}
