#include "model/dct_mp_dynamic.hpp"

#include <algorithm>

#include "model/check.hpp"
#include "model/dct_codec.hpp"

namespace model {

void dct_row_seen::widen(std::size_t words) {
  for (auto& t : bits_) {
    std::vector<std::uint64_t> wide(t.size() / words_ * words, 0);
    for (std::size_t s = 0; s < t.size() / words_; ++s)
      std::copy_n(t.begin() + std::ptrdiff_t(s * words_), words_,
                  wide.begin() + std::ptrdiff_t(s * words));
    t.swap(wide);
  }
  words_ = words;
}

void dct_row_seen::admitted(std::size_t t, std::uint32_t slot) {
  SS_CHECK(t < bits_.size(), "a known table");
  auto& b = bits_[t];
  if (std::size_t(slot) * words_ < b.size())
    std::fill_n(b.begin() + std::ptrdiff_t(std::size_t(slot) * words_), words_, 0);
}

bool dct_row_seen::first_look(std::size_t t, std::uint32_t slot, std::size_t w) {
  SS_CHECK(t < bits_.size() && w < 65536, "a known table and a small worker index");
  if (w / 64 >= words_)
    widen(w / 64 + 1);
  auto& b = bits_[t];
  const std::size_t at = std::size_t(slot) * words_ + w / 64;
  if (at >= b.size())
    b.resize((std::size_t(slot) + 1) * words_, 0);
  const std::uint64_t bit = std::uint64_t{1} << (w % 64);
  const bool first = (b[at] & bit) == 0;
  b[at] |= bit;
  return first;
}

void dct_row_seen::clear() {
  for (auto& t : bits_)
    t.clear();
}

std::size_t dct_row_seen::bytes() const {
  std::size_t n = 0;
  for (const auto& t : bits_)
    n += t.capacity() * sizeof(std::uint64_t);
  return n;
}

std::uint32_t tracked_lookup(dynamic_table& tab, dct_row_seen& seen, std::size_t t,
                             std::uint64_t id, std::uint64_t now) {
  const auto admitted = tab.stats().admissions;
  const auto slot = tab.train_lookup(id, now);
  if (slot != dynamic_table::no_row && tab.stats().admissions != admitted) // a new row
    seen.admitted(t, slot);
  return slot;
}

void mark_reply(dct_row_seen& seen, const std::uint64_t* pairs, const std::uint32_t* slots,
                std::size_t n, std::size_t w, row_marks& out) {
  out.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (slots[i] == dynamic_table::no_row)
      out.absent(std::uint32_t(i));
    else if (seen.first_look(std::size_t(pairs[2 * i]), slots[i], w))
      out.fresh(std::uint32_t(i));
  }
}

void forget_marked(dct_row_residuals* r, const std::uint64_t* pairs, const std::uint8_t* marks,
                   std::size_t n, float* grads, std::size_t dim) {
  for (std::size_t i = 0; i < n; ++i) {
    if (marks[i] == 0)
      continue;
    if (r)
      r->drop(pairs + 2 * i);
    if (marks[i] == mark_absent) // no row, no update
      std::fill_n(grads + i * dim, dim, 0.0f);
  }
}

namespace {

// A mark's varint at *p (advanced past it): model/dct_codec's, within 32 bits.
std::optional<std::string> get_varint(const std::uint8_t*& p, const std::uint8_t* end,
                                      std::uint32_t& v) {
  std::uint64_t x = 0;
  if (auto e = read_varint(p, end, x))
    return "a varint: " + *e;
  if (x > 0xFFFFFFFFull)
    return std::string("a varint over 32 bits");
  v = std::uint32_t(x);
  return std::nullopt;
}

} // namespace

std::vector<std::uint8_t> encode_row_marks(const row_marks& m) {
  std::vector<std::uint8_t> out;
  out.reserve(1 + m.marked.size());
  put_varint(out, std::uint32_t(m.marked.size()));
  for (std::size_t k = 0; k < m.marked.size(); ++k) {
    SS_CHECK(k == 0 || m.marked[k] > m.marked[k - 1], "increasing marks");
    put_varint(out, k == 0 ? m.marked[0] : m.marked[k] - m.marked[k - 1] - 1);
  }
  return out;
}

std::optional<std::string> decode_row_marks(const std::uint8_t* bytes, std::size_t len,
                                            std::size_t n, row_marks& out) {
  out.clear();
  const std::uint8_t* p = bytes;
  const std::uint8_t* end = bytes + len;
  std::uint32_t count = 0;
  if (auto e = get_varint(p, end, count))
    return "row marks: the count: " + *e;
  if (count > 2 * n || count > std::size_t(end - p)) // every mark takes a byte at least
    return "row marks: " + std::to_string(count) + " marks over " + std::to_string(n) +
           " rows in " + std::to_string(len) + " bytes";
  out.marked.reserve(count);
  std::uint64_t at = 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    std::uint32_t d = 0;
    if (auto e = get_varint(p, end, d))
      return "row marks: mark " + std::to_string(k) + ": " + *e;
    at = k == 0 ? d : at + 1 + d;
    if (at >= 2 * n)
      return "row marks: mark " + std::to_string(k) + " (" + std::to_string(at) +
             ") past the " + std::to_string(n) + " rows";
    out.marked.push_back(std::uint32_t(at));
  }
  if (p != end)
    return "row marks: " + std::to_string(end - p) + " trailing bytes";
  return std::nullopt;
}

} // namespace model
