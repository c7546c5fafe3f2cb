#include "cluster/shard_fetch.hpp"

#include <caf/all.hpp>

#include "checkpoint/file_io.hpp"
#include "messages/peer_bounds.hpp"

namespace runtime {

std::optional<std::string> fetch_shard_file(caf::blocking_actor* self,
                                            const actors::embedding_shard_actor& shard,
                                            const std::string& name,
                                            std::chrono::milliseconds timeout,
                                            checkpoint::folder_writer& w,
                                            std::optional<std::uint64_t> cut,
                                            checkpoint::file_info* got) {
  checkpoint::file_sink f;
  std::string err;
  if (!f.open(w.path(name), &err))
    return err;
  std::uint64_t size = 0; // the file's, from the first piece
  std::optional<std::string> failure;
  do {
    const std::uint64_t offset = f.bytes();
    auto on_piece = [&](messages::file_chunk& c) {
      if (auto e = messages::check_file_chunk(c, name, offset, size); !e.empty())
        failure = "refused " + e;
      else if (!f.write(c.bytes.data(), c.bytes.size(), &err))
        failure = err;
      else if (f.crc() != c.crc32c)
        failure = "CRC32C of its first " + std::to_string(f.bytes()) +
                  " bytes differs from the shard's (corrupted on the way)";
      size = c.size;
    };
    auto on_error = [&](caf::error& e) { failure = self->system().render(e); };
    if (cut)
      self->request(shard, timeout, messages::cut_atom::value, *cut, offset)
        .receive(on_piece, on_error);
    else
      self->request(shard, timeout, messages::save_atom::value, offset)
        .receive(on_piece, on_error);
  } while (!failure && f.bytes() < size);
  if (!failure && !f.close(&err))
    failure = err;
  if (failure)
    return name + ": " + *failure;
  const checkpoint::file_info info{name, f.bytes(), f.crc()};
  if (got)
    *got = info;
  w.add(info);
  return std::nullopt;
}

std::optional<std::string> fetch_cut_files(caf::blocking_actor* self, const cut_fetch_job& job,
                                           checkpoint::folder_writer& w) {
  const auto cut = "checkpoint: cut " + std::to_string(job.cut) + ": ";
  for (std::size_t s = 0; s < job.files.size(); ++s) {
    if (job.cancelled)
      return cut + "cancelled";
    const auto& f = job.files[s];
    const auto where = cut + "fetching " + f.name + " from " + job.shard_names[s] + ": ";
    checkpoint::file_info got;
    if (auto e = fetch_shard_file(self, job.shards[s], f.name, job.timeout, w, job.cut, &got))
      return where + *e;
    if (got.bytes != f.bytes || got.crc32c != f.crc32c)
      return where + std::to_string(got.bytes) + " bytes with CRC32C " +
             std::to_string(got.crc32c) + ", the shard's cut answered " +
             std::to_string(f.bytes) + " bytes with CRC32C " + std::to_string(f.crc32c);
  }
  return std::nullopt;
}

} // namespace runtime
