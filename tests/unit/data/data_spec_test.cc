#include <cstdio>
#include <string>

#include "common/data/loaders.h"
#include "common/data/synthetic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/data/test_files.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::data {
namespace {

using ::testing::HasSubstr;

TEST(DataSpecTest, MovieLensPathFileOrDirectory) {
  const std::string dir = testing::MakeTempDir();
  const std::string file = testing::WriteFile(dir, "u.data", "1\t10\t3\t0\n2\t10\t4\t0\n");
  for (const std::string& spec : {"movielens:" + dir, "movielens:" + file}) {
    ASSERT_OK_AND_ASSIGN(auto d, LoadDataSpec(spec));
    EXPECT_EQ(d.ratings.size(), 2u);
    EXPECT_EQ(d.num_users, 2);
  }
}

TEST(DataSpecTest, CsvPath) {
  const std::string file = testing::WriteTempFile("x.csv", "a,b,1\n");
  ASSERT_OK_AND_ASSIGN(auto d, LoadDataSpec("csv:" + file));
  EXPECT_EQ(d.user_ids[0], "a");
  EXPECT_EQ(d.source, "csv:" + file);
}

TEST(DataSpecTest, LoadOptionsReachTheLoader) {
  const std::string file = testing::WriteTempFile("x.csv", "a,b,0.5\n");
  LoadOptions strict;
  strict.range = {1.0, 5.0};
  EXPECT_THAT(LoadDataSpec("csv:" + file, strict), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(LoadDataSpec("csv:" + file), IsOk());
}

TEST(DataSpecTest, SyntheticDefaultsAndOptions) {
  ASSERT_OK_AND_ASSIGN(auto d, LoadDataSpec("synthetic"));
  const SyntheticOptions defaults;
  EXPECT_EQ(d.num_users, defaults.num_users);
  EXPECT_EQ(static_cast<int64_t>(d.ratings.size()), SyntheticRatingCount(defaults));

  ASSERT_OK_AND_ASSIGN(auto small, LoadDataSpec("synthetic:users=100,items=50,density=0.1,seed=3"));
  EXPECT_EQ(small.num_users, 100);
  EXPECT_EQ(small.num_items, 50);
  EXPECT_EQ(small.ratings.size(), 500u);
  EXPECT_EQ(small.source,
            "synthetic:users=100,items=50,density=0.1,rank=5,noise=0.5,min=1,max=5,seed=3");
  // The source string regenerates the same data.
  ASSERT_OK_AND_ASSIGN(auto again, LoadDataSpec(small.source));
  EXPECT_EQ(again.ratings, small.ratings);
}

TEST(DataSpecTest, UnknownSchemeListsTheValidOnes) {
  auto d = LoadDataSpec("hdfs:/data/ratings");
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("unknown data spec scheme 'hdfs'"));
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("movielens:PATH, csv:PATH, synthetic"));
  auto no_scheme = LoadDataSpec("/data/u.data");
  EXPECT_THAT(std::string(no_scheme.status().message()), HasSubstr("has no scheme"));
  EXPECT_THAT(std::string(no_scheme.status().message()), HasSubstr("movielens:PATH"));
}

TEST(DataSpecTest, MissingPathIsAnError) {
  auto d = LoadDataSpec("movielens:");
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("write movielens:PATH"));
}

TEST(DataSpecTest, BadSyntheticOptionIsReported) {
  auto d = LoadDataSpec("synthetic:users=10,colour=blue");
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("unknown synthetic option 'colour'"));
}

// A stamp names the file a load reads and moves with every change a second
// load would see: a rewrite (size, modification time) or a replacement
// (inode), not with a read.
TEST(DataSpecTest, StampsNameTheFileReadAndChangeWithIt) {
  const std::string dir = testing::MakeTempDir();
  const std::string file = testing::WriteFile(dir, "u.data", "1\t10\t3\t0\n");
  ASSERT_OK_AND_ASSIGN(auto in_dir, StampDataSpec("movielens:" + dir));
  EXPECT_EQ(in_dir.file, file);
  ASSERT_OK_AND_ASSIGN(auto direct, StampDataSpec("movielens:" + file));
  EXPECT_EQ(direct, in_dir);
  ASSERT_THAT(LoadDataSpec("movielens:" + dir), IsOk());
  EXPECT_EQ(*StampDataSpec("movielens:" + dir), in_dir);  // reading changes nothing

  testing::WriteFile(dir, "u.data", "1\t10\t3\t0\n2\t10\t4\t0\n");  // rewritten in place
  ASSERT_OK_AND_ASSIGN(auto rewritten, StampDataSpec("movielens:" + dir));
  EXPECT_NE(rewritten, in_dir);
  EXPECT_EQ(rewritten.inode, in_dir.inode);

  // Replaced by a file of the same size (an atomic rename, as deployments
  // update files): the inode tells them apart.
  const std::string other = testing::WriteFile(dir, "next", "1\t10\t5\t0\n2\t10\t1\t0\n");
  ASSERT_OK_AND_ASSIGN(auto before, StampDataSpec("movielens:" + dir));
  ASSERT_EQ(std::rename(other.c_str(), file.c_str()), 0);
  ASSERT_OK_AND_ASSIGN(auto replaced, StampDataSpec("movielens:" + dir));
  EXPECT_EQ(replaced.size, before.size);
  EXPECT_NE(replaced.inode, before.inode);
  EXPECT_NE(replaced, before);
}

TEST(DataSpecTest, AGeneratedSpecReadsNoFileAndABadSpecIsTheLoadersError) {
  ASSERT_OK_AND_ASSIGN(auto synthetic, StampDataSpec("synthetic:users=5,items=5"));
  EXPECT_TRUE(synthetic.file.empty());
  EXPECT_EQ(synthetic, DataSourceStamp{});
  EXPECT_EQ(StampDataSpec("csv:/no/such/file.csv").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(StampDataSpec("parquet:x").status().message()),
              HasSubstr("unknown data spec scheme 'parquet'"));
  EXPECT_THAT(std::string(StampDataSpec("csv:").status().message()), HasSubstr("has no path"));
}

}  // namespace
}  // namespace fedmf::data
