#include "checkpoint/file_image.hpp"

#include <algorithm>
#include <cstring>

#include "checkpoint/crc32c.hpp"
#include "model/check.hpp"

namespace checkpoint {

file_image::file_image(std::string name, const file_header& header,
                       const std::vector<const float*>& data)
  : name_(std::move(name)) {
  add_arrays(header, data);
}

file_image::file_image(std::string name, const file_header& header,
                       std::vector<std::vector<float>> owned)
  : name_(std::move(name)), owned_(std::move(owned)) {
  std::vector<const float*> data;
  for (std::size_t i = 0; i < owned_.size(); ++i) {
    SS_CHECK(i < header.arrays.size() && owned_[i].size() == header.arrays[i].count,
             "file_image: an owned array of another length than its header's");
    data.push_back(owned_[i].data());
  }
  add_arrays(header, data);
}

void file_image::add_arrays(const file_header& header, const std::vector<const float*>& data) {
  SS_CHECK(data.size() == header.arrays.size(), "file_image: one buffer per array");
  head_ = array_header_bytes(header);
  size_ = head_.size();
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::uint64_t bytes = header.arrays[i].count * sizeof(float);
    arrays_.push_back({reinterpret_cast<const char*>(data[i]), bytes});
    size_ += bytes;
  }
}

void file_image::read(std::uint64_t offset, void* out, std::size_t n) const {
  SS_CHECK(offset <= size_ && n <= size_ - offset, "file_image::read past the end");
  auto* dst = static_cast<char*>(out);
  auto take = [&](const char* src, std::uint64_t bytes) { // one part, from `offset` into it
    if (n == 0 || offset >= bytes) {
      offset -= std::min(offset, bytes);
      return;
    }
    const std::size_t k = std::size_t(std::min<std::uint64_t>(n, bytes - offset));
    std::memcpy(dst, src + offset, k);
    dst += k;
    n -= k;
    offset = 0;
  };
  take(head_.data(), head_.size());
  for (const auto& a : arrays_)
    take(a.data, a.bytes);
}

std::uint32_t file_image::crc32c() const {
  std::uint32_t crc = crc32c_extend(0, head_.data(), head_.size());
  for (const auto& a : arrays_)
    crc = crc32c_extend(crc, a.data, std::size_t(a.bytes));
  return crc;
}

} // namespace checkpoint
