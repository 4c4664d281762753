/** \file JSON text to Python values, through Python's own json module (the key order kept). */
#include "json_values.h"

namespace nki::python {

pybind11::object python_value(const std::string& json) {
  return pybind11::module_::import("json").attr("loads")(json);
}

}  // namespace nki::python
