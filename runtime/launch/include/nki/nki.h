/**
 * \file Everything a kernel author includes: the language (nl), nki::jit and launches,
 * nki::Tensor. The rest is opt-in: nki/profile.h (cost model, host benchmark), nki/compile.h,
 * nki/sharding.h and nki/collectives.h (meshes), nki/autotune.h, nki/traced_kernel.h (the IR).
 */
#pragma once

#include "nki/compiler.h"
#include "nki/kernel.h"
#include "nki/language.h"
#include "nki/tensor.h"
