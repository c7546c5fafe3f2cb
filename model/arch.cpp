#include "model/arch.hpp"

#include <charconv>
#include <sstream>

namespace model {

namespace {
std::string join(const std::vector<std::size_t>& xs) {
  std::string out;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i)
      out += '-';
    out += std::to_string(xs[i]);
  }
  return out;
}
} // namespace

std::vector<std::size_t> arch::bottom_sizes() const {
  std::vector<std::size_t> out{num_dense};
  out.insert(out.end(), bottom_hidden.begin(), bottom_hidden.end());
  out.push_back(dim);
  return out;
}

std::vector<std::size_t> arch::top_sizes() const {
  std::vector<std::size_t> out{top_input()};
  out.insert(out.end(), top_hidden.begin(), top_hidden.end());
  out.push_back(1);
  return out;
}

const char* to_string(interaction_kind k) { return k == interaction_kind::dcn ? "dcn" : "dot"; }
const char* to_string(pooling_kind k) { return k == pooling_kind::mean ? "mean" : "sum"; }

std::string arch::describe() const {
  std::ostringstream os;
  os << "bottom " << join(bottom_sizes());
  if (interaction == interaction_kind::dcn)
    os << ", " << cross_layers << " cross layers of rank " << cross_rank;
  os << ", top " << join(top_sizes()) << ", dim " << dim << ", " << num_tables << " tables x "
     << rows_per_table << " rows";
  return os.str();
}

namespace {

struct preset_entry {
  const char* name;
  std::vector<std::size_t> bottom_hidden, top_hidden;
  double dense_lr;
  std::size_t dim = 16;
  interaction_kind interaction = interaction_kind::dot;
  std::size_t cross_layers = 0, cross_rank = 0;
};

const std::vector<preset_entry>& presets() {
  static const std::vector<preset_entry> table{
    {"small", {64, 32}, {64, 32}, 0.03},
    {"dlrm-kaggle", {512, 256, 64}, {512, 256}, 0.005},
    {"dlrm-dcnv2", {512, 256}, {1024, 1024, 512, 256}, 0.005, 128, interaction_kind::dcn, 3, 512},
    {"dcnv2-small", {64, 32}, {64, 32}, 0.01, 16, interaction_kind::dcn, 3, 64},
  };
  return table;
}

const preset_entry* find_preset(const std::string& name) {
  for (const auto& p : presets())
    if (name == p.name)
      return &p;
  return nullptr;
}

} // namespace

std::optional<arch> preset(const std::string& name) {
  const auto* p = find_preset(name);
  if (!p)
    return std::nullopt;
  arch a;
  a.bottom_hidden = p->bottom_hidden;
  a.top_hidden = p->top_hidden;
  a.dim = p->dim;
  a.interaction = p->interaction;
  a.cross_layers = p->cross_layers;
  a.cross_rank = p->cross_rank;
  return a;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (const auto& p : presets())
    out.push_back(p.name);
  return out;
}

std::optional<double> preset_dense_lr(const std::string& name) {
  const auto* p = find_preset(name);
  return p ? std::optional<double>(p->dense_lr) : std::nullopt;
}

std::optional<std::vector<std::size_t>> parse_widths(const std::string& text) {
  std::vector<std::size_t> out;
  if (text.empty())
    return out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    std::size_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc{} || v == 0)
      return std::nullopt;
    out.push_back(v);
    p = next;
    if (p < end) {
      if (*p != '-')
        return std::nullopt;
      ++p;
      if (p == end)
        return std::nullopt;
    }
  }
  return out;
}

} // namespace model
