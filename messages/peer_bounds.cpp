#include "messages/peer_bounds.hpp"

#include <algorithm>

namespace messages {

std::string check_index(const char* what, std::uint64_t value, std::uint64_t count,
                        const char* key) {
  if (value < count)
    return {};
  return std::string(what) + " " + std::to_string(value) + ", expected below " +
         std::to_string(count) + " (" + key + ")";
}

std::string check_count(const char* what, std::uint64_t value, std::uint64_t most,
                        const char* key) {
  if (value <= most)
    return {};
  return std::to_string(value) + " " + what + ", expected at most " + std::to_string(most) +
         " (" + key + ")";
}

std::string check_sparse_range(const sparse_range& s, std::uint64_t offset,
                               std::uint32_t trainers) {
  if (s.offset != offset)
    return "offset " + std::to_string(s.offset) + ", expected " + std::to_string(offset);
  return check_index("trainer", s.trainer, trainers, "cluster.trainers");
}

std::string check_generation(std::uint32_t generation, std::uint32_t trainers) {
  return check_index("ring generation", generation, trainers,
                     "one re-form per lost trainer of cluster.trainers");
}

std::string check_reform(std::uint32_t generation, std::uint32_t rank, std::size_t survivors,
                         std::uint32_t trainers) {
  if (auto e = check_generation(generation, trainers); !e.empty())
    return e;
  if (auto e = check_count("survivors", survivors, trainers, "cluster.trainers"); !e.empty())
    return e;
  return check_index("rank", rank, survivors, "the survivors");
}

std::string check_ring_message(const ring_chunk& c, std::uint32_t trainers) {
  if (auto e = check_generation(c.generation, trainers); !e.empty())
    return e;
  // A ring of n <= trainers members has 2 (n - 1) steps and n chunks.
  const std::uint64_t steps = trainers > 0 ? 2 * (std::uint64_t{trainers} - 1) : 0;
  if (auto e = check_index("ring step", c.step, steps, "2 (cluster.trainers - 1)"); !e.empty())
    return e;
  return check_index("ring chunk", c.chunk, trainers, "cluster.trainers");
}

std::string check_ring_message(const ring_sparse& p, std::uint32_t trainers) {
  if (auto e = check_generation(p.generation, trainers); !e.empty())
    return e;
  const std::uint64_t steps = trainers > 0 ? 2 * (std::uint64_t{trainers} - 1) : 0;
  if (auto e = check_index("ring step", p.step, std::max<std::uint64_t>(steps, 1),
                           "2 (cluster.trainers - 1)");
      !e.empty())
    return e;
  return check_index("ring origin", p.origin, trainers, "cluster.trainers");
}

std::string check_file_chunk(const file_chunk& c, const std::string& name, std::uint64_t offset,
                             std::uint64_t size) {
  if (c.name != name)
    return "a piece of '" + c.name.substr(0, 64) + "', expected '" + name + "'";
  if (c.offset != offset)
    return "a piece at offset " + std::to_string(c.offset) + ", expected " + std::to_string(offset);
  if (size != 0 && c.size != size)
    return "a file of " + std::to_string(c.size) + " bytes, earlier pieces said " +
           std::to_string(size);
  if (c.bytes.size() == 0)
    return "an empty piece at offset " + std::to_string(offset) + " of " +
           std::to_string(c.size) + " bytes";
  if (c.offset > c.size || c.bytes.size() > c.size - c.offset)
    return "a piece of " + std::to_string(c.bytes.size()) + " bytes at offset " +
           std::to_string(c.offset) + " of a file of " + std::to_string(c.size) + " bytes";
  return {};
}

} // namespace messages
