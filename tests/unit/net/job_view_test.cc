// How a job's history is drawn (common/net/job_view.h): the dashboard's and
// `fedmf demo --plot`'s charts.
#include "common/net/job_view.h"

#include "gtest/gtest.h"

namespace fedmf::net {
namespace {

// Issue #56: the per-round MSE (Stage 2) never showed the final model the
// summary prints; it is each party's marked last point now.
TEST(JobRoundChartsTest, FinalModelIsTheMarkedLastPointOfEachReportingParty) {
  v1::JobStatus st;
  st.mutable_spec()->set_rounds(2);
  for (const char* name : {"acme", "bank", "shop"}) st.add_parties()->set_name(name);
  st.mutable_parties(0)->set_test_mse(0.81);  // reported after Stage 3
  st.mutable_parties(0)->set_test_count(120);
  st.mutable_parties(1)->set_test_mse(-1);  // not reported
  st.mutable_parties(2)->set_test_mse(0.93);
  st.mutable_parties(2)->set_test_count(80);
  for (int r = 0; r < 2; ++r) {
    v1::RoundRecord* rec = st.add_rounds();
    rec->set_round(r);
    for (const char* name : {"acme", "bank"}) {
      v1::PartyRoundReport* rep = rec->add_reports();
      rep->set_party(name);
      rep->set_job_epsilon(0.5 * (r + 1));
      rep->set_test_mse(1.6 - 0.1 * r);
    }
  }
  const std::vector<plot::LineChart> charts = JobRoundCharts(st);
  ASSERT_EQ(charts.size(), 3u);
  const plot::LineChart& mse = charts[0];
  ASSERT_EQ(mse.series.size(), 3u);
  EXPECT_EQ(mse.series[0].name, "acme");
  ASSERT_EQ(mse.series[0].points.size(), 2u);  // rounds 1 and 2, unchanged
  ASSERT_TRUE(mse.series[0].final_point.has_value());
  EXPECT_EQ(mse.series[0].final_point->first, 3);
  EXPECT_DOUBLE_EQ(mse.series[0].final_point->second, 0.81);
  EXPECT_EQ(mse.series[1].name, "bank");
  EXPECT_FALSE(mse.series[1].final_point.has_value());
  // shop reported no round but its final error: a series of that point alone.
  EXPECT_EQ(mse.series[2].name, "shop");
  EXPECT_TRUE(mse.series[2].points.empty());
  ASSERT_TRUE(mse.series[2].final_point.has_value());
  EXPECT_DOUBLE_EQ(mse.series[2].final_point->second, 0.93);
  const std::string svg = plot::SvgChart(mse);
  EXPECT_NE(svg.find("<circle class=\"final\" data-series=\"acme\" data-value=\"3:0.81\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<circle class=\"final\" data-series=\"shop\" data-value=\"3:0.93\""),
            std::string::npos);
  // No rounds recorded yet: the final point sits after the planned rounds.
  v1::JobStatus early = st;
  early.clear_rounds();
  EXPECT_EQ(JobRoundCharts(early)[0].series[0].final_point->first, 3);
}

}  // namespace
}  // namespace fedmf::net
