/** \file .npy reading and encoding (float32 only, little endian, C order). */
#include "nki/npy.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

#include "nki/error.h"

namespace nki {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw UserError("err_invalid_npy", "", {}, fmt::format("{}: {}", path, why));
}

/** The value text of `key` in a .npy header dict, e.g. "'<f4'" or "(512, 2048)". */
std::string header_value(const std::string& path, const std::string& header, const std::string& key) {
  const std::string k = "'" + key + "'";
  auto pos = header.find(k);
  if (pos == std::string::npos) bad(path, fmt::format("the .npy header has no {} entry", k));
  pos = header.find(':', pos + k.size());
  if (pos == std::string::npos) bad(path, "malformed .npy header");
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  std::size_t end = pos;
  if (pos < header.size() && header[pos] == '(') {
    end = header.find(')', pos);
    if (end == std::string::npos) bad(path, "malformed shape in the .npy header");
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  }
  std::string v = header.substr(pos, end - pos);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

Shape parse_shape(const std::string& path, const std::string& text) {
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
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "cannot open the file (missing or unreadable)");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) bad(path, "not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad(path, "truncated .npy header");
    for (int b = 0; b < 4; ++b) header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + b])) << (8 * b);
    header_start = 12;
  } else {
    bad(path, fmt::format("unsupported .npy format version {}", major));
  }
  if (bytes.size() < header_start + header_len) bad(path, "truncated .npy header");
  const std::string header = bytes.substr(header_start, header_len);

  const std::string descr = header_value(path, header, "descr");
  if (descr != "'<f4'") {
    bad(path, fmt::format("holds dtype {}; expected float32 ('<f4', little endian)", descr));
  }
  if (header_value(path, header, "fortran_order") != "False") bad(path, "is in Fortran order; expected C order");
  NpyArray out;
  out.shape = parse_shape(path, header_value(path, header, "shape"));
  if (out.shape.empty()) bad(path, "holds a 0-d scalar; expected an array");
  std::int64_t n = 1;
  for (std::int64_t d : out.shape) {
    if (d <= 0) bad(path, fmt::format("has shape {} with an empty dimension", shape_str(out.shape)));
    if (n > (std::int64_t{1} << 40) / d) bad(path, fmt::format("shape {} is too large", shape_str(out.shape)));
    n *= d;
  }
  const std::size_t data_start = header_start + header_len;
  const std::size_t want = static_cast<std::size_t>(n) * 4;
  if (bytes.size() - data_start != want) {
    bad(path, fmt::format("holds {} data bytes; shape {} of float32 needs {}", bytes.size() - data_start,
                          shape_str(out.shape), want));
  }
  out.data.resize(static_cast<std::size_t>(n));
  std::memcpy(out.data.data(), bytes.data() + data_start, want);
  static_assert(std::endian::native == std::endian::little, ".npy '<f4' is read as native floats");
  return out;
}

std::string encode_npy(const Shape& shape, std::span<const float> values) {
  const std::string shape_text =
      shape.size() == 1 ? fmt::format("({},)", shape[0]) : fmt::format("({})", fmt::join(shape, ", "));
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", shape_text);
  // Pad with spaces so the data starts on a 64-byte boundary; the header ends with '\n'.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  return out;
}

}  // namespace nki
