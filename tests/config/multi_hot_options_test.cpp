// data.multi-hot, data.id-delimiter, data.max-ids: parsed into the schema,
// checked against the layout naming the key, and refused at start naming the
// key while no training mode pools bags.
#include <doctest/doctest.h>

#include "config/train_config.hpp"

namespace {

runtime::option_set parsed(const std::vector<std::string>& args) {
  runtime::option_set o;
  runtime::add_train_options(o);
  REQUIRE(!o.parse(args));
  return o;
}

std::string build(const std::vector<std::string>& args) {
  const auto o = parsed(args);
  runtime::train_config c;
  const auto e = runtime::build_train_config(o, c);
  return e ? *e : "";
}

} // namespace

TEST_CASE("data.multi-hot: checked against the layout, refused where bags are not trained") {
  // A column that is not categorical, and a bad delimiter: named by key.
  CHECK(build({"--data.multi-hot=I3"}).find("option 'data.multi-hot'") == 0);
  CHECK(build({"--data.multi-hot=I3"}).find("'I3' is not a categorical column") != std::string::npos);
  CHECK(build({"--data.multi-hot=C9", "--data.id-delimiter=tab"}).find("option 'data.id-delimiter'") == 0);
  CHECK(build({"--data.multi-hot=C9", "--data.id-delimiter=ab"}).find("option 'data.id-delimiter'") == 0);
  CHECK(build({"--data.multi-hot=99999999"}).find("option 'data.multi-hot'") == 0);
  // A valid list: refused at start, naming the key and what is supported.
  const auto e = build({"--data.multi-hot=C1,21", "--cluster.mode=sequential"});
  CHECK(e.find("option 'data.multi-hot'") == 0);
  CHECK(e.find("no training mode pools them yet") != std::string::npos);
  // Without the option nothing changes.
  CHECK(build({"--cluster.mode=sequential"}) == "");
}

TEST_CASE("data.multi-hot: the schema carries the columns, delimiter and bound") {
  const auto o = parsed({"--data.multi-hot=C1,C21", "--data.id-delimiter=;", "--data.max-ids=7"});
  // Read the schema part alone: build_train_config refuses the run itself.
  runtime::train_config c;
  const auto e = runtime::build_train_config(o, c);
  REQUIRE(e);
  CHECK(e->find("no training mode") != std::string::npos);
  CHECK(c.data.schema.multi_hot.size() == 2u);
  CHECK(c.data.schema.multi_hot[1].name == "C21");
  CHECK(c.data.schema.id_delimiter == ';');
  CHECK(c.data.schema.max_ids == 7u);
  // Saved configurations keep their bytes while the keys are at their defaults.
  const auto plain = parsed({});
  CHECK(plain.effective_ini().find("multi-hot") == std::string::npos);
  CHECK(o.effective_ini().find("multi-hot = [\"C1\", \"C21\"]") != std::string::npos);
}
