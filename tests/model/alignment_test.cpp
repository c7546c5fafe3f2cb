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

namespace {

// One preset's dense parameters and a batch of 64 (dense features, 128
// embedding rows, each example's row per table, labels), plus buffers that
// copy each at a float offset from a 64-byte boundary.
struct batch_at_offsets {
  batch_at_offsets(const char* name, unsigned seed)
      : a(*model::preset(name)), net(a), n(net.layout().size()) {
    model::float_buffer init(n);
    model::init_dense(net.layout(), init.data(), 3);
    params.assign(init.begin(), init.end());
    std::mt19937 rng(seed);
    dense = testing::random_vector(batch * a.num_dense, rng);
    emb = testing::random_vector(rows * a.dim, rng, 0.5f);
    index.resize(batch * a.num_tables);
    for (auto& i : index)
      i = std::uint32_t(rng() % rows);
    labels.resize(batch);
    for (auto& l : labels)
      l = float(rng() % 2);
  }
  // The copies at offset `off` (floats) from a 64-byte boundary.
  void place(std::size_t off) {
    std::memcpy(pbase.data() + off, params.data(), n * sizeof(float));
    std::memcpy(dbase.data() + off, dense.data(), dense.size() * sizeof(float));
    std::memcpy(ebase.data() + off, emb.data(), emb.size() * sizeof(float));
    std::memcpy(lbase.data() + off, labels.data(), batch * sizeof(float));
  }
  model::embedding_input rows_at(std::size_t off) const {
    return {ebase.data() + off, index.data(), rows, nullptr};
  }

  static constexpr std::size_t batch = 64, rows = 2 * batch;
  model::arch a;
  model::dlrm net;
  std::size_t n;
  std::vector<float> params, dense, emb, labels;
  std::vector<std::uint32_t> index;
  // (parentheses: a braced size would be a one-element initializer list)
  model::float_buffer pbase = model::float_buffer(n + 16);
  model::float_buffer dbase = model::float_buffer(batch * a.num_dense + 16);
  model::float_buffer ebase = model::float_buffer(rows * a.dim + 16);
  model::float_buffer lbase = model::float_buffer(batch + 16);
};

constexpr std::size_t offsets[] = {0, 4, 8, 12};

} // namespace

TEST_CASE("forward: the same logits for parameters and inputs at every 16-byte offset") {
  for (const char* name : {"small", "dlrm-kaggle"}) {
    CAPTURE(name);
    batch_at_offsets b(name, 1);
    std::vector<std::vector<float>> logits;
    for (std::size_t off : offsets) {
      b.place(off);
      model::workspace ws;
      b.net.forward(b.pbase.data() + off, b.dbase.data() + off, b.rows_at(off), b.batch, ws);
      logits.emplace_back(ws.logits.data(), ws.logits.data() + b.batch);
    }
    for (std::size_t k = 1; k < logits.size(); ++k) {
      CAPTURE(k);
      CHECK(std::memcmp(logits[0].data(), logits[k].data(), b.batch * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("forward_backward: the same loss, parameter and row gradients at every 16-byte "
          "offset of parameters, inputs, labels and gradient buffers") {
  for (const char* name : {"small", "dlrm-kaggle", "dcnv2-small"}) {
    CAPTURE(name);
    batch_at_offsets b(name, 2);
    const std::size_t n = b.n, row_floats = b.rows * b.a.dim;
    model::float_buffer gpbase(n + 16), grbase(row_floats + 16);
    std::vector<std::vector<float>> grad_params, grad_rows;
    std::vector<double> losses;
    for (std::size_t off : offsets) {
      b.place(off);
      model::workspace ws;
      b.net.forward_backward(b.pbase.data() + off, b.dbase.data() + off, b.rows_at(off),
                             b.lbase.data() + off, b.batch, ws, gpbase.data() + off,
                             grbase.data() + off);
      losses.push_back(ws.loss_sum);
      grad_params.emplace_back(gpbase.data() + off, gpbase.data() + off + n);
      grad_rows.emplace_back(grbase.data() + off, grbase.data() + off + row_floats);
    }
    for (std::size_t k = 1; k < losses.size(); ++k) {
      CAPTURE(k);
      CHECK(std::memcmp(&losses[0], &losses[k], sizeof(double)) == 0);
      CHECK(std::memcmp(grad_params[0].data(), grad_params[k].data(), n * sizeof(float)) == 0);
      CHECK(std::memcmp(grad_rows[0].data(), grad_rows[k].data(), row_floats * sizeof(float)) == 0);
    }
  }
}
