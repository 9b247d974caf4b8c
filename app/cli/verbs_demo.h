#pragma once

#include "cli/verbs.h"

namespace shotchain::cli {

int runTrainDemo(const Args& args);  // shotchain train-demo
int runEvalDemo(const Args& args);   // shotchain eval-demo

}  // namespace shotchain::cli
