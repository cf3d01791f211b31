// Status carries a code and an optional field besides its message; Result<T> forwards them.
#include "util/status.h"

#include <gtest/gtest.h>

namespace brisk {
namespace {

TEST(StatusTest, ErrorIsTheInvalidArgumentShorthand) {
  EXPECT_EQ(Status::Ok().code(), StatusCode::kOk);
  const Status s = Status::Error("bad flag");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad flag");
  EXPECT_EQ(s.field(), "");
}

TEST(StatusTest, FactoriesSetTheirCodeAndField) {
  EXPECT_EQ(Status::InvalidArgument("x", "top_p").field(), "top_p");
  EXPECT_EQ(Status::OutOfRange("x").code(), StatusCode::kOutOfRange);
  EXPECT_EQ(Status::NotFound("x").code(), StatusCode::kNotFound);
  EXPECT_EQ(Status::FailedPrecondition("x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Status::Unimplemented("x").code(), StatusCode::kUnimplemented);
  EXPECT_EQ(Status::Unauthenticated("x").code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(Status::ResourceExhausted("x").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(Status::Unavailable("x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(Status::Internal("x").code(), StatusCode::kInternal);
  EXPECT_STREQ(StatusCodeName(StatusCode::kResourceExhausted), "resource_exhausted");
}

TEST(StatusTest, WithContextKeepsCodeAndField) {
  const Status s = Status::NotFound("no such file", "path").WithContext("model.gguf");
  EXPECT_EQ(s.message(), "model.gguf: no such file");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.field(), "path");
  EXPECT_TRUE(Status::Ok().WithContext("x").ok());
}

TEST(StatusTest, ResultForwardsCodeAndField) {
  Result<int> bad = Status::ResourceExhausted("full");
  EXPECT_EQ(bad.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(bad.message(), "full");
  EXPECT_EQ(bad.status().code(), StatusCode::kResourceExhausted);
  Result<int> field = Status::InvalidArgument("bad", "n");
  EXPECT_EQ(field.field(), "n");
  Result<int> good = 3;
  EXPECT_EQ(good.code(), StatusCode::kOk);
}

}  // namespace
}  // namespace brisk
