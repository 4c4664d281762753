/** \file The `nki` command's entry point (nki/cli.h, public: your own programs run it too). */
#pragma once

#include "nki/cli.h"
