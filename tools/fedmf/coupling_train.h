// `fedmf train --setting coupling`: differentially private collaborative
// coupling learning (common/coupling/) with the data owners and the
// parameter server A in one process.
#ifndef FEDMF_TOOLS_FEDMF_COUPLING_TRAIN_H_
#define FEDMF_TOOLS_FEDMF_COUPLING_TRAIN_H_

#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

int RunCouplingTrain(const JobFlags& flags);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_COUPLING_TRAIN_H_
