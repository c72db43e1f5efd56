// The monitor's TLS material (certificate chain, key, client CA) from the
// web config's files, re-read when a file changes, so a certificate that
// cert-manager or an operator rotates is served from the next handshake on
// with no restart. OpenSSL does the cryptography; this class only decides
// which certificate each handshake gets.
//
// The check is a stat() of three files per handshake (Kubernetes secret
// volumes swap a symlink, which stat follows). A new file that does not
// load (half-written, key not matching the certificate) leaves the old
// material in use, with one warning per change.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "monitor/web_config.h"

namespace gpunoise::monitor {

// What says a file changed: a new inode (a rename or a symlink swap), a
// new size or a new modification or change time. A missing file stamps 0.
struct FileStamp {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
FileStamp FileStampOf(const std::string& path);

class TlsCredentials {
 public:
  // Loads the files now: a bad certificate is an error before anything
  // else starts.
  static Result<std::unique_ptr<TlsCredentials>> Load(const TlsServerConfig& config);
  ~TlsCredentials();

  // Sets protocol versions, client-certificate policy and the per-handshake
  // certificate callback on a server context. `this` must outlive it.
  bool Configure(SSL_CTX* ctx);

  // How many times the files were loaded (1 at start; tests).
  uint64_t loads() const;

  struct Material;

 private:
  explicit TlsCredentials(TlsServerConfig config) : config_(std::move(config)) {}
  std::vector<FileStamp> Stamps() const;
  std::shared_ptr<const Material> Current();  // reloads first if a file changed
  static int OnCertificate(SSL* ssl, void* self);

  const TlsServerConfig config_;
  mutable std::mutex mu_;
  std::shared_ptr<const Material> material_;
  std::vector<FileStamp> stamps_;
  std::vector<FileStamp> failed_stamps_;  // the change already warned about
  uint64_t loads_ = 0;
};

}  // namespace gpunoise::monitor
