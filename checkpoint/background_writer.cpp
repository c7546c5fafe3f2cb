#include "checkpoint/background_writer.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>

#include "checkpoint/model_files.hpp"

namespace checkpoint {

background_writer::background_writer(job j, model::embedding_tables& tables)
    : job_(std::move(j)), tables_(tables), dim_(tables.dim()) {
  rows_ = tables_.num_tables() * tables_.rows_per_table();
  spr_ = tables_.state_per_row();
  chunks_ = (rows_ + chunk_rows - 1) / chunk_rows;
  weights_saved_.assign(chunks_, 0);
  state_saved_.assign(chunks_, spr_ == 0 ? 1 : 0);
  thread_ = std::thread([this] { run(); });
}

background_writer::~background_writer() {
  if (thread_.joinable())
    thread_.join();
}

void background_writer::before_update(const std::vector<std::uint64_t>& keys) {
  if (done())
    return;
  std::lock_guard<std::mutex> lock(m_);
  const float* w = tables_.weights().data();
  const float* s = tables_.accumulators().data();
  for (const auto key : keys) {
    const std::uint64_t r = model::key_table(key) * tables_.rows_per_table() + model::key_row(key);
    const std::uint64_t c = r / chunk_rows;
    if ((weights_saved_[c] && state_saved_[c]) || side_.count(r))
      continue;
    const std::uint64_t at = side_data_.size();
    side_data_.insert(side_data_.end(), w + r * dim_, w + (r + 1) * dim_);
    side_data_.insert(side_data_.end(), s + r * spr_, s + (r + 1) * spr_);
    side_.emplace(r, at);
  }
}

std::optional<std::string> background_writer::finish() {
  if (thread_.joinable())
    thread_.join();
  return error_;
}

void background_writer::run() {
  error_ = write_all();
  done_.store(true, std::memory_order_release);
  if (job_.on_finished)
    job_.on_finished();
}

bool background_writer::write_embeddings(const std::string& path, file_info& info,
                                         std::string& err) {
  const bool shard_mode = !job_.into.empty() || job_.to_image;
  const auto v = !shard_mode
                   ? shard_view(tables_, tables_.rows_per_table()) // shard 0 of 1
                   : shard_view(tables_, job_.full_rows_per_table, job_.shard, job_.num_shards);
  file_sink f;
  // to_image: the arrays as at the cut, owned by the image (weights, state).
  std::vector<std::vector<float>> kept;
  if (job_.to_image)
    kept = {std::vector<float>(rows_ * dim_), std::vector<float>(rows_ * spr_)};
  else if (!f.open(path, &err) || !write_array_header(f, embedding_header(v), &err))
    return false;
  // One pass per array: chunk c of `width` floats per row, with the side
  // copies of rows changed since the cut.
  std::vector<float> staging(chunk_rows * std::max<std::size_t>(dim_, spr_));
  auto pass = [&](std::vector<char>& saved, const float* live, std::size_t width,
                  std::size_t side_offset, std::vector<float>* into) {
    for (std::uint64_t c = 0; c < chunks_; ++c) {
      const std::uint64_t r0 = c * chunk_rows, r1 = std::min(rows_, r0 + chunk_rows);
      {
        // A row with a side copy may be changing right now: never read it live.
        std::lock_guard<std::mutex> lock(m_);
        if (side_.empty()) {
          std::memcpy(staging.data(), live + r0 * width, (r1 - r0) * width * sizeof(float));
        } else {
          for (std::uint64_t r = r0; r < r1; ++r) {
            const auto it = side_.find(r);
            const float* src = it == side_.end() ? live + r * width
                                                 : side_data_.data() + it->second + side_offset;
            std::memcpy(staging.data() + (r - r0) * width, src, width * sizeof(float));
          }
        }
        saved[c] = 1;
      }
      if (into)
        std::memcpy(into->data() + r0 * width, staging.data(), (r1 - r0) * width * sizeof(float));
      else if (!f.write(staging.data(), (r1 - r0) * width * sizeof(float), &err))
        return false;
    }
    return true;
  };
  const bool keep = job_.to_image;
  if (!pass(weights_saved_, tables_.weights().data(), dim_, 0, keep ? &kept[0] : nullptr))
    return false;
  if (spr_ > 0 &&
      !pass(state_saved_, tables_.accumulators().data(), spr_, dim_, keep ? &kept[1] : nullptr))
    return false;
  info.name = embedding_file_name(v.shard);
  if (keep) {
    image_ = file_image(info.name, embedding_header(v), std::move(kept));
    info.bytes = image_.size();
    info.crc32c = image_.crc32c();
    return true;
  }
  if (!f.close(&err))
    return false;
  info.bytes = f.bytes();
  info.crc32c = f.crc();
  return true;
}

std::optional<std::string> background_writer::write_all() {
  const auto t0 = std::chrono::steady_clock::now();
  std::string err, folder;
  if (!job_.into.empty() || job_.to_image) { // shard mode: one file (into the folder, or kept)
    if (!write_embeddings(job_.into + "/" + embedding_file_name(job_.shard), file_, err))
      return "checkpoint: " + err;
    std::lock_guard<std::mutex> lock(m_);
    side_rows_ = side_.size();
    return std::nullopt;
  }
  folder_writer w;
  auto fail = [&](const std::string& e) -> std::optional<std::string> {
    w.abandon();
    return "checkpoint: " + e;
  };
  if (!w.begin(job_.dir, checkpoint_name(job_.manifest.examples), &err))
    return fail(err);
  file_info info;
  if (!write_embeddings(w.path(embedding_file_name(0)), info, err))
    return fail(err);
  w.add(info);
  if (!write_replica(w, 0, job_.params.data(), job_.state.data(), job_.params.size(),
                                 &err) ||
      !w.commit(job_.manifest, job_.keep, &folder, &err))
    return fail(err);
  {
    std::lock_guard<std::mutex> lock(m_);
    side_rows_ = side_.size();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double mb = double(info.bytes + 2 * job_.params.size() * sizeof(float)) / 1e6;
  if (job_.on_committed) {
    char line[512];
    std::snprintf(line, sizeof line,
                  ": %llu examples, %.1f MB in %.2f s (%.0f MB/s); %llu rows copied on write",
                  static_cast<unsigned long long>(job_.manifest.examples), mb, s,
                  s > 0 ? mb / s : 0.0, static_cast<unsigned long long>(side_rows_));
    job_.on_committed("checkpoint " + folder + line);
  }
  return std::nullopt;
}

} // namespace checkpoint
