// The model's results do not depend on where its buffers sit in memory: the
// forward pass gives the same bits for the same dense parameters at every
// 16-byte offset from a 64-byte boundary (std::vector's 16-byte alignment
// leaves each run's heap to pick one), so a run repeats bit for bit and the
// nodes of a cluster agree with one process.
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "model/dense_layout.hpp"
#include "model/dlrm.hpp"
#include "tests/model/gradcheck.hpp"

TEST_CASE("forward: the same logits for parameters and inputs at every 16-byte offset") {
  for (const char* name : {"small", "dlrm-kaggle"}) {
    CAPTURE(name);
    const auto a = *model::preset(name);
    model::dlrm net(a);
    const std::size_t n = net.layout().size(), batch = 64;
    model::float_buffer base(n + 16); // 64-byte aligned
    model::init_dense(net.layout(), base.data(), 3);
    std::vector<float> params(base.begin(), base.begin() + std::ptrdiff_t(n));
    std::mt19937 rng(1);
    std::vector<float> dense = testing::random_vector(batch * a.num_dense, rng);
    const std::size_t rows = 2 * batch;
    std::vector<float> emb = testing::random_vector(rows * a.dim, rng, 0.5f);
    std::vector<std::uint32_t> index(batch * a.num_tables);
    for (auto& i : index)
      i = std::uint32_t(rng() % rows);
    std::vector<std::vector<float>> logits;
    model::float_buffer dbase(dense.size() + 16), ebase(emb.size() + 16);
    for (std::size_t off : {0, 4, 8, 12}) {
      std::memcpy(base.data() + off, params.data(), n * sizeof(float));
      std::memcpy(dbase.data() + off, dense.data(), dense.size() * sizeof(float));
      std::memcpy(ebase.data() + off, emb.data(), emb.size() * sizeof(float));
      const model::embedding_input at{ebase.data() + off, index.data(), rows, nullptr};
      model::workspace ws;
      net.forward(base.data() + off, dbase.data() + off, at, batch, ws);
      logits.emplace_back(ws.logits.data(), ws.logits.data() + batch);
    }
    for (std::size_t k = 1; k < logits.size(); ++k) {
      CAPTURE(k);
      CHECK(std::memcmp(logits[0].data(), logits[k].data(), batch * sizeof(float)) == 0);
    }
  }
}
