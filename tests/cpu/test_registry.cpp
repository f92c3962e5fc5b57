// The one registry every kscope registry is (core/model/registry.hpp; docs/architecture.md,
// "Registries"): its own entries first, a taken name refused in every registry's words, the
// registered names in a refusal, names that stay put, and a copy of the table that a reader keeps
// while a program registers another.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "core/model/registry.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope_test::error_of;

namespace {

struct Toy {
  std::string name;
  int value = 0;
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(Registry, KeepsItsOwnEntriesFirstAndRefusesATakenNameOrAnUnknownOne) {
  detail::Registry<Toy> toys("toy", "register_toy()", {{"one", 1}, {"two", 2}});
  const std::string_view three = toys.add({"three", 3}).name;
  EXPECT_EQ(toys.names(), (std::vector<std::string_view>{"one", "two", "three"}));
  EXPECT_EQ(toys.named("two").value, 2);
  EXPECT_EQ(toys.find("four"), nullptr);
  EXPECT_TRUE(has(error_of([&] { toys.add({"one", 9}); }),
                  "register_toy(): a toy named 'one' is registered already; choose another name"));
  EXPECT_TRUE(has(error_of([&] { toys.named("tree"); }),
                  "no toy is named 'tree': the registered ones are 'one', 'two', 'three'"));
  EXPECT_TRUE(has(error_of([&] {
                    toys.add({"odd", 5}, [](const std::deque<Toy>&, const Toy& t) {
                      if (t.value % 2) throw ConfigError("register_toy(): an odd toy");
                    });
                  }),
                  "an odd toy"));
  for (int i = 0; i < 100; ++i) toys.add({"toy" + std::to_string(i), i});  // the deque grows; names stay
  EXPECT_EQ(three, "three");
  EXPECT_EQ(toys.size(), 103u);
}

TEST(Registry, ACopyOfTheTableIsReadWhileAnotherEntryIsAdded) {
  detail::Registry<Toy> toys("toy", "register_toy()", {{"zero", 0}});
  std::thread adder([&] {
    for (int i = 1; i <= 200; ++i) toys.add({"toy" + std::to_string(i), i});
  });
  std::size_t seen = 0;
  bool in_order = true;
  while (seen < 201 && in_order) {
    const std::vector<Toy> now = toys.entries();
    in_order = now.size() >= seen;
    for (std::size_t i = 0; i < now.size(); ++i) in_order = in_order && now[i].value == static_cast<int>(i);
    seen = now.size();
  }
  adder.join();
  EXPECT_TRUE(in_order);
}
