#include "model/dense_layout.hpp"

#include <algorithm>
#include <cmath>

namespace model {

namespace {
void append_layers(const std::vector<std::size_t>& sizes, std::vector<layer_slot>& out,
                   std::size_t& offset) {
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    layer_slot s;
    s.in = sizes[i];
    s.out = sizes[i + 1];
    s.w = offset;
    offset += s.in * s.out;
    s.b = offset;
    offset += s.out;
    out.push_back(s);
  }
}
} // namespace

dense_layout::dense_layout(const arch& a) {
  append_layers(a.bottom_sizes(), bottom_, size_);
  if (a.interaction == interaction_kind::dcn)
    for (std::size_t l = 0; l < a.cross_layers; ++l) {
      cross_slot c;
      c.width = a.cross_width();
      c.rank = a.cross_rank;
      c.v = size_;
      size_ += c.rank * c.width;
      c.u = size_;
      size_ += c.width * c.rank;
      c.b = size_;
      size_ += c.width;
      cross_.push_back(c);
    }
  append_layers(a.top_sizes(), top_, size_);
}

std::size_t dense_layout::cross_macs() const {
  std::size_t n = 0;
  for (auto& c : cross_)
    n += 2 * c.width * c.rank;
  return n;
}

std::size_t dense_layout::mlp_macs() const {
  std::size_t n = 0;
  for (auto& s : bottom_)
    n += s.in * s.out;
  for (auto& s : top_)
    n += s.in * s.out;
  return n;
}

void init_dense(const dense_layout& layout, float* params, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto init = [&](const layer_slot& s) {
    std::normal_distribution<float> w(0.0f, std::sqrt(2.0f / float(s.in + s.out)));
    std::normal_distribution<float> b(0.0f, std::sqrt(1.0f / float(s.out)));
    for (std::size_t i = 0; i < s.in * s.out; ++i)
      params[s.w + i] = w(rng);
    for (std::size_t i = 0; i < s.out; ++i)
      params[s.b + i] = b(rng);
  };
  for (auto& s : layout.bottom())
    init(s);
  for (auto& c : layout.cross()) {
    std::normal_distribution<float> w(0.0f, std::sqrt(2.0f / float(c.width + c.rank)));
    for (std::size_t i = 0; i < c.rank * c.width; ++i)
      params[c.v + i] = w(rng);
    for (std::size_t i = 0; i < c.width * c.rank; ++i)
      params[c.u + i] = w(rng);
    std::fill(params + c.b, params + c.b + c.width, 0.0f);
  }
  for (auto& s : layout.top())
    init(s);
}

} // namespace model
