#include "monitor/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstring>
#include <memory>

#include "common/strings.h"

namespace gpunoise::monitor {

BasicAuth::BasicAuth(Users users) : users_(std::move(users)) {
  // A real bcrypt hash of nothing, at the cost of the first user's hash, so
  // that asking for a user who does not exist takes as long as a wrong
  // password for one who does.
  int cost = 10;
  if (!users_.empty()) {
    const std::string& h = users_.begin()->second;
    if (h.size() > 6) cost = (h[4] - '0') * 10 + (h[5] - '0');
  }
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (crypt_gensalt_rn("$2b$", cost, nullptr, 0, salt, sizeof(salt))) {
    auto data = std::make_unique<crypt_data>();
    if (const char* h = crypt_rn("", salt, data.get(), sizeof(*data)); h && h[0] == '$') dummy_hash_ = h;
  }
}

bool BasicAuth::DecodeHeader(std::string_view authorization, std::string* user, std::string* password) {
  authorization = Trim(authorization);
  if (authorization.size() < 6 || strncasecmp(authorization.data(), "basic ", 6) != 0) return false;
  std::string_view b64 = Trim(authorization.substr(6));
  if (b64.empty() || b64.size() % 4 != 0 || b64.size() > 4096) return false;
  std::string out(b64.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n < 0) return false;
  // EVP_DecodeBlock counts the padding as zero bytes; drop them.
  size_t pad = b64.back() == '=' ? (b64[b64.size() - 2] == '=' ? 2 : 1) : 0;
  out.resize(static_cast<size_t>(n) - pad);
  size_t colon = out.find(':');
  if (colon == std::string::npos) return false;
  *user = out.substr(0, colon);
  *password = out.substr(colon + 1);
  return true;
}

bool BasicAuth::Bcrypt(std::string_view password, const std::string& hash) {
  std::lock_guard<std::mutex> lock(bcrypt_mu_);
  bcrypt_runs_.fetch_add(1);
  auto data = std::make_unique<crypt_data>();
  std::string phrase(password);
  const char* out = crypt_rn(phrase.c_str(), hash.c_str(), data.get(), sizeof(*data));
  OPENSSL_cleanse(phrase.data(), phrase.size());
  // crypt_rn returns null (or "*0"/"*1") for a setting it cannot use.
  return out && std::strlen(out) == hash.size() && CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
}

BasicAuth::Verdict BasicAuth::Check(std::string_view authorization) {
  if (authorization.empty()) return Verdict::kNoCredentials;
  std::string user, password;
  if (!DecodeHeader(authorization, &user, &password)) return Verdict::kWrong;
  auto it = users_.find(user);
  if (it == users_.end()) {
    if (!dummy_hash_.empty()) Bcrypt(password, dummy_hash_);
    OPENSSL_cleanse(password.data(), password.size());
    return Verdict::kWrong;
  }
  std::string key = user + '\0' + password + '\0' + it->second;
  OPENSSL_cleanse(password.data(), password.size());
  Digest digest{};
  unsigned int len = 0;
  bool hashed = EVP_Digest(key.data(), key.size(), digest.data(), &len, EVP_sha256(), nullptr) == 1;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (hashed && verified_.count(digest)) {
      OPENSSL_cleanse(key.data(), key.size());
      return Verdict::kOk;
    }
  }
  bool ok = Bcrypt(std::string_view(key).substr(user.size() + 1, key.size() - user.size() - it->second.size() - 2),
                   it->second);
  OPENSSL_cleanse(key.data(), key.size());
  if (!ok) return Verdict::kWrong;
  if (hashed) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    // Bounded: a full cache starts again (right passwords cost one more
    // bcrypt each, never unbounded memory).
    if (verified_.size() >= kMaxCached) verified_.clear();
    verified_.insert(digest);
  }
  return Verdict::kOk;
}

}  // namespace gpunoise::monitor
