// The model's results do not depend on where its buffers sit in memory: the
// forward pass, and the loss and gradients of forward_backward, give the same
// bits at every 16-byte offset from a 64-byte boundary (model/aligned_heap.cpp
// puts heap blocks on 64 bytes, but a caller may hand a slice of a larger
// buffer), so a run repeats bit for bit and the nodes of a cluster agree
// with one process.
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

TEST_CASE("forward_backward: the same loss, parameter and row gradients at every 16-byte "
          "offset of parameters, inputs, labels and gradient buffers") {
  for (const char* name : {"small", "dlrm-kaggle", "dcnv2-small"}) {
    CAPTURE(name);
    const auto a = *model::preset(name);
    model::dlrm net(a);
    const std::size_t n = net.layout().size(), batch = 64;
    model::float_buffer base(n + 16);
    model::init_dense(net.layout(), base.data(), 3);
    std::vector<float> params(base.begin(), base.begin() + std::ptrdiff_t(n));
    std::mt19937 rng(2);
    std::vector<float> dense = testing::random_vector(batch * a.num_dense, rng);
    const std::size_t rows = 2 * batch;
    std::vector<float> emb = testing::random_vector(rows * a.dim, rng, 0.5f);
    std::vector<std::uint32_t> index(batch * a.num_tables);
    for (auto& i : index)
      i = std::uint32_t(rng() % rows);
    std::vector<float> labels(batch);
    for (auto& l : labels)
      l = float(rng() % 2);
    model::float_buffer dbase(dense.size() + 16), ebase(emb.size() + 16), lbase(batch + 16),
      gpbase(n + 16), grbase(rows * a.dim + 16);
    std::vector<std::vector<float>> grad_params, grad_rows;
    std::vector<double> losses;
    for (std::size_t off : {0, 4, 8, 12}) {
      std::memcpy(base.data() + off, params.data(), n * sizeof(float));
      std::memcpy(dbase.data() + off, dense.data(), dense.size() * sizeof(float));
      std::memcpy(ebase.data() + off, emb.data(), emb.size() * sizeof(float));
      std::memcpy(lbase.data() + off, labels.data(), batch * sizeof(float));
      const model::embedding_input at{ebase.data() + off, index.data(), rows, nullptr};
      model::workspace ws;
      net.forward_backward(base.data() + off, dbase.data() + off, at, lbase.data() + off, batch,
                           ws, gpbase.data() + off, grbase.data() + off);
      losses.push_back(ws.loss_sum);
      grad_params.emplace_back(gpbase.data() + off, gpbase.data() + off + n);
      grad_rows.emplace_back(grbase.data() + off, grbase.data() + off + rows * a.dim);
    }
    for (std::size_t k = 1; k < losses.size(); ++k) {
      CAPTURE(k);
      CHECK(std::memcmp(&losses[0], &losses[k], sizeof(double)) == 0);
      CHECK(std::memcmp(grad_params[0].data(), grad_params[k].data(), n * sizeof(float)) == 0);
      CHECK(std::memcmp(grad_rows[0].data(), grad_rows[k].data(), rows * a.dim * sizeof(float)) ==
            0);
    }
  }
}
