#pragma once
// Raw-blob payloads. CAF 0.17 serialises std::vector<float> one element at a
// time (~50-70 MB/s on loopback); these wrappers write the element count and
// then the bytes in one apply_raw call (~700-900 MB/s). The bytes are the
// host's representation: all peers must be little-endian (x86-64, aarch64),
// which the multi-node handshake checks.
//
// Wire format (inspect) and checkpoint format (cereal) are separate.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/sec.hpp>
#include <caf/serializer.hpp>

namespace messages {

template <class T>
struct raw_blob {
  std::vector<T> values;

  raw_blob() = default;
  explicit raw_blob(std::vector<T> v) : values(std::move(v)) {}
  std::size_t size() const { return values.size(); }
  std::size_t bytes() const { return values.size() * sizeof(T); }
  T* data() { return values.data(); }
  const T* data() const { return values.data(); }
  friend bool operator==(const raw_blob& a, const raw_blob& b) { return a.values == b.values; }
};

using float_blob = raw_blob<float>;
using key_blob = raw_blob<std::uint64_t>;
using byte_blob = raw_blob<std::uint8_t>;

template <class T>
caf::error inspect(caf::serializer& f, raw_blob<T>& x) {
  std::uint64_t n = x.values.size();
  if (auto err = f(n))
    return err;
  return n ? f.apply_raw(n * sizeof(T), x.values.data()) : caf::error{};
}

template <class T>
caf::error inspect(caf::deserializer& f, raw_blob<T>& x) {
  std::uint64_t n = 0;
  if (auto err = f(n))
    return err;
  if (n > (std::uint64_t{1} << 34) / sizeof(T)) // 16 GiB: a corrupt or hostile length
    return caf::make_error(caf::sec::invalid_argument, "raw_blob length out of range");
  // From a byte buffer (BASP, the tests), the length must fit in what is
  // left: a 10-byte frame must not make this node allocate gigabytes.
  if (auto* bd = dynamic_cast<caf::binary_deserializer*>(&f))
    if (n * sizeof(T) > bd->remaining())
      return caf::make_error(caf::sec::end_of_stream, "raw_blob length beyond the message");
  x.values.resize(n);
  return n ? f.apply_raw(n * sizeof(T), x.values.data()) : caf::error{};
}

// Other inspectors (e.g. to_string): a short summary, not every element.
template <class Inspector, class T>
typename std::enable_if<!std::is_base_of<caf::serializer, Inspector>::value &&
                            !std::is_base_of<caf::deserializer, Inspector>::value,
                        typename Inspector::result_type>::type
inspect(Inspector& f, raw_blob<T>& x) {
  std::string summary = std::to_string(x.values.size()) + " values";
  return f(caf::meta::type_name("raw_blob"), summary);
}

// A double on the wire as its IEEE-754 bit pattern (8 bytes), bit-exact.
// CAF 0.17.6 encodes float and double with its own pack754, which never
// returns for +-infinity (the sender's thread spins forever: a diverging loss
// in a progress report would hang a node) and decodes subnormals and NaN to
// other values (found by tests/fuzz/messages_fuzz.cpp). Every double field of
// a message is written as f(..., bits(x.field), ...).
struct f64_bits {
  double* v;
};
inline f64_bits bits(double& v) { return f64_bits{&v}; }

inline caf::error inspect(caf::serializer& f, f64_bits& x) {
  std::uint64_t b = 0;
  std::memcpy(&b, x.v, sizeof b);
  return f(b);
}

inline caf::error inspect(caf::deserializer& f, f64_bits& x) {
  std::uint64_t b = 0;
  if (auto err = f(b))
    return err;
  std::memcpy(x.v, &b, sizeof b);
  return {};
}

template <class Inspector>
typename std::enable_if<!std::is_base_of<caf::serializer, Inspector>::value &&
                            !std::is_base_of<caf::deserializer, Inspector>::value,
                        typename Inspector::result_type>::type
inspect(Inspector& f, f64_bits& x) {
  return f(*x.v);
}

} // namespace messages
