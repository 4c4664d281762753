/** \file The module's UserError class and the translation of the runtime's exceptions into Python's. */
#include "python_user_error.h"

#include "cli/one_line.h"
#include "nki/error.h"
#include "nki/interrupt.h"

namespace nki::python {

namespace {
/// The module's UserError class: one module per shared object, as Python loads each privately
/// (RTLD_LOCAL), so a translator (a plain function) finds it here. The module keeps it alive.
PyObject* user_error_type = nullptr;
}  // namespace

void define_user_error(pybind11::module_& m) {
  namespace py = pybind11;
  const std::string qualified = py::cast<std::string>(m.attr("__name__")) + ".UserError";
  // A class made by Python itself, so `except m.UserError as e: e.name` works as for any exception.
  py::object type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      qualified.c_str(),
      "Bad input to a kernel launch, profile, sweep or mesh query; `name` is the NKI error name "
      "(e.g. err_num_partition_exceed_arch_limit), str() the message the nki command prints.",
      PyExc_Exception, nullptr));
  if (!type) throw py::error_already_set();
  type.attr("name") = "";
  m.attr("UserError") = type;
  user_error_type = type.ptr();
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UserError& e) {
      py::object error = py::reinterpret_borrow<py::object>(user_error_type)(cli::one_line(e.what()));
      error.attr("name") = e.name();
      PyErr_SetObject(user_error_type, error.ptr());
    } catch (const Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });
}

}  // namespace nki::python
