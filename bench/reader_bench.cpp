// Reader throughput: lines/s and MB/s of data::reader on Criteo-like TSV.
//
//   bench_reader [FILE] [--lines N] [--repeats R] [--batch B] [--file-only]
//
// Without FILE it writes N (default 500k) synthetic Criteo-like lines to
// /tmp and removes them afterwards. Each measurement reads the whole input R
// times (default 5) and reports the median. If the shared Criteo sample is
// present, it is also measured, listed 100 times as input files so one pass
// is 800k real lines. The files are in the page cache after the first pass,
// so this measures parsing, not the disk. FILE may be gzip or zstd
// (decompressed on the fly; MB/s counts decompressed bytes); --file-only skips
// the shared sample (bench/compressed_input.py). Prints one JSON line at the end.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <ctime>
#include <string>
#include <vector>

#include <unistd.h>

#include "data/reader.hpp"

namespace {

struct result {
  double lines_per_second = 0, mb_per_second = 0;
  double lines_per_cpu_second = 0; // robust when the machine is shared
  std::uint64_t lines = 0, bytes = 0, malformed = 0;
};

// Criteo-like: ~25 % positives, I-columns with missing values, small counts
// and a heavy tail, I2 sometimes negative, C-columns as 8 hex digits from a
// skewed vocabulary, some missing.
void write_synthetic(const std::string& path, std::size_t lines) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::FILE* fp = std::fopen(path.c_str(), "wb");
  if (!fp) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::string buf;
  char tmp[32];
  for (std::size_t l = 0; l < lines; ++l) {
    buf += u(rng) < 0.25 ? '1' : '0';
    for (int i = 0; i < 13; ++i) {
      buf += '\t';
      if (u(rng) < 0.3)
        continue; // missing
      long v = static_cast<long>(std::exp(u(rng) * (i == 4 ? 12.0 : 6.0))) - 1;
      if (i == 1 && u(rng) < 0.05)
        v = -1 - static_cast<long>(u(rng) * 3);
      buf.append(tmp, static_cast<std::size_t>(std::snprintf(tmp, sizeof tmp, "%ld", v)));
    }
    for (int c = 0; c < 26; ++c) {
      buf += '\t';
      if (u(rng) < 0.15)
        continue; // missing
      const double vocab = c % 3 == 0 ? 1e6 : c % 3 == 1 ? 1e3 : 30;
      const auto id = static_cast<std::uint32_t>(std::pow(vocab, u(rng) * u(rng)) * 2654435761u);
      buf.append(tmp, static_cast<std::size_t>(std::snprintf(tmp, sizeof tmp, "%08x", id)));
    }
    buf += '\n';
    if (buf.size() > (1 << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), fp);
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), fp);
  std::fclose(fp);
}

// CPU time of this thread: on a shared machine it excludes time spent
// waiting for a core (it still includes the kernel's copy in fread).
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

result measure(const char* name, const std::vector<std::string>& files, int repeats, std::size_t batch_size) {
  data::reader_options o;
  o.files = files;
  std::string error;
  auto rd = data::reader::open(o, &error);
  if (!rd) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::exit(1);
  }
  data::batch b;
  std::vector<double> lps, mbps, lpcs;
  result r;
  for (int rep = 0; rep < repeats + 1; ++rep) { // the first pass warms the cache
    rd->reset();
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t checksum = 0;
    while (true) {
      b.clear();
      if (!rd->next(b, batch_size))
        break;
      checksum += b.cat[0]; // keep the work observable
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    if (!rd->error().empty()) {
      std::fprintf(stderr, "%s\n", rd->error().c_str());
      std::exit(1);
    }
    const auto& st = rd->statistics();
    r.lines = st.lines;
    r.bytes = st.bytes;
    r.malformed = st.malformed;
    if (rep == 0)
      continue;
    lps.push_back(static_cast<double>(st.lines) / s);
    mbps.push_back(static_cast<double>(st.bytes) / s / 1e6);
    lpcs.push_back(static_cast<double>(st.lines) / cpu);
    std::printf("%-10s pass %d: %9llu lines %8.1f MB in %6.3f s (%6.3f s CPU): %6.2f M lines/s, %7.1f MB/s, "
                "%6.2f M lines/CPU-s (checksum %llx)\n",
                name, rep, static_cast<unsigned long long>(st.lines), static_cast<double>(st.bytes) / 1e6, s, cpu,
                lps.back() / 1e6, mbps.back(), lpcs.back() / 1e6, static_cast<unsigned long long>(checksum & 0xffff));
  }
  r.lines_per_second = median(lps);
  r.mb_per_second = median(mbps);
  r.lines_per_cpu_second = median(lpcs);
  std::printf("%-10s median: %.2f M lines/s, %.1f MB/s, %.2f M lines/CPU-s, %llu malformed\n", name,
              r.lines_per_second / 1e6, r.mb_per_second, r.lines_per_cpu_second / 1e6,
              static_cast<unsigned long long>(r.malformed));
  return r;
}

} // namespace

int main(int argc, char** argv) {
  std::string file;
  std::size_t lines = 500000, batch_size = 4096;
  int repeats = 5;
  bool file_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--lines" && i + 1 < argc)
      lines = std::stoul(argv[++i]);
    else if (a == "--repeats" && i + 1 < argc)
      repeats = std::max(1, std::stoi(argv[++i]));
    else if (a == "--batch" && i + 1 < argc)
      batch_size = std::stoul(argv[++i]);
    else if (a == "--file-only")
      file_only = true;
    else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: %s [FILE] [--lines N] [--repeats R] [--batch B] [--file-only]\n", argv[0]);
      return 2;
    } else
      file = a;
  }
  bool generated = false;
  if (file.empty()) {
    file = "/tmp/ss-reader-bench-" + std::to_string(::getpid()) + ".tsv";
    write_synthetic(file, lines);
    generated = true;
  }
  const result synthetic = measure(generated ? "synthetic" : "file", {file}, repeats, batch_size);
  if (generated)
    std::filesystem::remove(file);

  std::string criteo_json;
#ifdef SS_SHARED_DATA_DIR
  const std::string criteo = std::string(SS_SHARED_DATA_DIR) + "/criteo-kaggle-head10k/train-8k.tsv";
  if (!file_only && std::filesystem::exists(criteo)) {
    const result c = measure("criteo-8k", std::vector<std::string>(100, criteo), repeats, batch_size);
    char tmp[256];
    std::snprintf(tmp, sizeof tmp,
                  ",\"criteo_8k\":{\"lines\":%llu,\"malformed\":%llu,\"lines_per_second_median\":%.0f,"
                  "\"mb_per_second_median\":%.1f,\"lines_per_cpu_second_median\":%.0f}",
                  static_cast<unsigned long long>(c.lines), static_cast<unsigned long long>(c.malformed),
                  c.lines_per_second, c.mb_per_second, c.lines_per_cpu_second);
    criteo_json = tmp;
  }
#endif
  std::printf("{\"bench\":\"reader\",\"input\":\"%s\",\"lines\":%llu,\"repeats\":%d,\"batch\":%zu,"
              "\"lines_per_second_median\":%.0f,\"mb_per_second_median\":%.1f,"
              "\"lines_per_cpu_second_median\":%.0f%s}\n",
              generated ? "synthetic" : "file", static_cast<unsigned long long>(synthetic.lines), repeats,
              batch_size, synthetic.lines_per_second, synthetic.mb_per_second, synthetic.lines_per_cpu_second,
              criteo_json.c_str());
  return 0;
}
