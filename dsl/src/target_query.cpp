/** \file isa::get_nc_version and get_nc_sub_version: what the body may ask of its target. */
#include "nki/language.h"
#include "nki/trace.h"

namespace nki::isa {

nc_version get_nc_version(std::source_location loc) {
  Trace& t = Trace::current("get_nc_version", loc);
  // Recorded in the IR (and so in its text and compile key): a body that branches on the
  // answer traces differently per generation and must not share an artifact across them.
  t.ir().nc_version = t.nc_version();
  return static_cast<nc_version>(t.nc_version());
}

int get_nc_sub_version(std::source_location loc) {
  Trace::current("get_nc_sub_version", loc);
  return 0;
}

}  // namespace nki::isa
