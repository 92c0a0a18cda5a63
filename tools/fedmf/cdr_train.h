// `fedmf train --setting cdr`: PPGenCDR (../shared/papers/001_*.txt) in one
// process — the source party's private generator and the target party's
// recommender on a MovieLens genre split (common/cdr). docs/cdr.md.
#ifndef FEDMF_TOOLS_FEDMF_CDR_TRAIN_H_
#define FEDMF_TOOLS_FEDMF_CDR_TRAIN_H_

#include "CLI/CLI.hpp"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

// Adds the --cdr-* options to `fedmf train` (they only apply to --setting cdr).
void AddCdrTrainFlags(CLI::App* train);
int RunCdrTrain(const JobFlags& flags);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_CDR_TRAIN_H_
