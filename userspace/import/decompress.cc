#include "import/decompress.h"

#include <zlib.h>

#ifdef GPUNOISE_HAVE_ZSTD
#include <zstd.h>
#endif

namespace gpunoise::import {
namespace {
// A compressed_packets payload holds under 512 KiB of packets (Perfetto's own
// limit); refuse to inflate anything far beyond that.
constexpr size_t kMaxInflated = 256u << 20;
}  // namespace

Status InflateZlib(std::span<const uint8_t> in, std::vector<uint8_t>* out) {
  out->clear();
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return MakeError("zlib initialisation failed");
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    size_t used = out->size();
    if (used >= kMaxInflated) {
      inflateEnd(&zs);
      return MakeError("inflates to more than {} bytes", kMaxInflated);
    }
    out->resize(used + std::max<size_t>(in.size() * 4, 64 << 10));
    zs.next_out = out->data() + used;
    zs.avail_out = static_cast<uInt>(out->size() - used);
    rc = inflate(&zs, Z_NO_FLUSH);
    out->resize(out->size() - zs.avail_out);
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK) {
      inflateEnd(&zs);
      return MakeError("deflate stream is corrupt ({})", zs.msg ? zs.msg : "zlib error");
    }
    if (zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return MakeError("deflate stream is cut short");
    }
  }
  inflateEnd(&zs);
  return OkStatus();
}

Status InflateZstd(std::span<const uint8_t> in, std::vector<uint8_t>* out) {
#ifdef GPUNOISE_HAVE_ZSTD
  out->clear();
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  if (!ctx) return MakeError("zstd initialisation failed");
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  size_t rc = 1;
  while (input.pos < input.size || rc != 0) {
    size_t used = out->size();
    if (used >= kMaxInflated) {
      ZSTD_freeDCtx(ctx);
      return MakeError("inflates to more than {} bytes", kMaxInflated);
    }
    out->resize(used + std::max<size_t>(in.size() * 4, 64 << 10));
    ZSTD_outBuffer output{out->data() + used, out->size() - used, 0};
    rc = ZSTD_decompressStream(ctx, &output, &input);
    out->resize(used + output.pos);
    if (ZSTD_isError(rc)) {
      ZSTD_freeDCtx(ctx);
      return MakeError("zstd stream is corrupt ({})", ZSTD_getErrorName(rc));
    }
    if (input.pos == input.size && rc != 0 && output.pos == 0) {
      ZSTD_freeDCtx(ctx);
      return MakeError("zstd stream is cut short");
    }
  }
  ZSTD_freeDCtx(ctx);
  return OkStatus();
#else
  (void)in;
  (void)out;
  return MakeError("this build has no zstd support");
#endif
}

}  // namespace gpunoise::import
