#include "compression/zlib_deflater.h"

#include <libdeflate.h>

namespace gpunoise::compression {

void ZlibDeflater::CompressorFree::operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }

// static
Result<ZlibDeflater> ZlibDeflater::Create(int level) {
  if (level < 1 || level > 9) return MakeError("zlib level {} is out of range (1 to 9)", level);
  libdeflate_compressor* compressor = libdeflate_alloc_compressor(level);
  if (!compressor) return MakeError("failed to set up zlib compression: out of memory");
  return ZlibDeflater(compressor, level);
}

ZlibDeflater::ZlibDeflater(libdeflate_compressor* compressor, int level)
    : compressor_(compressor), level_(level) {}
ZlibDeflater::ZlibDeflater(ZlibDeflater&&) noexcept = default;
ZlibDeflater& ZlibDeflater::operator=(ZlibDeflater&&) noexcept = default;
ZlibDeflater::~ZlibDeflater() = default;

Status ZlibDeflater::Compress(std::string_view in, std::string* out) {
  if (!compressor_) return MakeError("failed to compress: the deflater was moved from");
  // The bound is large enough for any input, so 0 below means a failure.
  size_t bound = libdeflate_zlib_compress_bound(compressor_.get(), in.size());
  size_t start = out->size();
  out->resize(start + bound);
  size_t written = libdeflate_zlib_compress(compressor_.get(), in.data(), in.size(), out->data() + start, bound);
  if (written == 0) {
    out->resize(start);
    return MakeError("failed to compress a block of {} bytes", in.size());
  }
  out->resize(start + written);
  return OkStatus();
}

}  // namespace gpunoise::compression
