// Compresses independent blocks of bytes into complete zlib streams (RFC 1950:
// deflate with a zlib header and Adler-32), the form Perfetto's
// TracePacket.compressed_packets holds and its trace processor inflates.
//
// One z_stream is kept for every block and reset between them: deflateInit
// allocates about 256 KiB of state, which a recording that seals a block
// every few milliseconds should not allocate each time.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gpunoise::compression {

class ZlibDeflater {
 public:
  // `level`: zlib's 1 (fastest) to 9 (smallest).
  static Result<ZlibDeflater> Create(int level);

  ZlibDeflater(ZlibDeflater&&) noexcept;
  ZlibDeflater& operator=(ZlibDeflater&&) noexcept;
  ~ZlibDeflater();

  // Appends `in`, compressed as one complete zlib stream, to `out`.
  Status Compress(std::string_view in, std::string* out);

  int level() const { return level_; }

 private:
  struct Stream;  // the z_stream, at a fixed address: zlib's state points back to it
  explicit ZlibDeflater(std::unique_ptr<Stream> stream, int level);

  std::unique_ptr<Stream> stream_;
  int level_ = 0;
};

}  // namespace gpunoise::compression
