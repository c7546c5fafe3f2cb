// data.multi-hot, data.id-delimiter, data.max-ids: parsed into the schema,
// checked against the layout naming the key, and refused at start naming the
// key in the modes that do not pool bags; model.pooling.
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

TEST_CASE("data.multi-hot: checked against the layout, accepted where bags are trained") {
  // A column that is not categorical, and a bad delimiter: named by key.
  CHECK(build({"--data.multi-hot=I3"}).find("option 'data.multi-hot'") == 0);
  CHECK(build({"--data.multi-hot=I3"}).find("'I3' is not a categorical column") != std::string::npos);
  CHECK(build({"--data.multi-hot=C9", "--data.id-delimiter=tab"}).find("option 'data.id-delimiter'") == 0);
  CHECK(build({"--data.multi-hot=C9", "--data.id-delimiter=ab"}).find("option 'data.id-delimiter'") == 0);
  CHECK(build({"--data.multi-hot=99999999"}).find("option 'data.multi-hot'") == 0);
  // A valid list trains in sequential mode.
  CHECK(build({"--data.multi-hot=C1,21", "--cluster.mode=sequential"}) == "");
  CHECK(build({"--data.multi-hot=C1,21", "--cluster.mode=sequential", "--model.pooling=mean"}) == "");
  // A cluster trains on bags, with dct.mp and with CPR's row choice too.
  CHECK(build({"--data.multi-hot=C1,21", "--cluster.trainers=2"}) == "");
  CHECK(build({"--data.multi-hot=C1,21", "--dct.mp=true"}) == "");
  for (const char* policy : {"--cpr.policy=mfu", "--cpr.policy=ssu"})
    CHECK(build({"--data.multi-hot=C1", "--recovery.mode=partial", policy,
                 "--checkpoint.dir=/tmp/unused-cpr-dir", "--cpr.interval=10"}) == "");
  // Without the option nothing changes.
  CHECK(build({"--cluster.mode=sequential"}) == "");
}

TEST_CASE("data.multi-hot: the schema carries the columns, delimiter and bound") {
  const auto o = parsed({"--data.multi-hot=C1,C21", "--data.id-delimiter=;", "--data.max-ids=7",
                         "--cluster.mode=sequential", "--model.pooling=mean"});
  runtime::train_config c;
  REQUIRE(!runtime::build_train_config(o, c));
  CHECK(c.arch.pooling == model::pooling_kind::mean);
  CHECK(c.data.schema.multi_hot.size() == 2u);
  CHECK(c.data.schema.multi_hot[1].name == "C21");
  CHECK(c.data.schema.id_delimiter == ';');
  CHECK(c.data.schema.max_ids == 7u);
  // Saved configurations keep their bytes while the keys are at their defaults.
  const auto plain = parsed({});
  CHECK(plain.effective_ini().find("multi-hot") == std::string::npos);
  CHECK(plain.effective_ini().find("pooling") == std::string::npos);
  CHECK(o.effective_ini().find("pooling = \"mean\"") != std::string::npos);
  CHECK(o.effective_ini().find("multi-hot = [\"C1\", \"C21\"]") != std::string::npos);
}
