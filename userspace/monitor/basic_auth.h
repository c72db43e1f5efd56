// HTTP basic authentication against bcrypt hashes (the web config's
// basic_auth_users), verified by libxcrypt's crypt(3): gpunoise does no
// cryptography of its own.
//
// bcrypt is slow on purpose (cost 10 is ~50-100 ms of one CPU), so a
// scraper that sends the same right password every 15 s would cost a
// small node a little CPU each time and many clients could starve it.
// Credentials that verified once are remembered (by a SHA-256 of user,
// password and hash, never the password itself), so a returning scraper
// costs one hash lookup; only one bcrypt runs at a time, so a flood of
// wrong passwords uses at most one CPU and never delays a cached scraper.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace gpunoise::monitor {

class BasicAuth {
 public:
  using Users = std::map<std::string, std::string, std::less<>>;
  explicit BasicAuth(Users users);

  enum class Verdict { kOk, kNoCredentials, kWrong };
  // `authorization` is the request's Authorization header ("" if none).
  Verdict Check(std::string_view authorization);

  // How many times crypt(3) ran (tests: the cache works).
  uint64_t bcrypt_runs() const { return bcrypt_runs_.load(); }

  // Public for testing: "Basic dXNlcjpwYXNz" -> user, password.
  static bool DecodeHeader(std::string_view authorization, std::string* user, std::string* password);

 private:
  using Digest = std::array<unsigned char, 32>;
  static constexpr size_t kMaxCached = 64;
  bool Bcrypt(std::string_view password, const std::string& hash);

  const Users users_;
  std::string dummy_hash_;  // unknown users cost a bcrypt too (no user probing by timing)
  std::mutex cache_mu_;
  std::set<Digest> verified_;
  std::mutex bcrypt_mu_;  // one bcrypt at a time
  std::atomic<uint64_t> bcrypt_runs_{0};
};

}  // namespace gpunoise::monitor
