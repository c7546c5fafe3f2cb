#include "checkpoint/array_file.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include <cereal/archives/portable_binary.hpp>

namespace checkpoint {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "checkpoint arrays are raw little-endian floats");

namespace {

constexpr char magic[8] = {'S', 'S', 'C', 'K', 'P', 'T', '1', '\n'};
constexpr std::uint64_t max_header_bytes = 1 << 20;
constexpr std::uint64_t max_header_items = 1024; // attrs, arrays
constexpr std::uint64_t max_name_bytes = 256;

// Cereal's own string/vector loaders resize to a length read from the file
// before reading it (a damaged header could ask for exabytes), so the
// header's parts are (de)serialised here with bounded lengths.
template <class Archive>
void save_text(Archive& a, const std::string& s) {
  a(cereal::make_size_tag(static_cast<cereal::size_type>(s.size())));
  a(cereal::binary_data(s.data(), s.size()));
}

template <class Archive>
void load_text(Archive& a, std::string& s) {
  cereal::size_type n = 0;
  a(cereal::make_size_tag(n));
  if (n > max_name_bytes)
    throw cereal::Exception("a name of " + std::to_string(n) + " bytes (at most " +
                            std::to_string(max_name_bytes) + ")");
  s.resize(std::size_t(n));
  a(cereal::binary_data(s.data(), s.size()));
}

template <class Archive>
cereal::size_type load_count(Archive& a, const char* what) {
  cereal::size_type n = 0;
  a(cereal::make_size_tag(n));
  if (n > max_header_items)
    throw cereal::Exception(std::to_string(n) + " " + what + " (at most " +
                            std::to_string(max_header_items) + ")");
  return n;
}

} // namespace

template <class Archive>
void save(Archive& a, const file_header& h) {
  a(h.version);
  save_text(a, h.kind);
  a(cereal::make_size_tag(static_cast<cereal::size_type>(h.attrs.size())));
  for (const auto& [k, v] : h.attrs) {
    save_text(a, k);
    a(v);
  }
  a(cereal::make_size_tag(static_cast<cereal::size_type>(h.arrays.size())));
  for (const auto& x : h.arrays) {
    save_text(a, x.name);
    a(x.count);
  }
}

template <class Archive>
void load(Archive& a, file_header& h) {
  a(h.version);
  load_text(a, h.kind);
  h.attrs.clear();
  for (auto n = load_count(a, "attributes"); n > 0; --n) {
    std::string k;
    std::uint64_t v = 0;
    load_text(a, k);
    a(v);
    h.attrs[k] = v;
  }
  h.arrays.clear();
  for (auto n = load_count(a, "arrays"); n > 0; --n) {
    array_spec x;
    load_text(a, x.name);
    a(x.count);
    h.arrays.push_back(std::move(x));
  }
}

std::uint64_t file_header::attr(const std::string& key) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? 0 : it->second;
}

std::string array_header_bytes(const file_header& header) {
  std::ostringstream hs;
  {
    cereal::PortableBinaryOutputArchive a(hs);
    a(header);
  }
  const std::string h = hs.str();
  const std::uint64_t hlen = h.size();
  std::string out(magic, sizeof magic);
  out.append(reinterpret_cast<const char*>(&hlen), sizeof hlen);
  return out + h;
}

bool write_array_header(file_sink& f, const file_header& header, std::string* err) {
  const std::string bytes = array_header_bytes(header);
  return f.write(bytes.data(), bytes.size(), err);
}

bool write_array_file(const std::string& path, const file_header& header,
                      const std::vector<const float*>& data, file_info* info, std::string* err) {
  if (data.size() != header.arrays.size()) {
    if (err)
      *err = "write_array_file '" + path + "': " + std::to_string(data.size()) +
             " arrays for a header of " + std::to_string(header.arrays.size());
    return false;
  }
  file_sink f;
  if (!f.open(path, err) || !write_array_header(f, header, err))
    return false;
  for (std::size_t i = 0; i < data.size(); ++i)
    if (!f.write(data[i], header.arrays[i].count * sizeof(float), err))
      return false;
  if (!f.close(err))
    return false;
  if (info) {
    info->bytes = f.bytes();
    info->crc32c = f.crc();
  }
  return true;
}

bool array_file_reader::open(const std::string& path, const std::string& kind, std::string* err) {
  if (!src_.open(path, err))
    return false;
  char m[8];
  std::uint64_t hlen = 0;
  if (!src_.read(m, sizeof m, err))
    return false;
  if (std::memcmp(m, magic, sizeof m) != 0) {
    if (err)
      *err = "'" + path + "' is not a shadowsync checkpoint file (bad magic; expected 'SSCKPT1')";
    return false;
  }
  if (!src_.read(&hlen, sizeof hlen, err))
    return false;
  if (hlen > max_header_bytes || hlen > src_.size() - src_.offset()) {
    if (err)
      *err = "'" + path + "': header length " + std::to_string(hlen) + " exceeds the file (" +
             std::to_string(src_.size()) + " bytes) or 1 MiB";
    return false;
  }
  std::string h(hlen, '\0');
  if (!src_.read(h.data(), h.size(), err))
    return false;
  try {
    std::istringstream hs(h);
    cereal::PortableBinaryInputArchive a(hs);
    a(header_);
  } catch (const std::exception& e) {
    if (err)
      *err = "'" + path + "': unreadable header (" + e.what() + ")";
    return false;
  }
  if (header_.version != file_format_version) {
    if (err)
      *err = "'" + path + "': file format version " + std::to_string(header_.version) +
             ", this build reads version " + std::to_string(file_format_version);
    return false;
  }
  if (header_.kind != kind) {
    if (err)
      *err = "'" + path + "' holds '" + header_.kind + "', expected '" + kind + "'";
    return false;
  }
  std::uint64_t total = 0;
  for (const auto& a : header_.arrays) {
    if (a.count > (src_.size() - src_.offset()) / sizeof(float) - total) {
      if (err)
        *err = "'" + path + "' is truncated: " + std::to_string(src_.size()) +
               " bytes, too few for its arrays";
      return false;
    }
    total += a.count;
  }
  if (total * sizeof(float) != src_.size() - src_.offset()) {
    if (err)
      *err = "'" + path + "': " + std::to_string(src_.size() - src_.offset() - total * sizeof(float)) +
             " bytes after the last array";
    return false;
  }
  next_ = 0;
  return true;
}

bool array_file_reader::expect_arrays(const std::vector<array_spec>& want,
                                      const std::string& whom, std::string* err) const {
  const auto& got = header_.arrays;
  for (std::size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    std::string why;
    if (i >= got.size())
      why = "has no array '" + want[i].name + "' (" + whom + " needs " +
            std::to_string(want[i].count) + " floats)";
    else if (i >= want.size())
      why = "has an extra array '" + got[i].name + "' (" + whom + " needs " +
            std::to_string(want.size()) + " arrays)";
    else if (got[i].name != want[i].name)
      why = "has array '" + got[i].name + "' where '" + want[i].name + "' belongs";
    else if (got[i].count != want[i].count)
      why = "array '" + got[i].name + "' has " + std::to_string(got[i].count) + " floats, " +
            whom + " needs " + std::to_string(want[i].count);
    if (!why.empty()) {
      if (err)
        *err = "'" + path() + "': " + why;
      return false;
    }
  }
  return true;
}

bool array_file_reader::next_array(const std::string& name, std::uint64_t count,
                                   std::string* err) {
  if (next_ >= header_.arrays.size() || header_.arrays[next_].name != name) {
    if (err)
      *err = "'" + path() + "': expected array '" + name + "' next, the file has " +
             (next_ < header_.arrays.size() ? "'" + header_.arrays[next_].name + "'" : "no more");
    return false;
  }
  if (header_.arrays[next_].count != count) {
    if (err)
      *err = "'" + path() + "': array '" + name + "' has " +
             std::to_string(header_.arrays[next_].count) + " floats, the model needs " +
             std::to_string(count);
    return false;
  }
  ++next_;
  return true;
}

bool array_file_reader::read(const std::string& name, float* dst, std::uint64_t count,
                             std::string* err) {
  return next_array(name, count, err) && src_.read(dst, count * sizeof(float), err);
}

bool array_file_reader::read_all(const std::vector<array_spec>& want,
                                 std::vector<std::vector<float>>* out, std::string* err) {
  out->assign(want.size(), {});
  for (std::size_t i = 0; i < want.size(); ++i) {
    (*out)[i].resize(want[i].count);
    if (!read(want[i].name, (*out)[i].data(), want[i].count, err))
      return false;
  }
  return true;
}

bool array_file_reader::finish(std::uint32_t* crc, std::string* err) {
  if (next_ != header_.arrays.size() || src_.offset() != src_.size()) {
    if (err)
      *err = "'" + path() + "': " + std::to_string(header_.arrays.size() - next_) +
             " arrays left unread";
    return false;
  }
  *crc = src_.crc();
  return true;
}

} // namespace checkpoint
