// Criteo TSV parsing through data::reader: field values, missing fields,
// CRLF, hashes, batches and reset().
#include <cmath>
#include <doctest/doctest.h>

#include "data/hashing.hpp"
#include "data/line_parser.hpp"
#include "reader_test_util.hpp"

using namespace reader_test;

TEST_CASE("criteo line: label, dense transform and categorical hashes") {
  temp_dir dir;
  // I1=1, I2=-2 (negative), I3="12.0" (float form of 12), I4 missing,
  // I5=1382, I6="1e3" (exponent form of 1000), I7="+7", I8..I13 missing.
  const std::string line = criteo_line("1", {"1", "-2", "12.0", "", "1382", "1e3", "+7"},
                                       {"68fd1e64", "", "fb936136"});
  const auto r = read_all(options_for({dir.write("a.tsv", line + "\n")}));
  REQUIRE(r.open_error.empty());
  REQUIRE(r.all.size == 1);
  CHECK(r.all.num_dense == 13);
  CHECK(r.all.num_cat == 26);
  CHECK(r.all.labels[0] == 1.0f);
  CHECK(r.all.dense[0] == doctest::Approx(0.6931472)); // ln 2 = log1p(1)
  CHECK(r.all.dense[1] == 0.0f);                       // log1p(max(-2, 0)) = log1p(0)
  CHECK(r.all.dense[2] == doctest::Approx(2.5649494)); // ln 13 = log1p(12), from "12.0"
  CHECK(r.all.dense[3] == 0.0f);                       // missing
  CHECK(r.all.dense[4] == doctest::Approx(7.2320)); // ln 1383, beyond the small-value table
  CHECK(r.all.dense[5] == doctest::Approx(6.9087548)); // ln 1001 = log1p(1e3)
  CHECK(r.all.dense[6] == doctest::Approx(2.0794415)); // ln 8 = log1p(+7)
  for (int i = 7; i < 13; ++i)
    CHECK(r.all.dense[i] == 0.0f); // missing
  // Exactly the documented transform: float(log1p(x)) in double.
  CHECK(r.all.dense[4] == static_cast<float>(std::log1p(1382.0)));
  CHECK(r.all.dense[0] == static_cast<float>(std::log1p(1.0)));

  // C1 is categorical column 0, C3 column 2; missing hashes "" per column.
  CHECK(r.all.cat[0] == data::hash_categorical("68fd1e64", 0));
  CHECK(r.all.cat[1] == data::hash_categorical("", 1));
  CHECK(r.all.cat[2] == data::hash_categorical("fb936136", 2));
  for (std::size_t c = 3; c < 26; ++c)
    CHECK(r.all.cat[c] == data::hash_categorical("", c));
  // The column enters the hash: the same text in another column differs.
  CHECK(data::hash_categorical("68fd1e64", 0) != data::hash_categorical("68fd1e64", 1));
  CHECK(r.stats.examples == 1);
  CHECK(r.stats.lines == 1);
  CHECK(r.stats.malformed == 0);
  CHECK(r.stats.bytes == line.size() + 1); // + the newline
}

TEST_CASE("lines may lack trailing empty fields") {
  temp_dir dir;
  // Line 1: label and I1 only. Line 2: label only. Line 3: up to C2.
  const std::string text = "0\t5\n1\n" + criteo_line("0", {}, {"aa", "bb"}).substr(0, 1 + 13 + 6) + "\n";
  const auto r = read_all(options_for({dir.write("short.tsv", text)}));
  REQUIRE(r.all.size == 3);
  CHECK(r.stats.malformed == 0);
  CHECK(r.all.labels == std::vector<float>{0.0f, 1.0f, 0.0f});
  CHECK(r.all.dense[0] == doctest::Approx(1.7917595)); // ln 6 = log1p(5)
  for (int i = 1; i < 13 * 3; ++i)
    CHECK(r.all.dense[i] == 0.0f);
  for (std::size_t c = 0; c < 26; ++c) {
    CHECK(r.all.cat[c] == data::hash_categorical("", c));      // line 1
    CHECK(r.all.cat[26 + c] == data::hash_categorical("", c)); // line 2
  }
  CHECK(r.all.cat[52 + 0] == data::hash_categorical("aa", 0));
  CHECK(r.all.cat[52 + 1] == data::hash_categorical("bb", 1));
  CHECK(r.all.cat[52 + 2] == data::hash_categorical("", 2));
}

TEST_CASE("CRLF line endings read like LF") {
  temp_dir dir;
  const std::string l1 = criteo_line("1", {"3"}, {"x1", "", "", "", "", "", "", "", "", "", "", "", "", "", "",
                                                  "", "", "", "", "", "", "", "", "", "", "last"});
  const std::string l2 = criteo_line("0", {"", "4"}, {"y"});
  const auto lf = read_all(options_for({dir.write("lf.tsv", l1 + "\n" + l2 + "\n")}));
  const auto crlf = read_all(options_for({dir.write("crlf.tsv", l1 + "\r\n" + l2 + "\r\n")}));
  REQUIRE(crlf.all.size == 2);
  CHECK(crlf.stats.malformed == 0);
  CHECK(crlf.all.labels == lf.all.labels);
  CHECK(crlf.all.dense == lf.all.dense);
  CHECK(crlf.all.cat == lf.all.cat);
  // The '\r' is not part of the last field's text.
  CHECK(crlf.all.cat[25] == data::hash_categorical("last", 25));
  // A CRLF line cut after the label: "1\r" is label 1.
  const auto short_crlf = read_all(options_for({dir.write("s.tsv", "1\r\n0\r\n")}));
  CHECK(short_crlf.all.labels == std::vector<float>{1.0f, 0.0f});
}

TEST_CASE("end of file: with or without final newline, trailing empty lines") {
  temp_dir dir;
  const std::string l = criteo_line("1", {"1"}, {"a"});
  for (const std::string& text : {l + "\n" + l, l + "\n" + l + "\n", l + "\n" + l + "\n\n", l + "\r\n" + l + "\r\n\r\n\n"}) {
    const auto r = read_all(options_for({dir.write("end.tsv", text)}));
    CHECK(r.all.size == 2);
    CHECK(r.stats.malformed == 0); // trailing empty lines are not data
    CHECK(r.stats.lines == 2);
  }
  const auto empty = read_all(options_for({dir.write("empty.tsv", "")}));
  CHECK(empty.open_error.empty());
  CHECK(empty.all.size == 0);
  CHECK(empty.stats.lines == 0);
}

TEST_CASE("labels: 0, 1, 0.0 and 1.0 are accepted") {
  temp_dir dir;
  const auto r = read_all(options_for({dir.write("l.tsv", "0\n1\n0.0\n1.0\n1e0\n")}));
  CHECK(r.stats.malformed == 0);
  CHECK(r.all.labels == std::vector<float>{0, 1, 0, 1, 1});
}

TEST_CASE("batches: next() appends up to max_examples, buffers keep capacity") {
  temp_dir dir;
  std::string text;
  for (int i = 0; i < 10; ++i)
    text += criteo_line(i % 2 ? "1" : "0", {std::to_string(i)}, {"v" + std::to_string(i)}) + "\n";
  auto rd = data::reader::open(options_for({dir.write("b.tsv", text)}), nullptr);
  REQUIRE(rd);
  data::batch b;
  REQUIRE(rd->next(b, 4));
  CHECK(b.size == 4);
  CHECK(b.labels.size() == 4);
  CHECK(b.dense.size() == 4 * 13);
  CHECK(b.cat.size() == 4 * 26);
  REQUIRE(rd->next(b, 4)); // appends: 8 examples now
  CHECK(b.size == 8);
  CHECK(b.cat[4 * 26] == data::hash_categorical("v4", 0));
  const auto capacity = b.cat.capacity();
  const auto* storage = b.cat.data();
  b.clear();
  REQUIRE(rd->next(b, 4)); // only 2 left
  CHECK(b.size == 2);
  CHECK(b.cat.capacity() == capacity); // reused, not reallocated
  CHECK(b.cat.data() == storage);
  CHECK(b.labels == std::vector<float>{0, 1}); // lines 9 and 10: i = 8, 9
  b.clear();
  CHECK_FALSE(rd->next(b, 4)); // end
  CHECK(b.size == 0);
  CHECK(rd->error().empty());
  CHECK(rd->statistics().examples == 10);

  // reset() starts over with fresh statistics.
  rd->reset();
  CHECK(rd->statistics().examples == 0);
  REQUIRE(rd->next(b, 100));
  CHECK(b.size == 10);
  CHECK(rd->statistics().examples == 10);
}

// Its own ctest entry, data_criteo (tests/CMakeLists.txt), reported as
// skipped when ../shared/data is absent; the `data` suite excludes it.
TEST_CASE("shared Criteo sample: 8000 examples, none malformed") {
  const std::string path = std::string(SS_SHARED_DATA_DIR) + "/criteo-kaggle-head10k/train-8k.tsv";
  REQUIRE_MESSAGE(std::filesystem::exists(path), path << " is absent");
  const auto r = read_all(options_for({path}), 512);
  REQUIRE(r.open_error.empty());
  CHECK(r.error.empty());
  CHECK(r.all.size == 8000);
  CHECK(r.stats.malformed == 0);
  CHECK(r.stats.bytes == std::filesystem::file_size(path));
  // First line: 0, I1=1, I2=1, I3=5, ... C1=68fd1e64, C26=9727dd16.
  CHECK(r.all.labels[0] == 0.0f);
  CHECK(r.all.dense[0] == doctest::Approx(0.6931472)); // log1p(1)
  CHECK(r.all.dense[2] == doctest::Approx(1.7917595)); // log1p(5)
  CHECK(r.all.cat[0] == data::hash_categorical("68fd1e64", 0));
  CHECK(r.all.cat[25] == data::hash_categorical("9727dd16", 25));
  // README: 21.6 % positives in these 8000 rows.
  double positives = 0;
  for (float l : r.all.labels)
    positives += l;
  CHECK(positives / 8000 == doctest::Approx(0.216).epsilon(0.01));

  // The same rows split four ways: disjoint parts covering every line.
  std::size_t total = 0;
  for (std::size_t part = 0; part < 4; ++part) {
    auto o = options_for({path});
    o.part = part;
    o.num_parts = 4;
    const auto p = read_all(o, 512);
    CHECK(p.stats.malformed == 0);
    CHECK(p.all.size > 1000); // roughly 2000 each
    total += p.all.size;
  }
  CHECK(total == 8000);
}
