// An embedding shard's model file sent in pieces instead of written where the
// shard runs (a multi-node export, cluster/shard_fetch.hpp):
//   coordinator -> shard: save(0); shard: takes the file's image -> piece 0
//   coordinator -> shard: save(next offset) -> the next piece, ... the last
// The shard only copies bytes (at most ship_piece_bytes a reply): the file is
// written by the coordinator, on its own thread, not in this handler. The
// tables are quiescent (training has ended), so a hashed image borrows them.
#include "actors/embedding_shard.hpp"

#include <algorithm>

#include "checkpoint/crc32c.hpp"
#include "checkpoint/dynamic_files.hpp"
#include "checkpoint/model_files.hpp"
#include "messages/errors.hpp"

namespace actors {

caf::expected<messages::file_chunk> embedding_shard_state::ship(std::uint64_t offset) {
  using messages::errc;
  if (offset == 0) { // (again from the start: a new image of the tables as they are)
    auto image = dyn ? checkpoint::dynamic_image(*dyn, cfg.shard, cfg.num_shards,
                                     checkpoint::dynamic_counters::own_shard)
                     : checkpoint::embedding_image(checkpoint::shard_view(
                         *tables, cfg.rows_per_table, cfg.shard, cfg.num_shards));
    shipping = std::make_unique<checkpoint::file_image>(std::move(image));
    shipped = 0;
    shipped_crc = 0;
  }
  if (!shipping || offset != shipped)
    return messages::make_error(errc::bad_request,
                                who() + ": a piece of its model file at offset " +
                                  std::to_string(offset) + ", expected " +
                                  (shipping ? std::to_string(shipped) : std::string("0")));
  messages::file_chunk c;
  c.name = shipping->name();
  c.size = shipping->size();
  c.offset = offset;
  const auto n = std::size_t(std::min<std::uint64_t>(ship_piece_bytes, c.size - offset));
  c.bytes.values.resize(n);
  shipping->read(offset, c.bytes.data(), n);
  shipped_crc = checkpoint::crc32c_extend(shipped_crc, c.bytes.data(), n);
  shipped += n;
  c.crc32c = shipped_crc;
  if (shipped == c.size)
    shipping.reset(); // the last piece: a dynamic image's copy of the rows goes
  return c;
}

} // namespace actors
