#include "monitor/basic_auth.h"

#include <gtest/gtest.h>

#include <openssl/evp.h>

#include "integration/support/test_pki.h"

namespace gpunoise::monitor {
namespace {

std::string Header(const std::string& user, const std::string& password) {
  std::string plain = user + ":" + password;
  std::string out(4 * ((plain.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(plain.data()),
                          static_cast<int>(plain.size()));
  out.resize(static_cast<size_t>(n));
  return "Basic " + out;
}

TEST(BasicAuth, DecodesTheHeader) {
  std::string user, password;
  ASSERT_TRUE(BasicAuth::DecodeHeader("Basic YWxpY2U6czNjcjN0OndpdGg6Y29sb25z", &user, &password));
  EXPECT_EQ(user, "alice");
  EXPECT_EQ(password, "s3cr3t:with:colons") << "only the first ':' splits";
  ASSERT_TRUE(BasicAuth::DecodeHeader("basic YTpi", &user, &password));
  EXPECT_EQ(user + "/" + password, "a/b");
  ASSERT_TRUE(BasicAuth::DecodeHeader(Header("bob", "x"), &user, &password));  // padded "Ym9iOng="
  EXPECT_EQ(user + "/" + password, "bob/x");
  EXPECT_FALSE(BasicAuth::DecodeHeader("Bearer abc", &user, &password));
  EXPECT_FALSE(BasicAuth::DecodeHeader("Basic !!!!", &user, &password));
  EXPECT_FALSE(BasicAuth::DecodeHeader("Basic YWxpY2U=", &user, &password)) << "no colon";
  EXPECT_FALSE(BasicAuth::DecodeHeader("Basic abc", &user, &password)) << "not a multiple of 4";
}

// A published bcrypt test vector (OpenBSD's and jBCrypt's tests: "U*U"
// at cost 5), so the check does not rest on hashes libxcrypt made itself.
TEST(BasicAuth, LibxcryptVerifiesAPublishedBcryptVector) {
  BasicAuth auth(BasicAuth::Users{{"u", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"}});
  EXPECT_EQ(auth.Check(Header("u", "U*U")), BasicAuth::Verdict::kOk);
  EXPECT_EQ(auth.Check(Header("u", "U*V")), BasicAuth::Verdict::kWrong);
}

// Made by Apache's `htpasswd -nbBC 10 prometheus scrape-s3cret` (Debian's
// apache2-utils) on the development machine: the $2y$ hashes operators
// paste into web configs verify.
TEST(BasicAuth, AnHtpasswdHashVerifies) {
  BasicAuth auth(BasicAuth::Users{{"prometheus", "$2y$10$3tPIsiRRVpvh1oIeY5aW6enYbqO0Yfi339QxHOBeEKTjr7kiduULy"}});
  EXPECT_EQ(auth.Check(Header("prometheus", "scrape-s3cret")), BasicAuth::Verdict::kOk);
  EXPECT_EQ(auth.Check(Header("prometheus", "scrape-s3cret ")), BasicAuth::Verdict::kWrong);
}

// htpasswd -B writes $2y$, Go's bcrypt and libxcrypt's default $2b$: the
// same hash under either prefix verifies.
TEST(BasicAuth, TwoYAndTwoBPrefixesBothVerify) {
  std::string b = testing::BcryptHash("hunter2", 4);
  ASSERT_EQ(b.substr(0, 4), "$2b$");
  std::string y = b;
  y[2] = 'y';
  BasicAuth auth(BasicAuth::Users{{"b", b}, {"y", y}});
  EXPECT_EQ(auth.Check(Header("b", "hunter2")), BasicAuth::Verdict::kOk);
  EXPECT_EQ(auth.Check(Header("y", "hunter2")), BasicAuth::Verdict::kOk);
  EXPECT_EQ(auth.Check(Header("y", "hunter3")), BasicAuth::Verdict::kWrong);
}

TEST(BasicAuth, NoHeaderWrongPasswordAndUnknownUserAreRefused) {
  BasicAuth auth(BasicAuth::Users{{"prometheus", testing::BcryptHash("right", 4)}});
  EXPECT_EQ(auth.Check(""), BasicAuth::Verdict::kNoCredentials);
  EXPECT_EQ(auth.Check(Header("prometheus", "wrong")), BasicAuth::Verdict::kWrong);
  EXPECT_EQ(auth.Check(Header("mallory", "right")), BasicAuth::Verdict::kWrong);
  EXPECT_EQ(auth.Check(Header("prometheus", "right")), BasicAuth::Verdict::kOk);
}

TEST(BasicAuth, VerifiedCredentialsAreCachedSoBcryptRunsOnce) {
  BasicAuth auth(BasicAuth::Users{{"prometheus", testing::BcryptHash("right", 4)}});
  uint64_t start = auth.bcrypt_runs();
  for (int i = 0; i < 50; ++i) ASSERT_EQ(auth.Check(Header("prometheus", "right")), BasicAuth::Verdict::kOk);
  EXPECT_EQ(auth.bcrypt_runs() - start, 1u) << "a returning scraper costs one lookup, not a bcrypt";
  // A wrong password is never cached as right, and costs a bcrypt each time.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(auth.Check(Header("prometheus", "wrong")), BasicAuth::Verdict::kWrong);
  EXPECT_EQ(auth.bcrypt_runs() - start, 4u);
  // An unknown user costs a bcrypt too (no probing for names by timing).
  EXPECT_EQ(auth.Check(Header("nobody", "right")), BasicAuth::Verdict::kWrong);
  EXPECT_EQ(auth.bcrypt_runs() - start, 5u);
}

}  // namespace
}  // namespace gpunoise::monitor
