#pragma once
// A checkpoint of one process's tables (the sequential engine) written by a
// second thread while training goes on, still exactly the state at the cut.
//
// At the cut the training thread copies the small parts (dense parameters and
// optimiser state, the manifest) and starts the writer. The writer streams
// the embedding file row chunk by row chunk (weights of every chunk, then the
// optimiser state of every chunk: the file's order), then the replica file,
// then commits the folder (checkpoint/store.hpp). Before each sparse update
// the training thread calls before_update() with the rows it will change:
// every such row whose chunk is not written yet (weights or state) is copied
// first into a side table, and the writer writes the copy instead of the live
// row. So the file holds every row as it was at the cut, the copy costs only
// the rows touched during the write (68 B each for dim 16), and training
// never waits for the disk.
//
// One mutex guards the chunk flags and the side table; the writer holds it
// only while it copies one chunk into its staging buffer. Rows of written
// chunks are the training thread's alone again.
//
// It is the sequential engine's only checkpoint writer: a checkpoint that
// training waits for (checkpoint.background=false, the end, output.model) is
// the same writer joined at once (no row changes meanwhile, no copies).
#include <atomic>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "checkpoint/file_image.hpp"
#include "checkpoint/manifest.hpp"
#include "checkpoint/store.hpp"
#include "model/embedding.hpp"

namespace checkpoint {

class background_writer {
public:
  struct job {
    std::string dir;
    std::size_t keep = 3;
    checkpoint::manifest manifest;
    std::vector<float> params, state; // dense, copied at the cut
    // Called by the writer thread after the commit, with a one-line report.
    std::function<void(const std::string&)> on_committed;
    // Shard mode (an embedding shard of the simulated cluster, at a cut):
    // with `into` set, only the embedding file of shard `shard` of
    // `num_shards` (whole tables of full_rows_per_table rows) is written into
    // the open folder `into`; no replica, no manifest, no commit (the
    // coordinator commits the folder). file() then describes it;
    // on_committed is not called (on_finished is).
    std::string into;
    // Called by the writer thread once done() is true, whatever the outcome.
    std::function<void()> on_finished;
    std::uint64_t full_rows_per_table = 0;
    std::uint64_t shard = 0, num_shards = 1;
    // Shard mode, kept instead of written (a multi-node cut: the coordinator
    // fetches the file over the wire, cluster/shard_fetch.hpp): the same
    // file's bytes as an image owning the rows as at the cut (shard mode
    // without `into`); nothing touches the disk. take_image() hands it over.
    bool to_image = false;
  };

  // Starts writing `tables` as they are now (the cut). `tables` must outlive
  // the writer and change only after before_update() for the rows changed.
  background_writer(job j, model::embedding_tables& tables);
  ~background_writer(); // joins
  background_writer(const background_writer&) = delete;
  background_writer& operator=(const background_writer&) = delete;

  // The rows (keys) the next sparse update changes.
  void before_update(const std::vector<std::uint64_t>& keys);
  bool done() const { return done_.load(std::memory_order_acquire); }
  // Waits for the writer; its error, if any.
  std::optional<std::string> finish();
  std::uint64_t side_rows() const { return side_rows_; } // rows copied, after finish()
  const file_info& file() const { return file_; }        // shard mode, after finish()
  // to_image: the file's image (name, bytes and CRC32C as file()), once,
  // after finish() without error.
  file_image take_image() { return std::move(image_); }

private:
  void run();
  std::optional<std::string> write_all();
  // Streams the embedding file (every row as at the cut) to `path`, or
  // into image_ (to_image).
  bool write_embeddings(const std::string& path, file_info& info, std::string& err);
  job job_;
  model::embedding_tables& tables_;
  std::size_t dim_, spr_;
  std::uint64_t rows_ = 0, chunks_ = 0;
  static constexpr std::uint64_t chunk_rows = 1024;
  std::mutex m_;
  std::vector<char> weights_saved_, state_saved_; // per chunk, under m_
  std::unordered_map<std::uint64_t, std::uint64_t> side_; // row -> offset in side_data_
  std::vector<float> side_data_; // per row: dim weights, then spr state
  std::uint64_t side_rows_ = 0;
  file_info file_;
  file_image image_; // to_image
  std::optional<std::string> error_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

} // namespace checkpoint
