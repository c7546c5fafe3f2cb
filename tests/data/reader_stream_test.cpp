// Streaming: chunk boundaries, several files, part i of n.
#include <algorithm>
#include <doctest/doctest.h>
#include <set>

#include "data/hashing.hpp"
#include "reader_test_util.hpp"

using namespace reader_test;

namespace {

// A file of `n` lines with C1 = "id<first + k>" so every example can be told
// apart. Mixed on purpose: CRLF, short lines, a line of ~3 KB, a malformed
// line every 17th, an empty line every 23rd, and two empty lines at the end.
// *good counts the well-formed lines, *bad the malformed ones.
std::string mixed_file(int first, int n, int* good, int* bad) {
  std::string text;
  for (int k = 0; k < n; ++k) {
    const int id = first + k;
    if (k % 23 == 22) {
      text += "\n"; // empty line in the middle: malformed
      ++*bad;
      continue;
    }
    std::string line;
    if (k % 17 == 16) {
      line = criteo_line("0", {"1", "zz"}, {"id" + std::to_string(id)}); // I2 not a number
      ++*bad;
    } else if (k % 5 == 3) {
      line = "1\t" + std::to_string(k) + std::string(13, '\t') + "id" + std::to_string(id); // short
      ++*good;
    } else if (k == 7) {
      line = criteo_line("0", {"3"}, {"id" + std::to_string(id), std::string(3000, 'L')}); // long
      ++*good;
    } else {
      line = criteo_line(k % 3 ? "0" : "1", {std::to_string(k), "-1", "2.5"},
                         {"id" + std::to_string(id), "x" + std::to_string(k % 7)});
      ++*good;
    }
    text += line + (k % 4 == 1 ? "\r\n" : "\n");
  }
  return text + "\n\n";
}

// C1 hashes of every example, in order: the identity of each line read.
std::vector<std::uint64_t> ids(const data::batch& b) {
  std::vector<std::uint64_t> out;
  for (std::size_t e = 0; e < b.size; ++e)
    out.push_back(b.cat[e * b.num_cat]);
  return out;
}

} // namespace

TEST_CASE("lines across chunk boundaries: any chunk size reads the same") {
  temp_dir dir;
  int good = 0, bad = 0;
  const std::string path = dir.write("mixed.tsv", mixed_file(0, 200, &good, &bad));
  auto o = options_for({path});
  o.max_logged_errors = 100;
  const auto reference = read_all(o, 64);
  REQUIRE(reference.open_error.empty());
  CHECK(reference.all.size == static_cast<std::size_t>(good));
  CHECK(reference.stats.malformed == static_cast<std::uint64_t>(bad));
  CHECK(reference.stats.bytes == std::filesystem::file_size(path)); // every byte, empty last lines too
  CHECK(ids(reference.all)[0] == data::hash_categorical("id0", 0));
  // Line 17 (k = 16) is the first malformed one.
  CHECK(reference.stats.first_errors[0] == path + ":17: column I2: expected a number, got 'zz'");
  for (std::size_t chunk : {1, 2, 3, 5, 16, 100, 4096}) {
    CAPTURE(chunk);
    o.chunk_bytes = chunk; // 1..100: most lines, and the 3 KB one, span chunks
    const auto r = read_all(o, 7);
    CHECK(r.all.labels == reference.all.labels);
    CHECK(r.all.dense == reference.all.dense);
    CHECK(r.all.cat == reference.all.cat);
    CHECK(r.stats.malformed == reference.stats.malformed);
    CHECK(r.stats.first_errors == reference.stats.first_errors);
    CHECK(r.stats.bytes == reference.stats.bytes);
  }
}

TEST_CASE("several files are read one after another, line numbers per file") {
  temp_dir dir;
  const std::string good = criteo_line("1", {"1"}, {"a"});
  const std::string a = dir.write("a.tsv", good + "\nbad\n");
  const std::string empty = dir.write("empty.tsv", "");
  const std::string b = dir.write("b.tsv", good + "\n" + good + "\n2\n" + criteo_line("0", {}, {"last"})); // no final newline
  const auto r = read_all(options_for({a, empty, b}), 2);
  REQUIRE(r.open_error.empty());
  CHECK(r.all.size == 4);
  CHECK(r.stats.malformed == 2);
  REQUIRE(r.stats.first_errors.size() == 2);
  CHECK(r.stats.first_errors[0] == a + ":2: column label: expected a label 0 or 1, got 'bad'");
  CHECK(r.stats.first_errors[1] == b + ":3: column label: expected a label 0 or 1, got '2'");
  CHECK(r.all.cat[3 * 26] == data::hash_categorical("last", 0)); // b's unterminated last line
  // A file whose last line has no newline does not run into the next one.
  const auto joined = read_all(options_for({dir.write("c.tsv", "1"), dir.write("d.tsv", "0\n")}));
  CHECK(joined.all.labels == std::vector<float>{1, 0});
}

TEST_CASE("parts i of n are disjoint and together cover every line once") {
  temp_dir dir;
  int good = 0, bad = 0;
  const std::vector<std::string> files = {
      dir.write("p1.tsv", mixed_file(0, 150, &good, &bad)),
      dir.write("p2.tsv", ""),
      dir.write("p3.tsv", mixed_file(1000, 3, &good, &bad)),
      dir.write("p4.tsv", mixed_file(2000, 90, &good, &bad)),
  };
  auto o = options_for(files);
  o.max_logged_errors = 1000;
  const auto whole = read_all(o, 50);
  REQUIRE(whole.all.size == static_cast<std::size_t>(good));
  REQUIRE(whole.stats.malformed == static_cast<std::uint64_t>(bad));
  const std::set<std::string> all_errors(whole.stats.first_errors.begin(), whole.stats.first_errors.end());
  REQUIRE(all_errors.size() == static_cast<std::size_t>(bad));

  for (std::size_t n : {1, 2, 3, 4, 7, 16, 200}) {
    for (std::size_t chunk : {5, 1 << 20}) {
      CAPTURE(n);
      CAPTURE(chunk);
      std::vector<std::uint64_t> seen;
      std::uint64_t malformed = 0, lines = 0, bytes = 0;
      std::set<std::string> errors;
      for (std::size_t part = 0; part < n; ++part) {
        o.part = part;
        o.num_parts = n;
        o.chunk_bytes = chunk;
        const auto r = read_all(o, 16);
        REQUIRE(r.error.empty());
        const auto part_ids = ids(r.all);
        seen.insert(seen.end(), part_ids.begin(), part_ids.end());
        malformed += r.stats.malformed;
        lines += r.stats.lines;
        bytes += r.stats.bytes;
        errors.insert(r.stats.first_errors.begin(), r.stats.first_errors.end());
      }
      // Parts in order, concatenated, are exactly the whole read: no line
      // lost, none read twice, none reordered.
      CHECK(seen == ids(whole.all));
      CHECK(malformed == whole.stats.malformed);
      CHECK(lines == whole.stats.lines);
      CHECK(bytes == whole.stats.bytes);
      // Parts that start mid-file still report true line numbers.
      CHECK(errors == all_errors);
    }
  }
}

TEST_CASE("a part starting exactly at a line start keeps that line") {
  temp_dir dir;
  // Two lines of 4 bytes each ("1\t5\n"): 8 bytes, part 1 of 2 starts at 4.
  const std::string path = dir.write("two.tsv", "1\t5\n0\t7\n");
  auto o = options_for({path});
  o.num_parts = 2;
  o.part = 0;
  const auto first = read_all(o);
  o.part = 1;
  const auto second = read_all(o);
  REQUIRE(first.all.labels == std::vector<float>{1});
  REQUIRE(second.all.labels == std::vector<float>{0});
  CHECK(first.all.dense[0] == doctest::Approx(1.7917595));  // ln 6 = log1p(5)
  CHECK(second.all.dense[0] == doctest::Approx(2.0794415)); // ln 8 = log1p(7)
}
