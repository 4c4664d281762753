/** \file Axis names holding a quote print as Python prints them and parse back (found by fuzzing). */
#include "nki/partition_spec.h"
#include "test_support.h"

using nki::PartitionSpec;
using Entry = PartitionSpec::Entry;

TEST_CASE("partition spec: a name holding a single quote prints in double quotes") {
  const PartitionSpec s = PartitionSpec::parse("(\"it's\", None)");
  CHECK(s == PartitionSpec({Entry{std::string("it's")}, Entry{}}));
  CHECK(s.str() == "(\"it's\", None)");
  CHECK(PartitionSpec::parse(s.str()) == s);
  CHECK(PartitionSpec::parse("('say \"x\"',)").str() == "('say \"x\"',)");
}

TEST_CASE("partition spec: the fuzzer's input with quotes and bytes in a name parses back from its repr") {
  // The partition_spec fuzz target's find: str() printed this name in single quotes, so the
  // repr did not parse (the name holds ' characters, a NUL byte and non-ASCII bytes).
  const std::string text("(\"\xa4\x00\x84('m', (\xd7\xd7\x97\xd7\xd7\xd7\xd7[\",)", 23);
  const PartitionSpec s = PartitionSpec::parse(text);
  REQUIRE(s.size() == 1);
  CHECK(PartitionSpec::parse(s.str()) == s);
  CHECK(s.str() == text);
}
