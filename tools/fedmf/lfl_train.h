// `fedmf train --setting lfl`: LFL-SGDMF with its devices, server and secure
// aggregation in one process.
#ifndef FEDMF_TOOLS_FEDMF_LFL_TRAIN_H_
#define FEDMF_TOOLS_FEDMF_LFL_TRAIN_H_

#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

int RunLflTrain(const JobFlags& flags);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_LFL_TRAIN_H_
