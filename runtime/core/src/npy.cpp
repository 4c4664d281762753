/** \file .npy reading and encoding (float32, float16, integers and bool; little endian, C order). */
#include "nki/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <filesystem>
#include <sstream>

#include "file_bytes.h"
#include "nki/error.h"
#include "nki/simulator/host_memory.h"

namespace nki {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& why, std::string_view error_name = "err_invalid_npy") {
  throw UserError(std::string(error_name), "", {}, fmt::format("{}: {}", path, why));
}

/** The value text of `key` in a .npy header dict, e.g. "'<f4'" or "(512, 2048)". */
std::string header_value(const std::string& path, const std::string& header, const std::string& key) {
  const std::string k = "'" + key + "'";
  auto pos = header.find(k);
  if (pos == std::string::npos) bad(path, fmt::format("the .npy header has no {} entry", k));
  pos = header.find(':', pos + k.size());
  if (pos == std::string::npos) bad(path, fmt::format("malformed {} entry in the .npy header", k));
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  std::size_t end = pos;
  if (pos < header.size() && (header[pos] == '(' || header[pos] == '[')) {
    end = header.find(header[pos] == '(' ? ')' : ']', pos);
    if (end == std::string::npos) bad(path, fmt::format("malformed {} entry in the .npy header", k));
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  }
  std::string v = header.substr(pos, end - pos);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

/** The .npy dtypes read and written: NumPy's descr, our dtype, NumPy's name. */
struct NpyType {
  std::string_view descr;
  DType dtype;
  std::string_view numpy_name;
};
constexpr NpyType kNpyTypes[] = {
    {"'<f4'", DType::fp32, "float32"}, {"'<f2'", DType::fp16, "float16"}, {"'|i1'", DType::int8, "int8"},
    {"'<i2'", DType::int16, "int16"},  {"'<i4'", DType::int32, "int32"},  {"'|u1'", DType::uint8, "uint8"},
    {"'<u2'", DType::uint16, "uint16"}, {"'<u4'", DType::uint32, "uint32"}, {"'|b1'", DType::boolean, "bool"},
};

/** The wider .npy dtypes read (never written): NumPy's defaults, narrowed as they are read. */
struct NpyWideType {
  std::string_view descr;
  std::string_view numpy_name;
  DType narrowed_to;
};
constexpr NpyWideType kNpyWideTypes[] = {{"'<f8'", "float64", DType::fp32}, {"'<i8'", "int64", DType::int32}};

const NpyType* npy_type_of(DType t) {
  for (const NpyType& n : kNpyTypes)
    if (n.dtype == t) return &n;
  return nullptr;
}

Shape parse_shape(const std::string& path, const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    bad(path, fmt::format("malformed shape {} in the .npy header; expected a tuple such as (512, 2048)", text));
  }
  Shape shape;
  std::size_t i = 1;  // after '('
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() || text[i] == ')') break;
    std::size_t j = i;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
    if (j == i || j - i > 12) bad(path, fmt::format("malformed shape {} in the .npy header", text));
    shape.push_back(std::stoll(text.substr(i, j - i)));
    i = j;
  }
  return shape;
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) bad(path, "no such file");
  if (status.type() == std::filesystem::file_type::directory) bad(path, "is a directory, not a .npy file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > static_cast<std::uintmax_t>(sim::host_memory_bytes())) {
    throw UserError("err_host_out_of_memory", "", {},
                    fmt::format("{}: reading the file needs {} bytes, more than the host's {} bytes of memory", path,
                                size, sim::host_memory_bytes()));
  }
  const FileBytes file(path);
  if (!file.opened()) bad(path, "cannot open the file for reading");
  if (!file.complete()) bad(path, "cannot read the file");
  return parse_npy(file.bytes(), path);
}

NpyArray parse_npy(std::string_view bytes, const std::string& path) {
  static constexpr char kMagic[] = "\x93NUMPY";
  if (bytes.empty()) bad(path, "is empty, not a .npy file");
  if (std::memcmp(bytes.data(), kMagic, std::min<std::size_t>(bytes.size(), 6)) != 0) {
    bad(path, "not a .npy file (bad magic: it does not start with \"\\x93NUMPY\")");
  }
  if (bytes.size() < 8) bad(path, fmt::format("truncated .npy header: the file has only {} bytes", bytes.size()));
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_start = 10;
  } else if (major == 2 || major == 3) {
    header_start = 12;
  } else {
    bad(path, fmt::format("unsupported .npy format version {}.{} (1.0, 2.0 and 3.0 are read)", major,
                          static_cast<unsigned char>(bytes[7])));
  }
  if (bytes.size() < header_start) {
    bad(path, fmt::format("truncated .npy header: the file has only {} bytes", bytes.size()));
  }
  for (std::size_t b = 8; b < header_start; ++b) {
    header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[b])) << (8 * (b - 8));
  }
  if (bytes.size() < header_start + header_len) {
    bad(path, fmt::format("truncated .npy header: the header needs {} bytes, the file has {}", header_start + header_len,
                          bytes.size()));
  }
  const std::string header(bytes.substr(header_start, header_len));

  const std::string descr = header_value(path, header, "descr");
  if (header_value(path, header, "fortran_order") != "False") bad(path, "is in Fortran order; expected C order");
  const Shape shape = parse_shape(path, header_value(path, header, "shape"));
  return decode_npy_data(descr, shape, bytes.substr(header_start + header_len), path);
}

std::int64_t check_npy_shape(const Shape& shape, const std::string& path, std::string_view error_name) {
  if (shape.empty()) bad(path, "holds a 0-d scalar; expected an array", error_name);
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d <= 0) bad(path, fmt::format("has shape {} with an empty dimension", shape_str(shape)), error_name);
    if (n > (std::int64_t{1} << 40) / d) bad(path, fmt::format("shape {} is too large", shape_str(shape)), error_name);
    n *= d;
  }
  return n;
}

NpyArray decode_npy_data(std::string_view descr, Shape shape, std::string_view bytes, const std::string& path,
                         std::string_view error_name) {
  auto bad = [&](const std::string& subject, const std::string& why) { nki::bad(subject, why, error_name); };
  const NpyType* type = nullptr;
  for (const NpyType& n : kNpyTypes)
    if (descr == n.descr) type = &n;
  // NumPy's defaults, read and narrowed: float64 to fp32, int64 to int32 where every value fits.
  const NpyWideType* wide = nullptr;
  for (const NpyWideType& w : kNpyWideTypes)
    if (descr == w.descr) wide = &w;
  if (type == nullptr && wide == nullptr) {
    bad(path, fmt::format("holds dtype {}; expected float32 ('<f4'), float64 ('<f8'), float16 ('<f2'), int8 ('|i1'), "
                          "int16 ('<i2'), int32 ('<i4'), int64 ('<i8'), uint8 ('|u1'), uint16 ('<u2'), uint32 ('<u4') "
                          "or bool ('|b1'), little endian",
                          descr));
  }
  if (wide != nullptr) type = npy_type_of(wide->narrowed_to);
  NpyArray out;
  out.shape = std::move(shape);
  const std::int64_t n = check_npy_shape(out.shape, path, error_name);
  const int eb = wide != nullptr ? 8 : dtype_bytes(type->dtype);
  const std::string_view numpy_name = wide != nullptr ? wide->numpy_name : type->numpy_name;
  const std::size_t want = static_cast<std::size_t>(n) * static_cast<std::size_t>(eb);
  const std::size_t have = bytes.size();
  if (have < want) {
    bad(path, fmt::format("truncated data: shape {} of {} needs {} bytes after the header, the file has {}",
                          shape_str(out.shape), numpy_name, want, have));
  }
  if (have > want) {
    bad(path, fmt::format("has {} bytes after the data of shape {} of {} ({} bytes); the file is not a single array",
                          have - want, shape_str(out.shape), numpy_name, want));
  }
  // The array is held twice (exact values and fp32) beside the file's bytes.
  const std::int64_t held = n * static_cast<std::int64_t>(sizeof(double) + sizeof(float));
  if (held > sim::host_memory_bytes() - static_cast<std::int64_t>(bytes.size())) {
    throw UserError("err_host_out_of_memory", "", {},
                    fmt::format("{}: reading shape {} of {} needs {} bytes besides the file's {}, more than the host's "
                                "{} bytes of memory",
                                path, shape_str(out.shape), numpy_name, held, bytes.size(),
                                sim::host_memory_bytes()));
  }
  static_assert(std::endian::native == std::endian::little, ".npy little-endian data is read as native values");
  out.dtype = type->dtype;
  const char* src = bytes.data();
  out.values.resize(static_cast<std::size_t>(n));
  out.data.resize(static_cast<std::size_t>(n));
  if (wide == nullptr) {
    for (std::size_t i = 0; i < out.values.size(); ++i) out.values[i] = load_element(src + i * eb, out.dtype);
  } else if (wide->narrowed_to == DType::fp32) {
    // float64 to fp32 with round-to-nearest-even; --dtype then rounds the fp32 values (as torch's .to() does).
    for (std::size_t i = 0; i < out.values.size(); ++i) {
      double d = 0;
      std::memcpy(&d, src + i * eb, sizeof d);
      out.values[i] = static_cast<float>(d);
    }
  } else {
    for (std::size_t i = 0; i < out.values.size(); ++i) {
      std::int64_t v = 0;
      std::memcpy(&v, src + i * eb, sizeof v);
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
        bad(path, fmt::format("holds int64 value {} at flat index {}, outside int32 (the kernel's integer type); "
                              "expected int64 values from {} to {}",
                              v, i, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
      }
      out.values[i] = static_cast<double>(v);
    }
  }
  if (out.dtype == DType::fp32 && wide == nullptr) {
    std::memcpy(out.data.data(), src, want);  // the bits as they are
  } else {
    // fp32 through store_element: NaN bits of a float16 kept, large 32-bit integers rounded to nearest even.
    for (std::size_t i = 0; i < out.data.size(); ++i) store_element(&out.data[i], DType::fp32, out.values[i]);
  }
  return out;
}

std::string encode_npy(const Shape& shape, std::span<const float> values) {
  if (static_cast<std::int64_t>(values.size()) != shape_elements(shape)) {
    throw InternalError(fmt::format("encode_npy: {} values for shape {} of {} elements", values.size(),
                                    shape_str(shape), shape_elements(shape)));
  }
  const std::string shape_text =
      shape.size() == 1 ? fmt::format("({},)", shape[0]) : fmt::format("({})", fmt::join(shape, ", "));
  const std::string dict = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", shape_text);
  return frame_npy(1, dict, {reinterpret_cast<const char*>(values.data()), values.size() * 4});
}

std::string encode_npy(const Shape& shape, std::span<const double> values, DType dtype) {
  const NpyType* type = npy_type_of(dtype);
  if (type == nullptr) {
    throw InternalError(fmt::format("encode_npy: a .npy cannot hold dtype {}", dtype_name(dtype)));
  }
  if (static_cast<std::int64_t>(values.size()) != shape_elements(shape)) {
    throw InternalError(fmt::format("encode_npy: {} values for shape {} of {} elements", values.size(),
                                    shape_str(shape), shape_elements(shape)));
  }
  const int eb = dtype_bytes(dtype);
  std::string data(values.size() * static_cast<std::size_t>(eb), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) store_element(data.data() + i * eb, dtype, values[i]);
  const std::string shape_text =
      shape.size() == 1 ? fmt::format("({},)", shape[0]) : fmt::format("({})", fmt::join(shape, ", "));
  const std::string dict =
      fmt::format("{{'descr': {}, 'fortran_order': False, 'shape': {}, }}", type->descr, shape_text);
  return frame_npy(1, dict, data);
}

std::string frame_npy(int major, std::string_view header_dict, std::string_view data) {
  const std::size_t prefix = major == 1 ? 10 : 12;  // magic, version, then a 2- or 4-byte length
  std::string header(header_dict);
  // Pad with spaces so the data starts on a 64-byte boundary; the header ends with '\n'.
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\x00';
  for (std::size_t b = 0; b < prefix - 8; ++b) out += static_cast<char>((header.size() >> (8 * b)) & 0xff);
  out += header;
  out += data;
  return out;
}

}  // namespace nki
