// data.user: the column naming each example's user (for GAUC), by name or
// index, a categorical column or one that is not a feature; its raw text,
// through hash_user, is the user key of each example.
#include <doctest/doctest.h>

#include "data/hashing.hpp"
#include "reader_test_util.hpp"

using namespace reader_test;

namespace {

const std::string csv_text = "click,user,site,device\n"
                             "1,alice,news.com,mobile\n"
                             "0,bob,shop.com,\n"
                             "1,alice,,desktop\n"
                             "0\n"; // every other field missing: user ""

data::schema_options csv_schema() {
  data::schema_options s;
  s.delimiter = ',';
  s.header = true;
  s.label = "click";
  s.categorical = {"site", "device"};
  return s;
}

} // namespace

TEST_CASE("data.user: a column that is not a feature, by name") {
  temp_dir dir;
  auto o = options_for({dir.write("ads.csv", csv_text)});
  o.schema = csv_schema();
  o.schema.user = data::column_ref("user");
  const auto r = read_all(o, 2);
  REQUIRE(r.open_error.empty());
  REQUIRE(r.all.size == 4);
  CHECK(r.all.users == std::vector<std::uint64_t>{data::hash_user("alice"), data::hash_user("bob"),
                                                  data::hash_user("alice"), data::hash_user("")});
  CHECK(r.all.cat[0] == data::hash_categorical("news.com", 0)); // the features are unchanged
  // The key depends on the value alone, not on a column seed.
  CHECK(data::hash_user("alice") != data::hash_categorical("alice", 0));
}

TEST_CASE("data.user: a categorical column stays a feature; no user column, no keys") {
  temp_dir dir;
  auto o = options_for({dir.write("ads.csv", csv_text)});
  o.schema = csv_schema();
  o.schema.user = data::column_ref(2); // site, also categorical 0
  auto r = read_all(o);
  REQUIRE(r.all.size == 4);
  CHECK(r.all.users[0] == data::hash_user("news.com"));
  CHECK(r.all.users[2] == data::hash_user(""));
  CHECK(r.all.cat[0] == data::hash_categorical("news.com", 0));
  o.schema.user.reset();
  r = read_all(o);
  CHECK(r.all.size == 4);
  CHECK(r.all.users.empty());
}

TEST_CASE("data.user on Criteo by column name; lines without the label keep the user") {
  temp_dir dir;
  const std::string labelled = criteo_line("1", {"1"}, {"u1", "x"}) + "\n";
  const std::string bare = labelled.substr(2); // Criteo's test layout: no label column
  auto o = options_for({dir.write("a.tsv", labelled), dir.write("b.tsv", bare)});
  o.schema.user = data::column_ref("C1");
  o.labels = data::label_presence::either;
  const auto r = read_all(o);
  REQUIRE(r.open_error.empty());
  REQUIRE(r.all.size == 2);
  CHECK(r.all.users[0] == data::hash_user("u1"));
  CHECK(r.all.users[1] == data::hash_user("u1")); // one place left without the label
  CHECK(r.stats.unlabelled == 1);
}

TEST_CASE("data.user errors name data.user and the column") {
  temp_dir dir;
  auto o = options_for({dir.write("ads.csv", csv_text)});
  o.schema = csv_schema();
  o.schema.user = data::column_ref("usr");
  auto r = read_all(o);
  CHECK(r.open_error.find("ads.csv: schema: user (data.user) column 'usr' is not in the header") !=
        std::string::npos);
  o.schema.user = data::column_ref(9);
  r = read_all(o);
  CHECK(r.open_error.find("user (data.user) column 9 is out of range") != std::string::npos);
  o.schema.user = data::column_ref("click");
  r = read_all(o);
  CHECK(r.open_error.find("user (data.user) column 'click' is the label column") != std::string::npos);
}
