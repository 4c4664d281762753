/** \file isa::get_nc_version and get_nc_sub_version: what the body may ask of its target. */
#include "nki/language.h"
#include "nki/trace.h"

namespace nki::isa {

nc_version get_nc_version(std::source_location loc) {
  // Trace::nc_version records the answer in the IR (its text and compile key): a body that
  // branches on it traces differently per generation and must not share an artifact across them.
  return static_cast<nc_version>(Trace::current("get_nc_version", loc).nc_version());
}

int get_nc_sub_version(std::source_location loc) {
  Trace::current("get_nc_sub_version", loc);
  return 0;
}

}  // namespace nki::isa
