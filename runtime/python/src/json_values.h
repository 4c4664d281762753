/** \file The JSON the `nki` command prints as Python values: the module returns the same fields. */
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace nki::python {

/** The JSON text `json` (an object, an array, ...) as dicts, lists, str, int, float, bool and None. */
pybind11::object python_value(const std::string& json);

}  // namespace nki::python
