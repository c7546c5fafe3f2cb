// The consistent-cut property of checkpoints taken while the simulated
// cluster trains (cluster/cluster_cut.hpp), checked with the `count`
// optimisers: they leave the weights alone and count updates in the
// optimiser state, so a checkpoint's counts say exactly which updates it
// holds. For every checkpoint cut inside the run:
// - each trainer's replica counted exactly served / batch_size batches (its
//   reader's position: every batch served before the cut trained, none
//   after it);
// - every embedding row counted exactly the batches, among those same
//   batches of every trainer, whose keys include it (every push of an
//   example before the cut applied, none after it).
// Two workers per trainer on the scheduler's threads (the dense count is
// atomic, so their Hogwild race loses none), and the shards' writers are
// real threads copying rows on write while training goes on.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "checkpoint/model_files.hpp"
#include "data/reader.hpp"
#include "model/dlrm.hpp"
#include "model/embedding.hpp"
#include "model/metrics.hpp"
#include "cluster/coordinator.hpp"
#include "engine/input.hpp"
#include "tests/cluster/cluster_run.hpp"

namespace fs = std::filesystem;

namespace {

// Row counts of the first `served` examples of part t, read in batches as
// the cluster's reader serves them (a batch may span two passes).
void count_part(const runtime::train_config& cfg, std::size_t t, std::uint64_t served,
                std::map<std::uint64_t, float>& counts) {
  std::string err;
  auto r = data::reader::open(
    runtime::reader_options_for(cfg, cfg.data.train, t, cfg.cluster.trainers), &err);
  REQUIRE_MESSAGE(r, err);
  const auto& a = cfg.arch;
  data::batch b;
  std::vector<std::uint64_t> keys;
  model::sparse_index index;
  while (served > 0) {
    b.clear();
    const auto want = std::size_t(std::min<std::uint64_t>(cfg.train.batch_size, served));
    while (b.size < want)
      if (!r->next(b, want - b.size))
        r->reset(); // the next pass
    keys.resize(b.cat.size());
    model::make_keys(b.cat.data(), b.cat.size(), a.num_tables, a.rows_per_table, keys.data());
    index.build(keys.data(), keys.size());
    for (auto k : index.unique())
      counts[k] += 1.0f;
    served -= b.size;
  }
}

// Resumed from the oldest mid-run cut, the run ends with every example of
// the training and the metrics of the whole training: the final
// checkpoint's train-NE sums continue the cut's, and the reported train NE
// is theirs.
void check_resume_counters(const runtime::train_config& cfg, const fs::path& dir,
                           std::uint64_t total) {
  std::vector<fs::path> cuts;
  for (const auto& e : fs::directory_iterator(dir / "ck"))
    if (e.path().filename().string().rfind("ckpt-", 0) == 0)
      cuts.push_back(e.path());
  std::sort(cuts.begin(), cuts.end());
  REQUIRE(cuts.size() >= 2);
  checkpoint::opened_checkpoint mid;
  REQUIRE(!checkpoint::open_checkpoint(cuts.front().string(), mid));
  REQUIRE(mid.m.examples < total);
  CHECK(mid.m.counters.loss_sum > 0);
  auto rcfg = cfg;
  rcfg.checkpoint.resume = mid.folder;
  rcfg.checkpoint.dir = (dir / "ck2").string();
  rcfg.checkpoint.every_examples = 0;
  const auto out = test::run_cluster(rcfg);
  CHECK(mid.m.examples + out.examples == total);
  checkpoint::opened_checkpoint last;
  REQUIRE(!checkpoint::open_checkpoint((dir / "ck2").string(), last));
  CHECK(last.m.examples == total);
  CHECK(last.m.counters.loss_sum > mid.m.counters.loss_sum);
  CHECK(last.m.counters.positives > mid.m.counters.positives);
  CHECK(last.m.counters.seconds > mid.m.counters.seconds);
  model::ne_accumulator ne;
  ne.add_batch(last.m.counters.loss_sum, last.m.counters.prob_sum, total,
               last.m.counters.positives);
  CHECK(out.train_ne == doctest::Approx(ne.ne()).epsilon(1e-12));
}

// Trains with cuts under `algorithm` and checks every mid-run checkpoint.
// `clock`: the sim.clock option.
void check_cuts(const std::string& algorithm, const std::string& clock = "wall") {
  CAPTURE(algorithm);
  const test::synthetic_train_file data("cut-" + algorithm + "-" + clock, 60000, 21);
  const auto& dir = data.dir;
  const auto cfg = test::train_config_of(
    {"--data.train=" + data.train, "--cluster.mode=simulated", "--cluster.trainers=2",
     "--cluster.workers=2", "--cluster.embedding-shards=2", "--sync.algorithm=" + algorithm,
     "--train.epochs=3", "--model.rows-per-table=20000", "--train.dense-optimizer=count",
     "--train.sparse-optimizer=count", "--checkpoint.dir=" + (dir / "ck").string(),
     "--checkpoint.every-examples=15000", "--checkpoint.keep=1000", "--output.progress=none",
     "--sim.clock=" + clock});
  const auto out = test::run_cluster(cfg);
  REQUIRE(out.checkpoint);
  CHECK(out.checkpoint->count >= 1);
  CHECK(out.checkpoint->cuts == out.checkpoint->count); // no CPR saves
  CHECK(out.checkpoint->overhead_fraction ==
        doctest::Approx(out.checkpoint->seconds / out.seconds));

  model::dlrm net(cfg.arch);
  const std::size_t dense = net.layout().size();
  std::size_t mid_run = 0;
  for (const auto& e : fs::directory_iterator(dir / "ck")) {
    if (e.path().filename().string().rfind("ckpt-", 0) != 0)
      continue;
    checkpoint::opened_checkpoint c;
    REQUIRE(!checkpoint::open_checkpoint(e.path().string(), c));
    REQUIRE(c.m.readers.size() == 2);
    if (c.m.examples == out.examples)
      continue; // the final one, written after training
    ++mid_run;
    CAPTURE(c.folder);
    // Dense: each trainer's count is its reader's batches.
    std::vector<checkpoint::replica_state> reps;
    REQUIRE(!checkpoint::load_replicas(c, dense, reps));
    REQUIRE(reps.size() == 2);
    std::uint64_t served = 0;
    for (std::size_t t = 0; t < 2; ++t) {
      const auto s = c.m.readers[t].served;
      served += s;
      // Full batches but the part's very last one.
      const auto batches = (s + cfg.train.batch_size - 1) / cfg.train.batch_size;
      CHECK(reps[t].state.front() == float(batches));
      CHECK(reps[t].state.back() == float(batches));
    }
    CHECK(c.m.examples == served);
    // Sparse: every row's count is the batches before the cut that used it.
    const auto& a = cfg.arch;
    model::embedding_tables tables(a.num_tables, a.rows_per_table, a.dim, 1);
    REQUIRE(!checkpoint::load_embeddings(c, tables));
    std::map<std::uint64_t, float> expected;
    for (std::size_t t = 0; t < 2; ++t)
      count_part(cfg, t, c.m.readers[t].served, expected);
    std::size_t wrong = 0, rows = 0;
    double total = 0;
    for (std::uint64_t tb = 0; tb < a.num_tables; ++tb)
      for (std::uint64_t row = 0; row < a.rows_per_table; ++row) {
        const auto key = model::row_key(tb, row);
        const float got = *tables.accumulator(key);
        const auto it = expected.find(key);
        const float want = it == expected.end() ? 0.0f : it->second;
        wrong += got != want;
        rows += got > 0;
        total += got;
      }
    CAPTURE(total);
    CHECK(rows > 0);
    CHECK(wrong == 0);
    // BMUF: the block state every syncer held at the common round, and the
    // resume takes it (w_g and Delta, not the replicas' average).
    if (algorithm.find("bmuf") != std::string::npos) {
      std::vector<float> global, momentum;
      bool found = false;
      REQUIRE(!checkpoint::load_bmuf(c, dense, global, momentum, &found));
      CHECK(found);
      auto rcfg = cfg;
      rcfg.checkpoint.resume = c.folder;
      runtime::cluster_start start;
      REQUIRE(!runtime::load_cluster_start(rcfg, net, start));
      CHECK(start.bmuf_global == global);
      CHECK(start.bmuf_momentum == momentum);
    }
  }
  CHECK(mid_run >= 1);
  if (algorithm == "s-easgd")
    check_resume_counters(cfg, dir, out.examples);
}

} // namespace

TEST_CASE("cluster cut: a checkpoint taken while training holds exactly the examples before it") {
  check_cuts("s-easgd");
}

// Ring methods: every syncer must hold at one common round, though a shadow
// syncer may run past any round chosen from the counts before its hold
// arrives (the aim protocol, shadow_syncer.hpp); a disagreement deadlocks
// the ring and the cut times out.
TEST_CASE("cluster cut: shadow model averaging over the ring") { check_cuts("s-ma"); }

TEST_CASE("cluster cut: foreground BMUF over the ring, with its block state") {
  check_cuts("fr-bmuf");
}

// Under the virtual clock a shard writes its file within its handler (no
// writer thread may touch the deterministic scheduler); the cut is the same
// consistent cut, at virtual times that replay.
TEST_CASE("cluster cut: under the virtual clock, over the S-MA ring") {
  check_cuts("s-ma", "virtual");
}
