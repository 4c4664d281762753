/** \file A .npy header claiming a huge shape is refused from the header alone, naming the bytes, before allocating. */
#include "nki/npy.h"
#include "nki/simulator/host_memory.h"
#include "test_support.h"

TEST_CASE("a .npy header claiming more data than the file holds names the bytes it would need") {
  const std::string bytes =
      nki::frame_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", "");
  CHECK(test::user_error_of([&] { nki::parse_npy(bytes, "huge.npy"); }) ==
        "err_invalid_npy: huge.npy: truncated data: shape [1048576,1048576] of float32 needs 4398046511104 bytes "
        "after the header, the file has 0");
}

TEST_CASE("a .npy header claiming more than 2^40 elements is refused as too large") {
  const std::string bytes =
      nki::frame_npy(2, "{'descr': '|u1', 'fortran_order': False, 'shape': (1048576, 1048577), }", "");
  CHECK(test::user_error_of([&] { nki::parse_npy(bytes, "huge.npy"); }) ==
        "err_invalid_npy: huge.npy: shape [1048576,1048577] is too large");
}

TEST_CASE("a .npy file larger than the host's memory is refused before it is read") {
  test::TempDir dir;
  const std::string path = dir.file("big.npy");
  test::write_bytes(path, nki::frame_npy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (16,), }", ""));
  // A sparse file: its size is past the host's memory, its blocks are not.
  const auto size = static_cast<std::uintmax_t>(nki::sim::host_memory_bytes()) + 1;
  std::filesystem::resize_file(path, size);
  CHECK(test::user_error_of([&] { nki::read_npy(path); }) ==
        fmt::format("err_host_out_of_memory: {}: reading the file needs {} bytes, more than the host's {} bytes of "
                    "memory",
                    path, size, nki::sim::host_memory_bytes()));
}
