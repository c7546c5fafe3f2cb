// model.interaction, model.cross-layers and model.cross-rank: the presets'
// values, overrides, and the refusal of cross options on a dot model.
#include <doctest/doctest.h>

#include "tests/config/train_config_check.hpp"

using test::parse;

TEST_CASE("model.interaction: presets, dcn on a dot preset, and cross options") {
  runtime::train_config c;
  REQUIRE(parse({"--model.arch=dcnv2-small"}, &c) == "");
  CHECK(c.arch.interaction == model::interaction_kind::dcn);
  CHECK(c.arch.cross_layers == 3);
  CHECK(c.arch.cross_rank == 64);
  REQUIRE(parse({"--model.arch=dlrm-dcnv2", "--model.cross-rank=256", "--model.cross-layers=2"}, &c) == "");
  CHECK(c.arch.dim == 128);
  CHECK(c.arch.cross_rank == 256);
  CHECK(c.arch.cross_layers == 2);
  REQUIRE(parse({"--model.interaction=dcn"}, &c) == ""); // small made dcn
  CHECK(c.arch.interaction == model::interaction_kind::dcn);
  CHECK(c.arch.cross_layers == 3);
  CHECK(c.arch.cross_rank == 64);
  REQUIRE(parse({"--model.arch=dcnv2-small", "--model.interaction=dot"}, &c) == "");
  CHECK(c.arch.interaction == model::interaction_kind::dot);
  REQUIRE(parse({}, &c) == "");
  CHECK(c.arch.interaction == model::interaction_kind::dot);
  const auto e = parse({"--model.cross-rank=8"}, &c);
  CHECK(e.find("model.cross-rank") != std::string::npos);
  CHECK(e.find("model.interaction=dcn") != std::string::npos);
  CHECK(parse({"--model.interaction=cross"}, &c).find("model.interaction") != std::string::npos);
}
