/** \file Marker patterns that find the output elements no instance wrote, without checked mode. */
#pragma once

#include <cstdint>
#include <vector>

#include "nki/tensor.h"

namespace nki {

/**
 * Fills every element of `t` with marker `pass` (1 or 2): per element size, 1 is a signaling
 * NaN in the float dtypes of that size (rarely computed, so a second run is rarely needed) and
 * 2 its bitwise complement, so no value equals both.
 */
void fill_marker(Tensor& t, int pass);

/** The flat indices of the elements of `t` holding marker `pass`, ascending. */
std::vector<std::int64_t> elements_holding_marker(const Tensor& t, int pass);

/** Sets the elements at these flat indices to all-zero bytes (0 in every dtype). */
void zero_elements(Tensor& t, const std::vector<std::int64_t>& flat);

}  // namespace nki
