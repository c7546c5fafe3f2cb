#include "runtime/memory_estimate.hpp"

#include <unistd.h>

#include <cstdio>

#include "model/dlrm.hpp"

namespace runtime {

memory_estimate estimate_memory(const train_config& cfg) {
  const auto& a = cfg.arch;
  memory_estimate m;
  // doubles: rows-per-table may be absurd (1e12) without overflowing.
  m.embedding_bytes = double(a.num_tables) * double(a.rows_per_table) *
                      double(a.dim + cfg.train.sparse.state_per_row(a.dim)) * 4.0;
  const double params = double(model::dlrm(a).layout().size());
  const double trainers = cfg.cluster.mode == "sequential" ? 1.0 : double(cfg.cluster.trainers);
  m.dense_bytes = params * 4.0 * (trainers * 4.0 + 2.0);
  return m;
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

std::optional<std::string> check_memory(const train_config& cfg, double available) {
  const auto m = estimate_memory(cfg);
  if (available <= 0 || m.total() <= available)
    return std::nullopt;
  const auto& a = cfg.arch;
  const bool tables = m.embedding_bytes >= m.dense_bytes;
  std::string key = tables ? "model.rows-per-table" : "model.bottom / model.top / cluster.trainers";
  std::string value = tables ? " = " + std::to_string(a.rows_per_table) : "";
  return "option '" + key + "'" + value + ": the parameters need about " +
         human_bytes(m.total()) + " (embedding tables " + human_bytes(m.embedding_bytes) + ": " +
         std::to_string(a.num_tables) + " tables x " + std::to_string(a.rows_per_table) +
         " rows x (dim " + std::to_string(a.dim) + " + " +
         std::to_string(cfg.train.sparse.state_per_row(a.dim)) +
         " optimiser floats) x 4 B; dense replicas " + human_bytes(m.dense_bytes) +
         "), more than this machine's " + human_bytes(available) + " of memory";
}

} // namespace runtime
