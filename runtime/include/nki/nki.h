/** \file Everything a kernel author includes: the language (nl) and launches (nki::jit). */
#pragma once

#include "nki/kernel.h"
#include "nki/language.h"
#include "nki/profile.h"
#include "nki/tensor.h"
