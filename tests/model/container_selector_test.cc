#include "model/container_selector.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

ContainerIdentity Ctr(std::string id, std::string name, std::string pod, std::string ns) {
  ContainerIdentity c;
  c.container_id = std::move(id);
  c.container_name = std::move(name);
  c.pod_name = std::move(pod);
  c.pod_namespace = std::move(ns);
  return c;
}

std::optional<ContainerSelector> Parse(std::string_view spec) {
  std::string why;
  auto sel = ParseContainerSelector(spec, &why);
  EXPECT_TRUE(sel || !why.empty()) << spec;
  return sel;
}

TEST(ContainerSelector, TwelveToSixtyFourHexDigitsAreAnIdAnythingElseAName) {
  auto id = Parse("container:aaaa0f52b1c9");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->id_prefix, "aaaa0f52b1c9");
  EXPECT_TRUE(Parse("container:" + std::string(64, 'f'))->by_id());
  // Too short, too long, or not all hex: a name.
  EXPECT_EQ(Parse("container:aaaa")->name, "aaaa");
  EXPECT_FALSE(Parse("container:" + std::string(65, 'f'))->by_id());
  EXPECT_EQ(Parse("container:prep")->name, "prep");
  // A name of hex digits is named as one explicitly.
  auto hexname = Parse("container-name:deadbeefcafe");
  ASSERT_TRUE(hexname);
  EXPECT_FALSE(hexname->by_id());
  EXPECT_EQ(hexname->name, "deadbeefcafe");
  EXPECT_TRUE(Parse("container:deadbeefcafe")->by_id());
}

TEST(ContainerSelector, NameTakesItsPodAndNamespaceBeforeIt) {
  auto full = Parse("container:ml/data-loader-7f9c/prep");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->pod_namespace, "ml");
  EXPECT_EQ(full->pod_name, "data-loader-7f9c");
  EXPECT_EQ(full->name, "prep");
  EXPECT_EQ(full->Describe(), "container ml/data-loader-7f9c/prep");
  auto pod = Parse("container:data-loader-7f9c/prep");
  ASSERT_TRUE(pod);
  EXPECT_EQ(pod->pod_name, "data-loader-7f9c");
  EXPECT_TRUE(pod->pod_namespace.empty());
}

TEST(ContainerSelector, ValuesThatAreNeitherAreErrors) {
  std::string why;
  for (const char* bad : {"container:", "container:Prep", "container:a/b/c/d", "container:a//b", "container:x_y",
                          "container-name:", "pod:x"}) {
    why.clear();
    EXPECT_FALSE(ParseContainerSelector(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  EXPECT_TRUE(IsContainerSelector("container-name:x"));
  EXPECT_FALSE(IsContainerSelector("containers:x"));
}

TEST(ContainerSelector, MatchesByIdPrefixOrByNameWithinThePod) {
  const std::string id = "aaaa0f52b1c9" + std::string(52, '0');
  ContainerIdentity prep = Ctr(id, "prep", "data-loader-7f9c", "ml");
  ContainerIdentity other = Ctr(std::string(64, 'b'), "prep", "data-loader-9x", "dev");
  ContainerIdentity unnamed = Ctr(std::string(64, 'c'), "", "", "");
  EXPECT_TRUE(Parse("container:aaaa0f52b1c9")->Matches(prep));
  EXPECT_FALSE(Parse("container:aaaa0f52b1c9")->Matches(other));
  EXPECT_TRUE(Parse("container:prep")->Matches(prep));
  EXPECT_TRUE(Parse("container:prep")->Matches(other));  // every pod's "prep"
  EXPECT_FALSE(Parse("container:prep")->Matches(unnamed));
  EXPECT_TRUE(Parse("container:ml/data-loader-7f9c/prep")->Matches(prep));
  EXPECT_FALSE(Parse("container:ml/data-loader-7f9c/prep")->Matches(other));
  EXPECT_FALSE(Parse("container:dev/data-loader-7f9c/prep")->Matches(prep));
  // A name never matches an id, nor an id a name.
  EXPECT_FALSE(Parse("container-name:aaaa0f52b1c9")->Matches(prep));
  EXPECT_FALSE(Parse("container:cccccccccccc")->Matches(Ctr("", "cccccccccccc", "p", "n")));
}

}  // namespace
}  // namespace gpunoise::model
