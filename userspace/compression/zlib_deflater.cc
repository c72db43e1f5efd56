#include "compression/zlib_deflater.h"

#include <zlib.h>

#include <cstdint>

namespace gpunoise::compression {

struct ZlibDeflater::Stream {
  z_stream z{};
  bool initialised = false;

  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (initialised) deflateEnd(&z);
  }
};

// static
Result<ZlibDeflater> ZlibDeflater::Create(int level) {
  if (level < Z_BEST_SPEED || level > Z_BEST_COMPRESSION)
    return MakeError("zlib level {} is out of range ({} to {})", level, Z_BEST_SPEED, Z_BEST_COMPRESSION);
  auto stream = std::make_unique<Stream>();
  int rc = deflateInit(&stream->z, level);
  if (rc != Z_OK) return MakeError("failed to set up zlib compression: {}", zError(rc));
  stream->initialised = true;
  return ZlibDeflater(std::move(stream), level);
}

ZlibDeflater::ZlibDeflater(std::unique_ptr<Stream> stream, int level)
    : stream_(std::move(stream)), level_(level) {}
ZlibDeflater::ZlibDeflater(ZlibDeflater&&) noexcept = default;
ZlibDeflater& ZlibDeflater::operator=(ZlibDeflater&&) noexcept = default;
ZlibDeflater::~ZlibDeflater() = default;

Status ZlibDeflater::Compress(std::string_view in, std::string* out) {
  if (!stream_) return MakeError("failed to compress: the deflater was moved from");
  if (in.size() > UINT32_MAX) return MakeError("failed to compress {} bytes: too large for one block", in.size());
  z_stream& z = stream_->z;
  int rc = deflateReset(&z);
  if (rc != Z_OK) return MakeError("failed to reset the zlib stream: {}", zError(rc));
  // deflateBound is large enough for one Z_FINISH call to finish the stream.
  uLong bound = deflateBound(&z, static_cast<uLong>(in.size()));
  size_t start = out->size();
  out->resize(start + bound);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out->data() + start);
  z.avail_out = static_cast<uInt>(bound);
  rc = deflate(&z, Z_FINISH);
  if (rc != Z_STREAM_END) {
    out->resize(start);
    return MakeError("failed to compress a block: {}", z.msg ? z.msg : zError(rc));
  }
  out->resize(start + (bound - z.avail_out));
  return OkStatus();
}

}  // namespace gpunoise::compression
