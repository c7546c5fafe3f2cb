// Multi-hot columns (data.multi-hot, issue 39 item 1): bags of ids in the
// Criteo TSV and delimited layouts, as CSR ranges in the batch; empty bags,
// bags cut to max_ids (counted, or refused with strict), empty ids refused
// with the file, line and column; a single-hot schema keeps its layout.
#include <doctest/doctest.h>

#include "data/hashing.hpp"
#include "reader_test_util.hpp"

using namespace reader_test;

namespace {

// Field (e, c)'s ids.
std::vector<std::uint64_t> bag(const data::batch& b, std::size_t e, std::size_t c) {
  const std::size_t k = e * b.num_cat + c;
  return {b.cat.begin() + b.cat_offsets[k], b.cat.begin() + b.cat_offsets[k + 1]};
}

std::vector<std::uint64_t> hashes(std::vector<std::string> ids, std::size_t slot) {
  std::vector<std::uint64_t> out;
  for (const auto& id : ids)
    out.push_back(data::hash_categorical(id, slot));
  return out;
}

} // namespace

TEST_CASE("multi-hot Criteo columns: bags, empty bags, single-hot neighbours") {
  temp_dir dir;
  const std::string text = criteo_line("1", {"3"}, {"aa", "x|y|z"}) + "\n" + // C2 a bag of 3
                           criteo_line("0", {}, {"", "", "c1"}) + "\n" +    // C2 empty: empty bag
                           criteo_line("1", {}, {"bb", "w"}) + "\n";        // a bag of one
  auto o = options_for({dir.write("mh.tsv", text)});
  o.schema.multi_hot = {data::column_ref("C2"), data::column_ref(16)}; // C2 by name, C3 by index
  const auto r = read_all(o, 2);
  REQUIRE(r.open_error.empty());
  REQUIRE(r.error.empty());
  REQUIRE(r.all.size == 3);
  REQUIRE(r.all.cat_offsets.size() == 3 * 26 + 1);
  CHECK(bag(r.all, 0, 0) == hashes({"aa"}, 0));
  CHECK(bag(r.all, 0, 1) == hashes({"x", "y", "z"}, 1));
  CHECK(bag(r.all, 0, 2).empty()); // a multi-hot column absent from the line: empty bag
  CHECK(bag(r.all, 0, 3) == hashes({""}, 3)); // single-hot missing: the missing value's hash
  CHECK(bag(r.all, 1, 1).empty());
  CHECK(bag(r.all, 1, 2) == hashes({"c1"}, 2));
  // A bag of one id hashes as the single-hot field would.
  CHECK(bag(r.all, 2, 1) == hashes({"w"}, 1));
  CHECK(r.all.labels == std::vector<float>{1, 0, 1});
  CHECK(r.stats.examples == 3);
  CHECK(r.stats.cut_bags == 0);

  // The same file without data.multi-hot: one hash per field, no offsets.
  o.schema.multi_hot.clear();
  const auto plain = read_all(o, 2);
  CHECK(plain.all.cat_offsets.empty());
  CHECK(plain.all.cat.size() == 3 * 26);
  CHECK(plain.all.cat[1] == data::hash_categorical("x|y|z", 1));
}

TEST_CASE("multi-hot delimited columns by header name, another id delimiter") {
  temp_dir dir;
  auto o = options_for({dir.write("ads.csv", "click,tags,site\n1,a;b,s1\n0,,s2\n1,c,\n")});
  o.schema = data::schema_options{};
  o.schema.delimiter = ',';
  o.schema.header = true;
  o.schema.label = "click";
  o.schema.categorical = {"site", "tags"};
  o.schema.multi_hot = {"tags"};
  o.schema.id_delimiter = ';';
  const auto r = read_all(o);
  REQUIRE(r.error.empty());
  REQUIRE(r.all.size == 3);
  CHECK(bag(r.all, 0, 0) == hashes({"s1"}, 0));
  CHECK(bag(r.all, 0, 1) == hashes({"a", "b"}, 1));
  CHECK(bag(r.all, 1, 1).empty());
  CHECK(bag(r.all, 2, 1) == hashes({"c"}, 1));
  CHECK(bag(r.all, 2, 0) == hashes({""}, 0));
}

TEST_CASE("bags longer than max_ids are cut and counted, or refused with strict") {
  temp_dir dir;
  const std::string text = criteo_line("1", {}, {"a|b|c|d|e"}) + "\n" + criteo_line("0", {}, {"a|b"}) + "\n";
  auto o = options_for({dir.write("long.tsv", text)});
  o.schema.multi_hot = {data::column_ref("C1")};
  o.schema.max_ids = 3;
  auto r = read_all(o);
  REQUIRE(r.error.empty());
  REQUIRE(r.all.size == 2);
  CHECK(bag(r.all, 0, 0) == hashes({"a", "b", "c"}, 0)); // the first max_ids ids
  CHECK(bag(r.all, 1, 0) == hashes({"a", "b"}, 0));
  CHECK(r.stats.cut_bags == 1);
  CHECK(r.stats.cut_bags_note("training").find(
          "1 training bag over data.max-ids; the first: " + dir.path("long.tsv") +
          ":1: column C1: a bag of 5 ids, more than data.max-ids=3") == 0); // what the run logs
  CHECK(r.stats.malformed == 0);

  o.strict = true;
  r = read_all(o);
  CHECK(r.all.size == 0);
  CHECK(r.error.find("long.tsv:1: column C1: a bag of 5 ids, more than data.max-ids=3") != std::string::npos);
}

TEST_CASE("an empty id in a bag is a malformed line naming file, line and column") {
  temp_dir dir;
  const std::string text = criteo_line("1", {}, {"a|b"}) + "\n" + criteo_line("0", {}, {"a||b"}) + "\n" +
                           criteo_line("0", {}, {"a|"}) + "\n" + criteo_line("1", {}, {"c"}) + "\n";
  auto o = options_for({dir.write("bad.tsv", text)});
  o.schema.multi_hot = {data::column_ref("C1")};
  auto r = read_all(o, 1);
  REQUIRE(r.error.empty());
  REQUIRE(r.all.size == 2); // the bad lines are skipped and leave no ids behind
  CHECK(r.all.cat.size() == 2 + 1 + 2 * 25); // a|b, c and the 25 single-hot fields twice
  CHECK(bag(r.all, 1, 0) == hashes({"c"}, 0));
  CHECK(r.stats.malformed == 2);
  REQUIRE(r.stats.first_errors.size() == 2);
  CHECK(r.stats.first_errors[0].find("bad.tsv:2: column C1: expected ids separated by '|', got an empty id in 'a||b'") !=
        std::string::npos);
  CHECK(r.stats.first_errors[1].find("bad.tsv:3: column C1: expected ids separated by '|'") != std::string::npos);
}

TEST_CASE("multi-hot columns must be categorical ones; the id delimiter differs from the field's") {
  temp_dir dir;
  auto o = options_for({dir.write("x.tsv", criteo_line("1", {}, {"a"}) + "\n")});
  o.schema.multi_hot = {data::column_ref("I3")};
  auto r = read_all(o);
  CHECK(r.open_error.find("multi-hot (data.multi-hot) column 'I3' is not a categorical column") !=
        std::string::npos);
  CHECK(r.open_error.find("x.tsv") != std::string::npos);
  o.schema.multi_hot = {data::column_ref("C1")};
  o.schema.id_delimiter = '\t';
  r = read_all(o);
  CHECK(r.open_error.find("data.id-delimiter") != std::string::npos);
}
