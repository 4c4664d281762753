/** \file libFuzzer target: the .npy reader on arbitrary bytes. */
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nki/error.h"
#include "nki/npy.h"

// A malformed file must end in nki::UserError (err_invalid_npy); anything else is a bug.
// An array that is read is written back and read again: the same shape, dtype and values.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  nki::NpyArray a;
  try {
    a = nki::parse_npy(bytes, "fuzz.npy");
  } catch (const nki::UserError&) {
    return 0;
  }
  const nki::NpyArray b = nki::parse_npy(nki::encode_npy(a.shape, a.values, a.dtype), "again.npy");
  if (b.shape != a.shape || b.dtype != a.dtype || b.values.size() != a.values.size()) std::abort();
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const bool both_nan = a.values[i] != a.values[i] && b.values[i] != b.values[i];
    if (!both_nan && a.values[i] != b.values[i]) std::abort();
  }
  return 0;
}
