#pragma once
// Internals of byte_stream.cpp: the decompressing streams (decoders.cpp).
// Each reads its compressed bytes from `in`, which it owns; a decoder that
// cannot start reports that at its first read().
#include <memory>
#include <string>

#include "data/byte_stream.hpp"
#include "data/raw_input.hpp"

namespace data::stream_detail {

std::unique_ptr<byte_stream> open_gzip(std::string path, std::unique_ptr<raw_input> in);
std::unique_ptr<byte_stream> open_zstd(std::string path, std::unique_ptr<raw_input> in);

} // namespace data::stream_detail
