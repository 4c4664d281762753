/** \file --sweep: the values each spelling means, and one exact line for every malformed spec. */
#include <doctest/doctest.h>

#include "nki/error.h"
#include "cli/sweep_spec.h"

using nki::cli::parse_sweep;
using nki::cli::SweepAxis;

namespace {

/** The message `parse` refuses `text` with, checking the error's name. */
template <class Parse>
std::string refused_by(Parse parse, const std::string& text, const std::string& error) {
  try {
    (void)parse(text);
  } catch (const nki::UserError& e) {
    CHECK(e.name() == error);
    return e.what();
  }
  return "(parsed)";
}

std::string refusal(const std::string& spec) { return refused_by(parse_sweep, spec, "err_invalid_sweep"); }

std::string config_refusal(const std::string& text) {
  return refused_by(nki::cli::parse_config, text, "err_invalid_config");
}

}  // namespace

TEST_CASE("sweep spec - lists and doubling ranges, in the order written") {
  CHECK(parse_sweep("P=32,64,128;F=64..8192") ==
        std::vector<SweepAxis>{{"P", {32, 64, 128}}, {"F", {64, 128, 256, 512, 1024, 2048, 4096, 8192}}});
  CHECK(parse_sweep(" tiles_m = 4 , 16 ; tiles_k=8..8,1 ") ==
        std::vector<SweepAxis>{{"tiles_m", {4, 16}}, {"tiles_k", {8, 1}}});
  CHECK(parse_sweep("F=3..24") == std::vector<SweepAxis>{{"F", {3, 6, 12, 24}}});
  CHECK(nki::cli::sweep_str(parse_sweep("P=128,32;F=64..256")) == "P=128,32;F=64,128,256");
}

TEST_CASE("sweep spec - every malformed spec is one line naming the part and what was expected") {
  CHECK(refusal("") ==
        "err_invalid_sweep: --sweep \"\": empty; expected NAME=VALUES[;NAME=VALUES...], e.g. \"P=32,64,128;F=64..8192\"");
  CHECK(refusal("P") == "err_invalid_sweep: --sweep \"P\": \"P\" has no '='; expected NAME=VALUES[;NAME=VALUES...], "
                        "e.g. \"P=32,64,128;F=64..8192\"");
  CHECK(refusal("P=32;") == "err_invalid_sweep: --sweep \"P=32;\": an empty parameter between ';'; expected "
                            "NAME=VALUES[;NAME=VALUES...], e.g. \"P=32,64,128;F=64..8192\"");
  CHECK(refusal("2P=32") ==
        "err_invalid_sweep: --sweep \"2P=32\": \"2P\" is not a parameter name (letters, digits and _, not starting "
        "with a digit)");
  CHECK(refusal("P=") == "err_invalid_sweep: --sweep \"P=\": parameter P has no values");
  CHECK(refusal("P=32,,64") == "err_invalid_sweep: --sweep \"P=32,,64\": value \"\" of P is not a positive integer");
  CHECK(refusal("P=0") == "err_invalid_sweep: --sweep \"P=0\": value \"0\" of P is not a positive integer");
  CHECK(refusal("P=-4") == "err_invalid_sweep: --sweep \"P=-4\": value \"-4\" of P is not a positive integer");
  CHECK(refusal("P=3x") == "err_invalid_sweep: --sweep \"P=3x\": value \"3x\" of P is not a positive integer");
  CHECK(refusal("P=99999999999999999999") ==
        "err_invalid_sweep: --sweep \"P=99999999999999999999\": value \"99999999999999999999\" of P is not a positive "
        "integer");
  CHECK(refusal("P=32;P=64") == "err_invalid_sweep: --sweep \"P=32;P=64\": parameter P is given twice");
  CHECK(refusal("F=64,32..128") == "err_invalid_sweep: --sweep \"F=64,32..128\": value 64 of F is given twice");
  CHECK(refusal("F=8192..64") == "err_invalid_sweep: --sweep \"F=8192..64\": range 8192..64 of F is empty: 8192 > 64");
  CHECK(refusal("F=64..1000") == "err_invalid_sweep: --sweep \"F=64..1000\": range 64..1000 of F: 1000 is not 64 times "
                                 "a power of 2 (LO..HI doubles from LO to HI)");
  CHECK(refusal("F=..64") == "err_invalid_sweep: --sweep \"F=..64\": value \"\" of F is not a positive integer");
  CHECK(refusal("F=1..4611686018427387905") ==
        "err_invalid_sweep: --sweep \"F=1..4611686018427387905\": range 1..4611686018427387905 of F: "
        "4611686018427387905 is not 1 times a power of 2 (LO..HI doubles from LO to HI)");
}

TEST_CASE("config spec - one value per parameter, in the order written") {
  using Values = std::vector<std::pair<std::string, std::int64_t>>;
  CHECK(nki::cli::parse_config("P=64,F=2048") == Values{{"P", 64}, {"F", 2048}});
  CHECK(nki::cli::parse_config(" tiles_k = 8 , tiles_m=16 ") == Values{{"tiles_k", 8}, {"tiles_m", 16}});
}

TEST_CASE("config spec - every malformed --config is one line naming the part and what was expected") {
  const std::string expected = "expected NAME=VALUE[,NAME=VALUE...], e.g. \"P=64,F=2048\"";
  CHECK(config_refusal("") == "err_invalid_config: --config \"\": empty; " + expected);
  CHECK(config_refusal("P") == "err_invalid_config: --config \"P\": \"P\" has no '='; " + expected);
  CHECK(config_refusal("P=64,") == "err_invalid_config: --config \"P=64,\": an empty parameter between ','; " + expected);
  CHECK(config_refusal("2P=64") == "err_invalid_config: --config \"2P=64\": \"2P\" is not a parameter name (letters, "
                                   "digits and _, not starting with a digit)");
  CHECK(config_refusal("P=0") == "err_invalid_config: --config \"P=0\": value \"0\" of P is not a positive integer");
  CHECK(config_refusal("P=32..64") ==
        "err_invalid_config: --config \"P=32..64\": value \"32..64\" of P is not a positive integer");
  CHECK(config_refusal("P=64,P=128") == "err_invalid_config: --config \"P=64,P=128\": parameter P is given twice");
  CHECK(config_refusal("P=64;F=512") == "err_invalid_config: --config \"P=64;F=512\": parameters are joined by ',' "
                                        "here (';' joins them in --sweep); " + expected);
}
