// Precompiled for the translation units of shotchain_core and of the tests. ATen alone: the code uses
// no torch:: front end (the two files that do include it themselves), and <torch/torch.h> made a
// 600 MB header that every file spent ~15 s loading.
#pragma once
#include <ATen/ATen.h>
// at::NoGradGuard and at::AutoGradMode: ATen.h stopped bringing them in libtorch 2.x.
#include <ATen/core/grad_mode.h>
