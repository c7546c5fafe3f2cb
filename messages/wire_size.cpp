#include "messages/wire_size.hpp"

#include <caf/type_erased_tuple.hpp>

#include "messages/cut_messages.hpp"
#include "messages/messages.hpp"

namespace messages {

namespace {

template <class T, class F>
bool add_if(const caf::type_erased_tuple& m, std::size_t i, std::uint64_t& sum, F bytes) {
  if (!m.match_element<T>(i))
    return false;
  sum += bytes(m.get_as<T>(i));
  return true;
}

} // namespace

std::uint64_t wire_bytes(const caf::type_erased_tuple& m) {
  std::uint64_t sum = wire_header_bytes;
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (add_if<lookup_request>(m, i, sum, [](auto& x) { return 8 + x.keys.bytes(); })
        || add_if<embedding_rows>(m, i, sum, [](auto& x) { return 8 + x.rows.bytes(); })
        || add_if<embedding_grads>(m, i, sum,
                                   [](auto& x) { return x.keys.bytes() + x.grads.bytes(); })
        || add_if<dense_range>(m, i, sum, [](auto& x) { return 8 + x.values.bytes(); })
        || add_if<sparse_range>(m, i, sum, [](auto& x) { return 20 + x.payload.bytes(); })
        || add_if<sparse_rows>(m, i, sum, [](auto& x) { return 20 + x.payload.bytes() + x.marks.bytes(); })
        || add_if<sparse_grads>(m, i, sum,
                                [](auto& x) { return 25 + x.keys.bytes() + x.payload.bytes(); })
        || add_if<ring_chunk>(m, i, sum, [](auto& x) { return 20 + x.values.bytes(); })
        || add_if<ring_sparse>(m, i, sum, [](auto& x) { return 28 + x.payload.bytes(); })
        || add_if<example_batch>(m, i, sum, [](auto& x) {
             return x.labels.bytes() + x.dense.bytes() + x.cat.bytes() + x.cat_offsets.bytes();
           })
        || add_if<trainer_report>(m, i, sum,
                                  [](auto& x) { return x.replica.bytes() + x.state.bytes(); })
        || add_if<file_chunk>(m, i, sum,
                              [](auto& x) { return 28 + x.name.size() + x.bytes.bytes(); }))
      continue;
    sum += wire_element_bytes;
  }
  return sum;
}

} // namespace messages
