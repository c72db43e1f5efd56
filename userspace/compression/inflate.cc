#include "compression/inflate.h"

#include <zlib.h>

#include <algorithm>
#include <memory>

#ifdef GPUNOISE_HAVE_ZSTD
#include <zstd.h>
#endif

namespace gpunoise::compression {
namespace {

// A compressed_packets payload holds under 512 KiB of packets (Perfetto's own
// limit); refuse to inflate anything far beyond that.
constexpr size_t kMaxInflated = 256u << 20;

// Output grows by this much (or 4x the input, if larger) per step.
size_t GrowthStep(size_t in_size) { return std::max<size_t>(in_size * 4, 64 << 10); }

// A z_stream set up for inflating, ended on every path out.
class InflateStream {
 public:
  InflateStream() { ok_ = inflateInit(&z_) == Z_OK; }
  ~InflateStream() {
    if (ok_) inflateEnd(&z_);
  }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;

  bool ok() const { return ok_; }
  z_stream* get() { return &z_; }

 private:
  z_stream z_{};
  bool ok_ = false;
};

}  // namespace

Status InflateZlib(std::span<const uint8_t> in, std::vector<uint8_t>* out) {
  out->clear();
  if (in.size() > UINT32_MAX) return MakeError("deflate stream of {} bytes is too large", in.size());
  InflateStream stream;
  if (!stream.ok()) return MakeError("zlib initialisation failed");
  z_stream& zs = *stream.get();
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  while (true) {
    size_t used = out->size();
    if (used >= kMaxInflated) return MakeError("inflates to more than {} bytes", kMaxInflated);
    out->resize(used + GrowthStep(in.size()));
    zs.next_out = out->data() + used;
    zs.avail_out = static_cast<uInt>(out->size() - used);
    int rc = inflate(&zs, Z_NO_FLUSH);
    out->resize(out->size() - zs.avail_out);
    if (rc == Z_STREAM_END) return OkStatus();
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) return MakeError("deflate stream is cut short");
    if (rc != Z_OK) return MakeError("deflate stream is corrupt ({})", zs.msg ? zs.msg : "zlib error");
    if (zs.avail_in == 0 && zs.avail_out != 0) return MakeError("deflate stream is cut short");
  }
}

Status InflateZstd(std::span<const uint8_t> in, std::vector<uint8_t>* out) {
#ifdef GPUNOISE_HAVE_ZSTD
  out->clear();
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> ctx(ZSTD_createDCtx(), &ZSTD_freeDCtx);
  if (!ctx) return MakeError("zstd initialisation failed");
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  size_t rc = 1;
  while (input.pos < input.size || rc != 0) {
    size_t used = out->size();
    if (used >= kMaxInflated) return MakeError("inflates to more than {} bytes", kMaxInflated);
    out->resize(used + GrowthStep(in.size()));
    ZSTD_outBuffer output{out->data() + used, out->size() - used, 0};
    rc = ZSTD_decompressStream(ctx.get(), &output, &input);
    out->resize(used + output.pos);
    if (ZSTD_isError(rc)) return MakeError("zstd stream is corrupt ({})", ZSTD_getErrorName(rc));
    if (input.pos == input.size && rc != 0 && output.pos == 0)
      return MakeError("zstd stream is cut short");
  }
  return OkStatus();
#else
  (void)in;
  (void)out;
  return MakeError("this build has no zstd support");
#endif
}

}  // namespace gpunoise::compression
