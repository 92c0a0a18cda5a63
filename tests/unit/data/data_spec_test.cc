#include <cstdio>
#include <string>

#include "common/data/loaders.h"
#include "common/data/synthetic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/data/test_files.h"

using ::fedmf::testing::IsOk;

namespace fedmf::data {
namespace {

using ::testing::HasSubstr;

TEST(DataSpecTest, MovieLensPathFileOrDirectory) {
  const std::string dir = testing::MakeTempDir();
  const std::string file = testing::WriteFile(dir, "u.data", "1\t10\t3\t0\n2\t10\t4\t0\n");
  for (const std::string& spec : {"movielens:" + dir, "movielens:" + file}) {
    auto d = LoadDataSpec(spec);
    ASSERT_THAT(d, IsOk()) << spec << ": " << d.status();
    EXPECT_EQ(d->ratings.size(), 2u);
    EXPECT_EQ(d->num_users, 2);
  }
}

TEST(DataSpecTest, CsvPath) {
  const std::string file = testing::WriteTempFile("x.csv", "a,b,1\n");
  auto d = LoadDataSpec("csv:" + file);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->user_ids[0], "a");
  EXPECT_EQ(d->source, "csv:" + file);
}

TEST(DataSpecTest, LoadOptionsReachTheLoader) {
  const std::string file = testing::WriteTempFile("x.csv", "a,b,0.5\n");
  LoadOptions strict;
  strict.range = {1.0, 5.0};
  EXPECT_FALSE(LoadDataSpec("csv:" + file, strict).ok());
  EXPECT_THAT(LoadDataSpec("csv:" + file), IsOk());
}

TEST(DataSpecTest, SyntheticDefaultsAndOptions) {
  auto d = LoadDataSpec("synthetic");
  ASSERT_THAT(d, IsOk());
  const SyntheticOptions defaults;
  EXPECT_EQ(d->num_users, defaults.num_users);
  EXPECT_EQ(static_cast<int64_t>(d->ratings.size()), SyntheticRatingCount(defaults));

  auto small = LoadDataSpec("synthetic:users=100,items=50,density=0.1,seed=3");
  ASSERT_THAT(small, IsOk());
  EXPECT_EQ(small->num_users, 100);
  EXPECT_EQ(small->num_items, 50);
  EXPECT_EQ(small->ratings.size(), 500u);
  EXPECT_EQ(small->source,
            "synthetic:users=100,items=50,density=0.1,rank=5,noise=0.5,min=1,max=5,seed=3");
  // The source string regenerates the same data.
  auto again = LoadDataSpec(small->source);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->ratings, small->ratings);
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
  auto in_dir = StampDataSpec("movielens:" + dir);
  ASSERT_THAT(in_dir, IsOk());
  EXPECT_EQ(in_dir->file, file);
  auto direct = StampDataSpec("movielens:" + file);
  ASSERT_THAT(direct, IsOk());
  EXPECT_EQ(*direct, *in_dir);
  ASSERT_THAT(LoadDataSpec("movielens:" + dir), IsOk());
  EXPECT_EQ(*StampDataSpec("movielens:" + dir), *in_dir);  // reading changes nothing

  testing::WriteFile(dir, "u.data", "1\t10\t3\t0\n2\t10\t4\t0\n");  // rewritten in place
  auto rewritten = StampDataSpec("movielens:" + dir);
  ASSERT_THAT(rewritten, IsOk());
  EXPECT_NE(*rewritten, *in_dir);
  EXPECT_EQ(rewritten->inode, in_dir->inode);

  // Replaced by a file of the same size (an atomic rename, as deployments
  // update files): the inode tells them apart.
  const std::string other = testing::WriteFile(dir, "next", "1\t10\t5\t0\n2\t10\t1\t0\n");
  auto before = StampDataSpec("movielens:" + dir);
  ASSERT_THAT(before, IsOk());
  ASSERT_EQ(std::rename(other.c_str(), file.c_str()), 0);
  auto replaced = StampDataSpec("movielens:" + dir);
  ASSERT_THAT(replaced, IsOk());
  EXPECT_EQ(replaced->size, before->size);
  EXPECT_NE(replaced->inode, before->inode);
  EXPECT_NE(*replaced, *before);
}

TEST(DataSpecTest, AGeneratedSpecReadsNoFileAndABadSpecIsTheLoadersError) {
  auto synthetic = StampDataSpec("synthetic:users=5,items=5");
  ASSERT_THAT(synthetic, IsOk());
  EXPECT_TRUE(synthetic->file.empty());
  EXPECT_EQ(*synthetic, DataSourceStamp{});
  EXPECT_EQ(StampDataSpec("csv:/no/such/file.csv").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(StampDataSpec("parquet:x").status().message()),
              HasSubstr("unknown data spec scheme 'parquet'"));
  EXPECT_THAT(std::string(StampDataSpec("csv:").status().message()), HasSubstr("has no path"));
}

}  // namespace
}  // namespace fedmf::data
