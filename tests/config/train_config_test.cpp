// train.dense-lr: -1 (the default) takes the preset's rate; a set value wins,
// 0 included (it freezes the MLPs); other negative values are errors. And
// training_changes, the settings a resume changes against its checkpoint.
#include <doctest/doctest.h>

#include "engine/saved_model.hpp"
#include "config/train_config.hpp"

namespace {

runtime::train_config configure(std::vector<std::string> args) {
  runtime::option_set o;
  runtime::add_train_options(o);
  runtime::train_config c;
  REQUIRE_FALSE(o.parse(args));
  REQUIRE_FALSE(runtime::build_train_config(o, c));
  return c;
}

} // namespace

TEST_CASE("the dense learning rate defaults to the preset's") {
  CHECK(configure({}).train.dense.lr == doctest::Approx(0.03));
  CHECK(configure({"--model.arch=small"}).train.dense.lr == doctest::Approx(0.03));
  CHECK(configure({"--model.arch=dlrm-kaggle"}).train.dense.lr == doctest::Approx(0.005));
  // the sparse rate has no per-preset default
  CHECK(configure({"--model.arch=dlrm-kaggle"}).train.sparse.lr == doctest::Approx(0.03));
}

TEST_CASE("a dense learning rate that is set wins over the preset's") {
  CHECK(configure({"--model.arch=dlrm-kaggle", "--train.dense-lr=0.03"}).train.dense.lr ==
        doctest::Approx(0.03));
  CHECK(configure({"--model.arch=small", "--train.dense-lr=0.003"}).train.dense.lr ==
        doctest::Approx(0.003));
  CHECK(configure({"--model.arch=dlrm-kaggle", "--train.dense-lr=0"}).train.dense.lr == 0.0f);
}

TEST_CASE("a negative dense learning rate other than -1 is an error naming the key") {
  runtime::option_set o;
  runtime::add_train_options(o);
  runtime::train_config c;
  REQUIRE_FALSE(o.parse({"--train.dense-lr=-0.5"}));
  const auto err = runtime::build_train_config(o, c);
  REQUIRE(err);
  CHECK(err->find("train.dense-lr") != std::string::npos);
  CHECK(err->find("-0.5") != std::string::npos);
  CHECK(err->find("-1 for the preset's") != std::string::npos);
}

TEST_CASE("every preset has a dense learning rate") {
  for (const auto& name : model::preset_names()) {
    CAPTURE(name);
    REQUIRE(model::preset_dense_lr(name));
    CHECK(*model::preset_dense_lr(name) > 0);
  }
  CHECK_FALSE(model::preset_dense_lr("no-such-preset"));
}

TEST_CASE("training_changes names each setting a resume trains with differently") {
  const auto saved = configure({"--model.arch=dlrm-kaggle"});
  CHECK(runtime::training_changes(saved, saved).empty());
  CHECK(runtime::training_changes(saved, configure({"--model.arch=dlrm-kaggle",
                                                    "--train.dense-lr=0.005"}))
          .empty()); // the preset's rate, set or not, is the same rate
  const auto now = configure({"--model.arch=dlrm-kaggle", "--train.dense-lr=0.03",
                              "--train.sparse-optimizer=adagrad", "--train.batch-size=256"});
  const auto changes = runtime::training_changes(saved, now);
  REQUIRE(changes.size() == 3);
  CHECK(changes[0] == "train.dense-lr 0.005 -> 0.03");
  CHECK(changes[1] == "train.sparse-optimizer rowwise-adagrad -> adagrad");
  CHECK(changes[2] == "train.batch-size 128 -> 256");
}

TEST_CASE("EASGD's elasticity defaults to 0.25 whatever the number of trainers; a set value wins") {
  // Measured on the virtual clock (issue 36, docs/RESULTS.md 4c): 0.5 / N
  // loosens the replicas as N grows: S-EASGD at 16 trainers +3.8 % and
  // +4.8 % eval NE against sequential on two sets, +2.0 % and +2.9 % with
  // 0.25; at 64 trainers +14.2 % against +6.9 %.
  CHECK(configure({"--cluster.trainers=2"}).sync.alpha == 0.25f);
  CHECK(configure({"--cluster.trainers=4"}).sync.alpha == 0.25f);
  CHECK(configure({"--cluster.trainers=16"}).sync.alpha == 0.25f);
  CHECK(configure({"--cluster.trainers=64"}).sync.alpha == 0.25f);
  CHECK(configure({"--cluster.trainers=16", "--sync.alpha=0"}).sync.alpha == 0.25f);
  CHECK(configure({"--cluster.trainers=16", "--sync.alpha=0.0625"}).sync.alpha ==
        doctest::Approx(0.0625));
}

TEST_CASE("BMUF's block momentum defaults to 1 - 1/N capped at 0.5; a set value wins") {
  // Measured on the virtual clock (issue 36): 1 - 1/N over-accelerates the
  // short, stale blocks of S-BMUF from 4 trainers on (eval NE +2.4 % to
  // +2.9 % against sequential at 4 and 16 trainers, against -0.4 % to +0.6 %
  // with 0.5).
  CHECK(configure({"--cluster.trainers=1"}).sync.momentum == 0.0f);
  CHECK(configure({"--cluster.trainers=2"}).sync.momentum == 0.5f);
  CHECK(configure({"--cluster.trainers=4"}).sync.momentum == 0.5f);
  CHECK(configure({"--cluster.trainers=16"}).sync.momentum == 0.5f);
  CHECK(configure({"--cluster.trainers=16", "--sync.momentum=0.9375"}).sync.momentum ==
        doctest::Approx(0.9375));
  CHECK(configure({"--cluster.trainers=16", "--sync.momentum=0"}).sync.momentum == 0.0f);
}

TEST_CASE("a shadow round's batch gap defaults to 3 under S-BMUF and 1 otherwise; a set one wins") {
  // Measured on the virtual clock (issue 36, docs/RESULTS.md 4b): S-BMUF
  // with a round every batch ended 0.17 points further from the sequential
  // engine than with one every third batch at 4 trainers (12 seeds, four
  // sets), and behind FR-BMUF; S-EASGD and S-MA did not gain from the gap.
  CHECK(configure({"--sync.algorithm=s-bmuf"}).sync.min_gap_batches == 3);
  CHECK(configure({"--sync.algorithm=s-bmuf", "--cluster.trainers=16"}).sync.min_gap_batches == 3);
  for (const char* alg : {"s-easgd", "s-ma", "fr-bmuf", "fr-ma", "fr-easgd", "none"}) {
    CAPTURE(alg);
    CHECK(configure({std::string("--sync.algorithm=") + alg}).sync.min_gap_batches == 1);
  }
  // Under dct.dp a round passes a fixed share of its entries: fewer rounds
  // send less, and S-BMUF lost 0.4 points at 16 trainers with every third.
  CHECK(configure({"--sync.algorithm=s-bmuf", "--dct.dp=true"}).sync.min_gap_batches == 1);
  CHECK(configure({"--sync.algorithm=s-bmuf", "--sync.min-gap-batches=1"}).sync.min_gap_batches ==
        1);
  CHECK(configure({"--sync.algorithm=s-bmuf", "--sync.min-gap-batches=0"}).sync.min_gap_batches ==
        0);
  CHECK(configure({"--sync.algorithm=s-ma", "--sync.min-gap-batches=5"}).sync.min_gap_batches == 5);
}

TEST_CASE("data.user names a column; a mistyped one is refused naming data.user") {
  CHECK_FALSE(configure({}).data.schema.user);
  const auto c = configure({"--data.user=C1"});
  REQUIRE(c.data.schema.user);
  CHECK(c.data.schema.user->name == "C1");
  CHECK(configure({"--data.user=14"}).data.schema.user->index == 14);
  for (const char* bad : {"--data.user=C99", "--data.user=40", "--data.user=label",
                          "--data.user=99999999"}) {
    CAPTURE(bad);
    runtime::option_set o;
    runtime::add_train_options(o);
    runtime::train_config cfg;
    REQUIRE_FALSE(o.parse({bad}));
    const auto err = runtime::build_train_config(o, cfg);
    REQUIRE(err);
    CHECK(err->find("option 'data.user'") != std::string::npos);
  }
}
