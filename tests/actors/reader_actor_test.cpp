// The reader actor under the deterministic scheduler: batches of a small temp
// TSV file, the end marker, max_examples, epochs, strict-mode errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "actors/reader.hpp"
#include "tests/actors/test_fixture.hpp"
#include "tests/data/reader_test_util.hpp"

using namespace messages;
using actors::reader;
using reader_test::criteo_line;

namespace {

// n Criteo lines; line i (0-based) has label i % 2, I1 = i, C1 = "v<i>".
std::string lines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i)
    text += criteo_line(std::to_string(i % 2), {std::to_string(i)}, {"v" + std::to_string(i)}) +
            "\n";
  return text;
}

actors::reader_config config(const std::string& path, std::size_t batch_size) {
  actors::reader_config c;
  c.options.files = {path};
  c.batch_size = batch_size;
  return c;
}

// I1 of every example in the batch, recovered from dense = log(1 + I1).
std::vector<int> first_dense(const example_batch& b) {
  std::vector<int> out;
  for (std::size_t e = 0; e < b.size(); ++e)
    out.push_back(static_cast<int>(std::lround(std::expm1(b.dense.values[e * b.num_dense]))));
  return out;
}

} // namespace

TEST_CASE_FIXTURE(test::actor_fixture, "reader actor: serves every example, then empty batches") {
  reader_test::temp_dir dir;
  const auto path = dir.write("seven.tsv", lines(7));
  auto rd = sys.spawn(reader, config(path, 3));
  const auto direct = reader_test::read_all(reader_test::options_for({path}), 7);
  REQUIRE(direct.all.size == 7);

  std::vector<std::vector<int>> seen;
  std::vector<float> labels;
  std::vector<std::uint64_t> cats;
  for (std::uint64_t seq = 0; seq < 3; ++seq) {
    auto b = request<example_batch>(rd, next_atom::value);
    REQUIRE(b);
    CHECK(b->seq == seq);
    CHECK(b->num_dense == 13);
    CHECK(b->num_cat == 26);
    CHECK(b->dense.size() == b->size() * 13);
    CHECK(b->cat.size() == b->size() * 26);
    seen.push_back(first_dense(*b));
    labels.insert(labels.end(), b->labels.values.begin(), b->labels.values.end());
    cats.insert(cats.end(), b->cat.values.begin(), b->cat.values.end());
  }
  CHECK(seen == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6}});
  CHECK(labels == direct.all.labels);
  CHECK(cats == direct.all.cat); // hashed exactly as data::reader does
  for (int again = 0; again < 2; ++again) {
    auto end = request<example_batch>(rd, next_atom::value);
    REQUIRE(end);
    CHECK(end->size() == 0);
    CHECK(end->seq == 3);
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "reader actor: max_examples trims the last batch") {
  reader_test::temp_dir dir;
  const auto path = dir.write("seven.tsv", lines(7));
  for (std::uint64_t max : {5, 6, 7, 100}) {
    auto c = config(path, 3);
    c.max_examples = max;
    auto rd = sys.spawn(reader, c);
    std::uint64_t total = 0, batches = 0;
    for (;;) {
      auto b = request<example_batch>(rd, next_atom::value);
      REQUIRE(b);
      if (b->size() == 0)
        break;
      CHECK(b->size() <= 3);
      total += b->size();
      ++batches;
    }
    CHECK(total == std::min<std::uint64_t>(max, 7));
    CHECK(batches == (total + 2) / 3);
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "reader actor: epochs repeat the data across batches") {
  reader_test::temp_dir dir;
  const auto path = dir.write("seven.tsv", lines(7));
  auto c = config(path, 4);
  c.epochs = 2;
  SUBCASE("all of both passes") {
    auto rd = sys.spawn(reader, c);
    std::vector<std::vector<int>> seen;
    for (int i = 0; i < 5; ++i) {
      auto b = request<example_batch>(rd, next_atom::value);
      REQUIRE(b);
      seen.push_back(first_dense(*b));
    }
    CHECK(seen ==
          std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 0}, {1, 2, 3, 4}, {5, 6}, {}});
  }
  SUBCASE("max_examples ends the second pass early") {
    c.max_examples = 10;
    auto rd = sys.spawn(reader, c);
    std::vector<std::vector<int>> seen;
    for (int i = 0; i < 4; ++i)
      seen.push_back(first_dense(*request<example_batch>(rd, next_atom::value)));
    CHECK(seen == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 0}, {1, 2}, {}});
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "reader actor: skips malformed lines by default") {
  reader_test::temp_dir dir;
  // Line 3 has label 2: malformed, skipped (and logged).
  const auto path = dir.write("bad.tsv", lines(2) + criteo_line("2", {"9"}, {}) + "\n" + lines(2));
  auto rd = sys.spawn(reader, config(path, 10));
  auto b = request<example_batch>(rd, next_atom::value);
  REQUIRE(b);
  CHECK(first_dense(*b) == std::vector<int>{0, 1, 0, 1});
  CHECK(request<example_batch>(rd, next_atom::value)->size() == 0);
}

TEST_CASE_FIXTURE(test::actor_fixture, "reader actor: strict mode fails naming file and line") {
  reader_test::temp_dir dir;
  const auto path = dir.write("strict.tsv", lines(2) + criteo_line("2", {"9"}, {}) + "\n");
  auto c = config(path, 2);
  c.options.strict = true;
  auto rd = sys.spawn(reader, c);
  auto first = request<example_batch>(rd, next_atom::value); // lines 1 and 2
  REQUIRE(first);
  CHECK(first->size() == 2);
  for (int again = 0; again < 2; ++again) { // the failure is final
    auto r = request<example_batch>(rd, next_atom::value);
    REQUIRE_FALSE(r);
    CHECK(code_of(r.error()) == errc::input_error);
    CHECK(context_of(r.error()).find(path + ":3:") != std::string::npos);
  }
}

TEST_CASE_FIXTURE(test::actor_fixture, "reader actor: open failures and bad configs") {
  reader_test::temp_dir dir;
  auto missing = sys.spawn(reader, config(dir.path("missing.tsv"), 4));
  auto r = request<example_batch>(missing, next_atom::value);
  REQUIRE_FALSE(r);
  CHECK(code_of(r.error()) == errc::input_error);
  CHECK(context_of(r.error()).find("missing.tsv") != std::string::npos);

  auto zero = sys.spawn(reader, config(dir.write("one.tsv", lines(1)), 0));
  auto z = request<example_batch>(zero, next_atom::value);
  REQUIRE_FALSE(z);
  CHECK(code_of(z.error()) == errc::bad_request);
}

TEST_CASE_FIXTURE(test::actor_fixture, "reader actor: an empty file ends at once") {
  reader_test::temp_dir dir;
  auto c = config(dir.write("empty.tsv", ""), 4);
  c.epochs = 3;
  auto rd = sys.spawn(reader, c);
  auto b = request<example_batch>(rd, next_atom::value);
  REQUIRE(b);
  CHECK(b->size() == 0);
  CHECK(b->seq == 0);
}
