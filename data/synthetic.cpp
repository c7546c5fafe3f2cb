#include "data/synthetic.hpp"

#include <cerrno>
#include <charconv>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace data {
namespace {

constexpr std::uint64_t tag_stream = 0x21;
constexpr std::size_t buffer_bytes = std::size_t{1} << 20;
constexpr std::uint64_t progress_every = 65536;

struct file_closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

bool fail(std::string* error, std::string msg) {
  if (error)
    *error = std::move(msg);
  return false;
}

} // namespace

synthetic_stream::synthetic_stream(const synthetic_options& options, const teacher& t)
    : teacher_(t), sampler_(options), rng_(hash_combine(options.seed, tag_stream)) {}

void synthetic_stream::next(synthetic_example* x, double* logit, int* label) {
  sampler_.draw(rng_, x);
  *logit = teacher_.logit(*x);
  *label = rng_.uniform() < sigmoid(*logit) ? 1 : 0;
}

void categorical_text(std::size_t column, std::uint32_t id, char out[8]) {
  static constexpr char hex[] = "0123456789abcdef";
  const auto key = static_cast<std::uint32_t>(splitmix64_finalize(column + 1));
  const std::uint32_t v = mix32(id ^ key);
  for (int i = 0; i < 8; ++i)
    out[i] = hex[(v >> (28 - 4 * i)) & 0xf];
}

std::size_t synthetic_line_bytes(const synthetic_options& o) {
  std::size_t n = synthetic_max_line_bytes;
  for (std::uint32_t k : o.bag_size)
    if (k > 0)
      n += 9 * std::size_t(o.bag_drawn ? 2 * k - 1 : k);
  return n;
}

char* format_synthetic_line(const synthetic_example& x, int label, char* out) {
  *out++ = label ? '1' : '0';
  for (std::size_t j = 0; j < synthetic_num_dense; ++j) {
    *out++ = '\t';
    if (!x.dense_missing[j])
      out = std::to_chars(out, out + 20, x.dense[j]).ptr;
  }
  for (std::size_t c = 0; c < synthetic_num_cat; ++c) {
    *out++ = '\t';
    if (x.bag_begin[c] != x.bag_begin[c + 1]) {
      for (std::uint32_t i = x.bag_begin[c]; i < x.bag_begin[c + 1]; ++i) {
        if (i != x.bag_begin[c])
          *out++ = '|';
        categorical_text(c, x.bag_ids[i], out);
        out += 8;
      }
    } else if (!x.cat_missing[c]) { // one id (a present multi-hot bag is never empty)
      categorical_text(c, x.cat[c], out);
      out += 8;
    }
  }
  *out++ = '\n';
  return out;
}

bool generate_synthetic(const synthetic_options& options, const std::string& out_path, generate_result* out,
                        std::string* error, const std::function<void(std::uint64_t)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (auto bad = validate(options); !bad.empty())
    return fail(error, "synthetic options: " + bad);
  // Written as OUT.tmp-PID and renamed at the end: a failed or interrupted
  // run leaves the old file (and its meta) as they were.
  if (struct stat st {}; ::stat(out_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return fail(error, "'" + out_path + "' exists and is not a regular file (expected a file path)");
  const std::string tmp_path = out_path + ".tmp-" + std::to_string(::getpid());
  std::unique_ptr<std::FILE, file_closer> file(std::fopen(tmp_path.c_str(), "wb"));
  if (!file)
    return fail(error, "cannot open '" + tmp_path + "' for writing: " + std::strerror(errno));
  struct tmp_remover {
    const std::string* path;
    ~tmp_remover() {
      if (path)
        std::remove(path->c_str());
    }
  } remover{&tmp_path};

  const teacher t(options);
  synthetic_stream stream(options, t);
  const std::size_t line_bytes = synthetic_line_bytes(options);
  std::vector<char> buffer(std::max(buffer_bytes, 4 * line_bytes));
  char* pos = buffer.data();
  char* const flush_at = buffer.data() + buffer.size() - line_bytes;
  auto flush = [&] {
    const auto n = static_cast<std::size_t>(pos - buffer.data());
    pos = buffer.data();
    return std::fwrite(buffer.data(), 1, n, file.get()) == n;
  };
  auto write_error = [&] { return fail(error, "cannot write '" + out_path + "': " + std::strerror(errno)); };

  // Sums over rows, in row order (tests recompute them in the same order).
  double positives = 0, sum_p = 0, sum_loss = 0, sum_entropy = 0;
  synthetic_example x;
  for (std::uint64_t row = 0; row < options.rows; ++row) {
    double z;
    int y;
    stream.next(&x, &z, &y);
    // -ln p = softplus(-z), -ln(1 - p) = softplus(z): exact for any z.
    const double p = sigmoid(z), loss_if_1 = softplus(-z), loss_if_0 = softplus(z);
    positives += y;
    sum_p += p;
    sum_loss += y ? loss_if_1 : loss_if_0;
    sum_entropy += p * loss_if_1 + (1.0 - p) * loss_if_0;
    pos = format_synthetic_line(x, y, pos);
    if (pos >= flush_at && !flush())
      return write_error();
    if (progress && (row + 1) % progress_every == 0)
      progress(row + 1);
  }
  if (!flush())
    return write_error();
  if (std::fclose(file.release()) != 0)
    return write_error();
  if (progress && options.rows % progress_every != 0)
    progress(options.rows);

  synthetic_meta meta;
  const double n = static_cast<double>(options.rows);
  meta.rows = options.rows;
  meta.positive_rate = positives / n;
  meta.mean_probability = sum_p / n;
  meta.bayes_logloss = sum_loss / n;
  meta.bayes_expected_logloss = sum_entropy / n;
  meta.base_entropy = binary_entropy(meta.positive_rate);
  meta.bayes_ne = meta.bayes_logloss / meta.base_entropy; // inf or NaN without both labels
  meta.teacher_bias = t.bias();
  meta.vocab_sizes = synthetic_vocab_sizes(options);
  meta.options = options;
  const std::string meta_tmp = meta_path_for(out_path) + ".tmp-" + std::to_string(::getpid());
  if (!write_meta(meta_tmp, meta, error)) {
    std::remove(meta_tmp.c_str());
    return false;
  }
  if (std::rename(tmp_path.c_str(), out_path.c_str()) != 0) {
    std::remove(meta_tmp.c_str());
    return fail(error, "cannot rename '" + tmp_path + "' to '" + out_path + "': " +
                         std::strerror(errno));
  }
  remover.path = nullptr;
  if (std::rename(meta_tmp.c_str(), meta_path_for(out_path).c_str()) != 0)
    return fail(error, "cannot rename '" + meta_tmp + "' to '" + meta_path_for(out_path) +
                         "': " + std::strerror(errno));
  if (out) {
    out->meta = std::move(meta);
    out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return true;
}

} // namespace data
