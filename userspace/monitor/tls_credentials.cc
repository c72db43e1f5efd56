#include "monitor/tls_credentials.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <cstdio>

#include "common/log.h"

namespace gpunoise::monitor {

namespace {

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
using UniqueFile = std::unique_ptr<FILE, FileCloser>;

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (!e) return "no PEM data found";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

}  // namespace

struct TlsCredentials::Material {
  X509* leaf = nullptr;
  STACK_OF(X509)* chain = nullptr;  // intermediates after the leaf
  EVP_PKEY* key = nullptr;
  X509_STORE* client_cas = nullptr;
  STACK_OF(X509_NAME)* client_ca_names = nullptr;
  ~Material() {
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
    X509_STORE_free(client_cas);
    sk_X509_NAME_pop_free(client_ca_names, X509_NAME_free);
  }
};

namespace {

Result<std::shared_ptr<TlsCredentials::Material>> LoadMaterial(const TlsServerConfig& c) {
  ERR_clear_error();
  auto m = std::make_shared<TlsCredentials::Material>();
  {
    UniqueFile f(std::fopen(c.cert_file.c_str(), "re"));
    if (!f) return MakeError("failed to read cert_file {}: {}", c.cert_file, std::strerror(errno));
    m->leaf = PEM_read_X509(f.get(), nullptr, nullptr, nullptr);
    if (!m->leaf) return MakeError("cert_file {}: not a PEM certificate ({})", c.cert_file, OpenSslError());
    m->chain = sk_X509_new_null();
    while (X509* extra = PEM_read_X509(f.get(), nullptr, nullptr, nullptr)) sk_X509_push(m->chain, extra);
    ERR_clear_error();  // the end of the file reads as an error
  }
  {
    UniqueFile f(std::fopen(c.key_file.c_str(), "re"));
    if (!f) return MakeError("failed to read key_file {}: {}", c.key_file, std::strerror(errno));
    m->key = PEM_read_PrivateKey(f.get(), nullptr, nullptr, nullptr);
    if (!m->key) return MakeError("key_file {}: not a PEM private key ({})", c.key_file, OpenSslError());
  }
  if (X509_check_private_key(m->leaf, m->key) != 1)
    return MakeError("key_file {} does not belong to cert_file {}", c.key_file, c.cert_file);
  if (!c.client_ca_file.empty()) {
    m->client_cas = X509_STORE_new();
    if (X509_STORE_load_file(m->client_cas, c.client_ca_file.c_str()) != 1)
      return MakeError("client_ca_file {}: not a PEM certificate ({})", c.client_ca_file, OpenSslError());
    m->client_ca_names = SSL_load_client_CA_file(c.client_ca_file.c_str());
    ERR_clear_error();
  }
  return m;
}


// RequestClientCert and RequireAnyClientCert take any certificate (Go's
// meaning): the chain is not checked.
int AcceptAnyCertificate(int, X509_STORE_CTX*) { return 1; }

}  // namespace

FileStamp FileStampOf(const std::string& path) {
  struct stat st {};
  FileStamp s;
  if (path.empty() || stat(path.c_str(), &st) != 0) return s;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
  s.ctime_ns = st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec;
  return s;
}

Result<std::unique_ptr<TlsCredentials>> TlsCredentials::Load(const TlsServerConfig& config) {
  std::unique_ptr<TlsCredentials> t(new TlsCredentials(config));
  t->stamps_ = t->Stamps();
  GN_ASSIGN_OR_RETURN(auto material, LoadMaterial(config));
  t->material_ = std::move(material);
  t->loads_ = 1;
  return t;
}

TlsCredentials::~TlsCredentials() = default;

std::vector<FileStamp> TlsCredentials::Stamps() const {
  return {FileStampOf(config_.cert_file), FileStampOf(config_.key_file), FileStampOf(config_.client_ca_file)};
}

uint64_t TlsCredentials::loads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loads_;
}

std::shared_ptr<const TlsCredentials::Material> TlsCredentials::Current() {
  std::vector<FileStamp> now = Stamps();
  std::lock_guard<std::mutex> lock(mu_);
  if (now != stamps_ && now != failed_stamps_) {
    auto fresh = LoadMaterial(config_);
    if (fresh.ok()) {
      material_ = std::move(fresh).value();
      stamps_ = now;
      failed_stamps_.clear();
      ++loads_;
      log::Info("monitor: TLS certificate {} reloaded", config_.cert_file);
    } else {
      // Often the middle of a rotation (certificate written, key not yet):
      // the next change is tried again.
      failed_stamps_ = now;
      log::Warning("monitor: keeping the previous TLS certificate: {}", fresh.error().message);
    }
  }
  return material_;
}

int TlsCredentials::OnCertificate(SSL* ssl, void* arg) {
  auto* self = static_cast<TlsCredentials*>(arg);
  std::shared_ptr<const Material> m = self->Current();
  if (!m) return 0;
  // SSL_use_cert_and_key takes its own references: the material may be
  // replaced by the next handshake while this one goes on.
  if (SSL_use_cert_and_key(ssl, m->leaf, m->key, m->chain, 1) != 1) return 0;
  if (m->client_cas) {
    SSL_set1_verify_cert_store(ssl, m->client_cas);
    if (m->client_ca_names) SSL_set_client_CA_list(ssl, SSL_dup_CA_list(m->client_ca_names));
  }
  return 1;
}

bool TlsCredentials::Configure(SSL_CTX* ctx) {
  SSL_CTX_set_min_proto_version(ctx, config_.min_version ? config_.min_version : TLS1_2_VERSION);
  if (config_.max_version) SSL_CTX_set_max_proto_version(ctx, config_.max_version);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Needed for session resumption when client certificates are checked.
  static const unsigned char kContext[] = "gpunoise-monitor";
  SSL_CTX_set_session_id_context(ctx, kContext, sizeof(kContext) - 1);
  switch (config_.client_auth) {
    case ClientAuth::kNoClientCert: SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr); break;
    case ClientAuth::kRequestClientCert: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, AcceptAnyCertificate); break;
    case ClientAuth::kRequireAnyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, AcceptAnyCertificate);
      break;
    case ClientAuth::kVerifyClientCertIfGiven: SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr); break;
    case ClientAuth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  SSL_CTX_set_cert_cb(ctx, &TlsCredentials::OnCertificate, this);
  return true;
}

}  // namespace gpunoise::monitor
